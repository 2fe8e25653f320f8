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

/* log2 and 10^y by hand: psrun links no libm (one library fewer for the
 * dynamic linker at every start), and this curve is its only use of it.
 * Exact to a few units in the last place over the range used here (x in
 * 2..2^18, y in 0..4), far inside the curve's 1e-6 slack; a unit test
 * compares every share value with libm's answer. */
#define LN2  0.693147180559945309417232121458176568
#define LN10 2.302585092994045684017991454684364208

static double log2_of(double x)
{
        int e = 0;
        for (; x >= 2.0; x /= 2.0)
                e++;
        for (; x < 1.0; x *= 2.0)
                e--;
        /* ln x = 2 atanh z, z = (x - 1) / (x + 1) in [0, 1/3): the series
         * z + z^3/3 + z^5/5 + ... gains a factor 9 or more per term. */
        double z = (x - 1.0) / (x + 1.0), z2 = z * z, term = z, sum = 0.0;
        for (int k = 1; k < 40; k += 2, term *= z2)
                sum += term / k;
        return e + 2.0 * sum / LN2;
}

static double exp10_of(double y)
{
        /* e^(y ln 10) = 2^k e^r with |r| <= ln2 / 2: Taylor's series of e^r. */
        double x = y * LN10;
        int k = (int) (x / LN2 + (x < 0 ? -0.5 : 0.5));
        double r = x - k * LN2, term = 1.0, sum = 1.0;
        for (int n = 1; n < 30; n++) {
                term *= r / n;
                sum += term;
        }
        for (; k > 0; k--)
                sum *= 2.0;
        for (; k < 0; k++)
                sum /= 2.0;
        return sum;
}

/* ceil(w) for 0 <= w < 2^53 without libm. */
static uint64_t ceil_of(double w)
{
        if (w <= 0)
                return 0;
        uint64_t n = (uint64_t) w;
        return (double) n < w ? n + 1 : n;
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
        double l = log2_of((double) shares);
        double w = exp10_of((l * l + 125.0 * l) / 612.0 - 7.0 / 34.0);
        /* Rounding noise must not push an exact 100 up to 101. */
        uint64_t weight = ceil_of(w - 1e-6);
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
