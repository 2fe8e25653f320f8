/* SPDX-License-Identifier: MIT */
/*
 * OCI hooks: real hook processes (/bin/sh scripts), no privileges needed.
 * Each test gets its own temporary directory, where the hooks leave what
 * they saw.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "runtime/oci/hooks.h"

static char tmp_dir[PATH_MAX];

static void setup(void)
{
        test_tmp_template(tmp_dir, sizeof(tmp_dir), "psrun-oci-hooks");
        cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static void teardown(void)
{
        nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(oci_hooks, .init = setup, .fini = teardown, .timeout = 30);

/* ---- helpers ---- */

static char *path_in(const char *name)
{
        static char bufs[4][PATH_MAX];
        static int next;
        char *buf = bufs[next++ % 4];

        snprintf(buf, PATH_MAX, "%s/%s", tmp_dir, name);
        return buf;
}

/* A script for /bin/sh -c, with every "@" replaced by the temporary dir. */
static char *script(const char *fmt)
{
        static char bufs[4][8192];
        static int next;
        char *buf = bufs[next++ % 4];
        size_t n = 0, size = sizeof(bufs[0]);

        for (const char *p = fmt; *p; p++) {
                if (*p == '@')
                        n += (size_t) snprintf(buf + n, size - n, "%s", tmp_dir);
                else
                        buf[n++] = *p;
                cr_assert_lt(n, size - 1, "script too long");
        }
        buf[n] = '\0';
        return buf;
}

/* A hook running `/bin/sh -c text`, no env, no timeout. */
static struct oci_hook sh_hook(char **argv, const char *text)
{
        argv[0] = "sh";
        argv[1] = "-c";
        argv[2] = script(text);
        argv[3] = NULL;
        return (struct oci_hook){.path = "/bin/sh", .args = argv, .n_args = 3};
}

static char *read_file(const char *path, size_t *len)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
        char *buf = NULL;
        size_t size = 0;
        FILE *mem = open_memstream(&buf, &size);
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                fwrite(chunk, 1, n, mem);
        fclose(mem);
        if (len)
                *len = size;
        return buf;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Gone or a zombie (waiting for whoever it was reparented to). */
static bool process_dead(pid_t pid)
{
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return true;
        buf[n] = '\0';
        char *paren = strrchr(buf, ')');
        return paren && (paren[2] == 'Z' || paren[2] == 'X');
}

static void assert_no_children(void)
{
        errno = 0;
        cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1, "a child is left");
        cr_assert_eq(errno, ECHILD);
}

static char *big_state(size_t len)
{
        char *s = malloc(len + 1);
        cr_assert_not_null(s);
        for (size_t i = 0; i < len; i++)
                s[i] = (char) ('a' + i % 26);
        s[len] = '\0';
        return s;
}

static const char state[] = "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":\"creating\","
                            "\"pid\":42,\"bundle\":\"/b\"}";

/* ---- stdin, argv, env ---- */

Test(oci_hooks, state_reaches_stdin)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "cat > @/state");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        size_t len;
        _cleanup_free_ char *got = read_file(path_in("state"), &len);
        cr_assert_eq(len, strlen(state));
        cr_assert_str_eq(got, state);
        assert_no_children();
}

Test(oci_hooks, big_state_reaches_stdin)
{
        const size_t len = 200 << 10;
        _cleanup_free_ char *big = big_state(len);
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "cat > @/state");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, big, len, &err), 0, "%s", err.msg);
        size_t got_len;
        _cleanup_free_ char *got = read_file(path_in("state"), &got_len);
        cr_assert_eq(got_len, len);
        cr_assert_eq(memcmp(got, big, len), 0);
}

Test(oci_hooks, empty_state_gives_eof)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "cat > @/state");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, NULL, 0, &err), 0, "%s", err.msg);
        size_t len;
        _cleanup_free_ char *got = read_file(path_in("state"), &len);
        cr_assert_eq(len, 0);
}

/* A big state the hook never reads: no hang, no SIGPIPE (its default
 * action would kill this test), nothing left pending. */
Test(oci_hooks, unread_big_state)
{
        const size_t len = 200 << 10;
        _cleanup_free_ char *big = big_state(len);
        const char *scripts[] = {
                "exit 0",
                "sleep 0.2; exit 0",
                "exec 0<&-; sleep 0.2; exit 0",
                "head -c 10 > /dev/null; exit 0",
        };

        for (size_t i = 0; i < ARRAY_SIZE(scripts); i++) {
                char *argv[4];
                struct oci_hook h = sh_hook(argv, scripts[i]);
                psrun_error err = {0};
                double t0 = now_s();

                cr_assert_eq(oci_hook_run(OCI_HOOK_POSTSTOP, 0, &h, big, len, &err), 0, "%s: %s",
                             scripts[i], err.msg);
                cr_assert_lt(now_s() - t0, 5.0, "%s", scripts[i]);
                sigset_t pending;
                sigpending(&pending);
                cr_assert_not(sigismember(&pending, SIGPIPE), "%s", scripts[i]);
                sigset_t mask;
                pthread_sigmask(SIG_SETMASK, NULL, &mask);
                cr_assert_not(sigismember(&mask, SIGPIPE), "mask restored");
        }
        assert_no_children();
}

