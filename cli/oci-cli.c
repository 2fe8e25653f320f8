/* SPDX-License-Identifier: MIT */
/*
 * The OCI runtime's command line, runc's interface: what Docker, containerd
 * and Kubernetes call. Errors go to the log (--log, --log-format json: the
 * last "error" line is what Docker shows as "OCI runtime create failed:
 * ..."), or to stderr without --log; the exit status is then 1, as runc's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/number.h"
#include "policy/policy.h"
#include "cli/cli.h"
#include "runtime/oci/container.h"
#include "runtime/oci/features.h"
#include "runtime/oci/rootless.h"
#include "cli/oci-log.h"
#include "runtime/oci/signal.h"
#include "runtime/oci/state.h"

#define EXIT_OCI 1

/* Whether begin() set up the log: before that (a bad --log or
 * --log-format), errors go to stderr once, as psrun's own. */
static bool log_ready;

static int oci_fail(const psrun_error *err)
{
        if (!log_ready) {
                fprintf(stderr, "psrun: %s\n", err->msg);
                return EXIT_OCI;
        }
        oci_log(OCI_LOG_ERROR, "%s", err->msg);
        /* As runc: a fatal error reaches stderr too when the log is a file
         * (a human at a terminal; the shim reads the log). */
        if (cli_globals.log)
                fprintf(stderr, "psrun: %s\n", err->msg);
        return EXIT_OCI;
}

/* --preserve-fds N: no more than the kernel's largest fd table (nr_open's
 * ceiling). Fds of the range that are not open are holes, as in crun; the
 * child passes only the caller's (runtime/child.c, close_own_preserved). */
#define PRESERVE_FDS_MAX (1 << 20)

static int parse_preserve_fds(const char *s, unsigned *ret, psrun_error *err)
{
        int64_t v;
        int r = number_parse_option("--preserve-fds", s, 0, PRESERVE_FDS_MAX, &v, err);
        if (r < 0)
                return r;
        *ret = (unsigned) v;
        return 0;
}

/* The log, first thing in every command (so that even a usage error goes
 * where the caller reads errors); the state root is opened after the
 * options are parsed. */
static int begin(struct cli_call *c, psrun_error *err)
{
        char shown[128];
        int format = OCI_LOG_TEXT;
        if (cli_globals.log_format &&
            (format = oci_log_format_from_string(cli_globals.log_format)) < 0)
                return psrun_error_set(err, EINVAL, "--log-format: `%s` is not text or json",
                                       number_shown(cli_globals.log_format, shown, sizeof(shown)));
        int r = oci_log_open(cli_globals.log, (enum oci_log_format) format, cli_globals.debug, err);
        if (r < 0)
                return r;
        log_ready = true;
        if (cli_globals.cgroup_manager && strcmp(cli_globals.cgroup_manager, "cgroupfs") != 0 &&
            strcmp(cli_globals.cgroup_manager, "systemd") != 0 &&
            strcmp(cli_globals.cgroup_manager, "disabled") != 0)
                return psrun_error_set(
                        err, EINVAL, "--cgroup-manager: `%s` is not cgroupfs, systemd or disabled",
                        number_shown(cli_globals.cgroup_manager, shown, sizeof(shown)));
        return 0;
}

static bool systemd_cgroup(void)
{
        return cli_globals.systemd_cgroup ||
               (cli_globals.cgroup_manager && strcmp(cli_globals.cgroup_manager, "systemd") == 0);
}

static bool no_cgroups(void)
{
        return cli_globals.cgroup_manager && strcmp(cli_globals.cgroup_manager, "disabled") == 0;
}

/* --rootless, decided once (cli_parse_globals checked the word). */
static bool rootless(void)
{
        return oci_rootless_active(
                (enum oci_rootless_mode) oci_rootless_mode_from_string(cli_globals.rootless));
}

/* After the options: the root check where the command starts processes
 * (rootless: none), and the state root when the command has one: --root,
 * or the user's own when rootless (runtime/oci/rootless.h). */
static int prepare(struct cli_call *c, psrun_error *err)
{
        int r = 0;
        bool rl = rootless();
        if ((c->cmd->flags & CMD_AS_ROOT) && !rl)
                r = oci_require_root(c->cmd->name, err);
        if (r >= 0 && (c->cmd->flags & CMD_STATE_ROOT)) {
                _cleanup_free_ char *mine = NULL;
                if (!cli_globals.root && rl)
                        r = oci_rootless_root(true, &mine, err);
                if (r >= 0)
                        r = oci_root_open(mine ? mine : cli_globals.root, &c->root, err);
                if (r >= 0)
                        oci_root_set_log(c->root, oci_log_sink, NULL);
        }
        return r;
}

static void close_command(struct cli_call *c)
{
        oci_root_closep(&c->root);
}

/* ---- create, start, run ---- */

