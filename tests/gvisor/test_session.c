/* SPDX-License-Identifier: MIT */
/*
 * Sessions under both backends, through the public API: several execs
 * sharing /workspace with the host-side file API, an exec killed as a tree
 * by its timeout while the session lives on, and nothing left after
 * destroy or after the supervisor is killed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>

#include "gvisor/common.h"
#include "session/common.h"

static void start(struct sess *t, const char *backend, const char *const *more)
{
        const char *kv[16] = {"backend", backend};
        size_t n = 2;
        for (size_t i = 0; more && more[i] && n < 14; i++)
                kv[n++] = more[i];
        kv[n] = NULL;
        sess_start(t, kv);
}

BOTH_BACKENDS(gvisor_session, execs_and_files)
{
        struct sess t = {0};
        start(&t, backend, NULL);
        psrun_error err = {0};

        /* The host writes, the sandbox reads, as the sandbox user. */
        static const char bin[] = "a\0b\xff\n";
        cr_assert_eq(psrun_write_file(t.s, "src/data.bin", bin, sizeof(bin), 0644, &err), 0, "%s",
                     err.msg);
        psrun_exec_result res = sess_sh(&t,
                                        "od -An -tx1 /workspace/src/data.bin; stat -c '%u %g' "
                                        "/workspace/src/data.bin 2>/dev/null || true",
                                        NULL);
        cr_expect_eq(res.result.exit_code, 0, "%s", res.stderr_data);
        cr_expect(strstr(res.stdout_data, "61 00 62 ff 0a 00"), "%s", res.stdout_data);
        char want[16];
        snprintf(want, sizeof(want), "%s", backend);
        cr_expect_str_eq(res.result.backend, want);
        /* What held in the exec. Under gVisor the policy's seccomp profile
         * is the init's only (runsc exec applies none): the result says so,
         * as the exec's JSON does. */
        bool gv = strcmp(backend, "gvisor") == 0;
        cr_expect_str_eq(res.layers.seccomp, gv ? "not in execs" : "on");
        if (gv) {
                cr_expect_str_eq(res.layers.landlock, "gvisor");
                cr_expect_str_eq(res.layers.apparmor, "off");
        } else {
                cr_expect(res.layers.landlock[0] && res.layers.apparmor[0]);
        }
        int jfd = memfd_create("psrun-gv-json", MFD_CLOEXEC);
        cr_assert_geq(jfd, 0);
        cr_assert_eq(psrun_exec_result_write_json(&res, jfd), 0);
        char json[8192] = {0};
        cr_assert_gt(pread(jfd, json, sizeof(json) - 1, 0), 0);
        close(jfd);
        cr_expect(
                strstr(json, gv ? "\"layers\":{\"seccomp\":\"not in execs\",\"landlock\":\"gvisor\""
                                : "\"layers\":{\"seccomp\":\"on\""),
                "%s", json);
        psrun_exec_result_free(&res);

        /* The sandbox writes, the host reads; state carries across execs. */
        sess_sh_ok(&t, "echo one > /workspace/out.txt");
        sess_sh_ok(&t, "echo two >> /workspace/out.txt && mkdir -p /workspace/d/e");
        psrun_file_data fd = {0};
        cr_assert_eq(psrun_read_file(t.s, "out.txt", 0, 1024, &fd, &err), 0, "%s", err.msg);
        cr_expect_eq(fd.len, 8);
        cr_expect(fd.data && memcmp(fd.data, "one\ntwo\n", 8) == 0);
        free(fd.data);
        psrun_file_entry *list = NULL;
        size_t n = 0;
        cr_assert_eq(psrun_list_files(t.s, "/workspace", 0, &list, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 3, "entries: %zu", n);
        psrun_file_entries_free(list, n);
        cr_assert_eq(psrun_remove(t.s, "out.txt", &err), 0, "%s", err.msg);
        sess_sh_ok(&t, "test ! -e /workspace/out.txt");

        /* A planted link does not lead the file API out of the workspace. */
        sess_sh_ok(&t, "ln -s /etc/shadow /workspace/shadow");
        cr_expect_lt(psrun_read_file(t.s, "shadow", 0, 1024, &fd, &err), 0);

        /* An exec's own cwd and env. */
        const char *env[] = {"GREETING=hi", NULL};
        psrun_exec_options o = {.cwd = "/workspace/d", .env = env};
        res = sess_sh(&t, "echo $GREETING; pwd", &o);
        cr_expect_str_eq(res.stdout_data, "hi\n/workspace/d\n");
        psrun_exec_result_free(&res);

        /* A command that is not there. */
        char *missing[] = {"no-such-command", NULL};
        cr_assert_eq(psrun_exec(t.s, missing, NULL, &res, &err), 0, "%s", err.msg);
        cr_expect_eq(res.result.exit_code, 127);
        cr_expect_str_eq(res.result.reason, "setup_error");
        psrun_exec_result_free(&res);
        sess_end(&t);
        char why[512];
        cr_expect(gv_no_state_of(t.supervisor, why, sizeof(why)), "left: %s", why);
}

