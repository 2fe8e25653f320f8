/* SPDX-License-Identifier: MIT */
/*
 * The child's steps in the command's own process, up to its execve:
 * signals, rlimits, fds, the bounding set, identity, capabilities, the
 * working directory, no_new_privs, AppArmor, Landlock, the program's
 * lookup, seccomp (runtime/child-internal.h; the rules are runtime/child.c's).
 */
#include "runtime/child-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"
#include "common/fileio.h"
#include "common/signals.h"
#include "policy/seccomp-notify.h"

/* ---- the command's own process ---- */

int step_signals(struct child_ctx *c)
{
        /* Start the command as from a fresh shell: default dispositions,
         * nothing blocked. */
        signals_reset_dispositions();
        sigset_t none;
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                return -errno;
        return 0;
}

int step_timens(struct child_ctx *c)
{
        /* The offsets can only be set while the namespace has no process:
         * made for our children, set, then entered (the switch at execve
         * that newer kernels make is not in every kernel psrun runs on). */
        const char *offsets = c->plan->timens_offsets;
        if (!offsets[0])
                return 0;
        if (unshare(CLONE_NEWTIME) < 0)
                return -errno;
        _cleanup_close_ int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, offsets, strlen(offsets));
        if (r < 0)
                return r;
        _cleanup_close_ int ns = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
        if (ns < 0)
                return -errno;
        return setns(ns, CLONE_NEWTIME) < 0 ? -errno : 0;
}

int step_personality(struct child_ctx *c)
{
        if (c->plan->personality == 0xffffffffUL)
                return 0;
        return personality(c->plan->personality) < 0 ? -errno : 0;
}

int step_bounding(struct child_ctx *c)
{
        const struct caps_plan *caps = &c->plan->caps;
        for (int cap = 0; cap <= caps->last_cap; cap++) {
                if (caps->bounding & (1ULL << cap))
                        continue;
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) {
                        c->index = (uint32_t) cap;
                        return -errno;
                }
        }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return -errno;
        /* Keep the permitted set across setuid; step_caps sets it exactly. */
        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

int step_groups(struct child_ctx *c)
{
        /* One-id rootless map: the kernel refuses setgroups in it. */
        if (c->plan->rootless.setgroups_deny || c->plan->rootless.groups_denied)
                return 0;
        if (syscall(SYS_setgroups, c->plan->n_groups, c->plan->groups) < 0)
                return -errno;
        return 0;
}

int step_setgid(struct child_ctx *c)
{
        gid_t g = c->plan->gid;
        return sys_setresgid(g) < 0 ? -errno : 0;
}

int step_stdio_owner(struct child_ctx *c)
{
        /* As runc: stdio that is a pipe, socket or file is given to the
         * process's uid, so that it can reopen /dev/stdout and the like.
         * Never a device (a terminal of the caller's stays the caller's);
         * an owner or id the user namespace cannot map (EPERM, EINVAL) or a
         * read-only file system leaves it as it is. */
        if (!c->plan->chown_stdio)
                return 0;
        for (int fd = 0; fd <= 2; fd++) {
                struct stat st;
                if (fstat(fd, &st) < 0 || st.st_uid == c->plan->uid ||
                    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode)))
                        continue;
                if (fchown(fd, c->plan->uid, (gid_t) -1) < 0 && errno != EPERM && errno != EINVAL &&
                    errno != EROFS)
                        return -errno;
        }
        return 0;
}

int step_setuid(struct child_ctx *c)
{
        uid_t u = c->plan->uid;
        return sys_setresuid(u) < 0 ? -errno : 0;
}