enum {
        CR_BUNDLE,
        CR_PID_FILE,
        CR_CONSOLE,
        CR_NO_PIVOT,
        CR_NO_KEYRING,
        CR_PRESERVE,
        CR_CONFIG,
        /* run only */
        CR_DETACH,
        CR_KEEP
};
static const struct option_def create_options[] = {
        [CR_BUNDLE] = {"bundle", 'b', "DIR", "the bundle (default: the current directory)"},
        [CR_PID_FILE] = {"pid-file", 0, "FILE", "write the container's init pid here"},
        [CR_CONSOLE] = {"console-socket", 0, "PATH",
                        "send the terminal's master fd to this unix socket"},
        [CR_NO_PIVOT] = {"no-pivot", 0, NULL, "move the root with MS_MOVE (ramfs hosts)"},
        [CR_NO_KEYRING] = {"no-new-keyring", 0, NULL,
                           "keep the caller's session keyring (else a new one, \"_ses.ID\")"},
        [CR_PRESERVE] = {"preserve-fds", 0, "N", "pass fds 3..3+N-1 to the process"},
        [CR_CONFIG] = {"config", 0, "FILE",
                       "config.json to use instead of the bundle's (relative: to the bundle)"},
        {0},
};
static const struct option_def run_oci_options[] = {
        [CR_BUNDLE] = {"bundle", 'b', "DIR", "the bundle (default: the current directory)"},
        [CR_PID_FILE] = {"pid-file", 0, "FILE", "write the container's init pid here"},
        [CR_CONSOLE] = {"console-socket", 0, "PATH",
                        "send the terminal's master fd to this unix socket"},
        [CR_NO_PIVOT] = {"no-pivot", 0, NULL, "move the root with MS_MOVE (ramfs hosts)"},
        [CR_NO_KEYRING] = {"no-new-keyring", 0, NULL,
                           "keep the caller's session keyring (else a new one, \"_ses.ID\")"},
        [CR_PRESERVE] = {"preserve-fds", 0, "N", "pass fds 3..3+N-1 to the process"},
        [CR_CONFIG] = {"config", 0, "FILE",
                       "config.json to use instead of the bundle's (relative: to the bundle)"},
        [CR_DETACH] = {"detach", 'd', NULL, "start it and return; do not wait"},
        [CR_KEEP] = {"keep", 0, NULL, "do not delete the container when it exits"},
        {0},
};

static int fill_create(const struct cli_call *p, struct oci_create_options *o, psrun_error *err)
{
        *o = (struct oci_create_options){
                .id = p->args[0],
                .bundle = p->value[CR_BUNDLE],
                .pid_file = p->value[CR_PID_FILE],
                .config_path = p->value[CR_CONFIG],
                .console_socket = p->value[CR_CONSOLE],
                .no_pivot = p->value[CR_NO_PIVOT] != NULL,
                .no_new_keyring = p->value[CR_NO_KEYRING] != NULL,
                .detached = true,
                .no_cgroups = no_cgroups(),
                .systemd_cgroup = systemd_cgroup(),
                .rootless = rootless(),
        };
        int r = 0;
        if (p->value[CR_PRESERVE])
                r = parse_preserve_fds(p->value[CR_PRESERVE], &o->preserve_fds, err);
        /* Socket activation, as runc and crun take it from their caller:
         * LISTEN_FDS=n hands fds 3..3+n-1 on, unless LISTEN_PID says they
         * were meant for another process (an inherited environment). */
        const char *listen = getenv("LISTEN_FDS"), *listen_pid = getenv("LISTEN_PID");
        char self[32];
        snprintf(self, sizeof(self), "%d", (int) getpid());
        if (listen_pid && *listen_pid && strcmp(listen_pid, self) != 0)
                listen = NULL;
        if (r >= 0 && listen && *listen) {
                int64_t v;
                r = number_parse_option("LISTEN_FDS", listen, 0, 1024, &v, err);
                /* Only fds that were open when psrun started: the rest of
                 * the range would be psrun's own. An environment inherited
                 * with a stale count is common (crun's listen_pid_env test
                 * sets one with no fd open), so the count is cut to what is
                 * there and LISTEN_FDS tells the process what it got. */
                if (r >= 0) {
                        int open_fds = cli_globals.first_free_fd - 3;
                        o->socket_activation = true;
                        o->listen_fds = v < open_fds ? (unsigned) v : (unsigned) open_fds;
                }
        }
        return r;
}

static int cmd_create(struct cli_call *c, psrun_error *err)
{
        struct oci_create_options o;
        int r = fill_create(c, &o, err);
        if (r >= 0)
                r = oci_create(c->root, &o, NULL, NULL, err);
        return r < 0 ? r : 0;
}

static int cmd_start(struct cli_call *c, psrun_error *err)
{
        int r = oci_start(c->root, c->args[0], err);
        return r < 0 ? r : 0;
}

