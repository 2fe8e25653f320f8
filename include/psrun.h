/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * libpsrun: run untrusted commands in a sandbox, from C, with no daemon.
 *
 *   psrun_policy *p = psrun_policy_new();
 *   psrun_policy_set(p, "memory_limit", "1G", &err);
 *   char *argv[] = {"python3", "-c", "print(42)", NULL};
 *   psrun_result res;
 *   if (psrun_run(p, argv, NULL, &res, &err) < 0) fprintf(stderr, "%s\n", err.msg);
 *   psrun_policy_free(p);
 *
 * Functions return 0 (or a count) on success and -errno on failure, with a
 * one-line message in the psrun_error. The library never prints and never
 * exits; notes (such as a skipped optional layer) go to a log callback.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PSRUN_PUBLIC __attribute__((visibility("default")))

typedef struct psrun_error {
        int code;      /* positive errno, 0 if none */
        char msg[512]; /* one line, e.g. "rootfs: mount proc on /proc: Operation not permitted" */
} psrun_error;

typedef struct psrun_policy psrun_policy;

/* A policy with the defaults (see psrun-policy(5)); NULL when out of memory. */
PSRUN_PUBLIC psrun_policy *psrun_policy_new(void);
PSRUN_PUBLIC void psrun_policy_free(psrun_policy *policy);

/* Apply a YAML or JSON document (file or text) over the policy; on error the
 * policy is unchanged. */
PSRUN_PUBLIC int psrun_policy_load_file(psrun_policy *policy, const char *path, psrun_error *err);
PSRUN_PUBLIC int psrun_policy_load_string(psrun_policy *policy, const char *text, psrun_error *err);

/* Set one key; value is parsed as a YAML flow node ("512M", "[a.com, b.org]",
 * "{A: b}"). Same vocabulary as the YAML policy and `psrun run -o`. */
PSRUN_PUBLIC int psrun_policy_set(psrun_policy *policy, const char *key, const char *value,
                                  psrun_error *err);

/* Read one key back, as text that psrun_policy_set takes for the same value:
 * scalars as -o writes them ("512M", "300000ms", "restricted", "true",
 * "/workspace"), lists and mappings as JSON ("[\"a.com\"]",
 * "{\"A\": \"b\"}"); an unset string key (pip_index_url, ...) as "".
 * Returns the value's length, as snprintf does: it is in buf, with its
 * NUL, when the return is below len; otherwise buf holds "" (never a value
 * cut short), and a buffer of return + 1 bytes holds it. -EINVAL for an
 * unknown key. */
PSRUN_PUBLIC int psrun_policy_get(const psrun_policy *policy, const char *key, char *buf,
                                  size_t len, psrun_error *err);

/*
 * The policy as a ceiling: for a front end whose callers are trusted less
 * than whoever wrote the policy (psrun mcp: a model's tool calls under the
 * operator's policy). psrun_policy_set_narrowing sets the key only when the
 * new value leaves the policy no wider in that key: limits, durations and
 * quotas no higher; network and install_network no more open (none <
 * restricted < full); landlock and apparmor no weaker (required < auto <
 * off); readonly_rootfs and name_check not turned off; allow_domains,
 * install_allow_domains, allow_cidrs, allow_private, allow_ports and
 * dns_upstream within the old lists (a `*.` name covers the names below
 * it); approve gating every action it did; env taking nothing more from
 * the caller's environment; workdir and hostname are free. Errors leave
 * the policy unchanged: -EPERM for a widening (one line naming the key and
 * the value it had), -EOPNOTSUPP for a key psrun knows no order of (mounts,
 * backend, user, the URLs, ...), -EINVAL for an unknown key or bad value.
 * psrun_policy_narrows answers the same without setting anything.
 */
PSRUN_PUBLIC int psrun_policy_set_narrowing(psrun_policy *policy, const char *key,
                                            const char *value, psrun_error *err);
PSRUN_PUBLIC int psrun_policy_narrows(const psrun_policy *policy, const char *key,
                                      const char *value, psrun_error *err);

/* One thing a security layer refused (docs/security.md, "Violations"). */
typedef struct psrun_violation {
        const char *layer; /* "seccomp" "landlock" "apparmor" "network" "limits" */
        const char *what;  /* "ptrace", "write_file /proc/2/oom_score_adj", "evil.test",
                            * "pids_limit 256 reached" */
        uint64_t count;    /* how often */
        int pid;           /* the (first) process, in the sandbox; 0: none or not known */
} psrun_violation;

