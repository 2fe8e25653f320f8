/* SPDX-License-Identifier: MIT */
/*
 * The result's violations (docs/security.md, "Violations"): one hostile
 * program per layer gives exactly the expected entry; benign programs give
 * none; `off` gives no report at all; the seccomp listener is throttled;
 * psrun under another supervisor's listener still refuses, and says it
 * cannot report.
 */
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "integration/common.h"
#include "policy/audit.h"
#include "policy/landlock.h"

TestSuite(violations, .init = test_require_root);

/* psrun run [opts...] -- cmd... with the probe at /probe. */
static void run_cmd(struct test_run *r, const char *const *opts, const char *const *cmd)
{
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[64];
        size_t n = 0;
        argv[n++] = "run";
        argv[n++] = "-o";
        argv[n++] = mount;
        for (size_t i = 0; opts && opts[i] && n < 40; i++)
                argv[n++] = opts[i];
        argv[n++] = "--";
        for (size_t i = 0; cmd[i] && n < 62; i++)
                argv[n++] = cmd[i];
        argv[n] = NULL;
        test_run_psrun(r, argv);
}

/* The text of the result's "violations" array, without its brackets
 * (static buffer); "(missing)" when there is none. */
static const char *violations_of(const char *json)
{
        static char buf[16384];
        const char *p = strstr(json, "\"violations\":[");
        if (!p)
                return "(missing)";
        p += strlen("\"violations\":[");
        const char *e = strstr(p, "],\"violations_more\"");
        if (!e)
                return "(unterminated)";
        snprintf(buf, sizeof(buf), "%.*s", (int) (e - p), p);
        return buf;
}

static int count_entries(const char *list)
{
        int n = 0;
        for (const char *p = list; (p = strstr(p, "{\"layer\":")); p++)
                n++;
        return n;
}

#define expect_only_entry(r, entry)                                                                \
        do {                                                                                       \
                const char *list_ = violations_of((r)->result);                                    \
                cr_expect_eq(count_entries(list_), 1, "violations: [%s]\nresult: %s", list_,       \
                             (r)->result);                                                         \
                cr_expect_not_null(strstr(list_, entry), "want %s in [%s]", entry, list_);         \
        } while (0)

Test(violations, seccomp_refusals_each_one_entry_with_the_syscall_and_pid)
{
        static const char *const calls[] = {"ptrace", "bpf", "keyctl", "init_module",
                                            "io_uring_setup"};
        for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
                struct test_run r;
                const char *cmd[] = {"/probe", "syscall", calls[i], NULL};
                run_cmd(&r, NULL, cmd);
                cr_expect_str_eq(r.out, "EPERM\n", "%s: %s", calls[i], r.err);
                char entry[128];
                snprintf(entry, sizeof(entry),
                         "{\"layer\":\"seccomp\",\"what\":\"%s\",\"count\":1,\"pid\":2}", calls[i]);
                expect_only_entry(&r, entry);
                cr_expect_str_eq(field(&r, "violations_more"), "0");
                test_run_free(&r);
        }
}

Test(violations, full_names_the_refused_argument_summary_does_not)
{
        static const struct {
                const char *cmd[4];
                const char *summary, *full;
        } cases[] = {
                {{"/probe", "socket", "packet"}, "\"socket\"", "\"socket(AF_PACKET)\""},
                {{"/probe", "syscall", "unshare-user"},
                 "\"unshare\"",
                 "\"unshare(CLONE_NEWUSER)\""},
                {{"/probe", "syscall", "int80"}, "\"getpid (i386)\"", "\"getpid (i386)\""},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct test_run r;
                const char *summary[] = {"-o", "violations=summary", NULL};
                run_cmd(&r, summary, cases[i].cmd);
                expect_only_entry(&r, cases[i].summary);
                test_run_free(&r);
                const char *full[] = {"-o", "violations=full", NULL};
                run_cmd(&r, full, cases[i].cmd);
                expect_only_entry(&r, cases[i].full);
                test_run_free(&r);
        }
}

