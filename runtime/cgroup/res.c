/* SPDX-License-Identifier: MIT */
/*
 * OCI linux.resources, the part both drivers share: the entry point, the
 * walker of the "value into a file" tables (cgroup-v1-oci.c,
 * cgroup-v2-oci.c), error messages that name the OCI field, and the cpu
 * shares to cpu.weight conversion.
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"
#include "runtime/cgroup/resources.h"

int cg_res_apply(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        if (!res)
                return 0;
        /* What neither driver has: refused, never left out. */
        if (res->rdma)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "linux.resources.rdma: psrun does not support the rdma "
                                       "controller");
        return cg->ops->apply_resources(cg, res, err);
}

int cgroup_apply_resources(struct cgroup *cg, const struct oci_resources *res, psrun_error *err)
{
        if (!cg)
                return psrun_error_set(err, EINVAL, "cgroup: apply resources: no cgroup");
        return cg_res_apply(cg, res, err);
}

uint64_t cgroup_cpu_shares_to_weight(uint64_t shares)
{
        if (shares == 0)
                return 0;
        /* v1 shares span 2^1..2^18, v2 weights 10^0..10^4; the curve
         * 10^((L^2 + 125 L) / 612 - 7/34), L = log2(shares), meets both ends
         * and maps the defaults (1024 -> 100) onto each other. */
        if (shares < 2)
                shares = 2;
        if (shares > 262144)
                shares = 262144;
        double l = log2((double) shares);
        double w = pow(10.0, (l * l + 125.0 * l) / 612.0 - 7.0 / 34.0);
        /* Rounding noise must not push an exact 100 up to 101. */
        uint64_t weight = (uint64_t) ceil(w - 1e-6);
        return weight < 1 ? 1 : weight > 10000 ? 10000 : weight;
}

int cg_res_write(const char *field, const char *dir, const char *file, const char *value,
                 psrun_error *err)
{
        int r = cg_write_str(dir, file, value);
        if (r < 0)
                return psrun_error_errno(err, r, "%s: write %s", field, file);
        return 0;
}

int cg_res_dir(const struct cgroup *cg, enum cg_slot slot, const char *field, const char **ret,
               psrun_error *err)
{
        const struct cg_dir *d = &cg->dir[slot];
        if (!d->path)
                return psrun_error_set(err, EOPNOTSUPP, "%s: this host has no %s controller", field,
                                       cg_slot_name(slot));
        *ret = d->path;
        return 0;
}

/* The value of one table row, or false when the field is not set. */
static bool format_row(const struct cg_res_file *row, const void *group, char *buf, size_t size,
                       const char **value)
{
        const char *at = (const char *) group + row->member;
        *value = buf;
        switch (row->kind) {
        case CG_RES_I64:
        case CG_RES_I64_MAX: {
                const struct oci_opt_i64 *v = (const void *) at;
                if (!v->set || (v->value == 0 && !row->zero_is_value))
                        return false;
                bool max = row->kind == CG_RES_I64_MAX && v->value < 0;
                if (max)
                        *value = "max";
                else
                        snprintf(buf, size, "%" PRId64, v->value);
                return true;
        }
        case CG_RES_U64:
        case CG_RES_SHARES: {
                const struct oci_opt_u64 *v = (const void *) at;
                if (!v->set || (v->value == 0 && !row->zero_is_value))
                        return false;
                uint64_t x = row->kind == CG_RES_SHARES ? cgroup_cpu_shares_to_weight(v->value)
                                                        : v->value;
                snprintf(buf, size, "%" PRIu64, x);
                return row->kind != CG_RES_SHARES || x != 0;
        }
        case CG_RES_BOOL: {
                const struct oci_opt_bool *v = (const void *) at;
                if (!v->set)
                        return false;
                *value = v->value ? "1" : "0";
                return true;
        }
        case CG_RES_STR:
                *value = *(char *const *) (const void *) at;
                /* An empty cpus/mems means "not given", as in runc. */
                return *value && **value;
        }
        return false;
}

int cg_apply_res_table(struct cgroup *cg, const struct oci_resources *res,
                       const struct cg_res_file *table, size_t n, cg_res_dir_fn dir_of,
                       psrun_error *err)
{
        bool retry[64] = {false};
        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < n; i++) {
                        const struct cg_res_file *row = &table[i];
                        const void *group = *(void *const *) ((const char *) res + row->group);
                        char buf[32];
                        const char *value, *dir;
                        if ((pass == 1 && !retry[i]) || !group ||
                            !format_row(row, group, buf, sizeof(buf), &value))
                                continue;
                        int r = dir_of(cg, row->slot, row->field, &dir, err);
                        if (r < 0)
                                return r;
                        r = cg_res_write(row->field, dir, row->file, value, err);
                        if (r == -EINVAL && pass == 0 && row->reorder && i < ARRAY_SIZE(retry)) {
                                retry[i] = true;
                                psrun_error_clear(err);
                                continue;
                        }
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