/* A layer in force whose refusals psrun cannot see on this host, and why. */
typedef struct psrun_violation_unavailable {
        const char *layer;
        const char *why;
} psrun_violation_unavailable;

typedef struct psrun_result {
        int exit_code;      /* the command's; 128+signal; 125 psrun failed; 126/127 exec */
        int signal;         /* 0 when not signalled */
        const char *reason; /* "exited" "signaled" "timeout" "oom" "pids" "setup_error" */
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t peak_memory_bytes;
        char error[512]; /* setup_error: what failed */
        /* What the layers refused, per the policy key `violations`: the
         * first 32 distinct entries, then violations_more refusals not
         * listed. mode "off": nothing (NULL, 0). The arrays and their
         * strings belong to the result: psrun_result_free() (for an exec,
         * psrun_exec_result_free()) releases them. */
        const char *violations_mode; /* "off" "summary" "full" */
        psrun_violation *violations;
        size_t n_violations;
        uint64_t violations_more;
        psrun_violation_unavailable *violations_unavailable;
        size_t n_violations_unavailable;
        const char *backend; /* "native" or "gvisor" (static storage); NULL: none ran */
} psrun_result;

/* Releases what psrun_run put in the result (its violations). NULL-safe;
 * a result may be freed twice. */
PSRUN_PUBLIC void psrun_result_free(psrun_result *result);

typedef struct psrun_run_options {
        const char *cgroup_parent; /* NULL: below the caller's own cgroup */
        int forward_signals;       /* nonzero: forward INT/TERM/HUP/... received meanwhile */
        void (*log)(void *userdata, const char *msg);
        void *log_userdata;
} psrun_run_options;

/* Run argv (NULL-terminated; argv[0] looked up in the sandbox's PATH) in a new
 * sandbox and wait for it. stdin/stdout/stderr are the caller's 0-2. The
 * result is always filled (release it with psrun_result_free). Returns 0
 * when the sandbox ran (whatever the command did), -errno when psrun could
 * not run it (result: setup_error). */
PSRUN_PUBLIC int psrun_run(const psrun_policy *policy, char *const argv[],
                           const psrun_run_options *options, psrun_result *result,
                           psrun_error *err);

/* Write the result as one line of JSON (with a newline) to fd. */
PSRUN_PUBLIC int psrun_result_write_json(const psrun_result *result, int fd);

/*
 * Sessions (docs/sessions.md): a long-lived sandbox made from a policy, many
 * commands run in it, files moved in and out, then destroyed. Each session
 * has one small supervisor process of its own (no daemon) that outlives the
 * caller unless tie_to_caller is set. Only root may create or use sessions.
 *
 * Thread safety: a psrun_session handle is immutable after create/open and
 * may be used by any number of threads at once (each call opens its own
 * connection to the supervisor); psrun_session_destroy/close must not race
 * other calls on the same handle. A psrun_exec_handle belongs to one thread
 * at a time. Every other function here is safe to call from any thread.
 */
typedef struct psrun_session psrun_session;

/*
 * Approval (policy `approve: [install]`, docs/sessions.md): before a gated
 * action the session asks the embedding program and goes ahead only on
 * yes. With no approver set, a gated action is refused (-EPERM), never
 * silently allowed. The approver is called in the thread of the gated call,
 * which waits for it (a human may take a while to answer).
 */
typedef struct psrun_approval {
        const char *action;  /* "install" */
        const char *session; /* the session's id */
        /* The whole action as one JSON object, e.g. {"action": "install",
         * "session": "…", "tool": "python", "package": "requests==2.31"} */
        const char *json;
        char reason[256]; /* the approver may say why it refused (one line) */
} psrun_approval;
/* Nonzero: approved. */
typedef int (*psrun_approve_fn)(void *userdata, psrun_approval *approval);

typedef struct psrun_session_options {
        const char *name;          /* the session's id; NULL: a random one */
        const char *state_dir;     /* NULL: $PSRUN_SESSION_ROOT, else /run/psrun-sessions */
        const char *cgroup_parent; /* NULL: below the caller's own cgroup */
        int tie_to_caller;         /* nonzero: destroyed when the calling process exits */
        psrun_approve_fn approve;  /* the handle's approver (psrun_session_set_approver) */
        void *approve_userdata;
} psrun_session_options;

