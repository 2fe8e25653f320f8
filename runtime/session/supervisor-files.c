/* SPDX-License-Identifier: MIT */
/*
 * The session's file writer: psrun_write_file's bytes are written by a
 * process in a cgroup of the session (below the session's, whose limits
 * hold for it), not by the caller. A tmpfs page is charged to the memory
 * cgroup of the task that first faults it in, so the workspace's pages a
 * host-side write makes count against the sandbox's memory_limit exactly
 * as the sandbox's own would, and the tmpfs (its size is the disk_limit)
 * refuses what does not fit. Before each chunk the writer checks that the
 * session's cgroup has room for it: a charge beyond the limit would wake
 * the cgroup's OOM killer, which picks the sandbox's largest process (or
 * this writer), where the caller should just be told no.
 *
 * One writer per session, forked from the supervisor at the first write
 * and kept (joining a cgroup costs an RCU grace period on cgroup v1, which
 * a small write must not pay each time). The supervisor passes it each
 * WRITE request with its connection and goes on serving; the writer
 * answers the client on that connection. A failed write removes its
 * temporary file: nothing is left but what was there before. A client that
 * hangs up (psrun_write_file_opts' cancel) cancels its write: the writer
 * looks before each chunk, so it stops within one and is free for the next.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"
#include "common/fileio.h"
#include "common/units.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/run.h"
#include "runtime/session/supervisor.h"
#include "runtime/session/workspace.h"

/* Bytes per write(2), each after a check of the cgroup's room. */
#define WRITE_CHUNK (1U << 20)
/* Left free below the limit: the kernel's own charges, the per-CPU
 * charge batches the usage file does not show yet. */
#define ROOM_MARGIN (1U << 20)
/* A v1 memory.limit_in_bytes this large is "no limit". */
#define NO_LIMIT (1ULL << 62)

struct writer {
        struct ws w;
        int usage_fd, limit_fd; /* the session's cgroup's; -1: no memory controller */
        int conn;               /* the client of the write in hand; -1: none */
};

