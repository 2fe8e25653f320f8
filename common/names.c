/* SPDX-License-Identifier: MIT */
#include "common/names.h"

#include <errno.h>

const char *enum_to_string(const char *const *names, size_t n, int value)
{
        return value >= 0 && (size_t) value < n ? names[value] : NULL;
}

int enum_from_string(const char *const *names, size_t n, const char *name)
{
        for (size_t i = 0; name && i < n; i++)
                if (names[i] && streq(names[i], name))
                        return (int) i;
        return -EINVAL;
}

const char *name_value_to_string(const struct name_value *table, size_t n, int value)
{
        for (size_t i = 0; i < n; i++)
                if (table[i].value == value)
                        return table[i].name;
        return NULL;
}

int name_value_from_string(const struct name_value *table, size_t n, const char *name)
{
        for (size_t i = 0; name && i < n; i++)
                if (streq(table[i].name, name))
                        return table[i].value;
        return -EINVAL;
}
