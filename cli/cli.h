/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The command line's tables: every command is a row (name, handler, usage,
 * summary, options), and getopt_long and --help are generated from the
 * option tables. Shared by psrun's own commands (cli/main.c) and the OCI
 * runtime's (cli/oci-cli.c).
 */

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

#define EXIT_PSRUN 125 /* psrun's own failures, as docker and runc do */

struct option_def {
        const char *name;
        int short_name;  /* 0: none */
        const char *arg; /* NULL: a flag */
        const char *help;
};

struct command {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *usage;
        const char *summary;
        const struct option_def *options;
};

/* Options given before the command (runc's global flags). */
struct cli_globals {
        const char *root; /* NULL: OCI_ROOT_DEFAULT */
        const char *log;  /* NULL: stderr */
        const char *log_format;
        const char *cgroup_manager; /* "cgroupfs" (default), "systemd", "disabled" */
        const char *rootless;
        int debug;
        int systemd_cgroup;
};

extern struct cli_globals cli_globals;

void cli_print_options(FILE *f, const struct option_def *opts);

/* Fills getopt_long's tables from an option list. getopt_long then returns
 * 256 + the option's index for long options; cli_option_index maps either
 * kind back to the index (-1: unknown). n_max: room in longopts. */
void cli_build_getopt(const struct option_def *opts, struct option *longopts, char *shortopts,
                      size_t n_max);
int cli_option_index(const struct option_def *opts, int c);

/* Parses the global options at the front of argv; returns how many
 * arguments they took, or -1 after printing an error. */
int cli_parse_globals(int argc, char **argv);

/* Prints `psrun help NAME` (cli/main.c). */
void cli_command_help(const char *name);

/* The OCI runtime's commands (cli/oci-cli.c). */
extern const struct command oci_commands[];
extern const size_t oci_n_commands;
/* `psrun run --bundle DIR ID` is the OCI run; psrun's own run otherwise. */
int oci_cmd_run(int argc, char **argv);
int cli_wants_oci_run(int argc, char **argv);
