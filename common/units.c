/* SPDX-License-Identifier: MIT */
/*
 * Numbers with units: sizes, durations, CPU counts, and the way back for
 * messages. Parsed by hand rather than with strtod():
 * strtod() follows the process locale (an agent embedding psrun may run under
 * de_DE, where "1.5" stops at the dot) and accepts hex, "inf" and "nan".
 */
#include "common/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"

#define NANO 1000000000ULL

struct unit {
        const char *name;
        uint64_t factor;
};

static char ascii_lower(char c)
{
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static bool ascii_caseeq(const char *a, const char *b)
{
        for (; *a && *b; a++, b++)
                if (ascii_lower(*a) != ascii_lower(*b))
                        return false;
        return *a == *b;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/*
 * "12.5" -> whole 12, frac 500000000 (billionths); fraction digits past the
 * ninth are dropped. *end points past the number. Digits are consumed even
 * after an overflow so that the caller can tell "not a number" (EINVAL) from
 * "too large" (ERANGE): the overflow is reported through *overflow.
 */
static int parse_decimal(const char *s, const char **end, uint64_t *whole, uint64_t *frac,
                         bool *overflow)
{
        uint64_t w = 0, f = 0, scale = NANO / 10;
        bool digits = false;
        const char *p = s;

        *overflow = false;
        for (; is_digit(*p); p++) {
                unsigned d = (unsigned) (*p - '0');
                if (w > (UINT64_MAX - d) / 10)
                        *overflow = true;
                else
                        w = w * 10 + d;
                digits = true;
        }
        if (*p == '.') {
                p++;
                if (!is_digit(*p))
                        return -EINVAL;
                for (; is_digit(*p); p++) {
                        f += (uint64_t) (*p - '0') * scale;
                        scale /= 10;
                }
                digits = true;
        }
        if (!digits)
                return -EINVAL;
        *end = p;
        *whole = w;
        *frac = f;
        return 0;
}

/* The unit follows the digits directly: "1 G" is refused, as a space
 * would be anywhere else in a number. */
static const struct unit *find_unit(const struct unit *units, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (ascii_caseeq(units[i].name, name))
                        return &units[i];
        return NULL;
}

/* whole * factor + frac * factor / 10^9, rounded down; -ERANGE past 2^64-1. */
static int scale_value(uint64_t whole, uint64_t frac, uint64_t factor, uint64_t *ret)
{
        unsigned __int128 v = (unsigned __int128) whole * factor;
        v += (unsigned __int128) frac * factor / NANO;
        if (v > UINT64_MAX)
                return -ERANGE;
        *ret = (uint64_t) v;
        return 0;
}

/* Binary units: "k", "kb" and "kib" all mean 1024. */
static const struct unit size_units[] = {
        {"", 1},
        {"b", 1},
        {"k", 1ULL << 10},
        {"kb", 1ULL << 10},
        {"kib", 1ULL << 10},
        {"m", 1ULL << 20},
        {"mb", 1ULL << 20},
        {"mib", 1ULL << 20},
        {"g", 1ULL << 30},
        {"gb", 1ULL << 30},
        {"gib", 1ULL << 30},
        {"t", 1ULL << 40},
        {"tb", 1ULL << 40},
        {"tib", 1ULL << 40},
        {"p", 1ULL << 50},
        {"pb", 1ULL << 50},
        {"pib", 1ULL << 50},
        {"e", 1ULL << 60},
        {"eb", 1ULL << 60},
        {"eib", 1ULL << 60},
};

int parse_size(const char *s, uint64_t *ret)
{
        const char *end;
        uint64_t whole, frac;
        bool overflow;

        if (!s || parse_decimal(s, &end, &whole, &frac, &overflow) < 0)
                return -EINVAL;
        const struct unit *u = find_unit(size_units, ARRAY_SIZE(size_units), end);
        if (!u)
                return -EINVAL;
        /* A fraction of a byte means nothing: "1.5" needs a unit. */
        if (u->factor == 1 && frac != 0)
                return -EINVAL;
        if (overflow)
                return -ERANGE;
        return scale_value(whole, frac, u->factor, ret);
}

/* A bare number is seconds. */
static const struct unit duration_units[] = {
        {"", 1000},   {"ms", 1},      {"s", 1000},    {"sec", 1000},
        {"m", 60000}, {"min", 60000}, {"h", 3600000}, {"d", 86400000},
};

int parse_duration_ms(const char *s, uint64_t *ret)
{
        const char *end;
        uint64_t whole, frac;
        bool overflow;

        if (!s || parse_decimal(s, &end, &whole, &frac, &overflow) < 0)
                return -EINVAL;
        const struct unit *u = find_unit(duration_units, ARRAY_SIZE(duration_units), end);
        if (!u)
                return -EINVAL;
        if (overflow)
                return -ERANGE;
        return scale_value(whole, frac, u->factor, ret);
}

int parse_cpus(const char *s, double *ret)
{
        const char *end;
        uint64_t whole, frac;
        bool overflow;

        if (!s || parse_decimal(s, &end, &whole, &frac, &overflow) < 0 || *end != '\0')
                return -EINVAL;
        if (overflow)
                return -ERANGE;
        *ret = (double) whole + (double) frac / (double) NANO;
        return 0;
}

int parse_uint64(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!s || *s == '\0')
                return -EINVAL;
        for (const char *p = s; *p; p++)
                if (!is_digit(*p))
                        return -EINVAL;
        for (; *s; s++) {
                unsigned d = (unsigned) (*s - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

void format_size(uint64_t bytes, char *buf, size_t size)
{
        static const char prefixes[] = "KMGTPE";
        size_t i = 0;

        while (i < sizeof(prefixes) - 1 && bytes >= 1024 && bytes % 1024 == 0) {
                bytes /= 1024;
                i++;
        }
        if (i == 0)
                snprintf(buf, size, "%" PRIu64, bytes);
        else
                snprintf(buf, size, "%" PRIu64 "%c", bytes, prefixes[i - 1]);
}

/* Largest unit that divides evenly first. */
static const struct unit duration_formats[] = {
        {"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1},
};

void format_duration_ms(uint64_t ms, char *buf, size_t size)
{
        for (size_t i = 0; i < ARRAY_SIZE(duration_formats); i++)
                if (ms >= duration_formats[i].factor && ms % duration_formats[i].factor == 0) {
                        snprintf(buf, size, "%" PRIu64 "%s", ms / duration_formats[i].factor,
                                 duration_formats[i].name);
                        return;
                }
        snprintf(buf, size, "0s");
}

void format_uint64(uint64_t v, char *buf, size_t size)
{
        snprintf(buf, size, "%" PRIu64, v);
}

/* Exactly what parse_cpus read: it keeps nine decimals, so nine printed
 * (trailing zeros dropped) give the same double back. */
void format_cpus(double cpus, char *buf, size_t size)
{
        snprintf(buf, size, "%.9f", cpus);
        char *end = buf + strlen(buf);
        while (end > buf && end[-1] == '0')
                *--end = '\0';
        if (end > buf && end[-1] == '.')
                *--end = '\0';
}
