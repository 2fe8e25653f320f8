/* SPDX-License-Identifier: MIT */
/*
 * The cgroup2 driver: one directory holds limits, membership and accounting
 * (Documentation/admin-guide/cgroup-v2.rst). Controllers reach a cgroup only
 * when its parent lists them in cgroup.subtree_control, and a non-root parent
 * may do that only while it has no processes of its own ("no internal
 * processes"), which is why a launcher sitting in its own cgroup may need
 * --cgroup-parent.
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/clock.h"

#define CPU_PERIOD_US 100000
/* Below ~1 ms per period the scheduler's own overhead dominates. */
#define CPU_QUOTA_MIN_US 1000

/* Does the space-separated list (cgroup.controllers, subtree_control) hold word? */
static bool word_in(const char *list, const char *word)
{
        size_t wlen = strlen(word);
        for (const char *p = list; *p;) {
                p += strspn(p, " \n");
                size_t len = strcspn(p, " \n");
                if (len == wlen && strncmp(p, word, wlen) == 0)
                        return true;
                p += len;
        }
        return false;
}

static int v2_find_parents(const struct cg_host *host, const char *parent,
                           const struct cgroup_limits *limits, struct cg_dir out[CG_SLOT_MAX],
                           psrun_error *err)
{
        int r = cg_resolve_parent(host, NULL, parent, &out[CG_SLOT_UNIFIED], err);
        if (r == -ENODEV)
                return psrun_error_set(err, ENODEV,
                                       "cgroup: /sys/fs/cgroup is a cgroup2 filesystem but "
                                       "/proc/self/mountinfo lists no cgroup2 mount");
        if (r == -ENOENT && !limits)
                return 0;
        return r;
}

static int v2_prepare_parents(struct cg_dir parents[CG_SLOT_MAX],
                              const struct cgroup_limits *limits, psrun_error *err)
{
        const char *dir = parents[CG_SLOT_UNIFIED].path;
        const struct {
                const char *name;
                bool needed;
                bool accounting;
        } wanted[] = {
                {"memory", limits->memory_bytes > 0, true},
                {"pids", limits->pids_max > 0, true},
                {"cpu", limits->cpus > 0, false},
        };
        char available[512] = "", enabled[512] = "";
        ssize_t n = cg_read(dir, "cgroup.controllers", available, sizeof(available));
        if (n < 0 && n != -ENOENT)
                return psrun_error_errno(err, (int) n, "cgroup: reading %s/cgroup.controllers",
                                         dir);
        n = cg_read(dir, "cgroup.subtree_control", enabled, sizeof(enabled));
        if (n < 0 && n != -ENOENT)
                return psrun_error_errno(err, (int) n, "cgroup: reading %s/cgroup.subtree_control",
                                         dir);
        available[strcspn(available, "\n")] = '\0';

        for (size_t i = 0; i < ARRAY_SIZE(wanted); i++) {
                const char *name = wanted[i].name;
                if (word_in(enabled, name) || (!wanted[i].needed && !wanted[i].accounting))
                        continue;
                /* memory and pids are enabled when possible even without a
                 * limit, for accounting (memory.peak, memory.events,
                 * pids.events); cpu is not: cpu.stat's usage_usec needs no
                 * controller, and enabling it changes how siblings share CPU. */
                if (!word_in(available, name)) {
                        if (!wanted[i].needed)
                                continue;
                        return psrun_error_set(err, EOPNOTSUPP,
                                               "cgroup: %s controller not available: %s does "
                                               "not offer it (cgroup.controllers: \"%s\"); it "
                                               "must be enabled in the parent's "
                                               "cgroup.subtree_control",
                                               name, dir, available);
                }
                int r = cg_write(dir, "cgroup.subtree_control", "+%s", name);
                if (r >= 0 || !wanted[i].needed)
                        continue;
                if (r == -EBUSY)
                        return psrun_error_errno(err, r,
                                                 "cgroup: cannot enable the %s controller in %s: "
                                                 "that cgroup has processes of its own, and cgroup "
                                                 "v2 gives controllers to children only of cgroups "
                                                 "without member processes; pass --cgroup-parent "
                                                 "with an empty (delegated) cgroup",
                                                 name, dir);
                return psrun_error_errno(err, r, "cgroup: enabling the %s controller in %s", name,
                                         dir);
        }
        return 0;
}

static int v2_apply_limits(struct cgroup *cg, const struct cgroup_limits *limits, psrun_error *err)
{
        const char *dir = cg->dir[CG_SLOT_UNIFIED].path;
        int r;

        if (limits->memory_bytes > 0) {
                r = cg_write(dir, "memory.max", "%" PRIu64, limits->memory_bytes);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: setting memory.max to %" PRIu64 " in %s",
                                                 limits->memory_bytes, dir);
        }
        /* swap.max is independent of memory.max, so "no swap" holds even
         * without a memory limit. Absent without swap accounting. */
        if (cg_file_exists(dir, "memory.swap.max")) {
                r = cg_write(dir, "memory.swap.max", "0");
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: setting memory.swap.max in %s",
                                                 dir);
        } else if (limits->memory_bytes > 0 && cg_host_has_swap()) {
                return cg_no_swap_limit(err, dir);
        }
        if (limits->pids_max > 0) {
                r = cg_write(dir, "pids.max", "%" PRIu64, limits->pids_max);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: setting pids.max to %" PRIu64 " in %s",
                                                 limits->pids_max, dir);
        }
        if (limits->cpus > 0) {
                double q = limits->cpus * CPU_PERIOD_US;
                uint64_t quota = q < CPU_QUOTA_MIN_US ? CPU_QUOTA_MIN_US : (uint64_t) (q + 0.5);
                r = cg_write(dir, "cpu.max", "%" PRIu64 " %d", quota, CPU_PERIOD_US);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: setting cpu.max to \"%" PRIu64
                                                 " %d\" (%g cpus) in %s",
                                                 quota, CPU_PERIOD_US, limits->cpus, dir);
        }
        return 0;
}

static int v2_kill(struct cgroup *cg, psrun_error *err)
{
        const char *dir = cg->dir[CG_SLOT_UNIFIED].path;
        uint64_t deadline = monotonic_ms() + CG_KILL_TIMEOUT_MS;
        if (!dir)
                return 0;

        /* cgroup.kill (5.14+) kills the subtree atomically, forks in flight
         * included. */
        if (cg_file_exists(dir, "cgroup.kill")) {
                int r = cg_write(dir, "cgroup.kill", "1");
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: writing cgroup.kill in %s", dir);
                return cg_wait_unpopulated(dir, deadline, err);
        }
        /* Older kernels: freeze (5.2+) so nothing forks while the signal loop
         * runs; the v2 freezer lets SIGKILL through to frozen tasks. */
        bool frozen = cg_write(dir, "cgroup.freeze", "1") == 0;
        int r = cg_sigkill_until_empty(cg, deadline, err);
        if (frozen)
                cg_write(dir, "cgroup.freeze", "0");
        if (r < 0)
                return r;
        return cg_wait_unpopulated(dir, deadline, err);
}

const struct cgroup_ops cgroup_v2_ops = {
        .name = "v2",
        .find_parents = v2_find_parents,
        .prepare_parents = v2_prepare_parents,
        .apply_limits = v2_apply_limits,
        .kill = v2_kill,
        .read_stats = cg_v2_read_stats,
        .apply_resources = cg_v2_apply_resources,
};
