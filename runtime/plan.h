/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The plan: everything the child needs, decided and allocated by the parent
 * before clone3(). The child only reads it (from its copy of the parent's
 * memory) and applies it with raw syscalls.
 */

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/log.h"
#include "image/store.h"
#include "netns/netns.h"
#include "policy/apparmor.h"
#include "policy/caps.h"
#include "policy/landlock.h"
#include "policy/seccomp.h"
#include "rootfs/mounts.h"
#include "runtime/cgroup/cgroup.h"

#define PLAN_MAX_RLIMITS 16

/* The sandbox's ids 0..65535 map to this host range: root inside is an
 * unprivileged, unnamed uid outside. */
#define PSRUN_ID_BASE  0x70000000U
#define PSRUN_ID_COUNT 65536U

/* Kernel names, for the child's error text and the OCI config parser (its
 * linux.namespaces[].type and process.rlimits[].type): to_string gives NULL
 * for an unknown value, from_string -EINVAL; name_at the i-th name, NULL past
 * the last. */
const char *oci_namespace_to_string(int clone_flag); /* "pid", "network", ... */
int oci_namespace_from_string(const char *name);     /* the CLONE_NEW* flag */
const char *oci_namespace_name_at(int i);
const char *oci_rlimit_to_string(int resource); /* "RLIMIT_NOFILE" */
int oci_rlimit_from_string(const char *name);
const char *oci_rlimit_name_at(int i);

struct plan_rlimit {
        int resource;
        struct rlimit limit;
};

/* Where the root filesystem comes from. */
enum plan_root {
        PLAN_ROOT_TMPFS,  /* psrun run: a tmpfs skeleton, host's root at /.oldroot meanwhile */
        PLAN_ROOT_BUNDLE, /* OCI create: the bundle's rootfs directory */
        PLAN_ROOT_JOINED, /* OCI exec: the container's, entered with setns() */
        PLAN_ROOT_IMAGE,  /* an image: rootfs.overlay, made by the parent, attached and pivoted into
                           */
};

/* An existing namespace to enter (OCI linux.namespaces[].path). */
struct plan_join {
        int type; /* CLONE_NEW* */
        int fd;   /* opened by the parent, owned by the plan */
};

#define PLAN_MAX_JOINS 8

/* A per-user-namespace quota (/proc/sys/user/max_*) the child sets in the
 * sandbox's own user namespace; a file the kernel lacks is skipped. */
struct plan_user_quota {
        const char *path; /* static storage */
        char value[24];
        bool cgroupns; /* max_cgroup_namespaces (plan->cgroupns_confined) */
};

#define PLAN_MAX_USER_QUOTAS 16

struct plan {
        uint64_t clone_flags; /* CLONE_NEW* */
        /* Set by launch_clone only: the child makes its cgroup namespace with
         * unshare() once the parent has put it in its cgroups (v1): after
         * its joins (step_cgroupns), or, when no mount of its root is a
         * cgroup file system (which would show the namespace's root), only
         * once it is released with CHILD_SYNC_CONFINED, so that the parent
         * attaches it while it builds its root (cgroupns_confined). */
        bool unshare_cgroupns;
        bool cgroupns_confined;
        /* Entered first, user namespace first (OCI paths); fds owned here. */
        struct plan_join joins[PLAN_MAX_JOINS];
        size_t n_joins;
        /* OCI exec: setns(join_pidfd, join_flags) into a running container
         * (its pid namespace was entered by the parent before clone3, or,
         * with spawn_command, is in join_flags for the command's process). */
        int join_pidfd; /* -1: none */
        uint64_t join_flags;
        /* A session's install exec (runtime/session/install.c), which has a
         * network of its own: before join_flags, the child enters the
         * pidfd's mount namespace alone, makes a private copy of it (owned
         * by psrun's user namespace: the sandbox's has no namespace quota,
         * and must not administer it) and attaches this detached mount (an
         * open_tree clone, made by the parent, of the install network's
         * resolv.conf) on /etc/resolv.conf. -1: none; not owned. */
        int private_resolv_fd;
        /* OCI exec: the child is made outside the container's pid namespace,
         * joins the others, keeps only the fds the command gets, and then
         * makes the command's process (psrun's child: CLONE_PARENT), the
         * only one the container can see; it sends that process's pid and
         * pidfd (CHILD_MSG_SPAWNED) and exits (runtime/child.c). */
        bool spawn_command;
        /* A session's exec with no cgroup (rootless, no delegated
         * subtree): after joining, a pid namespace of its own whose pid 1
         * (psrun's init, the supervisor's child: CHILD_MSG_SPAWNED) runs
         * the command, so that killing it kills the exec's whole tree. */
        bool exec_pidns;
        /* Kill the sandbox when its parent dies: psrun run, not a detached
         * OCI container, which outlives `psrun create`. */
        bool pdeathsig;

