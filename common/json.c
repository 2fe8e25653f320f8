/* SPDX-License-Identifier: MIT */
#include "common/json.h"

#include <stdint.h>

/* Length of a valid UTF-8 sequence at p, or 0 if invalid. */
static int utf8_len(const unsigned char *p)
{
        if (p[0] < 0x80)
                return 1;
        int n = p[0] >= 0xf0 && p[0] <= 0xf4  ? 4
                : p[0] >= 0xe0                ? 3
                : p[0] >= 0xc2 && p[0] < 0xe0 ? 2
                                              : 0;
        for (int i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return n;
}

void json_write_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; p && *p;) {
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
                        int n = utf8_len(p);
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
