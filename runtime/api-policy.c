/* SPDX-License-Identifier: MIT */
/* The public policy calls beyond making and setting one (include/psrun.h):
 * reading a key back, and setting one only where it narrows. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "runtime/api-internal.h"

PSRUN_PUBLIC int psrun_policy_get(const psrun_policy *pol, const char *key, char *buf, size_t len,
                                  psrun_error *err)
{
        if (!pol || !key || (!buf && len))
                return psrun_error_set(err, EINVAL, "policy: no policy, key or buffer given");
        _cleanup_free_ char *value = NULL;
        int r = policy_get_value(&pol->p, key, &value, err);
        if (r < 0)
                return r;
        size_t n = strlen(value);
        if (n > INT_MAX)
                return psrun_error_set(err, EOVERFLOW, "policy.%s: the value is too long", key);
        /* A value cut short could read as another valid one ("10" of
         * "1024"): one that does not fit is not written at all. */
        if (n < len)
                memcpy(buf, value, n + 1);
        else if (len)
                buf[0] = '\0';
        return (int) n;
}

PSRUN_PUBLIC int psrun_policy_narrows(const psrun_policy *pol, const char *key, const char *value,
                                      psrun_error *err)
{
        if (!pol || !key || !value)
                return psrun_error_set(err, EINVAL, "policy: no policy, key or value given");
        _cleanup_(policy_free) struct policy next = {0};
        return policy_narrowed(&pol->p, key, value, &next, err);
}

PSRUN_PUBLIC int psrun_policy_set_narrowing(psrun_policy *pol, const char *key, const char *value,
                                            psrun_error *err)
{
        if (!pol || !key || !value)
                return psrun_error_set(err, EINVAL, "policy: no policy, key or value given");
        struct policy next = {0};
        int r = policy_narrowed(&pol->p, key, value, &next, err);
        if (r < 0)
                return r;
        policy_free(&pol->p);
        pol->p = next;
        return 0;
}
