/* SPDX-License-Identifier: MIT */
/* psrun_run() through the public API, as an embedding agent would call it. */
#include <psrun.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "integration/common.h"

TestSuite(api_run, .init = test_require_root);

static void collect(void *userdata, const char *msg)
{
        (*(int *) userdata)++;
}

Test(api_run, run_and_result)
{
        psrun_policy *p = psrun_policy_new();
        cr_assert_not_null(p);
        psrun_error err = {0};
        cr_assert_eq(psrun_policy_set(p, "timeout", "20", &err), 0, "%s", err.msg);
        int notes = 0;
        psrun_run_options o = {.log = collect, .log_userdata = &notes};
        char *argv[] = {"/bin/sh", "-c", "exit 7", NULL};
        psrun_result res;
        cr_assert_eq(psrun_run(p, argv, &o, &res, &err), 0, "%s", err.msg);
        cr_expect_eq(res.exit_code, 7);
        cr_expect_str_eq(res.reason, "exited");

        char *missing[] = {"definitely-not-a-command", NULL};
        cr_assert_eq(psrun_run(p, missing, &o, &res, &err), 0, "%s", err.msg);
        cr_expect_eq(res.exit_code, 127);
        cr_expect_str_eq(res.reason, "setup_error");
        cr_expect(strstr(res.error, "exec: \"definitely-not-a-command\""), "%s", res.error);

        /* A key of another mode: refused before anything is built (the
         * network modes themselves are the net tier's: tests/net). */
        cr_assert_eq(psrun_policy_set(p, "network_log", "/tmp/x.log", &err), 0, "%s", err.msg);
        cr_expect_lt(psrun_run(p, argv, &o, &res, &err), 0);
        cr_expect_str_eq(res.reason, "setup_error");
        cr_expect(strstr(err.msg, "network_log: not used with `network: none`"), "%s", err.msg);
        psrun_policy_free(p);
}

static atomic_bool stop_churn;

static void *churn(void *arg)
{
        /* Keep malloc's locks busy, as an agent process's other threads would. */
        while (!atomic_load(&stop_churn)) {
                void *p[64];
                for (int i = 0; i < 64; i++)
                        p[i] = malloc((size_t) (16 + i * 97));
                for (int i = 0; i < 64; i++)
                        free(p[i]);
        }
        return NULL;
}

Test(api_run, violations_are_the_results_until_freed)
{
        psrun_policy *p = psrun_policy_new();
        cr_assert_not_null(p);
        psrun_error err = {0};
        char mount[4200];
        snprintf(mount, sizeof(mount), "%s:/probe:ro", test_helper_path("probe"));
        cr_assert_eq(psrun_policy_set(p, "mounts", mount, &err), 0, "%s", err.msg);
        char *argv[] = {"/probe", "refuse", "3", "bpf", NULL};
        psrun_result res;
        cr_assert_eq(psrun_run(p, argv, NULL, &res, &err), 0, "%s", err.msg);
        cr_expect_str_eq(res.violations_mode, "summary");
        cr_assert_eq(res.n_violations, 1);
        cr_expect_str_eq(res.violations[0].layer, "seccomp");
        cr_expect_str_eq(res.violations[0].what, "bpf");
        cr_expect_eq(res.violations[0].count, 3);
        cr_expect_eq(res.violations[0].pid, 2);
        psrun_result_free(&res);
        cr_expect_null(res.violations);
        cr_expect_eq(res.n_violations, 0);
        psrun_result_free(&res);
        psrun_policy_free(p);
}

Test(api_run, embedded_in_a_multithreaded_process, .timeout = 120)
{
        /* Between clone3() and execve() the child must not allocate or take a
         * lock: a lock held by another thread at the moment of the clone would
         * never be released in the child's copy. Run sandboxes while other
         * threads hammer the allocator; a child that allocated would hang. */
        pthread_t threads[4];
        atomic_store(&stop_churn, false);
        for (int i = 0; i < 4; i++)
                cr_assert_eq(pthread_create(&threads[i], NULL, churn, NULL), 0);

        psrun_policy *p = psrun_policy_new();
        cr_assert_not_null(p);
        psrun_error err = {0};
        cr_assert_eq(psrun_policy_set(p, "timeout", "20", &err), 0, "%s", err.msg);
        cr_assert_eq(psrun_policy_set(p, "apparmor", "off", &err), 0, "%s", err.msg);
        char *argv[] = {"/bin/true", NULL};
        for (int i = 0; i < 25; i++) {
                psrun_result res;
                cr_assert_eq(psrun_run(p, argv, NULL, &res, &err), 0, "%s", err.msg);
                cr_assert_eq(res.exit_code, 0, "run %d: %s %s", i, res.reason, res.error);
                cr_assert_str_eq(res.reason, "exited");
                psrun_result_free(&res);
        }
        psrun_policy_free(p);

        atomic_store(&stop_churn, true);
        for (int i = 0; i < 4; i++)
                pthread_join(threads[i], NULL);
}
