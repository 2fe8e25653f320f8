/* SPDX-License-Identifier: MIT */
/*
 * OCI linux.resources on cgroup v2: one directory, the files of each
 * controller present only when the parent handed that controller down
 * (cgroup_create_at enables them). The spec speaks cgroup v1; values are
 * converted the way runc and crun do: memory+swap becomes swap.max, cpu
 * shares become cpu.weight, blkio weights io.weight, quota and period one
 * cpu.max. Devices are a BPF program (cgroup-devices.c).
 *
 * Ignored, as runc does: memory.swappiness, memory.disableOOMKiller (v2 has
 * neither), memory.kernel, memory.useHierarchy, blockIO leaf weights.
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

static const struct cg_res_file v2_files[] = {
        ROW(cpu, struct oci_cpu, "cpus", cpus, CG_RES_STR, CG_SLOT_CPUSET, "cpuset.cpus"),
        ROW(cpu, struct oci_cpu, "mems", mems, CG_RES_STR, CG_SLOT_CPUSET, "cpuset.mems"),
        ROW(memory, struct oci_memory, "reservation", reservation, CG_RES_I64_MAX, CG_SLOT_MEMORY,
            "memory.low"),
        ROW(cpu, struct oci_cpu, "shares", shares, CG_RES_SHARES, CG_SLOT_CPU, "cpu.weight"),
        ROW(cpu, struct oci_cpu, "idle", idle, CG_RES_I64, CG_SLOT_CPU, "cpu.idle",
            .zero_is_value = true),
        ROW(pids, struct oci_pids, "limit", limit, CG_RES_I64_MAX, CG_SLOT_PIDS, "pids.max"),
};

/* The cgroup2 name of the controller a slot stands for. */
static const char *v2_controller(enum cg_slot slot)
{
        return slot == CG_SLOT_BLKIO ? "io" : cg_slot_name(slot);
}

static bool has_word(const char *list, const char *word)
{
        size_t wlen = strlen(word);
        for (const char *p = list; *(p += strspn(p, " \n"));) {
                size_t len = strcspn(p, " \n");
                if (len == wlen && strncmp(p, word, len) == 0)
                        return true;
                p += len;
        }
        return false;
}

/* The cgroup's directory when its parent gave it the controller; else an
 * error telling a host without the controller from a parent that kept it. */
static int v2_dir_of(const struct cgroup *cg, enum cg_slot slot, const char *field,
                     const char **ret, psrun_error *err)
{
        const struct cg_dir *d = &cg->dir[CG_SLOT_UNIFIED];
        const char *ctrl = v2_controller(slot);
        char list[512] = "";
        if (!d->path)
                return psrun_error_set(err, EOPNOTSUPP, "%s: no cgroup2 directory", field);
        if (cg_read(d->path, "cgroup.controllers", list, sizeof(list)) >= 0 &&
            has_word(list, ctrl)) {
                *ret = d->path;
                return 0;
        }
        /* The hierarchy's root is the path without its hierarchy-relative part. */
        char root[4096] = "/sys/fs/cgroup";
        size_t lp = strlen(d->path), lr = strlen(d->rel);
        if (lp >= lr && strcmp(d->path + lp - lr, d->rel) == 0 && lp - lr < sizeof(root))
                snprintf(root, sizeof(root), "%.*s", (int) (lp - lr), d->path);
        list[0] = '\0';
        cg_read(root[0] ? root : "/", "cgroup.controllers", list, sizeof(list));
        if (!has_word(list, ctrl))
                return psrun_error_set(err, EOPNOTSUPP, "%s: this host has no %s controller", field,
                                       ctrl);
        return psrun_error_set(err, EOPNOTSUPP,
                               "%s: the %s controller is not enabled for %s (a parent's "
                               "cgroup.subtree_control does not hand it down)",
                               field, ctrl, d->path);
}