/* Whether the client of the write in hand hung up (a cancel). */
static bool client_gone(const struct writer *wr)
{
        struct pollfd p = {.fd = wr->conn, .events = POLLRDHUP};
        return wr->conn >= 0 && poll(&p, 1, 0) > 0 &&
               (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* 0 when the session's cgroup can take `bytes` more; -EDQUOT (and the
 * limit in *limit) when it cannot. */
static int room_for(const struct writer *wr, size_t bytes, uint64_t *limit)
{
        uint64_t usage, max;
        if (wr->usage_fd < 0 || cgroup_read_fd_u64(wr->limit_fd, &max) < 0 || max >= NO_LIMIT)
                return 0;
        if (cgroup_read_fd_u64(wr->usage_fd, &usage) < 0)
                return 0;
        *limit = max;
        return usage + bytes + ROOM_MARGIN > max ? -EDQUOT : 0;
}

static int write_chunks(const struct writer *wr, int fd, const char *data, size_t len,
                        uint64_t *limit)
{
        for (size_t off = 0; off < len;) {
                size_t n = len - off < WRITE_CHUNK ? len - off : WRITE_CHUNK;
                if (client_gone(wr))
                        return -ECANCELED;
                int r = room_for(wr, n, limit);
                if (r < 0)
                        return r;
                r = write_all(fd, data + off, n);
                if (r < 0)
                        return r;
                off += n;
        }
        return 0;
}

/* The named limit a failed write ran into, or its errno. */
static int write_error(const struct writer *wr, const char *shown, int r, uint64_t mem_limit,
                       psrun_error *err)
{
        char size[32];
        if (r == -EDQUOT || r == -ENOMEM) {
                format_size(mem_limit, size, sizeof(size));
                return psrun_error_set(err, EDQUOT, "write_file: %s: memory_limit %s reached",
                                       shown, size);
        }
        if (r == -ECANCELED)
                return psrun_error_set(err, ECANCELED, "write_file: %s: cancelled", shown);
        if (r == -ENOSPC) {
                format_size(wr->w.disk_limit, size, sizeof(size));
                return psrun_error_set(err, ENOSPC,
                                       "write_file: %s: the workspace is full: disk_limit %s "
                                       "reached",
                                       shown, size);
        }
        return psrun_error_errno(err, r, "write_file: %s", shown);
}

static int write_as_user(const struct writer *wr, const char *path, const char *rel,
                         const char *data, size_t len, unsigned mode, psrun_error *err)
{
        char shown[PATH_MAX + sizeof(WORKSPACE) + 1];
        snprintf(shown, sizeof(shown), "%s/%s", WORKSPACE, rel);
        _cleanup_close_ int dir = -1;
        char name[NAME_MAX + 1];
        int r = ws_open_parent(&wr->w, "path", path, rel, true, &dir, name, err);
        if (r < 0)
                return r;
        /* A fresh name of ours, O_EXCL: nothing the sandbox planted under
         * it is followed or reused. */
        char tmp[64];
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                rnd ^= (uint64_t) getpid() << 20 ^ (uint64_t) (uintptr_t) &rnd;
        snprintf(tmp, sizeof(tmp), ".psrun-write-%016llx", (unsigned long long) rnd);
        _cleanup_close_ int fd =
                openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return write_error(wr, shown, -errno, 0, err);
        uint64_t limit = 0;
        r = write_chunks(wr, fd, data, len, &limit);
        if (r >= 0 && fchmod(fd, (mode_t) (mode & 0777)) < 0)
                r = -errno;
        /* The last look: a cancel before the rename leaves the old file. */
        if (r >= 0 && client_gone(wr))
                r = -ECANCELED;
        if (r >= 0 && renameat(dir, tmp, dir, name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dir, tmp, 0);
                return write_error(wr, shown, r, limit, err);
        }
        return 0;
}

/* One WRITE request: its message (header, path, inline data) and the
 * memfd of its data, if any. */
static int do_write(const struct writer *wr, const char *buf, size_t n, int data_fd,
                    psrun_error *err)
{
        struct sess_req req;
        if (n < sizeof(req))
                return psrun_error_set(err, EPROTO, "write_file: malformed request");
        memcpy(&req, buf, sizeof(req));
        const char *path = buf + sizeof(req);
        size_t rest = n - sizeof(req);
        if (req.path_len >= rest || path[req.path_len] != '\0' || strlen(path) != req.path_len)
                return psrun_error_set(err, EPROTO, "write_file: malformed path");
        size_t inline_len = rest - req.path_len - 1;
        const char *data = path + req.path_len + 1;
        size_t len = (size_t) req.data_len;
        if ((uint64_t) len != req.data_len)
                return psrun_error_set(err, EFBIG, "write_file: %llu bytes is too much",
                                       (unsigned long long) req.data_len);
        void *map = NULL;
        if (data_fd >= 0) {
                struct stat st;
                if (inline_len || fstat(data_fd, &st) < 0 || (uint64_t) st.st_size < req.data_len)
                        return psrun_error_set(err, EPROTO, "write_file: malformed data");
                if (len) {
                        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, data_fd, 0);
                        if (map == MAP_FAILED)
                                return psrun_error_errno(err, errno, "write_file: map the data");
                        data = map;
                }
        } else if (inline_len != len || len > SESS_WRITE_INLINE_MAX) {
                return psrun_error_set(err, EPROTO, "write_file: malformed data");
        }
        const char *rel;
        int r = ws_relative("path", path, &rel, err);
        if (r >= 0) {
                struct ws_fsids ids = ws_become_user(&wr->w);
                r = write_as_user(wr, path, rel, data, len, req.mode, err);
                ws_restore_ids(ids);
        }
        if (map)
                (void) munmap(map, len);
        return r;
}

/* READ, LIST, REMOVE (a rootless session's, files_remote): the path of
 * the message buf, n bytes, as the sandbox's user; *fd_out what the reply
 * carries. */
