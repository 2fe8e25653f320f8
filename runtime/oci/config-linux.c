/* SPDX-License-Identifier: MIT */
/*
 * The `linux` object of config.json (config-linux.md): namespaces, id
 * mappings, cgroup resources, devices, seccomp, paths, personality, time
 * offsets. Field tables only, plus the cross-field checks the spec states;
 * the walker is in oci-config.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "runtime/oci/config-internal.h"
#include "runtime/oci/config.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* The walker stores enums through int pointers. */
_Static_assert(sizeof(enum seccomp_cmp_op) == sizeof(int), "enum size");
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "seccomp_arg_cmp.index is stored as u32");

/* ---- name tables ---- */

/* "u" (unbuffered character device) is made with mknod like "c". */
static const struct name_value device_type_names[] = {
        {"c", S_IFCHR},
        {"b", S_IFBLK},
        {"u", S_IFCHR},
        {"p", S_IFIFO},
};

static int device_type_from_string(const char *s)
{
        return name_value_from_string(device_type_names, ARRAY_SIZE(device_type_names), s);
}

static const char *device_type_name_at(int i)
{
        return (size_t) i < ARRAY_SIZE(device_type_names) ? device_type_names[i].name : NULL;
}

static const struct name_value rule_type_names[] = {
        {"a", 'a'},
        {"b", 'b'},
        {"c", 'c'},
};

static int rule_type_from_string(const char *s)
{
        return name_value_from_string(rule_type_names, ARRAY_SIZE(rule_type_names), s);
}

static const char *rule_type_name_at(int i)
{
        return (size_t) i < ARRAY_SIZE(rule_type_names) ? rule_type_names[i].name : NULL;
}

static const struct name_value personality_names[] = {
        {"LINUX", PER_LINUX},
        {"LINUX32", PER_LINUX32},
};

static int personality_from_string(const char *s)
{
        return name_value_from_string(personality_names, ARRAY_SIZE(personality_names), s);
}

static const char *personality_name_at(int i)
{
        return (size_t) i < ARRAY_SIZE(personality_names) ? personality_names[i].name : NULL;
}

/* Seccomp names come from policy/seccomp.h's tables. */
static const char *action_name_at(int i)
{
        return seccomp_action_kind_to_string((enum seccomp_action_kind) i);
}

static const char *cmp_op_name_at(int i)
{
        return seccomp_cmp_op_to_string((enum seccomp_cmp_op) i);
}

static int seccomp_flag_bit(const char *name, uint64_t *ret)
{
        int flag = seccomp_filter_flag_from_string(name);

        if (flag < 0)
                return -EINVAL;
        *ret = (unsigned) flag;
        return 0;
}

/* ---- checks ---- */

static int check_access(const char *s, psrun_error *err)
{
        static const char letters[] = "rwm";
        char buf[OCI_SHOWN_MAX];
        bool seen[sizeof(letters)] = {false};

        for (const char *c = s; *c; c++) {
                const char *at = strchr(letters, *c);
                if (!at || seen[at - letters])
                        return psrun_error_set(err, EINVAL,
                                               "\"%s\" is not some of r, w, m (each once)",
                                               policy_escape(s, buf, sizeof(buf)));
                seen[at - letters] = true;
        }
        return *s ? 0 : psrun_error_set(err, EINVAL, "must not be empty (use some of r, w, m)");
}

/* "2MB", "64KB", "1GB": digits, an optional binary prefix, "B". */
static int check_page_size(const char *s, psrun_error *err)
{
        char buf[OCI_SHOWN_MAX];
        size_t digits = strspn(s, "0123456789");
        const char *unit = s + digits;

        if (digits > 0 && unit[0] && strchr("KMGTPE", unit[0]))
                unit++;
        if (digits == 0 || strcmp(unit, "B") != 0)
                return psrun_error_set(err, EINVAL, "\"%s\" is not a page size such as 2MB",
                                       policy_escape(s, buf, sizeof(buf)));
        return 0;
}

/* libseccomp's architecture names are the spec's without the prefix, in
 * lower case (as policy/seccomp.c resolves them). */
