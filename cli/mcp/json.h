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
#include <stdio.h>

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

/* The length of the well-formed UTF-8 character at s, 0 if there is none. */
size_t mj_utf8_len(const char *s, size_t avail);
/* Whether len bytes are well-formed UTF-8 (NULs allowed). */
bool mj_is_utf8(const char *s, size_t len);

/*
 * The writer side of what the MCP server returns, bounded: what a JSON
 * string holding bytes is once escaped (a control byte is 6 bytes, `\u001b`),
 * so that a cap holds for what goes on the wire, not only for the bytes.
 * The escapes are common/json.c's (json_write_bytes), UTF-8 read strictly,
 * so these lengths are never below what json_write_bytes writes. Nothing is
 * ever cut inside a character.
 */
/* The escaped length of len bytes (without the quotes). */
size_t mj_escaped_len(const char *s, size_t len);
/* How many bytes of s make the longest prefix whose escaped form fits in
 * max bytes; *escaped (may be NULL) gets that form's length. */
size_t mj_escaped_prefix(const char *s, size_t len, size_t max, size_t *escaped);
/* How many bytes make the longest suffix whose escaped form fits in max. */
size_t mj_escaped_suffix(const char *s, size_t len, size_t max);
/* Write the escaped form of the longest prefix that fits in max bytes
 * (without quotes); returns how many bytes of s it took. */
size_t mj_write_escaped(FILE *f, const char *s, size_t len, size_t max);
