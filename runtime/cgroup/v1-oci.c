/* SPDX-License-Identifier: MIT */
/*
 * OCI linux.resources on cgroup v1: each controller in its own hierarchy.
 * Plain "value into a file" fields are one table; what needs an order or a
 * look at the current values (memory vs memory+swap, block devices, huge
 * pages, devices) has a function of its own.
 *
 * Not applied: memory.kernel (the kernel deprecated kmem limits, runc ignores
 * them too), memory.useHierarchy (always on since 5.x), rdma (not parsed).
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"
#include "runtime/cgroup/resources.h"

#define F "linux.resources."
#define ROW(group, type, json, member, kind_, slot_, file_, ...)                                   \
        {                                                                                          \
                F #group "." json, offsetof(struct oci_resources, group), offsetof(type, member),  \
                        kind_, .slot = slot_, .file = file_, __VA_ARGS__                           \
        }

static const struct cg_res_file v1_files[] = {
        ROW(network, struct oci_network, "classID", class_id, CG_RES_U64, CG_SLOT_NET_CLS,
            "net_cls.classid"),
        ROW(cpu, struct oci_cpu, "cpus", cpus, CG_RES_STR, CG_SLOT_CPUSET, "cpuset.cpus"),
        ROW(cpu, struct oci_cpu, "mems", mems, CG_RES_STR, CG_SLOT_CPUSET, "cpuset.mems"),
        ROW(memory, struct oci_memory, "reservation", reservation, CG_RES_I64, CG_SLOT_MEMORY,
            "memory.soft_limit_in_bytes"),
        ROW(memory, struct oci_memory, "swappiness", swappiness, CG_RES_U64, CG_SLOT_MEMORY,
            "memory.swappiness", .zero_is_value = true),
        ROW(memory, struct oci_memory, "disableOOMKiller", disable_oom_killer, CG_RES_BOOL,
            CG_SLOT_MEMORY, "memory.oom_control"),
        ROW(memory, struct oci_memory, "kernelTCP", kernel_tcp, CG_RES_I64, CG_SLOT_MEMORY,
            "memory.kmem.tcp.limit_in_bytes"),
        ROW(cpu, struct oci_cpu, "shares", shares, CG_RES_U64, CG_SLOT_CPU, "cpu.shares"),
        ROW(cpu, struct oci_cpu, "period", period, CG_RES_U64, CG_SLOT_CPU, "cpu.cfs_period_us",
            .reorder = true),
        ROW(cpu, struct oci_cpu, "quota", quota, CG_RES_I64, CG_SLOT_CPU, "cpu.cfs_quota_us",
            .reorder = true),
        ROW(cpu, struct oci_cpu, "burst", burst, CG_RES_U64, CG_SLOT_CPU, "cpu.cfs_burst_us",
            .reorder = true),
        ROW(cpu, struct oci_cpu, "realtimePeriod", realtime_period, CG_RES_U64, CG_SLOT_CPU,
            "cpu.rt_period_us", .reorder = true),
        ROW(cpu, struct oci_cpu, "realtimeRuntime", realtime_runtime, CG_RES_I64, CG_SLOT_CPU,
            "cpu.rt_runtime_us", .reorder = true),
        ROW(cpu, struct oci_cpu, "idle", idle, CG_RES_I64, CG_SLOT_CPU, "cpu.idle",
            .zero_is_value = true),
        ROW(pids, struct oci_pids, "limit", limit, CG_RES_I64_MAX, CG_SLOT_PIDS, "pids.max"),
};

static int write_i64(const char *field, const char *dir, const char *file, int64_t v,
                     psrun_error *err)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRId64, v);
        return cg_res_write(field, dir, file, buf, err);
}

/*
 * memory.limit_in_bytes and memory.memsw.limit_in_bytes (memory+swap, as
 * OCI's swap is) bound each other: the kernel refuses a memory limit above
 * memsw and a memsw below the memory limit. So, as runc does: when both are
 * set and memsw goes up (or to unlimited), memsw first; otherwise memory
 * first.
 */
