/* SPDX-License-Identifier: MIT */
/*
 * `psrun mcp`: an MCP server on stdin/stdout (docs/mcp.md) over the public
 * session API (include/psrun.h). The protocol is cli/mcp/proto.c; this file
 * holds the sandboxes the tools run in and the tools themselves;
 * cli/mcp/transport.c is the transport (a reader thread, workers that run
 * requests at once), cli/mcp/text.c writes the tools' text.
 *
 * stdout carries nothing but protocol: one JSON-RPC message per line,
 * each written whole under the server's out_lock. Logs go to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <psrun.h>

#include "cli/approve.h"
#include "cli/cli.h"
#include "cli/mcp/proto.h"
#include "cli/mcp/server.h"
#include "cli/mcp/text.h"
#include "common/cleanup.h"
#include "common/json.h"
#include "common/units.h"

/* What a stream of a command's output costs as JSON at most, in its text
 * content item and again in structuredContent: 2 MiB each (the policy's
 * output_limit caps the bytes, 1 MiB by default; escaped, a control byte
 * is 6). */
#define STREAM_JSON_MAX (2U << 20)
#define PROGRESS_CHUNK  4096        /* output bytes per progress notification */
#define PROGRESS_MAX    (1U << 20)  /* output bytes streamed per exec at most */
#define TIMEOUT_MAX_S   (24 * 3600) /* sandbox_exec's timeout argument */

/* ---- the server's policy: its sources, replayed for every sandbox ---- */

