/* SPDX-License-Identifier: MIT */
/*
 * Accounting of both drivers (cgroup_read_stats): which file, and which key
 * in it, fills which field of struct cgroup_stats. A file that is missing (a
 * controller that is not there, an older kernel) leaves its field alone, so
 * a later row can stand in for an earlier one.
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"

struct stat_row {
        enum cg_slot slot;
        const char *file;
        const char *key; /* NULL: the file holds one number */
        size_t field;    /* offsetof(struct cgroup_stats, ...) */
        uint64_t divisor;
};

#define STAT(f) offsetof(struct cgroup_stats, f)

/* Later rows win when both files exist: CPU time from cgroup2's cpu.stat
 * (there even without a cpu controller, on hybrid hosts too) rather than
 * cpuacct, nanoseconds divided down to microseconds. */
static const struct stat_row v1_rows[] = {
        {CG_SLOT_MEMORY, "memory.usage_in_bytes", NULL, STAT(memory_usage_bytes), 1},
        {CG_SLOT_MEMORY, "memory.limit_in_bytes", NULL, STAT(memory_limit_bytes), 1},
        {CG_SLOT_MEMORY, "memory.max_usage_in_bytes", NULL, STAT(memory_peak_bytes), 1},
        {CG_SLOT_MEMORY, "memory.failcnt", NULL, STAT(memory_failcnt), 1},
        /* oom_kill in memory.oom_control (4.13+) counts kills in this memcg. */
        {CG_SLOT_MEMORY, "memory.oom_control", "oom_kill", STAT(oom_kills), 1},
        {CG_SLOT_MEMORY, "memory.memsw.usage_in_bytes", NULL, STAT(memsw_usage_bytes), 1},
        {CG_SLOT_MEMORY, "memory.memsw.limit_in_bytes", NULL, STAT(memsw_limit_bytes), 1},
        {CG_SLOT_MEMORY, "memory.memsw.max_usage_in_bytes", NULL, STAT(memsw_max_usage_bytes), 1},
        {CG_SLOT_MEMORY, "memory.memsw.failcnt", NULL, STAT(memsw_failcnt), 1},
        {CG_SLOT_PIDS, "pids.events", "max", STAT(pids_max_hits), 1},
        {CG_SLOT_PIDS, "pids.current", NULL, STAT(pids_current), 1},
        {CG_SLOT_PIDS, "pids.max", NULL, STAT(pids_limit), 1},
        {CG_SLOT_CPU, "cpu.stat", "nr_periods", STAT(cpu_nr_periods), 1},
        {CG_SLOT_CPU, "cpu.stat", "nr_throttled", STAT(cpu_nr_throttled), 1},
        {CG_SLOT_CPU, "cpu.stat", "throttled_time", STAT(cpu_throttled_usec), 1000},
        {CG_SLOT_CPUACCT, "cpuacct.usage", NULL, STAT(cpu_usec), 1000},
        {CG_SLOT_CPUACCT, "cpuacct.usage_user", NULL, STAT(cpu_user_usec), 1000},
        {CG_SLOT_CPUACCT, "cpuacct.usage_sys", NULL, STAT(cpu_system_usec), 1000},
        {CG_SLOT_UNIFIED, "cpu.stat", "usage_usec", STAT(cpu_usec), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "user_usec", STAT(cpu_user_usec), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "system_usec", STAT(cpu_system_usec), 1},
};

/* memory.peak is 5.19+; before that the current usage is the best snapshot
 * there is, hence memory.current first. memsw is filled in afterwards. */
static const struct stat_row v2_rows[] = {
        {CG_SLOT_UNIFIED, "cpu.stat", "usage_usec", STAT(cpu_usec), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "user_usec", STAT(cpu_user_usec), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "system_usec", STAT(cpu_system_usec), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "nr_periods", STAT(cpu_nr_periods), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "nr_throttled", STAT(cpu_nr_throttled), 1},
        {CG_SLOT_UNIFIED, "cpu.stat", "throttled_usec", STAT(cpu_throttled_usec), 1},
        {CG_SLOT_UNIFIED, "memory.current", NULL, STAT(memory_usage_bytes), 1},
        {CG_SLOT_UNIFIED, "memory.current", NULL, STAT(memory_peak_bytes), 1},
        {CG_SLOT_UNIFIED, "memory.peak", NULL, STAT(memory_peak_bytes), 1},
        {CG_SLOT_UNIFIED, "memory.max", NULL, STAT(memory_limit_bytes), 1},
        {CG_SLOT_UNIFIED, "memory.events", "max", STAT(memory_failcnt), 1},
        /* memory.events counts the subtree (local events are in .local). */
        {CG_SLOT_UNIFIED, "memory.events", "oom_kill", STAT(oom_kills), 1},
        {CG_SLOT_UNIFIED, "pids.events", "max", STAT(pids_max_hits), 1},
        {CG_SLOT_UNIFIED, "pids.current", NULL, STAT(pids_current), 1},
        {CG_SLOT_UNIFIED, "pids.max", NULL, STAT(pids_limit), 1},
};

