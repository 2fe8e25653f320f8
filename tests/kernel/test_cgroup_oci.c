/* SPDX-License-Identifier: MIT */
/*
 * Cgroups of OCI containers against the real kernel: create at a
 * cgroupsPath, the path list and reopening it, EBUSY and adoption, removal,
 * freezing, listing pids, stats. Resources are in test_cgroup_oci_res.c
 * (same suite). Every cgroup is named psrun-cgoci-<pid>... below this
 * test's own cgroup, and the suite's fini removes whatever is left (thawed
 * and killed first).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_test.h"

/* The cgroup2 controllers our own cgroup handed down before the test: a
 * create enables what is available, which on this cgroup is left as found. */
static char own_subtree[512];

static void own_unified(char *dir, size_t size)
{
        char mp[1024], own[1024];
        dir[0] = '\0';
        if (hierarchy_mount(NULL, mp, sizeof(mp)) && proc_cgroup(0, NULL, own, sizeof(own)))
                snprintf(dir, size, "%s%s", mp, strcmp(own, "/") == 0 ? "" : own);
}

static void oci_init(void)
{
        test_require_root();
        if (access("/sys/fs/cgroup", F_OK) != 0)
                cr_skip_test("no /sys/fs/cgroup");
        char dir[PATH_MAX];
        own_unified(dir, sizeof(dir));
        if (dir[0] && cg_read(dir, "cgroup.subtree_control", own_subtree, sizeof(own_subtree)) < 0)
                own_subtree[0] = '\0';
}

static void oci_fini(void)
{
        cgroup_test_set_driver(NULL);
        cgt_cleanup();
        oci_cleanup();
        char dir[PATH_MAX], now[512];
        own_unified(dir, sizeof(dir));
        if (!dir[0] || cg_read(dir, "cgroup.subtree_control", now, sizeof(now)) < 0)
                return;
        /* Give back what the test enabled (fails harmlessly while another
         * test still uses it). */
        for (char *save = NULL, *w = strtok_r(now, " \n", &save); w;
             w = strtok_r(NULL, " \n", &save)) {
                char padded[600], word[80];
                snprintf(padded, sizeof(padded), " %s ", own_subtree);
                for (char *c = padded; *c; c++)
                        if (*c == '\n')
                                *c = ' ';
                snprintf(word, sizeof(word), " %s ", w);
                if (!strstr(padded, word))
                        cg_write(dir, "cgroup.subtree_control", "-%s", w);
        }
}

TestSuite(cgroup_oci, .init = oci_init, .fini = oci_fini, .timeout = 60);

/* The hierarchies an OCI cgroup must have a directory in, on this host. */
static size_t expect_dirs(struct cgroup *cg, const char *rel)
{
        bool v2 = strcmp(cgroup_driver_name(), "v2") == 0;
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(oci_hierarchies); i++) {
                const char *ctrl = oci_hierarchies[i].controller;
                char want[PATH_MAX];
                if ((v2 && ctrl) || !own_dir(ctrl, rel, want, sizeof(want)))
                        continue;
                const char *p = cgroup_path(cg, oci_hierarchies[i].name);
                cr_assert_not_null(p, "no %s directory", oci_hierarchies[i].name);
                cr_assert_str_eq(p, want);
                cr_assert(exists(p), "%s missing", p);
                n++;
        }
        return n;
}

Test(cgroup_oci, relative_path_makes_every_hierarchy_and_parents)
{
        char rel[256], parent[PATH_MAX];
        snprintf(rel, sizeof(rel), "%s/a/b", oci_name(""));
        struct oci_pids pids = {.limit = {true, 20}};
        struct oci_memory mem = {.limit = {true, 64 * MiB}};
        struct oci_resources res = {.pids = &pids, .memory = &mem};
        struct cgroup *cg = oci_create(rel, &res);
        cr_assert_geq(expect_dirs(cg, rel), 1);
        char buf[256];
        cr_assert_str_eq(cg_file(cg, "pids", "pids.max", buf, sizeof(buf)), "20");
        bool v2 = strcmp(cgroup_driver_name(), "v2") == 0;
        cr_assert_str_eq(cg_file(cg, "memory", v2 ? "memory.max" : "memory.limit_in_bytes", buf,
                                 sizeof(buf)),
                         "67108864");
        if (!v2 && cgroup_path(cg, "cpuset"))
                cr_assert_neq(cg_file(cg, "cpuset", "cpuset.cpus", buf, sizeof(buf))[0], '\0',
                              "a new cpuset cgroup must get its parent's cpus");
        /* Remove takes the leaf only: the parents create made may be shared
         * by other containers. */
        char leaf[PATH_MAX];
        snprintf(leaf, sizeof(leaf), "%s", cgroup_path(cg, "pids"));
        oci_remove(cg);
        cr_assert(!exists(leaf), "%s survived", leaf);
        snprintf(rel, sizeof(rel), "%s/a", oci_name(""));
        cr_assert(own_dir(v2 ? NULL : "pids", rel, parent, sizeof(parent)) && exists(parent));
}

