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

#include "runtime/cgroup/cgroup.h"

enum cg_slot {
        CG_SLOT_MEMORY,
        CG_SLOT_PIDS,
        CG_SLOT_CPU,
        CG_SLOT_CPUACCT,
        CG_SLOT_FREEZER,
        /* Only OCI containers (cgroup_create_at) use these. */
        CG_SLOT_CPUSET,
        CG_SLOT_DEVICES,
        CG_SLOT_BLKIO,
        CG_SLOT_HUGETLB,
        CG_SLOT_NET_CLS,
        CG_SLOT_NET_PRIO,
        CG_SLOT_PERF_EVENT,
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

/* An empty handle for driver ops: no directories, no clone fd. NULL when
 * out of memory. */
struct cgroup *cg_new(const struct cgroup_ops *ops);

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

/* The files cgroup_read_usage reads, at most (stats.c). */
#define CG_USAGE_FILES 7

struct cgroup {
        const struct cgroup_ops *ops;
        char name[64];
        struct cg_dir dir[CG_SLOT_MAX];
        int unified_fd; /* O_DIRECTORY fd for CLONE_INTO_CGROUP, or -1 */
        /* cgroup_open_usage: the files of cgroup_read_usage and cgroup2's
         * cgroup.events, kept open (-1: not opened yet; -2: not there). */
        int usage_fd[CG_USAGE_FILES];
        int events_fd;
};

void cg_close_usage(struct cgroup *cg);

/* The mount table and the caller's /proc/self/cgroup, read once per
 * create/gc rather than once per hierarchy. */
/* Where systemd and most distributions mount the hierarchies. */
#define CG_FS_ROOT "/sys/fs/cgroup"

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
        /* OCI linux.resources (cgroup-v1-oci.c, cgroup-v2-oci.c). */
        int (*apply_resources)(struct cgroup *cg, const struct oci_resources *res,
                               psrun_error *err);
};

/* cgroup-stats.c */
int cg_v1_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err);
int cg_v2_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err);
/* cgroup-v1-oci.c, cgroup-v2-oci.c */
/* The drivers' apply_resources, behind what both refuse (res.c). */
int cg_res_apply(struct cgroup *cg, const struct oci_resources *res, psrun_error *err);
int cg_v1_apply_resources(struct cgroup *cg, const struct oci_resources *res, psrun_error *err);
int cg_v2_apply_resources(struct cgroup *cg, const struct oci_resources *res, psrun_error *err);

extern const struct cgroup_ops cgroup_v1_ops;
/* The driver for this host (or the one a test forced). */
const struct cgroup_ops *cg_driver(void);
extern const struct cgroup_ops cgroup_v2_ops;

/* How long cgroup_kill waits for the cgroup to empty. */
#define CG_KILL_TIMEOUT_MS 2000

/* "memory", "pids", "cpu", "cpuacct", "freezer", "cpuset", ..., "unified":
 * the controller's name, as /proc/<pid>/cgroup and mountinfo spell it. */
const char *cg_slot_name(enum cg_slot slot);
/* The slot of a controller name; -1 when psrun does not know it. */
int cg_slot_from_name(const char *name);

int cg_host_load(struct cg_host *host, psrun_error *err);
/* A whole small file (procfs), NUL-terminated, malloc'd. */
int cg_read_whole_file(const char *path, char **ret);
/* The path of `controller` ("memory", "" for cgroup2) in a /proc/<pid>/cgroup
 * text, malloc'd; -ENOENT when it has none. */
int cg_proc_cgroup_lookup(const char *content, const char *controller, char **ret);
void cg_host_clear(struct cg_host *host);
/* The caller's own cgroup in the hierarchy holding `controller` (NULL:
 * cgroup2), as /proc/self/cgroup spells it. */
int cg_own_path(const struct cg_host *host, const char *controller, char **ret);
/* Where the hierarchy path `rel` (canonical, absolute) is on disk, whether or
 * not it exists: out->path and out->rel, and in *ret_mount (may be NULL) the
 * directory where the mount shows the hierarchy's visible root. -ENODEV
 * without touching err when the hierarchy is not mounted. */
int cg_locate(const struct cg_host *host, const char *controller, const char *rel,
              struct cg_dir *out, char **ret_mount, psrun_error *err);
/* Slots sharing one directory (co-mounted cpu,cpuacct) marked as aliases. */
void cg_mark_aliases(struct cg_dir dirs[CG_SLOT_MAX]);
/* A hierarchy path that names no parent: absolute, canonical, no "." or "..". */
bool cg_path_is_canonical(const char *path);

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
/* The same for a value of any length (cpuset lists, unified values). */
int cg_write_str(const char *dir, const char *file, const char *value);
/* Read dir/file into buf (NUL-terminated). Returns the length or -errno. */
ssize_t cg_read(const char *dir, const char *file, char *buf, size_t size);
/* The number in text read from a control file: the whole of it, or (key)
 * the value of its "key value" line; "max" is UINT64_MAX. -ENOENT without
 * the key, -EPROTO for what is not a number. */
