/* SPDX-License-Identifier: MIT */
/* The psrun command line: the only place that prints. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/number.h"
#include "netns/netns.h"
#include "policy/policy.h"
#include "runtime/cgroup/cgroup.h"
#include "cli/cli.h"
#include "psrun.h"
#include "runtime/oci/state.h"
#include "runtime/run.h"

static void log_note(void *userdata, enum log_level level, const char *msg)
{
        if (level == LOG_LEVEL_DEBUG)
                return;
        fprintf(stderr, "psrun: note: %s\n", msg);
}

/* ---- psrun run ---- */

enum { RUN_POLICY, RUN_OPTION, RUN_JSON, RUN_RESULT_FD, RUN_CGROUP_PARENT, RUN_VERBOSE };
static const struct option_def run_options[] = {
        [RUN_POLICY] = {"policy", 'p', "FILE", "load the policy from a YAML or JSON file"},
        [RUN_OPTION] = {"option", 'o', "KEY=VALUE",
                        "set one policy key (repeatable; in command-line order)"},
        [RUN_JSON] = {"json", 0, NULL, "print the result as one JSON line on stderr"},
        [RUN_RESULT_FD] = {"result-fd", 0, "N", "write the result JSON to file descriptor N"},
        [RUN_CGROUP_PARENT] = {"cgroup-parent", 0, "PATH",
                               "create cgroups below PATH instead of psrun's own cgroup"},
        [RUN_VERBOSE] = {"verbose", 'v', NULL,
                         "note optional layers this host lacks on stderr (they are always in "
                         "the result's \"layers\")"},
        {0},
};

/* The policy's sources in command-line order: a file, then -o on top. */
static int load_policy(const struct cli_call *c, struct policy *pol, psrun_error *err)
{
        int r = 0;
        for (size_t i = 0; r >= 0 && i < c->n_order; i++) {
                const struct cli_opt *o = &c->order[i];
                if (o->index == RUN_POLICY) /* == POLICY_FILE */
                        r = policy_load_file(pol, o->value, err);
                else if (o->index == RUN_OPTION) /* == POLICY_OPTION */
                        r = policy_set_option(pol, o->value, err);
        }
        return r;
}

