/* SPDX-License-Identifier: MIT */
/*
 * Per-call values narrow the session's policy, never widen it: an exec's
 * timeout_ms (the supervisor holds it, whatever the client: a raw request
 * too), its output_limit (kept by the client), an install's and a
 * background process's timeout_ms, and the CLI's --timeout. Each refusal
 * is one line naming the option and the policy's ceiling, and nothing ran.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>

#include "runtime/session/package.h"
#include "runtime/session/session.h"
#include "session/common.h"

static const char *const policy_kv[] = {"timeout", "10s", "output_limit", "64K", NULL};

Test(ceilings, exec_timeout_and_output_limit_narrow_only, .timeout = 30)
{
        struct sess t;
        sess_start(&t, policy_kv);
        char *argv[] = {"/bin/sh", "-c", "touch /workspace/ran", NULL};
        psrun_exec_result res;
        psrun_error err = {0};
        psrun_exec_options o = {.timeout_ms = 20000};
        cr_expect_eq(psrun_exec(t.s, argv, &o, &res, &err), -EPERM);
        cr_expect_str_eq(err.msg, "timeout_ms: 20000 is above the policy's timeout 10s");
        psrun_exec_result_free(&res);
        o = (psrun_exec_options){.output_limit = 65537};
        cr_expect_eq(psrun_exec(t.s, argv, &o, &res, &err), -EPERM);
        cr_expect_str_eq(err.msg, "output_limit: 65537 is above the policy's output_limit 65536");
        psrun_exec_result_free(&res);
        uint32_t id = 0;
        o = (psrun_exec_options){.timeout_ms = 10001};
        cr_expect_eq(psrun_exec_background(t.s, argv, &o, &id, &err), -EPERM);
        cr_expect_str_eq(err.msg, "timeout_ms: 10001 is above the policy's timeout 10s");
        /* Nothing ran; the narrower and equal values run. */
        psrun_exec_result chk = sess_sh(&t, "test -e /workspace/ran && echo ran || echo no", NULL);
        cr_expect_str_eq(chk.stdout_data, "no\n");
        psrun_exec_result_free(&chk);
        o = (psrun_exec_options){.timeout_ms = 10000, .output_limit = 100};
        cr_expect_eq(
                psrun_exec(t.s, (char *[]){"/bin/sh", "-c", "seq 1 1000", NULL}, &o, &res, &err), 0,
                "%s", err.msg);
        cr_expect(res.stdout_truncated);
        cr_expect_leq(res.stdout_len, 200);
        psrun_exec_result_free(&res);
        sess_end(&t);
}

/* The supervisor holds the timeout whatever the client: a raw request
 * (exec and install) above the policy is refused and nothing runs. */
Test(ceilings, a_raw_request_cannot_widen_the_timeout, .timeout = 30)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"timeout", "10s", NULL});
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t.root);
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[3] = {null_fd, null_fd, null_fd};
        static const char payload[] = "\0/bin/touch\0/workspace/ran";
        struct sess_req req = {.op = SESS_OP_EXEC, .argc = 2, .timeout_ms = UINT64_MAX};
        static struct sess_reply rep;
        psrun_error err = {0};
        int r = session_call(dir, &req, payload, sizeof(payload), fds, 3, &rep, NULL, NULL, &err);
        cr_expect_eq(r, -EPERM, "%s", err.msg);
        cr_expect_str_eq(err.msg, "timeout_ms: 18446744073709551615 is above the policy's "
                                  "timeout 10s");
        req = (struct sess_req){
                .op = SESS_OP_INSTALL, .tool = INSTALL_TOOL_PYTHON, .timeout_ms = 10001};
        r = session_call(dir, &req, "psfake", 7, fds, 3, &rep, NULL, NULL, &err);
        cr_expect_eq(r, -EPERM, "%s", err.msg);
        cr_expect_str_eq(err.msg, "timeout_ms: 10001 is above the policy's timeout 10s");
        close(null_fd);
        psrun_install_options io = {.timeout_ms = 60000};
        psrun_exec_result res;
        cr_expect_eq(psrun_install_package(t.s, "psfake", &io, &res, &err), -EPERM, "%s", err.msg);
        cr_expect_str_eq(err.msg, "timeout_ms: 60000 is above the policy's timeout 10s");
        psrun_exec_result_free(&res);
        psrun_exec_result chk = sess_sh(&t, "test -e /workspace/ran && echo ran || echo no", NULL);
        cr_expect_str_eq(chk.stdout_data, "no\n");
        psrun_exec_result_free(&chk);

        /* The CLI's --timeout is the same C API field. */
        struct test_run run;
        test_run_psrun(&run, (const char *const[]){"session", "exec", "--timeout", "20s", "t",
                                                   "true", NULL});
        cr_expect_eq(run.status, 125, "%s", run.err);
        cr_expect(strstr(run.err, "timeout_ms: 20000 is above the policy's timeout 10s"), "%s",
                  run.err);
        test_run_free(&run);
        sess_end(&t);
}

/* This test's process (and the supervisor it starts) sees an empty
 * /etc/resolv.conf, as the kernel-matrix VM's: an install network, which
 * takes its DNS upstream from there when the policy names none, cannot be
 * built. */
static void hide_host_nameservers(void)
{
        cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
        if (access("/etc/resolv.conf", F_OK) < 0)
                return; /* none at all: no nameserver either */
        char empty[256];
        test_tmp_template(empty, sizeof(empty), "psrun-resolv");
        int fd = mkstemp(empty);
        cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
        close(fd);
        int r = mount(empty, "/etc/resolv.conf", NULL, MS_BIND, NULL);
        int e = errno;
        unlink(empty);
        cr_assert_eq(r, 0, "bind an empty resolv.conf: %s", strerror(e));
}

/* A request is refused for its own fault before anything is built for it:
 * a too-wide install timeout says so even where no install network could
 * be had (it said the network's error in the VM, whose resolv.conf names
 * no nameserver); one within the ceiling gets as far as the network. */
Test(ceilings, a_too_wide_install_is_refused_before_its_network_is_built, .timeout = 30)
{
        test_require_root();
        hide_host_nameservers();
        struct sess t;
        sess_start(&t, (const char *const[]){"timeout", "10s", NULL});
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t.root);
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[3] = {null_fd, null_fd, null_fd};
        struct sess_req req = {
                .op = SESS_OP_INSTALL, .tool = INSTALL_TOOL_PYTHON, .timeout_ms = 10001};
        static struct sess_reply rep;
        psrun_error err = {0};
        int r = session_call(dir, &req, "psfake", 7, fds, 3, &rep, NULL, NULL, &err);
        cr_expect_eq(r, -EPERM, "%s", err.msg);
        cr_expect_str_eq(err.msg, "timeout_ms: 10001 is above the policy's timeout 10s");
        close(null_fd);
        psrun_install_options io = {.timeout_ms = 60000};
        psrun_exec_result res;
        cr_expect_eq(psrun_install_package(t.s, "psfake", &io, &res, &err), -EPERM, "%s", err.msg);
        cr_expect_str_eq(err.msg, "timeout_ms: 60000 is above the policy's timeout 10s");
        psrun_exec_result_free(&res);
        /* The host's nameservers are hidden indeed: within the ceiling,
         * the install's network is what refuses. */
        io = (psrun_install_options){.timeout_ms = 5000};
        cr_expect_lt(psrun_install_package(t.s, "psfake", &io, &res, &err), 0);
        cr_expect(strstr(err.msg, "/etc/resolv.conf names no nameserver"), "%s", err.msg);
        psrun_exec_result_free(&res);
        sess_end(&t);
}
