/* SPDX-License-Identifier: MIT */
#include "common/json.h"

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
                        if (n == 0) {
                                fprintf(f, "\\u%04x", ch);
                                p++;
                        } else {
                                fwrite(p, 1, (size_t) n, f);
                                p += n;
                        }
                }
        }
        fputc('"', f);
}
