/* SPDX-License-Identifier: MIT */
/* Command-line tables: one parser and one dispatcher for every command. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
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

void cli_call_free(struct cli_call *c)
{
        for (size_t i = 0; i < CLI_MAX_OPTS; i++) {
                free(c->list[i]);
                c->list[i] = NULL;
        }
        free(c->order);
        c->order = NULL;
}

static int usage_error(psrun_error *err, const char *cmd, const char *what)
{
        return psrun_error_set(err, EINVAL, "%s: %s (see `psrun help %s`)", cmd, what, cmd);
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
        optind = 1;
        opterr = 0;
        int ch;
        while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                char what[300], opt[256];
                if (ch == '?' || ch == ':') {
                        refused_option(opt, sizeof(opt), argv);
                        snprintf(what, sizeof(what),
                                 ch == ':' ? "`%s` needs a value" : "unknown option `%s`", opt);
                        return usage_error(err, cmd->name, what);
                }
                int i = option_index(cmd->options, n_opts, ch);
                if (i == (int) n_opts)
                        return 1; /* --help: the rest is not looked at */
                if (i < 0)
                        return usage_error(err, cmd->name, "unknown option");
                int r = record(c, i, optarg ? optarg : "", err);
                if (r < 0)
                        return r;
        }
        c->args = argv + optind;
        c->n_args = argc - optind;
        if (c->n_args < cmd->min_args ||
            (cmd->max_args != CLI_UNBOUNDED && c->n_args > cmd->max_args)) {
                char what[300];
                snprintf(what, sizeof(what), "expected %s, got %d argument%s",
                         cmd->args && *cmd->args ? cmd->args : "no arguments", c->n_args,
                         c->n_args == 1 ? "" : "s");
                return usage_error(err, cmd->name, what);
        }
        return 0;
}

int cli_dispatch(const struct command_set *set, const struct command *cmd, int argc, char **argv)
{
        struct cli_call c = {.cmd = cmd};
        psrun_error err = {0};
        int r = set->open ? set->open(&c, &err) : 0;
        if (r >= 0)
                r = cli_parse(cmd, argc, argv, &c, &err);
        if (r == 1) {
                cli_call_free(&c);
                cli_command_help(cmd->name);
                return 0;
        }
        if (r >= 0 && set->prepare)
                r = set->prepare(&c, &err);
        if (r >= 0)
                r = cmd->run(&c, &err);
        if (set->close)
                set->close(&c);
        cli_call_free(&c);
        return r < 0 ? set->fail(&err) : r;
}

enum { G_ROOT, G_LOG, G_LOG_FORMAT, G_DEBUG, G_SYSTEMD_CGROUP, G_ROOTLESS, G_CGROUP_MANAGER };
static const struct option_def global_options[] = {
        [G_ROOT] = {"root", 0, "DIR", "OCI state directory (default /run/psrun)"},
        [G_LOG] = {"log", 0, "FILE", "OCI commands log here instead of stderr"},
        [G_LOG_FORMAT] = {"log-format", 0, "text|json", "format of the log (default text)"},
        [G_DEBUG] = {"debug", 0, NULL, "log debug messages too"},
        [G_SYSTEMD_CGROUP] = {"systemd-cgroup", 0, NULL,
                              "accepted for runc compatibility; refused at create"},
        [G_ROOTLESS] = {"rootless", 0, "true|false|auto", "accepted for runc compatibility"},
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
