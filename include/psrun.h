/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * libpsrun: run untrusted commands in a sandbox, from C, with no daemon.
 *
 *   psrun_policy *p = psrun_policy_new();
 *   psrun_policy_set(p, "memory_limit", "1G", &err);
 *   char *argv[] = {"python3", "-c", "print(42)", NULL};
 *   psrun_result res;
 *   if (psrun_run(p, argv, NULL, &res, &err) < 0) fprintf(stderr, "%s\n", err.msg);
 *   psrun_policy_free(p);
 *
 * Functions return 0 (or a count) on success and -errno on failure, with a
 * one-line message in the psrun_error. The library never prints and never
 * exits; notes (such as a skipped optional layer) go to a log callback.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PSRUN_PUBLIC __attribute__((visibility("default")))

typedef struct psrun_error {
        int code;      /* positive errno, 0 if none */
        char msg[512]; /* one line, e.g. "rootfs: mount proc on /proc: Operation not permitted" */
} psrun_error;

typedef struct psrun_policy psrun_policy;

/* A policy with the defaults (see psrun-policy(5)); NULL when out of memory. */
PSRUN_PUBLIC psrun_policy *psrun_policy_new(void);
PSRUN_PUBLIC void psrun_policy_free(psrun_policy *policy);

/* Apply a YAML or JSON document (file or text) over the policy; on error the
 * policy is unchanged. */
PSRUN_PUBLIC int psrun_policy_load_file(psrun_policy *policy, const char *path, psrun_error *err);
PSRUN_PUBLIC int psrun_policy_load_string(psrun_policy *policy, const char *text, psrun_error *err);

/* Set one key; value is parsed as a YAML flow node ("512M", "[a.com, b.org]",
 * "{A: b}"). Same vocabulary as the YAML policy and `psrun run -o`. */
PSRUN_PUBLIC int psrun_policy_set(psrun_policy *policy, const char *key, const char *value,
                                  psrun_error *err);

typedef struct psrun_result {
        int exit_code;      /* the command's; 128+signal; 125 psrun failed; 126/127 exec */
        int signal;         /* 0 when not signalled */
        const char *reason; /* "exited" "signaled" "timeout" "oom" "pids" "setup_error" */
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t peak_memory_bytes;
        char error[512]; /* setup_error: what failed */
} psrun_result;

typedef struct psrun_run_options {
        const char *cgroup_parent; /* NULL: below the caller's own cgroup */
        int forward_signals;       /* nonzero: forward INT/TERM/HUP/... received meanwhile */
        void (*log)(void *userdata, const char *msg);
        void *log_userdata;
} psrun_run_options;

/* Run argv (NULL-terminated; argv[0] looked up in the sandbox's PATH) in a new
 * sandbox and wait for it. stdin/stdout/stderr are the caller's 0-2. The
 * result is always filled. Returns 0 when the sandbox ran (whatever the
 * command did), -errno when psrun could not run it (result: setup_error). */
PSRUN_PUBLIC int psrun_run(const psrun_policy *policy, char *const argv[],
                           const psrun_run_options *options, psrun_result *result,
                           psrun_error *err);

/* Write the result as one line of JSON (with a newline) to fd. */
PSRUN_PUBLIC int psrun_result_write_json(const psrun_result *result, int fd);

PSRUN_PUBLIC const char *psrun_version(void);

#ifdef __cplusplus
}
#endif
