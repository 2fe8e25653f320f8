/* SPDX-License-Identifier: MIT */
/*
 * The runtime-spec 1.2 process fields that tune how the process runs:
 * scheduler (sched_setattr), ioPriority (ioprio_set) and execCPUAffinity
 * (an exec's CPU list); their values are checked here as runc checks
 * them, and applied by the child (runtime/child-exec.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/names.h"
#include "runtime/oci/config-internal.h"
#include "runtime/oci/config.h"

/* ---- scheduler ---- */

static const char *const sched_policy_names[] = {
        [OCI_SCHED_OTHER] = "SCHED_OTHER",
        [OCI_SCHED_FIFO] = "SCHED_FIFO",
        [OCI_SCHED_RR] = "SCHED_RR",
        [OCI_SCHED_BATCH] = "SCHED_BATCH",
        [OCI_SCHED_ISO] = "SCHED_ISO",
        [OCI_SCHED_IDLE] = "SCHED_IDLE",
        [OCI_SCHED_DEADLINE] = "SCHED_DEADLINE",
};

static int sched_policy_from_string(const char *s)
{
        return enum_from_string(sched_policy_names, ARRAY_SIZE(sched_policy_names), s);
}

static const char *sched_policy_name_at(int i)
{
        return enum_to_string(sched_policy_names, ARRAY_SIZE(sched_policy_names), i);
}

