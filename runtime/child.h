/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The child: everything between clone3() and execve(). It reports failure as
 * a fixed-size record on the sync socket and _exit()s; the parent turns the
 * record into a message using the plan.
 */

#include <stdint.h>

#include "runtime/plan.h"

enum child_step {
        CHILD_STEP_SYNC,
        CHILD_STEP_JOIN, /* index: the namespace in plan->joins, or UINT32_MAX for the pidfd */
        CHILD_STEP_PRIVATE_MOUNTS, /* a session's install exec: its copy of the mounts */
        CHILD_STEP_HOSTNAME,
        CHILD_STEP_DOMAINNAME,
        CHILD_STEP_LOOPBACK,
        CHILD_STEP_ROOT_PRIVATE,
        CHILD_STEP_ROOT_TMPFS,
        CHILD_STEP_ROOT_BUNDLE,
        CHILD_STEP_PIVOT,
        CHILD_STEP_ROOT_PROPAGATION,
        CHILD_STEP_MOUNT, /* index: the mount step */
        CHILD_STEP_CONSOLE,
        CHILD_STEP_RLIMIT, /* index: the rlimit */
        CHILD_STEP_TIMENS,
        CHILD_STEP_PERSONALITY,
        CHILD_STEP_ROOT_ID,
        CHILD_STEP_USER_QUOTAS, /* index: the quota in plan->user_quotas */
        CHILD_STEP_INIT,
        CHILD_STEP_FORK,
        CHILD_STEP_SIGNALS,
        CHILD_STEP_BOUNDING,
        CHILD_STEP_GROUPS,
        CHILD_STEP_SETGID,
        CHILD_STEP_SETUID,
        CHILD_STEP_CAPS,
        CHILD_STEP_CHDIR,
        CHILD_STEP_NO_NEW_PRIVS,
        CHILD_STEP_APPARMOR,
        CHILD_STEP_LANDLOCK, /* index: the rule, or UINT32_MAX for restrict_self */
        CHILD_STEP_LOOKUP,   /* finding argv[0]: reported as CHILD_STEP_EXEC */
        CHILD_STEP_CLOSE_FDS,
        CHILD_STEP_WAIT_START,
        CHILD_STEP_SECCOMP,
        CHILD_STEP_EXEC,
        CHILD_STEP_CGROUP,       /* a zygote putting itself in its cgroups */
        CHILD_STEP_OOM_SCORE,    /* plan->oom_score_adj */
        CHILD_STEP_REQUEST,      /* a zygote reading its request */
        CHILD_STEP_SCHEDULER,    /* plan->sched */
        CHILD_STEP_IOPRIO,       /* plan->ioprio */
        CHILD_STEP_CPU_AFFINITY, /* plan->cpus_final */
        CHILD_STEP_KEYRING,      /* plan->session_keyring */
        CHILD_STEP_IMAGE_ROOT,   /* rootless: the image's overlay in the user namespace */
        CHILD_STEP_EXEC_PIDNS,   /* plan->exec_pidns */
        _CHILD_STEP_MAX,
};

enum child_msg_kind {
        CHILD_MSG_ERROR = 1, /* a setup step failed */
        CHILD_MSG_EXIT = 2,  /* init: the command ended with wait status `status` */
        CHILD_MSG_READY = 3, /* set up; waiting on the exec FIFO for `psrun start` */
        /* The command, right before execve (plan->report_exec): its seccomp
         * listener comes with it (SCM_RIGHTS) when it has one; err EBUSY:
         * the kernel allowed none (a listener up the chain). */
        CHILD_MSG_EXEC = 4,
        /* plan->spawn_command: the command's process is made, its pid in
         * `status`, its pidfd attached (SCM_RIGHTS); an error record of that
         * process, if any, came before. */
        CHILD_MSG_SPAWNED = 5,
        /* The command, right before its CHILD_MSG_EXEC (plan->report_workspace):
         * an O_PATH fd of its /workspace attached, when it has one. */
        CHILD_MSG_WORKSPACE = 6,
        /* plan->seccomp_listener: the filter is loaded with a listener, which
         * comes with this (SCM_RIGHTS) for the parent to hand to the OCI
         * config's seccomp agent; the process keeps no copy. */
        CHILD_MSG_SECCOMP = 7,
        /* A rootless session's init, before its READY: one of its
         * namespaces (CLONE_NEW* in `status`, its fd attached), which the
         * execs join by fd where a user may not join through a pidfd of a
         * process that is not dumpable. */
        CHILD_MSG_NAMESPACE = 8,
};

struct child_msg {
        uint32_t kind;
        uint32_t step;
        int32_t err; /* positive errno */
        uint32_t index;
        int32_t status;
};

/*
 * What a zygote (plan->zygote) waits for: one message on the sync socket,
 * with the command's stdin, stdout and stderr (SCM_RIGHTS). After this
 * header, argc + 1 + envc + 1 pointer-sized slots, each the offset of a
 * string from the message's start (CHILD_REQUEST_NONE for the two NULLs
 * that end argv and envp), then the NUL-terminated strings. The child
 * turns the offsets into pointers into its copy of the message.
 */
struct child_request {
        uint32_t argc, envc;
        uint32_t cwd;  /* offset of the working directory; CHILD_REQUEST_NONE: the plan's */
        uint32_t path; /* offset of PATH's value in envp; CHILD_REQUEST_NONE: none */
        uint32_t len;  /* of the whole message */
        uint32_t reserved;
};

#define CHILD_REQUEST_NONE UINT32_MAX
#define CHILD_REQUEST_MAX  (256 * 1024)

/* The parent's two release bytes: ids mapped (the child may build its root),
 * then cgroups joined (the command may start). */
#define CHILD_SYNC_MAPPED   'M'
#define CHILD_SYNC_CONFINED 'C'

/* Exit codes of a child that failed before the command ran. */
#define CHILD_EXIT_SETUP    125
#define CHILD_EXIT_NOEXEC   126
#define CHILD_EXIT_NOTFOUND 127

/* "rootfs", "seccomp", ... for messages. */
const char *child_step_name(enum child_step step);

/* Never returns. sync_fd: SOCK_SEQPACKET; the parent writes
 * CHILD_SYNC_MAPPED once the id maps are written, then CHILD_SYNC_CONFINED
 * once the child is in its cgroups. sources: what the parent opened for the
 * plan's mount steps (rootfs_sources_open), or NULL when it has none. */
_Noreturn void child_main(const struct plan *plan, int sync_fd,
                          const struct rootfs_sources *sources);

/* plan->zygote: the cgroup.procs files (open for writing) the child puts
 * itself into before it joins anything; closed by it. */
struct child_attach {
        int fds[8];
        size_t n;
};

_Noreturn void child_main_zygote(const struct plan *plan, int sync_fd,
                                 const struct child_attach *attach);
