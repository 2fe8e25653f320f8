/* SPDX-License-Identifier: MIT */
/*
 * Violations per exec: each exec's result lists what was refused to that
 * exec, not to the session's other execs, before or at the same time.
 */
#include <pthread.h>

#include "session/common.h"

static void start_with_probe(struct sess *t, const char *mode)
{
        char mount[4200];
        snprintf(mount, sizeof(mount), "%s:/probe:ro", test_helper_path("probe"));
        const char *kv[] = {"mounts", mount, "violations", mode, NULL};
        sess_start(t, kv);
}

static psrun_exec_result exec_argv(struct sess *t, const char *const *argv)
{
        psrun_exec_result res;
        psrun_error err = {0};
        int r = psrun_exec(t->s, (char *const *) argv, NULL, &res, &err);
        cr_assert_eq(r, 0, "exec %s: %s", argv[0], err.msg);
        return res;
}

static void expect_one(const psrun_exec_result *res, const char *layer, const char *what,
                       uint64_t count)
{
        const psrun_result *r = &res->result;
        cr_assert_eq(r->n_violations, 1, "%zu entries (stderr %s)", r->n_violations,
                     res->stderr_data);
        cr_expect_str_eq(r->violations[0].layer, layer);
        cr_expect_str_eq(r->violations[0].what, what);
        cr_expect_eq(r->violations[0].count, count);
}

Test(session_violations, each_exec_reports_its_own, .timeout = 30)
{
        struct sess t;
        start_with_probe(&t, "summary");
        psrun_exec_result res =
                exec_argv(&t, (const char *[]){"/probe", "syscall", "ptrace", NULL});
        cr_expect_str_eq(res.stdout_data, "EPERM\n");
        expect_one(&res, "seccomp", "ptrace", 1);
        cr_expect_gt(res.result.violations[0].pid, 1, "the exec's pid in the sandbox");
        cr_expect_str_eq(res.result.violations_mode, "summary");
        /* The exec JSON carries them as psrun run's does. */
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        cr_assert_eq(psrun_exec_result_write_json(&res, fds[1]), 0);
        close(fds[1]);
        char buf[8192] = "";
        cr_assert_gt(read(fds[0], buf, sizeof(buf) - 1), 0);
        close(fds[0]);
        cr_expect_not_null(strstr(buf, "\"violations\":[{\"layer\":\"seccomp\",\"what\":\"ptrace\","
                                       "\"count\":1,\"pid\":"),
                           "%s", buf);
        psrun_exec_result_free(&res);
        cr_expect_null(res.result.violations);

        /* The next exec starts from nothing. */
        res = sess_sh(&t, "true", NULL);
        cr_expect_eq(res.result.n_violations, 0, "%s",
                     res.result.n_violations ? res.result.violations[0].what : "");
        cr_expect_not_null(res.result.violations, "summary: an empty list, not none");
        psrun_exec_result_free(&res);

        /* A limit is the exec's too. */
        psrun_exec_options o = {.timeout_ms = 300};
        res = sess_sh(&t, "sleep 5", &o);
        expect_one(&res, "limits", "timeout 300ms reached", 1);
        psrun_exec_result_free(&res);
        sess_end(&t);
}

struct refuser {
        struct sess *t;
        const char *count, *call;
        psrun_exec_result res;
};

static void *refuse_in_thread(void *arg)
{
        struct refuser *x = arg;
        x->res = exec_argv(x->t, (const char *[]){"/probe", "refuse", x->count, x->call, NULL});
        return NULL;
}

Test(session_violations, concurrent_execs_do_not_mix, .timeout = 60)
{
        struct sess t;
        start_with_probe(&t, "summary");
        struct refuser a = {.t = &t, .count = "700", .call = "keyctl"};
        struct refuser b = {.t = &t, .count = "900", .call = "bpf"};
        pthread_t ta, tb;
        cr_assert_eq(pthread_create(&ta, NULL, refuse_in_thread, &a), 0);
        cr_assert_eq(pthread_create(&tb, NULL, refuse_in_thread, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        cr_expect_str_eq(a.res.stdout_data, "700 EPERM\n");
        cr_expect_str_eq(b.res.stdout_data, "900 EPERM\n");
        expect_one(&a.res, "seccomp", "keyctl", 700);
        expect_one(&b.res, "seccomp", "bpf", 900);
        psrun_exec_result_free(&a.res);
        psrun_exec_result_free(&b.res);
        sess_end(&t);
}

Test(session_violations, off_reports_nothing, .timeout = 30)
{
        struct sess t;
        start_with_probe(&t, "off");
        psrun_exec_result res = exec_argv(&t, (const char *[]){"/probe", "syscall", "bpf", NULL});
        cr_expect_str_eq(res.stdout_data, "EPERM\n", "still refused");
        cr_expect_str_eq(res.result.violations_mode, "off");
        cr_expect_null(res.result.violations);
        cr_expect_eq(res.result.n_violations, 0);
        cr_expect_null(res.result.violations_unavailable);
        psrun_exec_result_free(&res);
        sess_end(&t);
}

Test(session_violations, full_names_the_argument_per_process, .timeout = 30)
{
        struct sess t;
        start_with_probe(&t, "full");
        psrun_exec_result res = sess_sh(
                &t, "/probe socket packet; /probe socket packet; /probe socket vsock", NULL);
        const psrun_result *r = &res.result;
        cr_assert_eq(r->n_violations, 3, "one entry per process and argument");
        cr_expect_str_eq(r->violations[0].what, "socket(AF_PACKET)");
        cr_expect_str_eq(r->violations[1].what, "socket(AF_PACKET)");
        cr_expect_neq(r->violations[0].pid, r->violations[1].pid);
        cr_expect_str_eq(r->violations[2].what, "socket(AF_VSOCK)");
        psrun_exec_result_free(&res);
        sess_end(&t);
}

Test(session_violations, an_exec_that_stacks_its_own_filter_says_so, .timeout = 30)
{
        /* Each exec has its own filter and listener: the exec that stacks
         * a filter of its own says so; the next one, without, has its
         * refusal listed as itself. */
        struct sess t;
        start_with_probe(&t, "summary");
        psrun_exec_result res =
                exec_argv(&t, (const char *[]){"/probe", "ownfilter", "prctl", "keyctl", NULL});
        cr_expect_str_eq(res.stdout_data, "ok EPERM\n", "%s", res.stderr_data);
        expect_one(&res, "seccomp",
                   "the command installed its own seccomp filter: refusals behind it are not "
                   "reported",
                   1);
        cr_expect_gt(res.result.violations[0].pid, 1, "the exec's pid in the sandbox");
        psrun_exec_result_free(&res);
        res = exec_argv(&t, (const char *[]){"/probe", "syscall", "keyctl", NULL});
        cr_expect_str_eq(res.stdout_data, "EPERM\n");
        expect_one(&res, "seccomp", "keyctl", 1);
        psrun_exec_result_free(&res);
        sess_end(&t);
}
