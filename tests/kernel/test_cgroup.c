/* SPDX-License-Identifier: MIT */
/*
 * The cgroup layer against the real kernel: limits, accounting, kill, gc.
 * Every cgroup is created below the cgroup this test runs in, and the suite's
 * fini removes whatever a failed assertion left behind.
 */
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
#include "lib/testlib.h"
#include "runtime/cgroup-internal.h"
#include "runtime/cgroup.h"

#define MiB (1024ULL * 1024ULL)

/* The kernel's struct clone_args up to `cgroup` (CLONE_ARGS_SIZE_VER2); kept
 * local because <linux/sched.h> collides with <sched.h>. */
struct test_clone_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
                set_tid_size, cgroup;
};
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* Hierarchies a test may look at, by the names cgroup_path() takes. */
static const struct {
        const char *name;
        const char *controller; /* NULL: cgroup2 */
} hierarchies[] = {
        {"memory", "memory"},   {"pids", "pids"},       {"cpu", "cpu"},
        {"cpuacct", "cpuacct"}, {"freezer", "freezer"}, {"unified", NULL},
};

/* Everything a test made, for the suite's fini. Each Criterion test runs in
 * its own process, so globals are per test. */
static struct cgroup *tracked[8];
static pid_t kids[64];
static char *made_dirs[256]; /* creation order; removed in reverse */
static size_t n_made;

static struct cgroup *track(struct cgroup *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(tracked); i++) {
                if (!tracked[i]) {
                        tracked[i] = cg;
                        return cg;
                }
        }
        cr_assert_fail("too many cgroups in one test");
        return cg;
}

static void destroy_tracked(struct cgroup *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(tracked); i++)
                if (tracked[i] == cg)
                        tracked[i] = NULL;
        cgroup_destroy(cg);
}

static void track_kid(pid_t pid)
{
        for (size_t i = 0; i < ARRAY_SIZE(kids); i++) {
                if (!kids[i]) {
                        kids[i] = pid;
                        return;
                }
        }
}

/* Processes that are not our children (grandchildren, orphans): held by
 * pidfd so the fini can kill them after a failed test without risking a
 * reused pid. */
static int stray_pidfds[16];
static size_t n_stray;

static void track_stray(pid_t pid)
{
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd >= 0 && n_stray < ARRAY_SIZE(stray_pidfds))
                stray_pidfds[n_stray++] = fd;
        else if (fd >= 0)
                close(fd);
}

static void sleep_ms(long ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* rmdir a cgroup directory after its child cgroups. */
static void rm_cgroup_tree(const char *dir)
{
        DIR *d = opendir(dir);
        if (d) {
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        char sub[PATH_MAX];
                        snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                        rm_cgroup_tree(sub);
                }
                closedir(d);
        }
        for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
                sleep_ms(10);
}

static void suite_fini(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(tracked); i++) {
                cgroup_destroy(tracked[i]);
                tracked[i] = NULL;
        }
        while (n_stray > 0) {
                int fd = stray_pidfds[--n_stray];
                syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
                close(fd);
        }
        for (size_t i = 0; i < ARRAY_SIZE(kids); i++) {
                if (kids[i] > 0) {
                        kill(kids[i], SIGKILL);
                        waitpid(kids[i], NULL, 0);
                }
        }
        while (n_made > 0) {
                char *d = made_dirs[--n_made];
                rm_cgroup_tree(d);
                free(d);
        }
}

static void suite_init(void)
{
        test_require_root();
        if (access("/sys/fs/cgroup", F_OK) != 0)
                cr_skip_test("no /sys/fs/cgroup");
}

TestSuite(cgroup, .init = suite_init, .fini = suite_fini, .timeout = 60);

/* ---- where things are ---------------------------------------------------- */

/* Mount point of the hierarchy holding `controller` (NULL: cgroup2). */
static bool hierarchy_mount(const char *controller, char *out, size_t size)
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
static bool proc_cgroup(pid_t pid, const char *controller, char *out, size_t size)
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

static bool is_v2(void)
{
        struct statfs sfs;
        return statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

static bool exists(const char *path)
{
        return access(path, F_OK) == 0;
}

static char *read_file(const char *dir, const char *file, char *buf, size_t size)
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

static bool procs_empty(const char *dir)
{
        char buf[4096];
        return read_file(dir, "cgroup.procs", buf, sizeof(buf))[0] == '\0';
}

/* Cgroups made by this test process (psrun-<our pid>-*): those of other
 * psrun runs on the machine are not ours to judge. Give a kill a moment. */
static void assert_no_leftovers(void)
{
        char why[512] = "";
        for (int i = 0; i < 100; i++) {
                if (test_no_cgroup_leftovers_of((int) getpid(), why, sizeof(why)))
                        return;
                sleep_ms(100);
        }
        cr_assert_fail("%s", why);
}

/* Does any directory of ours (psrun-<our pid>-*) exist below our own
 * cgroups? Unlike test_no_cgroup_leftovers, blind to concurrent tests. */
static bool any_of_ours(void)
{
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "psrun-%d-", getpid());
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024], own[1024], dir[PATH_MAX];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)) ||
                    !proc_cgroup(0, hierarchies[i].controller, own, sizeof(own)))
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
                if (found)
                        return true;
        }
        return false;
}

