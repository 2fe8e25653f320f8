/* SPDX-License-Identifier: MIT */
/* psrun_gc through the library, as an embedder cleans up after a process
 * of its that was killed: a one-shot run's and a session's leftovers. */
#include <fcntl.h>
#include <sys/file.h>

#include "session/common.h"

TestSuite(gc, .timeout = 60);

/* A psrun_run in a process of its own, SIGKILLed (PSRUN_TEST_KILL_AT,
 * common/fault.h) once its sandbox runs: its cgroup stays behind, owned by
 * a pid that is gone, until psrun_gc removes it. */
Test(gc, killed_run_is_cleaned_up_through_the_library, .init = test_require_root)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                setenv("PSRUN_TEST_KILL_AT", "run:released", 1);
                psrun_policy *p = psrun_policy_new();
                char *argv[] = {"sleep", "30", NULL};
                psrun_result res;
                psrun_error err = {0};
                (void) psrun_run(p, argv, NULL, &res, &err);
                _exit(3); /* not reached: psrun killed itself */
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
        char why[512];
        cr_assert(!test_no_cgroup_leftovers_of(pid, why, sizeof(why)),
                  "the killed run left no cgroup: nothing to test");

        psrun_gc_stats st;
        psrun_error err = {0};
        int r = psrun_gc(NULL, &st, &err);
        cr_assert_geq(r, 1, "%s", err.msg);
        cr_expect_geq(st.cgroups, 1);
        cr_expect_eq((unsigned) r,
                     st.sessions + st.cgroups + st.containers + st.networks + st.gvisor);
        cr_expect(test_no_cgroup_leftovers_of(pid, why, sizeof(why)), "left: %s", why);
}

/* A session whose supervisor was SIGKILLed while an exec ran: psrun_gc
 * (the session's state directory given) removes its state and cgroups. */
Test(gc, killed_supervisor_is_cleaned_up_through_the_library)
{
        struct sess t;
        sess_start(&t, NULL);
        char *sleeper[] = {"sleep", "30", NULL};
        psrun_exec_handle *h = NULL;
        psrun_error err = {0};
        cr_assert_eq(psrun_exec_start(t.s, sleeper, NULL, &h, &err), 0, "%s", err.msg);
        cr_assert_eq(kill(t.supervisor, SIGKILL), 0);
        for (int i = 0; i < 200 && !sess_pid_gone(t.supervisor); i++)
                usleep(10000);
        psrun_exec_result res;
        (void) psrun_exec_wait(h, &res, &err);
        psrun_exec_result_free(&res);
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t.root);
        struct stat sb;
        cr_assert_eq(stat(dir, &sb), 0, "the killed session left no state: nothing to test");
        /* The session counts as alive while anything holds its lock: the
         * supervisor's processes that die with it (PR_SET_PDEATHSIG) may
         * still be on their way out, under load for a while, and gc rightly
         * leaves a live session alone. */
        char lock[300];
        snprintf(lock, sizeof(lock), "%s/lock", dir);
        bool unlocked = false;
        for (int i = 0; i < 300 && !unlocked; i++) {
                int fd = open(lock, O_RDONLY | O_CLOEXEC);
                unlocked = fd < 0 || flock(fd, LOCK_SH | LOCK_NB) == 0;
                if (fd >= 0)
                        close(fd);
                if (!unlocked)
                        usleep(10000);
        }
        cr_assert(unlocked, "3 s after its supervisor died, the session's lock is still held");

        psrun_gc_options o = {.session_dir = t.root};
        psrun_gc_stats st;
        int r = psrun_gc(&o, &st, &err);
        cr_assert_geq(r, 1, "%s", err.msg);
        cr_expect_eq(st.sessions, 1);
        /* Nothing of it is left (sess_end checks state, supervisor and
         * cgroups), and a second gc finds no session. */
        psrun_session_close(t.s);
        t.s = NULL;
        sess_end(&t);
        cr_expect_geq(psrun_gc(&o, &st, &err), 0, "%s", err.msg);
        cr_expect_eq(st.sessions, 0);
}

/* gc never makes an OCI root, and refuses one that is a symbolic link
 * (it would delete where the link points) with one line naming it. */
Test(gc, oci_root_is_never_made_nor_followed, .init = test_require_root)
{
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-gc");
        cr_assert_not_null(mkdtemp(dir));
        char missing[128], link[128], empty[128];
        snprintf(missing, sizeof(missing), "%s/missing", dir);
        snprintf(link, sizeof(link), "%s/link", dir);
        snprintf(empty, sizeof(empty), "%s/sessions", dir);
        cr_assert_eq(mkdir(empty, 0700), 0);
        cr_assert_eq(symlink(dir, link), 0);
        psrun_gc_options o = {.oci_root = missing, .session_dir = empty};
        psrun_gc_stats st;
        psrun_error err = {0};
        cr_expect_geq(psrun_gc(&o, &st, &err), 0, "%s", err.msg);
        cr_expect_eq(st.containers, 0);
        struct stat sb;
        cr_expect(stat(missing, &sb) < 0 && errno == ENOENT, "gc made %s", missing);

        o.oci_root = link;
        cr_expect_lt(psrun_gc(&o, &st, &err), 0);
        cr_expect(strstr(err.msg, link) && !strchr(err.msg, '\n'), "%s", err.msg);
        unlink(link);
        rmdir(empty);
        rmdir(dir);
}