static int cmd_run(struct cli_call *c, psrun_error *err)
{
        _cleanup_(policy_free) struct policy pol;
        if (policy_init(&pol) < 0)
                return psrun_error_set(err, ENOMEM, "out of memory");
        /* Notes only with --verbose: stderr carries one line per error and
         * nothing the command did not write. */
        struct run_options ro = {.forward_signals = true,
                                 .log = c->value[RUN_VERBOSE] ? log_note : NULL,
                                 .cgroup_parent = c->value[RUN_CGROUP_PARENT]};
        int result_fd = -1;
        const char *fd_arg = c->value[RUN_RESULT_FD];
        int r = load_policy(c, &pol, err);
        if (r >= 0 && fd_arg) {
                int64_t fd = -1;
                r = number_parse_option("--result-fd", fd_arg, 0, INT_MAX, &fd, err);
                if (r >= 0 && fcntl((int) fd, F_GETFD) < 0)
                        r = psrun_error_set(err, EBADF,
                                            "--result-fd: %d is not an open file descriptor",
                                            (int) fd);
                result_fd = (int) fd;
        }
        if (r >= 0 && c->n_args == 0)
                r = psrun_error_set(err, EINVAL,
                                    "run: no command given (usage: psrun run [OPTIONS] -- CMD "
                                    "[ARGS...])");
        if (r < 0)
                return r;

        /* A terminal on stdin is shared with the sandbox, which may change
         * its termios (echo, raw mode; other requests are refused by
         * seccomp): put them back, as a shell does after a job, when we are
         * its foreground (or it is not our controlling terminal at all). */
        struct termios saved_tty;
        bool tty = tcgetattr(STDIN_FILENO, &saved_tty) == 0;

        struct run_result res;
        r = run_sandbox(&pol, c->args, &ro, &res, err);
        struct termios now_tty;
        pid_t fg = tty ? tcgetpgrp(STDIN_FILENO) : -1;
        bool ours = fg == getpgrp() || (fg < 0 && errno == ENOTTY);
        if (tty && ours && tcgetattr(STDIN_FILENO, &now_tty) == 0 &&
            memcmp(&now_tty, &saved_tty, sizeof(now_tty)) != 0)
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
        if (res.reason == RUN_REASON_SETUP_ERROR)
                fprintf(stderr, "psrun: %s\n", res.error);
        if (c->value[RUN_JSON]) {
                /* stderr is the command's too, which may have left a line
                 * unterminated: the result starts on a line of its own. */
                fputc('\n', stderr);
                run_result_write_json(&res, stderr);
        }
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

enum { POLICY_FILE, POLICY_OPTION };
static const struct option_def policy_options[] = {
        [POLICY_FILE] = {"policy", 'p', "FILE", "load the policy from a YAML or JSON file"},
        [POLICY_OPTION] = {"option", 'o', "KEY=VALUE", "set one policy key (repeatable)"},
        {0},
};
/* load_policy reads either command's -p and -o. */
_Static_assert((int) POLICY_FILE == (int) RUN_POLICY && (int) POLICY_OPTION == (int) RUN_OPTION,
               "psrun policy's -p/-o are psrun run's");

static int cmd_policy(struct cli_call *c, psrun_error *err)
{
        _cleanup_(policy_free) struct policy pol;
        if (policy_init(&pol) < 0)
                return psrun_error_set(err, ENOMEM, "out of memory");
        int r = load_policy(c, &pol, err);
        if (r >= 0)
                r = policy_validate(&pol, err);
        /* What psrun will use: the values it decides at a start, decided. */
        if (r >= 0)
                r = cli_policy_effective(&pol, err);
        if (r >= 0 && (policy_write_json(&pol, stdout) < 0 || fflush(stdout) != 0))
                r = psrun_error_errno(err, EIO, "policy: write");
        return r;
}

/* ---- psrun gc ---- */

enum { GC_CGROUP_PARENT };
static const struct option_def gc_options[] = {
        [GC_CGROUP_PARENT] = {"cgroup-parent", 0, "PATH",
                              "look below PATH instead of psrun's own cgroup"},
        {0},
};

static int cmd_gc(struct cli_call *c, psrun_error *err)
{
        /* The OCI root: --root, or the default (gc never makes one). */
        psrun_gc_options o = {.cgroup_parent = c->value[GC_CGROUP_PARENT],
                              .oci_root = cli_globals.root};
        psrun_gc_stats st;
        int r = psrun_gc(&o, &st, err);
        if (r < 0)
                return r;
        printf("removed %u leftover cgroup%s, %u OCI container%s whose creator died and %u "
               "leftover network%s\n",
               st.cgroups, st.cgroups == 1 ? "" : "s", st.containers, st.containers == 1 ? "" : "s",
               st.networks, st.networks == 1 ? "" : "s");
        if (st.sessions > 0)
                printf("removed %u dead session%s\n", st.sessions, st.sessions == 1 ? "" : "s");
        if (st.gvisor > 0)
                printf("removed %u leftover gVisor bundle%s\n", st.gvisor,
                       st.gvisor == 1 ? "" : "s");
        return 0;
}

/* What psrun is built with, as crun's `+FEATURE` line (harnesses grep it:
 * crun's tests skip systemd-cgroup cases without +SYSTEMD, which psrun
 * refuses, so it is not claimed). */
static const char *const version_features[] = {
        "CAP", "SECCOMP", "LANDLOCK", "APPARMOR", "CGROUP-V1", "CGROUP-V2", "USERNS",
};

static int cmd_version(struct cli_call *c, psrun_error *err)
{
        /* runc's and crun's shape: Docker and containerd read the first line. */
        printf("psrun version %s\nspec: %s\ncgroup driver: %s\n", psrun_version(),
               OCI_STATE_SPEC_VERSION, cgroup_driver_name());
        for (size_t i = 0; i < ARRAY_SIZE(version_features); i++)
                printf("%s+%s", i ? " " : "", version_features[i]);
        printf("\n");
        return 0;
}

static int cmd_help(struct cli_call *c, psrun_error *err);

static const struct command commands[] = {
        {"run", cmd_run, "[OPTIONS] [--]", "CMD [ARGS...]", 0, CLI_UNBOUNDED,
         "run a command in a new sandbox and wait for it", run_options, 0,
         "Policy keys: see psrun-policy(5). Exit status: the command's (128+N if killed by "
         "signal N);\n125 if psrun failed, 126/127 if the command could not be executed or "
         "found.\n",
         NULL},
        {"policy", cmd_policy, "[--policy FILE] [-o KEY=VALUE]...", "", 0, 0,
         "print the effective policy (defaults, then the file, then -o) as JSON", policy_options, 0,
         NULL, NULL},
        /* cli/session-cli.c: the subcommands, their options and help. */
        {"session", NULL, "", "COMMAND [ARGS...]", 1, CLI_UNBOUNDED,
         "long-lived sandboxes: create, exec, install, write, read, ls, rm, list, destroy", NULL, 0,
         NULL, &session_command_set},
        {"image", NULL, "", "COMMAND [ARGS...]", 1, CLI_UNBOUNDED,
         "OCI images: pull, ls, inspect, rm, prune, import", NULL, 0, NULL, &image_command_set},
        {"mcp", cli_cmd_mcp,
         "[--policy FILE] [-o KEY=VALUE]... [--allow-override KEY]... [--approve-cmd CMD]", "", 0,
         0, "serve sandboxes to an MCP client on stdin/stdout (docs/mcp.md)", cli_mcp_options, 0,
         NULL, NULL},
        {"gc", cmd_gc, "[OPTIONS]", "", 0, 0,
         "remove what killed psrun runs and dead sessions left behind: cgroups, OCI "
         "containers, veths, nft tables, address leases and gVisor bundles",
         gc_options, 0, NULL, NULL},
        {"version", cmd_version, "", "", 0, 0, "print the version", NULL, 0, NULL, NULL},
        {"help", cmd_help, "", "[COMMAND]", 0, 1, "show help for psrun or a command", NULL, 0, NULL,
         NULL},
};

static const struct command_set psrun_command_set = {
        .commands = commands,
        .n_commands = ARRAY_SIZE(commands),
        .fail = cli_fail,
};

/* Every command psrun has, by family; help lists them in this order. */
static const struct command_set *const command_sets[] = {&psrun_command_set, &oci_command_set};

static const struct command *find_command(const char *name, const struct command_set **set)
{
        for (size_t s = 0; s < ARRAY_SIZE(command_sets); s++) {
                const struct command *cmd = cli_find_command(command_sets[s], name);
                if (cmd) {
                        if (set)
                                *set = command_sets[s];
                        return cmd;
                }
        }
        return NULL;
}

/* The usage: on stdout when asked for, on stderr after a usage error. */
static void print_usage(FILE *out)
{
        fprintf(out, "Usage: psrun COMMAND [OPTIONS]\n\npsrun runs untrusted code in a sandbox: "
                     "namespaces, a read-only root,\ncgroup limits, no capabilities, seccomp and "
                     "Landlock.\n\nCommands:\n");
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(out, "\nOCI runtime commands (runc's interface, for Docker, containerd and "
                     "Kubernetes;\nglobal options --root, --log, --log-format, --debug, "
                     "--rootless come first):\n");
        for (size_t i = 0; i < oci_command_set.n_commands; i++)
                fprintf(out, "  %-10s %s\n", oci_command_set.commands[i].name,
                        oci_command_set.commands[i].summary);
        fprintf(out, "\nRun `psrun help COMMAND` for a command's options.\n");
}

static int cmd_help(struct cli_call *c, psrun_error *err)
{
        char shown[128];
        if (!c->n_args) {
                print_usage(stdout);
                return 0;
        }
        const struct command_set *set = NULL;
        const struct command *cmd = find_command(c->args[0], &set);
        if (!cmd)
                return psrun_error_set(err, EINVAL, "help: unknown command `%s` (see `psrun help`)",
                                       number_shown(c->args[0], shown, sizeof(shown)));
        cli_print_help(stdout, set, cmd);
        return 0;
}

/* The commands whose processes join a container while they still run
 * psrun's binary: they run from a sealed copy of it (cli/sealed.c). */
static bool reaches_into_container(const char *name, int argc, char **argv)
{
        if (strcmp(name, "create") == 0 || strcmp(name, "exec") == 0)
                return true;
        return strcmp(name, "run") == 0 && cli_wants_oci_run(argc, argv);
}

int main(int argc, char **argv)
{
        /* Before psrun opens anything of its own. */
        cli_globals.first_free_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
        if (cli_globals.first_free_fd >= 0)
                close(cli_globals.first_free_fd);
        else
                cli_globals.first_free_fd = 3;
        char **full_argv = argv;
        int skip = cli_parse_globals(argc, argv);
        if (skip < 0)
                return EXIT_PSRUN;
        argc -= skip;
        argv += skip;
        if (argc < 2) {
                print_usage(stderr);
                return EXIT_PSRUN;
        }
        const char *name = argv[1];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
                name = "help";
        if (strcmp(name, "--version") == 0)
                name = "version";
        const struct command_set *set = NULL;
        const struct command *cmd = find_command(name, &set);
        if (!cmd) {
                char shown[128];
                fprintf(stderr, "psrun: unknown command `%s` (see `psrun help`)\n",
                        number_shown(argv[1], shown, sizeof(shown)));
                return EXIT_PSRUN;
        }
        if (reaches_into_container(name, argc - 1, argv + 1)) {
                psrun_error err = {0};
                if (cli_reexec_sealed(full_argv, &err) < 0) {
                        fprintf(stderr, "psrun: %s\n", err.msg);
                        return EXIT_PSRUN;
                }
        }
        if (cmd->run == cmd_run && cli_wants_oci_run(argc - 1, argv + 1)) {
                cmd = &oci_run_command;
                set = &oci_command_set;
        }
        return cli_dispatch(set, cmd, argc - 1, argv + 1);
}