static int read_row(const struct cgroup *cg, const struct stat_row *row, uint64_t *ret,
                    psrun_error *err)
{
        const char *dir = cg->dir[row->slot].path;
        if (!dir)
                return -ENOENT;
        int r = row->key ? cg_read_key_u64(dir, row->file, row->key, ret)
                         : cg_read_u64(dir, row->file, ret);
        if (r == -ENOENT)
                return r;
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: reading %s/%s", dir, row->file);
        return 0;
}

static int read_rows(const struct cgroup *cg, const struct stat_row *rows, size_t n,
                     struct cgroup_stats *stats, psrun_error *err)
{
        for (size_t i = 0; i < n; i++) {
                uint64_t v;
                int r = read_row(cg, &rows[i], &v, err);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (rows[i].divisor > 1 && v != UINT64_MAX)
                        v /= rows[i].divisor;
                *(uint64_t *) ((char *) stats + rows[i].field) = v;
        }
        return 0;
}

int cg_v1_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err)
{
        return read_rows(cg, v1_rows, ARRAY_SIZE(v1_rows), stats, err);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int cg_v2_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err)
{
        int r = read_rows(cg, v2_rows, ARRAY_SIZE(v2_rows), stats, err);
        if (r < 0)
                return r;
        /* cgroup2 counts swap on its own; runc reports memory+swap, as v1's
         * memsw files do, so add memory in. No swap files: no swap accounting. */
        static const struct stat_row swap_rows[] = {
                {CG_SLOT_UNIFIED, "memory.swap.current", NULL, STAT(memsw_usage_bytes), 1},
                {CG_SLOT_UNIFIED, "memory.swap.max", NULL, STAT(memsw_limit_bytes), 1},
                {CG_SLOT_UNIFIED, "memory.swap.peak", NULL, STAT(memsw_max_usage_bytes), 1},
                {CG_SLOT_UNIFIED, "memory.swap.events", "max", STAT(memsw_failcnt), 1},
        };
        const uint64_t memory[] = {stats->memory_usage_bytes, stats->memory_limit_bytes,
                                   stats->memory_peak_bytes, 0};
        for (size_t i = 0; i < ARRAY_SIZE(swap_rows); i++) {
                uint64_t v;
                r = read_row(cg, &swap_rows[i], &v, err);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                *(uint64_t *) ((char *) stats + swap_rows[i].field) = add_sat(v, memory[i]);
        }
        return 0;
}

/* cgroup_read_usage: per driver, the files of the four fields a result
 * needs, each read once; a later row wins where both files exist, as in
 * the tables above. At most CG_USAGE_FILES rows. */
static const struct stat_row v1_usage[] = {
        {CG_SLOT_MEMORY, "memory.max_usage_in_bytes", NULL, STAT(memory_peak_bytes), 1},
        {CG_SLOT_MEMORY, "memory.failcnt", NULL, STAT(memory_failcnt), 1},
        {CG_SLOT_MEMORY, "memory.oom_control", "oom_kill", STAT(oom_kills), 1},
        {CG_SLOT_PIDS, "pids.events", "max", STAT(pids_max_hits), 1},
        {CG_SLOT_CPUACCT, "cpuacct.usage", NULL, STAT(cpu_usec), 1000},
        {CG_SLOT_UNIFIED, "cpu.stat", "usage_usec", STAT(cpu_usec), 1},
};

static const struct stat_row v2_usage[] = {
        {CG_SLOT_UNIFIED, "cpu.stat", "usage_usec", STAT(cpu_usec), 1},
        {CG_SLOT_UNIFIED, "memory.current", NULL, STAT(memory_peak_bytes), 1},
        {CG_SLOT_UNIFIED, "memory.peak", NULL, STAT(memory_peak_bytes), 1},
        {CG_SLOT_UNIFIED, "memory.events", "max", STAT(memory_failcnt), 1},
        {CG_SLOT_UNIFIED, "memory.events", "oom_kill", STAT(oom_kills), 1},
        {CG_SLOT_UNIFIED, "pids.events", "max", STAT(pids_max_hits), 1},
};

