/* SPDX-License-Identifier: MIT */
/*
 * The next exec made ahead (runtime/session/supervisor-backends.c,
 * sup_make_zygote): a child of the supervisor, already in the sandbox and
 * in a cgroup of its own, waiting for its request. It runs only what it is
 * given, as the exec it is given to; dies, it is replaced; and nothing of
 * it outlives the session.
 */
#include <dirent.h>
#include <sys/syscall.h>

#include "session/common.h"

/* init's pid, from the session's info file ("init N"). */
static int init_pid(const struct sess *t)
{
        char path[256], line[256];
        snprintf(path, sizeof(path), "%s/t/info", t->root);
        FILE *f = fopen(path, "re");
        int v = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "init %d", &v) == 1)
                        break;
        if (f)
                fclose(f);
        return v;
}

static int ppid_of(int pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        FILE *f = fopen(path, "re");
        int ppid = 0;
        char state = 0;
        if (f) {
                if (fscanf(f, "%*d (%*[^)]) %c %d", &state, &ppid) != 2 || state == 'Z')
                        ppid = 0;
                fclose(f);
        }
        return ppid;
}

/* Whether pid is blocked in recvmsg(2): a spare waiting for its request
 * (set up, in its cgroups). */
static bool waiting_in_recvmsg(int pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
        FILE *f = fopen(path, "re");
        long nr = -1;
        if (f) {
                if (fscanf(f, "%ld", &nr) != 1)
                        nr = -1;
                fclose(f);
        }
        return nr == SYS_recvmsg;
}

/* The supervisor's child that is not init (no exec is running), once
 * there is one, it is not `not` and it waits for its request; 0 after 5 s. */
static int wait_spare(const struct sess *t, int not )
{
        int init = init_pid(t);
        cr_assert_gt(init, 0);
        for (int i = 0; i < 500; i++) {
                DIR *d = opendir("/proc");
                cr_assert_not_null(d);
                int found = 0;
                for (struct dirent *de; !found && (de = readdir(d));) {
                        int pid = atoi(de->d_name);
                        if (pid > 0 && pid != init && pid != not &&ppid_of(pid) == t->supervisor &&
                            waiting_in_recvmsg(pid))
                                found = pid;
                }
                closedir(d);
                if (found)
                        return found;
                usleep(10000);
        }
        return 0;
}

/* The line of /proc/PID/status (or of a status text) starting with key. */
static void status_line(const char *text, const char *key, char *out, size_t len)
{
        out[0] = '\0';
        const char *p = strstr(text, key);
        if (p)
                snprintf(out, len, "%.*s", (int) strcspn(p, "\n"), p);
}

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = calloc(1, 65536);
        size_t n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* The path of the memory cgroup (v1) or of the unified one (cgroup v2
 * alone, "0::") in a /proc/PID/cgroup text, and which one it is; NULL. */
static const char *cgroup_path_of(const char *text, bool *v2)
{
        const char *p = strstr(text, ":memory:");
        *v2 = false;
        if (p)
                return p + strlen(":memory:");
        if (strncmp(text, "0::", 3) == 0 || (p = strstr(text, "\n0::"))) {
                *v2 = true;
                return (p ? p + 1 : text) + 3;
        }
        return NULL;
}

/* The last component of the memory hierarchy's line of a /proc/PID/cgroup
 * text: each exec's cgroup is its own there (psrun-SUP-K; the sandbox sees
 * the path from its cgroup namespace, the host from the root). */
static void memory_cgroup(const char *text, char *out, size_t len)
{
        out[0] = '\0';
        bool v2;
        const char *p = cgroup_path_of(text, &v2);
        if (!p)
                return;
        size_t n = strcspn(p, "\n");
        const char *e = p + n, *b = e;
        while (b > p && b[-1] != '/')
                b--;
        snprintf(out, len, "%.*s", (int) (e - b), b);
}

/* The memory cgroup's directory of a /proc/PID/cgroup text, on the host. */
static void memory_dir(const char *text, char *out, size_t len)
{
        out[0] = '\0';
        bool v2;
        const char *p = cgroup_path_of(text, &v2);
        if (p)
                snprintf(out, len, "/sys/fs/cgroup%s%.*s", v2 ? "" : "/memory",
                         (int) strcspn(p, "\n"), p);
}

