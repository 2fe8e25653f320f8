/* SPDX-License-Identifier: MIT */
/* The psrun command line: the only place that prints. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "runtime/cgroup/cgroup.h"
#include "cli/cli.h"
#include "runtime/oci/state.h"
#include "runtime/run.h"

#ifndef PSRUN_VERSION
#define PSRUN_VERSION "0.1.0"
#endif

static void log_note(void *userdata, enum log_level level, const char *msg)
{
        if (level == LOG_LEVEL_DEBUG)
                return;
        fprintf(stderr, "psrun: note: %s\n", msg);
}

static int fail(const psrun_error *err)
{
        fprintf(stderr, "psrun: %s\n", err->msg);
        return EXIT_PSRUN;
}

static const struct command *find_command(const char *name);

/* ---- psrun run ---- */

enum { RUN_POLICY, RUN_OPTION, RUN_JSON, RUN_RESULT_FD, RUN_CGROUP_PARENT, RUN_HELP };
static const struct option_def run_options[] = {
        [RUN_POLICY] = {"policy", 'p', "FILE", "load the policy from a YAML or JSON file"},
        [RUN_OPTION] = {"option", 'o', "KEY=VALUE",
                        "set one policy key (repeatable; after --policy)"},
        [RUN_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [RUN_RESULT_FD] = {"result-fd", 0, "N", "write the result JSON to file descriptor N"},
        [RUN_CGROUP_PARENT] = {"cgroup-parent", 0, "PATH",
                               "create cgroups below PATH instead of psrun's own cgroup"},
        [RUN_HELP] = {"help", 'h', NULL, "show this help"},
        {0},
};

static int parse_fd(const char *s, int *fd)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || *end || end == s || v < 0 || v > INT_MAX)
                return -EINVAL;
        *fd = (int) v;
        return 0;
}

static int cmd_run(int argc, char **argv)
{
        if (cli_wants_oci_run(argc, argv))
                return oci_cmd_run(argc, argv);
        struct option longopts[16];
        char shortopts[32];
        cli_build_getopt(run_options, longopts, shortopts, 15);

        struct policy pol;
        psrun_error err = {0};
        if (policy_init(&pol) < 0) {
                fprintf(stderr, "psrun: out of memory\n");
                return EXIT_PSRUN;
        }
        struct run_options ro = {.forward_signals = true, .log = log_note};
        bool json = false;
        int result_fd = -1;
        int r = 0, c;

        /* Policy sources apply in command-line order: a file, then -o on top. */
        opterr = 0;
        while (r >= 0 && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                switch (cli_option_index(run_options, c)) {
                case RUN_POLICY:
                        r = policy_load_file(&pol, optarg, &err);
                        break;
                case RUN_OPTION:
                        r = policy_set_option(&pol, optarg, &err);
                        break;
                case RUN_JSON:
                        json = true;
                        break;
                case RUN_RESULT_FD:
                        if (parse_fd(optarg, &result_fd) < 0 || fcntl(result_fd, F_GETFD) < 0)
                                r = psrun_error_set(&err, EBADF,
                                                    "--result-fd: `%s` is not an open file "
                                                    "descriptor",
                                                    optarg);
                        break;
                case RUN_CGROUP_PARENT:
                        ro.cgroup_parent = optarg;
                        break;
                case RUN_HELP:
                        find_command("help")->run(2, (char *[]){"help", "run", NULL});
                        policy_free(&pol);
                        return 0;
                default:
                        r = psrun_error_set(&err, EINVAL,
                                            "run: unknown option `%s` (see `psrun run --help`)",
                                            argv[optind - 1]);
                        break;
                }
        }
        if (r >= 0 && optind >= argc)
                r = psrun_error_set(&err, EINVAL,
                                    "run: no command given (usage: psrun run [OPTIONS] -- CMD "
                                    "[ARGS...])");
        if (r < 0) {
                policy_free(&pol);
                return fail(&err);
        }

        struct run_result res;
        r = run_sandbox(&pol, argv + optind, &ro, &res, &err);
        policy_free(&pol);
        if (res.reason == RUN_REASON_SETUP_ERROR)
                fprintf(stderr, "psrun: %s\n", res.error);
        if (json)
                run_result_write_json(&res, stderr);
        if (result_fd >= 0) {
                FILE *f = fdopen(dup(result_fd), "w");
                if (f) {
                        run_result_write_json(&res, f);
                        fclose(f);
                }
        }
        return res.exit_code;
}

/* ---- psrun policy ---- */

enum { POLICY_FILE, POLICY_OPTION, POLICY_HELP };
static const struct option_def policy_options[] = {
        [POLICY_FILE] = {"policy", 'p', "FILE", "load the policy from a YAML or JSON file"},
        [POLICY_OPTION] = {"option", 'o', "KEY=VALUE", "set one policy key (repeatable)"},
        [POLICY_HELP] = {"help", 'h', NULL, "show this help"},
        {0},
};