Test(cgroup_oci, no_path_means_the_id_below_our_own_cgroup)
{
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        const char *id = oci_name("id");
        cr_assert_eq(cgroup_create_at(NULL, id, NULL, &cg, &err), 0, "%s", err.msg);
        track(cg);
        cr_assert_geq(expect_dirs(cg, id), 1);
        oci_remove(cg);
        char why[512];
        cr_assert(!oci_leftovers(why, sizeof(why)), "%s", why);
}

Test(cgroup_oci, absolute_path_is_taken_from_each_root)
{
        const char *parent = scratch_parent_in("oci-abs", true);
        char path[1024];
        snprintf(path, sizeof(path), "%s/c", parent);
        struct cgroup *cg = oci_create(path, NULL);
        char **paths = NULL;
        psrun_error err = {0};
        cr_assert_eq(cgroup_paths(cg, &paths, &err), 0, "%s", err.msg);
        size_t n = 0;
        for (char **p = paths; *p; p++, n++) {
                const char *rel = strncmp(*p, "0::", 3) == 0 ? *p + 2 : strchr(*p, ':');
                cr_assert_not_null(rel, "%s", *p);
                cr_assert_str_eq(rel + 1, path, "%s", *p);
        }
        cr_assert_geq(n, 1);
        if (strcmp(cgroup_driver_name(), "v2") == 0)
                cr_assert_eq(n, 1, "v2: one line, 0::%s", path);
        strv_free(paths);
        oci_remove(cg);
}

