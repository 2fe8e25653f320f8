/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Backends (STYLE.md §9): who runs the sandbox a policy describes.
 *
 *   native  psrun itself: one clone3(), the child's steps, the kernel's
 *           layers (runtime/native.c)
 *   gvisor  the same sandbox as an OCI bundle for runsc, gVisor's user-space
 *           kernel, inside psrun's cgroups (runtime/gvisor/run.c)
 *
 * run_sandbox() (runtime/run.h) validates the policy, checks for root and
 * calls the policy's backend; the sessions' supervisor has a table of its
 * own (runtime/session/supervisor.c). A backend that cannot run here says so
 * in err (-EOPNOTSUPP, -ENOENT) and never hands over to another one.
 *
 * This header is the backends' side of the spine: what a backend gets from
 * its caller and what they share. A backend includes it, never run.h.
 */

#include <signal.h>
#include <stdbool.h>

#include "common/error.h"
#include "common/log.h"
#include "policy/policy.h"
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

struct backend_ops {
        const char *name; /* the policy's `backend` value */
        /* One command, start to result; pol is valid, the caller is root. */
        int (*run)(const struct policy *pol, char *const argv[], const struct run_options *o,
                   struct run_result *res, psrun_error *err);
};

extern const struct backend_ops backend_native;
extern const struct backend_ops backend_gvisor;

/* NULL for a value outside the enum. */
const struct backend_ops *backend_of(enum policy_backend backend);

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
