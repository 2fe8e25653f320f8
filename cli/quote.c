/* SPDX-License-Identifier: MIT */
#include "cli/quote.h"

#include <stdint.h>
#include <string.h>

#include "common/json.h"

enum { UTF8_INVALID = 0, UTF8_CUT = -1 };

/* The length of the well-formed UTF-8 sequence at p (avail > 0 bytes left)
 * and its code point; UTF8_INVALID, or UTF8_CUT when the bytes so far are
 * the start of a sequence the end of the buffer cuts. */
static int utf8_next(const unsigned char *p, size_t avail, uint32_t *cp)
{
        unsigned char c = p[0];
        int n;
        uint32_t v, min;
        if (c < 0x80) {
                *cp = c;
                return 1;
        } else if (c >= 0xc2 && c <= 0xdf) {
                n = 2, v = c & 0x1f, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 3, v = c & 0x0f, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4, v = c & 0x07, min = 0x10000;
        } else {
                return UTF8_INVALID;
        }
        for (int i = 1; i < n; i++) {
                if ((size_t) i >= avail)
                        return UTF8_CUT;
                if ((p[i] & 0xc0) != 0x80)
                        return UTF8_INVALID;
                v = v << 6 | (p[i] & 0x3f);
        }
        if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
                return UTF8_INVALID;
        *cp = v;
        return n;
}

bool utf8_valid(const char *s, size_t len)
{
        const unsigned char *p = (const unsigned char *) s;
        uint32_t cp;
        for (size_t i = 0; i < len;) {
                int n = utf8_next(p + i, len - i, &cp);
                if (n <= 0)
                        return false;
                i += (size_t) n;
        }
        return true;
}

/* Characters that do not show as themselves: controls (C0, DEL, C1: the
 * 8-bit CSI is U+009B), the line and paragraph separators, zero-width
 * characters and bidi controls (they reorder what follows), the BOM. */
static bool hidden(uint32_t cp)
{
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c ||
               (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

static bool bare(uint32_t cp)
{
        return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') ||
               (cp < 0x80 && strchr("._-+,:@%/=", (int) cp)) || (cp >= 0x80 && !hidden(cp));
}

enum style { BARE, SINGLE, DOLLAR };

static enum style name_style(const unsigned char *p, size_t len)
{
        enum style st = len ? BARE : SINGLE;
        uint32_t cp;
        for (size_t i = 0; i < len;) {
                int n = utf8_next(p + i, len - i, &cp);
                if (n <= 0 || hidden(cp))
                        return DOLLAR;
                if (!bare(cp))
                        st = SINGLE;
                i += (size_t) n;
        }
        return st;
}

void quote_name(FILE *f, const char *name)
{
        const unsigned char *p = (const unsigned char *) name;
        size_t len = strlen(name);
        enum style st = name_style(p, len);
        if (st == BARE) {
                fwrite(p, 1, len, f);
                return;
        }
        if (st == SINGLE) {
                fputc('\'', f);
                for (size_t i = 0; i < len; i++) {
                        if (p[i] == '\'')
                                fputs("'\\''", f);
                        else
                                fputc(p[i], f);
                }
                fputc('\'', f);
                return;
        }
        /* Inside $'...' a backslash starts an escape: every character that
         * is not printable is one, so is a quote and the backslash itself;
         * octal is three digits always (a digit after it stays itself). */
        static const char named[] = "\a\b\t\n\v\f\r";
        static const char letters[] = "abtnvfr";
        fputs("$'", f);
        uint32_t cp;
        for (size_t i = 0; i < len;) {
                int n = utf8_next(p + i, len - i, &cp);
                if (n > 0 && !hidden(cp)) {
                        if (cp == '\'' || cp == '\\')
                                fputc('\\', f);
                        fwrite(p + i, 1, (size_t) n, f);
                        i += (size_t) n;
                        continue;
                }
                /* A hidden character is escaped byte by byte, as bytes
                 * that are not UTF-8 are. */
                size_t k = n > 0 ? (size_t) n : 1;
                for (size_t j = i; j < i + k; j++) {
                        const char *c = p[j] ? strchr(named, p[j]) : NULL;
                        if (c)
                                fprintf(f, "\\%c", letters[c - named]);
                        else
                                fprintf(f, "\\%03o", p[j]);
                }
                i += k;
        }
        fputc('\'', f);
}

static void base64_write(FILE *f, const unsigned char *p, size_t len)
{
        static const char digits[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t) p[i] << 16;
                if (i + 1 < len)
                        v |= (uint32_t) p[i + 1] << 8;
                if (i + 2 < len)
                        v |= p[i + 2];
                fputc(digits[v >> 18 & 63], f);
                fputc(digits[v >> 12 & 63], f);
                fputc(i + 1 < len ? digits[v >> 6 & 63] : '=', f);
                fputc(i + 2 < len ? digits[v & 63] : '=', f);
        }
}

void quote_json_name(FILE *f, const char *key, const char *name)
{
        size_t len = strlen(name);
        /* json_write_bytes writes a byte that is not UTF-8 as \u00XX, which
         * reads back as another character: such a name goes as bytes. */
        if (utf8_valid(name, len)) {
                fprintf(f, "\"%s\":", key);
                json_write_bytes(f, name, len);
                return;
        }
        fprintf(f, "\"%s_b64\":\"", key);
        base64_write(f, (const unsigned char *) name, len);
        fputc('"', f);
}

size_t quote_text(FILE *f, const char *s, size_t len, bool final)
{
        const unsigned char *p = (const unsigned char *) s;
        size_t i = 0, run = 0; /* p[run..i): printable, not written yet */
        uint32_t cp;
        while (i < len) {
                int n = utf8_next(p + i, len - i, &cp);
                if (n == UTF8_CUT && !final)
                        break;
                if (n > 0 && (!hidden(cp) || cp == '\n' || cp == '\t')) {
                        i += (size_t) n;
                        continue;
                }
                fwrite(p + run, 1, i - run, f);
                size_t k = n > 0 ? (size_t) n : 1;
                for (size_t j = i; j < i + k; j++)
                        fprintf(f, "\\x%02x", p[j]);
                i += k;
                run = i;
        }
        fwrite(p + run, 1, i - run, f);
        return i;
}
