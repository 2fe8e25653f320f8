/* SPDX-License-Identifier: MIT */
/*
 * `psrun session ...`: sessions from the command line, built on the public
 * API (include/psrun.h) only, as an embedder would use it. Sessions live
 * under $PSRUN_SESSION_ROOT (default /run/psrun-sessions).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/approve.h"
#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"
#include "policy/policy.h"

#define WRITE_MAX  (4ULL << 30) /* what `session write` reads from stdin at most */
#define READ_CHUNK (16U << 20)

static int fail(const char *sub, const psrun_error *err)
{
        fprintf(stderr, "psrun: session %s: %s\n", sub, err->msg);
        return EXIT_PSRUN;
}

__attribute__((format(printf, 2, 3))) static int usage_error(const char *sub, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "psrun: session %s: ", sub);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (see `psrun session --help`)\n");
        return EXIT_PSRUN;
}

/* A positive duration option (--timeout, --approve-timeout): 0, or the
 * usage error naming it. */
static int duration_option(const char *sub, const char *opt, const char *arg, uint64_t *ms)
{
        if (parse_duration_ms(arg, ms) < 0 || *ms == 0)
                return usage_error(sub, "%s: `%s` is not a duration (use e.g. 30, 30s, 5m, 500ms)",
                                   opt, arg);
        return 0;
}

/* getopt_long's tables from an option list: long options come back as
 * 256 + their index, short ones as themselves. */
static void build_getopt(const struct option_def *opts, struct option *longopts, char *shortopts,
                         size_t n_max)
{
        size_t n = 0, k = 0;
        shortopts[k++] = '+'; /* stop at the first non-option */
        for (const struct option_def *o = opts; o->name && n < n_max; o++, n++) {
                longopts[n] = (struct option){o->name, o->arg ? required_argument : no_argument,
                                              NULL, 256 + (int) n};
                if (o->short_name) {
                        shortopts[k++] = (char) o->short_name;
                        if (o->arg)
                                shortopts[k++] = ':';
                }
        }
        longopts[n] = (struct option){0};
        shortopts[k] = '\0';
}

static int option_index(const struct option_def *opts, int c)
{
        if (c >= 256)
                return c - 256;
        for (int i = 0; opts[i].name; i++)
                if (opts[i].short_name == c)
                        return i;
        return -1;
}

static int open_session(const char *sub, const char *id, psrun_session **s)
{
        psrun_error err = {0};
        if (psrun_session_open(id, NULL, s, &err) < 0)
                return fail(sub, &err);
        return 0;
}

/* ---- create ---- */

enum { CR_POLICY, CR_OPTION, CR_NAME, CR_CGROUP_PARENT, CR_HELP };
static const struct option_def create_options[] = {
        [CR_POLICY] = {"policy", 'p', "FILE", "load the policy from a YAML or JSON file"},
        [CR_OPTION] = {"option", 'o', "KEY=VALUE", "set one policy key (repeatable)"},
        [CR_NAME] = {"name", 'n', "NAME", "the session's id (default: a random one)"},
        [CR_CGROUP_PARENT] = {"cgroup-parent", 0, "PATH", "create its cgroups below PATH"},
        [CR_HELP] = {"help", 'h', NULL, "show this help"},
        {0},
};

static int sub_create(int argc, char **argv)
{
        struct option longopts[8];
        char shortopts[16];
        build_getopt(create_options, longopts, shortopts, 7);
        psrun_policy *pol = psrun_policy_new();
        if (!pol) {
                fprintf(stderr, "psrun: out of memory\n");
                return EXIT_PSRUN;
        }
        psrun_session_options so = {0};
        psrun_error err = {0};
        int r = 0, c;
        optind = 1;
        opterr = 0;
        while (r >= 0 && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                switch (option_index(create_options, c)) {
                case CR_POLICY:
                        r = psrun_policy_load_file(pol, optarg, &err);
                        break;
                case CR_OPTION: {
                        char *eq = strchr(optarg, '=');
                        if (!eq) {
                                r = psrun_error_set(&err, EINVAL, "-o: `%s` is not KEY=VALUE",
                                                    optarg);
                                break;
                        }
                        *eq = '\0';
                        r = psrun_policy_set(pol, optarg, eq + 1, &err);
                        *eq = '=';
                        break;
                }
                case CR_NAME:
                        so.name = optarg;
                        break;
                case CR_CGROUP_PARENT:
                        so.cgroup_parent = optarg;
                        break;
                case CR_HELP:
                        psrun_policy_free(pol);
                        cli_command_help("session");
                        return 0;
                default:
                        r = psrun_error_set(&err, EINVAL, "unknown option `%s`", argv[optind - 1]);
                }
        }
        if (r >= 0 && optind < argc)
                r = psrun_error_set(&err, EINVAL, "unexpected argument `%s`", argv[optind]);
        psrun_session *s = NULL;
        if (r >= 0)
                r = psrun_session_create(pol, &so, &s, &err);
        psrun_policy_free(pol);
        if (r < 0)
                return fail("create", &err);
        printf("%s\n", psrun_session_id(s));
        psrun_session_close(s);
        return 0;
}

