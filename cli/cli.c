/* SPDX-License-Identifier: MIT */
/* Command-line tables: one parser and one dispatcher for every command. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/number.h"

struct cli_globals cli_globals;

static const struct option_def help_option = {"help", 'h', NULL, "show this help"};

static void print_option(FILE *f, const struct option_def *o)
{
        char left[64];
        if (o->short_name)
                snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
                         o->arg ? " " : "", o->arg ? o->arg : "");
        else
                snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        fprintf(f, "  %-28s %s\n", left, o->help);
}

void cli_print_options(FILE *f, const struct option_def *opts)
{
        for (const struct option_def *o = opts; o && o->name; o++)
                print_option(f, o);
        print_option(f, &help_option);
}

/* "session exec [OPTIONS] ID [--] CMD [ARGS...]": the command's name, its
 * parent's first, and its usage and arguments. */
static void synopsis(char *buf, size_t size, const struct command_set *set,
                     const struct command *cmd)
{
        snprintf(buf, size, "%s%s%s%s%s%s%s", set && set->parent ? set->parent : "",
                 set && set->parent ? " " : "", cmd->name, *cmd->usage ? " " : "", cmd->usage,
                 *cmd->args ? " " : "", cmd->args);
}

void cli_print_help(FILE *f, const struct command_set *set, const struct command *cmd)
{
        /* "Usage: psrun NAME " even with nothing after the name: callers
         * look for that prefix. */
        const char *sep = *cmd->usage && *cmd->args ? " " : "";
        fprintf(f, "Usage: psrun %s%s%s %s%s%s\n\n%s\n", set && set->parent ? set->parent : "",
                set && set->parent ? " " : "", cmd->name, cmd->usage, sep, cmd->args, cmd->summary);
        fprintf(f, "\nOptions:\n");
        cli_print_options(f, cmd->options);
        const struct command_set *sub = cmd->subcommands;
        if (sub) {
                fprintf(f, "\nCommands:\n");
                for (size_t i = 0; i < sub->n_commands; i++) {
                        char line[256];
                        synopsis(line, sizeof(line), NULL, &sub->commands[i]);
                        /* Summaries in one column; a synopsis too long for
                         * it has a line of its own. */
                        if (strlen(line) > 44)
                                fprintf(f, "  %s\n  %-44s %s\n", line, "",
                                        sub->commands[i].summary);
                        else
                                fprintf(f, "  %-44s %s\n", line, sub->commands[i].summary);
                }
                if (sub->notes)
                        fprintf(f, "\n%s", sub->notes);
        }
        if (cmd->notes)
                fprintf(f, "\n%s", cmd->notes);
        if (sub)
                fprintf(f, "\nRun `psrun %s COMMAND --help` for a command's options.\n", cmd->name);
}

const struct command *cli_find_command(const struct command_set *set, const char *name)
{
        for (size_t i = 0; i < set->n_commands; i++)
                if (strcmp(set->commands[i].name, name) == 0)
                        return &set->commands[i];
        return NULL;
}

int cli_fail(const psrun_error *err)
{
        fprintf(stderr, "psrun: %s\n", err->msg);
        return EXIT_PSRUN;
}

void cli_call_free(struct cli_call *c)
{
        for (size_t i = 0; i < CLI_MAX_OPTS; i++) {
                free(c->list[i]);
                c->list[i] = NULL;
        }
        free(c->order);
        c->order = NULL;
        free(c->args_buf);
        c->args_buf = NULL;
}

/* "NAME: WHAT (where the usage is told)": `psrun help NAME` for psrun's own
 * commands; a subcommand's synopsis itself (`psrun help` takes one name). */
static int usage_error(struct cli_call *c, psrun_error *err, const char *what)
{
        c->named = true;
        if (!c->set || !c->set->parent)
                return psrun_error_set(err, EINVAL, "%s: %s (see `psrun help %s`)", c->name, what,
                                       c->name);
        char line[256];
        synopsis(line, sizeof(line), c->set, c->cmd);
        return psrun_error_set(err, EINVAL, "%s: %s (usage: psrun %s)", c->name, what, line);
}

int cli_usage_error(struct cli_call *c, psrun_error *err, const char *fmt, ...)
{
        char what[300];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return usage_error(c, err, what);
}

/* getopt_long's tables from an option list, --help at index n. getopt_long
 * returns 256 + the option's index for long options, the letter for short
 * ones; option_index maps either back to the index (-1: unknown). */