/* Start a session under policy (which may be freed afterwards). The
 * sandbox is up and /workspace empty when this returns. */
PSRUN_PUBLIC int psrun_session_create(const psrun_policy *policy,
                                      const psrun_session_options *options, psrun_session **session,
                                      psrun_error *err);
/* A handle to a live session by id, from any process of root's. -ENOENT:
 * no such session; -ESRCH: its supervisor is dead (see `psrun gc`). */
PSRUN_PUBLIC int psrun_session_open(const char *id, const char *state_dir, psrun_session **session,
                                    psrun_error *err);
PSRUN_PUBLIC const char *psrun_session_id(const psrun_session *session);
/* Kill every process of the session, remove its cgroups and state; frees
 * the handle whatever happens. A dead session's leftovers are removed too. */
PSRUN_PUBLIC int psrun_session_destroy(psrun_session *session, psrun_error *err);
/* Free the handle only; the session goes on. NULL-safe. */
PSRUN_PUBLIC void psrun_session_close(psrun_session *session);
/* Set (or, with NULL, clear) the approver of this handle: a handle from
 * psrun_session_open has none. Not while other threads use the handle. */
PSRUN_PUBLIC void psrun_session_set_approver(psrun_session *session, psrun_approve_fn approve,
                                             void *userdata);

typedef struct psrun_session_info {
        char id[65];
        int alive;             /* 0: the supervisor died (`psrun gc` removes it) */
        int supervisor_pid;    /* 0 when not alive */
        uint64_t created_unix; /* seconds since the epoch */
        unsigned running_execs;
} psrun_session_info;

/* Every session under state_dir (NULL: as for options), sorted by id.
 * *list is malloc'd (free()); 0 entries: *list NULL. */
PSRUN_PUBLIC int psrun_session_list(const char *state_dir, psrun_session_info **list, size_t *n,
                                    psrun_error *err);
/* Remove sessions whose supervisor died; returns how many. */
PSRUN_PUBLIC int psrun_session_gc(const char *state_dir, psrun_error *err);

enum psrun_stdin {
        PSRUN_STDIN_NONE = 0, /* /dev/null */
        PSRUN_STDIN_BYTES,    /* stdin_data, stdin_len, then EOF */
        PSRUN_STDIN_FD,       /* stdin_fd, passed as it is */
        PSRUN_STDIN_PIPE,     /* psrun_exec_write_stdin / psrun_exec_close_stdin */
};

/* stream: 1 stdout, 2 stderr. Called in the thread that waits. */
typedef void (*psrun_output_fn)(void *userdata, int stream, const char *data, size_t len);

typedef struct psrun_exec_options {
        const char *cwd;        /* NULL: the policy's workdir */
        const char *const *env; /* NAME=value additions, NULL-terminated; may be NULL */
        enum psrun_stdin stdin_mode;
        const void *stdin_data;
        size_t stdin_len;
        int stdin_fd;
        /* Each narrows the policy, never widens it: above the policy's
         * value is -EPERM, `timeout_ms: 20000 is above the policy's timeout
         * 10s` (the supervisor refuses a raw request's timeout too). */
        uint64_t timeout_ms;   /* 0: the policy's timeout */
        uint64_t output_limit; /* bytes kept per stream; 0: the policy's output_limit */
        /* Streaming: each chunk as it arrives (it is also kept in the result). */
        psrun_output_fn on_output;
        void *userdata;
        /* Nonzero: the command's stdout/stderr are these fds, not captured. */
        int pass_output;
        int stdout_fd, stderr_fd;
        /* Non-NULL: once *cancel is non-zero (set it from any thread with an
         * atomic store), the waiting thread cancels the exec within 50 ms
         * as psrun_exec_cancel does and the wait returns -ECANCELED; set
         * before the start, nothing starts. Unlike psrun_exec_cancel or
         * psrun_exec_signal from another thread, it cannot race the wait's
         * end (which frees the handle). */
        const int *cancel;
} psrun_exec_options;

/* What the network allowed and refused (`psrun run --json`'s "network"):
 * counts, and the first 32 distinct refusals with how often each came. */