static struct cgroup *create(const char *parent, uint64_t mem, uint64_t pids, double cpus)
{
        struct cgroup_limits limits = {.memory_bytes = mem, .pids_max = pids, .cpus = cpus};
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        int r = cgroup_create(parent, &limits, &cg, &err);
        cr_assert_eq(r, 0, "cgroup_create: %d %s", r, err.msg);
        cr_assert_not_null(cg);
        return track(cg);
}

/*
 * A parent path below this test's cgroup in every hierarchy: the deepest of
 * the test's own cgroups (they are nested in one another, as on this host
 * where memory is /a/b and the rest are /), with a fresh directory below it,
 * created in every mounted hierarchy. Returns the parent path.
 */
static const char *scratch_parent(const char *tag)
{
        static char rel[1024];
        char deepest[1024] = "/";
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024], own[1024];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)))
                        continue;
                cr_assert(proc_cgroup(0, hierarchies[i].controller, own, sizeof(own)));
                if (strlen(own) > strlen(deepest))
                        snprintf(deepest, sizeof(deepest), "%s", own);
        }
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024], own[1024];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)))
                        continue;
                cr_assert(proc_cgroup(0, hierarchies[i].controller, own, sizeof(own)));
                size_t len = strlen(own);
                bool prefix =
                        strcmp(own, "/") == 0 || (strncmp(deepest, own, len) == 0 &&
                                                  (deepest[len] == '\0' || deepest[len] == '/'));
                if (!prefix)
                        cr_skip_test("this process's cgroups are not nested in one another");
        }
        snprintf(rel, sizeof(rel), "%s/psrun-test-%d-%s", strcmp(deepest, "/") == 0 ? "" : deepest,
                 getpid(), tag);

        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)))
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
                                cr_assert_lt(n_made, ARRAY_SIZE(made_dirs));
                                made_dirs[n_made++] = strdup(path);
                        } else {
                                cr_assert_eq(errno, EEXIST, "mkdir %s: %s", path, strerror(errno));
                        }
                        if (end)
                                break;
                        *p = '/';
                }
        }
        return rel;
}

/* ---- children ------------------------------------------------------------ */

/*
 * Children run between a raw clone3 and _exit, so they keep to raw system
 * calls (no malloc, no stdio): a fork handler or lock of the test process
 * must not matter.
 */