/* The kernel's SCHED_FLAG_* bits, as include/uapi/linux/sched.h has them. */
static const struct name_value sched_flags[] = {
        {"SCHED_FLAG_RESET_ON_FORK", 0x01},  {"SCHED_FLAG_RECLAIM", 0x02},
        {"SCHED_FLAG_DL_OVERRUN", 0x04},     {"SCHED_FLAG_KEEP_POLICY", 0x08},
        {"SCHED_FLAG_KEEP_PARAMS", 0x10},    {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
        {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
};

static int sched_flag_bit(const char *name, uint64_t *ret)
{
        int bit = name_value_from_string(sched_flags, ARRAY_SIZE(sched_flags), name);
        if (bit < 0)
                return bit;
        *ret = (uint64_t) bit;
        return 0;
}

static int finish_scheduler(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_scheduler *s = obj;
        char sub[OCI_PATH_MAX];
        const char *policy = sched_policy_names[s->policy];
        bool niced = s->policy == OCI_SCHED_OTHER || s->policy == OCI_SCHED_BATCH;
        bool realtime = s->policy == OCI_SCHED_FIFO || s->policy == OCI_SCHED_RR;
        if (niced && s->nice.set && (s->nice.value < -20 || s->nice.value > 19)) {
                oci_join_path(sub, path, "nice");
                return oci_fail(w, oci_mark_of(w, node, "nice"), sub, ERANGE,
                                "%lld is out of range -20..19 for %s", (long long) s->nice.value,
                                policy);
        }
        if (s->priority.set && s->priority.value != 0 && !realtime) {
                oci_join_path(sub, path, "priority");
                return oci_fail(w, oci_mark_of(w, node, "priority"), sub, EINVAL,
                                "only SCHED_FIFO and SCHED_RR take a priority, not %s", policy);
        }
        static const char *const deadline_fields[] = {"runtime", "deadline", "period"};
        const uint64_t values[] = {s->runtime, s->deadline, s->period};
        for (size_t i = 0; i < ARRAY_SIZE(values); i++)
                if (values[i] && s->policy != OCI_SCHED_DEADLINE) {
                        oci_join_path(sub, path, deadline_fields[i]);
                        return oci_fail(w, oci_mark_of(w, node, deadline_fields[i]), sub, EINVAL,
                                        "only SCHED_DEADLINE takes one, not %s", policy);
                }
        return 0;
}

#define OCI_STRUCT struct oci_scheduler
static const struct oci_field scheduler_fields[] = {
        {"policy", OCI_F_ENUM, OCI_AT(policy), .required = true,
         .from_string = sched_policy_from_string, .name_at = sched_policy_name_at},
        {"nice", OCI_F_INT, OCI_AT(nice), OCI_RANGE(OCI_I_OPT_I64, INT32_MIN, INT32_MAX)},
        {"priority", OCI_F_INT, OCI_AT(priority), OCI_RANGE(OCI_I_OPT_I64, INT32_MIN, INT32_MAX)},
        {"flags", OCI_F_BITS, OCI_AT(flags), .bit = sched_flag_bit, .what = "scheduler flag"},
        {"runtime", OCI_F_INT, OCI_AT(runtime), OCI_U64},
        {"deadline", OCI_F_INT, OCI_AT(deadline), OCI_U64},
        {"period", OCI_F_INT, OCI_AT(period), OCI_U64},
};
#undef OCI_STRUCT
const struct oci_type oci_scheduler_type =
        OCI_TYPE(scheduler_fields, struct oci_scheduler, .finish = finish_scheduler);

/* ---- ioPriority ---- */

static const char *const ioprio_class_names[] = {
        [OCI_IOPRIO_CLASS_RT] = "IOPRIO_CLASS_RT",
        [OCI_IOPRIO_CLASS_BE] = "IOPRIO_CLASS_BE",
        [OCI_IOPRIO_CLASS_IDLE] = "IOPRIO_CLASS_IDLE",
};

static int ioprio_class_from_string(const char *s)
{
        return enum_from_string(ioprio_class_names, ARRAY_SIZE(ioprio_class_names), s);
}

/* The i-th name, for the "one of ..." list: the classes start at 1. */
static const char *ioprio_class_name_at(int i)
{
        return enum_to_string(ioprio_class_names, ARRAY_SIZE(ioprio_class_names), i + 1);
}

#define OCI_STRUCT struct oci_io_priority
static const struct oci_field io_priority_fields[] = {
        {"class", OCI_F_ENUM, OCI_AT(klass), .required = true,
         .from_string = ioprio_class_from_string, .name_at = ioprio_class_name_at},
        /* Required by the spec's text, not by its schema or runc: 0 when absent. */
        {"priority", OCI_F_INT, OCI_AT(priority), OCI_RANGE(OCI_I_I64, 0, 7)},
};
#undef OCI_STRUCT
const struct oci_type oci_io_priority_type = OCI_TYPE(io_priority_fields, struct oci_io_priority);

/* ---- execCPUAffinity ---- */

int oci_cpu_list_parse(const char *s, cpu_set_t *set)
{
        /* "0-3,7,9-11": ranges of CPU numbers, ascending, comma-separated. */
        CPU_ZERO(set);
        if (!*s)
                return -EINVAL;
        while (*s) {
                char *end;
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                unsigned long lo = strtoul(s, &end, 10), hi = lo;
                if (*end == '-') {
                        if (end[1] < '0' || end[1] > '9')
                                return -EINVAL;
                        hi = strtoul(end + 1, &end, 10);
                }
                if (hi < lo)
                        return -EINVAL;
                if (hi >= CPU_SETSIZE)
                        return -ERANGE;
                for (unsigned long c = lo; c <= hi; c++)
                        CPU_SET(c, set);
                if (*end == ',' && end[1])
                        end++;
                else if (*end)
                        return -EINVAL;
                s = end;
        }
        return 0;
}

static int check_cpu_list(const char *s, psrun_error *err)
{
        cpu_set_t set;
        if (!*s)
                return 0; /* the spec: empty is as if not given */
        int r = oci_cpu_list_parse(s, &set);
        if (r == -ERANGE)
                return psrun_error_set(err, ERANGE, "\"%s\": a CPU past %d", s, CPU_SETSIZE - 1);
        if (r < 0)
                return psrun_error_set(err, EINVAL,
                                       "\"%s\" is not a CPU list (\"0-3,7\": numbers and ranges, "
                                       "comma-separated)",
                                       s);
        return 0;
}

#define OCI_STRUCT struct oci_cpu_affinity
static const struct oci_field cpu_affinity_fields[] = {
        {"initial", OCI_F_STRING, OCI_AT(initial), .check = check_cpu_list},
        {"final", OCI_F_STRING, OCI_AT(final), .check = check_cpu_list},
};
#undef OCI_STRUCT
const struct oci_type oci_cpu_affinity_type =
        OCI_TYPE(cpu_affinity_fields, struct oci_cpu_affinity);