static void fmt_limit(char *buf, size_t size, int64_t v)
{
        if (v < 0)
                snprintf(buf, size, "max");
        else
                snprintf(buf, size, "%" PRId64, v);
}

/* OCI swap is memory+swap (v1's memsw); cgroup2 limits swap on its own. */
static int v2_memory(struct cgroup *cg, const struct oci_memory *m, psrun_error *err)
{
        const char *dir;
        char value[32];
        int r;
        if (m->kernel_tcp.set && m->kernel_tcp.value > 0)
                return psrun_error_set(err, EOPNOTSUPP,
                                       F "memory.kernelTCP: cgroup v2 has no separate TCP "
                                         "memory limit");
        if (!m->limit.set && !m->swap.set)
                return 0;
        r = v2_dir_of(cg, CG_SLOT_MEMORY, F "memory", &dir, err);
        if (r < 0)
                return r;
        int64_t limit = m->limit.set ? m->limit.value : 0;
        /* swap.max: -1 unlimited; 0 leaves it alone; unset with an
         * unlimited memory limit: unlimited too (runc). */
        bool set_swap = true;
        int64_t swap_max = -1;
        if (!m->swap.set || m->swap.value == 0) {
                set_swap = limit == -1;
        } else if (m->swap.value > 0) {
                if (limit <= 0)
                        return psrun_error_set(err, EINVAL,
                                               F "memory.swap: needs memory.limit as well (swap "
                                                 "counts memory+swap)");
                swap_max = m->swap.value - limit;
        }
        if (m->check_before_update.set && m->check_before_update.value && limit > 0) {
                uint64_t usage;
                r = cg_read_u64(dir, "memory.current", &usage);
                if (r < 0)
                        return psrun_error_errno(err, r, F "memory.limit: read memory.current");
                if ((uint64_t) limit < usage)
                        return psrun_error_set(err, EBUSY,
                                               F "memory.limit: %" PRId64 " is below the "
                                                 "current usage %" PRIu64 " (checkBeforeUpdate)",
                                               limit, usage);
        }
        if (set_swap && !cg_file_exists(dir, "memory.swap.max")) {
                /* No swap accounting: unlimited swap is what there is, and
                 * "no swap" holds only on a host without swap. */
                if (swap_max > 0 || (swap_max == 0 && cg_host_has_swap()))
                        return psrun_error_set(err, EOPNOTSUPP,
                                               F "memory.swap: this host has no swap accounting "
                                                 "(no memory.swap.max), so swap cannot be "
                                                 "limited; set swap to -1 or (without host swap) "
                                                 "to memory.limit");
                set_swap = false;
        }
        if (limit) {
                fmt_limit(value, sizeof(value), limit);
                r = cg_res_write(F "memory.limit", dir, "memory.max", value, err);
                if (r < 0)
                        return r;
        }
        if (set_swap) {
                fmt_limit(value, sizeof(value), swap_max);
                return cg_res_write(F "memory.swap", dir, "memory.swap.max", value, err);
        }
        return 0;
}

/* quota and period are one file, "$MAX $PERIOD"; a quota alone keeps the
 * period, a period alone keeps the quota. */