/* A timed-out exec is killed with what it started; the session, its
 * workspace and its next exec are fine. */
BOTH_BACKENDS(gvisor_session, timeout_kills_the_exec_tree)
{
        struct sess t = {0};
        start(&t, backend, NULL);
        sess_sh_ok(&t, "echo kept > /workspace/kept");
        psrun_exec_options o = {.timeout_ms = 1000};
        psrun_exec_result res = sess_sh(&t, "sleep 111 & sleep 111 & sleep 112", &o);
        cr_expect_str_eq(res.result.reason, "timeout");
        cr_expect_eq(res.result.exit_code, 137);
        cr_expect_eq(res.result.signal, 9);
        psrun_exec_result_free(&res);
        /* No sleep of that exec is left inside. */
        res = sess_sh(&t,
                      "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; "
                      "done | grep -c 'sleep 11[12]' || true",
                      NULL);
        cr_expect_str_eq(res.stdout_data, "0\n", "left inside: %s", res.stdout_data);
        psrun_exec_result_free(&res);
        res = sess_sh(&t, "cat /workspace/kept", NULL);
        cr_expect_str_eq(res.stdout_data, "kept\n");
        psrun_exec_result_free(&res);
        sess_end(&t);
}

/* The supervisor SIGKILLed: the sandbox dies with it, gc removes the rest. */
BOTH_BACKENDS(gvisor_session, killed_supervisor_then_gc)
{
        struct sess t = {0};
        start(&t, backend, NULL);
        sess_sh_ok(&t, "true");
        cr_assert_eq(kill(t.supervisor, SIGKILL), 0);
        for (int i = 0; i < 300 && !sess_pid_gone(t.supervisor); i++)
                usleep(10000);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "pgrep -f '[/]run/psrun-gvisor/%d-' | head -1", t.supervisor);
        bool gone = false;
        for (int i = 0; i < 200 && !gone; i++) {
                FILE *ps = popen(cmd, "r");
                char line[32] = "";
                gone = !ps || !fgets(line, sizeof(line), ps);
                if (ps)
                        pclose(ps);
                if (!gone)
                        usleep(50000);
        }
        cr_expect(gone, "the sandbox outlived its supervisor");
        psrun_error err = {0};
        cr_expect_geq(psrun_session_gc(t.root, &err), 1, "%s", err.msg);
        psrun_session_close(t.s);
        t.s = NULL;
        sess_end(&t);
        char why[512];
        cr_expect(gv_no_state_of(t.supervisor, why, sizeof(why)), "left: %s", why);
}

/* A fork bomb in an exec stops at pids_limit and the session lives on:
 * natively at the exec's cgroup (reason "pids"), under gVisor at the
 * sandbox user's RLIMIT_NPROC inside the sentry (the exec just fails to
 * fork). */
BOTH_BACKENDS(gvisor_session, fork_bomb_leaves_the_session)
{
        struct sess t = {0};
        char mount[4200];
        snprintf(mount, sizeof(mount), "%s:/probe:ro", test_helper_path("probe"));
        const char *const more[] = {"pids_limit", "16", "mounts", mount, NULL};
        start(&t, backend, more);
        char *bomb[] = {"/probe", "forkbomb", NULL};
        psrun_exec_result res;
        psrun_error err = {0};
        psrun_exec_options o = {.timeout_ms = 30000};
        cr_assert_eq(psrun_exec(t.s, bomb, &o, &res, &err), 0, "%s", err.msg);
        cr_expect_neq(res.result.exit_code, 0);
        if (strcmp(backend, "native") == 0)
                cr_expect_str_eq(res.result.reason, "pids");
        else
                cr_expect_str_eq(res.result.reason, "exited", "%s", res.result.error);
        psrun_exec_result_free(&res);
        sess_sh_ok(&t, "echo still here");
        sess_end(&t);
}

