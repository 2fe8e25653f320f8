/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The gVisor backend (docs/security.md, "The gVisor backend"): the sandbox a
 * policy describes, handed to runsc as an OCI bundle.
 *
 *   runsc.c    which runsc, which platform (detected once, cached)
 *   bundle.c   the state directory, the root skeleton, config.json
 *   spawn.c    starting runsc inside psrun's cgroups and namespaces
 *   run.c      psrun run (backend_gvisor)
 *   session.c  a session's sandbox and its execs
 *
 * Each sandbox has a state directory GVISOR_STATE_DIR/<pid>-<n> (pid: the
 * psrun process or session supervisor that owns it) holding the bundle
 * (config.json, rootfs/), runsc's private --root and its log. Mounts are
 * made only in the mount namespace runsc runs in (the root skeleton's
 * tmpfs or an image's overlay, the workspace tmpfs), so a
 * killed psrun leaves the directory alone behind: `psrun gc` removes it.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "policy/policy.h"
#include "runtime/launch.h"
#include "runtime/plan.h"

#define GVISOR_STATE_DIR "/run/psrun-gvisor"
/* Names the runsc binary instead of a PATH lookup (docs/policy.md). It is
 * an environment variable, not a policy key: a policy may come from an MCP
 * client, and the binary runs as root. */
#define GVISOR_RUNSC_ENV "PSRUN_RUNSC"

/* ---- runsc and its platform (runsc.c) ---- */

struct gvisor_runtime {
        char runsc[PATH_MAX];
        const char *platform; /* static: "systrap", "kvm", "ptrace" */
        /* Host tasks the platform needs per sandboxed process, and for
         * runsc, its gofer and the sentry themselves: psrun's pids limit
         * counts host tasks (docs/security.md). */
        unsigned pids_per_process, pids_base;
};

/* Finds runsc ($PSRUN_RUNSC, else PATH) and the platform (the policy's, or
 * the first of systrap, kvm, ptrace that this runsc offers and that starts
 * a sandbox here), checked once per boot and runsc binary. Errors name the
 * key: "backend: gvisor: runsc not found in PATH (...)". */
int gvisor_runtime_resolve(const struct policy *pol, struct gvisor_runtime *rt, psrun_error *err);

/* The policy keys this backend cannot honour, refused by name (fail
 * closed: landlock or apparmor `required`, a writable root). */
int gvisor_check_policy(const struct policy *pol, psrun_error *err);

/* ---- the state directory and the bundle (bundle.c) ---- */

struct gvisor_sandbox {
        char dir[96];             /* GVISOR_STATE_DIR/<pid>-<n>: also the bundle */
        char id[48];              /* the container's id for runsc */
        char rootfs[128];         /* dir/rootfs: the skeleton's tmpfs's mount point */
        char workspace[128];      /* dir/workspace: the host tmpfs's mount point */
        char workspace_data[128]; /* its mount options (size, owner) */
        char proc[128];           /* dir/proc: a visible procfs (see spawn.c) */
        char runsc_log[128];
        struct gvisor_runtime rt;
        bool netstack; /* --network=sandbox (full, restricted) */
        int lock_fd;   /* dir/lock, flock'ed while the owner lives (for gc) */
};

/* mkdir the state directory (named after the calling process's pid, and
 * locked by it: gc removes it once the lock is free) and name what is in
 * it. */
int gvisor_sandbox_create(struct gvisor_sandbox *gs, const struct gvisor_runtime *rt,
                          const struct plan *plan, psrun_error *err);
/* rm -rf the state directory; safe on one never created. */
void gvisor_sandbox_remove(struct gvisor_sandbox *gs);
/* gvisor_gc, removing the state directories of owners that are gone, is
 * declared in runtime/gc.h. */

/* Who a process of the sandbox runs as. */
enum gvisor_identity {
        GVISOR_SANDBOX_USER, /* the plan's uid and gid, no capabilities */
        /* uid 0 with no capabilities: a session's init, which the sandbox
         * user may neither signal nor trace nor read through /proc, as
         * psrun's own init natively. */
        GVISOR_ROOT_NO_CAPS,
        GVISOR_ROOT_KILL, /* uid 0 with CAP_KILL only: psrun's kill helper */
};

/* Where the bundle's parts are, for config.json. */
struct gvisor_config {
        const char *root;          /* the rootfs directory config.json names */
        const char *workspace;     /* the host tmpfs /workspace is bound from */
        pid_t netns_pid;           /* whose network namespace the sandbox takes; 0: a new one */
        enum gvisor_identity init; /* the container's process */
};

/* The root skeleton (rootfs/: directories, links, the synthesized /etc) and
 * config.json, both made from the native backend's plan so that the two run
 * the same root: its mount steps become the skeleton's files and the
 * bundle's mounts (a table by step kind in bundle.c). The skeleton
 * is written into the launcher's tmpfs, through /proc/<launcher>/root.
 * netns_pid: whose network namespace the sandbox takes, 0 for a new one;
 * init: who the container's process (the plan's command) runs as. */
int gvisor_write_bundle(const struct gvisor_sandbox *gs, const struct plan *plan, pid_t launcher,
                        pid_t netns_pid, enum gvisor_identity init, psrun_error *err);
/* config.json alone, to f (for the unit tests too). */
int gvisor_write_config(FILE *f, const struct plan *plan, const struct gvisor_config *c,
                        psrun_error *err);
/* A process.json for `runsc exec --process`: the given argv, env, cwd, the
 * plan's rlimits, as who. */
int gvisor_write_process(const char *path, char *const argv[], char *const envp[], const char *cwd,
                         const struct plan *plan, enum gvisor_identity who, psrun_error *err);
/* Workdir components below /workspace, created in the host tmpfs for the
 * plan's user, as the native child does (ws_fd: the workspace). */
int gvisor_make_workdir(int ws_fd, const char *workdir, const struct plan *plan, psrun_error *err);

/* An image root (plan->rootfs.overlay): the overlay the native child
 * would attach, detached in *ret for the launcher to attach on rootfs/
 * (gvisor_spawn's root_fd); *ret -1 and 0 for a plan without one. */
int gvisor_image_root(const struct plan *plan, int *ret, psrun_error *err);

/* runsc's error, from its JSON log: the last "level":"error" message, one
 * line. Returns 0 and fills msg when there is one, -ENOENT otherwise. */
int gvisor_read_error(const char *log_path, char *msg, size_t size);
/* The exit code psrun gives a runsc error: 127 for a command not found,
 * 126 for one that is not executable, else 125. */
int gvisor_error_exit_code(const char *msg);

/* ---- starting runsc (spawn.c) ---- */

struct gvisor_spawn {
        char *const *argv; /* runsc and its arguments; argv[0] is executed */
        int stdio[3];      /* -1: /dev/null */
        struct cgroup *cg; /* runsc and everything it starts go in here */
        /* A new mount and network namespace with the workspace tmpfs (a
         * sandbox's launch); else the caller's, with netns_fd joined. */
        bool new_namespaces;
        const struct gvisor_sandbox *gs;
        int netns_fd; /* -1: none */
        /* new_namespaces: the root is the image's overlay (root_fd, a
         * detached mount: rootfs_overlay_open), not the skeleton's tmpfs. */
        bool image_root;
        int root_fd;
};

/* Starts the launcher: a child in the cgroup (and namespaces) that waits
 * until gvisor_release(). ws_fd: the workspace's O_PATH fd, when
 * new_namespaces. */
int gvisor_spawn(const struct gvisor_spawn *sp, struct launch *l, int *ws_fd, psrun_error *err);
/* Lets the launcher execute runsc and waits until it has (or failed to). */
int gvisor_release(struct launch *l, const char *runsc, psrun_error *err);
/* Both, then wait for runsc to exit (bounded: SIGKILL after timeout_ms);
 * returns its wait status as W_EXITCODE/signal, or -errno. */
int gvisor_spawn_wait(const struct gvisor_spawn *sp, uint64_t timeout_ms, psrun_error *err);

/* Runs argv alone (the caller's namespaces, no cgroup) with stdout captured
 * into buf (NUL-terminated, cut at size-1) and stderr discarded, SIGKILLed
 * after timeout_ms. 0 when it exits 0, else -errno. */
int gvisor_capture(char *const argv[], char *buf, size_t size, uint64_t timeout_ms,
                   psrun_error *err);

/* gVisor writes a regular file given as stdout or stderr from offset 0 (it
 * keeps its own offset), over what was there. The sandbox gets such a file
 * reopened O_APPEND instead (out[i], owned: close with gvisor_stdio_done,
 * which also moves the caller's offset to the end, past what the sandbox
 * wrote, as a shared offset would have moved). Other fds pass unchanged.
 * A regular file as stdin is read from its start: documented. */
void gvisor_stdio_open(const int in[3], int out[3]);
void gvisor_stdio_done(const int in[3], int out[3]);

/* runsc's global flags for a sandbox, then argv: a malloc'd vector. */
char **gvisor_runsc_argv(const struct gvisor_sandbox *gs, const char *log_path, char *const sub[]);

/* ---- one-shot runs (run.c) ---- */

/* Whether `true` runs under platform within timeout_ms: the platform
 * probe. On failure err says why. */
int gvisor_probe(const char *runsc, const char *platform, uint64_t timeout_ms, psrun_error *err);

/* ---- sessions (session.c) ---- */

struct gvisor_session;
struct cgroup;

/* The session's sandbox: its cgroup (made here, below cgroup_parent), runsc
 * run as init (poll its pidfd: the session ends with it), the workspace's
 * fd. tmpl is the session's plan: its network is set up here, an rlimit is
 * added for every exec; it must outlive the session. On failure *ret may
 * be set: gvisor_session_stop it. */
int gvisor_session_start(const struct policy *pol, struct plan *tmpl, const char *cgroup_parent,
                         struct cgroup **cg, struct launch *init, int *ws_fd,
                         struct gvisor_session **ret, psrun_error *err);
/* The bundle's rootfs/ (a path in runsc run's mount namespace: reached
 * through /proc/<init>/root). */
const char *gvisor_session_rootfs(const struct gvisor_session *g);
/* One exec (slot: the supervisor's, below 64): runsc exec of p's argv, env
 * and workdir with fds as stdio; l is the runsc exec process. */
int gvisor_session_exec(struct gvisor_session *g, unsigned slot, const struct plan *p,
                        const int fds[3], struct launch *l, psrun_error *err);
/* Kill every process of the exec's session inside the sandbox (waits for
 * it, bounded). */
void gvisor_session_kill_exec(struct gvisor_session *g, unsigned slot, int client_pidfd);
/* Once the exec's runsc exited: its files removed; in st the OOM kills
 * and refused forks of the sandbox while it ran (it has no cgroup of its
 * own); a runsc error (the command could not start) in msg and its exit
 * code returned, else 0. */
struct cgroup_stats;
int gvisor_session_exec_done(struct gvisor_session *g, unsigned slot, struct cgroup_stats *st,
                             char *msg, size_t size);
/* The session is ending: the execs that end now die with the sandbox. */
void gvisor_session_ending(struct gvisor_session *g);
/* After the sandbox is gone: the network, the state directory; frees g. */
void gvisor_session_stop(struct gvisor_session *g);

/* Why the violations report has no seccomp, Landlock or AppArmor entries
 * under this backend. */
#define GVISOR_VIOLATIONS_WHY                                                                      \
        "backend: gvisor: the sandbox's system calls and files are the sentry's to refuse, "       \
        "not psrun's layers"
