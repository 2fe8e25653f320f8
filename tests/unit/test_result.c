/* SPDX-License-Identifier: MIT */
/* The result record: reason names and the JSON line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