Test(violations, terminal_ioctls_by_request_in_full)
{
        /* The probe's terminal requests on stdin (tests/helper/probe.c
         * "tty"): TIOCEXCL, TIOCSETD, TIOCSTI twice (once with the upper
         * half of the request set: the kernel reads its low 32 bits, and
         * so does the name), TCXONC, TIOCCONS, TIOCNXCL. Refused whatever
         * stdin is. */
        struct test_run r;
        const char *cmd[] = {"/probe", "tty", NULL};
        const char *full[] = {"-o", "violations=full", NULL};
        run_cmd(&r, full, cmd);
        const char *list = violations_of(r.result);
        cr_expect_eq(count_entries(list), 6, "[%s]", list);
        cr_expect_not_null(strstr(list, "\"what\":\"ioctl(TIOCSTI)\",\"count\":2"), "[%s]", list);
        static const char *const names[] = {"TIOCSETD", "TIOCEXCL", "TCXONC", "TIOCCONS",
                                            "TIOCNXCL"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char want[64];
                snprintf(want, sizeof(want), "\"what\":\"ioctl(%s)\",\"count\":1", names[i]);
                cr_expect_not_null(strstr(list, want), "%s in [%s]", names[i], list);
        }
        test_run_free(&r);
        run_cmd(&r, NULL, cmd);
        expect_only_entry(&r, "{\"layer\":\"seccomp\",\"what\":\"ioctl\",\"count\":7,\"pid\":2}");
        test_run_free(&r);
}

Test(violations, repeated_refusals_are_counted_in_one_entry)
{
        struct test_run r;
        const char *cmd[] = {"/probe", "refuse", "300", "keyctl", NULL};
        run_cmd(&r, NULL, cmd);
        cr_expect_str_eq(r.out, "300 EPERM\n", "%s", r.err);
        expect_only_entry(&r,
                          "{\"layer\":\"seccomp\",\"what\":\"keyctl\",\"count\":300,\"pid\":2}");
        test_run_free(&r);
}

Test(violations, a_refusal_loop_is_throttled_and_still_refused, .timeout = 120)
{
        /* The supervisor answers at most VWATCH_WINDOW_ANSWERS (1,000) per
         * 100 ms window, fewer when they cost it more than 5 ms of CPU:
         * 1,200 refusals wait for a second window at least (unthrottled,
         * they take about 40 ms here). Every one is still refused and
         * counted. */
        struct test_run r;
        const char *cmd[] = {"/probe", "refuse", "1200", "ptrace", NULL};
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        run_cmd(&r, NULL, cmd);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double secs = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        cr_expect_str_eq(r.out, "1200 EPERM\n", "%s", r.err);
        expect_only_entry(&r, "\"what\":\"ptrace\",\"count\":1200");
        cr_expect_geq(secs, 0.1, "1200 refusals answered in %.3f s: not throttled", secs);
        test_run_free(&r);
}

Test(violations, limits_each_one_entry)
{
        static const struct {
                const char *opt;
                const char *cmd[4];
                const char *entry;
        } cases[] = {
                {"pids_limit=16", {"/probe", "forkbomb"}, "\"what\":\"pids_limit 16 reached\""},
                {"memory_limit=32M",
                 {"/probe", "hog", "64"},
                 "\"what\":\"memory_limit 32M: out of memory, process killed\""},
                {"timeout=1",
                 {"/probe", "sleep", "5"},
                 "\"what\":\"timeout 1s reached\",\"count\":1"},
                {"disk_limit=1M",
                 {"/probe", "fill", "/workspace/x"},
                 "\"what\":\"disk_limit 1M: /workspace is full\",\"count\":1"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct test_run r;
                const char *opts[] = {"-o", cases[i].opt, NULL};
                run_cmd(&r, opts, cases[i].cmd);
                expect_only_entry(&r, "\"layer\":\"limits\"");
                expect_only_entry(&r, cases[i].entry);
                test_run_free(&r);
        }
}

/* Run in the child that becomes psrun: a watcher of its own waits for psrun
 * to stop itself at run:released (PSRUN_TEST_STOP_AT), then for the
 * sandbox's init to be gone (a zombie: the command filled the workspace and
 * exited), and only then lets psrun go on. */
static char stat_state(pid_t pid)
{
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

static void stop_psrun_until_the_sandbox_is_gone(void)
{
        setenv("PSRUN_TEST_STOP_AT", "run:released", 1);
        pid_t psrun = getpid();
        if (fork() != 0)
                return;
        for (int i = 0; i < 1000 && stat_state(psrun) != 'T'; i++)
                usleep(10000);
        char path[64], buf[256] = "";
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) psrun, (int) psrun);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t n = read(fd, buf, sizeof(buf) - 1);
                buf[n > 0 ? n : 0] = '\0';
                close(fd);
        }
        /* psrun's children: this watcher and the sandbox's init. */
        pid_t init = 0;
        for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
                if ((pid_t) atoi(tok) != getpid())
                        init = (pid_t) atoi(tok);
        for (int i = 0; init > 0 && i < 1000; i++) {
                char s = stat_state(init);
                if (s == 'Z' || s == 0)
                        break;
                usleep(10000);
        }
        kill(psrun, SIGCONT);
        _exit(0);
}

