/* SPDX-License-Identifier: MIT */
/*
 * The policy parser, key by key: defaults, every key in every accepted form,
 * and every rejection with its exact message and line:column. Whole
 * documents, -o, files, copy and validate are in test_policy_sources.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "policy_test.h"

/* ---- defaults ---- */

Test(policy, defaults)
{
        struct policy p;
        psrun_error err = {0};

        init(&p);
        cr_assert_eq(p.network, POLICY_NETWORK_NONE);
        cr_assert_null(p.allow_domains);
        cr_assert_eq(p.n_allow_domains, 0);
        cr_assert_eq(p.memory_limit, 512 * MiB);
        cr_assert_float_eq(p.cpu_limit, 1.0, 1e-12);
        cr_assert_eq(p.pids_limit, 256);
        cr_assert_eq(p.disk_limit, GiB);
        cr_assert_eq(p.timeout_ms, 300000);
        cr_assert_eq(p.n_env, 0);
        cr_assert_str_eq(p.workdir, "/workspace");
        cr_assert(p.readonly_rootfs);
        cr_assert_eq(p.uid, 1000);
        cr_assert_eq(p.gid, 1000);
        cr_assert_eq(p.backend, POLICY_BACKEND_NATIVE);
        cr_assert_eq(p.n_mounts, 0);
        cr_assert_str_eq(p.hostname, "sandbox");
        cr_assert_eq(p.landlock, POLICY_LAYER_AUTO);
        cr_assert_eq(p.apparmor, POLICY_LAYER_AUTO);
        cr_assert_null(p.apparmor_profile);
        cr_assert_eq(p.violations, POLICY_VIOLATIONS_SUMMARY);
        cr_assert_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        policy_free(&p);
        policy_free(&p); /* freeing twice is harmless */
        policy_free(NULL);
}

Test(policy, empty_documents_change_nothing)
{
        const char *docs[] = {"",    "\n",     "# only a comment\n", "---\n", "--- ~\n",
                              "~\n", "null\n", "---\n...\n",         "{}\n"};
        struct policy defaults;

        init(&defaults);
        for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
                struct policy p;
                load_ok(&p, docs[i]);
                assert_policy_eq(&p, &defaults);
                policy_free(&p);
        }
        struct policy p;
        psrun_error err = {0};
        init(&p);
        cr_assert_eq(policy_load_buffer(&p, "x", NULL, 0, &err), 0);
        policy_free(&p);
        policy_free(&defaults);
}

/* ---- every key ---- */

Test(policy, full_document)
{
        struct policy p;

        load_ok(&p, "# every key\n"
                    "network: restricted\n"
                    "allow_domains:\n"
                    "  - PyPI.org\n"
                    "  - '*.pythonhosted.org'\n"
                    "  - github.com.\n"
                    "memory_limit: 1.5G\n"
                    "cpu_limit: 0.5\n"
                    "pids_limit: 64\n"
                    "disk_limit: 100MB\n"
                    "timeout: 5m\n"
                    "env:\n"
                    "  LANG: C.UTF-8\n"
                    "  DEBUG: 1\n"
                    "  VERBOSE: true\n"
                    "  TERM:\n"
                    "  HOME: ~\n"
                    "  EMPTY: ''\n"
                    "workdir: /workspace//project/./src/\n"
                    "readonly_rootfs: no\n"
                    "user: 1000:100\n"
                    "backend: gvisor\n"
                    "mounts:\n"
                    "  - source: /home/me/data\n"
                    "    target: /data\n"
                    "  - {source: /tmp/out, target: /out, readonly: false}\n"
                    "  - /opt/tools:/tools\n"
                    "  - /srv/cache:/cache:rw\n"
                    "  - /srv/ro:/ro:ro\n"
                    "hostname: agent-1\n"
                    "landlock: required\n"
                    "apparmor: off\n"
                    "apparmor_profile: psrun-custom\n");

        cr_assert_eq(p.network, POLICY_NETWORK_RESTRICTED);
        cr_assert_eq(p.n_allow_domains, 3);
        cr_assert_str_eq(p.allow_domains[0], "pypi.org");
        cr_assert_str_eq(p.allow_domains[1], "*.pythonhosted.org");
        cr_assert_str_eq(p.allow_domains[2], "github.com");
        cr_assert_null(p.allow_domains[3]);
        cr_assert_eq(p.memory_limit, 3 * GiB / 2);
        cr_assert_float_eq(p.cpu_limit, 0.5, 1e-12);
        cr_assert_eq(p.pids_limit, 64);
        cr_assert_eq(p.disk_limit, 100 * MiB);
        cr_assert_eq(p.timeout_ms, 300000);

        cr_assert_eq(p.n_env, 6);
        const char *names[] = {"LANG", "DEBUG", "VERBOSE", "TERM", "HOME", "EMPTY"};
        const char *values[] = {"C.UTF-8", "1", "true", NULL, NULL, ""};
        for (size_t i = 0; i < 6; i++) {
                cr_assert_str_eq(p.env[i].name, names[i]);
                cr_assert(str_eq_null(p.env[i].value, values[i]), "env %s = %s", names[i],
                          p.env[i].value);
        }

        cr_assert_str_eq(p.workdir, "/workspace/project/src");
        cr_assert_not(p.readonly_rootfs);
        cr_assert_eq(p.uid, 1000);
        cr_assert_eq(p.gid, 100);
        cr_assert_eq(p.backend, POLICY_BACKEND_GVISOR);

        cr_assert_eq(p.n_mounts, 5);
        cr_assert_str_eq(p.mounts[0].source, "/home/me/data");
        cr_assert_str_eq(p.mounts[0].target, "/data");
        cr_assert(p.mounts[0].readonly, "readonly defaults to true");
        cr_assert_str_eq(p.mounts[1].target, "/out");
        cr_assert_not(p.mounts[1].readonly);
        cr_assert_str_eq(p.mounts[2].source, "/opt/tools");
        cr_assert_str_eq(p.mounts[2].target, "/tools");
        cr_assert(p.mounts[2].readonly);
        cr_assert_not(p.mounts[3].readonly);
        cr_assert(p.mounts[4].readonly);

        cr_assert_str_eq(p.hostname, "agent-1");
        cr_assert_eq(p.landlock, POLICY_LAYER_REQUIRED);
        cr_assert_eq(p.apparmor, POLICY_LAYER_OFF);
        cr_assert_str_eq(p.apparmor_profile, "psrun-custom");

        psrun_error err = {0};
        cr_assert_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        policy_free(&p);
}