Test(cgroup_oci, paths_round_trip_through_open)
{
        struct cgroup *cg = oci_create(oci_name("rt"), NULL);
        char **paths = NULL;
        psrun_error err = {0};
        cr_assert_eq(cgroup_paths(cg, &paths, &err), 0, "%s", err.msg);
        struct cgroup *again = NULL;
        cr_assert_eq(cgroup_open(paths, &again, &err), 0, "%s", err.msg);
        track(again);
        for (size_t i = 0; i < ARRAY_SIZE(oci_hierarchies); i++) {
                const char *a = cgroup_path(cg, oci_hierarchies[i].name);
                const char *b = cgroup_path(again, oci_hierarchies[i].name);
                cr_assert((!a && !b) || (a && b && strcmp(a, b) == 0), "%s: %s vs %s",
                          oci_hierarchies[i].name, a ? a : "-", b ? b : "-");
        }
        /* An exec joins the reopened cgroup the way create's init did. */
        cr_assert_eq(cgroup_clone_fd(again) >= 0, cgroup_clone_fd(cg) >= 0);
        struct kid k = spawn(again, false, child_wait_forever, 7);
        cr_assert_eq(read_report(&k), 7);
        pid_t *pids = NULL;
        size_t n = 0;
        cr_assert_eq(cgroup_pids(cg, &pids, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 1);
        cr_assert_eq(pids[0], k.pid);
        free(pids);
        /* Closing leaves the process and the directories alone. */
        oci_close(again);
        cr_assert(!dead(k.pid));
        cr_assert(exists(cgroup_path(cg, "unified") ? cgroup_path(cg, "unified")
                                                    : cgroup_path(cg, "memory")));
        oci_remove(cg);
        cr_assert(dead(k.pid));
        reap(k.pid);
        /* Gone: nothing left to open. */
        cr_assert_eq(cgroup_open(paths, &again, &err), -ENOENT, "%s", err.msg);
        cr_assert_null(again);
        strv_free(paths);
}

Test(cgroup_oci, open_skips_what_is_gone_and_refuses_bad_lines)
{
        struct cgroup *cg = oci_create(oci_name("gone"), NULL);
        char **paths = NULL;
        psrun_error err = {0};
        cr_assert_eq(cgroup_paths(cg, &paths, &err), 0, "%s", err.msg);
        /* One hierarchy's directory disappears; unknown lines are ignored. */
        const char *victim = cgroup_path(cg, strcmp(cgroup_driver_name(), "v2") ? "pids" : NULL);
        size_t n = 0;
        while (paths[n])
                n++;
        char **more = calloc(n + 3, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                more[i] = paths[i];
        more[n] = "name=systemd:/x";
        more[n + 1] = "rdma:/x";
        struct cgroup *again = NULL;
        if (victim) {
                cr_assert_eq(rmdir(victim), 0, "%s: %s", victim, strerror(errno));
                cr_assert_eq(cgroup_open(more, &again, &err), 0, "%s", err.msg);
                cr_assert_null(cgroup_path(again, "pids"));
                cr_assert_not_null(cgroup_path(again, "memory"));
                cgroup_close(again);
        }
        static char *const bad[][2] = {
                {"nocolon", NULL}, {"memory:../x", NULL}, {"0::/a/../b", NULL}};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                again = NULL;
                cr_assert_eq(cgroup_open(bad[i], &again, &err), -EINVAL, "%s: %s", bad[i][0],
                             err.msg);
                cr_assert_null(again);
        }
        free(more);
        strv_free(paths);
        oci_remove(cg);
}

Test(cgroup_oci, busy_leaf_is_ebusy_and_an_empty_one_adopted)
{
        const char *name = oci_name("busy");
        struct cgroup *cg = oci_create(name, NULL);
        struct kid k = spawn(cg, false, child_wait_forever, 1);
        read_report(&k);
        oci_close(cg);

        struct cgroup *again = NULL;
        psrun_error err = {0};
        int r = cgroup_create_at(name, NULL, NULL, &again, &err);
        cr_assert_eq(r, -EBUSY, "%d %s", r, err.msg);
        cr_assert_null(again);
        cr_assert(strstr(err.msg, "already exists and has 1 process(es)"), "%s", err.msg);
        cr_assert(strstr(err.msg, name), "%s", err.msg);
        /* The failure removed nothing that was there. */
        char dir[PATH_MAX];
        cr_assert(own_dir(NULL, name, dir, sizeof(dir)) ||
                  own_dir("memory", name, dir, sizeof(dir)));
        cr_assert(exists(dir), "%s", dir);
        cr_assert(!dead(k.pid));

        kill(k.pid, SIGKILL);
        reap(k.pid);
        cr_assert_eq(cgroup_create_at(name, NULL, NULL, &again, &err), 0, "%s", err.msg);
        track(again);
        oci_remove(again);
        cr_assert(!exists(dir), "%s", dir);
}

Test(cgroup_oci, failed_create_removes_what_it_made)
{
        char rel[256];
        snprintf(rel, sizeof(rel), "%s/x/y", oci_name(""));
        struct oci_pids pids = {.limit = {true, 10000000}};
        struct oci_resources res = {.pids = &pids};
        struct cgroup *cg = NULL;
        psrun_error err = {0};
        int r = cgroup_create_at(rel, NULL, &res, &cg, &err);
        cr_assert_eq(r, -EINVAL, "%d %s", r, err.msg);
        cr_assert_null(cg);
        cr_assert_str_eq(err.msg, "linux.resources.pids.limit: write pids.max: Invalid argument");
        char why[512];
        cr_assert(!oci_leftovers(why, sizeof(why)), "%s", why);
}

Test(cgroup_oci, bad_paths_are_refused)
{
        static const struct {
                const char *path, *id;
        } cases[] = {
                {"a/../b", NULL}, {"/", NULL},  {"a//b", NULL}, {"a/", NULL},
                {"./a", NULL},    {NULL, NULL}, {NULL, "a/b"},  {NULL, ".."},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct cgroup *cg = NULL;
                psrun_error err = {0};
                int r = cgroup_create_at(cases[i].path, cases[i].id, NULL, &cg, &err);
                cr_assert_eq(r, -EINVAL, "%s/%s: %d %s", cases[i].path, cases[i].id, r, err.msg);
                cr_assert_null(cg);
        }
}

Test(cgroup_oci, remove_kills_the_tree_and_removes_the_leaf)
{
        struct cgroup *cg = oci_create(oci_name("rm"), NULL);
        struct kid k = spawn(cg, false, child_tree, 0);
        pid_t pids[4];
        for (int i = 0; i < 4; i++) {
                pids[i] = (pid_t) (read_report(&k) / 10);
                track_stray(pids[i]);
        }
        char leaf[PATH_MAX];
        snprintf(leaf, sizeof(leaf), "%s", cgroup_path(cg, "memory"));
        oci_remove(cg);
        cr_assert(dead(k.pid));
        reap(k.pid);
        for (int i = 0; i < 4; i++) {
                for (int t = 0; t < 100 && !dead(pids[i]); t++)
                        sleep_ms(10);
                cr_assert(dead(pids[i]), "pid %d survived", pids[i]);
        }
        cr_assert(!exists(leaf));
        char why[512];
        cr_assert(!oci_leftovers(why, sizeof(why)), "%s", why);
}

/* ---- freezer ------------------------------------------------------------- */

static void freeze_and_thaw(struct cgroup *cg)
{
        struct kid k = spawn(cg, false, child_spin, 1);
        read_report(&k);
        unsigned long long t0 = cpu_ticks(k.pid);
        for (int i = 0; i < 200 && cpu_ticks(k.pid) == t0; i++)
                sleep_ms(5);

        /* `pause` comes from another psrun process: a reopened handle. */
        char **paths = NULL;
        psrun_error err = {0};
        cr_assert_eq(cgroup_paths(cg, &paths, &err), 0, "%s", err.msg);
        struct cgroup *other = NULL;
        cr_assert_eq(cgroup_open(paths, &other, &err), 0, "%s", err.msg);
        strv_free(paths);
        cr_assert_eq(cgroup_is_frozen(other), 0);
        cr_assert_eq(cgroup_freeze(other, true, &err), 0, "%s", err.msg);
        cr_assert_eq(cgroup_is_frozen(cg), 1);
        unsigned long long frozen = cpu_ticks(k.pid);
        sleep_ms(300);
        cr_assert_eq(cpu_ticks(k.pid), frozen, "a frozen process ran");
        /* Freezing twice is fine. */
        cr_assert_eq(cgroup_freeze(other, true, &err), 0, "%s", err.msg);

        cr_assert_eq(cgroup_freeze(other, false, &err), 0, "%s", err.msg);
        cr_assert_eq(cgroup_is_frozen(cg), 0);
        for (int i = 0; i < 200 && cpu_ticks(k.pid) == frozen; i++)
                sleep_ms(5);
        cr_assert_gt(cpu_ticks(k.pid), frozen, "thawed process doesn't run");
        cgroup_close(other);

        /* A paused container can be deleted: remove thaws what it kills. */
        cr_assert_eq(cgroup_freeze(cg, true, &err), 0, "%s", err.msg);
        oci_remove(cg);
        cr_assert(dead(k.pid), "a frozen process survived cgroup_remove");
        reap(k.pid);
}

Test(cgroup_oci, freeze_stops_a_busy_process_and_thaw_resumes_it)
{
        freeze_and_thaw(oci_create(oci_name("frz"), NULL));
}

Test(cgroup_oci, v2_freezer_on_the_cgroup2_mount)
{
        char mp[PATH_MAX];
        if (is_v2())
                cr_skip_test("the test above is the v2 one here");
        if (!hierarchy_mount(NULL, mp, sizeof(mp)))
                cr_skip_test("no cgroup2 mount");
        cgroup_test_set_driver("v2");
        struct cgroup *cg = oci_create(oci_name("frz2"), NULL);
        if (!exists(cgroup_path(cg, "unified")) ||
            !cg_file_exists(cgroup_path(cg, "unified"), "cgroup.freeze"))
                cr_skip_test("no cgroup.freeze");
        freeze_and_thaw(cg);
}

/* ---- pids, stats ---------------------------------------------------------- */

static int cmp_pid_t(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

Test(cgroup_oci, pids_lists_every_process_sorted)
{
        struct cgroup *cg = oci_create(oci_name("ps"), NULL);
        struct kid k = spawn(cg, false, child_tree, 0);
        pid_t want[5] = {k.pid};
        for (int i = 1; i < 5; i++) {
                want[i] = (pid_t) (read_report(&k) / 10);
                track_stray(want[i]);
        }
        /* The session leader's middle child exits; give it a moment. */
        pid_t *pids = NULL;
        size_t n = 0;
        psrun_error err = {0};
        for (int t = 0; t < 100; t++) {
                free(pids);
                cr_assert_eq(cgroup_pids(cg, &pids, &n, &err), 0, "%s", err.msg);
                if (n == 5)
                        break;
                sleep_ms(10);
        }
        cr_assert_eq(n, 5, "%zu pids", n);
        for (size_t i = 1; i < n; i++)
                cr_assert_lt(pids[i - 1], pids[i]);
        for (int i = 0; i < 5; i++)
                cr_assert_not_null(bsearch(&want[i], pids, n, sizeof(pid_t), cmp_pid_t), "%d",
                                   want[i]);
        free(pids);
        oci_remove(cg);
        reap(k.pid);
}

static void child_touch_and_wait(int fd, long bytes)
{
        touch((size_t) bytes);
        child_wait_forever(fd, 1);
}

Test(cgroup_oci, stats_for_events)
{
        struct oci_pids pids = {.limit = {true, 32}};
        struct oci_memory mem = {.limit = {true, 256 * MiB}};
        struct oci_resources res = {.pids = &pids, .memory = &mem};
        struct cgroup *cg = oci_create(oci_name("st"), &res);
        struct kid k = spawn(cg, false, child_touch_and_wait, 8 * MiB);
        read_report(&k);
        struct cgroup_stats st = stats_of(cg);
        cr_assert_geq(st.memory_usage_bytes, 8 * MiB);
        cr_assert_geq(st.memory_peak_bytes, st.memory_usage_bytes);
        cr_assert_eq(st.memory_limit_bytes, 256 * MiB);
        cr_assert_eq(st.pids_current, 1);
        cr_assert_eq(st.pids_limit, 32);
        cr_assert_geq(st.cpu_usec, st.cpu_user_usec);
        oci_remove(cg);
        reap(k.pid);
}