/* Apply the sources to a sandbox's policy, in command-line order. */
static int apply_sources(const struct config *cfg, psrun_policy *pol, psrun_error *err)
{
        for (size_t i = 0; i < cfg->n_sources; i++) {
                const struct source *src = &cfg->sources[i];
                int r;
                if (src->file) {
                        r = psrun_policy_load_file(pol, src->file, err);
                } else {
                        const char *eq = strchr(src->key_value, '=');
                        if (!eq)
                                return psrun_error_set(err, EINVAL, "-o: `%s` is not KEY=VALUE",
                                                       src->key_value);
                        _cleanup_free_ char *key =
                                strndup(src->key_value, (size_t) (eq - src->key_value));
                        if (!key)
                                return psrun_error_errno(err, ENOMEM, "policy");
                        r = psrun_policy_set(pol, key, eq + 1, err);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * The keys a client may set in sandbox_create's `policy` without the
 * operator's --allow-override, and then only to narrow the operator's
 * policy (psrun_policy_set_narrowing: limits lowered, never raised; the
 * network no more open; env taking nothing from the server's own
 * environment; workdir free). Every other key is the operator's.
 */
static const char *const client_keys[] = {
        "workdir", "env",          "memory_limit", "pids_limit", "disk_limit",
        "timeout", "output_limit", "cpu_limit",    "network",
};

static bool listed(const char *const *keys, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(keys[i], key) == 0)
                        return true;
        return false;
}

/* One override; -EPERM when the client may not. */
static int apply_override(const struct config *cfg, psrun_policy *pol, const char *key,
                          const struct mj *v, psrun_error *err)
{
        bool free_hand = listed(cfg->allowed, cfg->n_allowed, key);
        if (!free_hand && !listed(client_keys, ARRAY_SIZE(client_keys), key))
                return psrun_error_set(err, EPERM,
                                       "policy.%s: a client may not set this key (the server's "
                                       "operator can allow it with --allow-override %s)",
                                       key, key);
        /* Scalars as their text, lists and maps as JSON (a YAML flow node). */
        _cleanup_free_ char *value =
                v->kind == MJ_STRING ? strdup(v->str) : strndup(v->text, v->text_len);
        if (!value)
                return psrun_error_errno(err, ENOMEM, "policy");
        if (free_hand)
                return psrun_policy_set(pol, key, value, err);
        int r = psrun_policy_set_narrowing(pol, key, value, err);
        if (r == -EPERM)
                return psrun_error_set(err, EPERM,
                                       "policy.%s: `%s` would widen the server's policy (a client "
                                       "may only narrow it)",
                                       key, value);
        return r;
}

/* ---- sandboxes ---- */

void mcp_sandbox_free(struct sandbox *sb, bool destroy)
{
        if (!sb)
                return;
        if (sb->session) {
                psrun_error err = {0};
                if (destroy && psrun_session_destroy(sb->session, &err) < 0)
                        fprintf(stderr, "psrun: mcp: destroy sandbox: %s\n", err.msg);
                else if (!destroy)
                        psrun_session_close(sb->session);
        }
        psrun_policy_free(sb->policy);
        free(sb);
}

static int sandbox_new(struct server *srv, const struct mj *overrides, const char *handle,
                       struct sandbox **ret, psrun_error *err)
{
        struct sandbox *sb = calloc(1, sizeof(*sb));
        if (!sb || !(sb->policy = psrun_policy_new())) {
                free(sb);
                return psrun_error_errno(err, ENOMEM, "sandbox");
        }
        snprintf(sb->handle, sizeof(sb->handle), "%s", handle ? handle : "");
        int r = apply_sources(&srv->cfg, sb->policy, err);
        for (size_t i = 0; r >= 0 && overrides && i < overrides->len; i++)
                r = apply_override(&srv->cfg, sb->policy, overrides->keys[i], &overrides->items[i],
                                   err);
        if (r >= 0) {
                /* Tied to us: a killed server leaves no sandbox behind. */
                psrun_session_options so = {.name = handle, .tie_to_caller = 1};
                /* Gated actions (policy approve) ask the operator's command;
                 * without one they are denied. */
                if (srv->cfg.approve.cmd) {
                        so.approve = approve_by_command;
                        so.approve_userdata = &srv->cfg.approve;
                }
                r = psrun_session_create(sb->policy, &so, &sb->session, err);
        }
        if (r < 0) {
                mcp_sandbox_free(sb, false);
                return r;
        }
        *ret = sb;
        return 0;
}

/* Drop a call's hold on a sandbox; the last one frees a sandbox taken
 * out of the table (destroying its session, if it still has one). */
void mcp_sandbox_put(struct server *srv, struct sandbox *sb)
{
        pthread_mutex_lock(&srv->lock);
        bool last = --sb->refs == 0 && sb->dead;
        pthread_cond_broadcast(&srv->changed);
        pthread_mutex_unlock(&srv->lock);
        if (last)
                mcp_sandbox_free(sb, true);
}

/* ---- tool helpers ---- */

int tool_error(struct mcp_tool_out *out, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vfprintf(out->text, fmt, ap);
        va_end(ap);
        out->is_error = true;
        return 0;
}

/* The sandbox a call names, or the default one (made on first use), held
 * for the call (the job's sb: mcp_backend_call puts it after the tool).
 * NULL after writing an error result. */
struct sandbox *pick_sandbox(struct server *srv, const struct mcp_call *call,
                             struct mcp_tool_out *out)
{
        const char *handle = mj_get_string(call->args, "handle");
        struct sandbox *sb = NULL;
        if (handle) {
                pthread_mutex_lock(&srv->lock);
                for (size_t i = 0; i < MAX_SANDBOXES && !sb; i++)
                        if (srv->sandboxes[i] && strcmp(srv->sandboxes[i]->handle, handle) == 0)
                                sb = srv->sandboxes[i];
                if (sb)
                        sb->refs++;
                pthread_mutex_unlock(&srv->lock);
                if (!sb) {
                        tool_error(out,
                                   "No sandbox with handle `%s`: it was destroyed, or this server "
                                   "did not create it. Call sandbox_create for a new one, or "
                                   "leave out `handle` to use the default sandbox.",
                                   handle);
                        return NULL;
                }
        } else {
                /* One call makes the default sandbox; the others wait for it. */
                pthread_mutex_lock(&srv->create_lock);
                pthread_mutex_lock(&srv->lock);
                sb = srv->default_sb;
                if (sb)
                        sb->refs++;
                pthread_mutex_unlock(&srv->lock);
                psrun_error err = {0};
                if (!sb && sandbox_new(srv, NULL, NULL, &sb, &err) == 0) {
                        pthread_mutex_lock(&srv->lock);
                        srv->default_sb = sb;
                        sb->refs = 1;
                        pthread_mutex_unlock(&srv->lock);
                }
                pthread_mutex_unlock(&srv->create_lock);
                if (!sb) {
                        tool_error(out, "Could not start the sandbox: %s", err.msg);
                        return NULL;
                }
        }
        struct job *j = mcp_current_job();
        if (j)
                j->sb = sb;
        return sb;
}

/* A session-API error as a result an LLM can act on. A default sandbox
 * that has ended (idle timeout, lifetime) is dropped: the next call
 * without a handle starts a fresh one. */
int session_error(struct server *srv, struct sandbox *sb, struct mcp_tool_out *out,
                  const char *what, const psrun_error *err)
{
        if (err->code != ESRCH && err->code != ECONNREFUSED)
                return tool_error(out, "%s: %s", what, err->msg);
        pthread_mutex_lock(&srv->lock);
        bool was_default = sb && sb == srv->default_sb;
        if (was_default) {
                /* Out of the table; the last call holding it frees it. */
                srv->default_sb = NULL;
                sb->dead = true;
                pthread_cond_broadcast(&srv->changed);
        }
        pthread_mutex_unlock(&srv->lock);
        if (was_default) {
                return tool_error(out,
                                  "%s: %s. The default sandbox had ended (idle timeout or "
                                  "lifetime); the next call starts a new one, with an empty "
                                  "/workspace.",
                                  what, err->msg);
        }
        return tool_error(out,
                          "%s: %s. This sandbox has ended (idle timeout or lifetime); create a "
                          "new one with sandbox_create.",
                          what, err->msg);
}

/* ---- the tools ---- */

/* An exec result whose streams fit in STREAM_JSON_MAX as JSON each: the
 * same result, with a stream cut (start and end kept) where it did not. The
 * copy's stream pointers are res's or cut[]'s; free cut[] after. */
static int bounded_result(const psrun_exec_result *res, psrun_exec_result *copy, char *cut[2])
{
        *copy = *res;
        char **data[2] = {&copy->stdout_data, &copy->stderr_data};
        size_t *len[2] = {&copy->stdout_len, &copy->stderr_len};
        int *truncated[2] = {&copy->stdout_truncated, &copy->stderr_truncated};
        for (size_t i = 0; i < 2; i++) {
                size_t n = 0;
                int r = mcp_cut_output(*data[i], *len[i], STREAM_JSON_MAX, &cut[i], &n);
                if (r < 0)
                        return r;
                if (cut[i]) {
                        *data[i] = cut[i];
                        *len[i] = n;
                        *truncated[i] = 1;
                }
        }
        return 0;
}

/* One value of the sandbox's policy as the policy writes it ("128M",
 * "256"); "" if it cannot be read. */
static void policy_value(const struct sandbox *sb, const char *key, char *buf, size_t len)
{
        psrun_error e = {0};
        if (psrun_policy_get(sb->policy, key, buf, len, &e) < 0)
                buf[0] = '\0';
}

/* A duration of the sandbox's policy, in milliseconds. */
static uint64_t policy_ms(const struct sandbox *sb, const char *key)
{
        char buf[32];
        uint64_t ms = 0;
        policy_value(sb, key, buf, sizeof(buf));
        if (parse_duration_ms(buf, &ms) < 0)
                ms = 0;
        return ms;
}

struct exec_ctx {
        struct server *srv;
        unsigned long long sent;
};

static void on_output(void *userdata, int stream, const char *data, size_t len)
{
        struct exec_ctx *x = userdata;
        for (size_t off = 0; off < len && x->sent < PROGRESS_MAX;) {
                size_t n = len - off;
                if (n > PROGRESS_CHUNK)
                        n = PROGRESS_CHUNK;
                if (n > PROGRESS_MAX - x->sent)
                        n = PROGRESS_MAX - x->sent;
                mcp_job_progress(x->srv, data + off, n);
                x->sent += n;
                off += n;
        }
}

static int write_exec(const struct sandbox *sb, const struct mj *timeout,
                      const psrun_exec_result *res_shown, size_t cap, struct mcp_tool_out *out);

const int *mcp_halt_flag(void)
{
        struct job *j = mcp_current_job();
        return j ? &j->halt : NULL;
}

/* mcp_slot_get's refusal as a result: true when there is one. */
static bool slot_error(int r, struct mcp_tool_out *out)
{
        if (r == -ECANCELED)
                tool_error(out, "Cancelled before it started.");
        else if (r < 0)
                tool_error(out, "This sandbox was destroyed before the call could run; create a "
                                "new one with sandbox_create.");
        return r < 0;
}

static int tool_exec(struct server *srv, const struct mcp_call *call, struct mcp_tool_out *out,
                     psrun_error *err)
{
        const struct mj *timeout = mj_get(call->args, "timeout");
        if (timeout && timeout->number > TIMEOUT_MAX_S)
                return psrun_error_set(err, EINVAL, "sandbox_exec: timeout must be at most %d s",
                                       TIMEOUT_MAX_S);
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        struct exec_ctx x = {.srv = srv};
        psrun_exec_options o = {0};
        if (timeout) {
                o.timeout_ms = (uint64_t) (timeout->number * 1000 + 0.5);
                if (o.timeout_ms == 0)
                        o.timeout_ms = 1;
                /* The sandbox's policy is the ceiling of its execs too. */
                char value[32];
                snprintf(value, sizeof(value), "%" PRIu64 "ms", o.timeout_ms);
                psrun_error e = {0};
                int r = psrun_policy_narrows(sb->policy, "timeout", value, &e);
                if (r == -EPERM)
                        return tool_error(out,
                                          "A timeout of %g s would widen this sandbox's policy, "
                                          "whose timeout is %g s: a client may only narrow it. "
                                          "Pass at most that, or leave out `timeout` to get it.",
                                          timeout->number,
                                          (double) policy_ms(sb, "timeout") / 1000);
                if (r < 0)
                        return psrun_error_set(err, e.code, "sandbox_exec: %s", e.msg);
        }
        if (call->progress_token) {
                o.on_output = on_output;
                o.userdata = &x;
        }
        char *argv[] = {"/bin/sh", "-c", (char *) mj_get_string(call->args, "command"), NULL};
        /* A background process returns at once: it takes no exec slot. */
        const struct mj *background = mj_get(call->args, "background");
        if (background && background->boolean)
                return mcp_exec_background(srv, sb, argv, &o, out);
        /* At most max_execs at once in one sandbox; the others wait here. */
        if (slot_error(mcp_slot_get(srv, sb), out))
                return 0;
        /* A cancel or the sandbox's destroy kills it, its whole cgroup. */
        o.cancel = mcp_halt_flag();
        psrun_exec_handle *h = NULL;
        int r = psrun_exec_start(sb->session, argv, &o, &h, err);
        if (r < 0) {
                mcp_slot_put(srv, sb);
                return session_error(srv, sb, out, "The command could not be started", err);
        }
        psrun_exec_result res;
        r = psrun_exec_wait(h, &res, err);
        mcp_slot_put(srv, sb);
        if (r < 0) {
                psrun_exec_result_free(&res);
                if (r == -ECANCELED && sb->dead)
                        return tool_error(out,
                                          "The command was killed: its sandbox %s was "
                                          "destroyed meanwhile.",
                                          sb->handle);
                return session_error(srv, sb, out, "The command failed", err);
        }

        char *cut[2] = {NULL, NULL};
        psrun_exec_result shown;
        r = bounded_result(&res, &shown, cut);
        if (r >= 0)
                r = write_exec(sb, timeout, &shown, srv->cfg.result_chars, out);
        free(cut[0]);
        free(cut[1]);
        psrun_exec_result_free(&res);
        return r < 0 ? psrun_error_errno(err, -r, "sandbox_exec: result") : 0;
}

/*
 * A command's result for the model: psrun's summary (exit code, duration,
 * why it ended, what was refused or cut) as the first text item, where the
 * command's output cannot reach: its stdout and its stderr come after, in
 * items of their own. A command that prints "Exit code: 0" prints it into
 * its STDOUT item, never into psrun's.
 */
/*
 * A stream's text item for the model, at most `budget` bytes as JSON: past
 * it, its start and end with `[... N bytes omitted ...]` between, and a
 * line in the summary saying so and how to get the rest. -ENOMEM.
 */
static int write_model_stream(FILE *item, FILE *summary, const char *name, const char *data,
                              size_t len, size_t budget)
{
        char *cut = NULL;
        size_t n = 0;
        int r = mcp_cut_output(data, len, budget, &cut, &n);
        if (r < 0)
                return r;
        mcp_write_stream(item, name, cut ? cut : data, cut ? n : len);
        if (cut)
                fprintf(summary,
                        "\nShortened: %s was %zu bytes, more than this server shows a model "
                        "(%zu); its start and end are shown. structuredContent has more of it; "
                        "for the rest, write the output to a file and read it in parts with "
                        "sandbox_read_file, or run a narrower command (head, tail, grep).",
                        name, len, budget);
        free(cut);
        return 0;
}

/* The budgets of two streams sharing cap: a short one leaves its rest to
 * the other. */
static void share_budget(size_t cap, size_t len0, size_t len1, size_t *b0, size_t *b1)
{
        size_t half = cap / 2;
        size_t need0 = len0 * 6, need1 = len1 * 6; /* escaped, at worst */
        *b0 = need1 < half ? cap - need1 : half;
        *b1 = need0 < half ? cap - need0 : half;
        if (*b0 < half)
                *b0 = half;
        if (*b1 < half)
                *b1 = half;
}

static int write_exec(const struct sandbox *sb, const struct mj *timeout,
                      const psrun_exec_result *res_shown, size_t cap, struct mcp_tool_out *out)
{
        const psrun_exec_result res = *res_shown;
        const psrun_result *rr = &res.result;
        FILE *f = out->text;
        size_t budget[2];
        share_budget(cap, res.stdout_len, res.stderr_len, &budget[0], &budget[1]);
        fprintf(f, "Exit code: %d\nDuration: %.2fs", rr->exit_code, (double) rr->wall_ms / 1000);
        const char *reason = rr->reason ? rr->reason : "exited";
        char limit[64];
        if (strcmp(reason, "timeout") == 0)
                fprintf(f, "\nKilled: timeout (after %.2fs)",
                        timeout ? timeout->number : (double) policy_ms(sb, "timeout") / 1000);
        else if (strcmp(reason, "oom") == 0) {
                policy_value(sb, "memory_limit", limit, sizeof(limit));
                fprintf(f, "\nKilled: out of memory (limit %s)", limit);
        } else if (strcmp(reason, "pids") == 0) {
                policy_value(sb, "pids_limit", limit, sizeof(limit));
                fprintf(f, "\nKilled: too many processes (limit %s)", limit);
        } else if (strcmp(reason, "disk_full") == 0) {
                policy_value(sb, "disk_limit", limit, sizeof(limit));
                fprintf(f, "\nFailed: /workspace is full (limit %s)", limit);
        } else if (strcmp(reason, "signaled") == 0)
                fprintf(f, "\nKilled: by signal %d (%s)", rr->signal, strsignal(rr->signal));
        else if (strcmp(reason, "setup_error") == 0) {
                fputs("\nError: ", f);
                mcp_write_escaped_name(f, rr->error, strnlen(rr->error, sizeof(rr->error)),
                                       sizeof(rr->error));
        }
        mcp_write_blocked(f, rr, reason);
        if (res.stdout_truncated)
                fprintf(f, "\nTruncated: stdout was %" PRIu64 " bytes; its start and end are kept",
                        res.stdout_bytes);
        if (res.stderr_truncated)
                fprintf(f, "\nTruncated: stderr was %" PRIu64 " bytes; its start and end are kept",
                        res.stderr_bytes);
        /* The Blocked: lines name the network's refusals when violations
         * are on; with them off, these do. */
        if (!mcp_has_layer(rr, "network"))
                mcp_write_refusals(f, res.network,
                                   "\nNetwork refused (not allowed by the sandbox's policy):");
        if (write_model_stream(out->more[0], f, "STDOUT", res.stdout_data, res.stdout_len,
                               budget[0]) < 0 ||
            write_model_stream(out->more[1], f, "STDERR", res.stderr_data, res.stderr_len,
                               budget[1]) < 0)
                return -ENOMEM;
        fputs("\nstdout and stderr follow, each in a content item of its own.", f);
        out->is_error = rr->exit_code != 0 || strcmp(reason, "exited") != 0;
        return mcp_write_result_json(out->structured, &res);
}

/* Bytes at the end of a part that only begin a UTF-8 character (the rest
 * is in the next part): left for the next part, so that a text file read
 * in parts stays text. */
size_t split_character(const char *data, size_t len)
{
        for (size_t k = 1; k <= 3 && k <= len; k++) {
                unsigned char c = (unsigned char) data[len - k];
                if ((c & 0xc0) == 0x80)
                        continue; /* a continuation byte: look further back */
                size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
                return need > k ? k : 0;
        }
        return 0;
}

static int write_install(const char *package, const char *tool, const psrun_exec_result *res_shown,
                         size_t cap, struct mcp_tool_out *out);

static int tool_install(struct server *srv, const struct mcp_call *call, struct mcp_tool_out *out,
                        psrun_error *err)
{
        const char *package = mj_get_string(call->args, "package");
        const char *tool = mj_get_string(call->args, "tool");
        if (!tool)
                tool = "python";
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        psrun_install_options o = {.tool = tool, .cancel = mcp_halt_flag()};
        psrun_exec_result res = {0};
        psrun_error e = {0};
        if (slot_error(mcp_slot_get(srv, sb), out))
                return 0;
        psrun_exec_handle *h = NULL;
        int r = psrun_install_start(sb->session, package, &o, &h, &e);
        /* A cancel kills the installer as it does an exec: its cgroup, its
         * network. */
        if (r >= 0)
                r = psrun_exec_wait(h, &res, &e);
        mcp_slot_put(srv, sb);
        if (r < 0) {
                psrun_exec_result_free(&res);
                FILE *s = out->structured;
                fputs("{\"package\":", s);
                json_write_string(s, package);
                fprintf(s, ",\"tool\":\"%s\",\"installed\":false,\"denied\":%s,\"error\":", tool,
                        e.code == EPERM ? "true" : "false");
                json_write_string(s, e.msg);
                fputc('}', s);
                if (e.code == EPERM)
                        return tool_error(out,
                                          "Install denied: %s. Do not retry it as a command: "
                                          "the operator decides what is installed.",
                                          e.msg);
                if (e.code == EINVAL || e.code == ENETUNREACH)
                        return tool_error(out, "Cannot install: %s", e.msg);
                return session_error(srv, sb, out, "Cannot install", &e);
        }
        char *cut[2] = {NULL, NULL};
        psrun_exec_result shown;
        r = bounded_result(&res, &shown, cut);
        if (r >= 0)
                r = write_install(package, tool, &shown, srv->cfg.result_chars, out);
        free(cut[0]);
        free(cut[1]);
        psrun_exec_result_free(&res);
        return r < 0 ? psrun_error_errno(err, -r, "sandbox_install_package: result") : 0;
}

/* An install's result: psrun's summary first, the installer's stderr (which
 * what the sandbox planted can steer) in an item of its own. */
static int write_install(const char *package, const char *tool, const psrun_exec_result *res_shown,
                         size_t cap, struct mcp_tool_out *out)
{
        const psrun_exec_result res = *res_shown;
        const psrun_result *rr = &res.result;
        bool installed = rr->exit_code == 0 && rr->reason && strcmp(rr->reason, "exited") == 0;
        FILE *f = out->text;
        if (installed)
                fprintf(f,
                        "Successfully installed %s (%s) in %.2fs; the next sandbox_exec finds it.",
                        package, tool, (double) rr->wall_ms / 1000);
        else {
                fprintf(f, "Installing %s (%s) failed: exit code %d (%s)%s", package, tool,
                        rr->exit_code, rr->reason ? rr->reason : "setup_error",
                        rr->error[0] ? ": " : "");
                mcp_write_escaped_name(f, rr->error, strnlen(rr->error, sizeof(rr->error)),
                                       sizeof(rr->error));
                mcp_write_refusals(f, res.network,
                                   "\nThe install network refused (not on the server's "
                                   "install_allow_domains):");
                if (write_model_stream(out->more[0], f, "STDERR", res.stderr_data, res.stderr_len,
                                       cap) < 0)
                        return -ENOMEM;
                fputs("\nThe installer's stderr follows in a content item of its own.", f);
        }
        out->is_error = !installed;
        return mcp_write_result_json(out->structured, &res);
}

static int too_many_sandboxes(struct mcp_tool_out *out)
{
        return tool_error(out,
                          "Too many sandboxes (%d are alive): destroy one with sandbox_destroy "
                          "first.",
                          MAX_SANDBOXES);
}

static int tool_create(struct server *srv, const struct mcp_call *call, struct mcp_tool_out *out,
                       psrun_error *err)
{
        size_t alive = 0;
        pthread_mutex_lock(&srv->lock);
        for (size_t i = 0; i < MAX_SANDBOXES; i++)
                alive += srv->sandboxes[i] != NULL;
        pthread_mutex_unlock(&srv->lock);
        if (alive == MAX_SANDBOXES)
                return too_many_sandboxes(out);
        unsigned char rnd[16];
        if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
                return psrun_error_errno(err, errno, "sandbox_create: getrandom");
        char handle[33];
        for (size_t i = 0; i < sizeof(rnd); i++)
                snprintf(handle + 2 * i, 3, "%02x", rnd[i]);
        psrun_error e = {0};
        struct sandbox *sb = NULL;
        if (sandbox_new(srv, mj_get(call->args, "policy"), handle, &sb, &e) < 0) {
                if (e.code == EPERM || e.code == EINVAL)
                        return tool_error(out, "Cannot create the sandbox: %s", e.msg);
                return session_error(srv, NULL, out, "Cannot create the sandbox", &e);
        }
        /* Creations at once may have filled the table meanwhile. */
        size_t slot = 0;
        pthread_mutex_lock(&srv->lock);
        while (slot < MAX_SANDBOXES && srv->sandboxes[slot])
                slot++;
        if (slot < MAX_SANDBOXES)
                srv->sandboxes[slot] = sb;
        pthread_mutex_unlock(&srv->lock);
        if (slot == MAX_SANDBOXES) {
                mcp_sandbox_free(sb, true);
                return too_many_sandboxes(out);
        }
        fprintf(out->text,
                "Created sandbox %s. Pass it as `handle` to the other tools; it lives until "
                "sandbox_destroy or until this server exits.",
                handle);
        fprintf(out->structured, "{\"handle\":\"%s\"}", handle);
        return 0;
}

static int tool_destroy(struct server *srv, const struct mcp_call *call, struct mcp_tool_out *out,
                        psrun_error *err)
{
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        /* Out of the table, its running execs killed (they answer as
         * killed), then wait for the calls still using it. */
        pthread_mutex_lock(&srv->lock);
        bool first = !sb->dead;
        for (size_t i = 0; i < MAX_SANDBOXES; i++)
                if (srv->sandboxes[i] == sb)
                        srv->sandboxes[i] = NULL;
        sb->dead = true;
        for (struct job *j = srv->jobs; j; j = j->next)
                if (j->sb == sb)
                        __atomic_store_n(&j->halt, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&srv->changed);
        while (first && sb->refs > 1)
                pthread_cond_wait(&srv->changed, &srv->lock);
        pthread_mutex_unlock(&srv->lock);
        if (!first)
                return tool_error(out, "Sandbox %s is being destroyed by another call.",
                                  sb->handle);
        psrun_error e = {0};
        int r = psrun_session_destroy(sb->session, &e);
        sb->session = NULL;
        fprintf(out->structured, "{\"handle\":\"%s\",\"destroyed\":true}", sb->handle);
        if (r < 0)
                tool_error(out, "Sandbox %s is gone, with an error on the way: %s", sb->handle,
                           e.msg);
        else
                fprintf(out->text, "Destroyed sandbox %s.", sb->handle);
        return 0; /* freed by the put after the call */
}

typedef mcp_tool_fn tool_fn;
static const tool_fn tool_fns[MCP_N_TOOLS] = {
        [MCP_TOOL_EXEC] = tool_exec,
        [MCP_TOOL_INSTALL] = tool_install,
        [MCP_TOOL_CREATE] = tool_create,
        [MCP_TOOL_DESTROY] = tool_destroy,
        /* the rest: mcp_file_tools (files.c), mcp_process_tools (process.c) */
};

int mcp_backend_call(void *userdata, const struct mcp_call *call, struct mcp_tool_out *out,
                     psrun_error *err)
{
        struct server *srv = userdata;
        struct job *j = mcp_current_job();
        if (j && call->progress_token &&
            (call->progress_token->kind == MJ_STRING || call->progress_token->kind == MJ_NUMBER)) {
                pthread_mutex_lock(&srv->lock);
                j->token = call->progress_token;
                pthread_mutex_unlock(&srv->lock);
        }
        tool_fn fn = tool_fns[call->tool]         ? tool_fns[call->tool]
                     : mcp_file_tools[call->tool] ? mcp_file_tools[call->tool]
                                                  : mcp_process_tools[call->tool];
        int r = fn(srv, call, out, err);
        if (j) {
                pthread_mutex_lock(&srv->lock);
                j->token = NULL;
                struct sandbox *sb = j->sb;
                j->sb = NULL;
                pthread_mutex_unlock(&srv->lock);
                if (sb)
                        mcp_sandbox_put(srv, sb);
        }
        return r;
}

enum {
        MCP_POLICY,
        MCP_OPTION,
        MCP_ALLOW_OVERRIDE,
        MCP_APPROVE_CMD,
        MCP_APPROVE_TIMEOUT,
        MCP_MAX_EXECS,
        MCP_PROGRESS_INTERVAL,
        MCP_MAX_RESULT_CHARS,
};
const struct option_def cli_mcp_options[] = {
        [MCP_POLICY] = {"policy", 'p', "FILE", "the sandboxes' policy (YAML or JSON file)"},
        [MCP_OPTION] = {"option", 'o', "KEY=VALUE", "set one policy key (repeatable; in order)"},
        [MCP_ALLOW_OVERRIDE] = {"allow-override", 0, "KEY",
                                "let sandbox_create set KEY freely, even to widen the policy "
                                "(repeatable)"},
        [MCP_APPROVE_CMD] = {"approve-cmd", 0, "CMD",
                             "ask CMD before a gated action (policy approve): the action as JSON "
                             "on its stdin, exit 0 approves"},
        [MCP_APPROVE_TIMEOUT] = {"approve-timeout", 0, "DURATION",
                                 "how long CMD may take to answer (default 120s); then: denied"},
        [MCP_MAX_EXECS] = {"max-execs", 0, "N",
                           "run at most N execs and installs at once per sandbox (default 4); "
                           "more wait"},
        [MCP_PROGRESS_INTERVAL] = {"progress-interval", 0, "DURATION",
                                   "send a progress notification for a request with a progress "
                                   "token that has been silent this long (default 5s)"},
        [MCP_MAX_RESULT_CHARS] = {"max-result-chars", 0, "N",
                                  "show a model at most N characters of a command's output "
                                  "(default 30000; start and end kept)"},
        {0},
};

int cli_cmd_mcp(struct cli_call *c, psrun_error *err)
{
        struct server srv = {.out = stdout};
        srv.tail = &srv.head;
        srv.cancels_tail = &srv.cancels;
        _cleanup_free_ struct source *sources = calloc(c->n_order + 1, sizeof(*sources));
        if (!sources)
                return psrun_error_set(err, ENOMEM, "out of memory");
        /* The policy's sources in command-line order: files and -o. */
        for (size_t i = 0; i < c->n_order; i++) {
                if (c->order[i].index == MCP_POLICY)
                        sources[srv.cfg.n_sources++].file = c->order[i].value;
                else if (c->order[i].index == MCP_OPTION)
                        sources[srv.cfg.n_sources++].key_value = c->order[i].value;
        }
        srv.cfg.sources = sources;
        srv.cfg.allowed = c->list[MCP_ALLOW_OVERRIDE];
        srv.cfg.n_allowed = c->n_list[MCP_ALLOW_OVERRIDE];
        srv.cfg.approve = (struct approve_cmd){.cmd = c->value[MCP_APPROVE_CMD],
                                               .timeout_ms = APPROVE_TIMEOUT_DEFAULT_MS};
        if (srv.cfg.approve.cmd && !srv.cfg.approve.cmd[0])
                return psrun_error_set(err, EINVAL, "--approve-cmd: empty command");
        if (c->value[MCP_APPROVE_TIMEOUT] &&
            (parse_duration_ms(c->value[MCP_APPROVE_TIMEOUT], &srv.cfg.approve.timeout_ms) < 0 ||
             srv.cfg.approve.timeout_ms == 0))
                return psrun_error_set(err, EINVAL,
                                       "--approve-timeout: `%s` is not a duration (use e.g. 30s, "
                                       "5m)",
                                       c->value[MCP_APPROVE_TIMEOUT]);

        srv.cfg.max_execs = EXECS_DEFAULT;
        if (c->value[MCP_MAX_EXECS]) {
                char *end = NULL;
                errno = 0;
                unsigned long n = strtoul(c->value[MCP_MAX_EXECS], &end, 10);
                if (errno || !*c->value[MCP_MAX_EXECS] || *end || n == 0 || n > MAX_WORKERS)
                        return psrun_error_set(err, EINVAL,
                                               "--max-execs: `%s` is not a number from 1 to %d",
                                               c->value[MCP_MAX_EXECS], MAX_WORKERS);
                srv.cfg.max_execs = (unsigned) n;
        }
        srv.cfg.result_chars = RESULT_CHARS_DEFAULT;
        if (c->value[MCP_MAX_RESULT_CHARS]) {
                char *end = NULL;
                errno = 0;
                unsigned long long n = strtoull(c->value[MCP_MAX_RESULT_CHARS], &end, 10);
                if (errno || !*c->value[MCP_MAX_RESULT_CHARS] || *end || n < 1000 ||
                    n > STREAM_JSON_MAX)
                        return psrun_error_set(err, EINVAL,
                                               "--max-result-chars: `%s` is not a number from "
                                               "1000 to %u",
                                               c->value[MCP_MAX_RESULT_CHARS], STREAM_JSON_MAX);
                srv.cfg.result_chars = (size_t) n;
        }
        srv.cfg.progress_ms = PROGRESS_DEFAULT_MS;
        if (c->value[MCP_PROGRESS_INTERVAL] &&
            (parse_duration_ms(c->value[MCP_PROGRESS_INTERVAL], &srv.cfg.progress_ms) < 0 ||
             srv.cfg.progress_ms < 100 || srv.cfg.progress_ms > 10000))
                return psrun_error_set(err, EINVAL,
                                       "--progress-interval: `%s` is not a duration from 100ms "
                                       "to 10s",
                                       c->value[MCP_PROGRESS_INTERVAL]);

        /* A bad policy is an error now, not at the first tool call. */
        psrun_policy *pol = psrun_policy_new();
        int r = pol ? apply_sources(&srv.cfg, pol, err)
                    : psrun_error_set(err, ENOMEM, "out of memory");
        if (r >= 0) {
                /* The limits a model works within, in the descriptions. */
                char timeout[32] = "", memory[32] = "", output[32] = "", network[32] = "";
                psrun_error e = {0};
                psrun_policy_get(pol, "timeout", timeout, sizeof(timeout), &e);
                psrun_policy_get(pol, "memory_limit", memory, sizeof(memory), &e);
                psrun_policy_get(pol, "output_limit", output, sizeof(output), &e);
                psrun_policy_get(pol, "network", network, sizeof(network), &e);
                snprintf(srv.cfg.limits_note, sizeof(srv.cfg.limits_note),
                         "Limits (the server's policy; a call may only ask for less): timeout "
                         "%s (the most `timeout` may be), memory %s, output kept %s per stream, "
                         "of which a model is shown %zu characters; network %s.",
                         timeout, memory, output, srv.cfg.result_chars, network);
        }
        psrun_policy_free(pol);
        if (r < 0)
                return r;
        /* A client that goes away mid-answer is EPIPE, not a signal. */
        signal(SIGPIPE, SIG_IGN);
        pthread_mutex_init(&srv.lock, NULL);
        pthread_mutex_init(&srv.out_lock, NULL);
        pthread_mutex_init(&srv.create_lock, NULL);
        pthread_cond_init(&srv.cond, NULL);
        pthread_cond_init(&srv.changed, NULL);
        return mcp_serve(&srv);
}
