/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One sandboxed command, start to end: policy -> plan -> clone3 -> supervise
 * -> result. Library code: it never prints; notes go to the log callback.
 */

#include <signal.h>
#include <stdbool.h>

#include "common/error.h"
#include "common/log.h"
#include "policy/policy.h"
#include "runtime/plan.h"
#include "runtime/result.h"

/* The library's log callback (common/log.h), also taken by the OCI operations
 * (oci_root_set_log). */
typedef log_fn run_log_fn;

struct run_options {
        const char *cgroup_parent; /* NULL: below the caller's own cgroup */
        bool forward_signals;      /* forward INT/TERM/HUP/QUIT/USR1/USR2/WINCH to the sandbox */
        run_log_fn log;            /* notes such as a skipped optional layer */
        void *log_userdata;
};

/* Signals psrun run forwards to the sandbox (INT TERM HUP QUIT USR1 USR2
 * WINCH): blocked and read from a signalfd meanwhile, unblocked again on
 * the way out. Shared by the backends. */
struct run_forwarding {
        bool blocked;
        sigset_t old_mask;
        int signal_fd; /* -1: none */
};
int run_block_signals(struct run_forwarding *f);
void run_unblock_signals(struct run_forwarding *f);

/* Run argv in a new sandbox and wait for it. `result` is always filled; on a
 * failure of psrun itself it says setup_error and the call returns -errno with
 * `err` set, else 0. */
int run_sandbox(const struct policy *policy, char *const argv[], const struct run_options *opts,
                struct run_result *result, psrun_error *err);
