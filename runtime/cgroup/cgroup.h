/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One cgroup interface, two drivers chosen at run time:
 *  - v2: a pure cgroup2 host (CLONE_INTO_CGROUP, memory.peak, memory.events,
 *    pids.events, cgroup.kill);
 *  - v1/hybrid: limits in the v1 hierarchies (memory, pids, cpu, cpuacct);
 *    membership, kill and CPU accounting through the cgroup2 mount when one is
 *    there (it offers cgroup.kill and cpu.stat without owning controllers).
 * Cgroups are created below the launching process's own cgroup unless a parent
 * is given, named "psrun-<pid>-<n>" so `psrun gc` can find those of dead runs.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct cgroup_limits {
        uint64_t memory_bytes; /* 0: no limit; swap is always 0 */
        uint64_t pids_max;     /* 0: no limit */
        double cpus;           /* 0: no limit */
};

/* A field that can't be read (missing controller, older kernel) is 0. A limit
 * reads as the kernel spells "none": UINT64_MAX for v2's "max", the v1
 * kernel's large page-rounded number (9223372036854771712) as it is. */
struct cgroup_stats {
        uint64_t cpu_usec;
        uint64_t memory_peak_bytes; /* the most the cgroup ever used ("max usage") */
        uint64_t oom_kills;         /* OOM kills inside the cgroup */
        uint64_t pids_max_hits;     /* fork/clone refused by pids.max */

        /* For `events --stats` (runc's shape). */
        uint64_t cpu_user_usec, cpu_system_usec;
        uint64_t cpu_nr_periods, cpu_nr_throttled, cpu_throttled_usec;
        uint64_t memory_usage_bytes, memory_limit_bytes;
        uint64_t memory_failcnt; /* v1 memory.failcnt; v2 memory.events "max" */
        /* memory+swap, the way runc's "swap" reports it on both versions; all
         * 0 when the host has no swap accounting. */
        uint64_t memsw_usage_bytes, memsw_limit_bytes, memsw_max_usage_bytes;
        uint64_t memsw_failcnt;
        uint64_t pids_current, pids_limit;
};

struct cgroup;
struct oci_resources;

/* Which driver this host gets: "v2" or "v1". */
const char *cgroup_driver_name(void);

/* Create the cgroup(s) for one sandbox and apply the limits. `parent` is a
 * path relative to the hierarchy root(s) ("/psrun"), or NULL for the
 * caller's own cgroup. */
int cgroup_create(const char *parent, const struct cgroup_limits *limits, struct cgroup **ret,
                  psrun_error *err);

/* Create a cgroup below `parent` (a session's per-exec cgroup), in every
 * hierarchy `parent` has a directory in; `parent`'s limits still apply
 * to it. A limit whose controller `parent` does not have is an error. */
int cgroup_create_child(const struct cgroup *parent, const struct cgroup_limits *limits,
                        struct cgroup **ret, psrun_error *err);

/* fd of the cgroup2 directory for clone3(CLONE_INTO_CGROUP), or -1 when the
 * host has no usable cgroup2 mount. Owned by the cgroup. */
int cgroup_clone_fd(const struct cgroup *cg);

/* Whether some hierarchy (v1) is only joined by cgroup_attach after the
 * clone, not by CLONE_INTO_CGROUP. */
bool cgroup_attach_after_clone(const struct cgroup *cg);

/* Put `pid` in every hierarchy it is not already in (v1 hierarchies, and the
 * cgroup2 one when clone3 could not place it). */
int cgroup_attach(struct cgroup *cg, pid_t pid, psrun_error *err);

/* The cgroup.procs files, open for writing, of the hierarchies cgroup_attach
 * would write to for a process cloned with cgroup_clone_fd: a child may put
 * itself there (by writing "0") instead of waiting for its parent to do it.
 * Up to max fds (close-on-exec); returns how many, or -errno. */
int cgroup_attach_fds(struct cgroup *cg, int *fds, size_t max, psrun_error *err);

/* Kill every process in the cgroup and wait until it is empty (bounded). */
int cgroup_kill(struct cgroup *cg, psrun_error *err);

int cgroup_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err);

/*
 * What a result needs, fast (a session's execs): cpu_usec,
 * memory_peak_bytes, memory_failcnt, oom_kills and pids_max_hits,
 * from fds cgroup_open_usage opened ahead (it may be skipped: the first
 * read opens them). The other fields are left 0. A file that is not there
 * leaves its field alone, as cgroup_read_stats does.
 */
int cgroup_open_usage(struct cgroup *cg);
int cgroup_read_usage(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err);

/* The memory controller's usage and limit files of cg, open for reading
 * (v2 memory.current and memory.max, v1 memory.usage_in_bytes and
 * memory.limit_in_bytes): what a process charged below cg checks its room
 * against (cgroup_read_fd_u64). -EOPNOTSUPP when cg has no memory
 * controller. */
int cgroup_memory_fds(const struct cgroup *cg, int *usage_fd, int *limit_fd);
/* The number such a file holds now ("max": UINT64_MAX), or -errno. */
int cgroup_read_fd_u64(int fd, uint64_t *ret);
/* Whether any process is in the cgroup or below it, as its cgroup2
 * directory's cgroup.events says (through cgroup_open_usage's fd): 1, 0,
 * or -EOPNOTSUPP without a cgroup2 directory. A cgroup every process of
 * which was born in its cgroup2 directory (cgroup_clone_fd) has none in
 * any other hierarchy when it has none there. */