typedef struct psrun_network_denial {
        char name[254]; /* a refused name, or "" */
        char addr[46];  /* a refused destination address, or "" */
        uint16_t port;
        char proto[8]; /* "tcp", "udp", … with addr */
        uint64_t count;
} psrun_network_denial;

typedef struct psrun_network_stats {
        uint64_t allowed_queries, denied_queries;
        size_t n_denied;
        psrun_network_denial denied[32];
        uint64_t denied_more; /* refusals past the first 32 distinct ones */
} psrun_network_stats;

typedef struct psrun_exec_result {
        psrun_result result; /* as psrun_run's; reason also "disk_full": the command
                              * failed while /workspace was full */
        /* What was kept: all of it, or the first and last output_limit/2
         * bytes with one line `[... N bytes omitted ...]` between them.
         * NUL-terminated for convenience (the data may hold NULs too). */
        char *stdout_data, *stderr_data;
        size_t stdout_len, stderr_len;
        uint64_t stdout_bytes, stderr_bytes; /* what the command wrote */
        int stdout_truncated, stderr_truncated;
        /* restricted and full networks: what the session's network allowed
         * and refused while this exec ran (execs running at the same time
         * share it, so each counts what happened meanwhile); for an install,
         * its own network's. NULL: no network (none). */
        psrun_network_stats *network;
        /* What held in this exec, as psrun run's result says it ("on",
         * "off", "unavailable", "abi N"; under gVisor Landlock's place is
         * "gvisor", and seccomp "not in execs": runsc exec applies the
         * policy's profile to the sandbox's init only). */
        struct {
                char seccomp[16], landlock[16], apparmor[16];
        } layers;
        /* Without root (docs/rootless.md): active nonzero, the identity
         * ("subordinate ids", "one id") and what held each limit ("cgroup",
         * "rlimit_as", "rlimit_nproc", "rlimit_cpu", "tmpfs", "pid
         * namespace", "not enforced"); all zero for root. Added last: the
         * struct only grows at its end. */
        struct {
                int active;
                char identity[24];
                char memory[16], cpu[16], pids[16], disk[16], timeout[16];
        } rootless;
} psrun_exec_result;

/* Run argv (NULL-terminated) in the session and wait. Each exec has its own
 * cgroup with the policy's limits and its own timeout: a runaway exec is
 * killed as a tree and the session lives on. Returns 0 when the command
 * ran (whatever it did), -errno when it could not be started. */
PSRUN_PUBLIC int psrun_exec(psrun_session *session, char *const argv[],
                            const psrun_exec_options *options, psrun_exec_result *result,
                            psrun_error *err);
/* The same with `/bin/sh -c command`. */
PSRUN_PUBLIC int psrun_exec_shell(psrun_session *session, const char *command,
                                  const psrun_exec_options *options, psrun_exec_result *result,
                                  psrun_error *err);
PSRUN_PUBLIC void psrun_exec_result_free(psrun_exec_result *result);
/* One JSON line: psrun run --json's fields plus stdout, stderr (as JSON
 * strings), stdout_bytes, stderr_bytes, stdout_truncated, stderr_truncated,
 * and network when the exec had one. */
PSRUN_PUBLIC int psrun_exec_result_write_json(const psrun_exec_result *result, int fd);

/*
 * Install a package into the workspace (docs/sessions.md): tool "python"
 * runs `python3 -m pip install --target /workspace/.local/python`, "node"
 * `npm install` in /workspace; every later exec finds what was installed
 * (PYTHONPATH, NODE_PATH, PATH). package is one name with an optional
 * version (`requests==2.31`, `lodash@^4`); options, URLs, paths and shell
 * syntax are refused. The installer runs as an exec with the policy's
 * `install_network` (default restricted to `@pypi` and `@npm`) while the
 * session's other execs keep its own network. A gated install
 * (`approve: [install]`) asks the handle's approver first.
 *
 * Returns 0 when the installer ran (result: its exit code and output: 0
 * means installed); -EINVAL for a bad tool or package, -EPERM when denied
 * (err says by whom), -ENETUNREACH when no network could reach an index;
 * result is filled on every path.
 */
typedef struct psrun_install_options {
        const char *tool;          /* "python" (NULL too) or "node" */
        uint64_t timeout_ms;       /* 0: the policy's timeout; above it: -EPERM */
        psrun_output_fn on_output; /* the installer's output as it arrives */
        void *userdata;
        /* Non-NULL: once *cancel is non-zero (set it from any thread with an
         * atomic store), the waiting thread cancels the install within 50 ms
         * as psrun_exec_cancel does, and the wait returns -ECANCELED. Unlike
         * psrun_exec_cancel from another thread, it cannot race the wait's
         * end (which frees the handle). */
        const int *cancel;
} psrun_install_options;