/* The OCI run's option i of run_oci_options that arg names, or -1. */
static int run_option_of(const char *arg)
{
        for (int i = 0; run_oci_options[i].name; i++) {
                const struct option_def *o = &run_oci_options[i];
                size_t len = strlen(o->name);
                if ((arg[1] == o->short_name && o->short_name && arg[2] == '\0') ||
                    (strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, o->name, len) == 0 &&
                     (arg[2 + len] == '\0' || arg[2 + len] == '=')))
                        return i;
        }
        return -1;
}

int cli_wants_oci_run(int argc, char **argv)
{
        /* psrun's own run is `run [OPTIONS] -- CMD...`; the OCI run is
         * runc's `run [OPTIONS] ID`. The OCI run is meant iff there is no
         * `--`, every option is one of the OCI run's, and either --bundle is
         * given or exactly one argument follows the options and it is a
         * valid container id (the bundle is then the current directory).
         * Options are walked as getopt will (values skipped). */
        bool bundle = false;
        int i;
        for (i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        return 0;
                if (argv[i][0] != '-' || argv[i][1] == '\0')
                        break;
                int k = run_option_of(argv[i]);
                if (k < 0)
                        return 0;
                if (k == CR_BUNDLE)
                        bundle = true;
                if (run_oci_options[k].arg && !strchr(argv[i], '=') && argv[i][1] == '-')
                        i++;
                else if (run_oci_options[k].arg && argv[i][1] != '-' && argv[i][2] == '\0')
                        i++;
        }
        for (int j = i; j < argc; j++)
                if (strcmp(argv[j], "--") == 0)
                        return 0;
        if (bundle)
                return 1;
        psrun_error err = {0};
        return argc - i == 1 && oci_id_validate(argv[i], &err) == 0;
}