        /* identity: "inside outside count" lines for the id maps; empty when
         * no user namespace is made */
        char uid_map[1024];
        char gid_map[1024];
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        size_t n_groups;
        /* psrun without root (runtime/rootless.h); all zero for root. */
        struct plan_rootless {
                bool active;
                bool subids; /* the maps are the user's subordinate ranges: newuidmap writes them */
                bool setgroups_deny; /* one id: the kernel takes a gid_map only after "deny" */
                /* An exec joins a user namespace that denies setgroups
                 * (OCI, rootless): the process keeps its groups. */
                bool groups_denied;
                /* The ids the child takes for its set-up (step_root_id): 0,
                 * or the one id mapped. */
                uid_t setup_uid;
                gid_t setup_gid;
                /* What holds each limit, for the result's layers: "cgroup",
                 * "rlimit_as", "not enforced"... (static strings). */
                const char *memory, *cpu, *pids, *disk, *timeout;
                /* With an image: how its layers' files are owned
                 * ("subordinate ids", "one id"), NULL without one. */
                const char *image_owners;
                /* full, restricted: the sandbox is cloned by a router of the
                 * user's (a user and network namespace holding the table,
                 * the proxy and pasta's link), into a network namespace the
                 * router's user namespace owns (runtime/router.c). uid_map
                 * and gid_map are then relative to the router's ids, which
                 * router_uid_map and router_gid_map give on the host. */
                bool router;
                char router_uid_map[128], router_gid_map[128];
                /* What links the router out: "pasta", else "slirp4netns"
                 * (found on $PATH), and where it is. */
                const char *link;
                char link_path[256];
        } rootless;

        /* network: planned and leased by the parent (netns/netns.h); the
         * parent builds it between clone3 and the release */
        struct netns_plan net;

        char *hostname; /* NULL: leave as is */
        /* A new session keyring of this name for the process (OCI, as runc:
         * "_ses.<id>"), so that it does not share its caller's keys (the
         * kernel's keyrings are not namespaced); NULL: the caller's. */
        char *session_keyring;
        char *domainname; /* NULL: leave as is */
        bool loopback_up;

        /* root filesystem */
        enum plan_root root;
        const char *base_dir;             /* existing host dir the new root is mounted on */
        char *rootfs_dir;                 /* PLAN_ROOT_BUNDLE: the host directory */
        bool no_pivot;                    /* MS_MOVE + chroot instead of pivot_root (ramfs hosts) */
        unsigned long rootfs_propagation; /* 0: private; else MS_* for / after the pivot */
        struct rootfs_plan rootfs;
        char *workdir;
        /* PLAN_ROOT_IMAGE: the image's layers, held (image_store_hold) for
         * the plan's life so that no prune removes them under the sandbox. */
        struct image_hold image_hold;