PSRUN_PUBLIC int psrun_install_package(psrun_session *session, const char *package,
                                       const psrun_install_options *options,
                                       psrun_exec_result *result, psrun_error *err);

/* The same, returning once the installer runs (the checks and the approver
 * come first, and fail here): its handle is an exec's, so output and
 * psrun_exec_cancel work as for psrun_exec_start, and psrun_exec_wait
 * returns what psrun_install_package would. */
typedef struct psrun_exec_handle psrun_exec_handle;
PSRUN_PUBLIC int psrun_install_start(psrun_session *session, const char *package,
                                     const psrun_install_options *options,
                                     psrun_exec_handle **handle, psrun_error *err);

/* A running exec (or install), for streaming and interactive use. */
PSRUN_PUBLIC int psrun_exec_start(psrun_session *session, char *const argv[],
                                  const psrun_exec_options *options, psrun_exec_handle **handle,
                                  psrun_error *err);
/* Writes all of data (stdin_mode PSRUN_STDIN_PIPE), delivering output that
 * arrives meanwhile. -EPIPE: the command closed its stdin. */
PSRUN_PUBLIC int psrun_exec_write_stdin(psrun_exec_handle *handle, const void *data, size_t len,
                                        psrun_error *err);
PSRUN_PUBLIC int psrun_exec_close_stdin(psrun_exec_handle *handle);
PSRUN_PUBLIC int psrun_exec_signal(psrun_exec_handle *handle, int sig, psrun_error *err);
/* Cancel it, from any thread (one other than the waiter's too): its whole
 * cgroup is killed, an install's own network freed, and psrun_exec_wait
 * then returns -ECANCELED ("exec: cancelled", "install: cancelled") with
 * result filled as it ended, once all of that is gone. The session lives
 * on. */
PSRUN_PUBLIC int psrun_exec_cancel(psrun_exec_handle *handle, psrun_error *err);
/* Wait for the end, fill result, free the handle. */
PSRUN_PUBLIC int psrun_exec_wait(psrun_exec_handle *handle, psrun_exec_result *result,
                                 psrun_error *err);

/*
 * Background processes (docs/sessions.md): an exec that returns at once and
 * goes on running (a dev server, a watcher) until it ends, is signalled to
 * its end, times out (the options' timeout_ms, else the policy's timeout),
 * or the session ends. Each has its own cgroup with the policy's limits;
 * what it leaves behind when it ends is killed. Its stdin is /dev/null; its
 * stdout and stderr are kept by the session, per stream the first and last
 * output_limit/2 bytes, by byte offset. At most background_limit (policy)
 * run at once; -EAGAIN beyond. Ids are the session's, from 1.
 */
typedef struct psrun_process_info {
        uint32_t id;
        int pid; /* in the sandbox's pid namespace */
        int running;
        int exit_code, signal; /* once ended */
        uint64_t started_unix;
        uint64_t stdout_bytes, stderr_bytes; /* written so far */
        char command[128];                   /* argv, space-separated, cut */
} psrun_process_info;
/* options: cwd, env, timeout_ms as for psrun_exec; the stdio fields are
 * ignored. */
PSRUN_PUBLIC int psrun_exec_background(psrun_session *session, char *const argv[],
                                       const psrun_exec_options *options, uint32_t *id,
                                       psrun_error *err);
/* Running and recently ended ones, by id; free the list with free(). */
PSRUN_PUBLIC int psrun_process_list(psrun_session *session, psrun_process_info **list, size_t *n,
                                    psrun_error *err);
typedef struct psrun_process_chunk {
        uint64_t offset; /* of buf[0]: past the asked one when that part was dropped */
        size_t len;      /* bytes in buf */
        int eof;         /* the stream is closed and nothing follows */
        uint64_t total;  /* bytes written to the stream so far */
} psrun_process_chunk;
/* What stream (1 stdout, 2 stderr) holds from offset, up to size bytes
 * (at most 64 KiB a call): poll with offset = chunk.offset + chunk.len.
 * -ENOENT: no such process. */