static int cmd_policy(int argc, char **argv)
{
        struct option longopts[8];
        char shortopts[16];
        cli_build_getopt(policy_options, longopts, shortopts, 7);
        struct policy pol;
        psrun_error err = {0};
        if (policy_init(&pol) < 0) {
                fprintf(stderr, "psrun: out of memory\n");
                return EXIT_PSRUN;
        }
        int r = 0, c;
        opterr = 0;
        while (r >= 0 && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                switch (cli_option_index(policy_options, c)) {
                case POLICY_FILE:
                        r = policy_load_file(&pol, optarg, &err);
                        break;
                case POLICY_OPTION:
                        r = policy_set_option(&pol, optarg, &err);
                        break;
                case POLICY_HELP:
                        find_command("help")->run(2, (char *[]){"help", "policy", NULL});
                        policy_free(&pol);
                        return 0;
                default:
                        r = psrun_error_set(&err, EINVAL, "policy: unknown option `%s`",
                                            argv[optind - 1]);
                        break;
                }
        }
        if (r >= 0 && optind < argc)
                r = psrun_error_set(&err, EINVAL, "policy: unexpected argument `%s`", argv[optind]);
        if (r >= 0)
                r = policy_validate(&pol, &err);
        if (r >= 0)
                r = policy_write_json(&pol, stdout) < 0 || fflush(stdout) != 0
                            ? psrun_error_errno(&err, EIO, "policy: write")
                            : 0;
        policy_free(&pol);
        return r < 0 ? fail(&err) : 0;
}

/* ---- psrun gc ---- */

enum { GC_CGROUP_PARENT, GC_HELP };
static const struct option_def gc_options[] = {
        [GC_CGROUP_PARENT] = {"cgroup-parent", 0, "PATH",
                              "look below PATH instead of psrun's own cgroup"},
        [GC_HELP] = {"help", 'h', NULL, "show this help"},
        {0},
};

static int cmd_gc(int argc, char **argv)
{
        struct option longopts[8];
        char shortopts[16];
        cli_build_getopt(gc_options, longopts, shortopts, 7);
        const char *parent = NULL;
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                switch (cli_option_index(gc_options, c)) {
                case GC_CGROUP_PARENT:
                        parent = optarg;
                        break;
                case GC_HELP:
                        find_command("help")->run(2, (char *[]){"help", "gc", NULL});
                        return 0;
                default:
                        fprintf(stderr, "psrun: gc: unknown option `%s`\n", argv[optind - 1]);
                        return EXIT_PSRUN;
                }
        }
        psrun_error err = {0};
        int r = cgroup_gc(parent, &err);
        if (r < 0)
                return fail(&err);
        printf("removed %d leftover cgroup%s\n", r, r == 1 ? "" : "s");
        return 0;
}

static int cmd_version(int argc, char **argv)
{
        /* runc's shape: Docker and containerd read the first line. */
        printf("psrun version %s\nspec: %s\ncgroup driver: %s\n", PSRUN_VERSION,
               OCI_STATE_SPEC_VERSION, cgroup_driver_name());
        return 0;
}

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
        {"run", cmd_run, "[OPTIONS] [--] CMD [ARGS...]",
         "run a command in a new sandbox and wait for it", run_options},
        {"policy", cmd_policy, "[--policy FILE] [-o KEY=VALUE]...",
         "print the effective policy (defaults, then the file, then -o) as JSON", policy_options},
        {"gc", cmd_gc, "[OPTIONS]", "remove cgroups left behind by psrun runs that were killed",
         gc_options},
        {"version", cmd_version, "", "print the version", NULL},
        {"help", cmd_help, "[COMMAND]", "show help for psrun or a command", NULL},
};

static const struct command *find_command(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                if (strcmp(commands[i].name, name) == 0)
                        return &commands[i];
        for (size_t i = 0; i < oci_n_commands; i++)
                if (strcmp(oci_commands[i].name, name) == 0)
                        return &oci_commands[i];
        return NULL;
}

static int cmd_help(int argc, char **argv)
{
        const struct command *cmd = argc > 1 ? find_command(argv[1]) : NULL;
        if (cmd) {
                printf("Usage: psrun %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
                if (cmd->options) {
                        printf("\nOptions:\n");
                        cli_print_options(stdout, cmd->options);
                }
                if (cmd->run == cmd_run)
                        printf("\nPolicy keys: see psrun-policy(5). Exit status: the command's "
                               "(128+N if killed by signal N);\n125 if psrun failed, 126/127 if "
                               "the command could not be executed or found.\n");
                return 0;
        }
        printf("Usage: psrun COMMAND [OPTIONS]\n\npsrun runs untrusted code in a sandbox: "
               "namespaces, a read-only root,\ncgroup limits, no capabilities, seccomp and "
               "Landlock.\n\nCommands:\n");
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                printf("  %-10s %s\n", commands[i].name, commands[i].summary);
        printf("\nOCI runtime commands (runc's interface, for Docker, containerd and "
               "Kubernetes;\nglobal options --root, --log, --log-format, --debug come first):\n");
        for (size_t i = 0; i < oci_n_commands; i++)
                printf("  %-10s %s\n", oci_commands[i].name, oci_commands[i].summary);
        printf("\nRun `psrun help COMMAND` for a command's options.\n");
        return 0;
}

void cli_command_help(const char *name)
{
        cmd_help(2, (char *[]){"help", (char *) name, NULL});
}

int main(int argc, char **argv)
{
        int skip = cli_parse_globals(argc, argv);
        if (skip < 0)
                return EXIT_PSRUN;
        argc -= skip;
        argv += skip;
        if (argc < 2) {
                cmd_help(1, argv);
                return EXIT_PSRUN;
        }
        const char *name = argv[1];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
                name = "help";
        if (strcmp(name, "--version") == 0)
                name = "version";
        const struct command *cmd = find_command(name);
        if (!cmd) {
                fprintf(stderr, "psrun: unknown command `%s` (see `psrun help`)\n", argv[1]);
                return EXIT_PSRUN;
        }
        optind = 1;
        return cmd->run(argc - 1, argv + 1);
}
