/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The session supervisor's own parts (docs/sessions.md), one process per
 * session, in five files:
 *
 *   supervisor.c           serving: the poll loop, requests, deadlines, the end
 *   supervisor-exec.c      execs and installs: start, finish, results
 *   supervisor-backends.c  what differs between native and gVisor
 *   supervisor-start.c     session_spawn and the supervisor's start-up
 *   supervisor-files.c     the file writer, in the session's cgroup
 *   supervisor-bg.c        background processes: their output, list, wait
 */

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/session/package.h"
#include "runtime/launch.h"
#include "runtime/session/net.h"
#include "runtime/session/proto.h"
#include "runtime/violations-watch.h"

#define MAX_EXECS 64
/* Background processes' records, running or ended (kept for their output
 * and result until a newer one needs the room): twice the largest
 * background_limit, so that an ended one can always make room. */
#define MAX_BG (2 * POLICY_BACKGROUND_LIMIT_MAX)

/* Waits on one background process at once (the CLI, Python and MCP may
 * each have one); one more is refused, never a silent replacement. */
#define BG_WAITERS 4

/* What a background process wrote to one stream: the first half of the
 * room and a ring of the last, by byte offset from the stream's start;
 * what falls between is dropped (so memory is bounded by output_limit). */
struct bg_ring {
        char *head, *tail; /* allocated when output arrives */
        size_t head_cap, tail_cap;
        size_t head_len;
        uint64_t total; /* bytes written: the ring holds [total - tail_len, total) */
        size_t tail_len;
};

struct bg_proc {
        bool used;
        bool running;
        int out[2];             /* our read ends of its stdout, stderr; -1 at EOF */
        int waiter[BG_WAITERS]; /* PROC_WAIT connections, or -1 */
        uint64_t seq;           /* for the oldest ended one */
        struct sess_proc info;
        struct bg_ring ring[2];
        struct run_result result; /* once ended */
};

struct exec_slot {
        bool used;
        int conn; /* -1: the client went away */
        struct launch l;
        struct cgroup *cg;
        uint64_t start_ms, deadline_ms, timeout_ms;
        bool timed_out;
        bool sync_eof;
        bool have_error;
        char error[512];
        /* plan->exec_pidns: the command's wait status (CHILD_MSG_EXIT). */
        bool have_status;
        int status;
        char *argv0, *cwd;          /* for the error message */
        struct vwatch_target watch; /* what the layers refused, for its result */
        struct violations violations;
        struct install_net *inet; /* an install's own network, or NULL */
        struct netns_stats net;   /* what the session's network did meanwhile */
        struct bg_proc *bg;       /* a background process's record, or NULL */
};

/* What the supervisor itself does by the policy (not the sandbox's plan):
 * the session's life, what it tells its clients, what an install needs.
 * Derived once, at start (sup_settings_from_policy); the serving code
 * reads these, never the policy. */
struct sup_settings {
        uint64_t lifetime_ms, idle_timeout_ms; /* 0: none */
        uint64_t output_limit;                 /* per stream of an exec */
        uint32_t background_limit;             /* running at once */
        uint32_t approve;                      /* POLICY_ACTION_* gated */
        enum policy_network network, install_network;
        struct install_index index; /* the policy's strings: it outlives the supervisor's run */
};

void sup_settings_from_policy(const struct policy *pol, struct sup_settings *out);

struct supervisor {
        /* The policy: planned once at start (tmpl, the settings); later only
         * an install's network is planned from it (install_net_prepare). */
        const struct policy *pol;
        struct sup_settings set;
        char *dir;
        int listen_fd;
        int tie_fd;
        int signal_fd; /* SIGTERM, SIGINT: destroy the session */
        int workspace_fd;
        int root_fd;            /* native: init's root (O_PATH), sent with its READY */
        struct cgroup *cg;      /* the session's: the policy's limits for everything */
        struct cgroup *init_cg; /* init's, below it */
        /* The next exec, made while idle (native): cloned into a cgroup of
         * its own, joined, waiting for its request (launch_zygote). */
        struct launch zygote;
        struct cgroup *zygote_cg;
        uint64_t zygote_retry_ms; /* after one failed: no new one before */
        struct plan ztmpl;        /* tmpl, as a zygote */
        /* Finished execs' cgroups (empty), removed while idle. */
        struct cgroup *trash[MAX_EXECS];
        size_t n_trash;
        struct launch init;
        struct plan tmpl;      /* what every exec shares: joins, identity, layers */
        struct vwatch watch;   /* each exec is a target of it */
        struct netns_live net; /* init's network, which every exec joins */
        int own_pidns;         /* ours, for the moments a thread is made (install_net_start) */
        uint64_t created_ms, created_unix, last_activity_ms;
        struct exec_slot execs[MAX_EXECS];
        unsigned n_running;
        struct bg_proc bg[MAX_BG];
        uint32_t next_proc_id;
        uint64_t bg_seq;
        const struct sess_backend *backend;
        struct gvisor_session *gvisor; /* backend: gvisor */
        /* The file writer (supervisor-files.c), made at the first write. */
        struct cgroup *files_cg;
        int files_pidfd, files_sock;
};

/*
 * What differs between the backends (STYLE.md §9): how the sandbox starts
 * (filling cg, init, workspace_fd and tmpl), how an exec starts, is
 * signalled and killed, and what is left to clean once it and the sandbox
 * are gone. native: psrun's init and execs that join its namespaces, each
 * in a cgroup of its own. gvisor: runtime/gvisor/session.c.
 */