int step_caps(struct child_ctx *c)
{
        const struct caps_plan *caps = &c->plan->caps;
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {
                {(uint32_t) caps->effective, (uint32_t) caps->permitted,
                 (uint32_t) caps->inheritable},
                {(uint32_t) (caps->effective >> 32), (uint32_t) (caps->permitted >> 32),
                 (uint32_t) (caps->inheritable >> 32)},
        };
        if (syscall(SYS_capset, &hdr, data) < 0)
                return -errno;
        for (int cap = 0; cap <= caps->last_cap; cap++) {
                if (!(caps->ambient & (1ULL << cap)))
                        continue;
                if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0) {
                        c->index = (uint32_t) cap;
                        return -errno;
                }
        }
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

/*
 * The working directory, in two parts: the CVE-2024-21626 class. Until
 * execve this process still holds psrun's host fds (close-on-exec, not
 * closed), so a working directory such as /proc/self/fd/N would be a host
 * directory, from where `..` climbs the host's tree.
 *
 * Before any filter of the config's (and as root): the path must resolve
 * inside the root without a magic link (no /proc/self/fd/N, /proc/PID/cwd,
 * /proc/self/root), which needs openat2.
 */
int step_check_workdir(struct child_ctx *c)
{
        const char *dir = c->plan->workdir ? c->plan->workdir : "/";
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, root, dir, &how, sizeof(how));
        return fd < 0 ? -errno : 0;
}

/*
 * Then, with the command's identity and perhaps under the config's filter,
 * only chdir and getcwd, as runc: the kernel's getcwd() names a directory
 * outside the root "(unreachable)/...", so a path swapped for a magic link
 * since the check cannot lead out either.
 */
int step_chdir(struct child_ctx *c)
{
        const char *dir = c->plan->workdir ? c->plan->workdir : "/";
        if (chdir(dir) < 0)
                return -errno;
        /* exec_path is free until step_lookup fills it. */
        long n = syscall(SYS_getcwd, c->exec_path, PATH_MAX);
        if (n < 0)
                return -errno;
        if (c->exec_path[0] != '/')
                return -EXDEV;
        return 0;
}

