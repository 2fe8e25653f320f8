/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The plan: everything the child needs, decided and allocated by the parent
 * before clone3(). The child only reads it (from its copy of the parent's
 * memory) and applies it with raw syscalls.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "policy/apparmor.h"
#include "policy/caps.h"
#include "policy/landlock.h"
#include "policy/seccomp.h"
#include "rootfs/mounts.h"

#define PLAN_MAX_RLIMITS 16

struct plan_rlimit {
        int resource;
        struct rlimit limit;
};

struct plan {
        uint64_t clone_flags; /* CLONE_NEW* */

        /* identity: "inside outside count" lines for the id maps */
        char uid_map[128];
        char gid_map[128];
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        size_t n_groups;

        char *hostname; /* NULL: leave as is */
        bool loopback_up;

        /* root filesystem */
        const char *base_dir; /* existing host dir the new root tmpfs is mounted on */
        struct rootfs_plan rootfs;
        char *workdir;

        /* the process */
        char **argv;
        char **envp;
        const char *path_env; /* PATH value used to find argv[0], points into envp */
        bool use_init;        /* a tiny init as pid 1 that reaps and forwards signals */
        struct plan_rlimit rlimits[PLAN_MAX_RLIMITS];
        size_t n_rlimits;

        /* security layers, in the order the child applies them */
        struct caps_plan caps;
        struct apparmor_plan apparmor; /* active false: none */
        struct landlock_plan landlock; /* ruleset_fd -1: none */
        bool no_new_privs;
        struct seccomp_program seccomp; /* len 0: none */
};

void plan_free(struct plan *plan);