Test(violations, disk_full_is_reported_when_psrun_reads_late, .timeout = 60)
{
        /* The command fills the workspace and the sandbox is gone before
         * psrun reads a message of it: the workspace must still be known
         * (the command sends it; a look through /proc/PID/root of init
         * would find nothing by then). */
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[] = {"run", "-o",     mount,  "-o",           "disk_limit=1M",
                              "--",  "/probe", "fill", "/workspace/x", NULL};
        struct test_run r;
        test_run_psrun_with(&r, argv, stop_psrun_until_the_sandbox_is_gone);
        cr_expect_str_eq(r.out, "ENOSPC 1048576\n", "%s", r.err);
        expect_only_entry(&r, "\"what\":\"disk_limit 1M: /workspace is full\",\"count\":1");
        test_run_free(&r);
}

Test(violations, benign_programs_have_none, .timeout = 120)
{
        /* What an agent runs all day: none of it is refused by any layer. */
        static const char *const scripts[] = {
                "true",
                "if command -v python3 >/dev/null; then python3 -c 'import os, subprocess, "
                "threading, json, ssl, sqlite3; subprocess.run([\"true\"])'; fi",
                "if command -v pip >/dev/null; then pip --version; fi",
                "printf '#include <stdio.h>\\nint main(){puts(\"hi\");}\\n' > h.c && "
                "if command -v gcc >/dev/null; then gcc -o h h.c && ./h; fi",
                "ls -la / >/dev/null && cat /etc/passwd | sort | uniq | wc -l && "
                "mkdir -p d/e && cp /etc/hostname d/e/x && mv d/e/x d/y && rm -r d && "
                "tar -cf t.tar /etc/hostname 2>/dev/null && id && date && uname -a && "
                "head -c 100 /dev/urandom | sha256sum && find /workspace >/dev/null && "
                "env >/dev/null",
        };
        for (size_t i = 0; i < ARRAY_SIZE(scripts); i++) {
                struct test_run r;
                const char *opts[] = {"-o", "violations=full", NULL};
                const char *cmd[] = {"/bin/sh", "-c", scripts[i], NULL};
                run_cmd(&r, opts, cmd);
                cr_expect_eq(r.status, 0, "%s: %s", scripts[i], r.err);
                cr_expect_str_eq(violations_of(r.result), "", "%s: %s", scripts[i], r.result);
                test_run_free(&r);
        }
}

Test(violations, ps_probes_numa_once_as_documented)
{
        /* procps-ng's ps tries set_mempolicy(MPOL_PREFERRED_MANY) to see
         * whether NUMA policies exist and goes on without: refused, so
         * reported (docs/security.md, "What benign programs show"). */
        if (access("/usr/bin/ps", X_OK) != 0 && access("/bin/ps", X_OK) != 0)
                cr_skip_test("ps is not installed");
        struct test_run r;
        const char *cmd[] = {"/bin/sh", "-c", "ps >/dev/null", NULL};
        run_cmd(&r, NULL, cmd);
        cr_expect_eq(r.status, 0, "%s", r.err);
        const char *list = violations_of(r.result);
        if (list[0])
                expect_only_entry(&r,
                                  "{\"layer\":\"seccomp\",\"what\":\"set_mempolicy\",\"count\":1");
        test_run_free(&r);
}

Test(violations, off_reports_nothing)
{
        struct test_run r;
        const char *opts[] = {"-o", "violations=off", NULL};
        const char *cmd[] = {"/probe", "syscall", "ptrace", NULL};
        run_cmd(&r, opts, cmd);
        cr_expect_str_eq(r.out, "EPERM\n", "the filter refuses as before: %s", r.err);
        cr_expect_null(strstr(r.result, "violations"), "%s", r.result);
        test_run_free(&r);
}

