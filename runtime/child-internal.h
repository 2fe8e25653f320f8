/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The child's own parts (runtime/child.c runs them): the context every step
 * gets, and the steps, each `int step_X(struct child_ctx *)` returning 0 or
 * -errno (a step with parts sets c->index to the failing one). The rules of
 * runtime/child.c hold for every one: async-signal-safe, no allocation, the
 * plan read and never changed.
 *   runtime/child-setup.c  what init does before the command exists: the
 *                          sandbox's view of psrun, namespaces, the root
 *   runtime/child-exec.c   the command's own process, up to its execve
 */

#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "runtime/child.h"

struct child_ctx {
        const struct plan *plan;
        int sync_fd;
        uint32_t index; /* set by a failing step that has parts */
        int *host_fds;  /* per mount step: detached copy of a host bind source, or -1 */
        int *lower_fds; /* rootless image root: its layers' directories (ROOTFS_MAX_LOWERS) */
        const struct rootfs_sources *sources; /* the parent's (launch_clone), or NULL */
        int rootfs_fd;     /* PLAN_ROOT_BUNDLE: O_PATH fd of the bundle's root, then its copy */
        int console_slave; /* -1: no terminal */
        char *exec_path;   /* PATH_MAX bytes: argv[0] as found by step_lookup */
        int listener;      /* the seccomp listener, until it is handed over; -1: none */
        const struct child_attach *attach; /* plan->zygote: its cgroups to join */
        dev_t self_dev;                    /* psrun's own executable, by step_self_exe */
        ino_t self_ino;
        /* plan->cgroupns_confined: the cgroup namespace quota's file, opened
         * by step_user_quotas (before the pivot: the root's /proc/sys is
         * read-only), written once that namespace exists; its index. */
        int cgroup_quota_fd;
        uint32_t cgroup_quota_index;
};

/*
 * glibc's set*id() wrappers make every thread of the process change ids with
 * it, by signalling them and waiting. The child of a multi-threaded psrun
 * embedder still has those threads in glibc's list, but not in reality: the
 * wrapper would wait forever. The raw syscalls change this process only,
 * which is what the child wants.
 */
static inline long sys_setresuid(uid_t u)
{
        return syscall(SYS_setresuid, u, u, u);
}

static inline long sys_setresgid(gid_t g)
{
        return syscall(SYS_setresgid, g, g, g);
}

static inline void send_msg(int fd, const struct child_msg *m)
{
        /* MSG_NOSIGNAL: after READY nobody may be reading any more. */
        ssize_t n;
        do
                n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
}

/*
 * The exec step table (runtime/child.c): the command's own process, up to its
 * execve. A normal command runs every row in table order. A session's zygote
 * (plan->zygote) runs the rows of CHILD_PHASE_AHEAD in table order, awaits
 * its request, then runs those of CHILD_PHASE_AFTER_REQUEST in table order;
 * it never runs those of CHILD_PHASE_NOT_IN_SESSION. No row is left without
 * a phase: the first one is 1.
 */
enum child_phase {
        CHILD_PHASE_AHEAD = 1,      /* before its request */
        CHILD_PHASE_AFTER_REQUEST,  /* once it has its request */
        CHILD_PHASE_NOT_IN_SESSION, /* never */
};

/*
 * What psrun's own steps may call once a config's seccomp filter is loaded,
 * and no more: without noNewPrivileges the filter comes before the identity
 * and capabilities change (loading it needs CAP_SYS_ADMIN, which they drop),
 * with a listener before the exec FIFO; the profile was written for runc,
 * and allows what runc's init calls there. Every Docker profile since 2016
 * and runtime-tools' generator allow all of these (tests/oci/data/seccomp);
 * none of them openat2, close_range, statx, faccessat2 or clone3, so what
 * needs those runs before the filter. The names are the x86_64 and aarch64
 * ones (the 64-bit ABIs psrun builds for).
 */
#define CHILD_AFTER_FILTER_SYSCALLS(X)                                                             \
        X(prctl) /* the bounding set, ambient capabilities, keepcaps */                            \
        X(capset)                                                                                  \
        X(setgroups)                                                                               \
        X(setresgid)                                                                               \
        X(setresuid)                                                                               \
        X(chdir) /* the working directory, then verified by getcwd */                              \
        X(getcwd)                                                                                  \
        X(newfstatat) /* the program's lookup (stat), and ... */                                   \
        X(faccessat)  /* ... access: raw syscalls, not glibc's faccessat2 */                       \
        X(openat)     /* /proc/self/fd, where close_range is refused */                            \
        X(getdents64)                                                                              \
        X(fcntl)                                                                                   \
        X(close)                                                                                   \
        X(read)       /* the exec FIFO */                                                          \
        X(sendto)     /* a message on the sync socket */                                           \
        X(sendmsg)    /* one with an fd (the listener) */                                          \
        X(exit_group) /* a failing step's exit */                                                  \
        X(execve)