static int check_architecture(const char *s, psrun_error *err)
{
        static const char prefix[] = "SCMP_ARCH_";
        char lower[32], buf[OCI_SHOWN_MAX];
        size_t len = strlen(s);

        if (strncmp(s, prefix, sizeof(prefix) - 1) == 0 && len - (sizeof(prefix) - 1) > 0 &&
            len - (sizeof(prefix) - 1) < sizeof(lower)) {
                size_t n = len - (sizeof(prefix) - 1);
                for (size_t i = 0; i <= n; i++) {
                        char c = s[sizeof(prefix) - 1 + i];
                        lower[i] = c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
                }
                if (seccomp_arch_resolve_name(lower) != 0)
                        return 0;
        }
        return psrun_error_set(err, EINVAL, "unknown architecture \"%s\"",
                               policy_escape(s, buf, sizeof(buf)));
}

/* ---- id mappings, namespaces, devices ---- */

static int finish_id_mapping(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_id_mapping *m = obj;
        char sub[OCI_PATH_MAX];

        oci_join_path(sub, path, "size");
        if (m->size == 0)
                return oci_fail(w, oci_mark_of(w, node, "size"), sub, EINVAL, "must be at least 1");
        if ((uint64_t) m->container_id + m->size - 1 > UINT32_MAX ||
            (uint64_t) m->host_id + m->size - 1 > UINT32_MAX)
                return oci_fail(w, oci_mark_of(w, node, "size"), sub, ERANGE,
                                "the range goes past id %" PRIu32, UINT32_MAX);
        return 0;
}

#define OCI_STRUCT struct oci_id_mapping
static const struct oci_field id_mapping_fields[] = {
        {"containerID", OCI_F_INT, OCI_AT(container_id), OCI_U32, .required = true},
        {"hostID", OCI_F_INT, OCI_AT(host_id), OCI_U32, .required = true},
        {"size", OCI_F_INT, OCI_AT(size), OCI_U32, .required = true},
};
#undef OCI_STRUCT
const struct oci_type oci_id_mapping_type =
        OCI_TYPE(id_mapping_fields, struct oci_id_mapping, .finish = finish_id_mapping);

#define OCI_STRUCT struct oci_namespace
static const struct oci_field namespace_fields[] = {
        {"type", OCI_F_ENUM, OCI_AT(type), .required = true,
         .from_string = oci_namespace_from_string, .name_at = oci_namespace_name_at},
        {"path", OCI_F_STRING, OCI_AT(path), .check = oci_check_absolute},
};
#undef OCI_STRUCT
static const struct oci_type namespace_type = OCI_TYPE(namespace_fields, struct oci_namespace);

static int finish_device(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        struct oci_device *d = obj;
        static const char *const numbers[] = {"major", "minor"};
        char sub[OCI_PATH_MAX];

        if (d->type == S_IFIFO) {
                d->major = d->minor = 0;
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(numbers); i++) {
                if (oci_child(w, node, numbers[i]))
                        continue;
                oci_join_path(sub, path, numbers[i]);
                return oci_fail(w, &node->start_mark, sub, EINVAL,
                                "missing (required unless type is \"p\")");
        }
        return 0;
}

#define OCI_STRUCT struct oci_device
static const struct oci_field device_fields[] = {
        {"path", OCI_F_STRING, OCI_AT(path), .required = true, .check = oci_check_absolute},
        {"type", OCI_F_ENUM, OCI_AT(type), .required = true, .from_string = device_type_from_string,
         .name_at = device_type_name_at},
        {"major", OCI_F_INT, OCI_AT(major), OCI_RANGE(OCI_I_I64, 0, UINT32_MAX)},
        {"minor", OCI_F_INT, OCI_AT(minor), OCI_RANGE(OCI_I_I64, 0, UINT32_MAX)},
        {"fileMode", OCI_F_INT, OCI_AT(file_mode), OCI_RANGE(OCI_I_OPT_U64, 0, UINT32_MAX)},
        {"uid", OCI_F_INT, OCI_AT(uid), OCI_RANGE(OCI_I_OPT_U64, 0, UINT32_MAX)},
        {"gid", OCI_F_INT, OCI_AT(gid), OCI_RANGE(OCI_I_OPT_U64, 0, UINT32_MAX)},
};
#undef OCI_STRUCT
static const struct oci_type device_type =
        OCI_TYPE(device_fields, struct oci_device, .finish = finish_device);