Test(violations, a_layer_that_cannot_report_says_so_once)
{
        struct test_run r;
        const char *cmd[] = {"/probe", "syscall", "getpid", NULL};
        run_cmd(&r, NULL, cmd);
        struct audit_state st = {0};
        psrun_error err = {0};
        bool landlock_logs =
                audit_query(&st, &err) == 0 && st.enabled && st.failure != AUDIT_FAILURE_PANIC;
        const char *un = strstr(r.result, "\"violations_unavailable\":");
        int abi = landlock_abi();
        if (abi >= LANDLOCK_LOG_ABI && landlock_logs) {
                cr_expect(!un || !strstr(un, "\"landlock\""), "%s", r.result);
        } else if (abi > 0) {
                cr_expect_not_null(un, "%s", r.result);
                const char *why = abi < LANDLOCK_LOG_ABI ? "\"landlock\":\"Landlock ABI "
                                                         : "\"landlock\":\"kernel audit is off";
                cr_expect_not_null(strstr(r.result, why), "want %s: %s", why, r.result);
                const char *first = strstr(un, "\"landlock\":\"");
                cr_expect_null(strstr(first + 1, "\"landlock\":\""), "named twice: %s", r.result);
        }
        test_run_free(&r);
}

static void in_a_new_netns(void)
{
        if (unshare(CLONE_NEWNET) < 0)
                _exit(98);
}

Test(violations, outside_the_hosts_netns_the_audit_layers_say_they_cannot_report)
{
        /* The kernel multicasts audit records in the host's network
         * namespace only: elsewhere psrun's socket would hear nothing, and
         * an empty list would look like "nothing refused". */
        if (landlock_abi() <= 0)
                cr_skip_test("no Landlock on this kernel");
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[] = {"run", "-o", mount, "--", "/probe", "syscall", "ptrace", NULL};
        struct test_run r;
        test_run_psrun_with(&r, argv, in_a_new_netns);
        cr_assert_neq(r.status, 98, "unshare(CLONE_NEWNET) failed");
        expect_only_entry(&r, "\"what\":\"ptrace\"");
        /* Every layer that logs through audit says so; where Landlock
         * cannot log at all (ABI < 7, as the VM's 6.1), that comes first,
         * and AppArmor, where the host has it, names the namespace. */
        const char *why = landlock_abi() >= 7 ? "\"landlock\":\"psrun runs outside the host's "
                                                "network namespace"
                                              : "\"landlock\":\"Landlock ABI ";
        cr_expect_not_null(strstr(r.result, why), "%s", r.result);
        if (access("/sys/kernel/security/apparmor", F_OK) == 0)
                cr_expect_not_null(strstr(r.result, "\"apparmor\":\"psrun runs outside the host's "
                                                    "network namespace"),
                                   "%s", r.result);
        test_run_free(&r);
}

/* psrun itself under a seccomp filter with a listener (as under a
 * container engine that intercepts syscalls): the kernel allows the
 * sandbox no second listener. It notifies acct, which nothing here calls. */
static void under_a_listener(void)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_acct, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = {ARRAY_SIZE(f), f};
        /* Root: CAP_SYS_ADMIN allows the filter without no_new_privs. */
        long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                          &fp);
        /* A listener counts only while its supervisor holds it: kept open
         * across psrun's execve. */
        if (fd < 0 || fcntl((int) fd, F_SETFD, 0) < 0)
                _exit(99);
}

Test(violations, under_another_listener_refusals_hold_and_the_result_says_why)
{
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[] = {"run", "-o", mount, "--", "/probe", "syscall", "ptrace", NULL};
        struct test_run r;
        test_run_psrun_with(&r, argv, under_a_listener);
        cr_assert_neq(r.status, 99, "could not install the test's filter");
        cr_expect_str_eq(r.out, "EPERM\n", "%s", r.err);
        cr_expect_str_eq(violations_of(r.result), "", "%s", r.result);
        cr_expect_not_null(strstr(r.result, "\"seccomp\":\"psrun runs under a seccomp filter"),
                           "%s", r.result);
        test_run_free(&r);
}

