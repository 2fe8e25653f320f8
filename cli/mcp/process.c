/* SPDX-License-Identifier: MIT */
/*
 * The MCP server's background processes (docs/mcp.md, "Background
 * processes"): sandbox_exec with `background: true`, and the
 * sandbox_process_list/output/kill/wait tools, over the session API's
 * psrun_exec_background and psrun_process_* (include/psrun.h). A
 * background process takes no exec slot: its call returns at once. The
 * session keeps its output and kills it when the sandbox is destroyed.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <psrun.h>

#include "cli/mcp/json.h"
#include "cli/mcp/proto.h"
#include "cli/mcp/server.h"
#include "cli/mcp/text.h"
#include "common/cleanup.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/units.h"

#define CHUNK_MAX       (64U << 10) /* psrun_process_output's bytes a call */
#define WAIT_DEFAULT_MS 30000       /* sandbox_process_wait without a timeout */
#define WAIT_SLICE_MS   250         /* how often a wait looks for a cancel */

/* The names sandbox_process_kill takes (proto.c's list, in its order). */
static const struct {
        const char *name;
        int sig;
} signals[] = {
        {"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT},   {"HUP", SIGHUP},
        {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};

static uint32_t arg_id(const struct mcp_call *call)
{
        const struct mj *v = mj_get(call->args, "id");
        return v ? (uint32_t) v->number : 0;
}

/* The session's errors for one process id as results a model can act on. */
static int process_error(struct server *srv, struct sandbox *sb, struct mcp_tool_out *out,
                         uint32_t id, const psrun_error *e)
{
        if (e->code == ENOENT)
                return tool_error(out,
                                  "No background process %" PRIu32
                                  " in this sandbox: sandbox_process_list lists them (an "
                                  "ended one is forgotten once 64 newer ones were started).",
                                  id);
        return session_error(srv, sb, out, "Background process", e);
}

int mcp_exec_background(struct server *srv, struct sandbox *sb, char *const argv[],
                        const psrun_exec_options *o, struct mcp_tool_out *out)
{
        /* Its output goes to the session, never to this call's progress. */
        psrun_exec_options bo = *o;
        bo.on_output = NULL;
        bo.userdata = NULL;
        psrun_error e = {0};
        uint32_t id = 0;
        if (psrun_exec_background(sb->session, argv, &bo, &id, &e) < 0) {
                if (e.code == EAGAIN)
                        return tool_error(out,
                                          "Not started: %s. Stop one with "
                                          "sandbox_process_kill (sandbox_process_list lists "
                                          "them), or run it without `background`.",
                                          e.msg);
                return session_error(srv, sb, out, "The command could not be started", &e);
        }
        /* Its pid, for the model's ps and kill inside the sandbox. */
        int pid = 0;
        _cleanup_free_ psrun_process_info *list = NULL;
        size_t n = 0;
        if (psrun_process_list(sb->session, &list, &n, &e) == 0)
                for (size_t i = 0; i < n; i++)
                        if (list[i].id == id)
                                pid = list[i].pid;
        fprintf(out->text,
                "Started background process %" PRIu32 " (pid %d in the sandbox). It runs on; "
                "read its output with sandbox_process_output {\"id\": %" PRIu32
                "} (stream stdout or stderr, from an offset), stop it with "
                "sandbox_process_kill, wait for it with sandbox_process_wait; "
                "sandbox_process_list lists them.",
                id, pid, id);
        fprintf(out->structured, "{\"id\":%" PRIu32, id);
        if (pid > 0)
                fprintf(out->structured, ",\"pid\":%d", pid);
        fputc('}', out->structured);
        return 0;
}

static const char *state_name(const psrun_process_info *p)
{
        return p->running ? "running" : p->signal ? "signaled" : "exited";
}

static int tool_process_list(struct server *srv, const struct mcp_call *call,
                             struct mcp_tool_out *out, psrun_error *err)
{
        (void) err;
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        psrun_error e = {0};
        _cleanup_free_ psrun_process_info *list = NULL;
        size_t n = 0;
        if (psrun_process_list(sb->session, &list, &n, &e) < 0)
                return session_error(srv, sb, out, "Cannot list the processes", &e);
        char limit[32] = "";
        psrun_error pe = {0};
        if (psrun_policy_get(sb->policy, "background_limit", limit, sizeof(limit), &pe) < 0)
                snprintf(limit, sizeof(limit), "?");
        size_t running = 0;
        for (size_t i = 0; i < n; i++)
                running += list[i].running != 0;
        fprintf(out->text, "%zu background processes, %zu running (background_limit %s)%s", n,
                running, limit, n ? ":" : ".");
        fputs("{\"processes\":[", out->structured);
        for (size_t i = 0; i < n; i++) {
                const psrun_process_info *p = &list[i];
                size_t clen = strnlen(p->command, sizeof(p->command));
                fprintf(out->text, "\n%" PRIu32 " pid %d %s", p->id, p->pid, state_name(p));
                if (!p->running && p->signal)
                        fprintf(out->text, " (signal %d)", p->signal);
                else if (!p->running)
                        fprintf(out->text, " (exit code %d)", p->exit_code);
                fprintf(out->text, " stdout %" PRIu64 " B stderr %" PRIu64 " B: ", p->stdout_bytes,
                        p->stderr_bytes);
                mcp_write_escaped_name(out->text, p->command, clen, sizeof(p->command));
                fprintf(out->structured,
                        "%s{\"id\":%" PRIu32 ",\"pid\":%d,\"command\":", i ? "," : "", p->id,
                        p->pid);
                json_write_bytes(out->structured, p->command, clen);
                fprintf(out->structured, ",\"state\":\"%s\"", state_name(p));
                if (!p->running)
                        fprintf(out->structured, ",\"exit_code\":%d,\"signal\":%d", p->exit_code,
                                p->signal);
                fprintf(out->structured,
                        ",\"started_unix\":%" PRIu64 ",\"stdout_bytes\":%" PRIu64
                        ",\"stderr_bytes\":%" PRIu64 "}",
                        p->started_unix, p->stdout_bytes, p->stderr_bytes);
        }
        fputs("]}", out->structured);
        return 0;
}

static int tool_process_output(struct server *srv, const struct mcp_call *call,
                               struct mcp_tool_out *out, psrun_error *err)
{
        uint32_t id = arg_id(call);
        const char *stream = mj_get_string(call->args, "stream");
        int which = stream && strcmp(stream, "stderr") == 0 ? 2 : 1;
        const struct mj *off = mj_get(call->args, "offset");
        const struct mj *max = mj_get(call->args, "max_chars");
        uint64_t offset = off ? (uint64_t) off->number : 0;
        /* The result cap bounds the data as JSON, in the text item and in
         * structuredContent each. */
        size_t cap = srv->cfg.result_chars;
        if (max && max->number < (double) cap)
                cap = (size_t) max->number;
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return psrun_error_set(err, ENOMEM, "sandbox_process_output: out of memory");
        /* Read on until cap bytes, the end of what is there, or eof. */
        psrun_process_chunk first = {0}, c = {0};
        size_t len = 0;
        uint64_t at = offset;
        psrun_error e = {0};
        for (bool started = false; len < cap;) {
                size_t want = cap - len < CHUNK_MAX ? cap - len : CHUNK_MAX;
                if (psrun_process_output(sb->session, id, which, at, buf + len, want, &c, &e) < 0)
                        return process_error(srv, sb, out, id, &e);
                if (!started)
                        first = c;
                else if (c.offset != at)
                        break; /* a dropped middle: the next call starts past it */
                started = true;
                len += c.len;
                at = c.offset + c.len;
                if (c.len == 0 || c.eof)
                        break;
        }
        /* What fits as JSON; a character the cap splits waits for the next
         * call, unless the stream ended there. */
        size_t escaped = 0;
        size_t shown = mj_escaped_prefix(buf, len, cap, &escaped);
        if (shown == len && !(c.eof && at == first.offset + len))
                shown -= split_character(buf, shown);
        uint64_t next = first.offset + shown;
        bool eof = c.eof && shown == len && at == next;
        const char *name = which == 2 ? "stderr" : "stdout";
        fprintf(out->text,
                "Process %" PRIu32 " %s: bytes %" PRIu64 " to %" PRIu64 " of %" PRIu64
                " written so far",
                id, name, first.offset, next, c.total);
        if (first.offset > offset)
                fprintf(out->text,
                        " (bytes %" PRIu64 " to %" PRIu64 " were dropped: the session keeps "
                        "the first and last output_limit/2 bytes)",
                        offset, first.offset);
        if (eof)
                fputs(". The stream has ended: nothing follows.", out->text);
        else
                fprintf(out->text, ". Call again with offset %" PRIu64 " for what follows.", next);
        if (shown)
                fputs(" The bytes follow in a content item of their own.", out->text);
        else
                fputs(" No new bytes.", out->text);
        if (shown)
                fwrite(buf, 1, shown, out->more[0]);
        fprintf(out->structured,
                "{\"id\":%" PRIu32 ",\"stream\":\"%s\",\"offset\":%" PRIu64
                ",\"next_offset\":%" PRIu64 ",\"total\":%" PRIu64 ",\"eof\":%s,\"data\":",
                id, name, first.offset, next, c.total, eof ? "true" : "false");
        json_write_bytes(out->structured, buf, shown);
        fputc('}', out->structured);
        return 0;
}

static int tool_process_kill(struct server *srv, const struct mcp_call *call,
                             struct mcp_tool_out *out, psrun_error *err)
{
        (void) err;
        uint32_t id = arg_id(call);
        const char *name = mj_get_string(call->args, "signal");
        int sig = SIGTERM;
        for (size_t i = 0; name && i < sizeof(signals) / sizeof(signals[0]); i++)
                if (strcmp(signals[i].name, name) == 0)
                        sig = signals[i].sig;
        name = name ? name : "TERM";
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        psrun_error e = {0};
        if (psrun_process_signal(sb->session, id, sig, &e) < 0) {
                if (e.code == ESRCH) {
                        fprintf(out->structured,
                                "{\"id\":%" PRIu32 ",\"signal\":\"%s\",\"sent\":false}", id, name);
                        fprintf(out->text,
                                "Background process %" PRIu32
                                " had already ended; nothing was sent. Its output stays "
                                "readable with sandbox_process_output.",
                                id);
                        return 0;
                }
                return process_error(srv, sb, out, id, &e);
        }
        fprintf(out->text,
                "Sent SIG%s to background process %" PRIu32
                ". sandbox_process_wait waits for its end; sandbox_process_list shows its state.",
                name, id);
        fprintf(out->structured, "{\"id\":%" PRIu32 ",\"signal\":\"%s\",\"sent\":true}", id, name);
        return 0;
}

/* A wait's ESRCH is the session's end, or another wait taking its place. */
static bool session_alive(const struct sandbox *sb)
{
        psrun_error e = {0};
        _cleanup_free_ psrun_process_info *list = NULL;
        size_t n = 0;
        return psrun_process_list(sb->session, &list, &n, &e) == 0;
}

/* Why a wait stops early: 1 its request was cancelled, 2 its sandbox is
 * being destroyed (sandbox_destroy waits for the calls using it). */
static int wait_interrupted(struct server *srv, const struct sandbox *sb)
{
        struct job *j = mcp_current_job();
        pthread_mutex_lock(&srv->lock);
        int why = j && j->cancelled ? 1 : sb->dead ? 2 : 0;
        pthread_mutex_unlock(&srv->lock);
        return why;
}

static int tool_process_wait(struct server *srv, const struct mcp_call *call,
                             struct mcp_tool_out *out, psrun_error *err)
{
        uint32_t id = arg_id(call);
        const struct mj *timeout = mj_get(call->args, "timeout");
        if (timeout && timeout->number > MCP_WAIT_MAX)
                return psrun_error_set(err, EINVAL,
                                       "sandbox_process_wait: timeout must be at most %d s",
                                       MCP_WAIT_MAX);
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        uint64_t ms = timeout ? (uint64_t) (timeout->number * 1000 + 0.5) : WAIT_DEFAULT_MS;
        /* The operator's timeout is the ceiling: no process of the
         * sandbox runs longer. */
        char value[32] = "";
        uint64_t ceiling = 0;
        psrun_error pe = {0};
        if (psrun_policy_get(sb->policy, "timeout", value, sizeof(value), &pe) == 0 &&
            parse_duration_ms(value, &ceiling) == 0 && ceiling && ms > ceiling)
                ms = ceiling;
        psrun_exec_result res = {0};
        psrun_error e = {0};
        int r = -ETIMEDOUT;
        /* By the clock: a wait that was replaced (below) keeps its time. */
        uint64_t start = monotonic_ms();
        for (uint64_t waited = 0; r == -ETIMEDOUT && waited < ms; waited = monotonic_ms() - start) {
                int why = wait_interrupted(srv, sb);
                if (why == 1)
                        return tool_error(out, "Cancelled.");
                if (why == 2)
                        return tool_error(out, "The sandbox was destroyed during the wait; its "
                                               "background processes were killed with it.");
                int64_t slice =
                        (int64_t) (ms - waited < WAIT_SLICE_MS ? ms - waited : WAIT_SLICE_MS);
                e = (psrun_error){0};
                r = psrun_process_wait(sb->session, id, slice, &res, &e);
                if (r == -ESRCH && session_alive(sb)) {
                        /* The session keeps one waiter a process: another
                         * call's wait replaced this one. Wait on. */
                        nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
                        r = -ETIMEDOUT;
                }
        }
        if (r == -ETIMEDOUT) {
                fprintf(out->text,
                        "Background process %" PRIu32 " is still running after %.2fs; it was "
                        "not stopped (sandbox_process_kill stops it).",
                        id, (double) ms / 1000);
                fprintf(out->structured, "{\"id\":%" PRIu32 ",\"running\":true}", id);
                return 0;
        }
        if (r < 0)
                return process_error(srv, sb, out, id, &e);
        const psrun_result *rr = &res.result;
        const char *reason = rr->reason ? rr->reason : "exited";
        fprintf(out->text, "Background process %" PRIu32 " ended: exit code %d (%s", id,
                rr->exit_code, reason);
        if (rr->signal)
                fprintf(out->text, ", signal %d %s", rr->signal, strsignal(rr->signal));
        fprintf(out->text, ") after %.2fs. Its output: sandbox_process_output.",
                (double) rr->wall_ms / 1000);
        fprintf(out->structured,
                "{\"id\":%" PRIu32 ",\"running\":false,\"exit_code\":%d,\"signal\":%d,"
                "\"reason\":",
                id, rr->exit_code, rr->signal);
        json_write_string(out->structured, reason);
        fprintf(out->structured, ",\"wall_ms\":%" PRIu64 "}", rr->wall_ms);
        /* The wait did what was asked: how the process ended is data. */
        psrun_exec_result_free(&res);
        return 0;
}

const mcp_tool_fn mcp_process_tools[MCP_N_TOOLS] = {
        [MCP_TOOL_PROCESS_LIST] = tool_process_list,
        [MCP_TOOL_PROCESS_OUTPUT] = tool_process_output,
        [MCP_TOOL_PROCESS_KILL] = tool_process_kill,
        [MCP_TOOL_PROCESS_WAIT] = tool_process_wait,
};