static pid_t raw_fork(void)
{
        return (pid_t) syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

static void touch(size_t bytes)
{
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(90);
        for (size_t off = 0; off < bytes; off += 4096)
                p[off] = 1;
}

static void report(int fd, long value)
{
        if (write(fd, &value, sizeof(value)) != sizeof(value))
                _exit(91);
}

/* pid is in cg in every hierarchy cg has a directory in. */
static void assert_member(struct cgroup *cg, pid_t pid)
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
static struct kid spawn(struct cgroup *cg, bool attach_only, child_fn fn, long arg)
{
        int go[2], rep[2];
        cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(rep, O_CLOEXEC), 0);
        struct kid k = {.pid = -1, .report_fd = rep[0]};
        int cgfd = cgroup_clone_fd(cg);
        if (cgfd >= 0 && !attach_only) {
                struct test_clone_args args = {
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

static long read_report(const struct kid *k)
{
        long v;
        ssize_t n = read(k->report_fd, &v, sizeof(v));
        cr_assert_eq(n, (ssize_t) sizeof(v), "child report: %zd", n);
        return v;
}

static int reap(pid_t pid)
{
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        for (size_t i = 0; i < ARRAY_SIZE(kids); i++)
                if (kids[i] == pid)
                        kids[i] = 0;
        return st;
}

/* Gone, or a zombie nobody reaped yet. */
static bool dead(pid_t pid)
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

static void child_wait_forever(int fd, long arg)
{
        report(fd, arg);
        for (;;)
                pause();
}

static void child_touch_and_exit(int fd, long bytes)
{
        touch((size_t) bytes);
        _exit(0);
}

static void child_fork_bomb(int fd, long limit)
{
        long forked = 0;
        for (; forked < limit; forked++) {
                pid_t p = raw_fork();
                if (p < 0) {
                        report(fd, forked);
                        report(fd, errno);
                        for (;;)
                                pause();
                }
                if (p == 0)
                        for (;;)
                                pause();
        }
        report(fd, forked);
        report(fd, 0);
        for (;;)
                pause();
}

static void child_burn(int fd, long msec)
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

static void child_tree(int fd, long arg)
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

static struct cgroup_stats stats_of(struct cgroup *cg)
{
        struct cgroup_stats st;
        psrun_error err = {0};
        cr_assert_eq(cgroup_read_stats(cg, &st, &err), 0, "cgroup_read_stats: %s", err.msg);
        return st;
}

/* ---- tests --------------------------------------------------------------- */

Test(cgroup, driver_matches_host)
{
        const char *name = cgroup_driver_name();
        cr_assert_str_eq(name, is_v2() ? "v2" : "v1");
        /* This development host is hybrid: v1 controllers, cgroup2 at unified/. */
        if (!is_v2())
                cr_assert_str_eq(name, "v1");
}

Test(cgroup, create_destroy_leaves_nothing)
{
        struct cgroup *cg = create(NULL, 64 * MiB, 32, 1);
        static char paths[8][PATH_MAX];
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                const char *p = cgroup_path(cg, hierarchies[i].name);
                if (!p)
                        continue;
                cr_assert(exists(p), "%s missing", p);
                cr_assert(strstr(p, "/psrun-"), "%s", p);
                snprintf(paths[n++], PATH_MAX, "%s", p);
        }
        cr_assert_not_null(cgroup_path(cg, "memory"));
        cr_assert_not_null(cgroup_path(cg, "pids"));
        cr_assert_not_null(cgroup_path(cg, "cpu"));
        cr_assert_null(cgroup_path(cg, "no-such-controller"));
        if (!is_v2() && hierarchy_mount(NULL, (char[PATH_MAX]){0}, PATH_MAX))
                cr_assert_geq(cgroup_clone_fd(cg), 0);

        /* The name is psrun-<our pid>-<n>, and each hierarchy nests below our
         * own cgroup in that hierarchy. */
        char want[64];
        snprintf(want, sizeof(want), "/psrun-%d-", getpid());
        const char *mem = cgroup_path(cg, "memory");
        cr_assert(strstr(mem, want), "%s", mem);
        char own[1024];
        cr_assert(proc_cgroup(0, is_v2() ? NULL : "memory", own, sizeof(own)));
        if (strcmp(own, "/") != 0)
                cr_assert(strstr(mem, own), "%s not below %s", mem, own);

        destroy_tracked(cg);
        for (size_t i = 0; i < n; i++)
                cr_assert(!exists(paths[i]), "%s still exists", paths[i]);
        cgroup_destroy(NULL);
        assert_no_leftovers();
}

Test(cgroup, names_are_unique)
{
        struct cgroup *a = create(NULL, 0, 0, 0);
        struct cgroup *b = create(NULL, 0, 0, 0);
        cr_assert_str_neq(cgroup_path(a, "pids"), cgroup_path(b, "pids"));
}

Test(cgroup, limits_are_written)
{
        char buf[256];
        struct cgroup *cg = create(NULL, 32 * MiB, 17, 0.5);
        struct cgroup *tiny = create(NULL, 0, 0, 0.001);
        const char *mem = cgroup_path(cg, "memory");
        const char *pids = cgroup_path(cg, "pids");
        const char *cpu = cgroup_path(cg, "cpu");
        cr_assert_str_eq(read_file(pids, "pids.max", buf, sizeof(buf)), "17");
        if (is_v2()) {
                cr_assert_str_eq(read_file(mem, "memory.max", buf, sizeof(buf)), "33554432");
                char p[PATH_MAX];
                snprintf(p, sizeof(p), "%s/memory.swap.max", mem);
                if (exists(p))
                        cr_assert_str_eq(read_file(mem, "memory.swap.max", buf, sizeof(buf)), "0");
                cr_assert_str_eq(read_file(cpu, "cpu.max", buf, sizeof(buf)), "50000 100000");
                cr_assert_str_eq(read_file(cgroup_path(tiny, "cpu"), "cpu.max", buf, sizeof(buf)),
                                 "1000 100000");
                return;
        }
        cr_assert_str_eq(read_file(mem, "memory.limit_in_bytes", buf, sizeof(buf)), "33554432");
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", mem);
        if (exists(p))
                cr_assert_str_eq(read_file(mem, "memory.memsw.limit_in_bytes", buf, sizeof(buf)),
                                 "33554432");
        cr_assert_str_eq(read_file(mem, "memory.swappiness", buf, sizeof(buf)), "0");
        cr_assert_str_eq(read_file(cpu, "cpu.cfs_period_us", buf, sizeof(buf)), "100000");
        cr_assert_str_eq(read_file(cpu, "cpu.cfs_quota_us", buf, sizeof(buf)), "50000");
        cr_assert_str_eq(read_file(cgroup_path(tiny, "cpu"), "cpu.cfs_quota_us", buf, sizeof(buf)),
                         "1000");
        /* No limit asked: none written. */
        cr_assert_str_eq(read_file(cgroup_path(tiny, "pids"), "pids.max", buf, sizeof(buf)), "max");
}

Test(cgroup, bad_limits_rejected)
{
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        const double bad[] = {-1, 1e9, __builtin_nan(""), __builtin_inf()};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct cgroup_limits limits = {.cpus = bad[i]};
                cr_assert_eq(cgroup_create(NULL, &limits, &cg, &err), -EINVAL);
                cr_assert_null(cg);
                cr_assert(strstr(err.msg, "cpu limit"), "%s", err.msg);
        }
        cr_assert(!any_of_ours());
}

Test(cgroup, clone_into_cgroup_then_attach)
{
        struct cgroup *cg = create(NULL, 64 * MiB, 16, 0);
        if (cgroup_clone_fd(cg) < 0)
                cr_skip_test("no cgroup2 directory for CLONE_INTO_CGROUP");
        struct kid k = spawn(cg, false, child_wait_forever, 7);
        cr_assert_eq(read_report(&k), 7);
        cr_assert(k.cloned_into);
        assert_member(cg, k.pid);
        /* Attaching again is harmless. */
        psrun_error err = {0};
        cr_assert_eq(cgroup_attach(cg, k.pid, &err), 0, "%s", err.msg);
        cr_assert_eq(cgroup_attach(cg, 999999999, &err), -ESRCH);
}

Test(cgroup, oom_is_counted)
{
        struct cgroup *cg = create(NULL, 16 * MiB, 0, 0);
        struct kid k = spawn(cg, false, child_touch_and_exit, (long) (64 * MiB));
        int st = reap(k.pid);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                  "child touching 64 MiB under a 16 MiB limit was not OOM-killed (status %#x)", st);
        struct cgroup_stats s = stats_of(cg);
        cr_assert_geq(s.oom_kills, 1);
        cr_assert_leq(s.memory_peak_bytes, 17 * MiB, "peak %llu over the limit",
                      (unsigned long long) s.memory_peak_bytes);
}

