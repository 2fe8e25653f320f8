/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the cgroup tests (test_cgroup.c, test_cgroup_tree.c): where
 * the hierarchies are, cgroups and children made and cgt_tracked for the suite's
 * fini, which test_cgroup.c declares along with the tracking state.
 */
#pragma once

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "common/cleanup.h"
#include "common/clone.h"
#include "lib/testlib.h"
#include "runtime/cgroup/internal.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/oci/config.h"

#define MiB (1024ULL * 1024ULL)

/* Hierarchies a test may look at, by the names cgroup_path() takes. */
static const struct {
        const char *name;
        const char *controller; /* NULL: cgroup2 */
} hierarchies[] = {
        {"memory", "memory"},   {"pids", "pids"},       {"cpu", "cpu"},
        {"cpuacct", "cpuacct"}, {"freezer", "freezer"}, {"unified", NULL},
};

/* Everything a test made, for the suite's fini (test_cgroup.c, which defines
 * them). Each Criterion test runs in its own process, so globals are per test. */
extern struct cgroup *cgt_tracked[8];
extern pid_t cgt_kids[64];
extern char *cgt_made_dirs[256]; /* creation order; removed in reverse */
extern size_t cgt_n_made;
/* Processes that are not our children (grandchildren, orphans): held by
 * pidfd so the fini can kill them after a failed test without risking a
 * reused pid. */
extern int cgt_stray_pidfds[16];
extern size_t cgt_n_stray;

static inline struct cgroup *track(struct cgroup *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(cgt_tracked); i++) {
                if (!cgt_tracked[i]) {
                        cgt_tracked[i] = cg;
                        return cg;
                }
        }
        cr_assert_fail("too many cgroups in one test");
        return cg;
}

static inline void destroy_tracked(struct cgroup *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(cgt_tracked); i++)
                if (cgt_tracked[i] == cg)
                        cgt_tracked[i] = NULL;
        cgroup_destroy(cg);
}

static inline void track_kid(pid_t pid)
{
        for (size_t i = 0; i < ARRAY_SIZE(cgt_kids); i++) {
                if (!cgt_kids[i]) {
                        cgt_kids[i] = pid;
                        return;
                }
        }
}

static inline void track_stray(pid_t pid)
{
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd >= 0 && cgt_n_stray < ARRAY_SIZE(cgt_stray_pidfds))
                cgt_stray_pidfds[cgt_n_stray++] = fd;
        else if (fd >= 0)
                close(fd);
}

static inline void sleep_ms(long ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* Thaw (a paused OCI test cgroup) and kill what is in dir and below. */
static inline void cgt_thaw_kill_tree(const char *dir)
{
        DIR *d = opendir(dir);
        if (d) {
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        char sub[PATH_MAX];
                        snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                        cgt_thaw_kill_tree(sub);
                }
                closedir(d);
        }
        cg_write(dir, "freezer.state", "THAWED");
        cg_write(dir, "cgroup.freeze", "0");
        for (int i = 0; i < 200 && cg_signal_tree(dir, SIGKILL) > 0; i++)
                sleep_ms(10);
}

/* rmdir a cgroup directory after its child cgroups. */
static inline void cgt_rm_tree(const char *dir)
{
        cgt_thaw_kill_tree(dir);
        DIR *d = opendir(dir);
        if (d) {
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        char sub[PATH_MAX];
                        snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                        cgt_rm_tree(sub);
                }
                closedir(d);
        }
        for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
                sleep_ms(10);
}

/* The suites' fini: whatever a failed assertion left behind. */
static inline void cgt_cleanup(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(cgt_tracked); i++) {
                cgroup_destroy(cgt_tracked[i]);
                cgt_tracked[i] = NULL;
        }
        while (cgt_n_stray > 0) {
                int fd = cgt_stray_pidfds[--cgt_n_stray];
                syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
                close(fd);
        }
        for (size_t i = 0; i < ARRAY_SIZE(cgt_kids); i++) {
                if (cgt_kids[i] > 0) {
                        kill(cgt_kids[i], SIGKILL);
                        waitpid(cgt_kids[i], NULL, 0);
                }
        }
        while (cgt_n_made > 0) {
                char *d = cgt_made_dirs[--cgt_n_made];
                cgt_rm_tree(d);
                free(d);
        }
}