int cgroup_populated(struct cgroup *cg);

/* Kill what is left, remove every directory created, free. NULL-safe. */
void cgroup_destroy(struct cgroup *cg);
/* For _cleanup_(cgroup_destroyp). */
static inline void cgroup_destroyp(struct cgroup **cg)
{
        cgroup_destroy(*cg);
}

/* Remove cgroups left by psrun runs that died (owner pid gone) below
 * `parent` (NULL: the caller's own cgroup). Returns how many were removed. */
int cgroup_gc(const char *parent, psrun_error *err);

/* The same, below the directories `cg` itself was made in, without reading
 * the host's tables again: what psrun run does while its sandbox starts. */
int cgroup_gc_siblings(const struct cgroup *cg, psrun_error *err);

/* Rootless (runtime/cgroup/delegate.c): the parent, for cgroup_create, of
 * sandboxes in the cgroup v2 subtree systemd delegates to the caller's
 * user@UID.service (its psrun.slice child, made if missing), in *ret; 1
 * found, 0 none (cgroup v1, no such unit, not the caller's, not delegated),
 * -ENOMEM. cgroup_delegated_in is its pure part: the parent from the text
 * of /proc/self/cgroup. */
int cgroup_find_delegated(char **ret);
int cgroup_delegated_in(const char *self_cgroup, uid_t uid, char **ret);

/* Path (for messages and tests) of the cgroup in the named controller
 * hierarchy ("memory", "pids", "unified"), or NULL. */
const char *cgroup_path(const struct cgroup *cg, const char *controller);

/*
 * OCI containers: named cgroups that outlive the psrun process that made
 * them, reopened by later commands (kill, pause, update, ps, delete) from
 * the list cgroup_paths() gives. See docs/cgroups.md, "OCI containers".
 *
 * cgroup_create_at: `path` is the OCI cgroupsPath. Absolute ("/docker/abc")
 * is taken from each hierarchy's root; relative ("a/b") is below the
 * caller's own cgroup in each hierarchy; NULL means "<caller's own
 * cgroup>/<id>". Missing parents are created. v1 gets a directory in every
 * mounted hierarchy psrun knows plus the cgroup2 one; v2 one directory, with
 * controllers enabled in the parents' cgroup.subtree_control. An existing
 * leaf with processes in it is -EBUSY; an existing empty one is adopted. res
 * may be NULL. On failure, everything it created is removed (an adopted leaf
 * stays).
 */
int cgroup_create_at(const char *path, const char *id, const struct oci_resources *res,
                     struct cgroup **ret, psrun_error *err);

/* What cgroup_create_at(path, id) will make, as cgroup_paths() lists it,
 * without making anything: create records it in the state first, so that a
 * create killed half-way leaves nothing delete cannot find. -EBUSY when a
 * leaf exists with processes in it. */
int cgroup_plan_at(const char *path, const char *id, char ***ret, psrun_error *err);

/* "controller:path" lines ("memory:/a/b", the cgroup2 one as "0::/a/b"),
 * NULL-terminated, malloc'd (strv_free). Paths are hierarchy-relative, as in
 * /proc/<pid>/cgroup. */
int cgroup_paths(const struct cgroup *cg, char ***ret, psrun_error *err);

/* Reopen from cgroup_paths()'s list. Directories that are gone (and lines
 * naming hierarchies this host does not have) are skipped; none left:
 * -ENOENT. */
int cgroup_open(char *const *paths, struct cgroup **ret, psrun_error *err);

/* Free the handle; directories and processes stay. NULL-safe. */
void cgroup_close(struct cgroup *cg);

/* Kill everything in it (thawing it if frozen), rmdir the leaf directories
 * (and cgroups the container made below them; never the parents), free. The
 * handle is freed even on failure. NULL-safe. */
int cgroup_remove(struct cgroup *cg, psrun_error *err);

/* Apply or change (`update`) OCI resources: only the fields that are set.
 * Errors name the OCI field:
 *   "linux.resources.memory.limit: write memory.limit_in_bytes: Device or resource busy" */
int cgroup_apply_resources(struct cgroup *cg, const struct oci_resources *res, psrun_error *err);

/* Freeze or thaw, and wait (up to 5 s, else -ETIMEDOUT, thawed again) until
 * the kernel reports it done. No freezer: -EOPNOTSUPP. */
int cgroup_freeze(struct cgroup *cg, bool frozen, psrun_error *err);
/* 1 frozen, 0 not (also while still freezing), -errno. */
int cgroup_is_frozen(struct cgroup *cg);

/* Every pid in the cgroup and its sub-cgroups, in every hierarchy: sorted,
 * without duplicates, malloc'd (*ret NULL when *n is 0). */
int cgroup_pids(struct cgroup *cg, pid_t **ret, size_t *n, psrun_error *err);

/* OCI cpu.shares (2..262144) as cgroup v2 cpu.weight (1..10000), the way
 * runc and crun convert it since 2025: 2 -> 1, 1024 (the v1 default) -> 100
 * (the v2 default), 262144 -> 10000, log-quadratic in between. 0 -> 0 (unset). */
uint64_t cgroup_cpu_shares_to_weight(uint64_t shares);
