/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What runtime/cgroup.c (common code: discovery, naming, attach, destroy, gc)
 * shares with the two drivers (cgroup-v1.c, cgroup-v2.c). Not for other
 * subsystems: they use runtime/cgroup.h.
 *
 * A sandbox's cgroup is one directory per hierarchy it lives in. On a pure
 * cgroup2 host that is a single directory; on a v1/hybrid host it is one per
 * controller hierarchy plus, when mounted, one in the cgroup2 hierarchy. Each
 * hierarchy has its own notion of "the caller's cgroup", so every slot keeps
 * its own paths.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/cgroup.h"

enum cg_slot {
        CG_SLOT_MEMORY,
        CG_SLOT_PIDS,
        CG_SLOT_CPU,
        CG_SLOT_CPUACCT,
        CG_SLOT_FREEZER,
        CG_SLOT_UNIFIED, /* the cgroup2 hierarchy, whichever driver */
        CG_SLOT_MAX,
};

struct cg_dir {
        char *path; /* absolute directory; NULL: this slot is unused */
        char *rel;  /* the same cgroup as /proc/<pid>/cgroup names it */
        bool alias; /* same directory as an earlier slot (cpu,cpuacct co-mounted):
                     * never created, attached or removed on its own */
};

struct cgroup_ops;

/* Whether the host has any swap (SwapTotal in /proc/meminfo is not 0). */
bool cg_host_has_swap(void);
/* The error for a host with swap whose kernel can't keep a cgroup out of it
 * (swap accounting off): the policy's "no swap" would not hold. */
int cg_no_swap_limit(psrun_error *err, const char *dir);

/* validate parent, pick the driver, read the host's tables once and find
 * the directory in each hierarchy below which cgroups are made (aliases
 * marked). */
int cg_find_bases(const char *parent, const struct cgroup_limits *limits,
                  const struct cgroup_ops **ret_ops, struct cg_dir bases[CG_SLOT_MAX],
                  psrun_error *err);
void cg_dirs_clear(struct cg_dir (*dirs)[CG_SLOT_MAX]);
char *cg_path_join(const char *a, const char *b);
bool cg_is_dir(const char *path);
/* rm -r of every directory of cg (no kill); the slots are cleared. */
int cg_remove_dirs(struct cgroup *cg, psrun_error *err);
/* Free the handle only: what it names on disk stays. */
void cg_free(struct cgroup *cg);

/* Make d its parent cgroup (path and rel); false at the hierarchy's root. */
bool cg_dir_ascend(struct cg_dir *d);

struct cgroup {
        const struct cgroup_ops *ops;
        char name[64];
        struct cg_dir dir[CG_SLOT_MAX];
        int unified_fd; /* O_DIRECTORY fd for CLONE_INTO_CGROUP, or -1 */
};

/* The mount table and the caller's /proc/self/cgroup, read once per
 * create/gc rather than once per hierarchy. */
struct cg_host {
        char *mountinfo;
        char *self_cgroup;
};

struct cgroup_ops {
        const char *name;
        /* Fill `out` with the directories under which the sandbox's cgroups go,
         * one per slot the driver uses. `limits` NULL means "every hierarchy
         * that is there, none required, parents that don't exist skipped"
         * (what gc wants). */
        int (*find_parents)(const struct cg_host *host, const char *parent,
                            const struct cgroup_limits *limits, struct cg_dir out[CG_SLOT_MAX],
                            psrun_error *err);
        /* Make the parents able to hold the new cgroup (v2: enable controllers
         * in cgroup.subtree_control). NULL when nothing is needed. */
        int (*prepare_parents)(struct cg_dir parents[CG_SLOT_MAX],
                               const struct cgroup_limits *limits, psrun_error *err);
        int (*apply_limits)(struct cgroup *cg, const struct cgroup_limits *limits,
                            psrun_error *err);
        int (*kill)(struct cgroup *cg, psrun_error *err);
        int (*read_stats)(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err);
};

extern const struct cgroup_ops cgroup_v1_ops;
extern const struct cgroup_ops cgroup_v2_ops;

/* How long cgroup_kill waits for the cgroup to empty. */
#define CG_KILL_TIMEOUT_MS 2000

/* "memory", "pids", "cpu", "cpuacct", "freezer", "unified". */
const char *cg_slot_name(enum cg_slot slot);

/* Resolve `parent` (a path in the hierarchy as /proc/self/cgroup spells it;
 * NULL: the caller's own cgroup there) to a directory of the hierarchy that
 * holds `controller` (NULL: the cgroup2 hierarchy). Returns -ENODEV without
 * touching `err` when that hierarchy is not mounted, -ENOENT with a message
 * when the parent does not exist in it. */
int cg_resolve_parent(const struct cg_host *host, const char *controller, const char *parent,
                      struct cg_dir *out, psrun_error *err);

void cg_dir_clear(struct cg_dir *d);

bool cg_file_exists(const char *dir, const char *file);
/* Write a formatted value to dir/file. Returns 0 or -errno; never fills err,
 * so callers can name the value they were setting. */
int cg_write(const char *dir, const char *file, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Read dir/file into buf (NUL-terminated). Returns the length or -errno. */
ssize_t cg_read(const char *dir, const char *file, char *buf, size_t size);
/* A file holding one number ("max" reads as UINT64_MAX). */
int cg_read_u64(const char *dir, const char *file, uint64_t *ret);
/* The value of `key` in a flat keyed file ("key value" lines). -ENOENT when
 * the file or the key is missing. */
int cg_read_key_u64(const char *dir, const char *file, const char *key, uint64_t *ret);

uint64_t cg_now_ms(void);

/* SIGKILL every process listed in cgroup.procs of every slot (and their
 * descendant cgroups) until all are empty or `deadline_ms` passes. */
int cg_sigkill_until_empty(struct cgroup *cg, uint64_t deadline_ms, psrun_error *err);
/* Signal every process in cgroup.procs of dir and its descendant cgroups once. */
int cg_signal_tree(const char *dir, int sig);
/* Wait for "populated 0" in a cgroup2 directory's cgroup.events. */
int cg_wait_unpopulated(const char *dir, uint64_t deadline_ms, psrun_error *err);

/* Tests: make the v1 driver ignore the cgroup2 mount, as on a pure v1 host,
 * so the freezer + SIGKILL path can be exercised on hybrid hosts. */
void cgroup_test_set_ignore_unified(bool ignore);
bool cg_ignore_unified(void);
/* Tests: use the named driver ("v1", "v2") whatever the host is; NULL goes
 * back to detection. The v2 driver runs on a hybrid host's cgroup2 mount,
 * which is enough for its membership, kill, accounting and fail-closed paths. */
void cgroup_test_set_driver(const char *name);
