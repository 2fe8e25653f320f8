/* SPDX-License-Identifier: MIT */
/*
 * `psrun session ...`: sessions from the command line, built on the public
 * API (include/psrun.h) only, as an embedder would use it. Sessions live
 * under $PSRUN_SESSION_ROOT (default /run/psrun-sessions, a user's
 * $XDG_RUNTIME_DIR/psrun/sessions). The subcommands
 * are rows of the command table (cli/cli.h): the one parser, dispatcher and
 * help; a body's errors are prefixed with its name ("session exec: ").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/approve.h"
#include "cli/cli.h"
#include "cli/quote.h"
#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/number.h"
#include "policy/policy.h"

#define WRITE_MAX  (4ULL << 30) /* what `session write` reads from stdin at most */
#define READ_CHUNK (16U << 20)

/* A positive duration option (--timeout, --approve-timeout): 0, or the
 * usage error naming it. */
static int duration_option(struct cli_call *c, const char *opt, const char *arg, uint64_t *ms,
                           psrun_error *err)
{
        char shown[128];
        if (parse_duration_ms(arg, ms) < 0 || *ms == 0)
                return cli_usage_error(c, err,
                                       "%s: `%s` is not a duration (use e.g. 30, 30s, 5m, 500ms)",
                                       opt, number_shown(arg, shown, sizeof(shown)));
        return 0;
}

/* --result-fd N: an open fd, or the usage error naming it. */
static int result_fd_option(struct cli_call *c, const char *arg, int *fd, psrun_error *err)
{
        int64_t n;
        int r = number_parse_option("--result-fd", arg, 0, INT_MAX, &n, err);
        if (r < 0)
                return r;
        if (fcntl((int) n, F_GETFD) < 0)
                return cli_usage_error(c, err, "--result-fd: %d is not an open file descriptor",
                                       (int) n);
        *fd = (int) n;
        return 0;
}

/* The result of an exec or an install: --json's line on stderr, which the
 * command writes to as well (it may imitate the line, or leave one of its
 * own unterminated: the result starts on a line of its own); --result-fd's
 * on a descriptor the command never has (an exec gets stdin, stdout and
 * stderr only), which it cannot write to. */
static void write_result(const psrun_exec_result *res, bool json, int result_fd)
{
        if (strcmp(res->result.reason, "setup_error") == 0) {
                fputs("psrun: ", stderr);
                (void) quote_text(stderr, res->result.error, strlen(res->result.error), true);
                fputc('\n', stderr);
        }
        fflush(stderr);
        if (json) {
                (void) write_all(2, "\n", 1);
                (void) psrun_exec_result_write_json(res, 2);
        }
        if (result_fd >= 0)
                (void) psrun_exec_result_write_json(res, result_fd);
}

/* ---- create ---- */

enum { CR_POLICY, CR_OPTION, CR_NAME, CR_CGROUP_PARENT };
static const struct option_def create_options[] = {
        [CR_POLICY] = {"policy", 'p', "FILE", "load the policy from a YAML or JSON file"},
        [CR_OPTION] = {"option", 'o', "KEY=VALUE", "set one policy key (repeatable)"},
        [CR_NAME] = {"name", 'n', "NAME", "the session's id (default: a random one)"},
        [CR_CGROUP_PARENT] = {"cgroup-parent", 0, "PATH", "create its cgroups below PATH"},
        {0},
};

/* The policy's sources in command-line order: a file, then -o on top. */
static int load_policy(const struct cli_call *c, psrun_policy *pol, psrun_error *err)
{
        int r = 0;
        for (size_t i = 0; r >= 0 && i < c->n_order; i++) {
                const struct cli_opt *o = &c->order[i];
                if (o->index == CR_POLICY) {
                        r = psrun_policy_load_file(pol, o->value, err);
                } else if (o->index == CR_OPTION) {
                        const char *eq = strchr(o->value, '=');
                        if (!eq)
                                return psrun_error_set(err, EINVAL, "-o: `%s` is not KEY=VALUE",
                                                       o->value);
                        _cleanup_free_ char *key = strndup(o->value, (size_t) (eq - o->value));
                        if (!key)
                                return psrun_error_errno(err, ENOMEM, "-o");
                        r = psrun_policy_set(pol, key, eq + 1, err);
                }
        }
        return r;
}