Test(policy, json_document)
{
        struct policy p;

        load_ok(&p,
                "{\n"
                "  \"network\": \"none\",\n"
                "  \"memory_limit\": \"1G\",\n"
                "  \"cpu_limit\": 2,\n"
                "  \"pids_limit\": 512,\n"
                "  \"timeout\": 2.5,\n"
                "  \"readonly_rootfs\": false,\n"
                "  \"user\": 0,\n"
                "  \"env\": {\"A\": \"b\", \"T\": null, \"N\": 7},\n"
                "  \"mounts\": [{\"source\": \"/a\", \"target\": \"/b\", \"readonly\": false}],\n"
                "  \"allow_domains\": []\n"
                "}\n");
        cr_assert_eq(p.memory_limit, GiB);
        cr_assert_float_eq(p.cpu_limit, 2.0, 1e-12);
        cr_assert_eq(p.pids_limit, 512);
        cr_assert_eq(p.timeout_ms, 2500);
        cr_assert_not(p.readonly_rootfs);
        cr_assert_eq(p.uid, 0);
        cr_assert_eq(p.gid, 0);
        cr_assert_eq(p.n_env, 3);
        cr_assert_str_eq(p.env[0].value, "b");
        cr_assert_null(p.env[1].value);
        cr_assert_str_eq(p.env[2].value, "7");
        cr_assert_eq(p.n_mounts, 1);
        cr_assert_not(p.mounts[0].readonly);
        cr_assert_eq(p.n_allow_domains, 0);
        policy_free(&p);
}

Test(policy, json_errors_have_positions)
{
        expect_error("{\"network\": \"internet\"}", EINVAL,
                     "policy.yaml:1:13: network: `internet` is not one of none, restricted, full");
        expect_error("{\n  \"pids_limit\": \"many\"\n}", EINVAL,
                     "policy.yaml:2:17: pids_limit: \"many\" is not an integer");
        /* JSON strings are strings, not booleans. */
        expect_error("{\"readonly_rootfs\": \"true\"}", EINVAL,
                     "policy.yaml:1:21: readonly_rootfs: expected a boolean (true or false), "
                     "got a string");
}

Test(policy, enums_every_value)
{
        static const struct {
                const char *yaml;
                size_t offset;
                int want;
        } cases[] = {
                {"network: none", offsetof(struct policy, network), POLICY_NETWORK_NONE},
                {"network: restricted", offsetof(struct policy, network),
                 POLICY_NETWORK_RESTRICTED},
                {"network: full", offsetof(struct policy, network), POLICY_NETWORK_FULL},
                {"backend: native", offsetof(struct policy, backend), POLICY_BACKEND_NATIVE},
                {"backend: gvisor", offsetof(struct policy, backend), POLICY_BACKEND_GVISOR},
                {"gvisor_platform: auto", offsetof(struct policy, gvisor_platform),
                 POLICY_GVISOR_PLATFORM_AUTO},
                {"gvisor_platform: systrap", offsetof(struct policy, gvisor_platform),
                 POLICY_GVISOR_PLATFORM_SYSTRAP},
                {"gvisor_platform: kvm", offsetof(struct policy, gvisor_platform),
                 POLICY_GVISOR_PLATFORM_KVM},
                {"gvisor_platform: ptrace", offsetof(struct policy, gvisor_platform),
                 POLICY_GVISOR_PLATFORM_PTRACE},
                {"landlock: auto", offsetof(struct policy, landlock), POLICY_LAYER_AUTO},
                {"landlock: required", offsetof(struct policy, landlock), POLICY_LAYER_REQUIRED},
                {"landlock: off", offsetof(struct policy, landlock), POLICY_LAYER_OFF},
                {"apparmor: auto", offsetof(struct policy, apparmor), POLICY_LAYER_AUTO},
                {"apparmor: required", offsetof(struct policy, apparmor), POLICY_LAYER_REQUIRED},
                {"apparmor: 'off'", offsetof(struct policy, apparmor), POLICY_LAYER_OFF},
                {"violations: off", offsetof(struct policy, violations), POLICY_VIOLATIONS_OFF},
                {"violations: summary", offsetof(struct policy, violations),
                 POLICY_VIOLATIONS_SUMMARY},
                {"violations: full", offsetof(struct policy, violations), POLICY_VIOLATIONS_FULL},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct policy p;
                load_ok(&p, "landlock: off\napparmor: off\nbackend: gvisor\nnetwork: full\n");
                psrun_error err = {0};
                cr_assert_eq(load(&p, cases[i].yaml, &err), 0, "%s: %s", cases[i].yaml, err.msg);
                int got;
                memcpy(&got, (char *) &p + cases[i].offset, sizeof(got));
                cr_assert_eq(got, cases[i].want, "%s", cases[i].yaml);
                policy_free(&p);
        }
}