PSRUN_PUBLIC int psrun_process_output(psrun_session *session, uint32_t id, int stream,
                                      uint64_t offset, void *buf, size_t size,
                                      psrun_process_chunk *chunk, psrun_error *err);
/* -ESRCH: it has ended. SIGKILL kills its whole cgroup. */
PSRUN_PUBLIC int psrun_process_signal(psrun_session *session, uint32_t id, int sig,
                                      psrun_error *err);
/* Its result once it ends (stdout/stderr empty: see psrun_process_output);
 * timeout_ms < 0: no timeout; -ETIMEDOUT when it runs on. */
PSRUN_PUBLIC int psrun_process_wait(psrun_session *session, uint32_t id, int64_t timeout_ms,
                                    psrun_exec_result *result, psrun_error *err);

/*
 * Files in /workspace, host-side, binary-safe. path is relative to
 * /workspace or absolute under it; it is resolved inside the workspace
 * only (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS from a directory
 * fd): a symlink or `..` planted by the sandbox never leads out of it.
 */
/* Create or replace path atomically (temp file + rename), parents created,
 * owned by the sandbox's user. A full workspace is -ENOSPC. */
PSRUN_PUBLIC int psrun_write_file(psrun_session *session, const char *path, const void *data,
                                  size_t len, unsigned mode, psrun_error *err);
/* The same, cancellable from another thread: once *cancel is non-zero
 * (read atomically, so set it with an atomic store) the write in flight
 * stops within a chunk (1 MiB), its temporary file is removed and the call
 * returns -ECANCELED ("write_file: cancelled"). path then holds what it
 * held before, or the whole new file when the cancel came after the
 * rename: never part of one. The session's next write is not delayed.
 * cancel NULL: psrun_write_file. */
typedef struct psrun_write_options {
        const int *cancel;
} psrun_write_options;
PSRUN_PUBLIC int psrun_write_file_opts(psrun_session *session, const char *path, const void *data,
                                       size_t len, unsigned mode,
                                       const psrun_write_options *options, psrun_error *err);

typedef struct psrun_file_data {
        char *data;    /* malloc'd, NUL-terminated */
        size_t len;    /* bytes read */
        uint64_t size; /* the file's size */
        int truncated; /* more follows after offset + len */
} psrun_file_data;

/* Up to max_bytes from offset; 0: all of it, refused (-EFBIG) past
 * PSRUN_READ_ALL_MAX bytes, which the caller then reads in parts. The
 * file's size is the sandbox's to choose (a sparse file costs it no disk);
 * the buffer is the caller's memory. Only regular files. */
#define PSRUN_READ_ALL_MAX (64U << 20)
PSRUN_PUBLIC int psrun_read_file(psrun_session *session, const char *path, uint64_t offset,
                                 size_t max_bytes, psrun_file_data *out, psrun_error *err);

typedef struct psrun_file_entry {
        char *name;       /* relative to the listed directory */
        const char *type; /* "file" "dir" "symlink" "fifo" "socket" "char" "block" */
        uint64_t size;
        unsigned mode; /* permission bits */
        int64_t mtime; /* seconds since the epoch */
} psrun_file_entry;

/* A listing is bounded in entries and in bytes of names (each name is the
 * whole path below the listed directory, so a deep tree of long names is
 * large): at most PSRUN_LIST_MAX_ENTRIES entries and PSRUN_LIST_MAX_BYTES
 * of names, less if the caller asks. */
#define PSRUN_LIST_MAX_ENTRIES 100000
#define PSRUN_LIST_MAX_BYTES   (16 << 20)

typedef struct psrun_list_options {
        int recursive;      /* nonzero: the whole tree (64 levels at most) */
        size_t max_entries; /* 0: PSRUN_LIST_MAX_ENTRIES */
        size_t max_bytes;   /* of names, NULs included; 0: PSRUN_LIST_MAX_BYTES */
} psrun_list_options;

typedef struct psrun_listing {
        psrun_file_entry *entries; /* sorted by name */
        size_t n;
        int truncated; /* a bound was reached: the directory holds more */
} psrun_listing;

/* The entries of dir (sorted); past a bound, those read until then, with
 * truncated set. options NULL: the defaults, not recursive. */
PSRUN_PUBLIC int psrun_list_dir(psrun_session *session, const char *dir,
                                const psrun_list_options *options, psrun_listing *listing,
                                psrun_error *err);