/* ---- where things are ---------------------------------------------------- */

/* Mount point of the hierarchy holding `controller` (NULL: cgroup2). */
static inline bool hierarchy_mount(const char *controller, char *out, size_t size)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        cr_assert_not_null(f);
        char line[4096];
        bool found = false;
        while (!found && fgets(line, sizeof(line), f)) {
                char root[1024], mp[1024], fstype[64], super[1024];
                char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %*s %1023s %1023s", root, mp) != 2 ||
                    sscanf(sep + 3, "%63s %*s %1023s", fstype, super) != 2)
                        continue;
                if (strncmp(mp, "/sys/fs/cgroup", 14) != 0)
                        continue;
                if (controller) {
                        char list[1100];
                        char want[80];
                        snprintf(list, sizeof(list), ",%s,", super);
                        snprintf(want, sizeof(want), ",%s,", controller);
                        found = strcmp(fstype, "cgroup") == 0 && strstr(list, want);
                } else {
                        found = strcmp(fstype, "cgroup2") == 0;
                }
                if (found)
                        snprintf(out, size, "%s", mp);
        }
        fclose(f);
        return found;
}

/* pid's cgroup in that hierarchy as /proc/<pid>/cgroup shows it (0: self). */
static inline bool proc_cgroup(pid_t pid, const char *controller, char *out, size_t size)
{
        char p[64], line[4096];
        if (pid)
                snprintf(p, sizeof(p), "/proc/%d/cgroup", pid);
        else
                snprintf(p, sizeof(p), "/proc/self/cgroup");
        FILE *f = fopen(p, "re");
        if (!f)
                return false;
        bool found = false;
        while (!found && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                char *c1 = strchr(line, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                if (controller) {
                        char list[1100], want[80];
                        snprintf(list, sizeof(list), ",%s,", c1 + 1);
                        snprintf(want, sizeof(want), ",%s,", controller);
                        found = strstr(list, want) != NULL;
                } else {
                        found = strncmp(line, "0:", 2) == 0 && c1 + 1 == c2;
                }
                if (found)
                        snprintf(out, size, "%s", c2 + 1);
        }
        fclose(f);
        return found;
}

static inline bool is_v2(void)
{
        struct statfs sfs;
        return statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

static inline bool exists(const char *path)
{
        return access(path, F_OK) == 0;
}

static inline char *read_file(const char *dir, const char *file, char *buf, size_t size)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "open %s: %s", p, strerror(errno));
        ssize_t n = read(fd, buf, size - 1);
        close(fd);
        cr_assert_geq(n, 0, "read %s: %s", p, strerror(errno));
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return buf;
}

static inline bool procs_empty(const char *dir)
{
        char buf[4096];
        return read_file(dir, "cgroup.procs", buf, sizeof(buf))[0] == '\0';
}

/* Cgroups made by this test process (psrun-<our pid>-*): those of other
 * psrun runs on the machine are not ours to judge. Give a kill a moment. */
static inline void assert_no_leftovers(void)
{
        char why[512] = "";
        for (int i = 0; i < 100; i++) {
                if (test_no_cgroup_leftovers_of((int) getpid(), why, sizeof(why)))
                        return;
                sleep_ms(100);
        }
        cr_assert_fail("%s", why);
}

static inline struct cgroup *create(const char *parent, uint64_t mem, uint64_t pids, double cpus)
{
        struct cgroup_limits limits = {.memory_bytes = mem, .pids_max = pids, .cpus = cpus};
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        int r = cgroup_create(parent, &limits, &cg, &err);
        cr_assert_eq(r, 0, "cgroup_create: %d %s", r, err.msg);
        cr_assert_not_null(cg);
        return track(cg);
}

/* ---- children ------------------------------------------------------------ */

/*
 * Children run between a raw clone3 and _exit, so they keep to raw system
 * calls (no malloc, no stdio): a fork handler or lock of the test process
 * must not matter.
 */
