/* SPDX-License-Identifier: MIT */
#include "common/json.h"

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

/* Length of a valid UTF-8 sequence at p (avail bytes left), or 0 if invalid. */
static int utf8_len(const unsigned char *p, size_t avail)
{
        if (p[0] < 0x80)
                return 1;
        int n = p[0] >= 0xf0 && p[0] <= 0xf4  ? 4
                : p[0] >= 0xe0                ? 3
                : p[0] >= 0xc2 && p[0] < 0xe0 ? 2
                                              : 0;
        if ((size_t) n > avail)
                return 0;
        for (int i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return n;
}

static unsigned code_point(const unsigned char *p, int n)
{
        unsigned cp = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (int i = 1; i < n; i++)
                cp = cp << 6 | (p[i] & 0x3f);
        return cp;
}

/* Valid JSON raw, but not for every reader: C1 controls, the Unicode line
 * and paragraph separators (line breaks to YAML, which psrun reads JSON
 * with), the byte order mark and the non-characters U+FFFE/U+FFFF (which
 * YAML refuses). Escaped, they read back as the same characters. */
static bool needs_escape(unsigned cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
               cp == 0xfffe || cp == 0xffff;
}

void json_write_string(FILE *f, const char *s)
{
        json_write_bytes(f, s, s ? strlen(s) : 0);
}

void json_write_bytes(FILE *f, const char *s, size_t len)
{
        fputc('"', f);
        const unsigned char *end = (const unsigned char *) s + len;
        for (const unsigned char *p = (const unsigned char *) s; p && p < end;) {
                unsigned char ch = *p;
                if (ch == '"' || ch == '\\') {
                        fputc('\\', f);
                        fputc(ch, f);
                        p++;
                } else if (ch == '\n') {
                        fputs("\\n", f);
                        p++;
                } else if (ch == '\t') {
                        fputs("\\t", f);
                        p++;
                } else if (ch == '\r') {
                        fputs("\\r", f);
                        p++;
                } else if (ch < 0x20 || ch == 0x7f) {
                        fprintf(f, "\\u%04x", ch);
                        p++;
                } else {
                        int n = utf8_len(p, (size_t) (end - p));
                        unsigned cp = n > 1 ? code_point(p, n) : 0;
                        if (n == 0) {
                                fprintf(f, "\\u%04x", ch);
                                p++;
                        } else if (needs_escape(cp)) {
                                fprintf(f, "\\u%04x", cp);
                                p += n;
                        } else {
                                fwrite(p, 1, (size_t) n, f);
                                p += n;
                        }
                }
        }
        fputc('"', f);
}
