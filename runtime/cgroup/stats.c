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
#include <stdint.h>

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
