/* SPDX-License-Identifier: MIT */
#include "cli/mcp/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct reader {
        const char *buf;
        size_t len, pos;
        psrun_error *err;
};

static int fail_at(struct reader *r, const char *what)
{
        return psrun_error_set(r->err, EINVAL, "JSON: %s at offset %zu", what, r->pos);
}

static void skip_ws(struct reader *r)
{
        while (r->pos < r->len && strchr(" \t\r\n", r->buf[r->pos]) && r->buf[r->pos])
                r->pos++;
}

static bool literal(struct reader *r, const char *word)
{
        size_t n = strlen(word);
        if (r->len - r->pos < n || memcmp(r->buf + r->pos, word, n) != 0)
                return false;
        r->pos += n;
        return true;
}

static int hex4(struct reader *r, unsigned *ret)
{
        if (r->len - r->pos < 4)
                return fail_at(r, "truncated \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; i++) {
                char c = r->buf[r->pos++];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (unsigned) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (unsigned) (c - 'A' + 10);
                else
                        return fail_at(r, "bad \\u escape");
        }
        *ret = v;
        return 0;
}

static size_t put_utf8(char *out, unsigned cp)
{
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xc0 | (cp >> 6));
                out[1] = (char) (0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char) (0xe0 | (cp >> 12));
                out[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char) (0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char) (0xf0 | (cp >> 18));
        out[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char) (0x80 | (cp & 0x3f));
        return 4;
}

/* Length of a well-formed UTF-8 sequence (no overlongs, no surrogates, at
 * most U+10FFFF) at p, 0 if there is none. */
static size_t utf8_valid(const unsigned char *p, size_t avail)
{
        if (p[0] < 0x80)
                return 1;
        size_t n;
        unsigned lo = 0x80, hi = 0xbf;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                n = 3;
                if (p[0] == 0xe0)
                        lo = 0xa0;
                else if (p[0] == 0xed)
                        hi = 0x9f;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                n = 4;
                if (p[0] == 0xf0)
                        lo = 0x90;
                else if (p[0] == 0xf4)
                        hi = 0x8f;
        } else
                return 0;
        if (n > avail || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return n;
}