static int cmd_oci_run(struct cli_call *c, psrun_error *err)
{
        struct oci_create_options o;
        int r = fill_create(c, &o, err);
        /* `psrun run ls` is the OCI run of container "ls" (no `--`): say so
         * when there is no bundle here, the likelier meaning being a sandbox. */
        if (r >= 0 && !o.bundle && !o.config_path && access("config.json", F_OK) < 0)
                r = psrun_error_set(err, ENOENT,
                                    "run: no config.json in the current directory (`psrun run "
                                    "ID` is the OCI run of the bundle here; to run a command in "
                                    "a sandbox: `psrun run -- %s`)",
                                    o.id);
        if (r < 0)
                return r;
        bool detach = c->value[CR_DETACH] != NULL;
        o.detached = detach;
        pid_t pid = 0;
        _cleanup_close_ int pidfd = -1;
        r = oci_create(c->root, &o, &pid, &pidfd, err);
        if (r >= 0)
                r = oci_start(c->root, o.id, err);
        if (r < 0) {
                if (pidfd >= 0)
                        (void) oci_delete(c->root, o.id, true, NULL);
                return r;
        }
        if (detach)
                return 0;
        /* Foreground: init is our child. Signals reach it as they reach
         * us only through the terminal; wait and pass its status on. */
        siginfo_t si = {0};
        while (waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        int code = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        if (!c->value[CR_KEEP] && oci_delete(c->root, o.id, true, err) < 0)
                oci_log(OCI_LOG_WARNING, "%s", err->msg);
        return code;
}

/* ---- state, list ---- */

static int cmd_state(struct cli_call *c, psrun_error *err)
{
        _cleanup_(oci_state_free) struct oci_state st = {0};
        int r = oci_get_state(c->root, c->args[0], &st, err);
        if (r >= 0 && (oci_state_print_json(&st, stdout) < 0 || fflush(stdout) != 0))
                r = psrun_error_errno(err, EIO, "state: write");
        return r < 0 ? r : 0;
}

enum { L_FORMAT, L_QUIET };
static const struct option_def list_options[] = {
        [L_FORMAT] = {"format", 'f', "table|json", "output format"},
        [L_QUIET] = {"quiet", 'q', NULL, "print only the ids"},
        {0},
};

static int cmd_list(struct cli_call *c, psrun_error *err)
{
        _cleanup_strv_free_ char **ids = NULL;
        int r = 0;
        const char *format = c->value[L_FORMAT] ? c->value[L_FORMAT] : "table";
        if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
                r = psrun_error_set(err, EINVAL, "list: --format: `%s` is not table or json",
                                    format);
        if (r >= 0)
                r = oci_container_list(c->root, &ids, err);
        if (r < 0)
                return r;
        bool json = strcmp(format, "json") == 0;
        if (json)
                printf("[");
        else if (!c->value[L_QUIET])
                printf("%-20s %-8s %-8s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE",
                       "CREATED", "OWNER");
        size_t shown = 0;
        for (size_t i = 0; ids[i]; i++) {
                _cleanup_(oci_state_free) struct oci_state st = {0};
                if (oci_get_state(c->root, ids[i], &st, NULL) < 0)
                        continue; /* deleted meanwhile */
                const char *status = oci_status_to_string(st.status);
                if (c->value[L_QUIET] && !json) {
                        printf("%s\n", st.id);
                } else if (json) {
                        printf("%s{\"ociVersion\":", shown ? "," : "");
                        json_write_string(stdout, st.oci_version);
                        printf(",\"id\":");
                        json_write_string(stdout, st.id);
                        printf(",\"pid\":%d,\"status\":\"%s\",\"bundle\":", st.pid, status);
                        json_write_string(stdout, st.bundle);
                        printf(",\"rootfs\":");
                        json_write_string(stdout, st.rootfs ? st.rootfs : "");
                        printf(",\"created\":");
                        json_write_string(stdout, st.created);
                        printf(",\"owner\":");
                        json_write_string(stdout, st.owner ? st.owner : "");
                        printf("}");
                } else {
                        printf("%-20s %-8d %-8s %-40s %-32s %s\n", st.id, st.pid, status, st.bundle,
                               st.created, st.owner ? st.owner : "");
                }
                shown++;
        }
        if (json)
                printf("]\n");
        return fflush(stdout) == 0 ? 0 : EXIT_OCI;
}

/* ---- kill, delete, pause, resume ---- */

enum { K_ALL };
static const struct option_def kill_options[] = {
        [K_ALL] = {"all", 'a', NULL, "signal every process of the container"},
        {0},
};

static int cmd_kill(struct cli_call *c, psrun_error *err)
{
        int sig = SIGTERM;
        int r = 0;
        if (c->n_args == 2)
                r = oci_signal_from_string(c->args[1], &sig, err);
        if (r >= 0)
                r = oci_kill(c->root, c->args[0], sig, c->value[K_ALL] != NULL, err);
        return r < 0 ? r : 0;
}

enum { D_FORCE };
static const struct option_def delete_options[] = {
        [D_FORCE] = {"force", 'f', NULL, "kill a running container first"},
        {0},
};

static int cmd_delete(struct cli_call *c, psrun_error *err)
{
        int r = oci_delete(c->root, c->args[0], c->value[D_FORCE] != NULL, err);
        return r < 0 ? r : 0;
}

static int pause_or_resume(struct cli_call *c, bool pause, psrun_error *err)
{
        int r = oci_pause(c->root, c->args[0], pause, err);
        return r < 0 ? r : 0;
}

static int cmd_pause(struct cli_call *c, psrun_error *err)
{
        return pause_or_resume(c, true, err);
}

static int cmd_resume(struct cli_call *c, psrun_error *err)
{
        return pause_or_resume(c, false, err);
}

/* ---- update ---- */

enum {
        U_RESOURCES,
        U_MEMORY,
        U_MEMORY_SWAP,
        U_MEMORY_RESERVATION,
        U_CPU_SHARES,
        U_CPU_QUOTA,
        U_CPU_PERIOD,
        U_CPUSET_CPUS,
        U_CPUSET_MEMS,
        U_PIDS_LIMIT,
        U_BLKIO_WEIGHT,
};
static const struct option_def update_options[] = {
        [U_RESOURCES] = {"resources", 'r', "FILE",
                         "LinuxResources JSON to apply (`-`: read it from stdin)"},
        [U_MEMORY] = {"memory", 'm', "SIZE", "memory limit (bytes, or 64m, 1g...)"},
        [U_MEMORY_SWAP] = {"memory-swap", 0, "SIZE", "memory + swap limit (-1: unlimited)"},
        [U_MEMORY_RESERVATION] = {"memory-reservation", 0, "SIZE", "memory soft limit"},
        [U_CPU_SHARES] = {"cpu-shares", 0, "N", "CPU shares (relative weight)"},
        [U_CPU_QUOTA] = {"cpu-quota", 0, "USEC", "CPU time per period (-1: no limit)"},
        [U_CPU_PERIOD] = {"cpu-period", 0, "USEC", "CPU quota period"},
        [U_CPUSET_CPUS] = {"cpuset-cpus", 0, "LIST", "CPUs allowed (0-3, 0,1)"},
        [U_CPUSET_MEMS] = {"cpuset-mems", 0, "LIST", "memory nodes allowed"},
        [U_PIDS_LIMIT] = {"pids-limit", 0, "N", "maximum number of tasks (-1: unlimited)"},
        [U_BLKIO_WEIGHT] = {"blkio-weight", 0, "N", "block IO weight (10-1000)"},
        {0},
};

/* A signed size: -1 (unlimited) or a size with an optional unit. */
static int parse_limit(const char *flag, const char *s, struct oci_opt_i64 *out, psrun_error *err)
{
        uint64_t v;
        if (strcmp(s, "-1") == 0) {
                *out = (struct oci_opt_i64){true, -1};
                return 0;
        }
        char shown[128];
        if (parse_size(s, &v) < 0 || v > INT64_MAX)
                return psrun_error_set(err, EINVAL, "update: --%s: `%s` is not a size", flag,
                                       number_shown(s, shown, sizeof(shown)));
        *out = (struct oci_opt_i64){true, (int64_t) v};
        return 0;
}

/* The kernel's largest cpu.shares (MAX_SHARES, 2^18). */
#define CPU_SHARES_MAX (1 << 18)

/* A count in [min, max] (min -1: "unlimited" allowed). */
static int parse_count(const char *flag, const char *s, int64_t min, int64_t max,
                       struct oci_opt_i64 *out, psrun_error *err)
{
        char option[64];
        int64_t v;
        snprintf(option, sizeof(option), "update: --%s", flag);
        int r = number_parse_option(option, s, min, max, &v, err);
        if (r < 0)
                return r;
        *out = (struct oci_opt_i64){true, v};
        return 0;
}

static int read_resources(const char *path, struct oci_resources *res, psrun_error *err)
{
        _cleanup_close_ int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "update: --resources: %s", path);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_all(fd, OCI_CONFIG_MAX_SIZE, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "update: --resources: read %s", path);
        return oci_resources_parse(strcmp(path, "-") == 0 ? "resources (stdin)" : path, buf, len,
                                   res, err);
}