        /* the process */
        char **argv;
        char **envp;
        const char *path_env; /* PATH value used to find argv[0], points into envp */
        bool use_init;        /* a tiny init as pid 1 that reaps and forwards signals */
        /* A session's init: no command; pid 1 reports READY once set up and
         * then only reaps, until it is killed (runtime/session/supervisor.c). */
        bool init_only;
        /* A session's exec made ahead of its request (launch_zygote): it
         * puts itself in its cgroups, joins, does every step that needs no
         * request, and waits on the sync socket for its command and stdio
         * (struct child_request); argv, envp, workdir and path_env then
         * come from there. */
        bool zygote;
        /* Written to /proc/self/oom_score_adj first thing; NULL: none. */
        const char *oom_score_adj;
        struct plan_rlimit rlimits[PLAN_MAX_RLIMITS];
        size_t n_rlimits;
        struct plan_user_quota user_quotas[PLAN_MAX_USER_QUOTAS];
        size_t n_user_quotas;
        mode_t umask;
        unsigned preserve_fds; /* fds 3..3+n-1 reach the command (OCI --preserve-fds) */
        bool chown_stdio;      /* OCI: stdio pipes/sockets/files given to uid, as runc does */
        int console_fd;        /* -1: none; else the connected --console-socket */
        unsigned short console_rows, console_cols; /* 0: leave the pty's size */
        int exec_fifo_fd;          /* -1: none; else wait for `psrun start` on it (O_RDWR) */
        unsigned long personality; /* 0xffffffff: leave as is */
        /* OCI process.scheduler and process.ioPriority, set before the
         * capabilities go (as runc sets them), and an exec's
         * execCPUAffinity: `final` set right before execve (`initial` is
         * the parent's to set on the child). */
        bool has_sched;
        struct plan_sched {
                uint32_t policy;
                int32_t nice;
                uint32_t priority;
                uint64_t flags, runtime, deadline, period;
        } sched;
        int ioprio; /* IOPRIO_PRIO_VALUE(class, level); 0: unchanged */
        bool has_cpus_initial, has_cpus_final;
        cpu_set_t cpus_initial, cpus_final;
        char timens_offsets[128]; /* written to /proc/self/timens_offsets; "": none */

        /* psrun run and sessions: what the parent enforces from outside
         * (the OCI path takes linux.resources instead), computed once by
         * the planner: `limits` for psrun run's own cgroup (pids: the
         * command's and psrun's init); a backend that counts otherwise
         * recomputes it from `reported` with plan_limits_with() or
         * plan_limits_host_tasks(), never from the policy. */
        struct cgroup_limits limits; /* 0 fields: no limit */
        uint64_t timeout_ms;         /* wall clock from the clone; 0: none */
        /* The limits as the policy gives them and the result reports them
         * (the violations' limit entries): the user's processes only. */
        struct plan_limits {
                uint64_t memory_bytes, pids, disk_bytes, timeout_ms; /* 0: none */
                double cpus;
        } reported;

        /* security layers, in the order the child applies them */
        struct caps_plan caps;
        struct apparmor_plan apparmor; /* active false: none */
        struct landlock_plan landlock; /* ruleset_fd -1: none */
        bool no_new_privs;
        struct seccomp_program seccomp; /* len 0: none */
        bool seccomp_early;             /* load before dropping capabilities (no no_new_privs) */
        /* OCI linux.seccomp.listenerPath: `seccomp` is loaded with a
         * user-notification listener while the parent still reads the sync
         * socket (before CHILD_MSG_READY, or before execve for an exec), and
         * the listener goes to the parent (CHILD_MSG_SECCOMP). */
        bool seccomp_listener;
        /* Violations (runtime/violations-watch.h): seccomp with a listener
         * for its refusals (len 0: none; `seccomp` is the fallback when the
         * kernel allows no second listener), and a CHILD_MSG_EXEC from the
         * command right before execve, with the listener. */
        struct seccomp_program seccomp_notify;
        bool report_exec;
        /* With report_exec: the command sends its /workspace first (a
         * CHILD_MSG_WORKSPACE), for the violations' disk_full. From the
         * command itself, not opened later by path through /proc: a command
         * that is quicker than the parent's read of its messages has taken
         * its root with it by then. */
        bool report_workspace;
        /* The policy's `violations` mode (enum policy_violations; 0: off);
         * with it on, the planner sets report_exec and compiles
         * seccomp_notify (native backend), and the watch opens what they
         * ask for (runtime/violations-watch.h). */
        int violations;
        /* The policy turned the layer off (its absence from the plan is
         * then "off", not "unavailable", in the result's layers). */
        bool landlock_off, apparmor_off;
};