PSRUN_PUBLIC void psrun_listing_free(psrun_listing *listing);
/* The same with the default bounds, as an array; a listing that reaches a
 * bound is -E2BIG (this call cannot say "truncated"). */
PSRUN_PUBLIC int psrun_list_files(psrun_session *session, const char *dir, int recursive,
                                  psrun_file_entry **entries, size_t *n, psrun_error *err);
PSRUN_PUBLIC void psrun_file_entries_free(psrun_file_entry *entries, size_t n);
/* Remove a file, symlink or directory tree (never following a symlink). */
PSRUN_PUBLIC int psrun_remove(psrun_session *session, const char *path, psrun_error *err);

/*
 * Garbage collection (`psrun gc`): what processes that were killed left
 * behind, found and removed. A psrun that exits cleans up after itself on
 * every path; one killed with SIGKILL cannot, and neither can a session
 * whose supervisor was. psrun_gc removes, in this order: sessions whose
 * supervisor died (their cgroups and networks, named in their state), the
 * cgroups of one-shot runs (psrun_run, `psrun run`) whose owner is gone, OCI
 * containers still "creating" whose create died, the veths, nft tables and
 * address leases of dead runs, and the state of gVisor runs. What is alive
 * is never touched. Root's, as sessions and networks are.
 */
typedef struct psrun_gc_options {
        const char *cgroup_parent; /* where runs' cgroups are; NULL: below the caller's own */
        const char *oci_root;      /* the OCI state root; NULL: /run/psrun (never created) */
        const char *session_dir;   /* NULL: $PSRUN_SESSION_ROOT, else /run/psrun-sessions */
} psrun_gc_options;

/* What psrun_gc removed, by kind. */
typedef struct psrun_gc_stats {
        unsigned sessions;   /* sessions whose supervisor died */
        unsigned cgroups;    /* cgroups of runs whose owner died */
        unsigned containers; /* OCI containers whose create died */
        unsigned networks;   /* address leases of dead runs (with their veths and tables) */
        unsigned gvisor;     /* gVisor runs' state directories */
} psrun_gc_stats;

/* options and stats may be NULL. Returns how many things were removed in
 * all, or -errno at the first step that failed (stats then holds what the
 * steps before it removed). */
PSRUN_PUBLIC int psrun_gc(const psrun_gc_options *options, psrun_gc_stats *stats, psrun_error *err);

/*
 * Images (docs/images.md): OCI images pulled from a registry or imported
 * from a local source into a content-addressed store (blobs verified
 * against their digests as they stream, each layer unpacked once and
 * shared), with no daemon. Several processes may use one store at once:
 * two pulls of an image do the work once, a killed pull leaves nothing
 * half-visible, and prune never removes a layer a live sandbox holds.
 * Credentials come from auth.json / config.json files only (as podman and
 * Docker read them), never from these options. Every error is one line,
 * e.g. "image: `a/../b` is not a valid reference: ...".
 */
typedef struct psrun_image_options {
        const char *store;           /* the store's root; NULL: psrun_image_store_default() */
        const char *registries_file; /* mirrors, insecure hosts, CA (JSON); NULL: none */
        const char *auth_file;       /* NULL: the files podman and Docker read */
        const char *ca_file;         /* NULL: the registries file's, else the system's */
        /* As the policy keys registry_mirrors ("MIRROR" for docker.io, or
         * "REGISTRY=MIRROR") and insecure_registries ("HOST[:PORT]"):
         * NULL-terminated, added to the file's; may be NULL. */
        const char *const *mirrors;
        const char *const *insecure;
        uint64_t max_size; /* unpacked bytes a layer may declare; 0: 8 GiB */
        int fetch_only;    /* nonzero: fetch and verify, leave the layers packed */
} psrun_image_options;

typedef struct psrun_image_layer {
        char digest[72]; /* "sha256:<64 hex>" */
        char *media_type;
        int64_t size; /* as fetched (compressed) */
} psrun_image_layer;