/* The classic flags, on top of --resources. The structs live on the
 * stack: only what the walker allocated is freed. */
struct update_flags {
        struct oci_memory memory;
        struct oci_cpu cpu;
        struct oci_pids pids;
        struct oci_block_io blkio;
};

static int apply_flags(const struct cli_call *p, struct oci_resources *res, struct update_flags *f,
                       psrun_error *err)
{
        const char *const *v = p->value;
        int r = 0;
        if (v[U_MEMORY] || v[U_MEMORY_SWAP] || v[U_MEMORY_RESERVATION]) {
                if (res->memory)
                        f->memory = *res->memory;
                if (v[U_MEMORY] && r >= 0)
                        r = parse_limit("memory", v[U_MEMORY], &f->memory.limit, err);
                if (v[U_MEMORY_SWAP] && r >= 0)
                        r = parse_limit("memory-swap", v[U_MEMORY_SWAP], &f->memory.swap, err);
                if (v[U_MEMORY_RESERVATION] && r >= 0)
                        r = parse_limit("memory-reservation", v[U_MEMORY_RESERVATION],
                                        &f->memory.reservation, err);
        }
        if (v[U_CPU_SHARES] || v[U_CPU_QUOTA] || v[U_CPU_PERIOD] || v[U_CPUSET_CPUS] ||
            v[U_CPUSET_MEMS]) {
                if (res->cpu)
                        f->cpu = *res->cpu;
                struct oci_opt_i64 n;
                if (v[U_CPU_SHARES] && r >= 0 &&
                    (r = parse_count("cpu-shares", v[U_CPU_SHARES], 0, CPU_SHARES_MAX, &n, err)) >=
                            0)
                        f->cpu.shares = (struct oci_opt_u64){true, (uint64_t) n.value};
                if (v[U_CPU_QUOTA] && r >= 0)
                        r = parse_count("cpu-quota", v[U_CPU_QUOTA], -1, INT64_MAX, &f->cpu.quota,
                                        err);
                if (v[U_CPU_PERIOD] && r >= 0 &&
                    (r = parse_count("cpu-period", v[U_CPU_PERIOD], 0, INT64_MAX, &n, err)) >= 0)
                        f->cpu.period = (struct oci_opt_u64){true, (uint64_t) n.value};
                if (v[U_CPUSET_CPUS])
                        f->cpu.cpus = (char *) v[U_CPUSET_CPUS];
                if (v[U_CPUSET_MEMS])
                        f->cpu.mems = (char *) v[U_CPUSET_MEMS];
        }
        if (v[U_PIDS_LIMIT] && r >= 0)
                r = parse_count("pids-limit", v[U_PIDS_LIMIT], -1, INT64_MAX, &f->pids.limit, err);
        if (v[U_BLKIO_WEIGHT] && r >= 0) {
                struct oci_opt_i64 n;
                if ((r = parse_count("blkio-weight", v[U_BLKIO_WEIGHT], 0, 1000, &n, err)) >= 0)
                        f->blkio.weight = (struct oci_opt_u64){true, (uint64_t) n.value};
        }
        return r;
}

