/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The parent's side of the violations report (docs/security.md,
 * "Violations"): it opens what the plan asks for (plan->violations; the
 * planner made the listener's program and asked for the command's exec
 * message), answers the seccomp listener of each command, and matches the
 * host's audit records to the commands they are about. One watch per
 * sandbox (a run, a session); one target per command tree (the run's
 * command, each exec). It never edits the plan.
 *
 *   vwatch_prepare()        before the clone: the audit socket, and
 *                           whether Landlock's denials are to be logged
 *                           (w->landlock_audit: the caller then calls
 *                           plan_log_landlock_denials())
 *   vwatch_target_start()   the command's CHILD_MSG_EXEC: its pid, listener
 *   vwatch_target_fd() /    poll the listener; vwatch_on_audit() when the
 *   vwatch_on_listener()    audit socket is readable
 *   vwatch_target_finish()  after the command ended: the records still on
 *                           their way, the layers that could not report
 *
 * With the policy's `violations: off` the plan asks for nothing and
 * vwatch_prepare() opens nothing: no listener, no socket, no cost.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "policy/policy.h"
#include "runtime/plan.h"
#include "runtime/violations.h"

/* What answering refused syscalls may cost the supervisor (which runs
 * outside the sandbox's cgroup): per window of VWATCH_WINDOW_MS, at most
 * VWATCH_WINDOW_CPU_NS of its CPU time and VWATCH_WINDOW_ANSWERS answers,
 * for all its commands together. A command probing a refused syscall in
 * a tight loop is slowed to that; its calls wait in the kernel for the
 * next window, and are still refused and counted. */
#define VWATCH_WINDOW_MS      100
#define VWATCH_WINDOW_CPU_NS  (5 * 1000 * 1000)
#define VWATCH_WINDOW_ANSWERS 1000

/* Landlock records of domains not yet known to be ours or not. */
#define VWATCH_PENDING 32
#define VWATCH_FOREIGN 64

struct vwatch_pending {
        uint64_t domain;
        char what[VIOLATION_WHAT_MAX];
};

struct vwatch {
        enum policy_violations mode;
        /* The plan's seccomp program, to tell a refusal from an allowed
         * install the listener's program sends too (the plan outlives
         * the watch); NULL without a listener's program. */
        const struct seccomp_program *plain;
        int audit_fd; /* -1: none */
        bool landlock_audit, apparmor_audit;
        char apparmor_profile[256];
        uint32_t host_uid; /* the command's uid as the host sees it */
        /* Why a layer in force cannot report here, for every result. */
        char why[_VIOLATION_LAYER_MAX][VIOLATION_WHY_MAX];
        struct vwatch_pending pending[VWATCH_PENDING];
        size_t n_pending;
        uint64_t foreign[VWATCH_FOREIGN]; /* domains that are not ours */
        size_t next_foreign;
        bool lost;                         /* the audit socket overran */
        uint64_t window_ms, window_cpu_ns; /* the listeners' budget, shared */
        uint64_t cpu_mark;                 /* this thread's CPU time after the last answers */
        unsigned window_answers;
};

struct vwatch_target {
        struct violations *out;
        int listener;     /* -1: none */
        pid_t creator;    /* the command, as we see it; 0: not started */
        uint64_t domain;  /* its Landlock domain; 0: no record named it yet */
        bool domain_gone; /* the domain's last record came */
        uint64_t logged;  /* Landlock refusals counted from records */
        char **cgroups;   /* "0::/path" lines of its cgroup, for AppArmor */
        int workspace_fd; /* O_PATH of its /workspace, for a full disk; -1 */
        bool started;
};

/* Open for `plan` what the report needs (and fill w). Off: nothing. */
void vwatch_prepare(struct vwatch *w, const struct plan *plan);
/* For a sandbox whose syscalls and files psrun's child does not guard
 * (backend: gvisor): limits and the network still report; seccomp,
 * Landlock and AppArmor say why they cannot. */
void vwatch_prepare_elsewhere(struct vwatch *w, const struct plan *plan, const char *why);
void vwatch_close(struct vwatch *w);

struct cgroup;
/* out is filled by the target until vwatch_target_finish(); cg: the
 * command's cgroup (may be NULL). */
void vwatch_target_init(struct vwatch *w, struct vwatch_target *t, struct violations *out,
                        struct cgroup *cg);
/* The command's CHILD_MSG_EXEC: pid as we see it, its listener (owned
 * from here on; -1: none), the message's err. */
void vwatch_target_start(struct vwatch *w, struct vwatch_target *t, pid_t pid, int listener,
                         int err);
/* The fd to poll for the target now (-1: none, or throttled until
 * vwatch_poll_timeout()). */
int vwatch_target_fd(struct vwatch *w, struct vwatch_target *t, uint64_t now_ms);
/* revents: what poll said of vwatch_target_fd(). */
void vwatch_on_listener(struct vwatch *w, struct vwatch_target *t, short revents, uint64_t now_ms);
/* ms until throttled listeners may be answered again; -1: not throttled. */
int vwatch_poll_timeout(struct vwatch *w, uint64_t now_ms);
void vwatch_on_audit(struct vwatch *w, struct vwatch_target *const *targets, size_t n);
/* The command has ended: read what is still on its way (bounded), copy
 * the reasons a layer could not report, close what the target holds. */
void vwatch_target_finish(struct vwatch *w, struct vwatch_target *t,
                          struct vwatch_target *const *others, size_t n_others);
/* What the target holds, closed (finish does it too). NULL-safe. */
void vwatch_target_close(struct vwatch_target *t);

/* The command's CHILD_MSG_WORKSPACE: an O_PATH fd of its /workspace (owned
 * by the target from here on), kept if it is a tmpfs and the target has
 * none yet, else closed. -1: nothing. */
void vwatch_target_workspace(struct vwatch_target *t, int fd);
/* Whether that tmpfs has no free block left. */
bool vwatch_workspace_full(int fd);