/* ---- resources ---- */

/* Unset fields mean "all", as the spec says of type and major/minor. */
static int finish_device_rule(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        struct oci_device_rule *rule = obj;

        if (!rule->type)
                rule->type = 'a';
        if (!rule->access && !(rule->access = strdup("rwm")))
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        return 0;
}

#define OCI_STRUCT struct oci_device_rule
static const struct oci_field device_rule_fields[] = {
        {"allow", OCI_F_BOOL, OCI_AT(allow), .required = true},
        {"type", OCI_F_ENUM, OCI_AT(type), .from_string = rule_type_from_string,
         .name_at = rule_type_name_at},
        {"major", OCI_F_INT, OCI_AT(major), OCI_RANGE(OCI_I_OPT_I64, -1, INT64_MAX)},
        {"minor", OCI_F_INT, OCI_AT(minor), OCI_RANGE(OCI_I_OPT_I64, -1, INT64_MAX)},
        {"access", OCI_F_STRING, OCI_AT(access), .check = check_access},
};
#undef OCI_STRUCT
static const struct oci_type device_rule_type =
        OCI_TYPE(device_rule_fields, struct oci_device_rule, .finish = finish_device_rule);

/* Memory values are bytes or -1 for unlimited. */
#define BYTES OCI_RANGE(OCI_I_OPT_I64, -1, INT64_MAX)

static int finish_memory(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_memory *m = obj;
        char sub[OCI_PATH_MAX];

        /* swap is memory+swap: below the memory limit no cgroup version can
         * express it (v1 refuses it, v2's swap.max would be negative). */
        if (!m->limit.set || !m->swap.set || m->limit.value <= 0 || m->swap.value <= 0 ||
            m->swap.value >= m->limit.value)
                return 0;
        oci_join_path(sub, path, "swap");
        return oci_fail(w, oci_mark_of(w, node, "swap"), sub, EINVAL,
                        "%" PRId64 " is below limit %" PRId64 " (swap counts memory+swap)",
                        m->swap.value, m->limit.value);
}

#define OCI_STRUCT struct oci_memory
static const struct oci_field memory_fields[] = {
        {"limit", OCI_F_INT, OCI_AT(limit), BYTES},
        {"reservation", OCI_F_INT, OCI_AT(reservation), BYTES},
        {"swap", OCI_F_INT, OCI_AT(swap), BYTES},
        {"kernel", OCI_F_INT, OCI_AT(kernel), BYTES},
        {"kernelTCP", OCI_F_INT, OCI_AT(kernel_tcp), BYTES},
        {"swappiness", OCI_F_INT, OCI_AT(swappiness), OCI_RANGE(OCI_I_OPT_U64, 0, 100)},
        {"disableOOMKiller", OCI_F_OPT_BOOL, OCI_AT(disable_oom_killer)},
        {"useHierarchy", OCI_F_OPT_BOOL, OCI_AT(use_hierarchy)},
        {"checkBeforeUpdate", OCI_F_OPT_BOOL, OCI_AT(check_before_update)},
};
#undef OCI_STRUCT
static const struct oci_type memory_type =
        OCI_TYPE(memory_fields, struct oci_memory, .finish = finish_memory);

static int finish_cpu(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_cpu *c = obj;
        char sub[OCI_PATH_MAX];

        /* The spec: burst MUST be no larger than a positive quota. */
        if (!c->quota.set || !c->burst.set || c->quota.value <= 0 ||
            c->burst.value <= (uint64_t) c->quota.value)
                return 0;
        oci_join_path(sub, path, "burst");
        return oci_fail(w, oci_mark_of(w, node, "burst"), sub, EINVAL,
                        "%" PRIu64 " is larger than quota %" PRId64, c->burst.value,
                        c->quota.value);
}