static size_t build_getopt(const struct option_def *opts, struct option *longopts, char *shortopts)
{
        size_t n = 0, s = 0;
        shortopts[s++] = '+'; /* stop at the first positional argument */
        shortopts[s++] = ':'; /* a missing value is ':', not '?' */
        for (; opts && opts[n].name; n++) {
                const struct option_def *o = &opts[n];
                longopts[n] = (struct option){o->name, o->arg ? required_argument : no_argument,
                                              NULL, 256 + (int) n};
                if (o->short_name) {
                        shortopts[s++] = (char) o->short_name;
                        if (o->arg)
                                shortopts[s++] = ':';
                }
        }
        longopts[n] = (struct option){help_option.name, no_argument, NULL, 256 + (int) n};
        longopts[n + 1] = (struct option){0};
        shortopts[s++] = (char) help_option.short_name;
        shortopts[s] = '\0';
        return n;
}

static int option_index(const struct option_def *opts, size_t n, int c)
{
        if (c >= 256)
                return c - 256;
        for (size_t i = 0; i < n; i++)
                if (opts[i].short_name == c)
                        return (int) i;
        return c == help_option.short_name ? (int) n : -1;
}

/* The option getopt_long just refused, as the user wrote it. */
static void refused_option(char *buf, size_t size, char **argv)
{
        if (optopt > 0 && optopt < 256)
                snprintf(buf, size, "-%c", optopt);
        else
                number_shown(argv[optind - 1], buf, size); /* cut: it may be 3,000 characters */
}

static int record(struct cli_call *c, int i, const char *v, psrun_error *err)
{
        const char **grown = realloc(c->list[i], (c->n_list[i] + 1) * sizeof(char *));
        if (!grown)
                return psrun_error_errno(err, ENOMEM, "%s", c->cmd->name);
        c->list[i] = grown;
        c->list[i][c->n_list[i]++] = v;
        struct cli_opt *order = realloc(c->order, (c->n_order + 1) * sizeof(*order));
        if (!order)
                return psrun_error_errno(err, ENOMEM, "%s", c->cmd->name);
        c->order = order;
        c->order[c->n_order++] = (struct cli_opt){i, v};
        c->value[i] = v;
        return 0;
}

int cli_parse(const struct command *cmd, int argc, char **argv, struct cli_call *c,
              psrun_error *err)
{
        struct option longopts[CLI_MAX_OPTS + 1];
        char shortopts[2 * CLI_MAX_OPTS + 4];
        size_t n_opts = 0;
        while (cmd->options && cmd->options[n_opts].name)
                n_opts++;
        if (n_opts >= CLI_MAX_OPTS) /* a table too long for this parser: a bug */
                return psrun_error_set(err, E2BIG, "%s: more than %d options", cmd->name,
                                       CLI_MAX_OPTS - 1);
        build_getopt(cmd->options, longopts, shortopts);
        c->cmd = cmd;
        if (!*c->name)
                snprintf(c->name, sizeof(c->name), "%s", cmd->name);
        /* CMD_ID_FIRST: an argument before the options is the first
         * positional one; getopt starts after it (it skips its argv[0]). */
        char *first = NULL;
        if ((cmd->flags & CMD_ID_FIRST) && argc > 1 && argv[1][0] != '-') {
                first = argv[1];
                argv++;
                argc--;
        }
        optind = 0; /* getopt starts afresh: a subcommand is the second parse */
        opterr = 0;
        int ch;
        while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                char opt[256];
                if (ch == '?' || ch == ':') {
                        refused_option(opt, sizeof(opt), argv);
                        return cli_usage_error(
                                c, err, ch == ':' ? "`%s` needs a value" : "unknown option `%s`",
                                opt);
                }
                int i = option_index(cmd->options, n_opts, ch);
                if (i == (int) n_opts)
                        return 1; /* --help: the rest is not looked at */
                if (i < 0)
                        return usage_error(c, err, "unknown option");
                int r = record(c, i, optarg ? optarg : "", err);
                if (r < 0)
                        return r;
        }
        c->args = argv + optind;
        c->n_args = argc - optind;
        if (first) {
                c->args_buf = calloc((size_t) c->n_args + 2, sizeof(char *));
                if (!c->args_buf)
                        return psrun_error_errno(err, ENOMEM, "%s", c->name);
                c->args_buf[0] = first;
                memcpy(c->args_buf + 1, c->args, (size_t) c->n_args * sizeof(char *));
                c->args = c->args_buf;
                c->n_args++;
        }
        if (c->n_args < cmd->min_args ||
            (cmd->max_args != CLI_UNBOUNDED && c->n_args > cmd->max_args))
                return cli_usage_error(c, err, "expected %s, got %d argument%s",
                                       cmd->args && *cmd->args ? cmd->args : "no arguments",
                                       c->n_args, c->n_args == 1 ? "" : "s");
        return 0;
}

/* A command of commands: the row its first argument names, run with the
 * rest by its own set. Returns the exit status, or < 0 with err filled. */