static int parse_string(struct reader *r, char **ret, size_t *ret_len)
{
        r->pos++; /* the opening quote */
        /* The decoded string is never longer than its source. */
        size_t start = r->pos;
        char *out = malloc(r->len - start + 1);
        if (!out)
                return psrun_error_errno(r->err, ENOMEM, "JSON");
        size_t n = 0;
        for (;;) {
                if (r->pos >= r->len) {
                        free(out);
                        return fail_at(r, "unterminated string");
                }
                unsigned char c = (unsigned char) r->buf[r->pos];
                if (c == '"') {
                        r->pos++;
                        break;
                }
                if (c < 0x20) {
                        free(out);
                        return fail_at(r, "control character in string");
                }
                if (c != '\\') {
                        size_t k = utf8_valid((const unsigned char *) r->buf + r->pos,
                                              r->len - r->pos);
                        if (k == 0) {
                                free(out);
                                return fail_at(r, "invalid UTF-8 in string");
                        }
                        memcpy(out + n, r->buf + r->pos, k);
                        n += k;
                        r->pos += k;
                        continue;
                }
                r->pos++;
                if (r->pos >= r->len) {
                        free(out);
                        return fail_at(r, "unterminated string");
                }
                char e = r->buf[r->pos++];
                static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
                const char *hit = e ? strchr(from, e) : NULL;
                if (hit) {
                        out[n++] = to[hit - from];
                        continue;
                }
                if (e != 'u') {
                        free(out);
                        return fail_at(r, "bad escape in string");
                }
                unsigned cp, lo;
                if (hex4(r, &cp) < 0) {
                        free(out);
                        return -EINVAL;
                }
                if (cp >= 0xdc00 && cp <= 0xdfff) {
                        free(out);
                        return fail_at(r, "lone surrogate in string");
                }
                if (cp >= 0xd800 && cp <= 0xdbff) {
                        if (!literal(r, "\\u") || hex4(r, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
                                free(out);
                                return fail_at(r, "lone surrogate in string");
                        }
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                n += put_utf8(out + n, cp);
        }
        out[n] = '\0';
        *ret = out;
        *ret_len = n;
        return 0;
}

static int parse_number(struct reader *r, struct mj *v)
{
        size_t start = r->pos;
        bool integer = true;
        if (r->buf[r->pos] == '-')
                r->pos++;
        if (r->pos >= r->len || r->buf[r->pos] < '0' || r->buf[r->pos] > '9')
                return fail_at(r, "bad number");
        if (r->buf[r->pos] == '0' && r->pos + 1 < r->len && r->buf[r->pos + 1] >= '0' &&
            r->buf[r->pos + 1] <= '9')
                return fail_at(r, "leading zero in number");
        while (r->pos < r->len && r->buf[r->pos] >= '0' && r->buf[r->pos] <= '9')
                r->pos++;
        if (r->pos < r->len && r->buf[r->pos] == '.') {
                integer = false;
                r->pos++;
                if (r->pos >= r->len || r->buf[r->pos] < '0' || r->buf[r->pos] > '9')
                        return fail_at(r, "bad number");
                while (r->pos < r->len && r->buf[r->pos] >= '0' && r->buf[r->pos] <= '9')
                        r->pos++;
        }
        if (r->pos < r->len && (r->buf[r->pos] == 'e' || r->buf[r->pos] == 'E')) {
                integer = false;
                r->pos++;
                if (r->pos < r->len && (r->buf[r->pos] == '+' || r->buf[r->pos] == '-'))
                        r->pos++;
                if (r->pos >= r->len || r->buf[r->pos] < '0' || r->buf[r->pos] > '9')
                        return fail_at(r, "bad number");
                while (r->pos < r->len && r->buf[r->pos] >= '0' && r->buf[r->pos] <= '9')
                        r->pos++;
        }
        char tmp[64];
        size_t n = r->pos - start;
        if (n >= sizeof(tmp))
                return fail_at(r, "number too long");
        memcpy(tmp, r->buf + start, n);
        tmp[n] = '\0';
        v->kind = MJ_NUMBER;
        v->number = strtod(tmp, NULL);
        if (!isfinite(v->number))
                return fail_at(r, "number out of range");
        if (integer) {
                errno = 0;
                long long ll = strtoll(tmp, NULL, 10);
                v->is_integer = errno == 0;
                v->integer = ll;
        }
        return 0;
}

static int parse_value(struct reader *r, struct mj *v, int depth);

static int grow(struct reader *r, struct mj *v, size_t *cap, bool with_keys)
{
        if (v->len < *cap)
                return 0;
        size_t ncap = *cap ? *cap * 2 : 4;
        struct mj *items = realloc(v->items, ncap * sizeof(*items));
        if (!items)
                return psrun_error_errno(r->err, ENOMEM, "JSON");
        v->items = items;
        if (with_keys) {
                char **keys = realloc(v->keys, ncap * sizeof(*keys));
                if (!keys)
                        return psrun_error_errno(r->err, ENOMEM, "JSON");
                v->keys = keys;
        }
        *cap = ncap;
        return 0;
}

static int parse_container(struct reader *r, struct mj *v, int depth, bool object)
{
        if (depth >= MJ_MAX_DEPTH)
                return fail_at(r, "nested too deeply");
        v->kind = object ? MJ_OBJECT : MJ_ARRAY;
        r->pos++;
        size_t cap = 0;
        skip_ws(r);
        if (r->pos < r->len && r->buf[r->pos] == (object ? '}' : ']')) {
                r->pos++;
                return 0;
        }
        for (;;) {
                int e = grow(r, v, &cap, object);
                if (e < 0)
                        return e;
                skip_ws(r);
                char *key = NULL;
                if (object) {
                        size_t klen;
                        if (r->pos >= r->len || r->buf[r->pos] != '"')
                                return fail_at(r, "expected a string key");
                        e = parse_string(r, &key, &klen);
                        if (e < 0)
                                return e;
                        if (strlen(key) != klen) {
                                free(key);
                                return fail_at(r, "NUL in key");
                        }
                        for (size_t i = 0; i < v->len; i++)
                                if (strcmp(v->keys[i], key) == 0) {
                                        free(key);
                                        return fail_at(r, "duplicate key");
                                }
                        skip_ws(r);
                        if (r->pos >= r->len || r->buf[r->pos] != ':') {
                                free(key);
                                return fail_at(r, "expected `:`");
                        }
                        r->pos++;
                        v->keys[v->len] = key;
                }
                memset(&v->items[v->len], 0, sizeof(v->items[0]));
                v->len++;
                e = parse_value(r, &v->items[v->len - 1], depth + 1);
                if (e < 0)
                        return e;
                skip_ws(r);
                if (r->pos < r->len && r->buf[r->pos] == ',') {
                        r->pos++;
                        continue;
                }
                if (r->pos < r->len && r->buf[r->pos] == (object ? '}' : ']')) {
                        r->pos++;
                        return 0;
                }
                return fail_at(r, object ? "expected `,` or `}`" : "expected `,` or `]`");
        }
}

static int parse_value(struct reader *r, struct mj *v, int depth)
{
        skip_ws(r);
        if (r->pos >= r->len)
                return fail_at(r, "unexpected end");
        size_t start = r->pos;
        int e = 0;
        char c = r->buf[r->pos];
        if (c == '{' || c == '[')
                e = parse_container(r, v, depth, c == '{');
        else if (c == '"') {
                v->kind = MJ_STRING;
                e = parse_string(r, &v->str, &v->len);
        } else if (c == '-' || (c >= '0' && c <= '9'))
                e = parse_number(r, v);
        else if (literal(r, "true")) {
                v->kind = MJ_BOOL;
                v->boolean = true;
        } else if (literal(r, "false"))
                v->kind = MJ_BOOL;
        else if (literal(r, "null"))
                v->kind = MJ_NULL;
        else
                e = fail_at(r, "unexpected character");
        v->text = r->buf + start;
        v->text_len = r->pos - start;
        return e;
}

static void free_contents(struct mj *v)
{
        for (size_t i = 0; v->items && i < v->len; i++) {
                free_contents(&v->items[i]);
                if (v->keys)
                        free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
        free(v->str);
}

void mj_free(struct mj *v)
{
        if (!v)
                return;
        free_contents(v);
        free(v);
}

int mj_parse(const char *buf, size_t len, struct mj **ret, psrun_error *err)
{
        struct reader r = {.buf = buf, .len = len, .err = err};
        struct mj *v = calloc(1, sizeof(*v));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "JSON");
        int e = parse_value(&r, v, 0);
        if (e >= 0) {
                skip_ws(&r);
                if (r.pos != r.len)
                        e = fail_at(&r, "trailing data");
        }
        if (e < 0) {
                mj_free(v);
                return e;
        }
        *ret = v;
        return 0;
}

const struct mj *mj_get(const struct mj *v, const char *key)
{
        if (!v || v->kind != MJ_OBJECT)
                return NULL;
        for (size_t i = 0; i < v->len; i++)
                if (strcmp(v->keys[i], key) == 0)
                        return &v->items[i];
        return NULL;
}

const char *mj_get_string(const struct mj *v, const char *key)
{
        const struct mj *m = mj_get(v, key);
        return m && m->kind == MJ_STRING ? m->str : NULL;
}

const char *mj_kind_name(enum mj_kind kind)
{
        static const char *const names[] = {
                [MJ_NULL] = "null",     [MJ_BOOL] = "boolean", [MJ_NUMBER] = "number",
                [MJ_STRING] = "string", [MJ_ARRAY] = "array",  [MJ_OBJECT] = "object",
        };
        return (size_t) kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

bool mj_is_text(const char *s, size_t len)
{
        for (size_t i = 0; i < len;) {
                size_t k = s[i] ? utf8_valid((const unsigned char *) s + i, len - i) : 0;
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

size_t mj_utf8_len(const char *s, size_t avail)
{
        return avail ? utf8_valid((const unsigned char *) s, avail) : 0;
}

bool mj_is_utf8(const char *s, size_t len)
{
        for (size_t i = 0; i < len;) {
                size_t k = utf8_valid((const unsigned char *) s + i, len - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

/* As common/json.c: characters valid in JSON raw but not for every reader
 * (C1 controls, U+2028/U+2029, the BOM, U+FFFE/U+FFFF) are escaped. */
static bool escaped_code_point(unsigned cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
               cp == 0xfffe || cp == 0xffff;
}

static unsigned code_point(const unsigned char *p, size_t n)
{
        unsigned cp = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (size_t i = 1; i < n; i++)
                cp = cp << 6 | (p[i] & 0x3f);
        return cp;
}

/*
 * One unit of a JSON string's escaping at p: how many source bytes it takes
 * (a character, or one byte that is not well-formed UTF-8) and, in *out,
 * what it is written as (at most 6 bytes, *out_len of them). The escapes
 * are those of common/json.c, with UTF-8 read strictly, so the length
 * counted here is never less than what json_write_bytes writes.
 */
static size_t escape_unit(const unsigned char *p, size_t avail, char out[7], size_t *out_len)
{
        unsigned char ch = p[0];
        if (ch == '"' || ch == '\\' || ch == '\n' || ch == '\t' || ch == '\r') {
                out[0] = '\\';
                out[1] = ch == '\n' ? 'n' : ch == '\t' ? 't' : ch == '\r' ? 'r' : (char) ch;
                *out_len = 2;
                return 1;
        }
        if (ch < 0x20 || ch == 0x7f) {
                *out_len = (size_t) snprintf(out, 7, "\\u%04x", ch);
                return 1;
        }
        size_t n = utf8_valid(p, avail);
        if (n == 0) {
                /* Not UTF-8: the byte as U+00XX, as common/json.c does. */
                *out_len = (size_t) snprintf(out, 7, "\\u%04x", ch);
                return 1;
        }
        unsigned cp = n > 1 ? code_point(p, n) : ch;
        if (n > 1 && escaped_code_point(cp)) {
                *out_len = (size_t) snprintf(out, 7, "\\u%04x", cp);
                return n;
        }
        memcpy(out, p, n);
        *out_len = n;
        return n;
}

size_t mj_escaped_len(const char *s, size_t len)
{
        size_t total = 0;
        char unit[7];
        for (size_t i = 0, w; i < len; total += w)
                i += escape_unit((const unsigned char *) s + i, len - i, unit, &w);
        return total;
}

size_t mj_escaped_prefix(const char *s, size_t len, size_t max, size_t *escaped)
{
        size_t i = 0, total = 0, w;
        char unit[7];
        while (i < len) {
                size_t n = escape_unit((const unsigned char *) s + i, len - i, unit, &w);
                if (total + w > max)
                        break;
                total += w;
                i += n;
        }
        if (escaped)
                *escaped = total;
        return i;
}

size_t mj_escaped_suffix(const char *s, size_t len, size_t max)
{
        /* Units are found going forward (UTF-8 is read from a lead byte):
         * the suffix starts at the first unit boundary from which the rest
         * fits. */
        size_t total = mj_escaped_len(s, len), i = 0, w;
        char unit[7];
        while (i < len && total > max) {
                i += escape_unit((const unsigned char *) s + i, len - i, unit, &w);
                total -= w;
        }
        return len - i;
}

size_t mj_write_escaped(FILE *f, const char *s, size_t len, size_t max)
{
        size_t i = 0, total = 0, w;
        char unit[7];
        while (i < len) {
                size_t n = escape_unit((const unsigned char *) s + i, len - i, unit, &w);
                if (total + w > max)
                        break;
                fwrite(unit, 1, w, f);
                total += w;
                i += n;
        }
        return i;
}