static int v2_cpu(struct cgroup *cg, const struct oci_cpu *c, psrun_error *err)
{
        const char *dir;
        char value[64], cur[64] = "max";
        int r;
        if (c->realtime_runtime.set || c->realtime_period.set)
                return psrun_error_set(
                        err, EOPNOTSUPP, F "cpu.%s: cgroup v2 has no real-time CPU limits",
                        c->realtime_runtime.set ? "realtimeRuntime" : "realtimePeriod");
        /* 0 is "not given", as in runc (Docker sends both as 0). */
        bool quota = c->quota.set && c->quota.value != 0;
        bool period = c->period.set && c->period.value != 0;
        if (!quota && !period && !c->burst.set)
                return 0;
        const char *field = quota ? F "cpu.quota" : F "cpu.period";
        r = v2_dir_of(cg, CG_SLOT_CPU, field, &dir, err);
        if (r < 0)
                return r;
        bool max = quota || period;
        if (quota && c->quota.value > 0)
                snprintf(cur, sizeof(cur), "%" PRId64, c->quota.value);
        else if (!quota && cg_read(dir, "cpu.max", cur, sizeof(cur)) >= 0)
                cur[strcspn(cur, " \n")] = '\0';
        if (period)
                snprintf(value, sizeof(value), "%s %" PRIu64, cur, c->period.value);
        else
                snprintf(value, sizeof(value), "%s", cur);
        char burst[32];
        snprintf(burst, sizeof(burst), "%" PRIu64, c->burst.set ? c->burst.value : 0);
        if (max) {
                r = cg_write_str(dir, "cpu.max", value);
                /* The kernel refuses a quota below the burst: lowering both
                 * needs the burst first. */
                if (r == -EINVAL && c->burst.set) {
                        r = cg_res_write(F "cpu.burst", dir, "cpu.max.burst", burst, err);
                        return r < 0 ? r : cg_res_write(field, dir, "cpu.max", value, err);
                }
                if (r < 0)
                        return psrun_error_errno(err, r, "%s: write cpu.max", field);
        }
        return c->burst.set ? cg_res_write(F "cpu.burst", dir, "cpu.max.burst", burst, err) : 0;
}

/* blkio.weight 10..1000 onto io.weight 1..10000 (runc's linear map);
 * io.bfq.weight takes the blkio range as it is. */
static uint64_t io_weight(uint64_t blkio, bool bfq)
{
        if (bfq)
                return blkio;
        if (blkio < 10)
                blkio = 10;
        uint64_t w = 1 + (blkio - 10) * 9999 / 990;
        return w > 10000 ? 10000 : w;
}

