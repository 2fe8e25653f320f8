/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The command line's tables: every command is a row (name, body, usage,
 * summary, options, how many positional arguments it takes), every family of
 * commands a set (psrun's own, the OCI runtime's, `psrun session`'s) with the
 * preamble its commands share. A row may be a command of commands: its first
 * argument names a row of its own set (`psrun session exec`). One parser
 * walks argv against a row's option table, one dispatcher runs the set's
 * preamble, the body and the error report, and the help is printed from the
 * rows, so a body is only what the command does.
 */

#include <stdbool.h>
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

#define CLI_MAX_OPTS  24   /* options in one command's table */
#define CLI_UNBOUNDED (-1) /* max_args: any number */

/* One option as given, in command-line order. */
struct cli_opt {
        int index;         /* into the command's option table */
        const char *value; /* "" for a flag */
};

/* A command's parsed command line, and what its set's preamble opened. */
struct cli_call {
        const struct command *cmd;
        const struct command_set *set;
        char name[64]; /* what errors name: "exec", "session exec" */
        /* err names the command already (a usage error): the dispatcher
         * does not prefix it again. */
        bool named;
        const char *value[CLI_MAX_OPTS]; /* last value given ("" for a flag); NULL: not given */
        const char **list[CLI_MAX_OPTS]; /* every value, for repeatable options */
        size_t n_list[CLI_MAX_OPTS];
        struct cli_opt *order; /* every option, in command-line order */
        size_t n_order;
        char **args; /* the positional arguments */
        int n_args;
        char **args_buf;       /* args, when the parser had to gather them (CMD_ID_FIRST) */
        struct oci_root *root; /* the OCI state root (CMD_STATE_ROOT) */
};

enum command_flags {
        CMD_AS_ROOT = 1 << 0,    /* OCI: refuses to run unless uid 0 (it starts processes) */
        CMD_STATE_ROOT = 1 << 1, /* OCI: opens the state root (--root) before the body */
        /* The first argument may come before the options, when it does not
         * look like one: `psrun session exec ID --json -- CMD` as well as
         * `exec --json ID -- CMD`. */
        CMD_ID_FIRST = 1 << 2,
};

struct command {
        const char *name;
        /* What the command does, once its command line is parsed: < 0 with
         * err filled, or the exit status. */
        int (*run)(struct cli_call *c, psrun_error *err);
        const char *usage;      /* the options' part of the synopsis: "", "[OPTIONS]"... */
        const char *args;       /* the positional arguments, as usage errors name them */
        int min_args, max_args; /* bounds on the positional arguments */
        const char *summary;
        const struct option_def *options; /* NULL: only --help */
        unsigned flags;
        const char *notes; /* paragraphs the help ends with; NULL: none */
        /* A command of commands: its first argument names one of these,
         * which the dispatcher runs with the rest; NULL: a plain command. */
        const struct command_set *subcommands;
};

/* A family of commands and what runs around each of their bodies. */
struct command_set {
        /* The command these are the subcommands of ("session"): errors and
         * help name it first, and the errors of bodies are prefixed with
         * the command's name ("session exec: "); NULL: psrun's own level. */
        const char *parent;
        const struct command *commands;
        size_t n_commands;
        const char *notes; /* what the commands share, told in the parent's help */
        /* Before the options are parsed (the OCI log: even a usage error
         * goes where the caller reads errors); NULL: nothing. */
        int (*open)(struct cli_call *c, psrun_error *err);
        /* After: the root check, the state root; NULL: nothing. */
        int (*prepare)(struct cli_call *c, psrun_error *err);
        void (*close)(struct cli_call *c);
        /* Reports err; returns the exit status. */
        int (*fail)(const psrun_error *err);
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
        /* The lowest fd (>= 3) that was not open when psrun started: fds
         * 3..first_free_fd-1 are the caller's, everything from there on
         * may be psrun's own (a LISTEN_FDS count is cut to the former). */
        int first_free_fd;
};

extern struct cli_globals cli_globals;

/* Prints an option table, --help last. */
void cli_print_options(FILE *f, const struct option_def *opts);

/* Prints a command's help, all from its row: the synopsis, the summary,
 * the options, its subcommands' synopses and summaries, the notes. */
void cli_print_help(FILE *f, const struct command_set *set, const struct command *cmd);

/* The row of set named name; NULL: none. */
const struct command *cli_find_command(const struct command_set *set, const char *name);

/* A usage error of c's command, filled as the parser's own are (one line
 * naming the command and where its usage is told); returns -EINVAL. */
int cli_usage_error(struct cli_call *c, psrun_error *err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The report of psrun's own commands: the message on stderr, EXIT_PSRUN. */
int cli_fail(const psrun_error *err);

/* `psrun policy`: fill in what the policy leaves to psrun (the host's
 * resolvers, a layer's `auto`, the installers' index URLs, the image
 * store), as a sandbox started now would get it (cli/policy.c). */
struct policy;
int cli_policy_effective(struct policy *p, psrun_error *err);

/* Parses argv (argv[0]: the command's name) against cmd: options up to the
 * first positional argument or `--` (with CMD_ID_FIRST, the first argument
 * may precede them), then the positional count. Returns 0, 1 when --help
 * was asked for, or -EINVAL with a one-line usage error naming the command
 * (-ENOMEM). c->set and c->name are the caller's (cli_dispatch's); c is
 * freed with cli_call_free whatever it returns. */
int cli_parse(const struct command *cmd, int argc, char **argv, struct cli_call *c,
              psrun_error *err);
void cli_call_free(struct cli_call *c);

/* Runs one command of set: the set's preamble, the parser, --help, the body
 * (or, for a command of commands, the subcommand its first argument names)
 * and the error report. Returns the exit status. */
int cli_dispatch(const struct command_set *set, const struct command *cmd, int argc, char **argv);

/* Parses the global options at the front of argv; returns how many
 * arguments they took, or -1 after printing an error. */
int cli_parse_globals(int argc, char **argv);

/* The OCI runtime's commands (cli/oci-cli.c). */
extern const struct command_set oci_command_set;
/* `psrun run --bundle DIR ID` is the OCI run; psrun's own run otherwise. */
extern const struct command oci_run_command;
int cli_wants_oci_run(int argc, char **argv);

/* Re-executes psrun from a sealed memfd copy of its executable, unless it
 * already runs from one (cli/sealed.c); returns only on failure (-errno) or
 * when already sealed (0). argv: main's, whole. */
int cli_reexec_sealed(char **argv, psrun_error *err);

/* `psrun session SUBCOMMAND ...` (cli/session-cli.c): the subcommands. */
extern const struct command_set session_command_set;
/* `psrun image SUBCOMMAND ...` (cli/image-cli.c). */
extern const struct command_set image_command_set;

/* `psrun mcp` (cli/mcp/server.c): an MCP server on stdin/stdout. */
int cli_cmd_mcp(struct cli_call *c, psrun_error *err);
extern const struct option_def cli_mcp_options[];