Test(policy, sizes)
{
        struct policy p;

        load_ok(&p, "memory_limit: 512M\ndisk_limit: 64M");
        cr_assert_eq(p.memory_limit, 512 * MiB);
        cr_assert_eq(p.disk_limit, 64 * MiB);
        policy_free(&p);
        load_ok(&p, "memory_limit: 1GiB\ndisk_limit: 1073741824");
        cr_assert_eq(p.memory_limit, GiB);
        cr_assert_eq(p.disk_limit, GiB);
        policy_free(&p);
        /* the bounds themselves */
        load_ok(&p, "memory_limit: 4M\ndisk_limit: 1M");
        cr_assert_eq(p.memory_limit, 4 * MiB);
        cr_assert_eq(p.disk_limit, MiB);
        policy_free(&p);
        load_ok(&p, "memory_limit: 1P\ndisk_limit: \"1024T\"");
        cr_assert_eq(p.memory_limit, 1ULL << 50);
        cr_assert_eq(p.disk_limit, 1ULL << 50);
        policy_free(&p);
        load_ok(&p, "disk_limit: 1024k");
        cr_assert_eq(p.disk_limit, MiB);
        policy_free(&p);
}

Test(policy, size_errors)
{
        expect_error("memory_limit: 12Q", EINVAL,
                     "policy.yaml:1:15: memory_limit: \"12Q\" is not a size (use e.g. 512M, 2G)");
        expect_error("\n\n\n   memory_limit: 12Q\n", EINVAL,
                     "policy.yaml:4:18: memory_limit: \"12Q\" is not a size (use e.g. 512M, 2G)");
        expect_error("memory_limit: 1M", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"1M\" is too small (at least 4M)");
        expect_error("memory_limit: 4194303", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"4194303\" is too small (at least 4M)");
        expect_error("memory_limit: 2P", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"2P\" is too large (at most 1P)");
        expect_error("memory_limit: 99999999999999999999", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"99999999999999999999\" is too large "
                     "(at most 1P)");
        expect_error("memory_limit: 16E", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"16E\" is too large (at most 1P)");
        expect_error("memory_limit: -1G", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"-1G\" is too small (at least 4M)");
        expect_error("memory_limit: 0", ERANGE,
                     "policy.yaml:1:15: memory_limit: \"0\" is too small (at least 4M)");
        expect_error("disk_limit: 512k", ERANGE,
                     "policy.yaml:1:13: disk_limit: \"512k\" is too small (at least 1M)");
        expect_error("disk_limit: 1.5", EINVAL,
                     "policy.yaml:1:13: disk_limit: \"1.5\" is not a size (use e.g. 512M, 2G)");
        expect_error("disk_limit: [1G]", EINVAL,
                     "policy.yaml:1:13: disk_limit: expected a size, got a list");
        expect_error("disk_limit:", EINVAL,
                     "policy.yaml:1:12: disk_limit: expected a size, got null");
}

Test(policy, cpu)
{
        struct policy p;

        load_ok(&p, "cpu_limit: 2");
        cr_assert_float_eq(p.cpu_limit, 2.0, 1e-12);
        policy_free(&p);
        load_ok(&p, "cpu_limit: \"1.5\"");
        cr_assert_float_eq(p.cpu_limit, 1.5, 1e-12);
        policy_free(&p);
        load_ok(&p, "cpu_limit: .25");
        cr_assert_float_eq(p.cpu_limit, 0.25, 1e-12);
        policy_free(&p);
        load_ok(&p, "cpu_limit: 1024");
        cr_assert_float_eq(p.cpu_limit, 1024.0, 1e-12);
        policy_free(&p);

        expect_error("cpu_limit: 0", ERANGE, "policy.yaml:1:12: cpu_limit: must be greater than 0");
        expect_error("cpu_limit: 0.0", ERANGE,
                     "policy.yaml:1:12: cpu_limit: must be greater than 0");
        expect_error("cpu_limit: -1", ERANGE,
                     "policy.yaml:1:12: cpu_limit: must be greater than 0");
        expect_error("cpu_limit: 1024.5", ERANGE,
                     "policy.yaml:1:12: cpu_limit: \"1024.5\" is too large (at most 1024)");
        expect_error("cpu_limit: 99999999999999999999", ERANGE,
                     "policy.yaml:1:12: cpu_limit: \"99999999999999999999\" is too large (at "
                     "most 1024)");
        expect_error("cpu_limit: two", EINVAL,
                     "policy.yaml:1:12: cpu_limit: \"two\" is not a number of CPUs (use e.g. 2, "
                     "0.5)");
        expect_error("cpu_limit: .nan", EINVAL,
                     "policy.yaml:1:12: cpu_limit: \".nan\" is not a number of CPUs (use e.g. "
                     "2, 0.5)");
        expect_error("cpu_limit: {a: 1}", EINVAL,
                     "policy.yaml:1:12: cpu_limit: expected a number, got a mapping");
        expect_error("cpu_limit: true", EINVAL,
                     "policy.yaml:1:12: cpu_limit: \"true\" is not a number of CPUs (use e.g. "
                     "2, 0.5)");
}

