/* SPDX-License-Identifier: MIT */
/* The result record: reason names and the JSON line. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cgroup/cgroup.h"
#include "runtime/result.h"

Test(result, reason_round_trip)
{
        for (int i = 0; i < _RUN_REASON_MAX; i++) {
                const char *name = run_reason_to_string((enum run_reason) i);
                cr_assert_not_null(name, "reason %d has no name", i);
                cr_expect_eq(run_reason_from_string(name), i, "%s", name);
        }
        cr_expect_null(run_reason_to_string(_RUN_REASON_MAX));
        cr_expect_null(run_reason_to_string((enum run_reason) - 1));
        cr_expect_eq(run_reason_from_string("killed"), -EINVAL);
        cr_expect_eq(run_reason_from_string(NULL), -EINVAL);
}

static char *json_of(const struct run_result *r)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        run_result_write_json(r, f);
        fclose(f);
        return buf;
}

Test(result, json_exited)
{
        struct run_result r = {.exit_code = 3,
                               .reason = RUN_REASON_EXITED,
                               .wall_ms = 12,
                               .cpu_ms = 7,
                               .peak_memory_bytes = 1048576};
        char *s = json_of(&r);
        cr_expect_str_eq(s, "{\"exit_code\":3,\"signal\":null,\"reason\":\"exited\",\"wall_ms\":12,"
                            "\"cpu_ms\":7,\"peak_memory_bytes\":1048576}\n");
        free(s);
}

Test(result, json_setup_error_escapes_the_message)
{
        struct run_result r = {.exit_code = 125, .reason = RUN_REASON_SETUP_ERROR};
        snprintf(r.error, sizeof(r.error), "rootfs: mount \"x\\y\"\n\x01 on /tmp: \xff");
        char *s = json_of(&r);
        cr_expect_str_eq(s, "{\"exit_code\":125,\"signal\":null,\"reason\":\"setup_error\","
                            "\"wall_ms\":0,\"cpu_ms\":0,\"peak_memory_bytes\":0,\"error\":"
                            "\"rootfs: mount \\\"x\\\\y\\\"\\n\\u0001 on /tmp: \\u00ff\"}\n");
        free(s);
}

Test(result, json_names_the_backend)
{
        struct run_result r = {.exit_code = 0, .reason = RUN_REASON_EXITED, .backend = "gvisor"};
        char *s = json_of(&r);
        cr_expect(strstr(s, "\"peak_memory_bytes\":0,\"backend\":\"gvisor\"}"), "%s", s);
        free(s);
}

Test(result, json_signaled)
{
        struct run_result r = {.exit_code = 137, .signal = 9, .reason = RUN_REASON_OOM};
        char *s = json_of(&r);
        cr_expect(strstr(s, "\"signal\":9,\"reason\":\"oom\""), "%s", s);
        free(s);
}

/* The one decision every backend and sessions share: a wait status, then
 * the limit that ended the command, most decisive first. */
Test(result, status_then_the_deciding_limit)
{
        struct cgroup_stats st = {.cpu_usec = 2500, .memory_peak_bytes = 4096};
        struct run_result r = {0};
        run_result_set_status(&r, W_EXITCODE(3, 0), &st);
        cr_expect(r.exit_code == 3 && r.signal == 0 && r.reason == RUN_REASON_EXITED);
        cr_expect(r.cpu_ms == 2 && r.peak_memory_bytes == 4096);
        run_result_set_status(&r, W_EXITCODE(0, SIGKILL), &st);
        cr_expect(r.exit_code == 137 && r.signal == SIGKILL && r.reason == RUN_REASON_SIGNALED);

        static const struct {
                struct cgroup_stats st;
                bool timed_out, disk_full;
                int exit_code;
                enum run_reason want;
        } cases[] = {
                {{.oom_kills = 1, .pids_max_hits = 1}, true, true, 137, RUN_REASON_OOM},
                {{.pids_max_hits = 1}, true, true, 137, RUN_REASON_TIMEOUT},
                {{.pids_max_hits = 1}, false, true, 1, RUN_REASON_PIDS},
                {{0}, false, true, 1, RUN_REASON_DISK_FULL},
                {{0}, false, false, 1, RUN_REASON_EXITED},
                /* A clean exit is a clean exit, whatever the counters say. */
                {{.oom_kills = 1, .pids_max_hits = 1}, false, true, 0, RUN_REASON_EXITED},
                /* A timed-out command that exited 0 still timed out. */
                {{0}, true, false, 0, RUN_REASON_TIMEOUT},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                r = (struct run_result){.exit_code = cases[i].exit_code,
                                        .reason = RUN_REASON_EXITED};
                run_result_set_limit_reason(&r, &cases[i].st, cases[i].timed_out,
                                            cases[i].disk_full);
                cr_expect_eq(r.reason, cases[i].want, "case %zu: %s", i,
                             run_reason_to_string(r.reason));
        }
}
