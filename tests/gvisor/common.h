/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The gvisor tier: the tests that make sense under gVisor, run under both
 * backends (BOTH_BACKENDS makes a _native and a _gvisor test of one body),
 * and the gVisor backend's own. A gvisor test skips, saying why, where
 * runsc cannot run a sandbox here (not installed, no working platform).
 */

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/testlib.h"

/* psrun run [-o backend=B] [extra...] -- argv... with the probe at
 * /probe. Both lists NULL-terminated. */
static inline void gv_run(struct test_run *r, const char *backend, const char *const *extra,
                          const char *const *cmd)
{
        static char mount[4200], be[32];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        snprintf(be, sizeof(be), "backend=%s", backend);
        const char *argv[96];
        size_t n = 0;
        argv[n++] = "run";
        argv[n++] = "-o";
        argv[n++] = be;
        argv[n++] = "-o";
        argv[n++] = mount;
        for (size_t i = 0; extra && extra[i] && n < 60; i++)
                argv[n++] = extra[i];
        argv[n++] = "--";
        for (size_t i = 0; cmd[i] && n < 94; i++)
                argv[n++] = cmd[i];
        argv[n] = NULL;
        test_run_psrun(r, argv);
}

/* The value of a JSON field as a string (static buffer). */
static inline const char *gv_field(const struct test_run *r, const char *key)
{
        static char buf[512];
        char *v = test_json_field(r->result, key);
        snprintf(buf, sizeof(buf), "%s", v ? v : "(missing)");
        free(v);
        return buf;
}

#define gv_expect_reason(r, reason)                                                                \
        cr_expect_str_eq(gv_field((r), "reason"), "\"" reason "\"", "result: %s\nstderr: %s",      \
                         (r)->result, (r)->err)

/*
 * Skip unless runsc can run a sandbox here: installed, and a platform
 * works (psrun's own detection decides; its verdict is cached, so after
 * the first test this costs one `true` under gVisor). Anything else psrun
 * says is a failure of the test, not a skip.
 */
static inline void gv_require(void)
{
        test_require_root();
        static const char *const cmd[] = {"true", NULL};
        struct test_run r;
        gv_run(&r, "gvisor", NULL, cmd);
        if (r.status == 125 &&
            (strstr(r.err, "runsc not found") || strstr(r.err, "gvisor_platform: no platform"))) {
                char why[600];
                snprintf(why, sizeof(why), "runsc cannot run here: %s", r.err);
                why[strcspn(why, "\n")] = '\0';
                test_run_free(&r);
                cr_skip_test("%s", why);
        }
        cr_assert_eq(r.status, 0, "gvisor sanity run failed: %s", r.err);
        test_run_free(&r);
}

/* One test body, two tests: name_native and name_gvisor. */
#define BOTH_BACKENDS(suite, name)                                                                 \
        static void name##_body(const char *backend);                                              \
        Test(suite, name##_native)                                                                 \
        {                                                                                          \
                test_require_root();                                                               \
                name##_body("native");                                                             \
        }                                                                                          \
        Test(suite, name##_gvisor)                                                                 \
        {                                                                                          \
                gv_require();                                                                      \
                name##_body("gvisor");                                                             \
        }                                                                                          \
        static void name##_body(const char *backend)

/* Nothing of a psrun process's gVisor runs is left in the state
 * directory (GVISOR_STATE_DIR/<pid>-<n>). */
static inline bool gv_no_state_of(int pid, char *why, size_t size)
{
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "ls -A /run/psrun-gvisor 2>/dev/null | grep '^%d-'", pid);
        FILE *p = popen(cmd, "r");
        if (!p)
                return true;
        char line[256] = "";
        bool empty = !fgets(line, sizeof(line), p);
        pclose(p);
        snprintf(why, size, "%s", line);
        return empty;
}