static inline pid_t raw_fork(void)
{
        return (pid_t) syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

static inline void touch(size_t bytes)
{
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(90);
        for (size_t off = 0; off < bytes; off += 4096)
                p[off] = 1;
}

static inline void report(int fd, long value)
{
        if (write(fd, &value, sizeof(value)) != sizeof(value))
                _exit(91);
}

/* pid is in cg in every hierarchy cg has a directory in. */
static inline void assert_member(struct cgroup *cg, pid_t pid)
{
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                const char *p = cgroup_path(cg, hierarchies[i].name);
                const char *unified = cgroup_path(cg, "unified");
                char where[1024];
                /* With the v2 driver every name maps to the one cgroup2 dir. */
                if (hierarchies[i].controller && p && unified && strcmp(p, unified) == 0)
                        continue;
                if (!p || !proc_cgroup(pid, hierarchies[i].controller, where, sizeof(where)))
                        continue;
                size_t lp = strlen(p), lw = strlen(where);
                cr_assert(lp >= lw && strcmp(p + lp - lw, where) == 0 && strcmp(where, "/") != 0,
                          "%s: pid %d is in %s, want %s", hierarchies[i].name, pid, where, p);
        }
}

typedef void (*child_fn)(int report_fd, long arg);

struct kid {
        pid_t pid;
        int report_fd;
        bool cloned_into; /* placed by CLONE_INTO_CGROUP */
};

/* Start fn in a child placed in cg: clone3(CLONE_INTO_CGROUP) when the cgroup
 * has a cgroup2 directory (or `attach_only` says not to), then
 * cgroup_attach; the child waits until it is in every hierarchy. */
static inline struct kid spawn(struct cgroup *cg, bool attach_only, child_fn fn, long arg)
{
        int go[2], rep[2];
        cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(rep, O_CLOEXEC), 0);
        struct kid k = {.pid = -1, .report_fd = rep[0]};
        int cgfd = cgroup_clone_fd(cg);
        if (cgfd >= 0 && !attach_only) {
                struct clone_args_v2 args = {
                        .flags = CLONE_INTO_CGROUP,
                        .exit_signal = SIGCHLD,
                        .cgroup = (uint64_t) cgfd,
                };
                k.pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
                cr_assert_geq(k.pid, 0, "clone3(CLONE_INTO_CGROUP): %s", strerror(errno));
                k.cloned_into = true;
        } else {
                k.pid = raw_fork();
                cr_assert_geq(k.pid, 0);
        }
        if (k.pid == 0) {
                char c;
                close(go[1]);
                close(rep[0]);
                if (read(go[0], &c, 1) != 1)
                        _exit(92);
                fn(rep[1], arg);
                _exit(0);
        }
        track_kid(k.pid);
        close(go[0]);
        close(rep[1]);
        psrun_error err = {0};
        cr_assert_eq(cgroup_attach(cg, k.pid, &err), 0, "cgroup_attach: %s", err.msg);
        assert_member(cg, k.pid);
        cr_assert_eq(write(go[1], "x", 1), 1);
        close(go[1]);
        return k;
}

static inline long read_report(const struct kid *k)
{
        long v;
        ssize_t n = read(k->report_fd, &v, sizeof(v));
        cr_assert_eq(n, (ssize_t) sizeof(v), "child report: %zd", n);
        return v;
}

static inline int reap(pid_t pid)
{
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        for (size_t i = 0; i < ARRAY_SIZE(cgt_kids); i++)
                if (cgt_kids[i] == pid)
                        cgt_kids[i] = 0;
        return st;
}

/* Gone, or a zombie nobody reaped yet. */
static inline bool dead(pid_t pid)
{
        char p[64], buf[512];
        snprintf(p, sizeof(p), "/proc/%d/stat", pid);
        FILE *f = fopen(p, "re");
        if (!f)
                return true;
        bool zombie = false;
        if (fgets(buf, sizeof(buf), f)) {
                char *rp = strrchr(buf, ')');
                zombie = rp && (rp[2] == 'Z' || rp[2] == 'X');
        }
        fclose(f);
        return zombie;
}

static inline void child_wait_forever(int fd, long arg)
{
        report(fd, arg);
        for (;;)
                pause();
}

static inline void child_burn(int fd, long msec)
{
        struct timespec ts;
        do
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        while (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 < msec);
        _exit(0);
}

/* Two sleepers, and a grandchild that setsid()s and double-forks so its
 * sleeping great-grandchild is orphaned in another session. Each reports
 * pid * 10 + role, in whatever order they get there. */
enum { ROLE_SLEEPER = 1, ROLE_SESSION = 2, ROLE_ORPHAN = 3 };