static int sub_create(struct cli_call *c, psrun_error *err)
{
        psrun_policy *pol = psrun_policy_new();
        if (!pol)
                return psrun_error_errno(err, ENOMEM, "policy");
        psrun_session_options so = {.name = c->value[CR_NAME],
                                    .cgroup_parent = c->value[CR_CGROUP_PARENT]};
        psrun_session *s = NULL;
        int r = load_policy(c, pol, err);
        if (r >= 0)
                r = psrun_session_create(pol, &so, &s, err);
        psrun_policy_free(pol);
        if (r < 0)
                return r;
        printf("%s\n", psrun_session_id(s));
        psrun_session_close(s);
        return 0;
}

/* ---- exec ---- */

enum { EX_JSON, EX_RESULT_FD, EX_TIMEOUT, EX_CWD, EX_ENV, EX_DETACH };
static const struct option_def exec_options[] = {
        [EX_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [EX_RESULT_FD] = {"result-fd", 0, "N", "write the result JSON to file descriptor N"},
        [EX_TIMEOUT] = {"timeout", 't', "DURATION", "wall-clock limit (default: the policy's)"},
        [EX_CWD] = {"cwd", 'C', "DIR", "working directory (absolute)"},
        [EX_ENV] = {"env", 'e', "NAME=VALUE", "add to the environment (repeatable)"},
        [EX_DETACH] = {"detach", 'd', NULL, "run in the background, print its process id"},
        {0},
};

static int sub_exec(struct cli_call *c, psrun_error *err)
{
        char shown[128];
        psrun_exec_options eo = {
                .stdin_mode = PSRUN_STDIN_FD,
                .stdin_fd = 0,
                .pass_output = 1,
                .stdout_fd = 1,
                .stderr_fd = 2,
                .cwd = c->value[EX_CWD],
        };
        int r = 0, result_fd = -1;
        if (c->value[EX_TIMEOUT])
                r = duration_option(c, "--timeout", c->value[EX_TIMEOUT], &eo.timeout_ms, err);
        if (r >= 0 && c->value[EX_RESULT_FD])
                r = result_fd_option(c, c->value[EX_RESULT_FD], &result_fd, err);
        if (r < 0)
                return r;
        if (eo.cwd && eo.cwd[0] != '/')
                return cli_usage_error(c, err, "--cwd: `%s` is not an absolute path",
                                       number_shown(eo.cwd, shown, sizeof(shown)));
        size_t n_env = c->n_list[EX_ENV];
        _cleanup_free_ const char **env = calloc(n_env + 1, sizeof(char *));
        if (!env)
                return psrun_error_errno(err, ENOMEM, "--env");
        for (size_t i = 0; i < n_env; i++) {
                const char *kv = c->list[EX_ENV][i];
                if (!strchr(kv, '=') || kv[0] == '=')
                        return cli_usage_error(c, err, "--env: `%s` is not NAME=VALUE",
                                               number_shown(kv, shown, sizeof(shown)));
                env[i] = kv;
        }
        eo.env = n_env ? env : NULL;
        /* ID [--] CMD: a `--` the options did not end (`exec --json ID --
         * CMD`) is the separator, not the command. */
        const char *id = c->args[0];
        char **argv = c->args + 1;
        if (*argv && strcmp(*argv, "--") == 0)
                argv++;
        if (!*argv)
                return cli_usage_error(c, err, "no command given");
        psrun_session *s = NULL;
        r = psrun_session_open(id, NULL, &s, err);
        if (r < 0)
                return r;
        if (c->value[EX_DETACH]) {
                uint32_t pid = 0;
                r = psrun_exec_background(s, argv, &eo, &pid, err);
                psrun_session_close(s);
                if (r < 0)
                        return r;
                if (c->value[EX_JSON])
                        printf("{\"id\":%u}\n", pid);
                else
                        printf("%u\n", pid);
                return 0;
        }
        /* Ctrl-C ends this client, which closes the connection: the
         * supervisor then kills the exec as a tree. */
        psrun_exec_result res;
        r = psrun_exec(s, argv, &eo, &res, err);
        psrun_session_close(s);
        if (r < 0)
                return r;
        write_result(&res, c->value[EX_JSON] != NULL, result_fd);
        int code = res.result.exit_code;
        psrun_exec_result_free(&res);
        return code;
}

/* ---- install ---- */

enum { IN_TOOL, IN_JSON, IN_RESULT_FD, IN_TIMEOUT, IN_APPROVE_CMD, IN_APPROVE_TIMEOUT };
static const struct option_def install_options[] = {
        [IN_TOOL] = {"tool", 0, "TOOL", "python (default: pip) or node (npm)"},
        [IN_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [IN_RESULT_FD] = {"result-fd", 0, "N", "write the result JSON to file descriptor N"},
        [IN_TIMEOUT] = {"timeout", 't', "DURATION", "wall-clock limit (default: the policy's)"},
        [IN_APPROVE_CMD] = {"approve-cmd", 0, "CMD",
                            "ask CMD (the action as JSON on its stdin; exit 0 approves)"},
        [IN_APPROVE_TIMEOUT] = {"approve-timeout", 0, "DURATION",
                                "how long CMD may take (default 120s); then: denied"},
        {0},
};

static void write_output(void *userdata, int stream, const char *data, size_t len)
{
        (void) write_all(stream == 2 ? 2 : 1, data, len);
}

static int sub_install(struct cli_call *c, psrun_error *err)
{
        psrun_install_options io = {.tool = c->value[IN_TOOL], .on_output = write_output};
        struct approve_cmd ac = {.cmd = c->value[IN_APPROVE_CMD],
                                 .timeout_ms = APPROVE_TIMEOUT_DEFAULT_MS};
        int r = 0, result_fd = -1;
        if (c->value[IN_TIMEOUT])
                r = duration_option(c, "--timeout", c->value[IN_TIMEOUT], &io.timeout_ms, err);
        if (r >= 0 && c->value[IN_APPROVE_TIMEOUT])
                r = duration_option(c, "--approve-timeout", c->value[IN_APPROVE_TIMEOUT],
                                    &ac.timeout_ms, err);
        if (r >= 0 && c->value[IN_RESULT_FD])
                r = result_fd_option(c, c->value[IN_RESULT_FD], &result_fd, err);
        if (r < 0)
                return r;
        psrun_session *s = NULL;
        r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        if (ac.cmd)
                psrun_session_set_approver(s, approve_by_command, &ac);
        psrun_exec_result res;
        r = psrun_install_package(s, c->args[1], &io, &res, err);
        psrun_session_close(s);
        if (r < 0) {
                psrun_exec_result_free(&res);
                return r;
        }
        write_result(&res, c->value[IN_JSON] != NULL, result_fd);
        int code = res.result.exit_code;
        psrun_exec_result_free(&res);
        return code;
}

/* ---- files ---- */

static int sub_write(struct cli_call *c, psrun_error *err)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = read_all(0, WRITE_MAX, &data, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "stdin");
        psrun_session *s = NULL;
        r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        r = psrun_write_file(s, c->args[1], data, len, 0644, err);
        psrun_session_close(s);
        return r < 0 ? r : 0;
}

/* A file's bytes as they are, to a file or a pipe. To a terminal, what is
 * not printable text is shown escaped (cli/quote.h): the file is the
 * sandbox's, and a terminal takes ESC, BEL or CR as commands. A UTF-8
 * sequence cut by the end of a part is read again with the next. */
static int sub_read(struct cli_call *c, psrun_error *err)
{
        bool tty = isatty(1);
        psrun_session *s = NULL;
        int r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        uint64_t off = 0;
        for (;;) {
                psrun_file_data d;
                r = psrun_read_file(s, c->args[1], off, READ_CHUNK, &d, err);
                if (r < 0)
                        break;
                int more = d.truncated && d.len > 0;
                size_t used = d.len;
                if (tty) {
                        used = quote_text(stdout, d.data, d.len, !more);
                        if (used == 0 && more)
                                used = quote_text(stdout, d.data, d.len, true);
                        r = fflush(stdout) == 0 ? 0 : -errno;
                } else {
                        r = write_all(1, d.data, d.len);
                }
                off += used;
                free(d.data);
                if (r < 0) {
                        psrun_error_errno(err, r, "stdout");
                        break;
                }
                if (!more)
                        break;
        }
        psrun_session_close(s);
        return r < 0 ? r : 0;
}

enum { LS_RECURSIVE, LS_JSON, LS_NULL, LS_MAX_ENTRIES };
static const struct option_def ls_options[] = {
        [LS_RECURSIVE] = {"recursive", 'R', NULL, "the whole tree below DIR"},
        [LS_JSON] = {"json", 0, NULL, "one JSON object on stdout: the entries and `truncated`"},
        [LS_NULL] = {"null", '0', NULL, "only the names, as they are, each ended by a NUL"},
        [LS_MAX_ENTRIES] = {"max-entries", 0, "N",
                            "list at most N entries (default and most: 100000)"},
        {0},
};

/* A listing is the sandbox's to make large (a deep tree of long names) and
 * its names are the sandbox's to choose: the library bounds it in entries
 * and bytes, and each entry is written as it is formatted, its name quoted
 * (cli/quote.h) or, with --json, a JSON string or its bytes in base64. */
static void ls_print_json(const char *dir, const psrun_listing *l)
{
        fputc('{', stdout);
        quote_json_name(stdout, "dir", dir);
        printf(",\"truncated\":%s,\"entries\":[", l->truncated ? "true" : "false");
        for (size_t k = 0; k < l->n; k++) {
                const psrun_file_entry *e = &l->entries[k];
                fputs(k ? ",{" : "{", stdout);
                quote_json_name(stdout, "name", e->name);
                printf(",\"type\":\"%s\",\"mode\":%u,\"size\":%" PRIu64 ",\"mtime\":%" PRId64 "}",
                       e->type, e->mode, e->size, e->mtime);
        }
        fputs("]}\n", stdout);
}

static void ls_print(const psrun_listing *l, bool nul)
{
        for (size_t k = 0; k < l->n; k++) {
                const psrun_file_entry *e = &l->entries[k];
                if (nul) {
                        fputs(e->name, stdout);
                        fputc('\0', stdout);
                        continue;
                }
                printf("%-7s %04o %12" PRIu64 " %" PRId64 " ", e->type, e->mode, e->size, e->mtime);
                quote_name(stdout, e->name);
                fputc('\n', stdout);
        }
}

static int sub_ls(struct cli_call *c, psrun_error *err)
{
        bool json = c->value[LS_JSON] != NULL, nul = c->value[LS_NULL] != NULL;
        if (json && nul)
                return cli_usage_error(c, err, "--json and --null: one output at a time");
        psrun_list_options lo = {.recursive = c->value[LS_RECURSIVE] != NULL};
        if (c->value[LS_MAX_ENTRIES]) {
                int64_t n;
                int r = number_parse_option("--max-entries", c->value[LS_MAX_ENTRIES], 1,
                                            PSRUN_LIST_MAX_ENTRIES, &n, err);
                if (r < 0)
                        return r;
                lo.max_entries = (size_t) n;
        }
        const char *dir = c->n_args == 2 ? c->args[1] : "/workspace";
        psrun_session *s = NULL;
        int r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        psrun_listing l;
        r = psrun_list_dir(s, dir, &lo, &l, err);
        psrun_session_close(s);
        if (r < 0)
                return r;
        if (json)
                ls_print_json(dir, &l);
        else
                ls_print(&l, nul);
        r = fflush(stdout) == 0 ? 0 : psrun_error_errno(err, errno, "stdout");
        /* The listing is all there is up to the bound, and says so: on
         * stderr, and in the exit status (1), so that neither a reader of
         * the lines nor a script takes it for the whole directory. */
        if (r == 0 && l.truncated) {
                if (!json)
                        fprintf(stderr,
                                "psrun: session ls: listing truncated at %zu entries / %d MiB of "
                                "names (the directory holds more)\n",
                                l.n, PSRUN_LIST_MAX_BYTES >> 20);
                r = 1;
        }
        psrun_listing_free(&l);
        return r;
}

static int sub_rm(struct cli_call *c, psrun_error *err)
{
        psrun_session *s = NULL;
        int r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        r = psrun_remove(s, c->args[1], err);
        psrun_session_close(s);
        return r < 0 ? r : 0;
}

/* ---- list, destroy ---- */

enum { LIST_JSON };
static const struct option_def list_options[] = {
        [LIST_JSON] = {"json", 0, NULL, "one JSON array on stdout"},
        {0},
};

static int sub_list(struct cli_call *c, psrun_error *err)
{
        bool json = c->value[LIST_JSON] != NULL;
        psrun_session_info *list = NULL;
        size_t n = 0;
        int r = psrun_session_list(NULL, &list, &n, err);
        if (r < 0)
                return r;
        if (json)
                fputc('[', stdout);
        for (size_t i = 0; i < n; i++) {
                if (json) {
                        printf("%s{\"id\":", i ? "," : "");
                        json_write_string(stdout, list[i].id);
                        printf(",\"alive\":%s,\"pid\":%d,\"created\":%" PRIu64
                               ",\"running_execs\":%u}",
                               list[i].alive ? "true" : "false", list[i].supervisor_pid,
                               list[i].created_unix, list[i].running_execs);
                } else {
                        printf("%-20s %-5s pid %-8d execs %u\n", list[i].id,
                               list[i].alive ? "alive" : "dead", list[i].supervisor_pid,
                               list[i].running_execs);
                }
        }
        if (json)
                fputs("]\n", stdout);
        free(list);
        return 0;
}

/* ---- background processes: ps, logs, kill, wait ---- */

static int proc_id_arg(struct cli_call *c, const char *arg, uint32_t *id, psrun_error *err)
{
        char shown[128];
        uint64_t v = 0;
        if (number_parse_u64(arg, UINT32_MAX, &v) < 0 || v == 0)
                return cli_usage_error(c, err, "PID: `%s` is not a process id (1 or more)",
                                       number_shown(arg, shown, sizeof(shown)));
        *id = (uint32_t) v;
        return 0;
}

static int sub_ps(struct cli_call *c, psrun_error *err)
{
        bool json = c->value[LIST_JSON] != NULL;
        psrun_session *s = NULL;
        int r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        psrun_process_info *list = NULL;
        size_t n = 0;
        r = psrun_process_list(s, &list, &n, err);
        psrun_session_close(s);
        if (r < 0)
                return r;
        if (json)
                fputc('[', stdout);
        for (size_t i = 0; i < n; i++) {
                const psrun_process_info *p = &list[i];
                if (json) {
                        printf("%s{\"id\":%u,\"pid\":%d,\"running\":%s,\"exit_code\":%d,"
                               "\"signal\":%d,\"started\":%" PRIu64 ",\"stdout_bytes\":%" PRIu64
                               ",\"stderr_bytes\":%" PRIu64 ",\"command\":",
                               i ? "," : "", p->id, p->pid, p->running ? "true" : "false",
                               p->exit_code, p->signal, p->started_unix, p->stdout_bytes,
                               p->stderr_bytes);
                        json_write_string(stdout, p->command);
                        fputc('}', stdout);
                } else {
                        char state[32];
                        if (p->running)
                                snprintf(state, sizeof(state), "running");
                        else
                                snprintf(state, sizeof(state), "exit %d", p->exit_code);
                        printf("%-4u %-8s %s\n", p->id, state, p->command);
                }
        }
        if (json)
                fputs("]\n", stdout);
        free(list);
        return 0;
}

enum { LOGS_OFFSET, LOGS_STREAM };
static const struct option_def logs_options[] = {
        [LOGS_OFFSET] = {"offset", 0, "N", "from byte N of the stream (default 0)"},
        [LOGS_STREAM] = {"stream", 0, "stdout|stderr", "which stream (default stdout)"},
        {0},
};

static int sub_logs(struct cli_call *c, psrun_error *err)
{
        char shown[128];
        uint32_t id = 0;
        int r = proc_id_arg(c, c->args[1], &id, err);
        if (r < 0)
                return r;
        uint64_t offset = 0;
        if (c->value[LOGS_OFFSET] &&
            number_parse_u64(c->value[LOGS_OFFSET], UINT64_MAX, &offset) < 0)
                return cli_usage_error(c, err, "--offset: `%s` is not a byte offset",
                                       number_shown(c->value[LOGS_OFFSET], shown, sizeof(shown)));
        int stream = 1;
        const char *sv = c->value[LOGS_STREAM];
        if (sv && strcmp(sv, "stderr") == 0)
                stream = 2;
        else if (sv && strcmp(sv, "stdout") != 0)
                return cli_usage_error(c, err, "--stream: `%s` is neither stdout nor stderr",
                                       number_shown(sv, shown, sizeof(shown)));
        psrun_session *s = NULL;
        r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        /* What there is now, from offset; a line on stderr says where the
         * next read starts (and where bytes were dropped). */
        static char buf[64 * 1024];
        uint64_t first = offset, at = offset;
        bool gap = false;
        for (;;) {
                psrun_process_chunk ch;
                r = psrun_process_output(s, id, stream, at, buf, sizeof(buf), &ch, err);
                if (r < 0)
                        break;
                if (ch.offset != at)
                        gap = true;
                if (ch.len)
                        (void) write_all(1, buf, ch.len);
                at = ch.offset + ch.len;
                if (ch.len == 0 || ch.eof)
                        break;
        }
        psrun_session_close(s);
        if (r < 0)
                return r;
        if (gap)
                fprintf(stderr,
                        "psrun: bytes from %" PRIu64 " were dropped (kept: the first and "
                        "last output_limit/2)\n",
                        first);
        fprintf(stderr, "psrun: next offset %" PRIu64 "\n", at);
        return 0;
}

enum { KILL_SIGNAL };
static const struct option_def kill_options[] = {
        [KILL_SIGNAL] = {"signal", 's', "SIG",
                         "TERM, KILL, INT, HUP... or a number (default TERM)"},
        {0},
};

static int signal_arg(const char *s, int *sig)
{
        int64_t v = 0;
        if (number_parse(s, 1, 64, &v) == 0) {
                *sig = (int) v;
                return 0;
        }
        if (strncmp(s, "SIG", 3) == 0)
                s += 3;
        for (int i = 1; i < 32; i++) {
                const char *name = sigabbrev_np(i);
                if (name && strcmp(name, s) == 0) {
                        *sig = i;
                        return 0;
                }
        }
        return -EINVAL;
}

static int sub_kill(struct cli_call *c, psrun_error *err)
{
        char shown[128];
        uint32_t id = 0;
        int r = proc_id_arg(c, c->args[1], &id, err);
        if (r < 0)
                return r;
        int sig = SIGTERM;
        if (c->value[KILL_SIGNAL] && signal_arg(c->value[KILL_SIGNAL], &sig) < 0)
                return cli_usage_error(c, err, "--signal: `%s` is not a signal",
                                       number_shown(c->value[KILL_SIGNAL], shown, sizeof(shown)));
        psrun_session *s = NULL;
        r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        r = psrun_process_signal(s, id, sig, err);
        psrun_session_close(s);
        return r < 0 ? r : 0;
}

enum { WAIT_JSON, WAIT_TIMEOUT };
static const struct option_def wait_options[] = {
        [WAIT_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [WAIT_TIMEOUT] = {"timeout", 't', "DURATION", "give up after this long (default: none)"},
        {0},
};

static int sub_wait(struct cli_call *c, psrun_error *err)
{
        uint32_t id = 0;
        int r = proc_id_arg(c, c->args[1], &id, err);
        if (r < 0)
                return r;
        uint64_t ms = 0;
        if (c->value[WAIT_TIMEOUT])
                r = duration_option(c, "--timeout", c->value[WAIT_TIMEOUT], &ms, err);
        if (r < 0)
                return r;
        psrun_session *s = NULL;
        r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        psrun_exec_result res;
        r = psrun_process_wait(s, id, c->value[WAIT_TIMEOUT] ? (int64_t) ms : -1, &res, err);
        psrun_session_close(s);
        if (r < 0)
                return r;
        write_result(&res, c->value[WAIT_JSON] != NULL, -1);
        int code = res.result.exit_code;
        psrun_exec_result_free(&res);
        return code;
}

static int sub_destroy(struct cli_call *c, psrun_error *err)
{
        psrun_session *s = NULL;
        int r = psrun_session_open(c->args[0], NULL, &s, err);
        if (r < 0)
                return r;
        return psrun_session_destroy(s, err);
}

static const struct command session_commands[] = {
        {"create", sub_create, "[--policy FILE] [-o KEY=VALUE]... [--name NAME]", "", 0, 0,
         "start a session, print its id", create_options, 0, NULL, NULL},
        {"exec", sub_exec,
         "[--json] [--result-fd N] [--timeout D] [--cwd DIR] [--env K=V]... [--detach]",
         "ID [--] CMD [ARGS...]", 1, CLI_UNBOUNDED, "run CMD in the session (stdio streamed)",
         exec_options, CMD_ID_FIRST,
         "The options may also follow ID. Exit status: the command's (128+N if killed by\n"
         "signal N); 125 when psrun failed (one line on stderr). The command writes to\n"
         "stderr too, and may imitate --json's line: --result-fd's it cannot reach.\n"
         "--detach: in the background (stdin /dev/null, output kept by the session);\n"
         "prints its process id for ps, logs, kill and wait, and exits 0.\n",
         NULL},
        {"install", sub_install,
         "[--tool python|node] [--json] [--result-fd N] [--timeout D] [--approve-cmd CMD]",
         "ID PACKAGE", 2, 2, "install a package into /workspace", install_options, 0,
         "The installer's output is streamed; its exit status is the command's (0: installed).\n",
         NULL},
        {"write", sub_write, "", "ID PATH", 2, 2, "create or replace a file with stdin", NULL, 0,
         NULL, NULL},
        {"read", sub_read, "", "ID PATH", 2, 2, "print a file on stdout", NULL, 0,
         "To a terminal, bytes that are not printable text (but newline and tab) are\n"
         "shown as \\xHH; to a file or a pipe, the file as it is.\n",
         NULL},
        {"ls", sub_ls, "[-R] [--json|-0] [--max-entries N]", "ID [DIR]", 1, 2,
         "list a directory (default /workspace)", ls_options, CMD_ID_FIRST,
         "A line per entry: type, mode, size, mtime, name. A name that is not plain is\n"
         "quoted as a shell reads it back ('a b', $'a\\nb'), on a terminal or not; --json\n"
         "and -0 are for programs. At most 100000 entries and 16 MiB of names: past a\n"
         "bound, a line on stderr says the listing is truncated (--json: \"truncated\"),\n"
         "and the exit status is 1.\n",
         NULL},
        {"rm", sub_rm, "", "ID PATH", 2, 2, "remove a file or tree", NULL, 0, NULL, NULL},
        {"list", sub_list, "[--json]", "", 0, 0, "list the sessions", list_options, 0, NULL, NULL},
        {"ps", sub_ps, "[--json]", "ID", 1, 1, "list the background processes", list_options,
         CMD_ID_FIRST, NULL, NULL},
        {"logs", sub_logs, "[--offset N] [--stream stdout|stderr]", "ID PID", 2, 2,
         "print a background process's output so far", logs_options, CMD_ID_FIRST,
         "The session keeps the first and last output_limit/2 bytes of each stream;\n"
         "a line on stderr gives the offset to read on from.\n",
         NULL},
        {"kill", sub_kill, "[-s SIG]", "ID PID", 2, 2, "signal a background process", kill_options,
         CMD_ID_FIRST, NULL, NULL},
        {"wait", sub_wait, "[--json] [--timeout D]", "ID PID", 2, 2,
         "wait for a background process to end", wait_options, CMD_ID_FIRST,
         "Exit status: the process's; 125 when psrun failed (a timeout included).\n", NULL},
        {"destroy", sub_destroy, "", "ID", 1, 1, "kill the session and remove everything", NULL, 0,
         NULL, NULL},
};

const struct command_set session_command_set = {
        .parent = "session",
        .commands = session_commands,
        .n_commands = ARRAY_SIZE(session_commands),
        .notes = "Paths are in /workspace (relative, or absolute under it). Sessions live\n"
                 "under $PSRUN_SESSION_ROOT (default /run/psrun-sessions; without root\n"
                 "$XDG_RUNTIME_DIR/psrun/sessions). Exit status of exec: the command's; 125\n"
                 "when psrun failed (one line on stderr).\n",
        .fail = cli_fail,
};