/* The same as strings, NULL-terminated (runtime/child.c). */
extern const char *const child_after_filter_syscalls[];

/* Whether the config's filter is loaded before the last steps: before the
 * identity changes (no noNewPrivileges), or with a listener before the exec
 * FIFO. The steps that run after it take the classic way then. */
static inline bool child_filter_early(const struct plan *p)
{
        return p->seccomp.len > 0 && p->seccomp_early;
}

static inline bool child_filter_before_exec(const struct plan *p)
{
        return p->seccomp.len > 0 && (p->seccomp_early || p->seccomp_listener);
}

struct child_exec_step {
        enum child_step id;
        int (*run)(struct child_ctx *c);
        enum child_phase zygote;
        /* Every row from the early filter's on: the syscalls the step makes
         * when a config's filter is loaded before it (all of them in
         * CHILD_AFTER_FILTER_SYSCALLS), NULL-terminated; an empty list for
         * one that then makes none. NULL for the rows before the filter. */
        const char *const *after_filter;
};

extern const struct child_exec_step child_exec_steps[];
extern const size_t child_exec_steps_len;

/* runtime/child-setup.c */
int step_proctitle(struct child_ctx *c);
int step_oom_score(struct child_ctx *c);
int step_attach_self(struct child_ctx *c);
int step_not_dumpable(struct child_ctx *c);
int step_join(struct child_ctx *c);
int step_private_mounts(struct child_ctx *c);
int step_cgroupns(struct child_ctx *c);
int step_cgroupns_confined(struct child_ctx *c);
int step_cgroup_quota_confined(struct child_ctx *c);
int step_hostname(struct child_ctx *c);
int step_domainname(struct child_ctx *c);
int step_loopback(struct child_ctx *c);
int step_open_sources(struct child_ctx *c);
int step_open_rootfs(struct child_ctx *c);
int step_image_layers(struct child_ctx *c);
int step_image_overlay(struct child_ctx *c);
int step_root_private(struct child_ctx *c);
int step_root_tmpfs(struct child_ctx *c);
int step_copy_rootfs(struct child_ctx *c);
int step_root_bundle(struct child_ctx *c);
int step_mounts_early(struct child_ctx *c);
int step_pivot(struct child_ctx *c);
int step_root_propagation(struct child_ctx *c);
int step_mounts(struct child_ctx *c);
int step_console(struct child_ctx *c);
int step_console_attach(struct child_ctx *c);
int step_rlimits(struct child_ctx *c);
int step_root_id(struct child_ctx *c);
int step_user_quotas(struct child_ctx *c);

/* runtime/child-exec.c */
int step_signals(struct child_ctx *c);
int step_timens(struct child_ctx *c);
int step_personality(struct child_ctx *c);
int step_bounding(struct child_ctx *c);
int step_groups(struct child_ctx *c);
int step_setgid(struct child_ctx *c);
int step_stdio_owner(struct child_ctx *c);
int step_setuid(struct child_ctx *c);
int step_caps(struct child_ctx *c);
int step_check_workdir(struct child_ctx *c);
int step_chdir(struct child_ctx *c);
int step_no_new_privs(struct child_ctx *c);
int step_apparmor(struct child_ctx *c);
int step_landlock(struct child_ctx *c);
int step_self_exe(struct child_ctx *c);
int step_lookup(struct child_ctx *c);
int step_close_fds(struct child_ctx *c);
int step_wait_start(struct child_ctx *c);
int step_keep_planned_fds(struct child_ctx *c);
int step_drop_join_fds(struct child_ctx *c);
int step_seccomp(struct child_ctx *c);
int step_report_exec(struct child_ctx *c);
int step_seccomp_early(struct child_ctx *c);
int step_seccomp_listener(struct child_ctx *c);
int step_scheduler(struct child_ctx *c);
int step_io_priority(struct child_ctx *c);
int step_cpu_affinity(struct child_ctx *c);
int step_session_keyring(struct child_ctx *c);