static void assert_file_bytes(const char *name, const char *want, size_t want_len)
{
        size_t len;
        _cleanup_free_ char *got = read_file(path_in(name), &len);
        cr_assert_eq(len, want_len, "%s: %zu bytes, want %zu", name, len, want_len);
        cr_assert_eq(memcmp(got, want, len), 0, "%s differs", name);
}

Test(oci_hooks, args_and_env_exact)
{
        /* /proc/$$/cmdline and environ are what execve() got, byte for byte. */
        char *text = script(
                "/bin/cat /proc/$$/cmdline > @/cmdline; /bin/cat /proc/$$/environ > @/environ");
        char *argv[] = {"my-hook", "-c", text, "zero", "one two", "", NULL};
        char *env[] = {"A=1", "B=two words", "EMPTY=", "PATH=/nowhere", NULL};
        struct oci_hook h = {.path = "/bin/sh", .args = argv, .n_args = 6, .env = env, .n_env = 4};
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_CREATE_RUNTIME, 0, &h, state, strlen(state), &err), 0,
                     "%s", err.msg);

        char want[8192];
        size_t n = 0;
        for (char **a = argv; *a; a++)
                n += (size_t) snprintf(want + n, sizeof(want) - n, "%s", *a) + 1;
        assert_file_bytes("cmdline", want, n);
        const char want_env[] = "A=1\0B=two words\0EMPTY=\0PATH=/nowhere";
        assert_file_bytes("environ", want_env, sizeof(want_env));
}

Test(oci_hooks, env_empty_when_none)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "cat /proc/$$/environ > @/environ");
        psrun_error err = {0};

        setenv("PSRUN_TEST_LEAK", "1", 1);
        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        assert_file_bytes("environ", "", 0);
}

Test(oci_hooks, argv_is_path_when_no_args)
{
        char *hook_path = path_in("hook.sh");
        FILE *f = fopen(hook_path, "we");
        cr_assert_not_null(f);
        fprintf(f, "#!/bin/sh\ncat /proc/$$/cmdline > %s/cmdline\n", tmp_dir);
        fclose(f);
        cr_assert_eq(chmod(hook_path, 0755), 0);
        struct oci_hook h = {.path = hook_path};
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        /* The kernel runs "#!/bin/sh" as {"/bin/sh", path}: argv[0] was path
         * and nothing followed it. */
        char want[PATH_MAX + 16];
        int n = snprintf(want, sizeof(want), "/bin/sh%c%s", '\0', hook_path);
        assert_file_bytes("cmdline", want, (size_t) n + 1);
}

/* ---- what the hook inherits ---- */

Test(oci_hooks, no_fd_leaks)
{
        /* Not O_CLOEXEC, at a low and a high number. */
        int low = open("/dev/null", O_RDONLY);
        cr_assert_geq(low, 3);
        cr_assert_eq(dup2(low, 200), 200);
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "for n in 3 4 5 6 7 8 9 200; do "
                                          "[ -e /proc/$$/fd/$n ] && echo $n; done > @/fds; "
                                          "ls /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2 "
                                          "> /dev/null");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        size_t len;
        _cleanup_free_ char *fds = read_file(path_in("fds"), &len);
        cr_assert_eq(len, 0, "fds leaked to the hook: %s", fds);
        close(low);
        close(200);
}

