/* SPDX-License-Identifier: MIT */
/* What the MCP tools write for the model (cli/mcp/text.h). */
#include "cli/mcp/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/mcp/json.h"
#include "common/cleanup.h"
#include "common/json.h"

void mcp_b64_encode(FILE *f, const unsigned char *p, size_t n)
{
        static const char tbl[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned) p[i] << 16;
                if (i + 1 < n)
                        v |= (unsigned) p[i + 1] << 8;
                if (i + 2 < n)
                        v |= p[i + 2];
                fputc(tbl[(v >> 18) & 63], f);
                fputc(tbl[(v >> 12) & 63], f);
                fputc(i + 1 < n ? tbl[(v >> 6) & 63] : '=', f);
                fputc(i + 2 < n ? tbl[v & 63] : '=', f);
        }
}

static int b64_value(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Strict base64 (padding required, whitespace allowed between groups). */
int mcp_b64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len)
{
        unsigned char *out = malloc(len / 4 * 3 + 3);
        if (!out)
                return -ENOMEM;
        size_t n = 0, k = 0, pad = 0;
        unsigned v = 0;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                int d = c == '=' ? 0 : b64_value(c);
                if (d < 0 || (pad && c != '=') || (c == '=' && k < 2)) {
                        free(out);
                        return -EINVAL;
                }
                pad += c == '=';
                v = v << 6 | (unsigned) d;
                if (++k == 4) {
                        out[n++] = (unsigned char) (v >> 16);
                        if (pad < 2)
                                out[n++] = (unsigned char) (v >> 8);
                        if (pad < 1)
                                out[n++] = (unsigned char) v;
                        k = 0;
                        v = 0;
                        if (pad)
                                pad = 3; /* nothing may follow */
                }
        }
        if (k != 0) {
                free(out);
                return -EINVAL;
        }
        *ret = out;
        *ret_len = n;
        return 0;
}

static unsigned utf8_code_point(const unsigned char *p, size_t n)
{
        unsigned cp = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (size_t i = 1; i < n; i++)
                cp = cp << 6 | (p[i] & 0x3f);
        return cp;
}

/* Characters that are printable UTF-8 and yet hide or break a line: C1
 * controls, zero-width and bidi controls (which reorder what follows), the
 * line and paragraph separators, the BOM, the non-characters. */
static bool invisible(unsigned cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff ||
               cp == 0xfffe || cp == 0xffff;
}

void mcp_write_escaped_name(FILE *f, const char *s, size_t len, size_t max)
{
        size_t written = 0;
        for (size_t i = 0; i < len;) {
                const unsigned char *p = (const unsigned char *) s + i;
                char unit[16];
                size_t n = mj_utf8_len(s + i, len - i);
                if (n == 0 || (n == 1 && (p[0] < 0x20 || p[0] == 0x7f))) {
                        const char *named = p[0] == '\n'   ? "\\n"
                                            : p[0] == '\t' ? "\\t"
                                            : p[0] == '\r' ? "\\r"
                                                           : NULL;
                        if (named)
                                snprintf(unit, sizeof(unit), "%s", named);
                        else
                                snprintf(unit, sizeof(unit), "\\x%02x", p[0]);
                        n = 1;
                } else if (n == 1 && p[0] == '\\')
                        snprintf(unit, sizeof(unit), "\\\\");
                else if (n > 1 && invisible(utf8_code_point(p, n)))
                        snprintf(unit, sizeof(unit), "\\u{%04x}", utf8_code_point(p, n));
                else {
                        memcpy(unit, p, n);
                        unit[n] = '\0';
                }
                size_t w = strlen(unit);
                if (written + w > max) {
                        fputs("...", f);
                        return;
                }
                fputs(unit, f);
                written += w;
                i += n;
        }
}

/* Paths come from the model, names from the sandbox: at most this much of
 * one is shown. */
#define NAME_SHOWN_MAX 4096

/* /workspace-relative paths shown as the sandbox sees them. */
void mcp_write_path(FILE *f, const char *path)
{
        fputs(path[0] == '/' ? "" : "/workspace/", f);
        mcp_write_escaped_name(f, path, strlen(path), NAME_SHOWN_MAX);
}

