/* SPDX-License-Identifier: MIT */
/*
 * Every enum<->string table, one round trip each: each value with a name
 * comes back from its name, names are unique, and neither direction accepts
 * what is not in the table.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>

#include "common/cleanup.h"
#include "common/names.h"
#include "policy/policy.h"
#include "policy/seccomp.h"
#include "runtime/oci/config.h"
#include "runtime/violations.h"
#include "runtime/oci/signal.h"
#include "runtime/oci/state.h"

struct names_table {
        const char *what;
        const char *(*to_string)(int value);
        int (*from_string)(const char *name);
        int lo, hi; /* the values tried: lo..hi; those without a name are skipped */
        int min_named;
};

/* Wrappers give every table the int -> name, name -> int shape. */
#define WRAP(fn, type)                                                                             \
        static const char *fn##_int(int v)                                                         \
        {                                                                                          \
                return fn((type) v);                                                               \
        }
WRAP(policy_network_to_string, enum policy_network)
WRAP(policy_backend_to_string, enum policy_backend)
WRAP(policy_gvisor_platform_to_string, enum policy_gvisor_platform)
WRAP(policy_layer_to_string, enum policy_layer)
WRAP(policy_violations_to_string, enum policy_violations)
WRAP(policy_limits_to_string, enum policy_limits)
WRAP(violation_layer_to_string, enum violation_layer)
WRAP(oci_status_to_string, enum oci_status)
WRAP(oci_hook_kind_to_string, enum oci_hook_kind)
WRAP(seccomp_action_kind_to_string, enum seccomp_action_kind)
WRAP(seccomp_cmp_op_to_string, enum seccomp_cmp_op)

static int signal_from_string(const char *name)
{
        psrun_error err = {0};
        int sig = 0;
        return oci_signal_from_string(name, &sig, &err) < 0 ? -EINVAL : sig;
}

static int status_from_string(const char *name)
{
        return oci_status_from_string(name);
}

static const struct names_table tables[] = {
        {"policy network", policy_network_to_string_int, policy_network_from_string, -2,
         _POLICY_NETWORK_MAX + 2, _POLICY_NETWORK_MAX},
        {"policy backend", policy_backend_to_string_int, policy_backend_from_string, -2,
         _POLICY_BACKEND_MAX + 2, _POLICY_BACKEND_MAX},
        {"policy gvisor_platform", policy_gvisor_platform_to_string_int,
         policy_gvisor_platform_from_string, -2, _POLICY_GVISOR_PLATFORM_MAX + 2,
         _POLICY_GVISOR_PLATFORM_MAX},
        {"policy layer", policy_layer_to_string_int, policy_layer_from_string, -2,
         _POLICY_LAYER_MAX + 2, _POLICY_LAYER_MAX},
        {"policy violations", policy_violations_to_string_int, policy_violations_from_string, -2,
         _POLICY_VIOLATIONS_MAX + 2, _POLICY_VIOLATIONS_MAX},
        {"policy limits", policy_limits_to_string_int, policy_limits_from_string, -2,
         _POLICY_LIMITS_MAX + 2, _POLICY_LIMITS_MAX},
        {"violation layer", violation_layer_to_string_int, violation_layer_from_string, -2,
         _VIOLATION_LAYER_MAX + 2, _VIOLATION_LAYER_MAX},
        {"oci status", oci_status_to_string_int, status_from_string, -2, _OCI_STATUS_MAX + 2,
         _OCI_STATUS_MAX},
        {"namespace", oci_namespace_to_string, oci_namespace_from_string, 0, 0x7fffffff, 0},
        {"rlimit", oci_rlimit_to_string, oci_rlimit_from_string, -2, RLIM_NLIMITS + 2,
         RLIM_NLIMITS},
        {"signal", oci_signal_to_string, signal_from_string, 1, 31, 31},
        {"hook kind", oci_hook_kind_to_string_int, NULL, -2, _OCI_HOOK_MAX + 2, _OCI_HOOK_MAX},
        {"seccomp action", seccomp_action_kind_to_string_int, seccomp_action_kind_from_string, -2,
         32, 1},
        {"seccomp cmp", seccomp_cmp_op_to_string_int, seccomp_cmp_op_from_string, -2, 16, 7},
};

static const int clone_flags[] = {CLONE_NEWPID, CLONE_NEWNET,  CLONE_NEWNS,     CLONE_NEWIPC,
                                  CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWCGROUP, CLONE_NEWTIME};

static void check_value(const struct names_table *t, int v, int *named)
{
        const char *name = t->to_string(v);
        if (!name)
                return;
        (*named)++;
        cr_assert(name[0], "%s %d: empty name", t->what, v);
        if (t->from_string)
                cr_assert_eq(t->from_string(name), v, "%s %d: \"%s\" does not come back", t->what,
                             v, name);
}

Test(names, round_trip_every_table)
{
        for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
                const struct names_table *t = &tables[i];
                int named = 0;
                if (t->hi == 0x7fffffff) {
                        for (size_t k = 0; k < ARRAY_SIZE(clone_flags); k++)
                                check_value(t, clone_flags[k], &named);
                        cr_assert_eq(named, (int) ARRAY_SIZE(clone_flags), "%s", t->what);
                        cr_assert_null(t->to_string(0), "%s", t->what);
                } else {
                        for (int v = t->lo; v <= t->hi; v++)
                                check_value(t, v, &named);
                        cr_assert_geq(named, t->min_named, "%s: %d names", t->what, named);
                }
                if (t->from_string) {
                        cr_assert_eq(t->from_string("no-such-name"), -EINVAL, "%s", t->what);
                        cr_assert_eq(t->from_string(""), -EINVAL, "%s", t->what);
                }
        }
}

Test(names, dense_and_sparse_helpers)
{
        static const char *const dense[] = {"zero", NULL, "two"};
        static const struct name_value sparse[] = {{"a", 8}, {"b", 16}, {"alias-of-a", 8}};

        cr_assert_str_eq(enum_to_string(dense, ARRAY_SIZE(dense), 2), "two");
        cr_assert_null(enum_to_string(dense, ARRAY_SIZE(dense), 1));
        cr_assert_null(enum_to_string(dense, ARRAY_SIZE(dense), 3));
        cr_assert_null(enum_to_string(dense, ARRAY_SIZE(dense), -1));
        cr_assert_eq(enum_from_string(dense, ARRAY_SIZE(dense), "two"), 2);
        cr_assert_eq(enum_from_string(dense, ARRAY_SIZE(dense), NULL), -EINVAL);
        cr_assert_eq(enum_from_string(dense, ARRAY_SIZE(dense), "TWO"), -EINVAL);

        /* The first pair names a value; an alias is accepted on input. */
        cr_assert_str_eq(name_value_to_string(sparse, ARRAY_SIZE(sparse), 8), "a");
        cr_assert_eq(name_value_from_string(sparse, ARRAY_SIZE(sparse), "alias-of-a"), 8);
        cr_assert_null(name_value_to_string(sparse, ARRAY_SIZE(sparse), 0));
        cr_assert_eq(name_value_from_string(sparse, ARRAY_SIZE(sparse), NULL), -EINVAL);
        cr_assert(streq("x", "x") && !streq("x", "xy"));
}