Test(cgroup, oom_is_counted_after_plain_attach)
{
        struct cgroup *cg = create(NULL, 16 * MiB, 0, 0);
        struct kid k = spawn(cg, true, child_touch_and_exit, (long) (64 * MiB));
        int st = reap(k.pid);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
        cr_assert_geq(stats_of(cg).oom_kills, 1);
}

Test(cgroup, pids_limit_refuses_fork)
{
        struct cgroup *cg = create(NULL, 0, 8, 0);
        struct kid k = spawn(cg, false, child_fork_bomb, 100);
        long forked = read_report(&k);
        long err = read_report(&k);
        cr_assert_eq(err, EAGAIN, "fork past pids.max failed with %ld, want EAGAIN", err);
        /* The child itself is one of the 8. */
        cr_assert_eq(forked, 7);
        cr_assert_geq(stats_of(cg).pids_max_hits, 1);
        psrun_error e = {0};
        cr_assert_eq(cgroup_kill(cg, &e), 0, "%s", e.msg);
        cr_assert(procs_empty(cgroup_path(cg, "pids")));
}

Test(cgroup, cpu_time_grows)
{
        struct cgroup *cg = create(NULL, 0, 0, 1);
        uint64_t before = stats_of(cg).cpu_usec;
        struct kid k = spawn(cg, false, child_burn, 300);
        int st = reap(k.pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
        uint64_t after = stats_of(cg).cpu_usec;
        cr_assert_geq(after, before + 250000, "cpu_usec %llu -> %llu for 300 ms of CPU",
                      (unsigned long long) before, (unsigned long long) after);
}

Test(cgroup, cpu_time_from_cpuacct_without_cgroup2)
{
        if (is_v2())
                cr_skip_test("v1 only");
        cgroup_test_set_ignore_unified(true);
        struct cgroup *cg = create(NULL, 0, 0, 0);
        cr_assert_eq(cgroup_clone_fd(cg), -1);
        cr_assert_null(cgroup_path(cg, "unified"));
        struct kid k = spawn(cg, false, child_burn, 200);
        reap(k.pid);
        cr_assert_geq(stats_of(cg).cpu_usec, 150000);
}

Test(cgroup, peak_memory_covers_what_was_touched)
{
        struct cgroup *cg = create(NULL, 256 * MiB, 0, 0);
        struct kid k = spawn(cg, false, child_touch_and_exit, (long) (32 * MiB));
        int st = reap(k.pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
        /* Read after the child is gone: a peak, not current usage. */
        struct cgroup_stats s = stats_of(cg);
        cr_assert_geq(s.memory_peak_bytes, 32 * MiB, "peak %llu",
                      (unsigned long long) s.memory_peak_bytes);
        cr_assert_eq(s.oom_kills, 0);
}

static void kill_tree_and_check(struct cgroup *cg)
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
        /* Check before waitpid, which would block on a survivor. */
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

Test(cgroup, kill_takes_the_whole_tree)
{
        kill_tree_and_check(create(NULL, 64 * MiB, 32, 0));
}

Test(cgroup, kill_without_cgroup2_uses_freezer_and_signals)
{
        if (is_v2())
                cr_skip_test("v1 only");
        cgroup_test_set_ignore_unified(true);
        struct cgroup *cg = create(NULL, 64 * MiB, 32, 0);
        cr_assert_eq(cgroup_clone_fd(cg), -1);
        char mp[PATH_MAX];
        if (hierarchy_mount("freezer", mp, sizeof(mp)))
                cr_assert_not_null(cgroup_path(cg, "freezer"));
        kill_tree_and_check(cg);
        const char *freezer = cgroup_path(cg, "freezer");
        char buf[64];
        if (freezer)
                cr_assert_str_eq(read_file(freezer, "freezer.state", buf, sizeof(buf)), "THAWED");
        destroy_tracked(cg);
        assert_no_leftovers();
}

Test(cgroup, destroy_kills_what_is_left)
{
        struct cgroup *cg = create(NULL, 64 * MiB, 32, 0);
        struct kid k = spawn(cg, false, child_tree, 0);
        for (int i = 0; i < 4; i++)
                track_stray((pid_t) (read_report(&k) / 10));
        const char *p = cgroup_path(cg, "pids");
        char saved[PATH_MAX];
        snprintf(saved, sizeof(saved), "%s", p);
        destroy_tracked(cg);
        cr_assert(!exists(saved));
        cr_assert(dead(k.pid), "child %d survived cgroup_destroy", k.pid);
        int st = reap(k.pid);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        assert_no_leftovers();
}

Test(cgroup, parent_override)
{
        const char *parent = scratch_parent("parent");
        struct cgroup *cg = create(parent, 32 * MiB, 16, 0);
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                const char *p = cgroup_path(cg, hierarchies[i].name);
                if (!p)
                        continue;
                cr_assert(strstr(p, parent), "%s is not below %s", p, parent);
        }
        struct kid k = spawn(cg, false, child_wait_forever, 1);
        read_report(&k);
        char where[1024];
        cr_assert(proc_cgroup(k.pid, is_v2() ? NULL : "memory", where, sizeof(where)));
        cr_assert_eq(strncmp(where, parent, strlen(parent)), 0, "child in %s", where);
        destroy_tracked(cg);
        reap(k.pid);
}

Test(cgroup, failed_limit_removes_everything)
{
        /* The kernel refuses a pids.max past PID_MAX_LIMIT (2^22), and only
         * after the directories were made. */
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        struct cgroup_limits limits = {.memory_bytes = 64 * MiB, .pids_max = 10000000, .cpus = 1};
        int r = cgroup_create(NULL, &limits, &cg, &err);
        cr_assert_eq(r, -EINVAL, "%d %s", r, err.msg);
        cr_assert_null(cg);
        cr_assert(strstr(err.msg, "pids.max"), "%s", err.msg);
        cr_assert(!any_of_ours(), "a failed cgroup_create left directories behind");
        assert_no_leftovers();
}

Test(cgroup, bad_parent_is_a_clear_error)
{
        static const struct {
                const char *parent;
                int err;
        } cases[] = {
                {"relative/path", EINVAL},
                {"/a/../b", EINVAL},
                {"/a//b", EINVAL},
                {"/trailing/", EINVAL},
                {"/psrun-no-such-parent", ENOENT},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct cgroup *cg = NULL;
                psrun_error err = {0};
                struct cgroup_limits limits = {.memory_bytes = 16 * MiB, .pids_max = 8};
                int r = cgroup_create(cases[i].parent, &limits, &cg, &err);
                cr_assert_eq(r, -cases[i].err, "%s: %d (%s)", cases[i].parent, r, err.msg);
                cr_assert_null(cg);
                cr_assert(strstr(err.msg, cases[i].parent), "message doesn't name %s: %s",
                          cases[i].parent, err.msg);
                cr_assert_eq(strncmp(err.msg, "cgroup: ", 8), 0, "%s", err.msg);
        }
        cr_assert(!any_of_ours());
        assert_no_leftovers();
}

/* mkdir name below the scratch parent in every mounted hierarchy. */
static void make_everywhere(const char *parent, const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024], p[PATH_MAX];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)))
                        continue;
                snprintf(p, sizeof(p), "%s%s/%s", mp, parent, name);
                if (mkdir(p, 0755) == 0) {
                        cr_assert_lt(n_made, ARRAY_SIZE(made_dirs));
                        made_dirs[n_made++] = strdup(p);
                } else {
                        cr_assert_eq(errno, EEXIST, "mkdir %s: %s", p, strerror(errno));
                }
        }
}