void mcp_write_stream(FILE *f, const char *name, const char *data, size_t len)
{
        if (len == 0) {
                fprintf(f, "%s: (empty)", name);
                return;
        }
        fprintf(f, "%s:\n", name);
        fwrite(data, 1, len, f);
}

int mcp_cut_output(const char *data, size_t len, size_t max, char **ret, size_t *ret_len)
{
        *ret = NULL;
        *ret_len = 0;
        if (mj_escaped_len(data, len) <= max)
                return 0;
        /* The marker's own room (it is ASCII, two escaped newlines). */
        size_t room = max > 256 ? (max - 128) / 2 : 0;
        size_t head = mj_escaped_prefix(data, len, room, NULL);
        size_t tail = mj_escaped_suffix(data + head, len - head, room);
        char marker[96];
        int m = snprintf(marker, sizeof(marker), "%s[... %zu bytes omitted ...]\n",
                         head && data[head - 1] == '\n' ? "" : "\n", len - head - tail);
        char *out = malloc(head + (size_t) m + tail + 1);
        if (!out)
                return -ENOMEM;
        memcpy(out, data, head);
        memcpy(out + head, marker, (size_t) m);
        memcpy(out + head + (size_t) m, data + len - tail, tail);
        out[head + (size_t) m + tail] = '\0';
        *ret = out;
        *ret_len = head + (size_t) m + tail;
        return 0;
}

/* One entry's line: type, size, the name escaped, `/` after a directory. */
static char *listing_line(const psrun_file_entry *e, size_t *len)
{
        char *line = NULL;
        FILE *f = open_memstream(&line, len);
        if (!f)
                return NULL;
        fprintf(f, "%-7s %10" PRIu64 "  ", e->type, e->size);
        mcp_write_escaped_name(f, e->name, strlen(e->name), NAME_SHOWN_MAX);
        if (strcmp(e->type, "dir") == 0)
                fputc('/', f);
        if (fclose(f) != 0) {
                free(line);
                return NULL;
        }
        return line;
}

/* One entry of structuredContent; at most about 6 bytes a byte of name. */
static void listing_entry(FILE *f, const psrun_file_entry *e)
{
        size_t n = strlen(e->name);
        if (mj_is_utf8(e->name, n)) {
                fputs("{\"name\":", f);
                json_write_bytes(f, e->name, n);
        } else {
                fputs("{\"name_b64\":\"", f);
                mcp_b64_encode(f, (const unsigned char *) e->name, n);
                fputc('"', f);
        }
        fprintf(f, ",\"type\":\"%s\",\"size\":%" PRIu64 ",\"mode\":%u,\"mtime\":%" PRId64 "}",
                e->type, e->size, e->mode, e->mtime);
}

/* What listing_entry writes, at most (the fixed fields: type, 20 digits
 * each for size and mtime, 10 for mode, the keys and punctuation). */
static size_t listing_entry_max(const psrun_file_entry *e)
{
        size_t n = strlen(e->name);
        return 128 + (mj_is_utf8(e->name, n) ? mj_escaped_len(e->name, n) : (n + 2) / 3 * 4);
}

size_t mcp_write_listing(FILE *text, FILE *structured, const char *dir, const psrun_listing *l,
                         size_t text_max, size_t structured_max)
{
        _cleanup_free_ char *lines = NULL;
        size_t lines_len = 0, text_used = 0,
               structured_used = 64 + mj_escaped_len(dir, strlen(dir));
        FILE *t = open_memstream(&lines, &lines_len);
        if (!t)
                return 0;
        fputs("{\"directory\":", structured);
        json_write_string(structured, dir);
        fputs(",\"entries\":[", structured);
        size_t shown = 0;
        for (; shown < l->n; shown++) {
                const psrun_file_entry *e = &l->entries[shown];
                size_t len = 0;
                _cleanup_free_ char *line = listing_line(e, &len);
                size_t s_len = listing_entry_max(e);
                /* A line is its escaped bytes and an escaped newline. */
                size_t t_len = line ? mj_escaped_len(line, len) + 2 : 0;
                if (!line || text_used + t_len > text_max ||
                    structured_used + s_len > structured_max)
                        break;
                fprintf(t, "%s%s", shown ? "\n" : "", line);
                fputs(shown ? "," : "", structured);
                listing_entry(structured, e);
                text_used += t_len;
                structured_used += s_len + 1;
        }
        bool truncated = l->truncated || shown < l->n;
        fprintf(structured, "],\"truncated\":%s}", truncated ? "true" : "false");
        if (fclose(t) != 0)
                return 0;
        if (truncated) {
                fprintf(text, "Truncated: %zu entries of ", shown);
                mcp_write_path(text, dir);
                fputs(" shown; the directory holds more. To see the rest, list a "
                      "subdirectory, or narrow it with sandbox_exec (e.g. `ls DIR | head`, "
                      "`find DIR -name '*.py'`).\n",
                      text);
        } else if (shown == 0) {
                fputs("(empty directory) ", text);
                mcp_write_path(text, dir);
        }
        fwrite(lines, 1, lines_len, text);
        return shown;
}