static inline void child_tree(int fd, long arg)
{
        for (int i = 0; i < 2; i++)
                if (raw_fork() == 0)
                        child_wait_forever(fd, (long) getpid() * 10 + ROLE_SLEEPER);
        if (raw_fork() == 0) {
                setsid();
                report(fd, (long) getpid() * 10 + ROLE_SESSION);
                if (raw_fork() == 0) {
                        if (raw_fork() == 0)
                                child_wait_forever(fd, (long) getpid() * 10 + ROLE_ORPHAN);
                        _exit(0);
                }
                for (;;)
                        pause();
        }
        for (;;)
                pause();
}

static inline struct cgroup_stats stats_of(struct cgroup *cg)
{
        struct cgroup_stats st;
        psrun_error err = {0};
        cr_assert_eq(cgroup_read_stats(cg, &st, &err), 0, "cgroup_read_stats: %s", err.msg);
        return st;
}

static inline void kill_tree_and_check(struct cgroup *cg)
{
        struct kid k = spawn(cg, false, child_tree, 0);
        pid_t pids[4], orphan = 0;
        for (int i = 0; i < 4; i++) {
                long v = read_report(&k);
                pids[i] = (pid_t) (v / 10);
                cr_assert_gt(pids[i], 0);
                track_stray(pids[i]);
                if (v % 10 == ROLE_ORPHAN)
                        orphan = pids[i];
        }
        /* The orphan really left: another session, and no longer anywhere
         * below the child it started from. */
        cr_assert_gt(orphan, 0);
        cr_assert_neq(getsid(orphan), getsid(0));

        psrun_error err = {0};
        cr_assert_eq(cgroup_kill(cg, &err), 0, "cgroup_kill: %s", err.msg);
        /* Check before waitpid, which would block on a survivor. An empty
         * cgroup is not yet a zombie: the kernel takes an exiting task out
         * of its cgroup (cgroup_exit) before it notifies the parent, a
         * window the kernel-matrix VM's emulated CPUs make wide. */
        for (int t = 0; t < 100 && !dead(k.pid); t++)
                sleep_ms(10);
        cr_assert(dead(k.pid), "child %d survived cgroup_kill", k.pid);
        int st = reap(k.pid);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
        for (int i = 0; i < 4; i++) {
                for (int t = 0; t < 100 && !dead(pids[i]); t++)
                        sleep_ms(10);
                cr_assert(dead(pids[i]), "pid %d survived cgroup_kill", pids[i]);
        }
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                const char *p = cgroup_path(cg, hierarchies[i].name);
                if (p)
                        cr_assert(procs_empty(p), "%s not empty", p);
        }
        /* Killing an empty cgroup is fine. */
        cr_assert_eq(cgroup_kill(cg, &err), 0, "%s", err.msg);
}

/* ---- parents ------------------------------------------------------------- */

/*
 * A parent path below this test's cgroup in every hierarchy: the deepest of
 * the test's own cgroups (they are nested in one another, as on this host
 * where memory is /a/b and the rest are /), with a fresh directory below it,
 * created in every mounted hierarchy (`all`: every one an OCI cgroup may
 * use, not only psrun run's). Returns the parent path.
 */
static const struct {
        const char *name;
        const char *controller; /* NULL: cgroup2 */
} oci_hierarchies[] = {
        {"memory", "memory"},   {"pids", "pids"},         {"cpu", "cpu"},
        {"cpuacct", "cpuacct"}, {"freezer", "freezer"},   {"cpuset", "cpuset"},
        {"devices", "devices"}, {"blkio", "blkio"},       {"hugetlb", "hugetlb"},
        {"net_cls", "net_cls"}, {"net_prio", "net_prio"}, {"perf_event", "perf_event"},
        {"unified", NULL},
};

