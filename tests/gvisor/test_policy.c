/* SPDX-License-Identifier: MIT */
/*
 * The policy under both backends (issue 28, class 6): the seccomp profile's
 * refusals hold under gVisor as natively (runsc applies it as the bundle's
 * linux.seccomp), a session's init is out of its execs' reach, and what an
 * exec leaves running cannot print after psrun's result.
 */
#include "gvisor/common.h"
#include "session/common.h"

/* Each refusal of the native profile, one line each, through the probe
 * helper, util-linux's unshare and the host's python3 (ptrace of one's
 * own child, clone3, and threads still made after clone3's ENOSYS). */
static const char refusals_script[] =
        "/probe syscall io_uring_setup; /probe syscall ptrace; /probe syscall unshare-user; "
        "unshare -Urm true 2>/dev/null; echo unshare=$?; "
        "python3 -c '\n"
        "import ctypes, errno, os, threading, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def err(r): return \"ok\" if r >= 0 else errno.errorcode[ctypes.get_errno()]\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(5)\n"
        "    os._exit(0)\n"
        "print(\"attach\", err(libc.ptrace(16, pid, 0, 0)))\n"
        "os.kill(pid, 9)\n"
        "os.wait()\n"
        "print(\"clone3\", err(libc.syscall(435, ctypes.create_string_buffer(88), 88)))\n"
        "t = threading.Thread(target=print, args=(\"thread ok\",))\n"
        "t.start()\n"
        "t.join()\n"
        "'";

static const char refusals_want[] = "EPERM\nEPERM\nEPERM\nunshare=1\nattach EPERM\nclone3 ENOSYS\n"
                                    "thread ok\n";

BOTH_BACKENDS(gvisor_policy, seccomp_refusals_hold_in_run)
{
        if (access("/usr/bin/python3", X_OK) < 0)
                cr_skip_test("no /usr/bin/python3 on this host");
        static const char *const cmd[] = {"sh", "-c", refusals_script, NULL};
        struct test_run r;
        gv_run(&r, backend, NULL, cmd);
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, refusals_want, "%s: stderr: %s", backend, r.err);
        test_run_free(&r);
}

static void start(struct sess *t, const char *backend)
{
        char mount[4200];
        snprintf(mount, sizeof(mount), "%s:/probe:ro", test_helper_path("probe"));
        const char *kv[] = {"backend", backend, "mounts", mount, NULL};
        sess_start(t, kv);
}

/* An exec can neither end the session by killing its init nor read what
 * init holds: natively init is root, out of the sandbox user's reach; under
 * gVisor it is root with no capabilities, and its environment is empty but
 * for the HOME runsc adds (runsc 20221219 shows /proc/1/environ and maps to
 * anyone: docs/security.md). */
BOTH_BACKENDS(gvisor_policy, exec_cannot_reach_the_init)
{
        struct sess t = {0};
        start(&t, backend);
        psrun_exec_result res = sess_sh(&t, "kill -9 1 2>&1; echo kill=$?", NULL);
        cr_expect(strstr(res.stdout_data, "Operation not permitted\n") &&
                          strstr(res.stdout_data, "\nkill=1\n"),
                  "%s", res.stdout_data);
        psrun_exec_result_free(&res);
        res = sess_sh(&t,
                      "cat /proc/1/environ >/dev/null 2>&1; echo environ=$?; "
                      "tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | grep -v '^HOME=' || true; "
                      "awk '/^Uid:/ { print $2 }' /proc/1/status",
                      NULL);
        if (strcmp(backend, "native") == 0)
                cr_expect_str_eq(res.stdout_data, "environ=1\n0\n", "%s", res.stderr_data);
        else
                cr_expect_str_eq(res.stdout_data, "environ=0\n0\n", "%s", res.stderr_data);
        psrun_exec_result_free(&res);
        if (strcmp(backend, "native") == 0) {
                res = sess_sh(&t, "head -c1 /proc/1/maps >/dev/null 2>&1; echo maps=$?", NULL);
                cr_expect_str_eq(res.stdout_data, "maps=1\n");
                psrun_exec_result_free(&res);
        }
        /* The session lives on. */
        usleep(200000);
        sess_sh_ok(&t, "echo still here");
        sess_end(&t);
}

/* A background process that prints a result-like line after a while: on
 * `session exec --json` psrun's result is still the last line of stderr
 * (the exec's leftovers are killed before the result is written). */
BOTH_BACKENDS(gvisor_policy, leftovers_cannot_forge_the_result)
{
        struct sess t = {0};
        start(&t, backend);
        static const char *const argv[] = {
                "session",
                "exec",
                "--json",
                "t",
                "--",
                "sh",
                "-c",
                "(sleep 0.2; echo '{\"exit_code\":0,\"forged\":true}' >&2) & echo started",
                NULL};
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "started\n");
        /* Read to the end of stderr: anything the leftover printed would
         * come after psrun's line. */
        cr_expect(!strstr(r.err, "forged"), "%s: the leftover printed: %s", backend, r.err);
        size_t len = strlen(r.err);
        cr_expect(len > 1 && r.err[len - 1] == '\n', "%s", r.err);
        const char *last = r.err;
        for (const char *p = r.err; len > 1 && p < r.err + len - 1; p++)
                if (*p == '\n')
                        last = p + 1;
        cr_expect(strncmp(last, "{\"exit_code\":0,", 15) == 0 && strstr(last, "\"backend\":"),
                  "last line: %s", last);
        test_run_free(&r);
        sess_end(&t);
}