int step_no_new_privs(struct child_ctx *c)
{
        if (!c->plan->no_new_privs)
                return 0;
        return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

int step_apparmor(struct child_ctx *c)
{
        /* Takes effect at execve(). Before Landlock, whose rules would
         * refuse the write to /proc/self/attr. */
        if (!c->plan->apparmor.active)
                return 0;
        return apparmor_plan_apply(&c->plan->apparmor);
}

int step_landlock(struct child_ctx *c)
{
        if (c->plan->landlock.ruleset_fd < 0)
                return 0;
        /* landlock_restrict_self is not in CHILD_AFTER_FILTER_SYSCALLS: a
         * plan with a config's early filter has no Landlock ruleset (OCI
         * plans have none), and one that had would fail here, not later. */
        if (child_filter_early(c->plan))
                return -EINVAL;
        int failed = -1;
        int r = landlock_plan_apply(&c->plan->landlock, &failed);
        c->index = failed < 0 ? UINT32_MAX : (uint32_t) failed;
        return r;
}

/* stat() and access() as the syscalls of CHILD_AFTER_FILTER_SYSCALLS:
 * glibc's may be another (its faccessat tries faccessat2 first, which an
 * old profile refuses with EPERM, not ENOSYS). */
static int sys_stat(const char *path, struct stat *st)
{
        return (int) syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

static int sys_access(const char *path, int mode)
{
        return (int) syscall(SYS_faccessat, AT_FDCWD, path, mode);
}

static bool is_executable_file(const char *path)
{
        struct stat st;
        return sys_stat(path, &st) == 0 && S_ISREG(st.st_mode) && sys_access(path, X_OK) == 0;
}

int step_self_exe(struct child_ctx *c)
{
        /* psrun's executable, for refuse_self: recorded first, while /proc
         * is one (the container's may be missing or planted). */
        struct stat st;
        if (stat("/proc/self/exe", &st) < 0)
                return -errno;
        c->self_dev = st.st_dev;
        c->self_ino = st.st_ino;
        return 0;
}

static int refuse_self(struct child_ctx *c, const char *path)
{
        /* The CVE-2019-5736 class: an image whose /bin/sh is a link to
         * /proc/self/exe would have psrun exec this very binary, inside the
         * container. The program, however it is reached (a magic link, a
         * hard link, a bind mount of it), must not be the executable this
         * process runs. */
        struct stat st;
        if (sys_stat(path, &st) < 0)
                return -errno;
        if (st.st_dev == c->self_dev && st.st_ino == c->self_ino)
                return -EPERM;
        /* And it is resolved with no magic links on the way (so no
         * /proc/PID/exe, /proc/PID/fd/N or /proc/PID/root). Not under a
         * config's early filter, which may refuse openat2: then the
         * command's execve finds no fd of psrun's a magic link could lead
         * to (OCI create closes all but the exec FIFO before it waits,
         * step_wait_start; an exec's process keeps only the sync socket,
         * step_keep_planned_fds). */
        if (child_filter_early(c->plan))
                return 0;
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
        return fd < 0 ? -errno : 0;
}

static int find_program(struct child_ctx *c)
{
        /* Find argv[0] now, with the command's identity and root, so that a
         * missing program is an error of `psrun create`, not a silent exit
         * after `psrun start`. PATH search by hand: execvp() is not
         * async-signal-safe. */
        const struct plan *p = c->plan;
        const char *file = p->argv[0];
        size_t flen = strlen(file);
        if (strchr(file, '/')) {
                if (flen + 1 > PATH_MAX)
                        return -ENAMETOOLONG;
                memcpy(c->exec_path, file, flen + 1);
                if (sys_access(file, F_OK) < 0)
                        return -errno;
                return 0;
        }
        const char *path = p->path_env && *p->path_env ? p->path_env : "/usr/bin:/bin";
        int best = -ENOENT;
        while (*path) {
                const char *end = strchrnul(path, ':');
                size_t dlen = (size_t) (end - path);
                if (dlen + 1 + flen + 1 <= PATH_MAX) {
                        char *buf = c->exec_path;
                        memcpy(buf, dlen ? path : ".", dlen ? dlen : 1);
                        size_t off = dlen ? dlen : 1;
                        buf[off++] = '/';
                        memcpy(buf + off, file, flen + 1);
                        if (is_executable_file(buf))
                                return 0;
                        if (errno == EACCES)
                                best = -EACCES;
                }
                path = *end ? end + 1 : end;
        }
        c->exec_path[0] = '\0';
        return best;
}

int step_lookup(struct child_ctx *c)
{
        int r = find_program(c);
        if (r < 0)
                return r;
        return refuse_self(c, c->exec_path);
}

/* close_range's fallback, as crun's: every fd >= first but those in keep,
 * closed or marked close-on-exec, found by walking /proc/self/fd (a kernel
 * before 5.9 has no close_range; a config's seccomp profile may refuse
 * it). */
static int fds_from_proc(unsigned first, const int *keep, size_t n_keep, bool cloexec)
{
        int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        char buf[2048] __attribute__((aligned(8)));
        long n;
        int r = 0;
        while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
                for (long off = 0; off < n;) {
                        /* struct linux_dirent64: ino, off, reclen, type, name */
                        unsigned short reclen;
                        memcpy(&reclen, buf + off + 16, sizeof(reclen));
                        const char *name = buf + off + 19;
                        off += reclen;
                        unsigned fd = 0;
                        bool digits = name[0] != '\0';
                        for (const char *p = name; *p && digits; p++) {
                                digits = *p >= '0' && *p <= '9';
                                fd = fd * 10 + (unsigned) (*p - '0');
                        }
                        bool kept = false;
                        for (size_t k = 0; k < n_keep; k++)
                                kept = kept || (int) fd == keep[k];
                        if (!digits || fd < first || kept || (int) fd == dir)
                                continue;
                        if (cloexec ? fcntl((int) fd, F_SETFD, FD_CLOEXEC) < 0
                                    : close((int) fd) < 0)
                                r = r ? r : -errno;
                }
        }
        if (n < 0)
                r = -errno;
        close(dir);
        return r;
}

int step_close_fds(struct child_ctx *c)
{
        /* No host fd beyond 0-2 (and those --preserve-fds names) reaches the
         * command. CLOEXEC rather than close, so the sync socket can still
         * report a failing execve. Done before a config's early seccomp
         * filter (child_exec_steps): nothing of psrun's own may need a syscall
         * that filter may refuse. */
        unsigned first = 3 + c->plan->preserve_fds;
        if (syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
                return fds_from_proc(first, NULL, 0, true);
        }
        return 0;
}

/*
 * --preserve-fds N passes fds 3..N+2 as they are, as crun does: those the
 * caller passed are open and not close-on-exec (that is how they came
 * through its execve into psrun), a hole in the range stays a hole, and
 * psrun's own fds that landed in it (the state root, the container's lock)
 * are close-on-exec, as all of psrun's fds are from birth, so they never
 * reach the command. Before init waits for `start` they are closed, not
 * only left to execve: it must not hold the lock meanwhile. keep: an fd of
 * the child's own still needed (the exec FIFO).
 */
static void close_own_preserved(unsigned first, int keep)
{
        for (unsigned fd = 3; fd < first; fd++) {
                if ((int) fd == keep)
                        continue;
                int flags = fcntl((int) fd, F_GETFD);
                if (flags >= 0 && (flags & FD_CLOEXEC))
                        close((int) fd);
        }
}

/* The byte `psrun start` writes into the exec FIFO. */
static int read_start(int fd)
{
        char byte;
        ssize_t n;
        do
                n = read(fd, &byte, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(CHILD_EXIT_SETUP);
        return 0;
}

int step_wait_start(struct child_ctx *c)
{
        /* OCI create ends here: tell `psrun create` we are ready, let go of
         * the sync socket (create exits, nobody reads it), and wait for the
         * byte `psrun start` writes into the FIFO. A read of 0 bytes cannot
         * happen while we hold the FIFO open for writing too. */
        int fd = c->plan->exec_fifo_fd;
        if (fd < 0)
                return 0;
        struct child_msg m = {.kind = CHILD_MSG_READY};
        send_msg(c->sync_fd, &m);
        /* Close, not only mark close-on-exec: `psrun create`'s container
         * lock is an inherited open file, and a flock lives as long as any
         * fd of it; so does everything else we must not hold while we wait. */
        unsigned first = 3 + c->plan->preserve_fds;
        close_own_preserved(first, fd);
        /* Under a config's filter close_range is not for psrun to call
         * (CHILD_AFTER_FILTER_SYSCALLS): a profile may refuse it, or kill
         * for it. The walk of /proc/self/fd then, as runc's. */
        if (child_filter_before_exec(c->plan)) {
                int r = fds_from_proc(first, &fd, 1, false);
                if (r < 0)
                        return r;
                return read_start(fd);
        }
        int r = 0;
        if ((unsigned) fd >= first) {
                if ((unsigned) fd > first &&
                    syscall(SYS_close_range, first, (unsigned) fd - 1, 0) < 0)
                        r = -errno;
                if (r == 0 && syscall(SYS_close_range, (unsigned) fd + 1, ~0U, 0) < 0)
                        r = -errno;
        } else if (syscall(SYS_close_range, first, ~0U, 0) < 0) {
                r = -errno;
        }
        /* A kernel before 5.9 has no close_range: the lock must go all the
         * same, or `psrun start` waits for it forever. */
        if (r == -ENOSYS || r == -EPERM)
                (void) fds_from_proc(first, &fd, 1, false);
        return read_start(fd);
}

/* Every fd but 0-2, those --preserve-fds names and those in keep closed:
 * close_range over the gaps. keep is sorted here. */
static int keep_only(unsigned first, int *keep, size_t n)
{
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
                        int t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }
        unsigned from = first;
        for (size_t i = 0; i <= n; i++) {
                if (i < n && (keep[i] < 0 || (unsigned) keep[i] < from))
                        continue;
                unsigned to = i < n ? (unsigned) keep[i] : ~0U;
                if (to > from && syscall(SYS_close_range, from, i < n ? to - 1 : to, 0) < 0) {
                        if (errno != ENOSYS)
                                return -errno;
                        return fds_from_proc(first, keep, n, false);
                }
                if (i < n)
                        from = to + 1;
        }
        return 0;
}

int step_keep_planned_fds(struct child_ctx *c)
{
        /* OCI exec (the CVE-2016-9962 class): the command's process will be
         * visible in the container, where a process with CAP_SYS_PTRACE can
         * open /proc/PID/fd/N of it even though it is not dumpable. Of
         * psrun's fds (the state root, cgroup directories, its own
         * namespaces) it gets none: closed now, before the joins, while
         * /proc is still the host's for the fallback. A session's zygote
         * waits in the sandbox for its request: it holds none of the
         * supervisor's fds meanwhile (its lock, its control socket). */
        const struct plan *p = c->plan;
        if (!p->spawn_command && !p->zygote)
                return 0;
        int keep[5 + PLAN_MAX_JOINS];
        size_t n = 0;
        keep[n++] = c->sync_fd;
        keep[n++] = p->join_pidfd;
        keep[n++] = p->console_fd;
        keep[n++] = p->landlock.ruleset_fd;
        keep[n++] = p->exec_fifo_fd;
        for (size_t i = 0; i < p->n_joins; i++)
                keep[n++] = p->joins[i].fd;
        return keep_only(3 + p->preserve_fds, keep, n);
}

int step_drop_join_fds(struct child_ctx *c)
{
        /* Joined: the command's process gets no fd of the container's init
         * or namespaces either. */
        const struct plan *p = c->plan;
        if (!p->spawn_command && !p->zygote)
                return 0;
        if (p->join_pidfd >= 0)
                close(p->join_pidfd);
        for (size_t i = 0; i < p->n_joins; i++)
                close(p->joins[i].fd);
        return 0;
}

int step_seccomp(struct child_ctx *c)
{
        const struct plan *p = c->plan;
        if (p->seccomp.len == 0 || p->seccomp_early || p->seccomp_listener)
                return 0;
        if (p->seccomp_notify.len)
                return seccomp_program_load_listener(&p->seccomp_notify, &p->seccomp, &c->listener);
        return seccomp_program_load(&p->seccomp);
}

/* An O_PATH fd of /workspace to the parent, if there is one (Landlock does
 * not check O_PATH; a profile that refuses the open costs only the
 * report's disk_full). */
static void send_workspace(int sync_fd)
{
        int fd = open("/workspace", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        struct child_msg m = {.kind = CHILD_MSG_WORKSPACE};
        (void) fdpass_send(sync_fd, &m, sizeof(m), &fd, 1, 0);
        close(fd);
}

int step_report_exec(struct child_ctx *c)
{
        /* After seccomp, which allows sendmsg and close: the parent learns
         * that the command starts, gets its listener, and (SO_PASSCRED on
         * its end) sees this process's pid in its own namespace, which is
         * the creator of the Landlock domain. Refused syscalls made before
         * the parent reads the listener wait for it in the kernel. */
        if (!c->plan->report_exec)
                return 0;
        if (c->plan->report_workspace)
                send_workspace(c->sync_fd);
        struct child_msg m = {
                .kind = CHILD_MSG_EXEC,
                .err = c->plan->seccomp_notify.len && c->listener < 0 ? EBUSY : 0,
        };
        ssize_t n =
                fdpass_send(c->sync_fd, &m, sizeof(m), &c->listener, c->listener >= 0 ? 1 : 0, 0);
        int r = n < 0 ? (int) n : 0;
        /* The command must not hold its own listener: it could answer its
         * refusals itself. (O_CLOEXEC as well, but a failed execve.) */
        c->listener = safe_close(c->listener);
        return r;
}

/* The filter with a listener, which goes to the parent at once (for the
 * OCI config's seccomp agent): this process keeps none, so nothing it
 * runs can answer its own notifications. */
static int load_with_listener(struct child_ctx *c)
{
        int listener;
        int r = seccomp_program_load_with_listener(&c->plan->seccomp, &listener);
        if (r < 0)
                return r;
        struct child_msg m = {.kind = CHILD_MSG_SECCOMP};
        ssize_t n = fdpass_send(c->sync_fd, &m, sizeof(m), &listener, 1, 0);
        close(listener);
        return n < 0 ? (int) n : 0;
}

int step_seccomp_early(struct child_ctx *c)
{
        /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN, which
         * the steps after this one drop: they call only what every OCI
         * profile allows there, as runc loads them at the same point
         * (CHILD_AFTER_FILTER_SYSCALLS). */
        if (c->plan->seccomp.len == 0 || !c->plan->seccomp_early)
                return 0;
        if (c->plan->seccomp_listener)
                return load_with_listener(c);
        return seccomp_program_load(&c->plan->seccomp);
}

int step_seccomp_listener(struct child_ctx *c)
{
        /* As late as the parent still reads the sync socket: OCI create's
         * ends with CHILD_MSG_READY (runc loads such a filter at the same
         * point, before its exec FIFO). What follows calls only
         * CHILD_AFTER_FILTER_SYSCALLS. */
        if (c->plan->seccomp.len == 0 || c->plan->seccomp_early || !c->plan->seccomp_listener)
                return 0;
        return load_with_listener(c);
}

int step_scheduler(struct child_ctx *c)
{
        const struct plan *p = c->plan;
        if (!p->has_sched)
                return 0;
        /* struct sched_attr as of Linux 5.3 (SCHED_ATTR_SIZE_VER1): the
         * utilization clamps stay 0. */
        struct {
                uint32_t size, policy;
                uint64_t flags;
                int32_t nice;
                uint32_t priority;
                uint64_t runtime, deadline, period;
                uint32_t util_min, util_max;
        } attr = {
                .size = sizeof(attr),
                .policy = p->sched.policy,
                .flags = p->sched.flags,
                .nice = p->sched.nice,
                .priority = p->sched.priority,
                .runtime = p->sched.runtime,
                .deadline = p->sched.deadline,
                .period = p->sched.period,
        };
        return syscall(SYS_sched_setattr, 0, &attr, 0) < 0 ? -errno : 0;
}

int step_io_priority(struct child_ctx *c)
{
        if (!c->plan->ioprio)
                return 0;
        /* IOPRIO_WHO_PROCESS: this process, and what it starts. */
        return syscall(SYS_ioprio_set, 1, 0, c->plan->ioprio) < 0 ? -errno : 0;
}

int step_cpu_affinity(struct child_ctx *c)
{
        const struct plan *p = c->plan;
        if (!p->has_cpus_final)
                return 0;
        return sched_setaffinity(0, sizeof(p->cpus_final), &p->cpus_final) < 0 ? -errno : 0;
}

int step_session_keyring(struct child_ctx *c)
{
        const char *name = c->plan->session_keyring;
        if (!name)
                return 0;
        /* KEYCTL_JOIN_SESSION_KEYRING (1) makes and joins a new one. */
        long id = syscall(SYS_keyctl, 1, name, 0, 0, 0);
        if (id < 0)
                return errno == ENOSYS ? 0 : -errno; /* a kernel without keys */
        /* The kernel makes it without search for its user (runc adds it):
         * possessor all, user view, read, search and link. KEYCTL_SETPERM
         * (5). */
        return syscall(SYS_keyctl, 5, id, 0x3f1b0000UL, 0, 0) < 0 ? -errno : 0;
}
