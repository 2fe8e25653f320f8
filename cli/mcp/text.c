/* SPDX-License-Identifier: MIT */
/* What the MCP tools write for the model (cli/mcp/text.h). */
#include "cli/mcp/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cleanup.h"

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

/* /workspace-relative paths shown as the sandbox sees them. */
void mcp_write_path(FILE *f, const char *path)
{
        fprintf(f, "%s%s", path[0] == '/' ? "" : "/workspace/", path);
}

void mcp_write_stream(FILE *f, const char *name, const char *data, size_t len)
{
        fprintf(f, "%s:\n", name);
        fwrite(data, 1, len, f);
        if (len && data[len - 1] != '\n')
                fputc('\n', f);
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
                if (hint)
                        fprintf(f, "%s refused %s (%" PRIu64 "x): %s", v->layer, v->what, v->count,
                                hint);
                else
                        fprintf(f, "%s: %s (%" PRIu64 "x)", v->layer, v->what, v->count);
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
                if (d->name[0])
                        fprintf(f, " %s", d->name);
                else
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