#define OCI_STRUCT struct oci_cpu
static const struct oci_field cpu_fields[] = {
        {"shares", OCI_F_INT, OCI_AT(shares), OCI_OPT_U64},
        {"quota", OCI_F_INT, OCI_AT(quota), OCI_RANGE(OCI_I_OPT_I64, -1, INT64_MAX)},
        {"burst", OCI_F_INT, OCI_AT(burst), OCI_OPT_U64},
        {"period", OCI_F_INT, OCI_AT(period), OCI_OPT_U64},
        {"realtimeRuntime", OCI_F_INT, OCI_AT(realtime_runtime),
         OCI_RANGE(OCI_I_OPT_I64, -1, INT64_MAX)},
        {"realtimePeriod", OCI_F_INT, OCI_AT(realtime_period), OCI_OPT_U64},
        {"cpus", OCI_F_STRING, OCI_AT(cpus)},
        {"mems", OCI_F_STRING, OCI_AT(mems)},
        {"idle", OCI_F_INT, OCI_AT(idle), OCI_RANGE(OCI_I_OPT_I64, 0, 1)},
};
#undef OCI_STRUCT
static const struct oci_type cpu_type = OCI_TYPE(cpu_fields, struct oci_cpu, .finish = finish_cpu);

#define OCI_STRUCT struct oci_pids
static const struct oci_field pids_fields[] = {
        {"limit", OCI_F_INT, OCI_AT(limit), OCI_RANGE(OCI_I_OPT_I64, -1, INT64_MAX)},
};
#undef OCI_STRUCT
static const struct oci_type pids_type = OCI_TYPE(pids_fields, struct oci_pids);

#define WEIGHT OCI_RANGE(OCI_I_OPT_U64, 0, UINT16_MAX)

static int finish_weight_device(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_weight_device *d = obj;

        if (d->weight.set || d->leaf_weight.set)
                return 0;
        return oci_fail(w, &node->start_mark, path, EINVAL, "needs weight or leafWeight (or both)");
}

#define OCI_STRUCT struct oci_weight_device
static const struct oci_field weight_device_fields[] = {
        {"major", OCI_F_INT, OCI_AT(major), OCI_I64, .required = true},
        {"minor", OCI_F_INT, OCI_AT(minor), OCI_I64, .required = true},
        {"weight", OCI_F_INT, OCI_AT(weight), WEIGHT},
        {"leafWeight", OCI_F_INT, OCI_AT(leaf_weight), WEIGHT},
};
#undef OCI_STRUCT
static const struct oci_type weight_device_type =
        OCI_TYPE(weight_device_fields, struct oci_weight_device, .finish = finish_weight_device);

#define OCI_STRUCT struct oci_throttle_device
static const struct oci_field throttle_device_fields[] = {
        {"major", OCI_F_INT, OCI_AT(major), OCI_I64, .required = true},
        {"minor", OCI_F_INT, OCI_AT(minor), OCI_I64, .required = true},
        {"rate", OCI_F_INT, OCI_AT(rate), OCI_U64, .required = true},
};
#undef OCI_STRUCT
static const struct oci_type throttle_device_type =
        OCI_TYPE(throttle_device_fields, struct oci_throttle_device);