/* ---- exec ---- */

enum { EX_JSON, EX_TIMEOUT, EX_CWD, EX_ENV, EX_HELP };
static const struct option_def exec_options[] = {
        [EX_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [EX_TIMEOUT] = {"timeout", 't', "DURATION", "wall-clock limit (default: the policy's)"},
        [EX_CWD] = {"cwd", 'C', "DIR", "working directory (absolute)"},
        [EX_ENV] = {"env", 'e', "NAME=VALUE", "add to the environment (repeatable)"},
        [EX_HELP] = {"help", 'h', NULL, "show this help"},
        {0},
};

static int sub_exec(int argc, char **argv)
{
        struct option longopts[8];
        char shortopts[16];
        build_getopt(exec_options, longopts, shortopts, 7);
        psrun_exec_options eo = {
                .stdin_mode = PSRUN_STDIN_FD,
                .stdin_fd = 0,
                .pass_output = 1,
                .stdout_fd = 1,
                .stderr_fd = 2,
        };
        _cleanup_free_ const char **env = calloc((size_t) argc + 1, sizeof(char *));
        size_t n_env = 0;
        bool json = false;
        int c;
        /* `exec ID [OPTIONS] -- CMD` as well as `exec [OPTIONS] ID -- CMD`. */
        const char *id = NULL;
        if (argc > 1 && argv[1][0] != '-') {
                id = argv[1];
                argc--;
                argv++;
        }
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                switch (option_index(exec_options, c)) {
                case EX_JSON:
                        json = true;
                        break;
                case EX_TIMEOUT:
                        if (duration_option("exec", "--timeout", optarg, &eo.timeout_ms))
                                return EXIT_PSRUN;
                        break;
                case EX_CWD:
                        if (optarg[0] != '/')
                                return usage_error("exec", "--cwd: `%s` is not an absolute path",
                                                   optarg);
                        eo.cwd = optarg;
                        break;
                case EX_ENV:
                        if (!strchr(optarg, '=') || optarg[0] == '=')
                                return usage_error("exec", "--env: `%s` is not NAME=VALUE", optarg);
                        if (env)
                                env[n_env++] = optarg;
                        break;
                case EX_HELP:
                        cli_command_help("session");
                        return 0;
                default:
                        return usage_error("exec", "unknown option `%s`", argv[optind - 1]);
                }
        }
        if (!id && optind < argc)
                id = argv[optind++];
        if (optind < argc && strcmp(argv[optind], "--") == 0)
                optind++;
        if (!id)
                return usage_error("exec", "%s", "no session id given");
        if (optind >= argc)
                return usage_error("exec", "%s", "no command given (psrun session exec ID -- CMD)");
        eo.env = n_env ? env : NULL;
        psrun_session *s = NULL;
        if (open_session("exec", id, &s))
                return EXIT_PSRUN;
        /* Ctrl-C ends this client, which closes the connection: the
         * supervisor then kills the exec as a tree. */
        psrun_exec_result res;
        psrun_error err = {0};
        int r = psrun_exec(s, argv + optind, &eo, &res, &err);
        psrun_session_close(s);
        if (r < 0)
                return fail("exec", &err);
        if (strcmp(res.result.reason, "setup_error") == 0)
                fprintf(stderr, "psrun: %s\n", res.result.error);
        if (json)
                (void) psrun_exec_result_write_json(&res, 2);
        int code = res.result.exit_code;
        psrun_exec_result_free(&res);
        return code;
}

/* ---- install ---- */

