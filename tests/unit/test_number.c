/* SPDX-License-Identifier: MIT */
/*
 * The one strict number reader for argv (common/number.c): the hostile
 * values of issue 10 are refused, never wrapped or read half-way, and the
 * error is one line naming the option.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/number.h"

TestSuite(number, .timeout = 30);

struct number_case {
        const char *text;
        int64_t min, max;
        int ret;
        int64_t value;
};

#define U32_ID_MAX ((int64_t) UINT32_MAX - 1)

static const struct number_case cases[] = {
        /* uid-sized fields: the values exec --user took wrongly. */
        {"4294967296", 0, U32_ID_MAX, -ERANGE, 0},
        {"4294967295", 0, U32_ID_MAX, -ERANGE, 0},
        {"4294967294", 0, U32_ID_MAX, 0, 4294967294LL},
        {"-1", 0, U32_ID_MAX, -EINVAL, 0},
        {"0x3e8", 0, U32_ID_MAX, -EINVAL, 0},
        {"99999999999", 0, U32_ID_MAX, -ERANGE, 0},
        {"1e3", 0, U32_ID_MAX, -EINVAL, 0},
        {"65536x", 0, U32_ID_MAX, -EINVAL, 0},
        {"1000", 0, U32_ID_MAX, 0, 1000},
        {"0", 0, U32_ID_MAX, 0, 0},
        {"007", 0, U32_ID_MAX, 0, 7}, /* decimal, not octal */
        /* What strtol would take and we do not. */
        {"", 0, 10, -EINVAL, 0},
        {" 1", 0, 10, -EINVAL, 0},
        {"1 ", 0, 10, -EINVAL, 0},
        {"+1", 0, 10, -EINVAL, 0},
        {"1\n", 0, 10, -EINVAL, 0},
        {"0b1", 0, 10, -EINVAL, 0},
        {"1.0", 0, 10, -EINVAL, 0},
        {"-", -1, 10, -EINVAL, 0},
        {"--1", -1, 10, -EINVAL, 0},
        {"-0x1", -1, 10, -EINVAL, 0},
        {"١", 0, 10, -EINVAL, 0}, /* a non-ASCII digit */
        /* Signs only where the range allows them. */
        {"-1", -1, 10, 0, -1},
        {"-2", -1, 10, -ERANGE, 0},
        {"-0", -1, 10, 0, 0},
        {"11", -1, 10, -ERANGE, 0},
        /* The edges of 64 bits, no wrap. */
        {"9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX},
        {"9223372036854775808", INT64_MIN, INT64_MAX, -ERANGE, 0},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN},
        {"-9223372036854775809", INT64_MIN, INT64_MAX, -ERANGE, 0},
        {"18446744073709551616", INT64_MIN, INT64_MAX, -ERANGE, 0},
        {"99999999999999999999999999999999", INT64_MIN, INT64_MAX, -ERANGE, 0},
        {"99999999999999999999999999999999x", INT64_MIN, INT64_MAX, -EINVAL, 0},
};

Test(number, cases)
{
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct number_case *c = &cases[i];
                int64_t v = 12345;
                int r = number_parse(c->text, c->min, c->max, &v);
                cr_expect_eq(r, c->ret, "number_parse(\"%s\", %lld, %lld) = %d, want %d", c->text,
                             (long long) c->min, (long long) c->max, r, c->ret);
                if (c->ret == 0)
                        cr_expect_eq(v, c->value, "\"%s\" -> %lld", c->text, (long long) v);
                else
                        cr_expect_eq(v, 12345, "\"%s\" wrote on failure", c->text);
        }
}

Test(number, null_and_u64)
{
        int64_t v;
        uint64_t u = 7;
        cr_assert_eq(number_parse(NULL, 0, 1, &v), -EINVAL);
        cr_assert_eq(number_parse_u64(NULL, 1, &u), -EINVAL);
        cr_assert_eq(number_parse_u64("18446744073709551615", UINT64_MAX, &u), 0);
        cr_assert_eq(u, UINT64_MAX);
        cr_assert_eq(number_parse_u64("18446744073709551616", UINT64_MAX, &u), -ERANGE);
        cr_assert_eq(number_parse_u64("-1", UINT64_MAX, &u), -EINVAL);
        cr_assert_eq(number_parse_u64("11", 10, &u), -ERANGE);
}

static void assert_one_line(const char *msg)
{
        for (const char *c = msg; *c; c++)
                cr_assert_geq((unsigned char) *c, 0x20, "control character in: %s", msg);
}

Test(number, option_messages_name_the_option)
{
        psrun_error err = {0};
        int64_t v;
        cr_assert_eq(number_parse_option("--preserve-fds", "0x3e8", 0, 1024, &v, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "--preserve-fds: `0x3e8` is not a decimal number");
        cr_assert_eq(number_parse_option("--preserve-fds", "99999999999", 0, 1024, &v, &err),
                     -ERANGE);
        cr_assert_str_eq(err.msg, "--preserve-fds: `99999999999` is out of range (0..1024)");
        cr_assert_eq(number_parse_option("--result-fd", "1\n2", 0, 10, &v, &err), -EINVAL);
        assert_one_line(err.msg);
        cr_assert(strstr(err.msg, "--result-fd: "), "%s", err.msg);
}

Test(number, long_values_are_cut)
{
        char big[3000];
        memset(big, '9', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        psrun_error err = {0};
        int64_t v;
        cr_assert_eq(number_parse_option("--interval", big, 0, 10, &v, &err), -ERANGE);
        cr_assert_lt(strlen(err.msg), 200, "%s", err.msg);
        cr_assert(strstr(err.msg, "...`"), "%s", err.msg);
        char shown[32];
        cr_assert_str_eq(number_shown("a\x1b"
                                      "b",
                                      shown, sizeof(shown)),
                         "a\\x1bb");
}