Test(oci_hooks, signals_reset)
{
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGUSR1);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, NULL);
        signal(SIGHUP, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        /* Signal 32, which glibc's sigaction() refuses to touch: once seen
         * ignored in a CI run's environment, and inherited by the hook. */
        struct {
                void (*handler)(int);
                unsigned long flags;
                void (*restorer)(void);
                unsigned long mask;
        } ign = {.handler = SIG_IGN};
        cr_assert_eq(syscall(SYS_rt_sigaction, 32, &ign, NULL, sizeof(ign.mask)), 0);
        char *argv[4];
        /* grep reads its own status, having replaced the shell: dash blocks
         * every signal around its own vfork, so the shell's status read from
         * a child races with that window (a flaky fffffffe7ffbfeff). */
        struct oci_hook h = sh_hook(argv, "exec grep -E '^Sig(Blk|Ign)' /proc/self/status > @/sig");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        _cleanup_free_ char *sig = read_file(path_in("sig"), NULL);
        cr_assert_str_eq(sig, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

Test(oci_hooks, own_process_group)
{
        char *argv[4];
        /* Field 5 of /proc/<pid>/stat is the process group. */
        struct oci_hook h = sh_hook(argv, "cut -d' ' -f5 /proc/$$/stat > @/pgid; echo $$ > @/pid");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        _cleanup_free_ char *pgid = read_file(path_in("pgid"), NULL);
        _cleanup_free_ char *pid = read_file(path_in("pid"), NULL);
        cr_assert_str_eq(pgid, pid);
}

/* Criterion's worker may have 0-2 closed in odd setups; pipe() then returns
 * them, and the child's dup2() onto 0-2 must still be right. */
Test(oci_hooks, caller_with_stdio_closed)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(0);
                close(1);
                close(2);
                char *argv[4];
                struct oci_hook h = sh_hook(argv, "cat > @/state; echo err >&2; echo out");
                psrun_error err = {0};
                _exit(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err) == 0 ? 0
                                                                                              : 1);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
        _cleanup_free_ char *got = read_file(path_in("state"), NULL);
        cr_assert_str_eq(got, state);
}

static void on_sigchld(int sig)
{
        (void) sig;
}

/* A SIGCHLD handler without SA_RESTART interrupts poll(): no harm. */
Test(oci_hooks, sigchld_handler_installed)
{
        struct sigaction sa = {.sa_handler = on_sigchld};
        sigaction(SIGCHLD, &sa, NULL);
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "sleep 0.1 & sleep 0.2; cat > @/state; exit 0");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        _cleanup_free_ char *got = read_file(path_in("state"), NULL);
        cr_assert_str_eq(got, state);
}

/* ---- failures ---- */

Test(oci_hooks, exit_status_with_last_stderr_line)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "echo on stdout; echo first >&2; "
                                          "printf '  last\\tline \\n\\n  \\n' >&2; exit 3");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), -EPROTO);
        cr_assert_str_eq(err.msg, "hooks: prestart[0] /bin/sh: exited with status 3: last line");
        cr_assert_eq(err.code, EPROTO);
}

Test(oci_hooks, exit_status_with_stdout_line)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "echo one; printf 'two\\033[31m'; exit 1");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_POSTSTART, 2, &h, state, strlen(state), &err), -EPROTO);
        cr_assert_str_eq(err.msg, "hooks: poststart[2] /bin/sh: exited with status 1: two?[31m");
}

Test(oci_hooks, exit_status_silent)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "exit 42");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_CREATE_CONTAINER, 1, &h, state, strlen(state), &err),
                     -EPROTO);
        cr_assert_str_eq(err.msg, "hooks: createContainer[1] /bin/sh: exited with status 42");
}

Test(oci_hooks, killed_by_signal)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "echo dying >&2; kill -SEGV $$");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_START_CONTAINER, 0, &h, state, strlen(state), &err),
                     -EPROTO);
        cr_assert_str_eq(err.msg, "hooks: startContainer[0] /bin/sh: killed by SIGSEGV: dying");
}

/* More output than is kept: the tail is what counts, and a hook flooding
 * its pipes doesn't block. */
Test(oci_hooks, flood_keeps_tail)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "head -c 300000 /dev/zero | tr '\\0' x; "
                                          "head -c 300000 /dev/zero | tr '\\0' y >&2; "
                                          "echo; echo >&2; echo the end >&2; exit 9");
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), -EPROTO);
        cr_assert_str_eq(err.msg, "hooks: prestart[0] /bin/sh: exited with status 9: the end");
}

Test(oci_hooks, nonexistent_path)
{
        struct oci_hook h = {.path = "/nonexistent/hook"};
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_CREATE_RUNTIME, 0, &h, state, strlen(state), &err),
                     -ENOENT);
        cr_assert_str_eq(
                err.msg,
                "hooks: createRuntime[0] /nonexistent/hook: exec: No such file or directory");
        assert_no_children();
}

Test(oci_hooks, not_executable)
{
        char *hook_path = path_in("plain");
        FILE *f = fopen(hook_path, "we");
        cr_assert_not_null(f);
        fputs("#!/bin/sh\nexit 0\n", f);
        fclose(f);
        /* No x bit at all: even root gets EACCES. */
        chmod(hook_path, 0644);
        struct oci_hook h = {.path = hook_path};
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), -EACCES);
        cr_assert(strstr(err.msg, ": exec: Permission denied"), "%s", err.msg);
}