struct sess_backend {
        const char *name;
        bool exec_cgroups; /* each exec in a cgroup of its own */
        bool zygotes;      /* execs made ahead of their request (sup_make_zygote) */
        bool own_layers;   /* psrun's child applies seccomp, Landlock, AppArmor */
        int (*start)(struct supervisor *s, const char *cgroup_parent, psrun_error *err);
        int (*exec)(struct supervisor *s, struct exec_slot *e, const struct plan *p,
                    struct install_net *inet, int fds[3], struct cgroup **cg, psrun_error *err);
        void (*kill_exec)(struct supervisor *s, struct exec_slot *e);
        void (*signal_exec)(struct supervisor *s, struct exec_slot *e, int sig);
        /* The exec's process was reaped: fill in what the backend knows
         * (its status, its stats when it has no cgroup of its own). */
        void (*exec_done)(struct supervisor *s, struct exec_slot *e, siginfo_t *si,
                          struct cgroup_stats *st);
        /* What holds in an exec: the result's layers. */
        void (*exec_layers)(struct supervisor *s, struct run_result *res);
        void (*ending)(struct supervisor *s); /* shut_down begins */
        void (*stop)(struct supervisor *s);
};

/* Fills in the header. */
int sup_send_reply(int fd, struct sess_reply *rep, int pass_fd);
void sup_reply_error(int fd, const psrun_error *err);

/* The backend the policy names (native for an unknown one). */
const struct sess_backend *sup_backend(enum policy_backend backend);
/* The start-up shared by the backends: lock, plan, the backend's start,
 * the control socket, info. */
int sup_start(struct supervisor *s, const char *cgroup_parent, psrun_error *err);
/* <dir>/info for gc: pid, init, cgroups, networks. */
int sup_write_info(struct supervisor *s, psrun_error *err);
void sup_remove_state_dir(const char *dir);

/* Requests that start an exec; on success the connection is the exec's. */
int sup_start_exec(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                   size_t len, int fds[3], psrun_error *err);
/* Rootless: an install network is refused (one line naming
 * install_network); 0 for root or install_network: none. */
int sup_rootless_install_network(const struct supervisor *s, psrun_error *err);
int sup_start_install(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                      size_t len, int fds[3], psrun_error *err);
/* Background processes (supervisor-bg.c): an EXEC with
 * SESS_REQ_BACKGROUND, answered on conn (which the caller then closes);
 * the PROC_* requests; the end of one (from sup_finish_exec). */
int sup_start_background(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                         size_t len, psrun_error *err);
void sup_proc_request(struct supervisor *s, int conn, const struct sess_req *req);
void sup_bg_finished(struct supervisor *s, struct bg_proc *b, const struct sess_reply *rep);
/* The poll loop's fds per record (stdout, stderr, the waiters), and what
 * came on them. */
enum { SUP_BG_FDS = 2 + BG_WAITERS };
void sup_bg_pollfds(struct supervisor *s, struct pollfd *p);
void sup_bg_events(struct supervisor *s, const struct pollfd *p);

/* The start of an exec, for sup_start_exec and the background's: what
 * it runs, with conn answered STARTED. */
struct exec_spec {
        char *const *argv;
        char *const *env; /* NAME=value additions */
        const char *cwd;  /* "": the policy's workdir */
        uint64_t timeout_ms;
        struct install_net *inet; /* an install's network: the slot takes it */
        struct bg_proc *bg;       /* a background process's record */
};
int sup_parse_exec(const struct sess_req *req, char *payload, size_t len, char **cwd, char ***argv,
                   char ***env, psrun_error *err);
int sup_launch_exec(struct supervisor *s, int conn, struct exec_spec *x, int fds[3],
                    psrun_error *err);

/* native: SIGKILL of the exec's process and its cgroup's (any backend's
 * process, at the end). */
void sup_kill_exec_native(struct supervisor *s, struct exec_slot *e);
/* The next exec, made now (native: the supervisor is idle), unless there
 * is one or the last failed less than a second ago; and given up (killed,
 * reaped, its cgroup removed): failed, when it died or reported an error
 * while nobody had asked for it. sup_zygote_due: in how many ms one is to
 * be made (0: now), -1: none is wanted. */
int sup_zygote_due(const struct supervisor *s, uint64_t now);
/* Remove the finished execs' cgroups (sup_finish_exec leaves them). */
void sup_empty_trash(struct supervisor *s);
void sup_make_zygote(struct supervisor *s);
void sup_drop_zygote(struct supervisor *s, bool failed);
void sup_drain_exec_messages(struct supervisor *s, struct exec_slot *e);
void sup_finish_exec(struct supervisor *s, struct exec_slot *e);
/* WRITE (its message buf, n bytes, and its fds): handed to the file
 * writer, which answers on conn (a copy of it: the caller closes its own
 * and the fds). 0, or -errno with err filled for the caller's reply. */
int sup_files_write(struct supervisor *s, int conn, const char *buf, size_t n, const int *fds,
                    int n_fds, psrun_error *err);
/* Kill and reap the writer, remove its cgroup. */
void sup_files_stop(struct supervisor *s);
/* Every exec's watch target, for the audit records (NULL: a free slot). */
void sup_watch_targets(struct supervisor *s, struct vwatch_target **t);

/* The supervisor, in its own image (runtime/session/image.c): detach from
 * whatever is left of the caller, start, report on ready_fd, serve. */
_Noreturn void sup_main(const struct policy *pol, char *dir, int ready_fd, int tie_fd,
                        const char *cgroup_parent);
_Noreturn void sup_serve(struct supervisor *s);
_Noreturn void sup_shut_down(struct supervisor *s, int destroy_conn);