/* One line per refusal, up to this many; the rest is counted. */
#define BLOCKED_LINES 10

static const char *blocked_hint(const psrun_violation *v)
{
        static const struct {
                const char *layer, *hint;
        } hints[] = {
                {"seccomp", "this system call is not allowed in the sandbox"},
                {"landlock", "outside what the sandbox may write (/workspace, /tmp) or signal"},
                {"apparmor", "refused by the sandbox's AppArmor profile"},
                {"network", "not an allowed destination (the policy's allow_domains)"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(hints); i++)
                if (strcmp(v->layer, hints[i].layer) == 0)
                        return hints[i].hint;
        return NULL;
}

void mcp_write_blocked(FILE *f, const psrun_result *r, const char *reason)
{
        bool decided = strcmp(reason, "exited") != 0 && strcmp(reason, "signaled") != 0;
        size_t shown = 0, left = 0;
        for (size_t i = 0; i < r->n_violations; i++) {
                const psrun_violation *v = &r->violations[i];
                if (decided && strcmp(v->layer, "limits") == 0)
                        continue;
                if (shown == BLOCKED_LINES) {
                        left += v->count;
                        continue;
                }
                fputs(shown++ ? "\n- " : "\nBlocked:\n- ", f);
                const char *hint = blocked_hint(v);
                /* What was refused may be the sandbox's (a path, a name). */
                fprintf(f, hint ? "%s refused " : "%s: ", v->layer);
                mcp_write_escaped_name(f, v->what, strlen(v->what), NAME_SHOWN_MAX);
                if (hint)
                        fprintf(f, " (%" PRIu64 "x): %s", v->count, hint);
                else
                        fprintf(f, " (%" PRIu64 "x)", v->count);
        }
        left += r->violations_more;
        if (shown && left)
                fprintf(f, "\n- and %" PRIu64 " more refusals (structuredContent.violations)",
                        left);
}

bool mcp_has_layer(const psrun_result *r, const char *layer)
{
        for (size_t i = 0; i < r->n_violations; i++)
                if (strcmp(r->violations[i].layer, layer) == 0)
                        return true;
        return false;
}

/* What the network refused, for the model: names, then addr:port/proto. */
void mcp_write_refusals(FILE *f, const psrun_network_stats *n, const char *title)
{
        if (!n || n->n_denied == 0)
                return;
        fputs(title, f);
        for (size_t i = 0; i < n->n_denied; i++) {
                const psrun_network_denial *d = &n->denied[i];
                if (d->name[0]) {
                        fputc(' ', f);
                        mcp_write_escaped_name(f, d->name, strnlen(d->name, sizeof(d->name)),
                                               NAME_SHOWN_MAX);
                } else
                        fprintf(f, " %s:%u/%s", d->addr, (unsigned) d->port, d->proto);
        }
        if (n->denied_more)
                fprintf(f, " (and %" PRIu64 " more)", n->denied_more);
}

/* The session API's result JSON, as structuredContent. */
int mcp_write_result_json(FILE *f, const psrun_exec_result *res)
{
        _cleanup_close_ int fd = memfd_create("psrun-mcp-result", MFD_CLOEXEC);
        if (fd < 0 || psrun_exec_result_write_json(res, fd) < 0)
                return -errno;
        off_t size = lseek(fd, 0, SEEK_END);
        if (size <= 0)
                return -EIO;
        void *p = mmap(NULL, (size_t) size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        size_t n = (size_t) size;
        while (n && ((const char *) p)[n - 1] == '\n')
                n--;
        fwrite(p, 1, n, f);
        munmap(p, (size_t) size);
        return 0;
}
