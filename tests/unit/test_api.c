/* SPDX-License-Identifier: MIT */
/* The public API's pure parts, and what the shared library exports. */
#include <criterion/criterion.h>
#include <errno.h>
#include <psrun.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/testlib.h"
#include "policy/policy.h"

Test(api, policy_set_and_errors)
{
        psrun_policy *p = psrun_policy_new();
        cr_assert_not_null(p);
        psrun_error err = {0};
        cr_expect_eq(psrun_policy_set(p, "memory_limit", "1G", &err), 0, "%s", err.msg);
        cr_expect_eq(psrun_policy_set(p, "allow_domains", "[a.example, b.example]", &err), 0, "%s",
                     err.msg);
        cr_expect_eq(psrun_policy_set(p, "memory_limit", "lots", &err), -EINVAL);
        cr_expect(strstr(err.msg, "memory_limit"), "%s", err.msg);
        cr_expect_eq(psrun_policy_set(p, "networks", "none", &err), -EINVAL);
        cr_expect(strstr(err.msg, "did you mean `network`"), "%s", err.msg);
        cr_expect_eq(psrun_policy_load_string(p, "timeout: 10\npids_limit: 5\n", &err), 0, "%s",
                     err.msg);
        cr_expect_lt(psrun_policy_load_string(p, "timeout: [\n", &err), 0);
        cr_expect_lt(psrun_policy_set(NULL, "a", "b", &err), 0);
        psrun_policy_free(p);
        psrun_policy_free(NULL);
}

Test(api, result_json)
{
        psrun_result r = {.exit_code = 137,
                          .signal = 9,
                          .reason = "oom",
                          .wall_ms = 5,
                          .cpu_ms = 4,
                          .peak_memory_bytes = 33554432};
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        cr_assert_eq(psrun_result_write_json(&r, fds[1]), 0);
        close(fds[1]);
        char buf[512] = "";
        cr_assert_gt(read(fds[0], buf, sizeof(buf) - 1), 0);
        close(fds[0]);
        cr_expect_str_eq(buf, "{\"exit_code\":137,\"signal\":9,\"reason\":\"oom\",\"wall_ms\":5,"
                              "\"cpu_ms\":4,\"peak_memory_bytes\":33554432}\n");
}

Test(api, result_json_with_violations_and_free)
{
        psrun_violation list[] = {{"seccomp", "ptrace", 2, 7}, {"network", "evil.test", 1, 0}};
        psrun_violation_unavailable un[] = {{"landlock", "kernel audit is off"}};
        psrun_result r = {.exit_code = 1,
                          .reason = "exited",
                          .violations_mode = "summary",
                          .violations = list,
                          .n_violations = 2,
                          .violations_more = 4,
                          .violations_unavailable = un,
                          .n_violations_unavailable = 1};
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        cr_assert_eq(psrun_result_write_json(&r, fds[1]), 0);
        close(fds[1]);
        char buf[1024] = "";
        cr_assert_gt(read(fds[0], buf, sizeof(buf) - 1), 0);
        close(fds[0]);
        cr_expect_str_eq(buf,
                         "{\"exit_code\":1,\"signal\":null,\"reason\":\"exited\",\"wall_ms\":0,"
                         "\"cpu_ms\":0,\"peak_memory_bytes\":0,\"violations\":[{\"layer\":"
                         "\"seccomp\",\"what\":\"ptrace\",\"count\":2,\"pid\":7},{\"layer\":"
                         "\"network\",\"what\":\"evil.test\",\"count\":1}],\"violations_more\":4,"
                         "\"violations_unavailable\":{\"landlock\":\"kernel audit is off\"}}\n");
        /* Freeing a result psrun_run filled (here: one it did not) twice,
         * and NULL, is harmless. */
        psrun_result mine = {0};
        psrun_result_free(&mine);
        psrun_result_free(&mine);
        psrun_result_free(NULL);
}

Test(api, shared_library_exports_only_psrun_symbols)
{
        char cmd[4200];
        const char *b = getenv("PSRUN_BUILD");
        snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s/libpsrun.so", b && *b ? b : "build");
        FILE *f = popen(cmd, "r");
        cr_assert_not_null(f);
        /* Some of what include/psrun.h promises: each face's entry points. */
        static const char *const promised[] = {
                "psrun_run",
                "psrun_session_create",
                "psrun_exec",
                "psrun_session_gc",
                "psrun_gc",
                "psrun_version",
                "psrun_policy_new",
                "psrun_policy_free",
                "psrun_policy_set",
                "psrun_policy_get",
                "psrun_policy_narrows",
                "psrun_policy_load_file",
                "psrun_list_dir",
                "psrun_policy_set_narrowing",
                "psrun_policy_load_string",
                "psrun_image_pull",
                "psrun_image_list",
                "psrun_image_prune",
        };
        bool found[sizeof(promised) / sizeof(promised[0])] = {false};
        char line[512];
        int n = 0;
        while (fgets(line, sizeof(line), f)) {
                char addr[64], type[8], name[256];
                if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
                        continue;
                if (strcmp(type, "A") == 0)
                        continue; /* the version node */
                cr_expect(strncmp(name, "psrun_", 6) == 0, "exported: %s", name);
                char *at = strchr(name, '@'); /* psrun_gc@@PSRUN_0.1 */
                if (at)
                        *at = '\0';
                for (size_t i = 0; i < sizeof(promised) / sizeof(promised[0]); i++)
                        found[i] = found[i] || strcmp(name, promised[i]) == 0;
                n++;
        }
        cr_expect_eq(pclose(f), 0, "nm failed");
        cr_expect_geq(n, 8);
        for (size_t i = 0; i < sizeof(promised) / sizeof(promised[0]); i++)
                cr_expect(found[i], "%s is not exported", promised[i]);
}

/* The C API's caller named a key, not a `-o` option: its errors say the
 * key; the CLI's option keeps its `-o` wording. */
Test(api, policy_set_errors_name_the_key_not_an_option)
{
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        cr_assert_lt(psrun_policy_set(p, "memory_limit", "4Gi", &err), 0);
        cr_expect(strncmp(err.msg, "memory_limit: \"4Gi\" is not a size", 33) == 0, "%s", err.msg);
        cr_assert_lt(psrun_policy_set(p, "allow_domains", "[a.com, {x: 1}]", &err), 0);
        cr_expect(strncmp(err.msg, "allow_domains", 13) == 0, "%s", err.msg);
        psrun_policy_free(p);
        struct policy pol;
        cr_assert_eq(policy_init(&pol), 0);
        cr_assert_lt(policy_set_option(&pol, "memory_limit=4Gi", &err), 0);
        cr_expect(strncmp(err.msg, "-o memory_limit: ", 17) == 0, "%s", err.msg);
        policy_free(&pol);
}