static int v1_memory(struct cgroup *cg, const struct oci_memory *m, psrun_error *err)
{
        const char *dir;
        int64_t limit = m->limit.set ? m->limit.value : 0;
        int64_t swap = m->swap.set ? m->swap.value : 0;
        int r;

        if (!limit && !swap)
                return 0;
        r = cg_res_dir(cg, CG_SLOT_MEMORY, F "memory", &dir, err);
        if (r < 0)
                return r;
        /* Memory unlimited and swap not given: both unlimited (runc). */
        if (limit == -1 && !m->swap.set)
                swap = -1;
        if (m->check_before_update.set && m->check_before_update.value && limit > 0) {
                uint64_t usage;
                r = cg_read_u64(dir, "memory.usage_in_bytes", &usage);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 F "memory.limit: read "
                                                   "memory.usage_in_bytes");
                if ((uint64_t) limit < usage)
                        return psrun_error_set(err, EBUSY,
                                               F "memory.limit: %" PRId64 " is below the "
                                                 "current usage %" PRIu64 " (checkBeforeUpdate)",
                                               limit, usage);
        }
        bool memsw = cg_file_exists(dir, "memory.memsw.limit_in_bytes");
        if (!memsw && swap != 0 && swap != -1) {
                /* Without swap accounting nothing limits swap: only "no swap"
                 * on a host without swap still holds. */
                if (swap > limit || cg_host_has_swap())
                        return psrun_error_set(err, EOPNOTSUPP,
                                               F "memory.swap: this host has no swap accounting "
                                                 "(no memory.memsw.limit_in_bytes), so swap "
                                                 "cannot be limited; boot with swapaccount=1, "
                                                 "or set swap to -1 or (without host swap) to "
                                                 "memory.limit");
                swap = 0;
        }
        if (!memsw && swap == -1)
                swap = 0;
        if (limit && swap) {
                uint64_t cur;
                r = cg_read_u64(dir, "memory.limit_in_bytes", &cur);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 F "memory.limit: read "
                                                   "memory.limit_in_bytes");
                if (swap == -1 || cur < (uint64_t) swap) {
                        r = write_i64(F "memory.swap", dir, "memory.memsw.limit_in_bytes", swap,
                                      err);
                        if (r < 0)
                                return r;
                        return write_i64(F "memory.limit", dir, "memory.limit_in_bytes", limit,
                                         err);
                }
        }
        if (limit &&
            (r = write_i64(F "memory.limit", dir, "memory.limit_in_bytes", limit, err)) < 0)
                return r;
        if (swap)
                return write_i64(F "memory.swap", dir, "memory.memsw.limit_in_bytes", swap, err);
        return 0;
}