Test(policy, pids)
{
        struct policy p;

        load_ok(&p, "pids_limit: 1");
        cr_assert_eq(p.pids_limit, 1);
        policy_free(&p);
        load_ok(&p, "pids_limit: '4194304'");
        cr_assert_eq(p.pids_limit, 4194304);
        policy_free(&p);

        expect_error("pids_limit: {a: 1}", EINVAL,
                     "policy.yaml:1:13: pids_limit: expected an integer, got a mapping");
        expect_error("pids_limit:\n  - 1\n", EINVAL,
                     "policy.yaml:2:3: pids_limit: expected an integer, got a list");
        expect_error("pids_limit: 0", ERANGE,
                     "policy.yaml:1:13: pids_limit: must be greater than 0");
        expect_error("pids_limit: -1", ERANGE,
                     "policy.yaml:1:13: pids_limit: must be greater than 0");
        expect_error("pids_limit: 4194305", ERANGE,
                     "policy.yaml:1:13: pids_limit: \"4194305\" is too large (at most 4194304)");
        expect_error("pids_limit: 99999999999999999999999", ERANGE,
                     "policy.yaml:1:13: pids_limit: \"99999999999999999999999\" is too large "
                     "(at most 4194304)");
        expect_error("pids_limit: 2.5", EINVAL,
                     "policy.yaml:1:13: pids_limit: \"2.5\" is not an integer");
        expect_error("pids_limit: 1k", EINVAL,
                     "policy.yaml:1:13: pids_limit: \"1k\" is not an integer");
}

Test(policy, timeout)
{
        static const struct {
                const char *yaml;
                uint64_t ms;
        } cases[] = {
                {"timeout: 300", 300000},
                {"timeout: 2.5", 2500},
                {"timeout: 300s", 300000},
                {"timeout: 5m", 300000},
                {"timeout: 1h", 3600000},
                {"timeout: 500ms", 500},
                {"timeout: '30d'", 30ULL * 86400000},
                {"timeout: 1ms", 1},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct policy p;
                load_ok(&p, cases[i].yaml);
                cr_assert_eq(p.timeout_ms, cases[i].ms, "%s", cases[i].yaml);
                policy_free(&p);
        }

        expect_error("timeout: 0", ERANGE, "policy.yaml:1:10: timeout: must be greater than 0");
        expect_error("timeout: 0s", ERANGE, "policy.yaml:1:10: timeout: must be greater than 0");
        expect_error("timeout: -5", ERANGE, "policy.yaml:1:10: timeout: must be greater than 0");
        expect_error("timeout: -1m", ERANGE, "policy.yaml:1:10: timeout: must be greater than 0");
        expect_error("timeout: 0.0001", ERANGE,
                     "policy.yaml:1:10: timeout: must be greater than 0");
        expect_error("timeout: 31d", ERANGE,
                     "policy.yaml:1:10: timeout: \"31d\" is too large (at most 30d)");
        expect_error("timeout: 2592000001ms", ERANGE,
                     "policy.yaml:1:10: timeout: \"2592000001ms\" is too large (at most 30d)");
        expect_error("timeout: 99999999999999999999", ERANGE,
                     "policy.yaml:1:10: timeout: \"99999999999999999999\" is too large (at "
                     "most 30d)");
        expect_error("timeout: 5x", EINVAL,
                     "policy.yaml:1:10: timeout: \"5x\" is not a duration (use e.g. 300, 300s, "
                     "5m, 1h, 500ms)");
        expect_error("timeout: [1]", EINVAL,
                     "policy.yaml:1:10: timeout: expected a duration, got a list");
}

/* Session keys (docs/sessions.md): 0 means "none" for the two durations. */
Test(policy, session_keys)
{
        struct policy p;
        load_ok(&p, "idle_timeout: 10m\nlifetime: 0\noutput_limit: 4K\n");
        cr_expect_eq(p.idle_timeout_ms, 600000);
        cr_expect_eq(p.lifetime_ms, 0);
        cr_expect_eq(p.output_limit, 4096);
        policy_free(&p);
        load_ok(&p, "lifetime: 2h\n");
        cr_expect_eq(p.idle_timeout_ms, POLICY_DEFAULT_IDLE_TIMEOUT_MS);
        cr_expect_eq(p.lifetime_ms, 7200000);
        cr_expect_eq(p.output_limit, POLICY_DEFAULT_OUTPUT_LIMIT);
        policy_free(&p);
        expect_error("idle_timeout: 31d", ERANGE,
                     "policy.yaml:1:15: idle_timeout: \"31d\" is too large (at most 30d)");
        expect_error("lifetime: soon", EINVAL,
                     "policy.yaml:1:11: lifetime: \"soon\" is not a duration (use e.g. 2h, 0 for "
                     "none)");
        load_ok(&p, "background_limit: 3\n");
        cr_expect_eq(p.background_limit, 3);
        policy_free(&p);
        load_ok(&p, "lifetime: 1h\n");
        cr_expect_eq(p.background_limit, POLICY_DEFAULT_BACKGROUND_LIMIT);
        policy_free(&p);
        expect_error("background_limit: 33", ERANGE,
                     "policy.yaml:1:19: background_limit: \"33\" is too large (at most 32)");
        expect_error("output_limit: 10", ERANGE,
                     "policy.yaml:1:15: output_limit: \"10\" is too small (at least 64)");
}

