/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The session tier: sessions through the public API and the CLI. Each test
 * gets its own state directory (a fresh $PSRUN_SESSION_ROOT) and checks at
 * the end that the session left nothing: no state, no supervisor, no
 * cgroup of its supervisor's.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <psrun.h>

#include "common/clock.h"
#include "lib/testlib.h"

struct sess {
        char root[64];
        psrun_session *s;
        int supervisor;
};

/* Read "pid N" from the session's info file. */
static inline int sess_supervisor_pid(const struct sess *t, const char *id)
{
        char path[256];
        snprintf(path, sizeof(path), "%s/%s/info", t->root, id);
        FILE *f = fopen(path, "re");
        int pid = 0;
        if (f) {
                if (fscanf(f, "pid %d", &pid) != 1)
                        pid = 0;
                fclose(f);
        }
        return pid;
}

/* A fresh state root, exported for the CLI; then a session with the given
 * -o style settings (NULL-terminated "key", "value" pairs). */
static inline void sess_start(struct sess *t, const char *const *kv)
{
        test_require_root();
        test_tmp_template(t->root, sizeof(t->root), "psrun-sess");
        cr_assert_not_null(mkdtemp(t->root));
        setenv("PSRUN_SESSION_ROOT", t->root, 1);
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        for (size_t i = 0; kv && kv[i]; i += 2)
                cr_assert_eq(psrun_policy_set(p, kv[i], kv[i + 1], &err), 0, "%s", err.msg);
        psrun_session_options o = {.name = "t"};
        int r = psrun_session_create(p, &o, &t->s, &err);
        psrun_policy_free(p);
        cr_assert_eq(r, 0, "create: %s", err.msg);
        t->supervisor = sess_supervisor_pid(t, "t");
        cr_assert_gt(t->supervisor, 0);
}

/* A session with the given settings (as sess_start's) fails to be
 * created, in one line holding WANT; nothing is left in its fresh root. */
static inline void sess_expect_create_fails(const char *const *kv, const char *want)
{
        char root[64];
        test_tmp_template(root, sizeof(root), "psrun-sess");
        cr_assert_not_null(mkdtemp(root));
        setenv("PSRUN_SESSION_ROOT", root, 1);
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        for (size_t i = 0; kv && kv[i]; i += 2)
                cr_assert_eq(psrun_policy_set(p, kv[i], kv[i + 1], &err), 0, "%s", err.msg);
        psrun_session_options o = {.name = "t"};
        psrun_session *s = NULL;
        int r = psrun_session_create(p, &o, &s, &err);
        psrun_policy_free(p);
        cr_expect_lt(r, 0, "created; wanted: %s", want);
        cr_expect(strstr(err.msg, want), "got: %s\nwant: %s", err.msg, want);
        cr_expect_null(strchr(err.msg, '\n'), "%s", err.msg);
        if (s)
                psrun_session_destroy(s, &err);
        cr_expect_eq(rmdir(root), 0, "%s is not empty after a failed create", root);
}

/* Gone, or a zombie: a test process may be a child subreaper, and then
 * the supervisor becomes its child when the creating fork exits. A zombie
 * that its parent reaps meanwhile reads as dead ('X') or not at all: gone
 * too (counting it alive made `supervisor N still alive` flakes where the
 * parent, as the test VM's init does, reaps late). */
static inline bool sess_pid_gone(int pid)
{
        (void) waitpid(pid, NULL, WNOHANG);
        if (kill(pid, 0) < 0)
                return true;
        char path[64], state = 0;
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return true;
        if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
                state = 0;
        fclose(f);
        return state == 'Z' || state == 'X' || state == 0;
}

/* A bound, not a guess of how long it takes: a supervisor is gone tens of
 * milliseconds after destroy returns, also in the emulated VM; the wait
 * ends when the kernel says so. This only stops one that really lingers,
 * inside the tests' 30 s timeouts. */
#define SESS_GONE_CAP_MS 20000

/* Until pid has exited (a zombie counts, see sess_pid_gone), told by the
 * kernel through a pidfd rather than guessed by polling, so that a slow
 * machine makes the wait longer, never wrong; at most cap_ms. */
static inline bool sess_wait_gone(int pid, int cap_ms)
{
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
                return sess_pid_gone(pid);
        uint64_t start = monotonic_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n;
        do {
                uint64_t waited = monotonic_ms() - start;
                n = poll(&p, 1, waited >= (uint64_t) cap_ms ? 0 : cap_ms - (int) waited);
        } while (n < 0 && errno == EINTR);
        if (n > 0) {
                /* Reaped if it is ours. */
                siginfo_t si;
                (void) waitid((idtype_t) P_PIDFD, (id_t) fd, &si, WEXITED | WNOHANG);
        }
        close(fd);
        return n > 0;
}

/* What the kernel says pid is doing, for a failure message: its state, the
 * function it sleeps in, its system call (231, exit_group: in its exit;
 * "running" when it runs). */
static inline void sess_proc_doing(int pid, char *buf, size_t len)
{
        char path[64], wchan[64] = "?", sc[64] = "?", state = '?';
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        FILE *f = fopen(path, "re");
        if (f) {
                if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
                        state = '?';
                fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
        if ((f = fopen(path, "re"))) {
                if (!fgets(wchan, sizeof(wchan), f))
                        snprintf(wchan, sizeof(wchan), "?");
                fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
        if ((f = fopen(path, "re"))) {
                if (fscanf(f, "%63s", sc) != 1)
                        snprintf(sc, sizeof(sc), "?");
                fclose(f);
        }
        snprintf(buf, len, "state %c, in %s, syscall %s", state, wchan, sc);
}

/* Nothing of the session is left: its directory, its supervisor, its
 * cgroups (named after the supervisor). */
static inline void sess_expect_gone(struct sess *t)
{
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t->root);
        /* An expiring session's results are sent before it is gone. */
        bool gone = !t->supervisor || sess_wait_gone(t->supervisor, SESS_GONE_CAP_MS);
        char doing[192] = "";
        if (!gone)
                sess_proc_doing(t->supervisor, doing, sizeof(doing));
        struct stat st;
        cr_expect(stat(dir, &st) < 0 && errno == ENOENT, "state dir %s left", dir);
        cr_expect(gone, "supervisor %d still alive after %d s (%s)", t->supervisor,
                  SESS_GONE_CAP_MS / 1000, doing);
        char why[512];
        cr_expect(test_no_cgroup_leftovers_of(t->supervisor, why, sizeof(why)), "session left: %s",
                  why);
}

static inline void sess_end(struct sess *t)
{
        if (t->s) {
                psrun_error err = {0};
                cr_expect_eq(psrun_session_destroy(t->s, &err), 0, "destroy: %s", err.msg);
                t->s = NULL;
        }
        sess_expect_gone(t);
        rmdir(t->root);
}

/* Run a shell line, expect it to exit 0; returns the result (free it). */
static inline psrun_exec_result sess_sh(struct sess *t, const char *line,
                                        const psrun_exec_options *o)
{
        psrun_exec_result res;
        psrun_error err = {0};
        int r = psrun_exec_shell(t->s, line, o, &res, &err);
        cr_assert_eq(r, 0, "exec `%s`: %s", line, err.msg);
        return res;
}

static inline void sess_sh_ok(struct sess *t, const char *line)
{
        psrun_exec_result res = sess_sh(t, line, NULL);
        cr_expect_eq(res.result.exit_code, 0, "`%s`: exit %d (%s) stderr: %s", line,
                     res.result.exit_code, res.result.reason, res.stderr_data);
        psrun_exec_result_free(&res);
}
