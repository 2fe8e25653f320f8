/* SPDX-License-Identifier: MIT */
/*
 * The v1/hybrid driver. Limits live in the per-controller v1 hierarchies
 * (memory, pids, cpu; cpuacct for CPU time when there is nothing better).
 * When a cgroup2 hierarchy is mounted next to them (hybrid, usually at
 * /sys/fs/cgroup/unified) a directory is made there too, even though it owns
 * no controllers: it gives CLONE_INTO_CGROUP a target, cgroup.kill an atomic
 * kill of the whole tree, cgroup.events a way to wait for it, and cpu.stat
 * CPU time. Without it, the freezer hierarchy keeps the tree still while it
 * is killed by signal.
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/cleanup.h"
#include "common/clock.h"

#define CFS_PERIOD_US 100000
/* Below ~1 ms per period the scheduler's own overhead dominates. */
#define CFS_QUOTA_MIN_US 1000

static const struct {
        enum cg_slot slot;
        const char *controller;
} v1_hierarchies[] = {
        {CG_SLOT_MEMORY, "memory"},   {CG_SLOT_PIDS, "pids"},       {CG_SLOT_CPU, "cpu"},
        {CG_SLOT_CPUACCT, "cpuacct"}, {CG_SLOT_FREEZER, "freezer"},
};

static bool limit_needs(const struct cgroup_limits *limits, enum cg_slot slot)
{
        if (!limits)
                return false;
        switch (slot) {
        case CG_SLOT_MEMORY:
                return limits->memory_bytes > 0;
        case CG_SLOT_PIDS:
                return limits->pids_max > 0;
        case CG_SLOT_CPU:
                return limits->cpus > 0;
        default:
                return false;
        }
}

/* Each directory costs a mkdir, an rmdir and a cgroup.procs write per
 * process, so only the ones with a job are made: memory and pids always (for
 * peak, OOM and fork-refusal accounting), cpu for a limit, cpuacct and
 * freezer only when there is no cgroup2 directory to count CPU time and kill
 * atomically. */
static bool v1_slot_wanted(enum cg_slot slot, const struct cgroup_limits *limits, bool have_unified)
{
        switch (slot) {
        case CG_SLOT_CPU:
                return limits->cpus > 0;
        case CG_SLOT_CPUACCT:
        case CG_SLOT_FREEZER:
                return !have_unified;
        default:
                return true;
        }
}

static int v1_find_parents(const struct cg_host *host, const char *parent,
                           const struct cgroup_limits *limits, struct cg_dir out[CG_SLOT_MAX],
                           psrun_error *err)
{
        /* gc (limits == NULL) looks wherever something may have been left. */
        bool lenient = limits == NULL;
        int r;

        if (!cg_ignore_unified()) {
                r = cg_resolve_parent(host, NULL, parent, &out[CG_SLOT_UNIFIED], err);
                if (r < 0 && r != -ENODEV && !(lenient && r == -ENOENT))
                        return r;
        }
        for (size_t i = 0; i < ARRAY_SIZE(v1_hierarchies); i++) {
                enum cg_slot slot = v1_hierarchies[i].slot;
                const char *controller = v1_hierarchies[i].controller;
                if (!lenient && !v1_slot_wanted(slot, limits, out[CG_SLOT_UNIFIED].path != NULL))
                        continue;
                r = cg_resolve_parent(host, controller, parent, &out[slot], err);
                if (r == -ENODEV) {
                        /* Fail closed: a limit that was asked for but can't be
                         * enforced is an error, not a warning. */
                        if (limit_needs(limits, slot))
                                return psrun_error_set(err, EOPNOTSUPP,
                                                       "cgroup: %s controller not available: no "
                                                       "cgroup v1 hierarchy with it is mounted",
                                                       controller);
                        continue;
                }
                if (r == -ENOENT && lenient)
                        continue;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int v1_apply_limits(struct cgroup *cg, const struct cgroup_limits *limits, psrun_error *err)
{
        const char *memory = cg->dir[CG_SLOT_MEMORY].path;
        const char *pids = cg->dir[CG_SLOT_PIDS].path;
        const char *cpu = cg->dir[CG_SLOT_CPU].path;
        int r;

        /* find_parents already checked this for a new cgroup; a child of an
         * existing one has only the hierarchies its parent has. */
        for (enum cg_slot s = CG_SLOT_MEMORY; s <= CG_SLOT_CPU; s++)
                if (limit_needs(limits, s) && !cg->dir[s].path)
                        return psrun_error_set(err, EOPNOTSUPP,
                                               "cgroup: %s controller not available: no %s "
                                               "directory to put %s in",
                                               cg_slot_name(s), cg_slot_name(s), cg->name);

        if (memory && limits->memory_bytes > 0) {
                r = cg_write(memory, "memory.limit_in_bytes", "%" PRIu64, limits->memory_bytes);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: setting memory.limit_in_bytes to "
                                                 "%" PRIu64 " in %s",
                                                 limits->memory_bytes, memory);
                /* memsw is memory+swap: equal to the memory limit means no swap.
                 * It must be written after memory.limit_in_bytes, which may never
                 * exceed it. It exists only with swap accounting enabled. */
                if (cg_file_exists(memory, "memory.memsw.limit_in_bytes")) {
                        r = cg_write(memory, "memory.memsw.limit_in_bytes", "%" PRIu64,
                                     limits->memory_bytes);
                        if (r < 0)
                                return psrun_error_errno(err, r,
                                                         "cgroup: setting "
                                                         "memory.memsw.limit_in_bytes to "
                                                         "%" PRIu64 " in %s",
                                                         limits->memory_bytes, memory);
                } else if (cg_host_has_swap()) {
                        /* The policy says no swap; swappiness alone can't
                         * promise that. Fail closed. */
                        return cg_no_swap_limit(err, memory);
                }
        }
        if (memory) {
                /* Without memsw (or without a memory limit, which memsw can't
                 * go below) swappiness 0 is the closest v1 has to "no swap". */
                r = cg_write(memory, "memory.swappiness", "0");
                if (r < 0 && r != -ENOENT)
                        return psrun_error_errno(err, r, "cgroup: setting memory.swappiness in %s",
                                                 memory);
        }
        if (pids && limits->pids_max > 0) {
                r = cg_write(pids, "pids.max", "%" PRIu64, limits->pids_max);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: setting pids.max to %" PRIu64 " in %s",
                                                 limits->pids_max, pids);
        }
        if (cpu && limits->cpus > 0) {
                double q = limits->cpus * CFS_PERIOD_US;
                uint64_t quota = q < CFS_QUOTA_MIN_US ? CFS_QUOTA_MIN_US : (uint64_t) (q + 0.5);
                r = cg_write(cpu, "cpu.cfs_period_us", "%d", CFS_PERIOD_US);
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: setting cpu.cfs_period_us in %s",
                                                 cpu);
                r = cg_write(cpu, "cpu.cfs_quota_us", "%" PRIu64, quota);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: setting cpu.cfs_quota_us to %" PRIu64
                                                 " (%g cpus) in %s",
                                                 quota, limits->cpus, cpu);
        }
        return 0;
}