Test(policy, env_forms)
{
        struct policy p;

        load_ok(&p, "env: [A=b, TERM, EMPTY=, 'C=x=y', 'SP=a b']");
        cr_assert_eq(p.n_env, 5);
        cr_assert_str_eq(p.env[0].name, "A");
        cr_assert_str_eq(p.env[0].value, "b");
        cr_assert_str_eq(p.env[1].name, "TERM");
        cr_assert_null(p.env[1].value);
        cr_assert_str_eq(p.env[2].value, "");
        cr_assert_str_eq(p.env[3].name, "C");
        cr_assert_str_eq(p.env[3].value, "x=y");
        cr_assert_str_eq(p.env[4].value, "a b");
        policy_free(&p);

        /* one string stands for a one-item list */
        load_ok(&p, "env: A=b");
        cr_assert_eq(p.n_env, 1);
        cr_assert_str_eq(p.env[0].value, "b");
        policy_free(&p);

        /* a repeated name overrides in place: order of first appearance, names unique */
        load_ok(&p, "env: [A=1, B=2, A=3, B]");
        cr_assert_eq(p.n_env, 2);
        cr_assert_str_eq(p.env[0].name, "A");
        cr_assert_str_eq(p.env[0].value, "3");
        cr_assert_str_eq(p.env[1].name, "B");
        cr_assert_null(p.env[1].value);
        policy_free(&p);

        load_ok(&p, "env: {}");
        cr_assert_eq(p.n_env, 0);
        policy_free(&p);
}

Test(policy, env_second_source_appends_and_overrides)
{
        struct policy p;
        psrun_error err = {0};

        load_ok(&p, "env: {A: 1, B: 2}");
        cr_assert_eq(load(&p, "env: [C=3, A=9]", &err), 0, "%s", err.msg);
        set_ok(&p, "env=B=8");
        set_ok(&p, "env={D: 4, C: ~}");
        cr_assert_eq(p.n_env, 4);
        const char *names[] = {"A", "B", "C", "D"};
        const char *values[] = {"9", "8", NULL, "4"};
        for (size_t i = 0; i < 4; i++) {
                cr_assert_str_eq(p.env[i].name, names[i]);
                cr_assert(str_eq_null(p.env[i].value, values[i]), "%s=%s", names[i],
                          p.env[i].value);
        }
        policy_free(&p);
}

Test(policy, env_errors)
{
        expect_error("env: [1A=b]", EINVAL,
                     "policy.yaml:1:7: env[0]: \"1A\" is not a valid variable name (letters, "
                     "digits and '_', not starting with a digit)");
        expect_error("env:\n  A-B: x\n", EINVAL,
                     "policy.yaml:2:3: env.A-B: \"A-B\" is not a valid variable name (letters, "
                     "digits and '_', not starting with a digit)");
        expect_error("env: [=x]", EINVAL,
                     "policy.yaml:1:7: env[0]: \"\" is not a valid variable name (letters, "
                     "digits and '_', not starting with a digit)");
        expect_error("env:\n  A: [1]\n", EINVAL,
                     "policy.yaml:2:6: env.A: expected a string or null, got a list");
        expect_error("env: {A: 1, A: 2}", EINVAL, "policy.yaml:1:13: env: duplicate variable `A`");
        expect_error("env: [[A]]", EINVAL,
                     "policy.yaml:1:7: env[0]: expected NAME=value or NAME, got a list");
        expect_error("env: [~]", EINVAL,
                     "policy.yaml:1:7: env[0]: expected NAME=value or NAME, got null");
        expect_error("env:", EINVAL,
                     "policy.yaml:1:5: env: expected a mapping or a list, got null");
        expect_error("env: {[a]: b}", EINVAL,
                     "policy.yaml:1:7: env: expected a string as key, got a list");
}

Test(policy, workdir)
{
        struct policy p;

        load_ok(&p, "workdir: /");
        cr_assert_str_eq(p.workdir, "/");
        policy_free(&p);
        load_ok(&p, "workdir: //a/./b//");
        cr_assert_str_eq(p.workdir, "/a/b");
        policy_free(&p);

        expect_error("workdir: work", EINVAL,
                     "policy.yaml:1:10: workdir: must be an absolute path");
        expect_error("workdir: ''", EINVAL, "policy.yaml:1:10: workdir: must be an absolute path");
        expect_error("workdir: /a/../etc", EINVAL,
                     "policy.yaml:1:10: workdir: must not contain `..`");
        expect_error("workdir: \"/a\\nb\"", EINVAL,
                     "policy.yaml:1:10: workdir: must not contain control characters");
        expect_error("workdir: \"/a\\0b\"", EINVAL,
                     "policy.yaml:1:10: workdir: must not contain NUL characters");
        expect_error("workdir: [/a]", EINVAL,
                     "policy.yaml:1:10: workdir: expected a path, got a list");

        char *yaml = malloc(5000);
        cr_assert_not_null(yaml);
        strcpy(yaml, "workdir: /");
        memset(yaml + 10, 'a', 4095);
        yaml[10 + 4095] = '\0';
        expect_error(yaml, ENAMETOOLONG,
                     "policy.yaml:1:10: workdir: is longer than 4095 characters");
        yaml[10 + 4094] = '\0'; /* exactly 4095 */
        struct policy q;
        load_ok(&q, yaml);
        cr_assert_eq(strlen(q.workdir), 4095);
        policy_free(&q);
        free(yaml);
}

