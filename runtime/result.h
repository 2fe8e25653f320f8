/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "netns/stats.h"
#include "runtime/violations.h"

enum run_reason {
        RUN_REASON_EXITED,
        RUN_REASON_SIGNALED,
        RUN_REASON_TIMEOUT,
        RUN_REASON_OOM,
        RUN_REASON_PIDS,
        RUN_REASON_SETUP_ERROR,
        RUN_REASON_DISK_FULL, /* sessions: failed with the workspace full */
        _RUN_REASON_MAX,
};

struct run_result {
        int exit_code; /* the command's; 128+signal when signalled; 125-127 on setup errors */
        int signal;    /* 0: not signalled */
        enum run_reason reason;
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t peak_memory_bytes;
        char error[512]; /* setup_error: the one-line message */
        /* "native" or "gvisor" (policy_backend_to_string), "" before the
         * backend ran; a string, not a pointer: results cross processes
         * (sessions send them over a socket). */
        char backend[8];
        /* What each optional layer did ("on", "off", "unavailable", "abi 7"),
         * empty until the plan exists: skipped layers show here, not as
         * notes on stderr. */
        struct {
                char seccomp[16];
                char landlock[16];
                char apparmor[16];
        } layers;
        /* Rootless runs only (docs/rootless.md), written into the JSON's
         * layers: the identity ("subordinate ids", "one id") and what holds
         * each limit ("cgroup", "rlimit_as", "not enforced", ...), and with
         * an image how its files are owned ("subordinate ids", "one id"). */
        struct {
                bool active;
                char identity[24];
                char memory[16], cpu[16], pids[16], disk[16], timeout[16];
                char image_owners[24]; /* "": no image */
                /* full, restricted: behind a router namespace, linked out
                 * by pasta or slirp4netns (runtime/router.h): "network":
                 * that name; "": no router */
                char network[16];
        } rootless;
        struct netns_stats network;   /* restricted and full mode */
        struct violations violations; /* what the layers refused (mode off: none) */
};

struct cgroup_stats;

/* exit_code, signal and reason (exited or signaled) of a wait status, and
 * cpu_ms and peak_memory_bytes of the command's cgroup. */
void run_result_set_status(struct run_result *r, int status, const struct cgroup_stats *st);
/* For a command that did not exit 0, or that psrun timed out: the limit
 * that ended it, most decisive first (the kernel's OOM kill, psrun's
 * timeout, a refused fork, a full workspace); else reason stays exited or
 * signaled. Every backend and sessions decide it so. */
void run_result_set_limit_reason(struct run_result *r, const struct cgroup_stats *st,
                                 bool timed_out, bool disk_full);

/* A failure of psrun itself, before or instead of the command: reason
 * setup_error, exit code 125, err's message. Returns r, for
 * `return run_result_setup_error(res, err, r);`. */
int run_result_setup_error(struct run_result *r, const psrun_error *err, int ret);

struct plan;
/* What each of the plan's optional layers does ("on", "off", "unavailable",
 * "abi N"), as the child applies them. */
void run_result_set_layers(struct run_result *res, const struct plan *plan);

const char *run_reason_to_string(enum run_reason r);
int run_reason_from_string(const char *s);

/* `,"network":{...}` (the members after the first), as run_result_write_json
 * writes it. */
void run_result_write_network(const struct netns_stats *n, FILE *f);

/* One JSON object on one line, newline-terminated. */
void run_result_write_json(const struct run_result *r, FILE *f);
/* Its members alone, no braces: for a writer that adds its own (a session
 * exec's output fields). */
void run_result_write_fields(const struct run_result *r, FILE *f);
