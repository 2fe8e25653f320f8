/* SPDX-License-Identifier: MIT */
/*
 * The cgroup layer against the real kernel, continued: where cgroups go.
 * Parent overrides and bad parents, child cgroups, gc of dead runs, the v2
 * driver and cgroup2's no-internal-processes rule. Same suite as
 * test_cgroup.c, whose init and fini apply here too.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_test.h"

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
                        cr_assert_lt(cgt_n_made, ARRAY_SIZE(cgt_made_dirs));
                        cgt_made_dirs[cgt_n_made++] = strdup(p);
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
        /* A parent in no hierarchy is a mistake, as run says (issue 10). */
        cr_assert_eq(cgroup_gc("/psrun-no-such-parent", &err), -ENOENT, "%s", err.msg);
        cr_assert(strstr(err.msg, "does not exist in any hierarchy"), "%s", err.msg);
        cr_assert_eq(cgroup_gc("bad", &err), -EINVAL);
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
