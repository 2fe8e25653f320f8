/* SPDX-License-Identifier: MIT */
/*
 * The MCP server's JSON reader (cli/mcp/json.c): hostile documents first,
 * then what a JSON-RPC message needs.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/mcp/json.h"

static int parse(const char *text, struct mj **v, psrun_error *err)
{
        return mj_parse(text, strlen(text), v, err);
}

static void rejects(const char *text, const char *why)
{
        struct mj *v = NULL;
        psrun_error err = {0};
        cr_assert_lt(parse(text, &v, &err), 0, "accepted `%s`", text);
        cr_assert_null(v);
        cr_assert_not_null(strstr(err.msg, why), "`%s`: `%s` lacks `%s`", text, err.msg, why);
        cr_assert_null(strchr(err.msg, '\n'));
}

Test(mcp_json, rejects_what_json_does_not_allow)
{
        rejects("", "unexpected end");
        rejects("{\"a\":1,}", "expected a string key");
        rejects("[1,]", "unexpected character");
        rejects("{'a':1}", "expected a string key");
        rejects("{\"a\":1} x", "trailing data");
        rejects("{\"a\":1,\"a\":2}", "duplicate key");
        rejects("01", "leading zero");
        rejects("1.", "bad number");
        rejects("-", "bad number");
        rejects("1e999", "out of range");
        rejects("NaN", "unexpected character");
        rejects("\"a\tb\"", "control character");
        rejects("\"\\x\"", "bad escape");
        rejects("\"\\ud800\"", "lone surrogate");
        rejects("\"\\udc00\"", "lone surrogate");
        rejects("\"\\ud800\\u0041\"", "lone surrogate");
        rejects("\"\xff\"", "invalid UTF-8");
        rejects("\"\xc0\xaf\"", "invalid UTF-8");         /* overlong '/' */
        rejects("\"\xed\xa0\x80\"", "invalid UTF-8");     /* an encoded surrogate */
        rejects("\"\xf4\x90\x80\x80\"", "invalid UTF-8"); /* past U+10FFFF */
        rejects("{\"a\\u0000b\":1}", "NUL in key");
        rejects("\"abc", "unterminated");
        rejects("tru", "unexpected character");
}

Test(mcp_json, nesting_is_bounded)
{
        char deep[2 * MJ_MAX_DEPTH + 8];
        size_t n = 0;
        for (int i = 0; i < MJ_MAX_DEPTH + 1; i++)
                deep[n++] = '[';
        for (int i = 0; i < MJ_MAX_DEPTH + 1; i++)
                deep[n++] = ']';
        deep[n] = '\0';
        rejects(deep, "nested too deeply");
        /* One level less is fine. */
        struct mj *v = NULL;
        psrun_error err = {0};
        cr_assert_eq(mj_parse(deep + 1, n - 2, &v, &err), 0, "%s", err.msg);
        mj_free(v);
}

Test(mcp_json, a_nul_in_the_buffer_is_not_the_end)
{
        struct mj *v = NULL;
        psrun_error err = {0};
        cr_assert_lt(mj_parse("1\0 2", 4, &v, &err), 0);
        cr_assert_lt(mj_parse("\"a\0b\"", 5, &v, &err), 0);
}

Test(mcp_json, values_and_lookup)
{
        struct mj *v = NULL;
        psrun_error err = {0};
        const char *text =
                " {\"id\": 7, \"s\": \"a\\u00e9\\ud83d\\ude00\\n\\u0000z\", \"f\": -1.5e2,"
                " \"t\": true, \"n\": null, \"a\": [1, \"x\", {}], \"big\": "
                "123456789012345678901234567890} ";
        cr_assert_eq(parse(text, &v, &err), 0, "%s", err.msg);
        cr_assert_eq(v->kind, MJ_OBJECT);
        const struct mj *id = mj_get(v, "id");
        cr_assert(id && id->is_integer && id->integer == 7);
        cr_assert_eq(id->text_len, 1);
        const struct mj *s = mj_get(v, "s");
        cr_assert_eq(s->len, 10);
        cr_assert_eq(memcmp(s->str, "a\xc3\xa9\xf0\x9f\x98\x80\n\0z", 10), 0);
        cr_assert_null(mj_get_string(v, "f"));
        cr_assert_float_eq(mj_get(v, "f")->number, -150.0, 1e-9);
        cr_assert_not(mj_get(v, "f")->is_integer);
        cr_assert(mj_get(v, "t")->boolean);
        cr_assert_eq(mj_get(v, "n")->kind, MJ_NULL);
        cr_assert_eq(mj_get(v, "a")->len, 3);
        cr_assert_eq(mj_get(v, "a")->items[2].kind, MJ_OBJECT);
        /* Too big for int64: a number, but not an integer id. */
        cr_assert_not(mj_get(v, "big")->is_integer);
        cr_assert_null(mj_get(v, "missing"));
        cr_assert_null(mj_get(mj_get(v, "a"), "x"));
        mj_free(v);
}

Test(mcp_json, text_or_binary)
{
        cr_assert(mj_is_text("hello\n", 6));
        cr_assert(mj_is_text("\xc3\xa9", 2));
        cr_assert_not(mj_is_text("a\0b", 3));
        cr_assert_not(mj_is_text("\xff", 1));
        cr_assert_not(mj_is_text("\xc3", 1)); /* cut short */
}