static inline const char *scratch_parent_in(const char *tag, bool all)
{
        static char rel[1024];
        char deepest[1024] = "/";
        size_t n = all ? ARRAY_SIZE(oci_hierarchies) : ARRAY_SIZE(hierarchies);
#define H(i) (all ? oci_hierarchies[i].controller : hierarchies[i].controller)
        for (size_t i = 0; i < n; i++) {
                char mp[1024], own[1024];
                if (!hierarchy_mount(H(i), mp, sizeof(mp)))
                        continue;
                cr_assert(proc_cgroup(0, H(i), own, sizeof(own)));
                if (strlen(own) > strlen(deepest))
                        snprintf(deepest, sizeof(deepest), "%s", own);
        }
        for (size_t i = 0; i < n; i++) {
                char mp[1024], own[1024];
                if (!hierarchy_mount(H(i), mp, sizeof(mp)))
                        continue;
                cr_assert(proc_cgroup(0, H(i), own, sizeof(own)));
                size_t len = strlen(own);
                bool prefix =
                        strcmp(own, "/") == 0 || (strncmp(deepest, own, len) == 0 &&
                                                  (deepest[len] == '\0' || deepest[len] == '/'));
                if (!prefix)
                        cr_skip_test("this process's cgroups are not nested in one another");
        }
        snprintf(rel, sizeof(rel), "%s/psrun-test-%d-%s", strcmp(deepest, "/") == 0 ? "" : deepest,
                 getpid(), tag);

        for (size_t i = 0; i < n; i++) {
                char mp[1024];
                if (!hierarchy_mount(H(i), mp, sizeof(mp)))
                        continue;
                /* mkdir -p, remembering only what this test made. */
                char path[PATH_MAX];
                snprintf(path, sizeof(path), "%s%s", mp, rel);
                for (char *p = path + strlen(mp) + 1;; p++) {
                        bool end = *p == '\0';
                        if (*p != '/' && !end)
                                continue;
                        *p = '\0';
                        if (mkdir(path, 0755) == 0) {
                                cr_assert_lt(cgt_n_made, ARRAY_SIZE(cgt_made_dirs));
                                cgt_made_dirs[cgt_n_made++] = strdup(path);
                                /* cpuset children start empty. */
                                if (H(i) && strcmp(H(i), "cpuset") == 0) {
                                        char up[PATH_MAX], v[256];
                                        snprintf(up, sizeof(up), "%s", path);
                                        *strrchr(up, '/') = '\0';
                                        cg_write_str(path, "cpuset.cpus",
                                                     read_file(up, "cpuset.cpus", v, sizeof(v)));
                                        cg_write_str(path, "cpuset.mems",
                                                     read_file(up, "cpuset.mems", v, sizeof(v)));
                                }
                        } else {
                                cr_assert_eq(errno, EEXIST, "mkdir %s: %s", path, strerror(errno));
                        }
                        if (end)
                                break;
                        *p = '/';
                }
        }
#undef H
        return rel;
}

static inline const char *scratch_parent(const char *tag)
{
        return scratch_parent_in(tag, false);
}

/* ---- OCI containers ------------------------------------------------------ */

/* Every OCI test cgroup is named psrun-cgoci-<pid>...: relative paths put
 * it below this test's own cgroup in each hierarchy. */
static inline const char *oci_name(const char *tag)
{
        static char buf[4][128];
        static int next;
        char *b = buf[next++ % 4];
        snprintf(b, sizeof(buf[0]), "psrun-cgoci-%d%s%s", getpid(), *tag ? "-" : "", tag);
        return b;
}

/* Remove psrun-cgoci-<pid>* below our own cgroup in every hierarchy,
 * whatever is in it (frozen or not). */
static inline void oci_cleanup(void)
{
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "psrun-cgoci-%d", getpid());
        for (size_t i = 0; i < ARRAY_SIZE(oci_hierarchies); i++) {
                char mp[1024], own[1024], dir[PATH_MAX];
                if (!hierarchy_mount(oci_hierarchies[i].controller, mp, sizeof(mp)) ||
                    !proc_cgroup(0, oci_hierarchies[i].controller, own, sizeof(own)))
                        continue;
                snprintf(dir, sizeof(dir), "%s%s", mp, strcmp(own, "/") == 0 ? "" : own);
                DIR *d = opendir(dir);
                if (!d)
                        continue;
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (de->d_type != DT_DIR ||
                            strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
                            (de->d_name[strlen(prefix)] != '\0' &&
                             de->d_name[strlen(prefix)] != '-'))
                                continue;
                        char sub[PATH_MAX];
                        snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                        cgt_rm_tree(sub);
                }
                closedir(d);
        }
}

/* Is a directory named prefix* below our own cgroup in any hierarchy? why
 * (may be NULL) then says where. Blind to concurrent tests. */
