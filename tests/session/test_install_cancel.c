/* SPDX-License-Identifier: MIT */
/*
 * Cancelling an install (psrun_install_start + psrun_exec_cancel): the
 * installer is a fake that never ends (a `python3` of the test's, first on
 * the policy's PATH, which starts a child and sleeps), so no index is
 * needed. The cancel comes from another thread, as an embedder's (the MCP
 * server's) would: the wait returns -ECANCELED, no process of the
 * installer is left, nor its network, and the session runs an exec at once.
 */
#include <dirent.h>
#include <pthread.h>

#include "tests/session/common.h"

/* How many host processes have marker in their command line. */
static int count_marked(const char *marker)
{
        DIR *d = opendir("/proc");
        cr_assert_not_null(d);
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                char path[64], buf[4096];
                snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                size_t len = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                for (size_t i = 0; i < len; i++)
                        if (!buf[i])
                                buf[i] = ' ';
                buf[len] = '\0';
                if (strstr(buf, marker))
                        n++;
        }
        closedir(d);
        return n;
}

/* Files named resolv-* in the session's state dir: an install's network. */
static int count_install_nets(const struct sess *t)
{
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t->root);
        DIR *d = opendir(dir);
        cr_assert_not_null(d, "%s", dir);
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "resolv-", 7) == 0)
                        n++;
        closedir(d);
        return n;
}

/* A session whose PATH has first a fake `python3` (the installer) that
 * prints "started", starts a child and sleeps: marker (TAG-PID) names both
 * on the host. Skips where installs are a known failure. */
static void start_with_fake_installer(struct sess *t, const char *tag, char *marker, size_t size)
{
        snprintf(marker, size, "%s-%d", tag, (int) getpid());
        char path[160];
        snprintf(path, sizeof(path), "{PATH: /workspace/%s:/usr/bin:/bin}", marker);
        /* The install network's DNS proxy needs an upstream; the host's
         * resolv.conf may name none (the kernel-matrix VM's does not), and
         * the fake installer asks nothing: a test address will do. */
        sess_start(t, (const char *const[]){"env", path, "dns_upstream", "[192.0.2.53]", NULL});
        char line[512];
        snprintf(line, sizeof(line),
                 "mkdir -p /workspace/%s && printf '#!/bin/sh\\nsh -c \"sleep 600; true\" "
                 "%s-child &\\necho started\\nsleep 600\\ntrue\\n' > /workspace/%s/python3 && "
                 "chmod 755 /workspace/%s/python3",
                 marker, marker, marker, marker);
        sess_sh_ok(t, line);
}

struct canceller {
        psrun_exec_handle *h;
        const char *marker;
        const struct sess *t;
        bool saw_installer;
        int nets; /* install networks while it ran */
        int r;
        psrun_error err;
};

/* Once the installer and its child run, cancel (at most 20 s later). */
static void *cancel_thread(void *arg)
{
        struct canceller *c = arg;
        for (int i = 0; i < 400 && !c->saw_installer; i++) {
                c->saw_installer = count_marked(c->marker) >= 2;
                if (!c->saw_installer)
                        usleep(50 * 1000);
        }
        c->nets = count_install_nets(c->t);
        c->r = psrun_exec_cancel(c->h, &c->err);
        return NULL;
}

Test(install_cancel, a_cancelled_install_is_gone_and_the_session_goes_on, .timeout = 60)
{
        char marker[64];
        struct sess t;
        start_with_fake_installer(&t, "fakepip", marker, sizeof(marker));

        psrun_exec_handle *h = NULL;
        psrun_error err = {0};
        psrun_install_options o = {.tool = "python"};
        cr_assert_eq(psrun_install_start(t.s, "psfake==1.0", &o, &h, &err), 0, "%s", err.msg);
        struct canceller c = {.h = h, .marker = marker, .t = &t};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, cancel_thread, &c), 0);
        psrun_exec_result res;
        uint64_t t0 = monotonic_ms();
        int r = psrun_exec_wait(h, &res, &err);
        pthread_join(th, NULL);
        cr_expect(c.saw_installer, "the fake installer and its child never ran");
        cr_expect_eq(c.r, 0, "cancel: %s", c.err.msg);
        cr_expect_eq(c.nets, 1, "the install had no network of its own");
        cr_expect_eq(r, -ECANCELED, "wait: %d %s", r, err.msg);
        cr_expect_str_eq(err.msg, "install: cancelled");
        cr_expect_str_eq(res.result.reason, "signaled");
        cr_expect(strstr(res.stdout_data ? res.stdout_data : "", "started"), "stdout: %s",
                  res.stdout_data);
        cr_expect_lt(monotonic_ms() - t0, 30000, "the installer ran on");
        psrun_exec_result_free(&res);

        /* All of it is gone once the wait returns: the cgroup was emptied
         * and the network freed before the result was sent. */
        cr_expect_eq(count_marked(marker), 0, "an installer's process is left");
        cr_expect_eq(count_install_nets(&t), 0, "the install's network is left");
        psrun_exec_result after = sess_sh(&t, "echo ok", NULL);
        cr_expect_eq(after.result.exit_code, 0);
        cr_expect_str_eq(after.stdout_data, "ok\n");
        psrun_exec_result_free(&after);
        sess_end(&t);
}

struct flagger {
        const char *marker;
        int flag;
        bool saw_installer;
};

/* Once the installer and its child run, set the cancel flag. */
static void *flag_thread(void *arg)
{
        struct flagger *f = arg;
        for (int i = 0; i < 400 && !f->saw_installer; i++) {
                f->saw_installer = count_marked(f->marker) >= 2;
                if (!f->saw_installer)
                        usleep(50 * 1000);
        }
        __atomic_store_n(&f->flag, 1, __ATOMIC_RELEASE);
        return NULL;
}

/* psrun_install_options.cancel: the blocking psrun_install_package, its
 * flag set from another thread, ends with everything gone. */
Test(install_cancel, the_cancel_flag_ends_a_blocking_install, .timeout = 60)
{
        char marker[64];
        struct sess t;
        start_with_fake_installer(&t, "fakepip-flag", marker, sizeof(marker));
        struct flagger f = {.marker = marker};
        psrun_install_options o = {.tool = "python", .cancel = &f.flag};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, flag_thread, &f), 0);
        psrun_exec_result res;
        psrun_error err = {0};
        uint64_t t0 = monotonic_ms();
        int r = psrun_install_package(t.s, "psfake==1.0", &o, &res, &err);
        pthread_join(th, NULL);
        cr_expect(f.saw_installer, "the fake installer and its child never ran");
        cr_expect_eq(r, -ECANCELED, "install: %d %s", r, err.msg);
        cr_expect_str_eq(err.msg, "install: cancelled");
        cr_expect_lt(monotonic_ms() - t0, 30000, "the installer ran on");
        psrun_exec_result_free(&res);
        cr_expect_eq(count_marked(marker), 0, "an installer's process is left");
        cr_expect_eq(count_install_nets(&t), 0, "the install's network is left");
        sess_sh_ok(&t, "true");
        sess_end(&t);
}

Test(install_cancel, cancel_refuses_no_handle, .timeout = 10)
{
        psrun_error err = {0};
        cr_expect_eq(psrun_exec_cancel(NULL, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "cancel: no handle given");
        psrun_exec_handle *h = (psrun_exec_handle *) 1;
        cr_expect_eq(psrun_install_start(NULL, "psfake", NULL, &h, &err), -EINVAL);
        cr_expect_null(h);
        cr_expect_eq(psrun_install_start(NULL, "psfake", NULL, NULL, &err), -EINVAL);
}
