/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A small strict JSON reader for the MCP server's messages (RFC 8259: no
 * comments, no trailing commas, no duplicate keys, UTF-8 only, no lone
 * surrogates). Pure: a buffer in, a tree out, no syscalls. The writer side
 * is common/json.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define MJ_MAX_DEPTH 64

enum mj_kind { MJ_NULL, MJ_BOOL, MJ_NUMBER, MJ_STRING, MJ_ARRAY, MJ_OBJECT };

struct mj {
        enum mj_kind kind;
        bool boolean;
        double number;
        bool is_integer; /* a number written without fraction or exponent */
        int64_t integer; /* when is_integer and it fits */
        char *str;       /* MJ_STRING: NUL-terminated (may also hold NULs) */
        size_t len;      /* MJ_STRING: bytes; MJ_ARRAY/MJ_OBJECT: items */
        char **keys;     /* MJ_OBJECT */
        struct mj *items;
        const char *text; /* where the value starts in the parsed buffer */
        size_t text_len;  /* and its length: the raw JSON, to copy it on */
};

/* Parse exactly one JSON value (surrounding whitespace allowed). */
int mj_parse(const char *buf, size_t len, struct mj **ret, psrun_error *err);
void mj_free(struct mj *v);

/* The member key of an object, NULL when absent or v is not an object. */
const struct mj *mj_get(const struct mj *v, const char *key);
/* The string member key, NULL when absent or not a string. */
const char *mj_get_string(const struct mj *v, const char *key);
const char *mj_kind_name(enum mj_kind kind);
/* Whether len bytes are well-formed UTF-8 without NUL bytes (text an LLM
 * can be shown as it is). */
bool mj_is_text(const char *s, size_t len);
