/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * clone3(2) without <linux/sched.h>, whose definitions collide with glibc's
 * <sched.h>: the kernel's struct clone_args up to `cgroup`
 * (CLONE_ARGS_SIZE_VER2) and the flags older headers lack. Pass
 * sizeof(struct clone_args_v2), or CLONE_ARGS_SIZE_VER0 to use only the
 * fields up to tls.
 */

#include <stdint.h>

struct clone_args_v2 {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
                set_tid_size, cgroup;
};

#ifndef CLONE_ARGS_SIZE_VER0
#define CLONE_ARGS_SIZE_VER0 64
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
