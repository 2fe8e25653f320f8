/* SPDX-License-Identifier: MIT */
/* Names and text the sandbox chose, on their way to a terminal or a parser
 * (cli/quote.c): the hostile names first. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/quote.h"

static char *quoted(const char *name)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        quote_name(f, name);
        fclose(f);
        return buf;
}

Test(quote, names_the_sandbox_chose_are_one_line_with_no_control_byte)
{
        static const struct {
                const char *name, *shown;
        } cases[] = {
                {"plain-name_1.txt", "plain-name_1.txt"},
                {"a b", "'a b'"},
                {"it's", "'it'\\''s'"},
                {"back\\slash", "'back\\slash'"},
                {"a\nb", "$'a\\nb'"},
                {"x\rINJECT", "$'x\\rINJECT'"},
                {"\x1b]0;pwned\x07", "$'\\033]0;pwned\\a'"},
                {"bad\xff\xfe", "$'bad\\377\\376'"},
                {"$'a\\nb'", "'$'\\''a\\nb'\\'''"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *q = quoted(cases[i].name);
                cr_expect_str_eq(q, cases[i].shown, "name %zu", i);
                for (const char *p = q; *p; p++)
                        cr_expect((unsigned char) *p >= 0x20 && *p != 0x7f,
                                  "a raw control byte in `%s`", q);
                free(q);
        }
}

Test(quote, bidi_controls_are_escaped)
{
        /* U+202E RIGHT-TO-LEFT OVERRIDE reorders what follows it. */
        char *q = quoted("\xe2\x80\xae"
                         "txt.exe");
        cr_expect(strncmp(q, "$'", 2) == 0, "%s", q);
        cr_expect_null(strstr(q, "\xe2\x80\xae"), "%s", q);
        free(q);
}

Test(quote, utf8_validity)
{
        cr_expect(utf8_valid("h\xc3\xa9llo", 6));
        cr_expect(!utf8_valid("\xc0\xaf", 2), "overlong");
        cr_expect(!utf8_valid("\xed\xa0\x80", 3), "surrogate");
        cr_expect(!utf8_valid("\xf4\x90\x80\x80", 4), "past U+10FFFF");
        cr_expect(!utf8_valid("\xe2\x80", 2), "cut");
}

Test(quote, json_names_round_trip_every_byte)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        quote_json_name(f, "name", "ok\n");
        fputc(' ', f);
        quote_json_name(f, "name", "bad\xff");
        fclose(f);
        cr_expect_str_eq(buf, "\"name\":\"ok\\n\" \"name_b64\":\"YmFk/w==\"");
        free(buf);
}