enum { IN_TOOL, IN_JSON, IN_TIMEOUT, IN_APPROVE_CMD, IN_APPROVE_TIMEOUT, IN_HELP };
static const struct option_def install_options[] = {
        [IN_TOOL] = {"tool", 0, "TOOL", "python (default: pip) or node (npm)"},
        [IN_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [IN_TIMEOUT] = {"timeout", 't', "DURATION", "wall-clock limit (default: the policy's)"},
        [IN_APPROVE_CMD] = {"approve-cmd", 0, "CMD",
                            "ask CMD (the action as JSON on its stdin; exit 0 approves)"},
        [IN_APPROVE_TIMEOUT] = {"approve-timeout", 0, "DURATION",
                                "how long CMD may take (default 120s); then: denied"},
        [IN_HELP] = {"help", 'h', NULL, "show this help"},
        {0},
};

static void write_output(void *userdata, int stream, const char *data, size_t len)
{
        (void) write_all(stream == 2 ? 2 : 1, data, len);
}

static int sub_install(int argc, char **argv)
{
        struct option longopts[8];
        char shortopts[16];
        build_getopt(install_options, longopts, shortopts, 7);
        psrun_install_options io = {.on_output = write_output};
        struct approve_cmd ac = {.timeout_ms = APPROVE_TIMEOUT_DEFAULT_MS};
        bool json = false;
        int c;
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                switch (option_index(install_options, c)) {
                case IN_TOOL:
                        io.tool = optarg;
                        break;
                case IN_JSON:
                        json = true;
                        break;
                case IN_TIMEOUT:
                        if (duration_option("install", "--timeout", optarg, &io.timeout_ms))
                                return EXIT_PSRUN;
                        break;
                case IN_APPROVE_CMD:
                        ac.cmd = optarg;
                        break;
                case IN_APPROVE_TIMEOUT:
                        if (duration_option("install", "--approve-timeout", optarg, &ac.timeout_ms))
                                return EXIT_PSRUN;
                        break;
                case IN_HELP:
                        cli_command_help("session");
                        return 0;
                default:
                        return usage_error("install", "unknown option `%s`", argv[optind - 1]);
                }
        }
        if (argc - optind != 2)
                return usage_error("install", "%s",
                                   "usage: psrun session install [--tool python|node] ID PACKAGE");
        psrun_session *s = NULL;
        if (open_session("install", argv[optind], &s))
                return EXIT_PSRUN;
        if (ac.cmd)
                psrun_session_set_approver(s, approve_by_command, &ac);
        psrun_exec_result res;
        psrun_error err = {0};
        int r = psrun_install_package(s, argv[optind + 1], &io, &res, &err);
        psrun_session_close(s);
        if (r < 0) {
                psrun_exec_result_free(&res);
                return fail("install", &err);
        }
        if (strcmp(res.result.reason, "setup_error") == 0)
                fprintf(stderr, "psrun: %s\n", res.result.error);
        if (json)
                (void) psrun_exec_result_write_json(&res, 2);
        int code = res.result.exit_code;
        psrun_exec_result_free(&res);
        return code;
}

/* ---- files ---- */

static int sub_write(int argc, char **argv)
{
        if (argc != 3)
                return usage_error("write", "%s", "usage: psrun session write ID PATH < DATA");
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = read_all(0, WRITE_MAX, &data, &len);
        psrun_error err = {0};
        if (r < 0) {
                psrun_error_errno(&err, r, "stdin");
                return fail("write", &err);
        }
        psrun_session *s = NULL;
        if (open_session("write", argv[1], &s))
                return EXIT_PSRUN;
        r = psrun_write_file(s, argv[2], data, len, 0644, &err);
        psrun_session_close(s);
        return r < 0 ? fail("write", &err) : 0;
}

static int sub_read(int argc, char **argv)
{
        if (argc != 3)
                return usage_error("read", "%s", "usage: psrun session read ID PATH > DATA");
        psrun_session *s = NULL;
        if (open_session("read", argv[1], &s))
                return EXIT_PSRUN;
        psrun_error err = {0};
        uint64_t off = 0;
        int r;
        for (;;) {
                psrun_file_data d;
                r = psrun_read_file(s, argv[2], off, READ_CHUNK, &d, &err);
                if (r < 0)
                        break;
                r = write_all(1, d.data, d.len);
                off += d.len;
                int more = d.truncated && d.len > 0;
                free(d.data);
                if (r < 0) {
                        psrun_error_errno(&err, r, "stdout");
                        break;
                }
                if (!more)
                        break;
        }
        psrun_session_close(s);
        return r < 0 ? fail("read", &err) : 0;
}