static psrun_exec_result run_in(struct sess *t, const char *line, const char *cwd, const char *env)
{
        const char *envv[] = {env, NULL};
        psrun_exec_options o = {.cwd = cwd, .env = envv};
        psrun_exec_result res = sess_sh(t, line, &o);
        cr_expect_eq(res.result.exit_code, 0, "`%.60s`: %s %s %s", line, res.result.reason,
                     res.result.error, res.stderr_data);
        return res;
}

Test(spare, each_exec_through_it_is_its_own, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        sess_sh_ok(&t, "mkdir -p /workspace/a /workspace/b");
        int spare = wait_spare(&t, 0);
        cr_assert_gt(spare, 0, "no exec made ahead");
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/cgroup", spare);
        char *cg1 = slurp(path);
        cr_assert_not_null(cg1);
        char want1[512];
        memory_cgroup(cg1, want1, sizeof(want1));
        cr_assert(strstr(want1, "psrun-"), "the spare is not in an exec's cgroup: %s", cg1);

        psrun_exec_result r1 = run_in(&t, "echo one; pwd; echo \"$X\"; cat /proc/self/cgroup",
                                      "/workspace/a", "X=first");
        cr_expect(strncmp(r1.stdout_data, "one\n/workspace/a\nfirst\n", 23) == 0, "%s",
                  r1.stdout_data);
        char got1[512];
        memory_cgroup(r1.stdout_data, got1, sizeof(got1));
        cr_expect_str_eq(got1, want1, "the exec did not run in the spare's cgroup");

        /* The next one: made anew, in a cgroup of its own, and what it runs
         * is the second request alone. */
        int spare2 = wait_spare(&t, spare);
        cr_assert_gt(spare2, 0, "no exec made ahead after the first was used");
        snprintf(path, sizeof(path), "/proc/%d/cgroup", spare2);
        char *cg2 = slurp(path);
        cr_assert_not_null(cg2);
        char want2[512];
        memory_cgroup(cg2, want2, sizeof(want2));
        cr_expect_str_neq(want2, want1);
        psrun_exec_result r2 = run_in(&t, "echo two; pwd; echo \"$X\"; cat /proc/self/cgroup",
                                      "/workspace/b", "X=second");
        cr_expect(strncmp(r2.stdout_data, "two\n/workspace/b\nsecond\n", 24) == 0, "%s",
                  r2.stdout_data);
        cr_expect(!strstr(r2.stdout_data, "one") && !strstr(r2.stdout_data, "first"), "%s",
                  r2.stdout_data);
        char got2[512];
        memory_cgroup(r2.stdout_data, got2, sizeof(got2));
        cr_expect_str_eq(got2, want2);
        psrun_exec_result_free(&r1);
        psrun_exec_result_free(&r2);
        free(cg1);
        free(cg2);
        sess_end(&t);
}

/*
 * While it waits it has every layer an exec has at its execve but the
 * uid and capabilities its request's steps set: no_new_privs, the seccomp
 * filter, the bounding set. Its command line is init's copy, no command.
 */
Test(spare, it_waits_confined, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        psrun_exec_result r = sess_sh(&t, "cat /proc/self/status", NULL);
        int spare = wait_spare(&t, 0);
        cr_assert_gt(spare, 0, "no exec made ahead");
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/status", spare);
        char *st = slurp(path);
        cr_assert_not_null(st);
        static const char *const same[] = {"NoNewPrivs:", "Seccomp:", "CapBnd:"};
        for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
                char a[128], b[128];
                status_line(st, same[i], a, sizeof(a));
                status_line(r.stdout_data, same[i], b, sizeof(b));
                cr_expect(a[0], "%s missing", same[i]);
                cr_expect_str_eq(a, b, "the spare's %s is not the exec's", same[i]);
        }
        char sc[128];
        status_line(st, "Seccomp:", sc, sizeof(sc));
        cr_expect_str_eq(sc, "Seccomp:\t2");
        free(st);
        psrun_exec_result_free(&r);
        sess_end(&t);
}

