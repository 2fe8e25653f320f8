/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI runtime's operations on containers (runtime-spec runtime.md):
 * create, start, kill, delete, state, plus what runc users rely on (exec,
 * pause, update, ps, events). Each takes the state root and a container id;
 * state lives in runtime/oci/state.[ch]. Library code: nothing prints;
 * warnings (a failing poststart hook) and debug notes go to the root's log
 * callback (oci_root_set_log).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/oci/config.h"
#include "runtime/oci/state.h"

struct oci_create_options {
        const char *id;
        const char *bundle;      /* NULL: the current directory */
        const char *config_path; /* NULL: <bundle>/config.json */
        const char *pid_file;    /* NULL: none */
        const char *console_socket;
        bool no_pivot;
        bool no_new_keyring; /* keep the caller's session keyring (runc's flag) */
        unsigned preserve_fds;
        /* Socket activation (the caller's LISTEN_FDS, as runc and crun take
         * it): fds 3..3+n-1 are passed on, with LISTEN_FDS=n and
         * LISTEN_PID=1 in the process's environment. */
        bool socket_activation;
        unsigned listen_fds;
        /* The container outlives this process: no parent-death signal;
         * its init goes to the nearest subreaper when we exit. */
        bool detached;
        bool no_cgroups;     /* --cgroup-manager disabled */
        bool systemd_cgroup; /* --systemd-cgroup: refused, psrun drives cgroupfs only */
        /* --rootless (runtime/oci/rootless.h): no root needed; no cgroup
         * where the user cannot write one. */
        bool rootless;
};

/* Creates the container and leaves its init waiting for start. With
 * ret_pidfd, the caller gets init's pidfd (psrun run waits on it). */
int oci_create(struct oci_root *root, const struct oci_create_options *o, pid_t *ret_pid,
               int *ret_pidfd, psrun_error *err);
int oci_start(struct oci_root *root, const char *id, psrun_error *err);
/* all: every process of the container's cgroup, not only init. */
int oci_kill(struct oci_root *root, const char *id, int sig, bool all, psrun_error *err);
int oci_delete(struct oci_root *root, const char *id, bool force, psrun_error *err);
/* psrun gc for the OCI root: containers still "creating" whose create died
 * (its lock is free) are deleted as by delete --force (processes, cgroups,
 * state), and what oci_root_sweep removes goes. Containers in any other
 * state, or locked, are left alone. Returns how many went. */
int oci_gc(struct oci_root *root, psrun_error *err);
/* The state as `psrun state` prints it: liveness checked, paused read from
 * the freezer. */
int oci_get_state(struct oci_root *root, const char *id, struct oci_state *st, psrun_error *err);
int oci_pause(struct oci_root *root, const char *id, bool pause, psrun_error *err);
int oci_update(struct oci_root *root, const char *id, const struct oci_resources *res,
               psrun_error *err);
/* Host pids of the container's processes, sorted. */
int oci_pids(struct oci_root *root, const char *id, pid_t **ret, size_t *n, psrun_error *err);
int oci_stats(struct oci_root *root, const char *id, struct cgroup_stats *stats, psrun_error *err);

struct oci_exec_options {
        const char *id;
        const struct oci_process *process; /* NULL: the container's own, with the overrides */
        /* Overrides of the container's process (runc exec's flags). */
        char **args; /* NULL-terminated, required without process */
        const char *cwd;
        const char *const *env; /* NAME=value, replacing the container's NAME */
        size_t n_env;
        const char *user;        /* "uid[:gid]" */
        const char *const *caps; /* added to bounding, effective and permitted */
        size_t n_caps;
        bool no_new_privs;
        bool tty;
        const char *pid_file;
        const char *console_socket;
        bool detach;
        unsigned preserve_fds;
};

/* Runs a process in the running container. Detached: returns once it has
 * started (its parent is our parent). Else waits and sets *exit_code. */
int oci_exec(struct oci_root *root, const struct oci_exec_options *o, int *exit_code,
             psrun_error *err);

/* -EPERM with a message naming `what` unless running as root. */
int oci_require_root(const char *what, psrun_error *err);

/* Writes the pid file as runc does: the number, no newline, atomically. */
int oci_write_pid_file(const char *path, pid_t pid, psrun_error *err);

/* ---- shared by the operations (container.c) ---- */

/* Opens the container, takes the lock, reads its state and checks that its
 * init still lives (a dead one makes the state stopped, written back when
 * the lock is exclusive). */
int oci_open_locked(struct oci_root *root, const char *id, enum oci_lock_mode mode,
                    struct oci_container **ret, struct oci_state *st, psrun_error *err);

/* A pidfd for the container's init that is sure to be that process (not a
 * reused pid): -ESRCH when it is gone. */
int oci_pin_init(const struct oci_state *st, int *ret_pidfd, psrun_error *err);

/* What create keeps in the container's directory: the config.json it was
 * created from, read by the later operations (start's and delete's hooks,
 * exec's process and seccomp). */
#define OCI_CONFIG_COPY "config.json"
int oci_load_container_config(struct oci_container *c, struct oci_config *config, psrun_error *err);
int oci_state_json(const struct oci_state *st, char **ret, size_t *len);
/* ns_pidfd: run them in the namespaces of that process (createContainer,
 * startContainer); -1: in ours. */
int oci_run_hooks(const struct oci_config *config, enum oci_hook_kind kind,
                  const struct oci_state *st, int ns_pidfd, psrun_error *err);

/* How long an agent may keep a connect or a send waiting (its backlog or
 * its socket full) before the create or exec fails. */
#define OCI_SECCOMP_AGENT_TIMEOUT_S 10

/* linux.seccomp.listenerPath (runtime/oci/seccomp-agent.c): the listener of
 * process pid's filter and the container process state (st as the state,
 * pid as the process) to the agent listening there, in one message. The
 * caller closes its listener after. */
int oci_seccomp_agent_send(const struct oci_seccomp *sc, const struct oci_state *st, pid_t pid,
                           int listener, psrun_error *err);