static int cmd_update(struct cli_call *c, psrun_error *err)
{
        _cleanup_(oci_resources_free) struct oci_resources res = {0};
        struct update_flags f = {0};
        int r = 0;
        if (c->value[U_RESOURCES])
                r = read_resources(c->value[U_RESOURCES], &res, err);
        if (r >= 0)
                r = apply_flags(c, &res, &f, err);
        if (r < 0)
                return r;
        /* A view of res with the flags' structs where flags were given. */
        struct oci_resources view = res;
        const char *const *v = c->value;
        if (v[U_MEMORY] || v[U_MEMORY_SWAP] || v[U_MEMORY_RESERVATION])
                view.memory = &f.memory;
        if (v[U_CPU_SHARES] || v[U_CPU_QUOTA] || v[U_CPU_PERIOD] || v[U_CPUSET_CPUS] ||
            v[U_CPUSET_MEMS])
                view.cpu = &f.cpu;
        if (v[U_PIDS_LIMIT])
                view.pids = &f.pids;
        if (v[U_BLKIO_WEIGHT])
                view.block_io = &f.blkio;
        r = oci_update(c->root, c->args[0], &view, err);
        return r < 0 ? r : 0;
}

/* ---- ps, events ---- */

static bool pid_in(pid_t pid, const pid_t *pids, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (pids[i] == pid)
                        return true;
        return false;
}

/* The table format runs ps(1) with the given options (default -ef) and keeps
 * its header and the container's lines, as runc does. */
static int ps_table(const pid_t *pids, size_t n, char **ps_args, int n_ps_args, psrun_error *err)
{
        _cleanup_free_ char *cmd = strdup("ps");
        for (int i = 0; cmd && i < n_ps_args; i++) {
                char *next = NULL;
                for (const char *c = ps_args[i]; *c; c++)
                        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                    "-,=_%:",
                                    *c))
                                return psrun_error_set(err, EINVAL, "ps: unsafe ps argument `%s`",
                                                       ps_args[i]);
                if (asprintf(&next, "%s %s", cmd, ps_args[i]) < 0)
                        next = NULL;
                free(cmd);
                cmd = next;
        }
        if (cmd && n_ps_args == 0) {
                free(cmd);
                cmd = strdup("ps -ef");
        }
        if (!cmd)
                return psrun_error_errno(err, ENOMEM, "ps");
        FILE *f = popen(cmd, "re");
        if (!f)
                return psrun_error_errno(err, errno, "ps: run `%s`", cmd);
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        int pid_col = -1;
        for (bool header = true; getline(&line, &cap, f) > 0; header = false) {
                char copy[4096];
                snprintf(copy, sizeof(copy), "%s", line);
                int col = 0;
                bool keep = header;
                for (char *save = NULL, *tok = strtok_r(copy, " \t\n", &save); tok;
                     tok = strtok_r(NULL, " \t\n", &save), col++) {
                        if (header && strcmp(tok, "PID") == 0)
                                pid_col = col;
                        if (!header && col == pid_col)
                                keep = pid_in((pid_t) atoi(tok), pids, n);
                }
                if (keep)
                        fputs(line, stdout);
        }
        int status = pclose(f);
        if (pid_col < 0)
                return psrun_error_set(err, EINVAL, "ps: `%s` printed no PID column", cmd);
        return status == 0 ? 0 : psrun_error_set(err, EIO, "ps: `%s` failed", cmd);
}

enum { P_FORMAT };
static const struct option_def ps_options[] = {
        [P_FORMAT] = {"format", 'f', "table|json", "output format (default table)"},
        {0},
};

static int cmd_ps(struct cli_call *c, psrun_error *err)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = 0;
        const char *format = c->value[P_FORMAT] ? c->value[P_FORMAT] : "table";
        if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
                r = psrun_error_set(err, EINVAL, "ps: --format: `%s` is not table or json", format);
        if (r >= 0)
                r = oci_pids(c->root, c->args[0], &pids, &n, err);
        if (r >= 0 && strcmp(format, "json") == 0) {
                printf("[");
                for (size_t i = 0; i < n; i++)
                        printf("%s%d", i ? "," : "", (int) pids[i]);
                printf("]\n");
        } else if (r >= 0) {
                r = ps_table(pids, n, c->args + 1, c->n_args - 1, err);
        }
        return r < 0 ? r : 0;
}

static void print_stats_event(const char *id, const struct cgroup_stats *s)
{
        printf("{\"type\":\"stats\",\"id\":");
        json_write_string(stdout, id);
        printf(",\"data\":{\"cpu\":{\"usage\":{\"total\":%" PRIu64 ",\"user\":%" PRIu64
               ",\"kernel\":%" PRIu64 "},\"throttling\":{\"periods\":%" PRIu64
               ",\"throttledPeriods\":%" PRIu64 ",\"throttledTime\":%" PRIu64 "}}",
               s->cpu_usec * 1000, s->cpu_user_usec * 1000, s->cpu_system_usec * 1000,
               s->cpu_nr_periods, s->cpu_nr_throttled, s->cpu_throttled_usec * 1000);
        printf(",\"memory\":{\"usage\":{\"limit\":%" PRIu64 ",\"usage\":%" PRIu64
               ",\"max\":%" PRIu64 ",\"failcnt\":%" PRIu64 "},\"swap\":{\"limit\":%" PRIu64
               ",\"usage\":%" PRIu64 ",\"max\":%" PRIu64 ",\"failcnt\":%" PRIu64 "}}",
               s->memory_limit_bytes, s->memory_usage_bytes, s->memory_peak_bytes,
               s->memory_failcnt, s->memsw_limit_bytes, s->memsw_usage_bytes,
               s->memsw_max_usage_bytes, s->memsw_failcnt);
        printf(",\"pids\":{\"current\":%" PRIu64 ",\"limit\":%" PRIu64 "}", s->pids_current,
               s->pids_limit);
        printf(",\"oomKills\":%" PRIu64 "}}\n", s->oom_kills);
        fflush(stdout);
}

