/* SPDX-License-Identifier: MIT */
/* psrun_run() through the public API, as an embedding agent would call it. */
#include <psrun.h>

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
        cr_expect(strstr(res.error, "exec: definitely-not-a-command"), "%s", res.error);

        cr_assert_eq(psrun_policy_set(p, "network", "full", &err), 0, "%s", err.msg);
        cr_expect_lt(psrun_run(p, argv, &o, &res, &err), 0);
        cr_expect_str_eq(res.reason, "setup_error");
        cr_expect(strstr(err.msg, "not supported yet"), "%s", err.msg);
        psrun_policy_free(p);
}