static void sleep_1ms(void)
{
        struct timespec ts = {.tv_nsec = 1000000};
        nanosleep(&ts, NULL);
}

/*
 * Freeze the tree, SIGKILL everything in it, thaw: a frozen process can't
 * fork, so no child slips out between reading cgroup.procs and the kill.
 * The signals are delivered when the tree thaws.
 */
static void freeze_and_kill(const char *freezer, uint64_t deadline_ms)
{
        if (cg_write(freezer, "freezer.state", "FROZEN") < 0)
                return;
        /* A task in uninterruptible sleep keeps the group FREEZING; don't
         * wait for it long, the signal loop that follows copes anyway. */
        uint64_t give_up = monotonic_ms() + 200;
        if (give_up > deadline_ms)
                give_up = deadline_ms;
        char state[64];
        while (cg_read(freezer, "freezer.state", state, sizeof(state)) > 0 &&
               strncmp(state, "FROZEN", 6) != 0 && monotonic_ms() < give_up)
                sleep_1ms();
        cg_signal_tree(freezer, SIGKILL);
        cg_write(freezer, "freezer.state", "THAWED");
}

static int v1_kill(struct cgroup *cg, psrun_error *err)
{
        uint64_t deadline = monotonic_ms() + CG_KILL_TIMEOUT_MS;
        const char *unified = cg->dir[CG_SLOT_UNIFIED].path;
        const char *freezer = cg->dir[CG_SLOT_FREEZER].path;

        if (unified && cg_file_exists(unified, "cgroup.kill")) {
                int r = cg_write(unified, "cgroup.kill", "1");
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: writing cgroup.kill in %s",
                                                 unified);
                /* A task frozen by the v1 freezer (a paused container)
                 * sleeps through SIGKILL until it is thawed. */
                if (freezer)
                        cg_write(freezer, "freezer.state", "THAWED");
                r = cg_wait_unpopulated(unified, deadline, err);
                if (r < 0)
                        return r;
        } else if (freezer) {
                freeze_and_kill(freezer, deadline);
        }
        /* Whatever is still in a v1 hierarchy (everything, without cgroup.kill;
         * a process that never reached the cgroup2 directory, with it). */
        return cg_sigkill_until_empty(cg, deadline, err);
}

const struct cgroup_ops cgroup_v1_ops = {
        .name = "v1",
        .find_parents = v1_find_parents,
        .prepare_parents = NULL,
        .apply_limits = v1_apply_limits,
        .kill = v1_kill,
        .read_stats = cg_v1_read_stats,
        .apply_resources = cg_v1_apply_resources,
};