/* Whether the user (not newuidmap, not root) writes the sandbox's id maps:
 * the one-id map, or a router's maps of its sandbox. The child then stays
 * dumpable until they are written (step_not_dumpable). */
static inline bool plan_maps_by_user(const struct plan *p)
{
        return (p->rootless.setgroups_deny && !p->rootless.subids) || p->rootless.router;
}

/* A plan with nothing in it and every fd -1. */
void plan_init(struct plan *plan);
void plan_free(struct plan *plan);

/* The cgroup limits of `reported` with extra_processes of psrun's own
 * beside the user's (an init, an exec made ahead of its request). */
struct cgroup_limits plan_limits_with(const struct plan *plan, uint64_t extra_processes);
/* The same where each process costs per_process host tasks, plus base for
 * the backend's own (runsc, its gofer and the sentry: runtime/gvisor/runsc.c). */
struct cgroup_limits plan_limits_host_tasks(const struct plan *plan, uint64_t extra_processes,
                                            unsigned base, unsigned per_process);
/* Landlock logs the command's denials (for the violations' audit reader:
 * runtime/violations-watch.c says when it reads them). */
void plan_log_landlock_denials(struct plan *plan);

/* ---- policy -> plan (runtime/plan-policy.c) ---- */

struct policy;

/* What the planner needs of its caller: where its notes go (a layer the
 * policy made "auto" and the host lacks is skipped with a note). */
struct plan_options {
        log_fn log; /* NULL: notes are dropped */
        void *log_userdata;
};

/* Build the plan for `argv` under `policy` (psrun run, a session's
 * template). opts may be NULL. */
int plan_from_policy(const struct policy *policy, char *const argv[],
                     const struct plan_options *opts, struct plan *plan, psrun_error *err);
/* The sandbox's network (network, allow_domains, allow_cidrs and the
 * keys they share), planned, not leased: the one place a policy's network
 * keys become a netns_request. It borrows the policy's strings. */
int plan_policy_network(const struct policy *policy, struct netns_plan *net, psrun_error *err);
/* A session's install network (install_network and install_allow_domains
 * in place of network and allow_domains; allow_cidrs is the session's own
 * and not carried over; every other network key is shared), planned, not
 * leased. It borrows the policy's strings. */
int plan_install_network(const struct policy *policy, struct netns_plan *net, psrun_error *err);

/* ---- the image root (runtime/plan-image.c) ---- */

/* What planning takes of an image: its layers' directories (top first),
 * held, and its config's Env, WorkingDir and User. */
struct plan_image {
        struct image_hold hold;
        char **lowers; /* top first */
        size_t n_lowers;
        char **env;    /* "NAME=value", NULL-terminated; may be NULL */
        char *workdir; /* NULL: none */
        char *user;    /* NULL: none */
        char *reference;
        char owners[64]; /* the store's (image_store_owners) */
};
/* Resolves the policy's image in its store (image_store, opened with the
 * sandbox's id shift and image_max_size): the record when there is one,
 * else pulled (a registry reference, with the policy's registries) or
 * imported (oci:DIR[:TAG]); then held. */
int plan_image_resolve(const struct policy *policy, struct plan_image *img, psrun_error *err);
/* The syntax of `image` when it is a registry reference (image/reference.c:
 * one line naming `image`); oci: and docker-archive: pass. */
int plan_image_check_reference(const char *image, psrun_error *err);
void plan_image_free(struct plan_image *img);
/* Each of the policy's `tools` present in the root at root_dirfd (a
 * directory opened on the sandbox's /, e.g. /proc/PID/root), found on the
 * PATH of envp: a missing one is one line naming it and the image. */
int plan_check_tools(const struct policy *policy, int root_dirfd, char *const *envp,
                     psrun_error *err);
/* The same for a plan just made, before anything of it runs: its image
 * root (the overlay opened once more, detached) or the host's. */
int plan_check_planned_tools(const struct policy *policy, const struct plan *p, psrun_error *err);
