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

struct cgroup_stats {
        uint64_t cpu_usec;
        uint64_t memory_peak_bytes;
        uint64_t oom_kills;     /* OOM kills inside the cgroup */
        uint64_t pids_max_hits; /* fork/clone refused by pids.max */
};

struct cgroup;

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

/* Put `pid` in every hierarchy it is not already in (v1 hierarchies, and the
 * cgroup2 one when clone3 could not place it). */
int cgroup_attach(struct cgroup *cg, pid_t pid, psrun_error *err);

/* Kill every process in the cgroup and wait until it is empty (bounded). */
int cgroup_kill(struct cgroup *cg, psrun_error *err);

int cgroup_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err);

/* Kill what is left, remove every directory created, free. NULL-safe. */
void cgroup_destroy(struct cgroup *cg);

/* Remove cgroups left by psrun runs that died (owner pid gone) below
 * `parent` (NULL: the caller's own cgroup). Returns how many were removed. */
int cgroup_gc(const char *parent, psrun_error *err);

/* The same, below the directories `cg` itself was made in, without reading
 * the host's tables again: what psrun run does while its sandbox starts. */
int cgroup_gc_siblings(const struct cgroup *cg, psrun_error *err);

/* Path (for messages and tests) of the cgroup in the named controller
 * hierarchy ("memory", "pids", "unified"), or NULL. */
const char *cgroup_path(const struct cgroup *cg, const char *controller);