#define THROTTLE(json, member)                                                                     \
        {                                                                                          \
                json, OCI_F_LIST, OCI_AT(member), OCI_COUNT(n_##member),                           \
                        OCI_LIST_OF(throttle_device_type, struct oci_throttle_device)              \
        }
#define OCI_STRUCT struct oci_block_io
static const struct oci_field block_io_fields[] = {
        {"weight", OCI_F_INT, OCI_AT(weight), WEIGHT},
        {"leafWeight", OCI_F_INT, OCI_AT(leaf_weight), WEIGHT},
        {"weightDevice", OCI_F_LIST, OCI_AT(weight_device), OCI_COUNT(n_weight_device),
         OCI_LIST_OF(weight_device_type, struct oci_weight_device)},
        THROTTLE("throttleReadBpsDevice", throttle_read_bps),
        THROTTLE("throttleWriteBpsDevice", throttle_write_bps),
        THROTTLE("throttleReadIOPSDevice", throttle_read_iops),
        THROTTLE("throttleWriteIOPSDevice", throttle_write_iops),
};
#undef OCI_STRUCT
static const struct oci_type block_io_type = OCI_TYPE(block_io_fields, struct oci_block_io);

#define OCI_STRUCT struct oci_hugepage_limit
static const struct oci_field hugepage_limit_fields[] = {
        {"pageSize", OCI_F_STRING, OCI_AT(page_size), .required = true, .check = check_page_size},
        {"limit", OCI_F_INT, OCI_AT(limit), OCI_U64, .required = true},
};
#undef OCI_STRUCT
static const struct oci_type hugepage_limit_type =
        OCI_TYPE(hugepage_limit_fields, struct oci_hugepage_limit);

#define OCI_STRUCT struct oci_net_priority
static const struct oci_field net_priority_fields[] = {
        {"name", OCI_F_STRING, OCI_AT(name), .required = true},
        {"priority", OCI_F_INT, OCI_AT(priority), OCI_U32, .required = true},
};
#undef OCI_STRUCT
static const struct oci_type net_priority_type =
        OCI_TYPE(net_priority_fields, struct oci_net_priority);

#define OCI_STRUCT struct oci_network
static const struct oci_field network_fields[] = {
        {"classID", OCI_F_INT, OCI_AT(class_id), OCI_RANGE(OCI_I_OPT_U64, 0, UINT32_MAX)},
        {"priorities", OCI_F_LIST, OCI_AT(priorities), OCI_COUNT(n_priorities),
         OCI_LIST_OF(net_priority_type, struct oci_net_priority)},
};
#undef OCI_STRUCT
static const struct oci_type network_type = OCI_TYPE(network_fields, struct oci_network);

/* rdma is ignored like an unknown field: psrun drives no rdma controller.
 * network is applied where net_cls/net_prio are (v1), refused elsewhere. */
#define OCI_STRUCT struct oci_resources
static const struct oci_field resources_fields[] = {
        {"network", OCI_F_OBJECT, OCI_AT(network), .type = &network_type},
        {"memory", OCI_F_OBJECT, OCI_AT(memory), .type = &memory_type},
        {"cpu", OCI_F_OBJECT, OCI_AT(cpu), .type = &cpu_type},
        {"pids", OCI_F_OBJECT, OCI_AT(pids), .type = &pids_type},
        {"blockIO", OCI_F_OBJECT, OCI_AT(block_io), .type = &block_io_type},
        {"hugepageLimits", OCI_F_LIST, OCI_AT(hugepage_limits), OCI_COUNT(n_hugepage_limits),
         OCI_LIST_OF(hugepage_limit_type, struct oci_hugepage_limit)},
        {"devices", OCI_F_LIST, OCI_AT(devices), OCI_COUNT(n_devices),
         OCI_LIST_OF(device_rule_type, struct oci_device_rule)},
        {"unified", OCI_F_MAP, OCI_AT(unified), OCI_COUNT(n_unified)},
        {"rdma", OCI_F_PRESENT, OCI_AT(rdma)},
};
#undef OCI_STRUCT
const struct oci_type oci_resources_type = OCI_TYPE(resources_fields, struct oci_resources);

/* ---- seccomp ---- */

/* Actions that carry data, and how much: the kernel keeps 16 bits of it and
 * cuts an errno to MAX_ERRNO (policy/seccomp.c refuses more as well). */
static const struct {
        int action;
        uint64_t max;
} errno_actions[] = {
        {SECCOMP_ACT_ERRNO_, 4095},
        {SECCOMP_ACT_TRACE_, UINT16_MAX},
};

static bool action_errno_max(int action, uint64_t *max)
{
        for (size_t i = 0; i < ARRAY_SIZE(errno_actions); i++)
                if (errno_actions[i].action == action) {
                        *max = errno_actions[i].max;
                        return true;
                }
        return false;
}

static int check_errno_ret(struct oci_walk *w, yaml_node_t *node, const char *path, const char *key,
                           int action, const struct oci_opt_u64 *errno_ret)
{
        char sub[OCI_PATH_MAX];
        uint64_t max = 0;

        if (!errno_ret->set)
                return 0;
        oci_join_path(sub, path, key);
        /* The spec: an errno for an action without one MUST be an error. */
        if (!action_errno_max(action, &max))
                return oci_fail(w, oci_mark_of(w, node, key), sub, EINVAL,
                                "%s takes no errno (only SCMP_ACT_ERRNO and SCMP_ACT_TRACE do)",
                                seccomp_action_kind_to_string((enum seccomp_action_kind) action));
        if (errno_ret->value > max)
                return oci_fail(
                        w, oci_mark_of(w, node, key), sub, ERANGE,
                        "%" PRIu64 " is out of range for %s (0..%" PRIu64 ")", errno_ret->value,
                        seccomp_action_kind_to_string((enum seccomp_action_kind) action), max);
        return 0;
}

/* The spec's default errno is EPERM. */
static struct seccomp_action action_of(int kind, const struct oci_opt_u64 *errno_ret)
{
        struct seccomp_action action = {.kind = (enum seccomp_action_kind) kind};
        uint64_t max;

        if (action_errno_max(kind, &max))
                action.errno_ret = errno_ret->set ? (uint32_t) errno_ret->value : EPERM;
        return action;
}

#define OCI_STRUCT struct seccomp_arg_cmp
static const struct oci_field seccomp_arg_fields[] = {
        {"index", OCI_F_INT, OCI_AT(index), OCI_RANGE(OCI_I_U32, 0, 5), .required = true},
        {"value", OCI_F_INT, OCI_AT(value), OCI_U64, .required = true},
        {"valueTwo", OCI_F_INT, OCI_AT(value_two), OCI_U64},
        {"op", OCI_F_ENUM, OCI_AT(op), .required = true, .from_string = seccomp_cmp_op_from_string,
         .name_at = cmp_op_name_at},
};
#undef OCI_STRUCT
static const struct oci_type seccomp_arg_type =
        OCI_TYPE(seccomp_arg_fields, struct seccomp_arg_cmp);

static int finish_syscall(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_seccomp_syscall *s = obj;
        char sub[OCI_PATH_MAX];

        if (s->n_names == 0) {
                oci_join_path(sub, path, "names");
                return oci_fail(w, oci_mark_of(w, node, "names"), sub, EINVAL, "must not be empty");
        }
        return check_errno_ret(w, node, path, "errnoRet", s->action, &s->errno_ret);
}

#define OCI_STRUCT struct oci_seccomp_syscall
static const struct oci_field seccomp_syscall_fields[] = {
        {"names", OCI_F_STRV, OCI_AT(names), OCI_COUNT(n_names), .required = true,
         .check = oci_check_not_empty},
        {"action", OCI_F_ENUM, OCI_AT(action), .required = true,
         .from_string = seccomp_action_kind_from_string, .name_at = action_name_at},
        {"errnoRet", OCI_F_INT, OCI_AT(errno_ret), OCI_OPT_U64},
        {"args", OCI_F_LIST, OCI_AT(args), OCI_COUNT(n_args),
         OCI_LIST_OF(seccomp_arg_type, struct seccomp_arg_cmp)},
};
#undef OCI_STRUCT
static const struct oci_type seccomp_syscall_type =
        OCI_TYPE(seccomp_syscall_fields, struct oci_seccomp_syscall, .finish = finish_syscall);

static int build_profile(struct oci_walk *w, const char *path, struct oci_seccomp *sc)
{
        struct seccomp_profile *p = &sc->profile;
        struct seccomp_rule *rules;
        size_t n = 0, k = 0;

        for (size_t i = 0; i < sc->n_syscalls; i++)
                n += sc->syscalls[i].n_names;
        rules = calloc(n ? n : 1, sizeof(*rules));
        if (!rules)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        for (size_t i = 0; i < sc->n_syscalls; i++) {
                const struct oci_seccomp_syscall *s = &sc->syscalls[i];
                for (size_t j = 0; j < s->n_names; j++)
                        rules[k++] = (struct seccomp_rule){
                                .syscall = s->names[j],
                                .action = action_of(s->action, &s->errno_ret),
                                .args = s->args,
                                .n_args = s->n_args,
                        };
        }
        *p = (struct seccomp_profile){
                .default_action = action_of(sc->default_action, &sc->default_errno_ret),
                /* The spec has no field for it: libseccomp's default, which
                 * runc and crun inherit, kills. */
                .badarch_action = {.kind = SECCOMP_ACT_KILL_THREAD_},
                .architectures = (const char *const *) sc->architectures,
                .n_architectures = sc->n_architectures,
                .rules = rules,
                .n_rules = n,
                .flags = (unsigned) sc->flags,
                .notify = sc->listener_path != NULL,
        };
        return 0;
}

static int finish_seccomp(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        struct oci_seccomp *sc = obj;
        char sub[OCI_PATH_MAX];
        int r = check_errno_ret(w, node, path, "defaultErrnoRet", sc->default_action,
                                &sc->default_errno_ret);

        if (r < 0)
                return r;
        if (sc->listener_metadata && !sc->listener_path) {
                oci_join_path(sub, path, "listenerMetadata");
                return oci_fail(w, oci_mark_of(w, node, "listenerMetadata"), sub, EINVAL,
                                "must not be set without listenerPath");
        }
        return build_profile(w, path, sc);
}

static void release_seccomp(void *obj)
{
        struct oci_seccomp *sc = obj;

        free((void *) sc->profile.rules);
        sc->profile = (struct seccomp_profile){0};
}

#define OCI_STRUCT struct oci_seccomp
static const struct oci_field seccomp_fields[] = {
        {"defaultAction", OCI_F_ENUM, OCI_AT(default_action), .required = true,
         .from_string = seccomp_action_kind_from_string, .name_at = action_name_at},
        {"defaultErrnoRet", OCI_F_INT, OCI_AT(default_errno_ret), OCI_OPT_U64},
        {"architectures", OCI_F_STRV, OCI_AT(architectures), OCI_COUNT(n_architectures),
         .check = check_architecture},
        {"flags", OCI_F_BITS, OCI_AT(flags), .bit = seccomp_flag_bit, .what = "seccomp flag"},
        {"listenerPath", OCI_F_STRING, OCI_AT(listener_path), .check = oci_check_absolute},
        {"listenerMetadata", OCI_F_STRING, OCI_AT(listener_metadata)},
        {"syscalls", OCI_F_LIST, OCI_AT(syscalls), OCI_COUNT(n_syscalls),
         OCI_LIST_OF(seccomp_syscall_type, struct oci_seccomp_syscall)},
};
#undef OCI_STRUCT
static const struct oci_type seccomp_type = OCI_TYPE(
        seccomp_fields, struct oci_seccomp, .finish = finish_seccomp, .release = release_seccomp);

/* ---- personality, time offsets ---- */

#define OCI_STRUCT struct oci_personality
static const struct oci_field personality_fields[] = {
        {"domain", OCI_F_ENUM, OCI_AT(domain), .required = true,
         .from_string = personality_from_string, .name_at = personality_name_at},
        {"flags", OCI_F_STRV, OCI_AT(flags), OCI_COUNT(n_flags)},
};
#undef OCI_STRUCT
static const struct oci_type personality_type =
        OCI_TYPE(personality_fields, struct oci_personality);

#define OCI_STRUCT struct oci_time_offset
static const struct oci_field time_offset_fields[] = {
        {"secs", OCI_F_INT, OCI_AT(secs), OCI_I64},
        {"nanosecs", OCI_F_INT, OCI_AT(nanosecs), OCI_RANGE(OCI_I_U32, 0, 999999999)},
};
#undef OCI_STRUCT
static const struct oci_type time_offset_type =
        OCI_TYPE(time_offset_fields, struct oci_time_offset);

#define OCI_STRUCT struct oci_time_offsets
static const struct oci_field time_offsets_fields[] = {
        {"monotonic", OCI_F_OBJECT, OCI_AT(monotonic), .type = &time_offset_type},
        {"boottime", OCI_F_OBJECT, OCI_AT(boottime), .type = &time_offset_type},
};
#undef OCI_STRUCT
static const struct oci_type time_offsets_type =
        OCI_TYPE(time_offsets_fields, struct oci_time_offsets);

/* ---- linux ---- */

static int finish_linux(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_linux *l = obj;
        yaml_node_t *list = oci_child(w, node, "namespaces");
        char sub[OCI_PATH_MAX], first[OCI_PATH_MAX];

        /* The spec: a duplicated type MUST be an error. There are at most
         * as many entries before the first duplicate as namespace types. */
        for (size_t i = 0; i < l->n_namespaces; i++) {
                for (size_t j = 0; j < i; j++) {
                        if (l->namespaces[j].type != l->namespaces[i].type)
                                continue;
                        snprintf(first, sizeof(first), "%s.namespaces[%zu]", path, j);
                        snprintf(sub, sizeof(sub), "%s.namespaces[%zu].type", path, i);
                        return oci_fail(w, oci_mark_of(w, oci_item(w, list, i), "type"), sub,
                                        EINVAL, "\"%s\" is already in %s",
                                        oci_namespace_to_string(l->namespaces[i].type), first);
                }
        }
        return 0;
}

#define OCI_STRUCT struct oci_intel_rdt
static const struct oci_field intel_rdt_fields[] = {
        {"closID", OCI_F_STRING, OCI_AT(clos_id)},
        {"l3CacheSchema", OCI_F_STRING, OCI_AT(l3_cache_schema)},
        {"memBwSchema", OCI_F_STRING, OCI_AT(mem_bw_schema)},
};
#undef OCI_STRUCT
static const struct oci_type intel_rdt_type = OCI_TYPE(intel_rdt_fields, struct oci_intel_rdt);

#define OCI_STRUCT struct oci_linux
static const struct oci_field linux_fields[] = {
        {"namespaces", OCI_F_LIST, OCI_AT(namespaces), OCI_COUNT(n_namespaces),
         OCI_LIST_OF(namespace_type, struct oci_namespace)},
        {"uidMappings", OCI_F_LIST, OCI_AT(uid_mappings), OCI_COUNT(n_uid_mappings),
         OCI_LIST_OF(oci_id_mapping_type, struct oci_id_mapping)},
        {"gidMappings", OCI_F_LIST, OCI_AT(gid_mappings), OCI_COUNT(n_gid_mappings),
         OCI_LIST_OF(oci_id_mapping_type, struct oci_id_mapping)},
        {"sysctl", OCI_F_MAP, OCI_AT(sysctl), OCI_COUNT(n_sysctl)},
        {"resources", OCI_F_OBJECT, OCI_AT(resources), .type = &oci_resources_type},
        {"cgroupsPath", OCI_F_STRING, OCI_AT(cgroups_path)},
        {"devices", OCI_F_LIST, OCI_AT(devices), OCI_COUNT(n_devices),
         OCI_LIST_OF(device_type, struct oci_device)},
        {"seccomp", OCI_F_OBJECT, OCI_AT(seccomp), .type = &seccomp_type},
        {"maskedPaths", OCI_F_STRV, OCI_AT(masked_paths), OCI_COUNT(n_masked_paths),
         .check = oci_check_absolute},
        {"readonlyPaths", OCI_F_STRV, OCI_AT(readonly_paths), OCI_COUNT(n_readonly_paths),
         .check = oci_check_absolute},
        {"rootfsPropagation", OCI_F_ENUM, OCI_AT(rootfs_propagation),
         .from_string = oci_propagation_from_string, .name_at = oci_propagation_name_at},
        {"mountLabel", OCI_F_STRING, OCI_AT(mount_label)},
        {"intelRdt", OCI_F_OBJECT, OCI_AT(intel_rdt), .type = &intel_rdt_type},
        {"personality", OCI_F_OBJECT, OCI_AT(personality), .type = &personality_type},
        {"timeOffsets", OCI_F_OBJECT, OCI_AT(time_offsets), .type = &time_offsets_type},
};
#undef OCI_STRUCT
const struct oci_type oci_linux_type =
        OCI_TYPE(linux_fields, struct oci_linux, .finish = finish_linux);