Test(spare, one_that_dies_is_replaced, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        int spare = wait_spare(&t, 0);
        cr_assert_gt(spare, 0, "no exec made ahead");
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/cgroup", spare);
        char *cg = slurp(path);
        cr_assert_not_null(cg);
        char dead[1024];
        memory_dir(cg, dead, sizeof(dead));
        cr_assert_eq(kill(spare, SIGKILL), 0);
        for (int i = 0; i < 300 && ppid_of(spare) == t.supervisor; i++)
                usleep(10000);
        /* An exec meanwhile runs the normal way. */
        sess_sh_ok(&t, "true");
        int next = wait_spare(&t, spare);
        cr_assert_gt(next, 0, "the dead spare was not replaced");
        cr_expect(sess_pid_gone(spare), "the dead spare is still there");
        /* Its cgroup is gone with it. */
        struct stat sb;
        cr_expect(strstr(dead, "/psrun-") && stat(dead, &sb) < 0 && errno == ENOENT, "%s is left",
                  dead);
        snprintf(path, sizeof(path), "/proc/%d/cgroup", next);
        char *cg2 = slurp(path);
        cr_assert_not_null(cg2);
        char want[512], got[512];
        memory_cgroup(cg2, want, sizeof(want));
        psrun_exec_result r = run_in(&t, "cat /proc/self/cgroup", NULL, "X=1");
        memory_cgroup(r.stdout_data, got, sizeof(got));
        cr_expect_str_eq(got, want, "the exec did not run in the new spare's cgroup (%d): %s", next,
                         cg2);
        free(cg2);
        free(cg);
        psrun_exec_result_free(&r);
        sess_end(&t);
}

Test(spare, nothing_of_it_outlives_destroy_or_a_killed_supervisor, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        int spare = wait_spare(&t, 0);
        cr_assert_gt(spare, 0, "no exec made ahead");
        sess_end(&t);
        cr_expect(sess_pid_gone(spare), "the spare %d outlived destroy", spare);

        sess_start(&t, NULL);
        spare = wait_spare(&t, 0);
        cr_assert_gt(spare, 0, "no exec made ahead");
        cr_assert_eq(kill(t.supervisor, SIGKILL), 0);
        for (int i = 0; i < 300 && !(sess_pid_gone(t.supervisor) && sess_pid_gone(spare)); i++)
                usleep(10000);
        cr_expect(sess_pid_gone(spare), "the spare %d outlived its supervisor", spare);
        struct test_run r;
        test_run_psrun(&r, (const char *const[]){"gc", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        test_run_free(&r);
        psrun_session_close(t.s);
        t.s = NULL;
        sess_end(&t);
}

/* A request near the largest a session takes (192 KiB of argv, env and
 * cwd) arrives whole: four variables of 45 000 bytes each. */
Test(spare, a_large_request_arrives_whole, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        int spare = wait_spare(&t, 0);
        cr_assert_gt(spare, 0, "no exec made ahead");
        enum { N = 45000, VARS = 4 };
        static char vars[VARS][N + 4];
        const char *env[VARS + 1] = {0};
        for (int v = 0; v < VARS; v++) {
                snprintf(vars[v], 4, "B%d=", v);
                for (size_t i = 0; i < N; i++)
                        vars[v][3 + i] = (char) ('a' + (i + (size_t) v) % 26);
                vars[v][3 + N] = '\0';
                env[v] = vars[v];
        }
        psrun_exec_options o = {.env = env};
        psrun_exec_result r = sess_sh(
                &t,
                "echo ${#B0} ${#B3}; printf %s \"$B3\" | head -c 4; printf %s \"$B3\" | tail -c 3",
                &o);
        /* 45000 % 26 = 20: B3's last three are (17, 18, 19) + 3. */
        cr_expect_str_eq(r.stdout_data, "45000 45000\ndefguvw", "%s %s", r.result.error,
                         r.stderr_data);
        cr_expect(sess_pid_gone(spare), "the spare was not used");
        psrun_exec_result_free(&r);
        sess_end(&t);
}