static int v2_block_io(struct cgroup *cg, const struct oci_block_io *b, psrun_error *err)
{
        const char *dir;
        char field[96], value[96];
        int r = v2_dir_of(cg, CG_SLOT_BLKIO, F "blockIO", &dir, err);
        if (r < 0)
                return r;
        bool bfq = cg_file_exists(dir, "io.bfq.weight");
        const char *wfile = bfq ? "io.bfq.weight" : "io.weight";
        if (b->weight.set && b->weight.value > 0) {
                snprintf(value, sizeof(value), "default %" PRIu64, io_weight(b->weight.value, bfq));
                r = cg_res_write(F "blockIO.weight", dir, wfile, value, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < b->n_weight_device; i++) {
                const struct oci_weight_device *d = &b->weight_device[i];
                if (!d->weight.set)
                        continue;
                snprintf(field, sizeof(field), F "blockIO.weightDevice[%zu]", i);
                snprintf(value, sizeof(value), "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
                         d->minor, io_weight(d->weight.value, bfq));
                r = cg_res_write(field, dir, wfile, value, err);
                if (r < 0)
                        return r;
        }
        const struct {
                const char *json, *key;
                const struct oci_throttle_device *list;
                size_t n;
        } throttles[] = {
                {"throttleReadBpsDevice", "rbps", b->throttle_read_bps, b->n_throttle_read_bps},
                {"throttleWriteBpsDevice", "wbps", b->throttle_write_bps, b->n_throttle_write_bps},
                {"throttleReadIOPSDevice", "riops", b->throttle_read_iops, b->n_throttle_read_iops},
                {"throttleWriteIOPSDevice", "wiops", b->throttle_write_iops,
                 b->n_throttle_write_iops},
        };
        for (size_t t = 0; t < ARRAY_SIZE(throttles); t++) {
                for (size_t i = 0; i < throttles[t].n; i++) {
                        const struct oci_throttle_device *d = &throttles[t].list[i];
                        char rate[24] = "max"; /* 0 lifts the limit, as in v1 */
                        if (d->rate > 0)
                                snprintf(rate, sizeof(rate), "%" PRIu64, d->rate);
                        snprintf(field, sizeof(field), F "blockIO.%s[%zu]", throttles[t].json, i);
                        snprintf(value, sizeof(value), "%" PRId64 ":%" PRId64 " %s=%s", d->major,
                                 d->minor, throttles[t].key, rate);
                        r = cg_res_write(field, dir, "io.max", value, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int v2_hugetlb(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        const char *dir;
        int r = v2_dir_of(cg, CG_SLOT_HUGETLB, F "hugepageLimits", &dir, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < res->n_hugepage_limits; i++) {
                const struct oci_hugepage_limit *h = &res->hugepage_limits[i];
                char field[64], file[96], rsvd[96], value[32];
                snprintf(field, sizeof(field), F "hugepageLimits[%zu]", i);
                snprintf(file, sizeof(file), "hugetlb.%s.max", h->page_size);
                snprintf(rsvd, sizeof(rsvd), "hugetlb.%s.rsvd.max", h->page_size);
                if (!cg_file_exists(dir, file))
                        return psrun_error_set(err, EOPNOTSUPP,
                                               "%s: this host has no %s huge pages (no %s)", field,
                                               h->page_size, file);
                snprintf(value, sizeof(value), "%" PRIu64, h->limit);
                r = cg_res_write(field, dir, file, value, err);
                if (r == 0 && cg_file_exists(dir, rsvd))
                        r = cg_res_write(field, dir, rsvd, value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* unified: file name -> content, written last so it overrides what the
 * fields above set. A name must stay a file of this directory. */
static int v2_unified(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        const char *dir = cg->dir[CG_SLOT_UNIFIED].path;
        for (size_t i = 0; i < res->n_unified; i++) {
                const char *key = res->unified[i].key;
                char field[320];
                snprintf(field, sizeof(field), F "unified.%s", key);
                if (!*key || strchr(key, '/') || strcmp(key, ".") == 0 || strcmp(key, "..") == 0)
                        return psrun_error_set(err, EINVAL,
                                               "%s: not a file name of the container's cgroup",
                                               field);
                int r = cg_write_str(dir, key, res->unified[i].value);
                if (r == -ENOENT) {
                        size_t len = strcspn(key, ".");
                        return psrun_error_set(err, EOPNOTSUPP,
                                               "%s: %s has no such file (is the %.*s controller "
                                               "enabled?)",
                                               field, dir, (int) len, key);
                }
                if (r < 0)
                        return psrun_error_errno(err, r, "%s: write %s", field, key);
        }
        return 0;
}

int cg_v2_apply_resources(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        const char *dir = cg->dir[CG_SLOT_UNIFIED].path;
        int r;
        if (!dir)
                return psrun_error_set(err, EOPNOTSUPP, "linux.resources: no cgroup2 directory");
        /* Never dropped in silence: cgroup v2 has no net_cls or net_prio. */
        if (res->network && res->network->class_id.set && res->network->class_id.value)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "linux.resources.network.classID: cgroup v2 has no net_cls "
                                       "controller");
        if (res->network && res->network->n_priorities > 0)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "linux.resources.network.priorities: cgroup v2 has no "
                                       "net_prio controller");
        if (res->n_devices > 0 &&
            (r = cg_v2_apply_devices(dir, res->devices, res->n_devices, err)) < 0)
                return r;
        if (res->memory && (r = v2_memory(cg, res->memory, err)) < 0)
                return r;
        r = cg_apply_res_table(cg, res, v2_files, ARRAY_SIZE(v2_files), v2_dir_of, err);
        if (r < 0)
                return r;
        if (res->cpu && (r = v2_cpu(cg, res->cpu, err)) < 0)
                return r;
        if (res->block_io && (r = v2_block_io(cg, res->block_io, err)) < 0)
                return r;
        if (res->n_hugepage_limits > 0 && (r = v2_hugetlb(cg, res, err)) < 0)
                return r;
        return v2_unified(cg, res, err);
}