_Static_assert(ARRAY_SIZE(v1_usage) <= CG_USAGE_FILES && ARRAY_SIZE(v2_usage) <= CG_USAGE_FILES,
               "CG_USAGE_FILES");

static const struct stat_row *usage_rows(const struct cgroup *cg, size_t *n)
{
        bool v2 = cg->ops == &cgroup_v2_ops;
        *n = v2 ? ARRAY_SIZE(v2_usage) : ARRAY_SIZE(v1_usage);
        return v2 ? v2_usage : v1_usage;
}

/* An fd, -2 for a file (or hierarchy) that is not there, -1 on failure. */
static int open_in(const char *dir, const char *file)
{
        if (!dir)
                return -2;
        _cleanup_free_ char *p = cg_path_join(dir, file);
        if (!p)
                return -1;
        int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd >= 0 ? fd : errno == ENOENT ? -2 : -1;
}

int cgroup_open_usage(struct cgroup *cg)
{
        size_t n;
        const struct stat_row *rows = usage_rows(cg, &n);
        for (size_t i = 0; i < n; i++)
                if (cg->usage_fd[i] == -1)
                        cg->usage_fd[i] = open_in(cg->dir[rows[i].slot].path, rows[i].file);
        if (cg->events_fd == -1)
                cg->events_fd = open_in(cg->dir[CG_SLOT_UNIFIED].path, "cgroup.events");
        return 0;
}

void cg_close_usage(struct cgroup *cg)
{
        for (int i = 0; i < CG_USAGE_FILES; i++) {
                if (cg->usage_fd[i] >= 0)
                        close(cg->usage_fd[i]);
                cg->usage_fd[i] = -1;
        }
        if (cg->events_fd >= 0)
                close(cg->events_fd);
        cg->events_fd = -1;
}

int cgroup_read_usage(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err)
{
        if (!cg || !stats)
                return psrun_error_set(err, EINVAL, "cgroup: read usage: invalid arguments");
        *stats = (struct cgroup_stats){0};
        (void) cgroup_open_usage(cg);
        size_t n;
        const struct stat_row *rows = usage_rows(cg, &n);
        for (size_t i = 0; i < n; i++) {
                if (cg->usage_fd[i] < 0)
                        continue;
                char buf[1024];
                ssize_t len = pread(cg->usage_fd[i], buf, sizeof(buf) - 1, 0);
                uint64_t v = 0;
                int r = len < 0 ? -errno : 0;
                if (r >= 0) {
                        buf[len] = '\0';
                        r = cg_parse_u64(buf, rows[i].key, &v);
                }
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: reading %s/%s",
                                                 cg->dir[rows[i].slot].path, rows[i].file);
                if (rows[i].divisor > 1 && v != UINT64_MAX)
                        v /= rows[i].divisor;
                *(uint64_t *) ((char *) stats + rows[i].field) = v;
        }
        return 0;
}

int cgroup_populated(struct cgroup *cg)
{
        if (!cg)
                return -EINVAL;
        if (cg->events_fd == -1)
                cg->events_fd = open_in(cg->dir[CG_SLOT_UNIFIED].path, "cgroup.events");
        if (cg->events_fd < 0)
                return -EOPNOTSUPP;
        char buf[512];
        ssize_t len = pread(cg->events_fd, buf, sizeof(buf) - 1, 0);
        if (len < 0)
                return -errno;
        buf[len] = '\0';
        uint64_t v;
        int r = cg_parse_u64(buf, "populated", &v);
        return r < 0 ? r : v != 0;
}

int cgroup_memory_fds(const struct cgroup *cg, int *usage_fd, int *limit_fd)
{
        bool v2 = cg->ops == &cgroup_v2_ops;
        const char *dir = cg->dir[v2 ? CG_SLOT_UNIFIED : CG_SLOT_MEMORY].path;
        if (!dir)
                return -EOPNOTSUPP;
        _cleanup_free_ char *usage =
                cg_path_join(dir, v2 ? "memory.current" : "memory.usage_in_bytes");
        _cleanup_free_ char *limit = cg_path_join(dir, v2 ? "memory.max" : "memory.limit_in_bytes");
        if (!usage || !limit)
                return -ENOMEM;
        _cleanup_close_ int u = open(usage, O_RDONLY | O_CLOEXEC);
        if (u < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        int l = open(limit, O_RDONLY | O_CLOEXEC);
        if (l < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        *usage_fd = TAKE_FD(u);
        *limit_fd = l;
        return 0;
}

int cgroup_read_fd_u64(int fd, uint64_t *ret)
{
        char buf[64];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return cg_parse_u64(buf, NULL, ret);
}