int cg_parse_u64(const char *text, const char *key, uint64_t *ret);
/* A file holding one number ("max" reads as UINT64_MAX). */
int cg_read_u64(const char *dir, const char *file, uint64_t *ret);
/* The value of `key` in a flat keyed file ("key value" lines). -ENOENT when
 * the file or the key is missing. */
int cg_read_key_u64(const char *dir, const char *file, const char *key, uint64_t *ret);

/* SIGKILL every process listed in cgroup.procs of every slot (and their
 * descendant cgroups) until all are empty or `deadline_ms` passes. */
int cg_sigkill_until_empty(struct cgroup *cg, uint64_t deadline_ms, psrun_error *err);
/* Signal every process in cgroup.procs of dir and its descendant cgroups once. */
int cg_signal_tree(const char *dir, int sig);
/* Wait for "populated 0" in a cgroup2 directory's cgroup.events. */
int cg_wait_unpopulated(const char *dir, uint64_t deadline_ms, psrun_error *err);

/* Count the processes in dir and its descendant cgroups (0 when empty). */
int cg_count_tree(const char *dir);
/* Every pid in cgroup.procs of dir and its descendants, appended to *pids. */
int cg_collect_pids(const char *dir, pid_t **pids, size_t *n);

/* ---- OCI resources (cgroup-oci.c): one table drives the plain
 * "value into a file" settings of both drivers. ---- */
enum cg_res_kind {
        CG_RES_I64,     /* struct oci_opt_i64, written as is ("-1" too) */
        CG_RES_I64_MAX, /* struct oci_opt_i64, -1 as "max" */
        CG_RES_U64,     /* struct oci_opt_u64 */
        CG_RES_BOOL,    /* struct oci_opt_bool as 1/0 */
        CG_RES_STR,     /* char *, NULL: not set */
        CG_RES_SHARES,  /* struct oci_opt_u64 cpu shares, written as v2 cpu.weight */
};

struct cg_res_file {
        const char *field; /* "linux.resources.memory.swappiness" */
        size_t group;      /* offsetof(struct oci_resources, memory) */
        size_t member;     /* offsetof(struct oci_memory, swappiness) */
        enum cg_res_kind kind;
        /* 0 is a value to write (swappiness, idle). Elsewhere 0 means "not
         * given", as in runc: Docker sends "shares":0, "quota":0,
         * "pids":{"limit":0} for what it leaves alone. */
        bool zero_is_value;
        enum cg_slot slot; /* v1: the hierarchy; v2: the controller's slot */
        const char *file;
        /* Refused with EINVAL: try again after the rest of the table. Values
         * that bound each other (cfs quota and period, quota and burst, rt
         * runtime and period) may be refused in one order and not in the
         * other, depending on the old values. */
        bool reorder;
};

/* The directory that holds a controller's files for `field`, or an error
 * naming the field (the driver's own check). */
typedef int (*cg_res_dir_fn)(const struct cgroup *cg, enum cg_slot slot, const char *field,
                             const char **ret, psrun_error *err);

/* Write every set field of the table, in table order (reorder rows refused
 * with EINVAL once more at the end). */
int cg_apply_res_table(struct cgroup *cg, const struct oci_resources *res,
                       const struct cg_res_file *table, size_t n, cg_res_dir_fn dir_of,
                       psrun_error *err);
/* The directory for slot, or an EOPNOTSUPP error naming the field:
 * "linux.resources.hugepageLimits: this host has no hugetlb controller". */
int cg_res_dir(const struct cgroup *cg, enum cg_slot slot, const char *field, const char **ret,
               psrun_error *err);
/* Write value to dir/file; an error reads "<field>: write <file>: <strerror>". */
int cg_res_write(const char *field, const char *dir, const char *file, const char *value,
                 psrun_error *err);

/* ---- devices (cgroup-devices.c) ---- */
struct oci_device_rule;
/* v1: "deny all", then each rule in order into devices.allow/devices.deny. */
int cg_v1_apply_devices(const char *dir, const struct oci_device_rule *rules, size_t n,
                        psrun_error *err);
/* v2: a BPF_PROG_TYPE_CGROUP_DEVICE program for the rules, attached to dir
 * in place of the one attached before (if any). */
int cg_v2_apply_devices(const char *dir, const struct oci_device_rule *rules, size_t n,
                        psrun_error *err);

/* Tests: make the v1 driver ignore the cgroup2 mount, as on a pure v1 host,
 * so the freezer + SIGKILL path can be exercised on hybrid hosts. */
void cgroup_test_set_ignore_unified(bool ignore);
bool cg_ignore_unified(void);
/* Tests: use the named driver ("v1", "v2") whatever the host is; NULL goes
 * back to detection. The v2 driver runs on a hybrid host's cgroup2 mount,
 * which is enough for its membership, kill, accounting and fail-closed paths. */
void cgroup_test_set_driver(const char *name);