static bool exists_anywhere(const char *parent, const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024], p[PATH_MAX];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)))
                        continue;
                snprintf(p, sizeof(p), "%s%s/%s", mp, parent, name);
                if (exists(p))
                        return true;
        }
        return false;
}

Test(cgroup, gc_removes_only_dead_runs)
{
        const char *parent = scratch_parent("gc");
        char parent_copy[1024];
        snprintf(parent_copy, sizeof(parent_copy), "%s", parent);
        parent = parent_copy;

        /* A pid that no longer exists. */
        pid_t gone = raw_fork();
        if (gone == 0)
                _exit(0);
        cr_assert_gt(gone, 0);
        waitpid(gone, NULL, 0);
        cr_assert(kill(gone, 0) < 0 && errno == ESRCH);

        char dead_name[64], live_name[64];
        snprintf(dead_name, sizeof(dead_name), "psrun-%d-0", gone);
        snprintf(live_name, sizeof(live_name), "psrun-%d-77", getpid());
        const char *others[] = {"not-psrun", "psrun-abc-1", "psrun-1-", "xpsrun-1-1",
                                "psrun-1-1-1"};
        char dead_nested[128], bogus[64];
        snprintf(dead_nested, sizeof(dead_nested), "%s/inner", dead_name);
        snprintf(bogus, sizeof(bogus), "psrun-%d-0x", gone);
        make_everywhere(parent, dead_name);
        make_everywhere(parent, dead_nested);
        make_everywhere(parent, live_name);
        make_everywhere(parent, bogus);
        for (size_t i = 0; i < ARRAY_SIZE(others); i++)
                make_everywhere(parent, others[i]);

        /* A process left running in the dead run's cgroup (nested one). */
        pid_t sleeper = raw_fork();
        if (sleeper == 0)
                for (;;)
                        pause();
        track_kid(sleeper);
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                char mp[1024], p[PATH_MAX];
                if (!hierarchy_mount(hierarchies[i].controller, mp, sizeof(mp)))
                        continue;
                snprintf(p, sizeof(p), "%s%s/%s", mp, parent, dead_nested);
                int wr = cg_write(p, "cgroup.procs", "%d", sleeper);
                cr_assert_eq(wr, 0, "attach %d to %s: %s", (int) sleeper, p, strerror(-wr));
        }

        psrun_error err = {0};
        int removed = cgroup_gc(parent, &err);
        cr_assert_eq(removed, 1, "cgroup_gc: %d (%s)", removed, err.msg);
        cr_assert(!exists_anywhere(parent, dead_name), "%s survived gc", dead_name);
        int st = reap(sleeper);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
        cr_assert(exists_anywhere(parent, live_name));
        cr_assert(exists_anywhere(parent, bogus));
        for (size_t i = 0; i < ARRAY_SIZE(others); i++)
                cr_assert(exists_anywhere(parent, others[i]), "gc removed %s", others[i]);
        /* Nothing more to do the second time. */
        cr_assert_eq(cgroup_gc(parent, &err), 0, "%s", err.msg);
}