Test(policy, readonly_rootfs)
{
        static const struct {
                const char *yaml;
                bool want;
        } cases[] = {
                {"readonly_rootfs: true", true}, {"readonly_rootfs: false", false},
                {"readonly_rootfs: yes", true},  {"readonly_rootfs: no", false},
                {"readonly_rootfs: True", true}, {"readonly_rootfs: FALSE", false},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct policy p;
                load_ok(&p, cases[i].want ? "readonly_rootfs: false" : "readonly_rootfs: true");
                psrun_error err = {0};
                cr_assert_eq(load(&p, cases[i].yaml, &err), 0, "%s", err.msg);
                cr_assert_eq(p.readonly_rootfs, cases[i].want, "%s", cases[i].yaml);
                policy_free(&p);
        }
        expect_error("readonly_rootfs: maybe", EINVAL,
                     "policy.yaml:1:18: readonly_rootfs: expected a boolean (true or false), got "
                     "a string");
        expect_error("readonly_rootfs: 1", EINVAL,
                     "policy.yaml:1:18: readonly_rootfs: expected a boolean (true or false), got "
                     "a number");
        expect_error("readonly_rootfs: on", EINVAL,
                     "policy.yaml:1:18: readonly_rootfs: expected a boolean (true or false), got "
                     "a string");
        expect_error("readonly_rootfs: 'yes'", EINVAL,
                     "policy.yaml:1:18: readonly_rootfs: expected a boolean (true or false), got "
                     "a string");
        expect_error("readonly_rootfs:", EINVAL,
                     "policy.yaml:1:17: readonly_rootfs: expected a boolean (true or false), got "
                     "null");
}

Test(policy, user)
{
        static const struct {
                const char *yaml;
                uint32_t uid, gid;
        } cases[] = {
                {"user: 0", 0, 0},
                {"user: '0'", 0, 0},
                {"user: 1000:100", 1000, 100},
                {"user: \"65535:0\"", 65535, 0},
                {"user: root", 0, 0},
                {"user: sandbox", 1000, 1000},
                {"user: 42", 42, 42},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct policy p;
                load_ok(&p, cases[i].yaml);
                cr_assert_eq(p.uid, cases[i].uid, "%s", cases[i].yaml);
                cr_assert_eq(p.gid, cases[i].gid, "%s", cases[i].yaml);
                policy_free(&p);
        }
        expect_error("user: nobody", EINVAL,
                     "policy.yaml:1:7: user: \"nobody\" is not a user (use UID[:GID], root or "
                     "sandbox)");
        expect_error("user: 70000", ERANGE,
                     "policy.yaml:1:7: user: \"70000\" is out of range (ids are 0 to 65535)");
        expect_error("user: 1000:70000", ERANGE,
                     "policy.yaml:1:7: user: \"1000:70000\" is out of range (ids are 0 to "
                     "65535)");
        expect_error("user: -1", EINVAL,
                     "policy.yaml:1:7: user: \"-1\" is not a user (use UID[:GID], root or "
                     "sandbox)");
        expect_error("user: '1000:'", EINVAL,
                     "policy.yaml:1:7: user: \"1000:\" is not a user (use UID[:GID], root or "
                     "sandbox)");
        expect_error("user: {uid: 1}", EINVAL,
                     "policy.yaml:1:7: user: expected UID[:GID], got a mapping");
}

Test(policy, hostname_and_profile)
{
        struct policy p;

        load_ok(&p, "hostname: a\napparmor_profile: /usr/bin/tool");
        cr_assert_str_eq(p.hostname, "a");
        cr_assert_str_eq(p.apparmor_profile, "/usr/bin/tool");
        policy_free(&p);
        load_ok(&p, "hostname: 1234"); /* a YAML number is taken as text */
        cr_assert_str_eq(p.hostname, "1234");
        policy_free(&p);

        const char *bad_hostname = "is not a valid hostname (1-63 letters, digits or '-', not "
                                   "starting or ending with '-')";
        const char *bad[] = {"hostname: -box",
                             "hostname: box-",
                             "hostname: a_b",
                             "hostname: a.b",
                             "hostname: ''",
                             "hostname: "
                             "hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct policy q;
                psrun_error err = {0};
                init(&q);
                cr_assert_eq(load(&q, bad[i], &err), -EINVAL, "%s", bad[i]);
                cr_assert(strstr(err.msg, bad_hostname), "%s: %s", bad[i], err.msg);
                cr_assert_str_eq(q.hostname, "sandbox");
                policy_free(&q);
        }
        expect_error("hostname: -box", EINVAL,
                     "policy.yaml:1:11: hostname: \"-box\" is not a valid hostname (1-63 letters, "
                     "digits or '-', not starting or ending with '-')");
        expect_error("apparmor_profile: 'a b'", EINVAL,
                     "policy.yaml:1:19: apparmor_profile: must not contain whitespace or control "
                     "characters");
        expect_error("apparmor_profile: \"a\\tb\"", EINVAL,
                     "policy.yaml:1:19: apparmor_profile: must not contain whitespace or control "
                     "characters");
        expect_error("apparmor_profile: ''", EINVAL,
                     "policy.yaml:1:19: apparmor_profile: must not be empty");
        expect_error("apparmor_profile:", EINVAL,
                     "policy.yaml:1:18: apparmor_profile: expected a profile name, got null");
}

