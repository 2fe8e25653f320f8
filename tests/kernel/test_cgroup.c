/* SPDX-License-Identifier: MIT */
/*
 * The cgroup layer against the real kernel: create, limits, accounting, kill.
 * Parents, nesting, gc and the v2 driver are in test_cgroup_tree.c; the
 * helpers in cgroup_test.h.
 * Every cgroup is created below the cgroup this test runs in, and the suite's
 * fini removes whatever a failed assertion left behind.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_test.h"

/* The tracking state cgroup_test.h declares. */
struct cgroup *cgt_tracked[8];
pid_t cgt_kids[64];
char *cgt_made_dirs[256];
size_t cgt_n_made;
int cgt_stray_pidfds[16];
size_t cgt_n_stray;

static void suite_fini(void)
{
        cgt_cleanup();
}

static void suite_init(void)
{
        test_require_root();
        if (access("/sys/fs/cgroup", F_OK) != 0)
                cr_skip_test("no /sys/fs/cgroup");
}

TestSuite(cgroup, .init = suite_init, .fini = suite_fini, .timeout = 60);

/* ---- children of the limit tests --------------------------------------- */

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

Test(cgroup, stats_of_an_unused_cgroup)
{
        struct cgroup *cg = create(NULL, 32 * MiB, 8, 0);
        struct cgroup_stats s = stats_of(cg);
        cr_assert_eq(s.oom_kills, 0);
        cr_assert_eq(s.pids_max_hits, 0);
        cr_assert_eq(s.cpu_usec, 0);
}

/* What a session's file writer checks its room against: the limit the
 * cgroup was given and a usage that reads (the charging itself is
 * tests/session's files::written_pages_charged_to_the_session). */
Test(cgroup, memory_fds_read_the_limit_and_usage)
{
        struct cgroup *cg = create(NULL, 64 * MiB, 0, 0);
        int usage_fd = -1, limit_fd = -1;
        cr_assert_eq(cgroup_memory_fds(cg, &usage_fd, &limit_fd), 0);
        uint64_t limit = 0, usage = UINT64_MAX;
        cr_assert_eq(cgroup_read_fd_u64(limit_fd, &limit), 0);
        cr_expect_eq(limit, 64 * MiB);
        cr_assert_eq(cgroup_read_fd_u64(usage_fd, &usage), 0);
        cr_expect_lt(usage, 64 * MiB);
        close(usage_fd);
        close(limit_fd);
}