typedef struct psrun_image_info {
        char *reference;  /* canonical: "docker.io/library/python:3.11-slim", "oci:DIR:TAG" */
        char digest[72];  /* the image manifest's */
        char index[72];   /* the index it was chosen from; "": none */
        char *media_type; /* the manifest's */
        char config[72];  /* the config blob's digest */
        int64_t size;     /* config and layers, as fetched */
        psrun_image_layer *layers; /* lowest first */
        size_t n_layers;
        int unpacked; /* every layer is unpacked in the store */
        /* How the store owns the layers' files: "shifted" (root's store: the
         * image's ids onto the sandboxes' host range), "subordinate ids" (a
         * user's: onto that user's /etc/subuid range), "one id" (a user with
         * no range: every file the user's, whatever the image says). */
        char owners[24];
        /* From the image config (NULL, 0: not set there). */
        char *os, *architecture, *created;
        char **env; /* "NAME=value" */
        size_t n_env;
        char **entrypoint, **cmd;
        size_t n_entrypoint, n_cmd;
        char *working_dir, *user;
        /* What psrun_image_pull / psrun_image_import did (0 otherwise). */
        unsigned blobs_fetched, blobs_present, blobs_resumed, layers_unpacked;
        int64_t bytes_fetched;
        int network; /* a registry was asked */
} psrun_image_info;

/* The store's default root: $PSRUN_IMAGE_STORE when set (absolute), else
 * /var/lib/psrun/images for root and $XDG_DATA_HOME/psrun/images
 * (~/.local/share/psrun/images) for any other user; NULL when a user has
 * neither. Static (thread-local) storage. */
PSRUN_PUBLIC const char *psrun_image_store_default(void);

/* Pull a registry reference ("python:3.11-slim", "host:5000/repo:tag",
 * "repo@sha256:..."): manifest, config and layers, verified; then unpacked
 * (unless fetch_only) and recorded. What is present is not fetched again; a
 * digest whose record is whole asks no registry. out (may be NULL) is
 * filled on success: psrun_image_info_free. -EINVAL: a bad reference;
 * -ENOENT: no such image; -EACCES: credentials missing or refused; -EIO,
 * -ENOSPC, -EBADMSG (a blob that does not match its digest). */
PSRUN_PUBLIC int psrun_image_pull(const char *reference, const psrun_image_options *options,
                                  psrun_image_info *out, psrun_error *err);
/* Import a local source: "oci:DIR[:TAG]" (an OCI image layout, as `skopeo
 * copy ... oci:DIR:TAG` writes it; DIR is made absolute, TAG is after the
 * last `:` and is a tag of the reference grammar). Recorded under that
 * name. Or "docker-archive:FILE" (`docker save`, `podman save`: one image;
 * the layers verified against the config's diff_ids), recorded as
 * "docker-archive:ABSOLUTE-FILE". */
PSRUN_PUBLIC int psrun_image_import(const char *source, const psrun_image_options *options,
                                    psrun_image_info *out, psrun_error *err);
/* Every image in the store, sorted by reference (the config's fields
 * filled too). *list is NULL with 0 images; psrun_image_list_free. */
PSRUN_PUBLIC int psrun_image_list(const psrun_image_options *options, psrun_image_info **list,
                                  size_t *n, psrun_error *err);
/* One image by reference (as pulled or imported): -ENOENT when it is not
 * in the store. Asks no registry. */
PSRUN_PUBLIC int psrun_image_inspect(const char *reference, const psrun_image_options *options,
                                     psrun_image_info *out, psrun_error *err);
/* Remove an image's record; its blobs and layers stay until
 * psrun_image_prune. -ENOENT when it is not in the store. */
PSRUN_PUBLIC int psrun_image_remove(const char *reference, const psrun_image_options *options,
                                    psrun_error *err);

typedef struct psrun_image_prune_stats {
        unsigned blobs_removed, layers_removed, tmp_removed;
        unsigned kept_in_use; /* unreferenced, but held by a live sandbox or session */
        int64_t bytes_removed;
} psrun_image_prune_stats;

/* Remove every blob and layer no image refers to, and what killed pulls
 * left; never a layer a live user holds. Waits for running pulls. stats
 * may be NULL. */
PSRUN_PUBLIC int psrun_image_prune(const psrun_image_options *options,
                                   psrun_image_prune_stats *stats, psrun_error *err);
/* NULL-safe; an info may be freed twice. */
PSRUN_PUBLIC void psrun_image_info_free(psrun_image_info *info);
PSRUN_PUBLIC void psrun_image_list_free(psrun_image_info *list, size_t n);

PSRUN_PUBLIC const char *psrun_version(void);

#ifdef __cplusplus
}
#endif