#define EVENTS_INTERVAL_MAX_MS (24ULL * 3600 * 1000)

enum { E_STATS, E_INTERVAL };
static const struct option_def events_options[] = {
        [E_STATS] = {"stats", 0, NULL, "print the container's statistics once and exit"},
        [E_INTERVAL] = {"interval", 0, "DURATION", "time between statistics events (default 5s)"},
        {0},
};

static int cmd_events(struct cli_call *c, psrun_error *err)
{
        uint64_t interval_ms = 5000;
        int r;
        char shown[128];
        if (c->value[E_INTERVAL] && (parse_duration_ms(c->value[E_INTERVAL], &interval_ms) < 0 ||
                                     interval_ms == 0 || interval_ms > EVENTS_INTERVAL_MAX_MS))
                return psrun_error_set(err, EINVAL,
                                       "events: --interval: `%s` is not a duration from 1ms to 24h",
                                       number_shown(c->value[E_INTERVAL], shown, sizeof(shown)));
        /* Until the container stops: one stats event per interval. */
        for (;;) {
                struct cgroup_stats s = {0};
                r = oci_stats(c->root, c->args[0], &s, err);
                if (r < 0)
                        break;
                print_stats_event(c->args[0], &s);
                if (c->value[E_STATS])
                        return 0;
                struct timespec ts = {(time_t) (interval_ms / 1000),
                                      (long) (interval_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
        }
        return r == -ESRCH && !c->value[E_STATS] ? 0 : r;
}

/* ---- exec ---- */

enum {
        X_PROCESS,
        X_TTY,
        X_CWD,
        X_ENV,
        X_USER,
        X_CAP,
        X_NO_NEW_PRIVS,
        X_DETACH,
        X_PID_FILE,
        X_CONSOLE,
        X_PRESERVE,
};
static const struct option_def exec_options[] = {
        [X_PROCESS] = {"process", 'p', "FILE", "the process as OCI `process` JSON"},
        [X_TTY] = {"tty", 't', NULL, "give it a terminal (needs --console-socket)"},
        [X_CWD] = {"cwd", 0, "DIR", "working directory in the container"},
        [X_ENV] = {"env", 'e', "NAME=VALUE", "set an environment variable (repeatable)"},
        [X_USER] = {"user", 'u', "UID[:GID]", "run as this user"},
        [X_CAP] = {"cap", 'c', "CAP_NAME", "add a capability (repeatable)"},
        [X_NO_NEW_PRIVS] = {"no-new-privs", 0, NULL, "set no_new_privs"},
        [X_DETACH] = {"detach", 'd', NULL, "start it and return; do not wait"},
        [X_PID_FILE] = {"pid-file", 0, "FILE", "write the process's pid here"},
        [X_CONSOLE] = {"console-socket", 0, "PATH",
                       "send the terminal's master fd to this unix socket"},
        [X_PRESERVE] = {"preserve-fds", 0, "N", "pass fds 3..3+N-1 to the process"},
        {0},
};

static int cmd_exec(struct cli_call *c, psrun_error *err)
{
        _cleanup_(oci_process_free) struct oci_process process = {0};
        int code = 0;
        int r = 0;
        const char *const *v = c->value;
        struct oci_exec_options o = {
                .id = c->args[0],
                .args = c->args + 1,
                .cwd = v[X_CWD],
                .env = c->list[X_ENV],
                .n_env = c->n_list[X_ENV],
                .user = v[X_USER],
                .caps = c->list[X_CAP],
                .n_caps = c->n_list[X_CAP],
                .no_new_privs = v[X_NO_NEW_PRIVS] != NULL,
                .tty = v[X_TTY] != NULL,
                .detach = v[X_DETACH] != NULL,
                .pid_file = v[X_PID_FILE],
                .console_socket = v[X_CONSOLE],
        };
        if (v[X_PRESERVE])
                r = parse_preserve_fds(v[X_PRESERVE], &o.preserve_fds, err);
        if (r >= 0 && v[X_PROCESS]) {
                r = oci_process_load_file(v[X_PROCESS], &process, err);
                o.process = &process;
        } else if (r >= 0 && c->n_args < 2) {
                r = psrun_error_set(err, EINVAL,
                                    "exec: give the command after the id, or --process FILE");
        }
        if (r >= 0)
                r = oci_exec(c->root, &o, &code, err);
        return r < 0 ? r : code;
}

/* ---- features, spec ---- */

static int cmd_features(struct cli_call *c, psrun_error *err)
{
        int r = oci_features_print(stdout, err);
        return r < 0 ? r : 0;
}

enum { S_ROOTLESS, S_BUNDLE };
static const struct option_def spec_options[] = {
        [S_ROOTLESS] = {"rootless", 0, NULL, "a config for an unprivileged user"},
        [S_BUNDLE] = {"bundle", 'b', "DIR", "write config.json there (default: here)"},
        {0},
};

static int cmd_spec(struct cli_call *c, psrun_error *err)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/config.json", c->value[S_BUNDLE] ? c->value[S_BUNDLE] : ".") < 0)
                return psrun_error_errno(err, ENOMEM, "spec");
        /* As runc: never overwrite a config. */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return psrun_error_errno(err, errno, "spec: %s", path);
        FILE *f = fdopen(fd, "w");
        if (!f) {
                int r = psrun_error_errno(err, errno, "spec: %s", path);
                close(fd);
                unlink(path);
                return r;
        }
        int r = oci_spec_print(f, c->value[S_ROOTLESS] != NULL, err);
        if (fclose(f) != 0 && r >= 0)
                r = psrun_error_errno(err, EIO, "spec: write %s", path);
        if (r < 0) {
                unlink(path);
                return r;
        }
        return 0;
}

/* Where a command starts processes (CMD_AS_ROOT) and where it works on
 * containers (CMD_STATE_ROOT). */
#define AS_ROOT (CMD_AS_ROOT | CMD_STATE_ROOT)
#define STATE   CMD_STATE_ROOT

static const struct command oci_commands[] = {
        {"create", cmd_create, "[OPTIONS]", "ID", 1, 1, "create a container from an OCI bundle",
         create_options, AS_ROOT, NULL, NULL},
        {"start", cmd_start, "", "ID", 1, 1, "start a created container's process", NULL, STATE,
         NULL, NULL},
        {"state", cmd_state, "", "ID", 1, 1, "print a container's state as JSON", NULL, STATE, NULL,
         NULL},
        {"kill", cmd_kill, "[--all]", "ID [SIGNAL]", 1, 2,
         "send a signal (default SIGTERM) to a container's init", kill_options, STATE, NULL, NULL},
        {"delete", cmd_delete, "[--force]", "ID", 1, 1, "delete a container and its cgroup",
         delete_options, STATE, NULL, NULL},
        {"exec", cmd_exec, "[OPTIONS]", "ID [CMD [ARGS...]]", 1, CLI_UNBOUNDED,
         "run a process in a running container", exec_options, AS_ROOT, NULL, NULL},
        {"ps", cmd_ps, "[--format table|json]", "ID [PS_OPTIONS...]", 1, CLI_UNBOUNDED,
         "list a container's processes", ps_options, STATE, NULL, NULL},
        {"pause", cmd_pause, "", "ID", 1, 1, "freeze every process of a container", NULL, STATE,
         NULL, NULL},
        {"resume", cmd_resume, "", "ID", 1, 1, "thaw a paused container", NULL, STATE, NULL, NULL},
        {"update", cmd_update, "[OPTIONS]", "ID", 1, 1,
         "change a running container's resource limits", update_options, STATE, NULL, NULL},
        {"list", cmd_list, "[--format table|json] [-q]", "", 0, 0, "list the containers",
         list_options, STATE, NULL, NULL},
        {"events", cmd_events, "[--stats] [--interval D]", "ID", 1, 1,
         "print a container's statistics as JSON events", events_options, STATE, NULL, NULL},
        {"features", cmd_features, "", "", 0, 0,
         "print what this runtime supports (OCI features JSON)", NULL, 0, NULL, NULL},
        {"spec", cmd_spec, "[--rootless] [--bundle DIR]", "", 0, 0, "write a default config.json",
         spec_options, 0, NULL, NULL},
};

/* `psrun run --bundle DIR ID`: not listed (psrun's own run is), found by
 * cli_wants_oci_run. */
const struct command oci_run_command = {"run",
                                        cmd_oci_run,
                                        "[OPTIONS] --bundle DIR",
                                        "ID",
                                        1,
                                        1,
                                        "create and start a container from an OCI bundle",
                                        run_oci_options,
                                        AS_ROOT,
                                        NULL,
                                        NULL};

const struct command_set oci_command_set = {
        .commands = oci_commands,
        .n_commands = ARRAY_SIZE(oci_commands),
        .open = begin,
        .prepare = prepare,
        .close = close_command,
        .fail = oci_fail,
};