static int run_subcommand(struct cli_call *c, psrun_error *err)
{
        const struct command_set *sub = c->cmd->subcommands;
        const struct command *cmd = cli_find_command(sub, c->args[0]);
        if (!cmd) {
                char shown[128];
                c->named = true;
                return psrun_error_set(err, EINVAL,
                                       "%s: unknown command `%s` (see `psrun %s --help`)", c->name,
                                       number_shown(c->args[0], shown, sizeof(shown)), c->name);
        }
        return cli_dispatch(sub, cmd, c->n_args, c->args);
}

int cli_dispatch(const struct command_set *set, const struct command *cmd, int argc, char **argv)
{
        struct cli_call c = {.cmd = cmd, .set = set};
        snprintf(c.name, sizeof(c.name), "%s%s%s", set->parent ? set->parent : "",
                 set->parent ? " " : "", cmd->name);
        psrun_error err = {0};
        int r = set->open ? set->open(&c, &err) : 0;
        if (r >= 0)
                r = cli_parse(cmd, argc, argv, &c, &err);
        if (r == 1) {
                cli_call_free(&c);
                cli_print_help(stdout, set, cmd);
                return 0;
        }
        if (r >= 0 && set->prepare)
                r = set->prepare(&c, &err);
        if (r >= 0)
                r = cmd->subcommands ? run_subcommand(&c, &err) : cmd->run(&c, &err);
        /* A subcommand's body says what failed; the set says which command. */
        if (r < 0 && set->parent && !c.named)
                psrun_error_prefix(&err, "%s", c.name);
        if (set->close)
                set->close(&c);
        cli_call_free(&c);
        return r < 0 ? set->fail(&err) : r;
}

enum { G_ROOT, G_LOG, G_LOG_FORMAT, G_DEBUG, G_SYSTEMD_CGROUP, G_ROOTLESS, G_CGROUP_MANAGER };
static const struct option_def global_options[] = {
        [G_ROOT] = {"root", 0, "DIR",
                    "OCI state directory (default /run/psrun; rootless: "
                    "$XDG_RUNTIME_DIR/psrun/oci)"},
        [G_LOG] = {"log", 0, "FILE", "OCI commands log here instead of stderr"},
        [G_LOG_FORMAT] = {"log-format", 0, "text|json", "format of the log (default text)"},
        [G_DEBUG] = {"debug", 0, NULL, "log debug messages too"},
        [G_SYSTEMD_CGROUP] = {"systemd-cgroup", 0, NULL,
                              "accepted for runc compatibility; refused at create"},
        [G_ROOTLESS] = {"rootless", 0, "true|false|auto",
                        "OCI commands without root (default auto: unless uid 0 of the "
                        "initial user namespace)"},
        [G_CGROUP_MANAGER] = {"cgroup-manager", 0, "cgroupfs|systemd|disabled",
                              "how container cgroups are managed (default cgroupfs)"},
        {0},
};

int cli_parse_globals(int argc, char **argv)
{
        /* Long options only, before the command; "--opt value" and
         * "--opt=value" as runc (urfave/cli) takes them. */
        int i = 1;
        while (i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2]) {
                const char *arg = argv[i] + 2;
                const char *eq = strchr(arg, '=');
                size_t len = eq ? (size_t) (eq - arg) : strlen(arg);
                int k = -1;
                for (int j = 0; global_options[j].name; j++)
                        if (strlen(global_options[j].name) == len &&
                            strncmp(global_options[j].name, arg, len) == 0)
                                k = j;
                if (k < 0)
                        break; /* --help, --version: main's */
                const char *value = NULL;
                if (global_options[k].arg) {
                        if (eq)
                                value = eq + 1;
                        else if (i + 1 < argc)
                                value = argv[++i];
                        else {
                                fprintf(stderr, "psrun: --%s needs a value\n",
                                        global_options[k].name);
                                return -1;
                        }
                }
                switch (k) {
                case G_ROOT:
                        cli_globals.root = value;
                        break;
                case G_LOG:
                        cli_globals.log = value;
                        break;
                case G_LOG_FORMAT:
                        cli_globals.log_format = value;
                        break;
                case G_DEBUG:
                        cli_globals.debug = 1;
                        break;
                case G_SYSTEMD_CGROUP:
                        cli_globals.systemd_cgroup = 1;
                        break;
                case G_ROOTLESS:
                        if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0 &&
                            strcmp(value, "auto") != 0) {
                                char shown[128];
                                fprintf(stderr,
                                        "psrun: --rootless: `%s` is not true, false or auto\n",
                                        number_shown(value, shown, sizeof(shown)));
                                return -1;
                        }
                        cli_globals.rootless = value;
                        break;
                case G_CGROUP_MANAGER:
                        cli_globals.cgroup_manager = value;
                        break;
                }
                i++;
        }
        return i - 1;
}