Test(policy, enum_errors)
{
        expect_error("network: internet", EINVAL,
                     "policy.yaml:1:10: network: `internet` is not one of none, restricted, full");
        expect_error("a: 1\n\n\n\nnetwork:    internet\n", EINVAL,
                     "policy.yaml:1:1: unknown key `a`");
        expect_error("\n\n\n\nnetwork:    internet\n", EINVAL,
                     "policy.yaml:5:13: network: `internet` is not one of none, restricted, full");
        expect_error("network: None", EINVAL,
                     "policy.yaml:1:10: network: `None` is not one of none, restricted, full");
        expect_error("network: [none]", EINVAL,
                     "policy.yaml:1:10: network: expected one of none, restricted, full, got a "
                     "list");
        expect_error("backend: docker", EINVAL,
                     "policy.yaml:1:10: backend: `docker` is not one of native, gvisor");
        expect_error("gvisor_platform: hypervisor", EINVAL,
                     "policy.yaml:1:18: gvisor_platform: `hypervisor` is not one of auto, "
                     "systrap, kvm, ptrace");
        expect_error("landlock: sometimes", EINVAL,
                     "policy.yaml:1:11: landlock: `sometimes` is not one of auto, required, off");
        expect_error("violations: all", EINVAL,
                     "policy.yaml:1:13: violations: `all` is not one of off, summary, full");
        expect_error("violations: [full]", EINVAL,
                     "policy.yaml:1:13: violations: expected one of off, summary, full, got a "
                     "list");
        expect_error("apparmor: on", EINVAL,
                     "policy.yaml:1:11: apparmor: `on` is not one of auto, required, off");
        expect_error("apparmor: true", EINVAL,
                     "policy.yaml:1:11: apparmor: `true` is not one of auto, required, off");
}

Test(policy, allow_domains)
{
        struct policy p;
        psrun_error err = {0};

        load_ok(&p, "allow_domains: Example.COM");
        cr_assert_eq(p.n_allow_domains, 1);
        cr_assert_str_eq(p.allow_domains[0], "example.com");
        cr_assert_null(p.allow_domains[1]);
        /* a second source adds to the list; duplicates collapse */
        cr_assert_eq(
                load(&p, "allow_domains: [a.org, '*.B.org', a.org, A.ORG., example.com]", &err), 0,
                "%s", err.msg);
        cr_assert_eq(p.n_allow_domains, 3);
        cr_assert_str_eq(p.allow_domains[0], "example.com");
        cr_assert_str_eq(p.allow_domains[1], "a.org");
        cr_assert_str_eq(p.allow_domains[2], "*.b.org");
        cr_assert_null(p.allow_domains[3]);
        cr_assert_eq(load(&p, "allow_domains: []", &err), 0);
        cr_assert_eq(p.n_allow_domains, 3);
        policy_free(&p);

        expect_error("allow_domains: [ok.com, bad_domain.com]", EINVAL,
                     "policy.yaml:1:25: allow_domains[1]: \"bad_domain.com\" is not a valid "
                     "domain name: only letters, digits, '-' and '.' are allowed");
        expect_error("allow_domains:\n  - '*'\n", EINVAL,
                     "policy.yaml:2:5: allow_domains[0]: \"*\" is not a valid domain name: only "
                     "letters, digits, '-' and '.' are allowed");
        expect_error("allow_domains: [-a.com]", EINVAL,
                     "policy.yaml:1:17: allow_domains[0]: \"-a.com\" is not a valid domain name: "
                     "a label starts or ends with '-'");
        expect_error("allow_domains: [a..com]", EINVAL,
                     "policy.yaml:1:17: allow_domains[0]: \"a..com\" is not a valid domain name: "
                     "empty label");
        expect_error("allow_domains: {a: b}", EINVAL,
                     "policy.yaml:1:16: allow_domains: expected a list of domain names, got a "
                     "mapping");
        expect_error("allow_domains: [[a.com]]", EINVAL,
                     "policy.yaml:1:17: allow_domains[0]: expected a domain name, got a list");
}