static int do_file_op(const struct writer *wr, const char *buf, size_t n, struct sess_reply *rep,
                      int *fd_out, psrun_error *err)
{
        struct sess_req req;
        if (n < sizeof(req))
                return psrun_error_set(err, EPROTO, "file: malformed request");
        memcpy(&req, buf, sizeof(req));
        const char *path = buf + sizeof(req);
        size_t rest = n - sizeof(req);
        if (req.path_len >= rest || path[req.path_len] != '\0' || strlen(path) != req.path_len ||
            rest != req.path_len + 1)
                return psrun_error_set(err, EPROTO, "file: malformed path");
        const char *field = req.op == SESS_OP_LIST ? "dir" : "path";
        const char *rel;
        int r = ws_relative(field, path, &rel, err);
        if (r < 0)
                return r;
        struct ws_fsids ids = ws_become_user(&wr->w);
        if (req.op == SESS_OP_READ) {
                r = ws_open_regular(&wr->w, path, rel, fd_out, err);
        } else if (req.op == SESS_OP_REMOVE) {
                r = ws_remove(&wr->w, path, rel, err);
        } else if (req.max == 0 || req.max > PSRUN_LIST_MAX_ENTRIES || req.offset == 0 ||
                   req.offset > PSRUN_LIST_MAX_BYTES) {
                r = psrun_error_set(err, EPROTO, "list_files: bounds out of range");
        } else {
                psrun_listing l;
                r = ws_list(&wr->w, path, rel, req.flags & SESS_REQ_RECURSIVE, (size_t) req.max,
                            (size_t) req.offset, &l, err);
                if (r >= 0) {
                        r = ws_listing_write(&l, fd_out, err);
                        rep->list_n = l.n;
                        rep->list_truncated = l.truncated != 0;
                        psrun_listing_free(&l);
                }
        }
        ws_restore_ids(ids);
        return r;
}

/* fds 0-2 and keep[] stay; every other fd of the supervisor is closed. */
static void close_all_but(int *keep, size_t n)
{
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
                        int t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }
        unsigned from = 3;
        for (size_t i = 0; i < n; i++) {
                if (keep[i] < 0 || (unsigned) keep[i] < from)
                        continue;
                if ((unsigned) keep[i] > from)
                        (void) syscall(SYS_close_range, from, (unsigned) keep[i] - 1, 0);
                from = (unsigned) keep[i] + 1;
        }
        (void) syscall(SYS_close_range, from, ~0U, 0);
}

static _Noreturn void writer_serve(int sock, struct writer *wr)
{
        static char buf[sizeof(struct sess_req) + SESSION_MSG_MAX] __attribute__((aligned(16)));
        for (;;) {
                struct fdpass_in in;
                ssize_t n = fdpass_recv(sock, buf, sizeof(buf), &in, 0);
                if (n <= 0)
                        _exit(0); /* the supervisor is gone */
                int conn = in.n_fds > 0 ? in.fds[0] : -1;
                int data_fd = in.n_fds > 1 ? in.fds[1] : -1;
                fdpass_close(&in, 2);
                psrun_error err = {0};
                wr->conn = conn;
                struct sess_req req = {0};
                if ((size_t) n >= sizeof(req))
                        memcpy(&req, buf, sizeof(req));
                static struct sess_reply rep;
                rep = (struct sess_reply){.kind = SESS_REPLY_OK};
                int out_fd = -1;
                int r = in.truncated ? psrun_error_set(&err, EPROTO, "write_file: truncated")
                        : req.op == SESS_OP_WRITE
                                ? do_write(wr, buf, (size_t) n, data_fd, &err)
                                : do_file_op(wr, buf, (size_t) n, &rep, &out_fd, &err);
                if (conn >= 0) {
                        if (r < 0)
                                rep = (struct sess_reply){.kind = SESS_REPLY_ERROR, .err = err};
                        (void) sup_send_reply(conn, &rep, r < 0 ? -1 : out_fd);
                        close(conn);
                }
                if (out_fd >= 0)
                        close(out_fd);
                if (data_fd >= 0)
                        close(data_fd);
        }
}

