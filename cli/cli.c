/* SPDX-License-Identifier: MIT */
/* Command-line tables: getopt and --help from one description. */
#include "cli/cli.h"

#include <string.h>

struct cli_globals cli_globals;

void cli_print_options(FILE *f, const struct option_def *opts)
{
        for (const struct option_def *o = opts; o && o->name; o++) {
                char left[64];
                if (o->short_name)
                        snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
                                 o->arg ? " " : "", o->arg ? o->arg : "");
                else
                        snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
                                 o->arg ? o->arg : "");
                fprintf(f, "  %-28s %s\n", left, o->help);
        }
}

void cli_build_getopt(const struct option_def *opts, struct option *longopts, char *shortopts,
                      size_t n_max)
{
        size_t n = 0, s = 0;
        shortopts[s++] = '+'; /* stop at the first non-option: the command */
        for (const struct option_def *o = opts; o->name && n < n_max; o++, n++) {
                longopts[n] = (struct option){o->name, o->arg ? required_argument : no_argument,
                                              NULL, 256 + (int) n};
                if (o->short_name) {
                        shortopts[s++] = (char) o->short_name;
                        if (o->arg)
                                shortopts[s++] = ':';
                }
        }
        longopts[n] = (struct option){0};
        shortopts[s] = '\0';
}

int cli_option_index(const struct option_def *opts, int c)
{
        if (c >= 256)
                return c - 256;
        for (int i = 0; opts[i].name; i++)
                if (opts[i].short_name == c)
                        return i;
        return -1;
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