Test(violations, under_another_listener_an_own_filter_is_not_reported_either)
{
        /* Without a listener of psrun's (the plain program loaded) nothing
         * of seccomp is reported, a filter of the command's own included;
         * the result says so once, for the whole layer. */
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[] = {"run",       "-o",      mount,    "--", "/probe",
                              "ownfilter", "seccomp", "keyctl", NULL};
        struct test_run r;
        test_run_psrun_with(&r, argv, under_a_listener);
        cr_assert_neq(r.status, 99, "could not install the test's filter");
        cr_expect_str_eq(r.out, "ok EPERM\n", "%s", r.err);
        cr_expect_str_eq(violations_of(r.result), "", "%s", r.result);
        cr_expect_not_null(strstr(r.result, "\"seccomp\":\"psrun runs under a seccomp filter"),
                           "%s", r.result);
        test_run_free(&r);
}

#define OWN_FILTER_ENTRY                                                                           \
        "{\"layer\":\"seccomp\",\"what\":\"the command installed its own seccomp filter: "         \
        "refusals behind it are not reported\",\"count\":"

Test(violations, a_command_that_stacks_its_own_filter_says_so)
{
        /* The probe stacks a filter refusing keyctl with EPERM, then calls
         * keyctl: psrun refuses it too, but the probe's ERRNO outranks
         * psrun's notification, so that refusal can no longer be listed.
         * The install is, by either call that makes one; the install
         * itself runs as the default profile allows. */
        static const char *const ways[] = {"seccomp", "prctl"};
        for (size_t i = 0; i < ARRAY_SIZE(ways); i++) {
                struct test_run r;
                const char *cmd[] = {"/probe", "ownfilter", ways[i], "keyctl", NULL};
                run_cmd(&r, NULL, cmd);
                cr_expect_str_eq(r.out, "ok EPERM\n", "%s: %s", ways[i], r.err);
                cr_expect_eq(r.status, 0, "%s", ways[i]);
                expect_only_entry(&r, OWN_FILTER_ENTRY "1,\"pid\":2}");
                test_run_free(&r);
        }
        /* Without one, the same refusal is listed as itself. */
        struct test_run r;
        const char *plain[] = {"/probe", "syscall", "keyctl", NULL};
        run_cmd(&r, NULL, plain);
        expect_only_entry(&r, "{\"layer\":\"seccomp\",\"what\":\"keyctl\",\"count\":1,\"pid\":2}");
        test_run_free(&r);
}

Test(violations, own_filters_are_counted_per_process_in_full)
{
        /* Two processes each stack one; a third that stacks none adds
         * nothing. */
        struct test_run r;
        const char *full[] = {"-o", "violations=full", NULL};
        const char *cmd[] = {"/bin/sh", "-c",
                             "/probe ownfilter seccomp getppid; /probe ownfilter prctl bpf; "
                             "/probe status >/dev/null",
                             NULL};
        run_cmd(&r, full, cmd);
        cr_expect_str_eq(r.out, "ok EPERM\nok EPERM\n", "%s", r.err);
        const char *list = violations_of(r.result);
        cr_expect_eq(count_entries(list), 2, "[%s]", list);
        const char *first = strstr(list, OWN_FILTER_ENTRY "1,\"pid\":");
        cr_assert_not_null(first, "[%s]", list);
        cr_expect_not_null(strstr(first + 1, OWN_FILTER_ENTRY "1,\"pid\":"), "[%s]", list);
        test_run_free(&r);
        /* Off: no listener; the install still runs. */
        const char *off[] = {"-o", "violations=off", NULL};
        const char *one[] = {"/probe", "ownfilter", "seccomp", "keyctl", NULL};
        run_cmd(&r, off, one);
        cr_expect_str_eq(r.out, "ok EPERM\n", "%s", r.err);
        cr_expect_str_eq(violations_of(r.result), "(missing)");
        test_run_free(&r);
}