static inline bool prefixed_dir_below_ours(const char *prefix, char *why, size_t size)
{
        for (size_t i = 0; i < ARRAY_SIZE(oci_hierarchies); i++) {
                char mp[1024], own[1024], dir[PATH_MAX];
                if (!hierarchy_mount(oci_hierarchies[i].controller, mp, sizeof(mp)) ||
                    !proc_cgroup(0, oci_hierarchies[i].controller, own, sizeof(own)))
                        continue;
                snprintf(dir, sizeof(dir), "%s%s", mp, strcmp(own, "/") == 0 ? "" : own);
                DIR *d = opendir(dir);
                if (!d)
                        continue;
                struct dirent *de;
                bool found = false;
                while (!found && (de = readdir(d)))
                        found = strncmp(de->d_name, prefix, strlen(prefix)) == 0;
                closedir(d);
                if (found) {
                        if (why)
                                snprintf(why, size, "%s/%s* left", dir, prefix);
                        return true;
                }
        }
        return false;
}

/* Is anything of ours (psrun-cgoci-<pid>*) left in any hierarchy? */
static inline bool oci_leftovers(char *why, size_t size)
{
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "psrun-cgoci-%d", getpid());
        return prefixed_dir_below_ours(prefix, why, size);
}

/* Does any directory of psrun run's for us (psrun-<our pid>-*) exist below
 * our own cgroups? Unlike test_no_cgroup_leftovers, blind to concurrent
 * tests. */
static inline bool any_of_ours(void)
{
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "psrun-%d-", getpid());
        return prefixed_dir_below_ours(prefix, NULL, 0);
}

/* Directory `rel` (relative to our own cgroup) in a hierarchy, or false
 * when the hierarchy is not mounted. */
static inline bool own_dir(const char *controller, const char *rel, char *out, size_t size)
{
        char mp[1024], own[1024];
        if (!hierarchy_mount(controller, mp, sizeof(mp)) ||
            !proc_cgroup(0, controller, own, sizeof(own)))
                return false;
        snprintf(out, size, "%s%s/%s", mp, strcmp(own, "/") == 0 ? "" : own, rel);
        return true;
}

static inline struct cgroup *oci_create(const char *path, const struct oci_resources *res)
{
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        int r = cgroup_create_at(path, "unused-id", res, &cg, &err);
        cr_assert_eq(r, 0, "cgroup_create_at(%s): %d %s", path, r, err.msg);
        cr_assert_not_null(cg);
        return track(cg);
}

static inline void oci_apply(struct cgroup *cg, const struct oci_resources *res)
{
        psrun_error err = {0};
        int r = cgroup_apply_resources(cg, res, &err);
        cr_assert_eq(r, 0, "cgroup_apply_resources: %d %s", r, err.msg);
}

/* Drop cg from the fini's list and remove it. */
static inline void oci_remove(struct cgroup *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(cgt_tracked); i++)
                if (cgt_tracked[i] == cg)
                        cgt_tracked[i] = NULL;
        psrun_error err = {0};
        cr_assert_eq(cgroup_remove(cg, &err), 0, "cgroup_remove: %s", err.msg);
}

static inline void oci_close(struct cgroup *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(cgt_tracked); i++)
                if (cgt_tracked[i] == cg)
                        cgt_tracked[i] = NULL;
        cgroup_close(cg);
}

/* A file of cg in the hierarchy `name` ("pids", "unified"). */
static inline char *cg_file(struct cgroup *cg, const char *name, const char *file, char *buf,
                            size_t size)
{
        const char *dir = cgroup_path(cg, name);
        cr_assert_not_null(dir, "no %s directory", name);
        return read_file(dir, file, buf, size);
}

/* utime + stime of pid, in clock ticks. */
static inline unsigned long long cpu_ticks(pid_t pid)
{
        char p[64], buf[1024];
        snprintf(p, sizeof(p), "/proc/%d/stat", pid);
        FILE *f = fopen(p, "re");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        unsigned long long ut = 0, st = 0;
        const char *rp = strrchr(buf, ')');
        cr_assert(rp && sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                               &st) == 2);
        return ut + st;
}

static inline void child_spin(int fd, long arg)
{
        report(fd, arg);
        for (volatile unsigned long i = 0;; i++)
                ;
}
