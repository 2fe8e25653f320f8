/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Strings and the enum<->string tables every layer has (policy knobs, OCI
 * statuses, namespaces, rlimits, signals). Two table shapes:
 *   dense:  names[value] for value 0..n-1 (a NULL entry is a hole);
 *   sparse: {name, value} pairs, for values that are not 0..n-1 (CLONE_NEW*
 *           flags, RLIMIT_*, signal numbers). The first pair of a value gives
 *           its name; later pairs of the same value are aliases, accepted on
 *           input only.
 * to_string gives NULL for a value without a name; from_string -EINVAL for a
 * name not in the table (or NULL).
 */

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}

const char *enum_to_string(const char *const *names, size_t n, int value);
int enum_from_string(const char *const *names, size_t n, const char *name);

struct name_value {
        const char *name;
        int value;
};

const char *name_value_to_string(const struct name_value *table, size_t n, int value);
int name_value_from_string(const struct name_value *table, size_t n, const char *name);