/* AUDIT_SET enabled: the test's, never psrun's (psrun only reads). */
static int set_audit_enabled(uint32_t on)
{
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
        if (fd < 0)
                return -errno;
        struct {
                struct nlmsghdr h;
                struct audit_status s;
        } req = {
                .h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct audit_status)),
                      .nlmsg_type = AUDIT_SET,
                      .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK},
                .s = {.mask = AUDIT_STATUS_ENABLED, .enabled = on},
        };
        struct sockaddr_nl k = {.nl_family = AF_NETLINK};
        int r = sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *) &k, sizeof(k)) < 0 ? -errno
                                                                                            : 0;
        char ack[256];
        if (r == 0 && recv(fd, ack, sizeof(ack), 0) < 0)
                r = -errno;
        close(fd);
        return r;
}

Test(violations, landlock_refusals_come_from_the_audit_log, .timeout = 60)
{
        if (landlock_abi() < LANDLOCK_LOG_ABI)
                cr_skip_test("Landlock ABI %d logs no denials (ABI %d, Linux 6.15, does)",
                             landlock_abi(), LANDLOCK_LOG_ABI);
        struct audit_state st = {0};
        psrun_error err = {0};
        if (audit_query(&st, &err) < 0)
                cr_skip_test("cannot read the kernel's audit state: %s", err.msg);
        if (st.failure == AUDIT_FAILURE_PANIC)
                cr_skip_test("this host's audit failure mode is panic");
        bool switched = false;
        if (!st.enabled) {
                /* Switching audit on is host-wide and lasts: every process
                 * started afterwards carries syscall auditing until reboot. */
                const char *allow = getenv("PSRUN_TEST_AUDIT");
                if (!allow || strcmp(allow, "1") != 0)
                        cr_skip_test("kernel audit is off on this host, so Landlock logs nothing; "
                                     "turning it on is host-wide and lasts until reboot, so this "
                                     "test does it only with PSRUN_TEST_AUDIT=1");
                cr_assert_eq(set_audit_enabled(1), 0, "AUDIT_SET");
                switched = true;
        }
        struct test_run r;
        /* A write Landlock refuses (procfs is writable, /proc is not one of
         * the writable paths), twice to the same file (the shell's, not
         * /proc/self: each probe has a pid, and so a path, of its own), and
         * a signal to psrun's init (outside the command's domain). As root
         * inside: the kernel checks the ids before it asks Landlock, and
         * uid 1000 may not signal init. */
        const char *opts[] = {"-o", "user=root", NULL};
        const char *cmd[] = {"/bin/sh", "-c",
                             "/probe openrw /proc/$$/oom_score_adj; /probe signal 1 0; "
                             "/probe openrw /proc/$$/oom_score_adj",
                             NULL};
        run_cmd(&r, opts, cmd);
        if (switched)
                (void) set_audit_enabled(0);
        cr_expect_str_eq(r.out, "EACCES\nEPERM\nEACCES\n", "%s", r.err);
        const char *list = violations_of(r.result);
        cr_expect_eq(count_entries(list), 2, "[%s]", list);
        cr_expect_not_null(strstr(list, "{\"layer\":\"landlock\",\"what\":\"write_file "
                                        "/proc/"),
                           "[%s]", list);
        cr_expect_not_null(strstr(list, "/oom_score_adj\",\"count\":2}"), "[%s]", list);
        cr_expect_not_null(strstr(list, "{\"layer\":\"landlock\",\"what\":\"signal pid 1\","
                                        "\"count\":1}"),
                           "[%s]", list);
        cr_expect_null(strstr(r.result, "\"violations_unavailable\""), "%s", r.result);
        test_run_free(&r);
}

Test(violations, apparmor_refusals_name_the_operation_and_path)
{
        /* psrun-default denies reading /proc/kcore (a mask of /dev/null
         * there, so nothing else refuses the read first). The shell that
         * is refused lives on a while: AppArmor's records name the process
         * by pid only, and one that is gone when psrun reads the record
         * cannot be placed (docs/security.md). Hosts with AppArmor only:
         * the kernel-matrix VM. */
        struct test_run r;
        const char *cmd[] = {"/bin/sh", "-c", ": < /proc/kcore; sleep 1", NULL};
        run_cmd(&r, NULL, cmd);
        if (!strstr(r.result, "\"apparmor\":\"on\""))
                cr_skip_test("AppArmor is not in force here (layers: %s)", field(&r, "layers"));
        expect_only_entry(&r, "{\"layer\":\"apparmor\",\"what\":\"open /proc/kcore\",\"count\":1,"
                              "\"pid\":2}");
        test_run_free(&r);
}