void sup_files_stop(struct supervisor *s)
{
        if (s->files_pidfd >= 0) {
                (void) syscall(SYS_pidfd_send_signal, s->files_pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                while (waitid((idtype_t) P_PIDFD, (id_t) s->files_pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
        }
        s->files_pidfd = safe_close(s->files_pidfd);
        s->files_sock = safe_close(s->files_sock);
        cgroup_destroy(s->files_cg);
        s->files_cg = NULL;
}

/* The writer, in a cgroup below the session's: forked, then joined to it
 * before it is given anything to write. */
static int files_start(struct supervisor *s, psrun_error *err)
{
        /* Rootless: in the sandbox's user namespace (its first join, init's
         * CHILD_MSG_NAMESPACE), whose capabilities reach the workspace's
         * files, as the sandbox's user there; in the session's cgroup when
         * it has one (a delegated subtree). */
        bool rootless = s->tmpl.rootless.active;
        int userns = rootless && s->tmpl.n_joins > 0 && s->tmpl.joins[0].type == CLONE_NEWUSER
                             ? s->tmpl.joins[0].fd
                             : -1;
        if (s->workspace_fd < 0 || (!s->cg && !rootless) || (rootless && userns < 0))
                return psrun_error_set(err, ENOTSUP, "write_file: the session has no cgroup");
        int r = s->cg ? cgroup_create_child(s->cg, NULL, &s->files_cg, err) : 0;
        if (r < 0)
                return r;
        struct writer wr = {
                .w = {.fd = s->workspace_fd,
                      .uid = rootless ? s->tmpl.uid : PSRUN_ID_BASE + s->tmpl.uid,
                      .gid = rootless ? s->tmpl.gid : PSRUN_ID_BASE + s->tmpl.gid,
                      .disk_limit = s->tmpl.reported.disk_bytes},
                .usage_fd = -1,
                .limit_fd = -1,
                .conn = -1,
        };
        r = s->cg ? cgroup_memory_fds(s->cg, &wr.usage_fd, &wr.limit_fd) : -EOPNOTSUPP;
        if (r < 0 && r != -EOPNOTSUPP) {
                sup_files_stop(s);
                return psrun_error_errno(err, r, "write_file: the session's memory usage");
        }
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                r = -errno;
                safe_close(wr.usage_fd);
                safe_close(wr.limit_fd);
                sup_files_stop(s);
                return psrun_error_errno(err, r, "write_file: socketpair");
        }
        pid_t pid = fork();
        if (pid == 0) {
                /* Gone with the supervisor; its end of the socket
                 * closing (recv: 0) ends it too. */
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                /* One thread (a fork's copy), as setns requires. */
                if (userns >= 0 && setns(userns, CLONE_NEWUSER) < 0)
                        _exit(1);
                int keep[] = {sv[1], wr.w.fd, wr.usage_fd, wr.limit_fd};
                close_all_but(keep, ARRAY_SIZE(keep));
                /* The directories it makes are 0755 whatever the
                 * supervisor's umask; files get their mode by fchmod. */
                umask(0);
                writer_serve(sv[1], &wr);
        }
        r = pid < 0 ? -errno : 0;
        close(sv[1]);
        safe_close(wr.usage_fd);
        safe_close(wr.limit_fd);
        s->files_sock = sv[0];
        if (r < 0) {
                sup_files_stop(s);
                return psrun_error_errno(err, r, "write_file: fork the writer");
        }
        s->files_pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (s->files_pidfd < 0) {
                r = -errno;
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                sup_files_stop(s);
                return psrun_error_errno(err, r, "write_file: pidfd of the writer");
        }
        r = s->files_cg ? cgroup_attach(s->files_cg, pid, err) : 0;
        if (r < 0) {
                sup_files_stop(s);
                return r;
        }
        return 0;
}

/* Whether the writer is there and alive (one that died is reaped). */
static bool files_alive(struct supervisor *s)
{
        if (s->files_pidfd < 0)
                return false;
        siginfo_t si = {0};
        if (waitid((idtype_t) P_PIDFD, (id_t) s->files_pidfd, &si, WEXITED | WNOHANG) == 0 &&
            si.si_pid == 0)
                return true;
        sup_files_stop(s);
        return false;
}

int sup_files_write(struct supervisor *s, int conn, const char *buf, size_t n, const int *fds,
                    int n_fds, psrun_error *err)
{
        if (n_fds > 1)
                return psrun_error_set(err, EPROTO, "write_file: at most one fd expected");
        int pass[2] = {conn, n_fds == 1 ? fds[0] : -1};
        for (int attempt = 0; attempt < 2; attempt++) {
                if (!files_alive(s)) {
                        int r = files_start(s, err);
                        if (r < 0)
                                return r;
                }
                /* Never blocks the supervisor: a writer busy with a large
                 * write has its queue; a full one is a refusal. */
                ssize_t sent =
                        fdpass_send(s->files_sock, buf, n, pass, n_fds == 1 ? 2 : 1, MSG_DONTWAIT);
                if (sent >= 0)
                        return 0;
                if (sent == -EAGAIN)
                        return psrun_error_set(err, EBUSY,
                                               "write_file: the session's writer is busy with "
                                               "other writes: try again");
                if (sent != -EPIPE && sent != -ECONNRESET && sent != -ECONNREFUSED)
                        return psrun_error_errno(err, (int) sent, "write_file: to the writer");
                sup_files_stop(s);
        }
        return psrun_error_set(err, EPIPE, "write_file: the session's writer died");
}
