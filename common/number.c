/* SPDX-License-Identifier: MIT */
/* One strict decimal reader for every number psrun takes from argv. */
#include "common/number.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SHOWN_CHARS 64

/* Magnitude of the digits in s (no sign), or -EINVAL / -ERANGE past
 * UINT64_MAX. Digits are all read first, so "99999999999999999999x" is
 * EINVAL (not a number), not ERANGE. */
static int parse_digits(const char *s, uint64_t *ret)
{
        uint64_t v = 0;
        bool overflow = false;

        if (*s == '\0')
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                unsigned d = (unsigned) (*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        overflow = true;
                else
                        v = v * 10 + d;
        }
        if (overflow)
                return -ERANGE;
        *ret = v;
        return 0;
}

int number_parse(const char *s, int64_t min, int64_t max, int64_t *ret)
{
        uint64_t mag;
        bool negative;
        int r;

        if (!s)
                return -EINVAL;
        negative = s[0] == '-';
        if (negative && min >= 0)
                return -EINVAL;
        r = parse_digits(s + negative, &mag);
        if (r < 0)
                return r;
        int64_t v;
        if (negative) {
                if (mag > (uint64_t) INT64_MAX + 1)
                        return -ERANGE;
                v = mag == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) mag;
        } else {
                if (mag > (uint64_t) INT64_MAX)
                        return -ERANGE;
                v = (int64_t) mag;
        }
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int number_parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        uint64_t v;

        if (!s)
                return -EINVAL;
        int r = parse_digits(s, &v);
        if (r < 0)
                return r;
        if (v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

const char *number_shown(const char *s, char *buf, size_t size)
{
        size_t o = 0, n = 0;

        if (size == 0)
                return buf;
        for (; s && *s && o + 8 < size; s++, n++) {
                unsigned char c = (unsigned char) *s;
                if (n == SHOWN_CHARS) {
                        memcpy(buf + o, "...", 3);
                        o += 3;
                        break;
                }
                if (c < 0x20 || c == 0x7f || c == '`' || c == '\\')
                        o += (size_t) snprintf(buf + o, size - o, "\\x%02x", c);
                else
                        buf[o++] = (char) c;
        }
        buf[o] = '\0';
        return buf;
}

int number_parse_option(const char *option, const char *s, int64_t min, int64_t max, int64_t *ret,
                        psrun_error *err)
{
        char shown[SHOWN_CHARS * 4 + 8];
        int r = number_parse(s, min, max, ret);

        if (r == -ERANGE)
                return psrun_error_set(err, ERANGE,
                                       "%s: `%s` is out of range (%" PRId64 "..%" PRId64 ")",
                                       option, number_shown(s, shown, sizeof(shown)), min, max);
        if (r < 0)
                return psrun_error_set(err, EINVAL, "%s: `%s` is not a decimal number", option,
                                       number_shown(s, shown, sizeof(shown)));
        return 0;
}