/* blkio.weight went away with CFQ (5.0); BFQ has blkio.bfq.weight, same range. */
static const char *weight_file(const char *dir, bool device)
{
        if (device)
                return cg_file_exists(dir, "blkio.weight_device") ? "blkio.weight_device"
                                                                  : "blkio.bfq.weight_device";
        return cg_file_exists(dir, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight";
}

static int v1_block_io(struct cgroup *cg, const struct oci_block_io *b, psrun_error *err)
{
        const char *dir;
        char field[96], value[64];
        int r = cg_res_dir(cg, CG_SLOT_BLKIO, F "blockIO", &dir, err);
        if (r < 0)
                return r;
        if (b->weight.set && b->weight.value) { /* 0: not given (Docker sends it) */
                snprintf(value, sizeof(value), "%" PRIu64, b->weight.value);
                r = cg_res_write(F "blockIO.weight", dir, weight_file(dir, false), value, err);
                if (r < 0)
                        return r;
        }
        if (b->leaf_weight.set && b->leaf_weight.value) {
                snprintf(value, sizeof(value), "%" PRIu64, b->leaf_weight.value);
                r = cg_res_write(F "blockIO.leafWeight", dir, "blkio.leaf_weight", value, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < b->n_weight_device; i++) {
                const struct oci_weight_device *d = &b->weight_device[i];
                snprintf(field, sizeof(field), F "blockIO.weightDevice[%zu]", i);
                if (d->weight.set) {
                        snprintf(value, sizeof(value), "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
                                 d->minor, d->weight.value);
                        r = cg_res_write(field, dir, weight_file(dir, true), value, err);
                        if (r < 0)
                                return r;
                }
                if (d->leaf_weight.set) {
                        snprintf(value, sizeof(value), "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
                                 d->minor, d->leaf_weight.value);
                        r = cg_res_write(field, dir, "blkio.leaf_weight_device", value, err);
                        if (r < 0)
                                return r;
                }
        }
        const struct {
                const char *json, *file;
                const struct oci_throttle_device *list;
                size_t n;
        } throttles[] = {
                {"throttleReadBpsDevice", "blkio.throttle.read_bps_device", b->throttle_read_bps,
                 b->n_throttle_read_bps},
                {"throttleWriteBpsDevice", "blkio.throttle.write_bps_device", b->throttle_write_bps,
                 b->n_throttle_write_bps},
                {"throttleReadIOPSDevice", "blkio.throttle.read_iops_device", b->throttle_read_iops,
                 b->n_throttle_read_iops},
                {"throttleWriteIOPSDevice", "blkio.throttle.write_iops_device",
                 b->throttle_write_iops, b->n_throttle_write_iops},
        };
        for (size_t t = 0; t < ARRAY_SIZE(throttles); t++) {
                for (size_t i = 0; i < throttles[t].n; i++) {
                        const struct oci_throttle_device *d = &throttles[t].list[i];
                        snprintf(field, sizeof(field), F "blockIO.%s[%zu]", throttles[t].json, i);
                        snprintf(value, sizeof(value), "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
                                 d->minor, d->rate);
                        r = cg_res_write(field, dir, throttles[t].file, value, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/*
 * hugetlb.<size>.limit_in_bytes in a v1 hugetlb hierarchy. A hybrid host may
 * have given hugetlb to its cgroup2 hierarchy instead: then the cgroup2
 * directory's hugetlb.<size>.max, when the controller reaches it.
 */
static int v1_hugetlb(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        const char *v1 = cg->dir[CG_SLOT_HUGETLB].path;
        const char *unified = cg->dir[CG_SLOT_UNIFIED].path;
        char controllers[512] = "";
        if (!v1 && unified)
                cg_read(unified, "cgroup.controllers", controllers, sizeof(controllers));
        bool v2 = !v1 && unified && strstr(controllers, "hugetlb");
        if (!v1 && !v2)
                return psrun_error_set(err, EOPNOTSUPP,
                                       F "hugepageLimits: this host has no hugetlb controller "
                                         "(no v1 hugetlb hierarchy is mounted, and the cgroup2 "
                                         "hierarchy does not give hugetlb to %s)",
                                       unified ? unified : cg->name);
        const char *dir = v1 ? v1 : unified;
        for (size_t i = 0; i < res->n_hugepage_limits; i++) {
                const struct oci_hugepage_limit *h = &res->hugepage_limits[i];
                char field[64], file[96], rsvd[96], value[32];
                snprintf(field, sizeof(field), F "hugepageLimits[%zu]", i);
                snprintf(file, sizeof(file), "hugetlb.%s.%s", h->page_size,
                         v1 ? "limit_in_bytes" : "max");
                snprintf(rsvd, sizeof(rsvd), "hugetlb.%s.rsvd.%s", h->page_size,
                         v1 ? "limit_in_bytes" : "max");
                if (!cg_file_exists(dir, file))
                        return psrun_error_set(err, EOPNOTSUPP,
                                               "%s: this host has no %s huge pages (no %s)", field,
                                               h->page_size, file);
                snprintf(value, sizeof(value), "%" PRIu64, h->limit);
                int r = cg_res_write(field, dir, file, value, err);
                /* The reservation limit (5.7+) keeps a mapping from reserving
                 * more than the limit and faulting later; runc sets both. */
                if (r == 0 && cg_file_exists(dir, rsvd))
                        r = cg_res_write(field, dir, rsvd, value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* net_prio.ifpriomap takes one "interface priority" line per write. */
static int v1_net_prio(struct cgroup *cg, const struct oci_network *n, psrun_error *err)
{
        const char *dir;
        int r = cg_res_dir(cg, CG_SLOT_NET_PRIO, F "network.priorities", &dir, err);
        for (size_t i = 0; r >= 0 && i < n->n_priorities; i++) {
                char line[128];
                snprintf(line, sizeof(line), "%s %" PRIu32, n->priorities[i].name,
                         n->priorities[i].priority);
                r = cg_res_write(F "network.priorities", dir, "net_prio.ifpriomap", line, err);
        }
        return r;
}

int cg_v1_apply_resources(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        int r;
        if (res->n_unified > 0)
                return psrun_error_set(err, EOPNOTSUPP,
                                       F "unified: needs cgroup v2, and this host's cgroups are "
                                         "v1");
        if (res->n_devices > 0) {
                const char *dir;
                r = cg_res_dir(cg, CG_SLOT_DEVICES, F "devices", &dir, err);
                if (r < 0 || (r = cg_v1_apply_devices(dir, res->devices, res->n_devices, err)) < 0)
                        return r;
        }
        if (res->memory && (r = v1_memory(cg, res->memory, err)) < 0)
                return r;
        r = cg_apply_res_table(cg, res, v1_files, ARRAY_SIZE(v1_files), cg_res_dir, err);
        if (r < 0)
                return r;
        if (res->block_io && (r = v1_block_io(cg, res->block_io, err)) < 0)
                return r;
        if (res->n_hugepage_limits > 0 && (r = v1_hugetlb(cg, res, err)) < 0)
                return r;
        if (res->network && res->network->n_priorities > 0 &&
            (r = v1_net_prio(cg, res->network, err)) < 0)
                return r;
        return 0;
}