static int sub_ls(int argc, char **argv)
{
        bool recursive = false;
        int i = 1;
        if (i < argc && (strcmp(argv[i], "-R") == 0 || strcmp(argv[i], "--recursive") == 0)) {
                recursive = true;
                i++;
        }
        if (argc - i < 1 || argc - i > 2)
                return usage_error("ls", "%s", "usage: psrun session ls [-R] ID [DIR]");
        psrun_session *s = NULL;
        if (open_session("ls", argv[i], &s))
                return EXIT_PSRUN;
        psrun_file_entry *e = NULL;
        size_t n = 0;
        psrun_error err = {0};
        int r = psrun_list_files(s, argc - i == 2 ? argv[i + 1] : "/workspace", recursive, &e, &n,
                                 &err);
        psrun_session_close(s);
        if (r < 0)
                return fail("ls", &err);
        for (size_t k = 0; k < n; k++)
                printf("%-7s %04o %12" PRIu64 " %" PRId64 " %s\n", e[k].type, e[k].mode, e[k].size,
                       e[k].mtime, e[k].name);
        psrun_file_entries_free(e, n);
        return 0;
}

static int sub_rm(int argc, char **argv)
{
        if (argc != 3)
                return usage_error("rm", "%s", "usage: psrun session rm ID PATH");
        psrun_session *s = NULL;
        if (open_session("rm", argv[1], &s))
                return EXIT_PSRUN;
        psrun_error err = {0};
        int r = psrun_remove(s, argv[2], &err);
        psrun_session_close(s);
        return r < 0 ? fail("rm", &err) : 0;
}

/* ---- list, destroy ---- */

static int sub_list(int argc, char **argv)
{
        bool json = argc == 2 && strcmp(argv[1], "--json") == 0;
        if (argc > 2 || (argc == 2 && !json))
                return usage_error("list", "unexpected argument `%s`", argv[argc - 1]);
        psrun_session_info *list = NULL;
        size_t n = 0;
        psrun_error err = {0};
        if (psrun_session_list(NULL, &list, &n, &err) < 0)
                return fail("list", &err);
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

static int sub_destroy(int argc, char **argv)
{
        if (argc != 2)
                return usage_error("destroy", "%s", "usage: psrun session destroy ID");
        psrun_error err = {0};
        psrun_session *s = NULL;
        int r = psrun_session_open(argv[1], NULL, &s, &err);
        if (r < 0)
                return fail("destroy", &err);
        r = psrun_session_destroy(s, &err);
        return r < 0 ? fail("destroy", &err) : 0;
}

static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
} subcommands[] = {
        {"create", sub_create}, {"exec", sub_exec}, {"install", sub_install},
        {"write", sub_write},   {"read", sub_read}, {"ls", sub_ls},
        {"rm", sub_rm},         {"list", sub_list}, {"destroy", sub_destroy},
};

int cli_cmd_session(int argc, char **argv)
{
        /* argv[0] is the subcommand; `psrun session` alone and --help are
         * the command table's. */
        if (argc < 1)
                return usage_error("", "%s", "no command given");
        for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
                if (strcmp(argv[0], subcommands[i].name) == 0)
                        return subcommands[i].run(argc, argv);
        fprintf(stderr, "psrun: session: unknown command `%s` (see `psrun session --help`)\n",
                argv[0]);
        return EXIT_PSRUN;
}

const char cli_session_help[] =
        "\nCommands:\n"
        "  create [--policy F] [-o K=V]... [--name N]   start a session, print its id\n"
        "  exec ID [--json] [--timeout S] [--cwd D] [--env K=V]... -- CMD...\n"
        "                                               run CMD in it (stdio streamed)\n"
        "  install [--tool python|node] [--json] [--timeout S] [--approve-cmd CMD]\n"
        "          ID PACKAGE                           install a package into /workspace\n"
        "  write ID PATH < DATA                         create or replace a file\n"
        "  read ID PATH > DATA                          print a file\n"
        "  ls [-R] ID [DIR]                             list a directory\n"
        "  rm ID PATH                                   remove a file or tree\n"
        "  list [--json]                                list the sessions\n"
        "  destroy ID                                   kill it and remove everything\n"
        "\nPaths are in /workspace (relative, or absolute under it). Sessions live\n"
        "under $PSRUN_SESSION_ROOT (default /run/psrun-sessions). Exit status of exec:\n"
        "the command's; 125 when psrun failed (one line on stderr).\n";