Test(policy, mounts_errors)
{
        expect_error("mounts:\n  - /src:dst\n", EINVAL,
                     "policy.yaml:2:5: mounts[0].target: must be an absolute path");
        expect_error("mounts:\n  - source: /a\n    target: rel\n", EINVAL,
                     "policy.yaml:3:13: mounts[0].target: must be an absolute path");
        expect_error("mounts: [/a:/b, {source: '', target: /c}]", EINVAL,
                     "policy.yaml:1:26: mounts[1].source: must not be empty");
        expect_error("mounts: [/a:/]", EINVAL,
                     "policy.yaml:1:10: mounts[0].target: must not be `/`");
        expect_error("mounts: ['/a:/x/../']", EINVAL,
                     "policy.yaml:1:10: mounts[0].target: must not contain `..`");
        expect_error("mounts: [/a:/proc]", EINVAL,
                     "policy.yaml:1:10: mounts[0].target: must not be /proc or below it (psrun "
                     "sets it up)");
        expect_error("mounts: [/a:/proc/sys/kernel]", EINVAL,
                     "policy.yaml:1:10: mounts[0].target: must not be /proc or below it (psrun "
                     "sets it up)");
        expect_error("mounts: [/a:/dev//shm]", EINVAL,
                     "policy.yaml:1:10: mounts[0].target: must not be /dev or below it (psrun "
                     "sets it up)");
        expect_error("mounts: [{source: /a, target: /.oldroot}]", EINVAL,
                     "policy.yaml:1:31: mounts[0].target: must not be /.oldroot or below it "
                     "(psrun sets it up)");
        expect_error("mounts: [/a:/data, /b:/data/]", EINVAL,
                     "policy.yaml:1:20: mounts[1].target: \"/data\" is already the target of "
                     "mounts[0]");
        expect_error("mounts: [{sorce: /a, target: /b}]", EINVAL,
                     "policy.yaml:1:11: mounts[0]: unknown key `sorce`, did you mean `source`?");
        expect_error("mounts: [{source: /a, target: /b, mode: ro}]", EINVAL,
                     "policy.yaml:1:35: mounts[0]: unknown key `mode`");
        expect_error("mounts: [{source: /a}]", EINVAL,
                     "policy.yaml:1:10: mounts[0]: missing `target`");
        expect_error("mounts: [{source: /a, target: /b, source: /c}]", EINVAL,
                     "policy.yaml:1:35: mounts[0]: duplicate key `source`");
        expect_error("mounts: [{source: /a, target: /b, readonly: maybe}]", EINVAL,
                     "policy.yaml:1:45: mounts[0].readonly: expected a boolean (true or false), "
                     "got a string");
        expect_error("mounts: [/a:/b:rx]", EINVAL,
                     "policy.yaml:1:10: mounts[0]: mode `rx` is not one of ro, rw");
        expect_error("mounts: [/a:/b:ro:x]", EINVAL,
                     "policy.yaml:1:10: mounts[0]: mode `ro:x` is not one of ro, rw");
        expect_error("mounts: [/just/a/path]", EINVAL,
                     "policy.yaml:1:10: mounts[0]: \"/just/a/path\" is not SOURCE:TARGET[:ro|rw]");
        expect_error("mounts: [[/a, /b]]", EINVAL,
                     "policy.yaml:1:10: mounts[0]: expected SOURCE:TARGET[:ro|rw] or a mapping, "
                     "got a list");
        expect_error("mounts: {source: /a, target: /b}", EINVAL,
                     "policy.yaml:1:9: mounts: expected a list of mounts, got a mapping");
}

Test(policy, mounts_append_and_normalize)
{
        struct policy p;
        psrun_error err = {0};

        load_ok(&p, "mounts: ['//src/./a/:/dst//b/']");
        cr_assert_eq(p.n_mounts, 1);
        cr_assert_str_eq(p.mounts[0].source, "/src/a");
        cr_assert_str_eq(p.mounts[0].target, "/dst/b");
        /* a later source adds mounts, like repeated -v */
        cr_assert_eq(load(&p, "mounts: [/x:/y:rw, ./rel/dir:/z]", &err), 0, "%s", err.msg);
        cr_assert_eq(p.n_mounts, 3);
        cr_assert_str_eq(p.mounts[1].target, "/y");
        cr_assert_not(p.mounts[1].readonly);
        cr_assert_str_eq(p.mounts[2].source, "./rel/dir");
        cr_assert_str_eq(p.mounts[2].target, "/z");
        cr_assert(p.mounts[2].readonly);
        cr_assert_eq(load(&p, "mounts: []", &err), 0, "%s", err.msg);
        cr_assert_eq(p.n_mounts, 3);
        /* a target already used by an earlier source is refused, all or nothing */
        cr_assert_eq(load(&p, "mounts: [/q:/w, /x:/y]", &err), -EINVAL);
        cr_assert(strstr(err.msg, "\"/y\" is already the target of an earlier mount"), "%s",
                  err.msg);
        cr_assert_eq(p.n_mounts, 3);
        policy_free(&p);
}

Test(policy, kernel_quotas)
{
        struct policy p;
        psrun_error err = {0};

        init(&p);
        cr_expect_eq(p.pty_limit, 64);
        cr_expect_eq(p.inotify_limit, 16);
        cr_expect_eq(p.inotify_watch_limit, 8192);
        cr_expect_eq(p.fanotify_limit, 8);
        cr_expect_eq(p.fanotify_mark_limit, 8192);
        cr_expect_eq(p.namespace_limit, 0);
        cr_expect_eq(p.sigpending_limit, 1024);
        cr_assert_eq(policy_set_option(&p, "sigpending_limit=0", &err), 0, "%s", err.msg);
        cr_expect_eq(p.sigpending_limit, 0);
        cr_expect_eq(p.msgqueue_limit, 128 << 10);
        cr_assert_eq(policy_set_option(&p, "msgqueue_limit=1M", &err), 0, "%s", err.msg);
        cr_expect_eq(p.msgqueue_limit, 1 << 20);
        cr_assert_eq(policy_set_option(&p, "msgqueue_limit=0", &err), 0, "%s", err.msg);
        cr_expect_eq(p.msgqueue_limit, 0);
        policy_free(&p);

        expect_error("pty_limit: 0\n", ERANGE,
                     "policy.yaml:1:12: pty_limit: must be greater than 0");
        expect_option_error("pty_limit=4097", ERANGE,
                            "-o pty_limit: \"4097\" is too large (at most 4096)");
        expect_option_error("inotify_limit=lots", EINVAL,
                            "-o inotify_limit: \"lots\" is not an integer");
        expect_option_error("namespace_limit=-1", ERANGE,
                            "-o namespace_limit: must not be negative");
        expect_option_error("msgqueue_limit=2G", ERANGE,
                            "-o msgqueue_limit: \"2G\" is too large (at most 1G)");
}
