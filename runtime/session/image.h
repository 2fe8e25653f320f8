/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A session supervisor's own image (runtime/session/image.c): the
 * supervisor is not a fork of the embedding program that keeps its memory,
 * but a fresh process running psrun's code, started with
 *
 *   fd 3  the ready socket (SOCK_SEQPACKET, made by the spawner, root's)
 *   fd 4  the spec: struct sup_spec, the policy as JSON, the state
 *         directory, the cgroup parent (a sealed memfd)
 *   fd 5  a pidfd of the creator (tie_to_caller), when the spec says so
 *
 * and PSRUN_SESSION_SUPERVISOR=1 in a small environment of its own.
 */

#include <stdint.h>

#include "common/error.h"
#include "policy/policy.h"
#include "runtime/session/proto.h"

#define SUP_ARGV0      "psrun-session"
#define SUP_ENV_MARKER "PSRUN_SESSION_SUPERVISOR"
#define SUP_FD_READY   3
#define SUP_FD_SPEC    4
#define SUP_FD_TIE     5

/* sup_spec.flags */
#define SUP_SPEC_TIE 1U /* fd 5 is the creator's pidfd */

struct sup_spec {
        struct sess_hdr h;                               /* size: sizeof(struct sup_spec) */
        uint32_t policy_len, dir_len, cgroup_parent_len; /* each followed by a NUL */
        uint32_t flags;                                  /* SUP_SPEC_* */
};

/* What the supervisor answers on fd 3 once it is ready, or failed: r < 0
 * with err (err.msg empty: the image could not be executed at all). */
struct sup_ready {
        struct sess_hdr h; /* size: sizeof(struct sup_ready) */
        int32_t r;
        psrun_error err;
};

/*
 * Start the supervisor of the session in dir: find the file that holds
 * psrun's code (libpsrun.so, or the executable libpsrun.a is linked into),
 * and execute it (a sealed copy of it when the file itself is not safe to
 * run as root: not root's, writable by others, not executable) in a
 * process that is nobody's child in the caller's tree, sharing the
 * caller's memory only until that exec (CLONE_VM | CLONE_VFORK, as
 * posix_spawn). ready_fd becomes its fd 3, tie_fd (or -1) its fd 5.
 * Returns once the image runs; the caller then reads ready_fd's other end.
 * *image gets the image's path for messages.
 */
int sup_image_spawn(const struct policy *pol, const char *dir, const char *cgroup_parent,
                    int ready_fd, int tie_fd, char *image, size_t image_size, psrun_error *err);

/* libpsrun.so's entry point (-Wl,-e): where the library starts when it
 * is executed as a supervisor. */
_Noreturn void psrun_image_entry(void);