/* Under gVisor an OOM kill is the sandbox's: the exec says "oom", and the
 * session ends, leaving nothing behind. */
Test(gvisor_session, oom_ends_the_gvisor_session)
{
        gv_require();
        struct sess t = {0};
        char mount[4200];
        snprintf(mount, sizeof(mount), "%s:/probe:ro", test_helper_path("probe"));
        const char *const more[] = {"memory_limit", "128M", "mounts", mount, NULL};
        start(&t, "gvisor", more);
        char *hog[] = {"/probe", "hog", "600M", NULL};
        psrun_exec_result res;
        psrun_error err = {0};
        cr_assert_eq(psrun_exec(t.s, hog, NULL, &res, &err), 0, "%s", err.msg);
        cr_expect_str_eq(res.result.reason, "oom", "%s", res.result.error);
        cr_expect_eq(res.result.exit_code, 137);
        psrun_exec_result_free(&res);
        for (int i = 0; i < 300 && !sess_pid_gone(t.supervisor); i++)
                usleep(10000);
        cr_expect_lt(psrun_exec_shell(t.s, "true", NULL, &res, &err), 0, "the session lived on");
        psrun_session_close(t.s);
        t.s = NULL;
        sess_end(&t);
        char why[512];
        cr_expect(gv_no_state_of(t.supervisor, why, sizeof(why)), "left: %s", why);
}

/* What an exec leaves running holding its output is killed when the exec
 * ends: the caller gets its result (and the end of the output) at once. */
BOTH_BACKENDS(gvisor_session, leftovers_do_not_hold_the_exec)
{
        struct sess t = {0};
        start(&t, backend, NULL);
        psrun_exec_result res = sess_sh(&t, "sleep 113 & echo started", NULL);
        cr_expect_str_eq(res.stdout_data, "started\n");
        cr_expect_lt(res.result.wall_ms, 10000);
        psrun_exec_result_free(&res);
        /* Gone (killed before the result, under both backends). */
        bool gone = false;
        for (int i = 0; i < 50 && !gone; i++) {
                res = sess_sh(&t,
                              "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; "
                              "echo; done | grep -c 'sleep 11[3]' || true",
                              NULL);
                gone = strcmp(res.stdout_data, "0\n") == 0;
                psrun_exec_result_free(&res);
                if (!gone)
                        usleep(100000);
        }
        cr_expect(gone, "%s: the exec's sleep is still running", backend);
        sess_end(&t);
}

/* Address leases under /run/psrun/net that nobody holds (their owner is
 * gone) and that were not there before. */
static int orphan_leases(char before[][64], size_t n_before, char *why, size_t size)
{
        DIR *d = opendir("/run/psrun/net");
        int found = 0;
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                bool old = false;
                for (size_t i = 0; i < n_before; i++)
                        old |= strcmp(before[i], de->d_name) == 0;
                char path[320];
                snprintf(path, sizeof(path), "/run/psrun/net/%s", de->d_name);
                int fd = open(path, O_RDWR | O_CLOEXEC);
                if (!old && fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
                        snprintf(why, size, "%s", de->d_name);
                        found++;
                }
                if (fd >= 0)
                        close(fd);
        }
        if (d)
                closedir(d);
        return found;
}

/* A session with a network under gVisor: the sandbox has psrun's resolver,
 * and destroy gives the address lease back. */
Test(gvisor_session, network_session_gives_its_lease_back)
{
        gv_require();
        char before[256][64];
        size_t n = 0;
        DIR *d = opendir("/run/psrun/net");
        struct dirent *de;
        while (d && (de = readdir(d)) && n < 256)
                snprintf(before[n++], sizeof(before[0]), "%s", de->d_name);
        if (d)
                closedir(d);
        struct sess t = {0};
        const char *const more[] = {"network", "full", NULL};
        start(&t, "gvisor", more);
        psrun_exec_result res = sess_sh(&t, "grep -c '^nameserver ' /etc/resolv.conf", NULL);
        cr_expect_str_eq(res.stdout_data, "1\n", "%s", res.stderr_data);
        psrun_exec_result_free(&res);
        sess_end(&t);
        char why[128] = "";
        cr_expect_eq(orphan_leases(before, n, why, sizeof(why)), 0, "lease left: %s", why);
}