Test(oci_hooks, no_path)
{
        struct oci_hook h = {0};
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 3, &h, state, strlen(state), &err), -EINVAL);
        cr_assert_str_eq(err.msg, "hooks: prestart[3] (null): no path");
}

/* ---- timeout ---- */

Test(oci_hooks, timeout_kills_the_group)
{
        char *argv[4];
        /* The background sleep is in the hook's process group; it must die
         * too. The hook itself ignores SIGTERM: only SIGKILL works. */
        struct oci_hook h = sh_hook(argv, "trap '' TERM; sleep 100 & echo $! > @/bg; "
                                          "echo started >&2; wait");
        h.timeout = (struct oci_opt_i64){.set = true, .value = 1};
        psrun_error err = {0};
        double t0 = now_s();

        cr_assert_eq(oci_hook_run(OCI_HOOK_POSTSTART, 1, &h, state, strlen(state), &err),
                     -ETIMEDOUT);
        double took = now_s() - t0;
        cr_assert_str_eq(err.msg, "hooks: poststart[1] /bin/sh: timed out after 1 s");
        cr_assert_geq(took, 0.95, "took %.3f s", took);
        cr_assert_lt(took, 2.5, "took %.3f s", took);
        assert_no_children();

        _cleanup_free_ char *bg = read_file(path_in("bg"), NULL);
        pid_t bg_pid = atoi(bg);
        cr_assert_gt(bg_pid, 0);
        bool dead = false;
        for (int i = 0; i < 100 && !dead; i++) {
                dead = process_dead(bg_pid);
                if (!dead)
                        usleep(10000);
        }
        cr_assert(dead, "background process %d of the hook survived", (int) bg_pid);
}

/* With no timeout, a hook that exits is done even if a process it left holds
 * its stdout: don't wait for EOF. */
Test(oci_hooks, exit_does_not_wait_for_leftovers)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "sleep 3 & echo $! > @/bg; exit 0");
        psrun_error err = {0};
        double t0 = now_s();

        cr_assert_eq(oci_hook_run(OCI_HOOK_POSTSTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        cr_assert_lt(now_s() - t0, 2.0);
        _cleanup_free_ char *bg = read_file(path_in("bg"), NULL);
        kill(atoi(bg), SIGKILL);
}

Test(oci_hooks, timeout_not_reached)
{
        char *argv[4];
        struct oci_hook h = sh_hook(argv, "cat > @/state");
        h.timeout = (struct oci_opt_i64){.set = true, .value = 30};
        psrun_error err = {0};

        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
        h.timeout.value = INT64_MAX;
        cr_assert_eq(oci_hook_run(OCI_HOOK_PRESTART, 0, &h, state, strlen(state), &err), 0, "%s",
                     err.msg);
}

/* ---- lists ---- */

Test(oci_hooks, list_runs_in_order_and_stops_at_first_failure)
{
        char *a0[4], *a1[4], *a2[4];
        struct oci_hook hooks[] = {
                sh_hook(a0, "echo 0 >> @/order"),
                sh_hook(a1, "echo 1 >> @/order; echo nope >&2; exit 5"),
                sh_hook(a2, "echo 2 >> @/order"),
        };
        struct oci_hook_list list = {.hooks = hooks, .n = 3};
        psrun_error err = {0};

        cr_assert_eq(oci_hooks_run(OCI_HOOK_PRESTART, &list, state, strlen(state), &err), -EPROTO);
        cr_assert_str_eq(err.msg, "hooks: prestart[1] /bin/sh: exited with status 5: nope");
        _cleanup_free_ char *order = read_file(path_in("order"), NULL);
        cr_assert_str_eq(order, "0\n1\n");
}

Test(oci_hooks, list_all_succeed)
{
        char *a0[4], *a1[4], *a2[4];
        struct oci_hook hooks[] = {
                sh_hook(a0, "echo 0 >> @/order"),
                sh_hook(a1, "echo 1 >> @/order"),
                sh_hook(a2, "cat >> @/order"),
        };
        struct oci_hook_list list = {.hooks = hooks, .n = 3};
        psrun_error err = {0};

        cr_assert_eq(oci_hooks_run(OCI_HOOK_POSTSTOP, &list, "s", 1, &err), 0, "%s", err.msg);
        _cleanup_free_ char *order = read_file(path_in("order"), NULL);
        cr_assert_str_eq(order, "0\n1\ns");

        struct oci_hook_list empty = {0};
        cr_assert_eq(oci_hooks_run(OCI_HOOK_POSTSTOP, &empty, "s", 1, &err), 0);
        cr_assert_eq(oci_hooks_run(OCI_HOOK_POSTSTOP, NULL, "s", 1, &err), 0);
        assert_no_children();
}