Test(cgroup, gc_of_own_cgroup_leaves_live_runs)
{
        struct cgroup *cg = create(NULL, 0, 8, 0);
        psrun_error err = {0};
        cr_assert_geq(cgroup_gc(NULL, &err), 0, "%s", err.msg);
        cr_assert(exists(cgroup_path(cg, "pids")));
        cr_assert_eq(cgroup_gc("/psrun-no-such-parent", &err), 0, "%s", err.msg);
        cr_assert_eq(cgroup_gc("bad", &err), -EINVAL);
}

Test(cgroup, stats_of_an_unused_cgroup)
{
        struct cgroup *cg = create(NULL, 32 * MiB, 8, 0);
        struct cgroup_stats s = stats_of(cg);
        cr_assert_eq(s.oom_kills, 0);
        cr_assert_eq(s.pids_max_hits, 0);
        cr_assert_eq(s.cpu_usec, 0);
}

/* The v2 driver, forced onto this host's cgroup2 mount: on a hybrid host that
 * mount owns no controllers, which still covers membership, CLONE_INTO_CGROUP,
 * cgroup.kill, cpu.stat and removal. */
Test(cgroup, v2_driver_on_the_cgroup2_mount)
{
        char mp[PATH_MAX];
        if (!hierarchy_mount(NULL, mp, sizeof(mp)))
                cr_skip_test("no cgroup2 mount");
        cgroup_test_set_driver("v2");
        cr_assert_str_eq(cgroup_driver_name(), "v2");
        struct cgroup *cg = create(NULL, 0, 0, 0);
        const char *unified = cgroup_path(cg, "unified");
        cr_assert_not_null(unified);
        cr_assert_eq(strncmp(unified, mp, strlen(mp)), 0, "%s", unified);
        cr_assert_str_eq(cgroup_path(cg, "memory"), unified);
        cr_assert_geq(cgroup_clone_fd(cg), 0);

        struct kid k = spawn(cg, false, child_burn, 200);
        int st = reap(k.pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
        cr_assert_geq(stats_of(cg).cpu_usec, 150000);

        kill_tree_and_check(cg);
        char saved[PATH_MAX];
        snprintf(saved, sizeof(saved), "%s", unified);
        destroy_tracked(cg);
        cr_assert(!exists(saved));
        assert_no_leftovers();
}

Test(cgroup, v2_missing_controller_fails_closed)
{
        char mp[PATH_MAX], own[1024], dir[PATH_MAX], controllers[512];
        if (!hierarchy_mount(NULL, mp, sizeof(mp)))
                cr_skip_test("no cgroup2 mount");
        cr_assert(proc_cgroup(0, NULL, own, sizeof(own)));
        snprintf(dir, sizeof(dir), "%s%s", mp, strcmp(own, "/") == 0 ? "" : own);
        read_file(dir, "cgroup.controllers", controllers, sizeof(controllers));
        if (strstr(controllers, "memory") || strstr(controllers, "pids") ||
            strstr(controllers, "cpu"))
                cr_skip_test("this cgroup2 mount has controllers (%s)", controllers);
        cgroup_test_set_driver("v2");

        static const struct {
                struct cgroup_limits limits;
                const char *controller;
        } cases[] = {
                {{.memory_bytes = 16 * MiB}, "memory"},
                {{.pids_max = 8}, "pids"},
                {{.cpus = 1}, "cpu"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct cgroup *cg = NULL;
                psrun_error err = {0};
                int r = cgroup_create(NULL, &cases[i].limits, &cg, &err);
                cr_assert_eq(r, -EOPNOTSUPP, "%s: %d %s", cases[i].controller, r, err.msg);
                cr_assert_null(cg);
                char want[64];
                snprintf(want, sizeof(want), "cgroup: %s controller not available",
                         cases[i].controller);
                cr_assert(strstr(err.msg, want), "%s", err.msg);
        }
        cr_assert(!any_of_ours());
}

Test(cgroup, child_cgroup_nests_in_every_hierarchy)
{
        struct cgroup *parent = create(NULL, 64 * MiB, 32, 1);
        struct cgroup *child = NULL;
        psrun_error err = {0};
        struct cgroup_limits limits = {.memory_bytes = 32 * MiB, .pids_max = 4};
        cr_assert_eq(cgroup_create_child(parent, &limits, &child, &err), 0, "%s", err.msg);
        track(child);
        for (size_t i = 0; i < ARRAY_SIZE(hierarchies); i++) {
                const char *pp = cgroup_path(parent, hierarchies[i].name);
                const char *cp = cgroup_path(child, hierarchies[i].name);
                if (!pp) {
                        cr_assert_null(cp);
                        continue;
                }
                cr_assert_not_null(cp, "%s", hierarchies[i].name);
                cr_assert_eq(strncmp(cp, pp, strlen(pp)), 0, "%s not below %s", cp, pp);
                cr_assert_eq(strncmp(cp + strlen(pp), "/psrun-", 7), 0, "%s", cp);
        }
        char buf[64];
        cr_assert_str_eq(read_file(cgroup_path(child, "pids"), "pids.max", buf, sizeof(buf)), "4");

        /* The parent's kill reaches processes in the child. */
        struct kid k = spawn(child, false, child_wait_forever, 3);
        cr_assert_eq(read_report(&k), 3);
        cr_assert_eq(cgroup_kill(parent, &err), 0, "%s", err.msg);
        cr_assert(dead(k.pid), "process in the child cgroup survived the parent's kill");
        reap(k.pid);

        /* Destroying the parent first removes the child's directories too;
         * the child's own destroy then finds nothing left to do. */
        char saved[PATH_MAX];
        snprintf(saved, sizeof(saved), "%s", cgroup_path(child, "pids"));
        destroy_tracked(parent);
        cr_assert(!exists(saved));
        destroy_tracked(child);
        assert_no_leftovers();
}

Test(cgroup, child_needs_the_parents_controllers)
{
        if (is_v2())
                cr_skip_test("v1: a child has only the hierarchies of its parent");
        struct cgroup *parent = create(NULL, 64 * MiB, 32, 0);
        cr_assert_null(cgroup_path(parent, "cpu"));
        struct cgroup *child = NULL;
        psrun_error err = {0};
        struct cgroup_limits limits = {.cpus = 1};
        cr_assert_eq(cgroup_create_child(parent, &limits, &child, &err), -EOPNOTSUPP, "%s",
                     err.msg);
        cr_assert_null(child);
        cr_assert(strstr(err.msg, "cgroup: cpu controller not available"), "%s", err.msg);
        /* Nothing of the failed child is left below the parent. */
        DIR *d = opendir(cgroup_path(parent, "pids"));
        cr_assert_not_null(d);
        struct dirent *de;
        while ((de = readdir(d)))
                cr_assert(de->d_type != DT_DIR || de->d_name[0] == '.', "left %s", de->d_name);
        closedir(d);
}

/* Write our own pid into dir/cgroup.procs. */
static int join(const char *dir)
{
        char path[PATH_MAX], pid[32];
        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, pid, strlen(pid));
        int e = errno;
        close(fd);
        return n < 0 ? -e : 0;
}

Test(cgroup, v2_busy_own_cgroup_nests_below_an_ancestor)
{
        if (strcmp(cgroup_driver_name(), "v2") != 0)
                cr_skip_test("v2 only: the no-internal-processes rule is cgroup2's");

        /* A cgroup with a process of its own, like a login shell's scope. */
        char own[PATH_MAX], busy[PATH_MAX];
        FILE *f = fopen("/proc/self/cgroup", "re");
        cr_assert_not_null(f);
        char line[PATH_MAX] = "";
        cr_assert_not_null(fgets(line, sizeof(line), f));
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
        cr_assert(strncmp(line, "0::", 3) == 0, "%s", line);
        snprintf(own, sizeof(own), "/sys/fs/cgroup%s", strcmp(line + 3, "/") ? line + 3 : "");
        snprintf(busy, sizeof(busy), "%s/psrun-test-busy-%d", own, (int) getpid());
        cr_assert_eq(mkdir(busy, 0755), 0, "%s: %s", busy, strerror(errno));

        pid_t sleeper = fork();
        if (sleeper == 0) {
                if (join(busy) < 0)
                        _exit(1);
                pause();
                _exit(0);
        }
        for (int i = 0; i < 200; i++) {
                char procs[64] = "";
                char path[PATH_MAX];
                snprintf(path, sizeof(path), "%s/cgroup.procs", busy);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, procs, sizeof(procs) - 1) : -1;
                if (fd >= 0)
                        close(fd);
                if (n > 0)
                        break;
                usleep(10000);
        }

        pid_t tester = fork();
        if (tester == 0) {
                if (join(busy) < 0)
                        _exit(2);
                struct cgroup_limits limits = {.memory_bytes = 64 << 20, .pids_max = 16};
                struct cgroup *cg = NULL;
                psrun_error err = {0};
                if (cgroup_create(NULL, &limits, &cg, &err) < 0) {
                        fprintf(stderr, "create: %s\n", err.msg);
                        _exit(3);
                }
                /* Not below the busy cgroup, but below its parent. */
                const char *path = cgroup_path(cg, "unified");
                int ok = path && strncmp(path, busy, strlen(busy)) != 0 &&
                         strncmp(path, own, strlen(own)) == 0;
                char max[64] = "";
                char file[PATH_MAX];
                snprintf(file, sizeof(file), "%s/memory.max", path ? path : "");
                int fd = open(file, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        if (read(fd, max, sizeof(max) - 1) < 0)
                                max[0] = '\0';
                        close(fd);
                }
                ok = ok && strcmp(max, "67108864\n") == 0;
                cgroup_destroy(cg);
                _exit(ok ? 0 : 4);
        }
        int st = 0;
        waitpid(tester, &st, 0);
        kill(sleeper, SIGKILL);
        waitpid(sleeper, NULL, 0);
        for (int i = 0; i < 100 && rmdir(busy) < 0 && errno == EBUSY; i++)
                usleep(10000);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "tester status %d", st);
}
