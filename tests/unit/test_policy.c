/* SPDX-License-Identifier: MIT */
/*
 * The policy parser: defaults, every key in every accepted form, every
 * rejection with its exact message and line:column, -o, JSON, and that a
 * failing source leaves the policy exactly as it was.
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

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* ---- helpers ---- */

static void init(struct policy *p)
{
        cr_assert_eq(policy_init(p), 0);
}

static int load(struct policy *p, const char *yaml, psrun_error *err)
{
        return policy_load_buffer(p, "policy.yaml", yaml, strlen(yaml), err);
}

/* Loads yaml over the defaults and asserts success. */
static void load_ok(struct policy *p, const char *yaml)
{
        psrun_error err = {0};

        init(p);
        int r = load(p, yaml, &err);
        cr_assert_eq(r, 0, "load failed (%d): %s\n--- yaml:\n%s", r, err.msg, yaml);
}

static void set_ok(struct policy *p, const char *opt)
{
        psrun_error err = {0};
        int r = policy_set_option(p, opt, &err);

        cr_assert_eq(r, 0, "-o %s failed (%d): %s", opt, r, err.msg);
}

static bool str_eq_null(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* Deep equality, field by field: what "unchanged" means. */
static void assert_policy_eq(const struct policy *a, const struct policy *b)
{
        cr_assert_eq(a->network, b->network);
        cr_assert_eq(a->n_allow_domains, b->n_allow_domains);
        for (size_t i = 0; i < a->n_allow_domains; i++)
                cr_assert_str_eq(a->allow_domains[i], b->allow_domains[i]);
        cr_assert_eq(a->memory_limit, b->memory_limit);
        cr_assert_float_eq(a->cpu_limit, b->cpu_limit, 1e-12);
        cr_assert_eq(a->pids_limit, b->pids_limit);
        cr_assert_eq(a->disk_limit, b->disk_limit);
        cr_assert_eq(a->timeout_ms, b->timeout_ms);
        cr_assert_eq(a->n_env, b->n_env);
        for (size_t i = 0; i < a->n_env; i++) {
                cr_assert_str_eq(a->env[i].name, b->env[i].name);
                cr_assert(str_eq_null(a->env[i].value, b->env[i].value));
        }
        cr_assert_str_eq(a->workdir, b->workdir);
        cr_assert_eq(a->readonly_rootfs, b->readonly_rootfs);
        cr_assert_eq(a->uid, b->uid);
        cr_assert_eq(a->gid, b->gid);
        cr_assert_eq(a->backend, b->backend);
        cr_assert_eq(a->n_mounts, b->n_mounts);
        for (size_t i = 0; i < a->n_mounts; i++) {
                cr_assert_str_eq(a->mounts[i].source, b->mounts[i].source);
                cr_assert_str_eq(a->mounts[i].target, b->mounts[i].target);
                cr_assert_eq(a->mounts[i].readonly, b->mounts[i].readonly);
        }
        cr_assert_str_eq(a->hostname, b->hostname);
        cr_assert_eq(a->landlock, b->landlock);
        cr_assert_eq(a->apparmor, b->apparmor);
        cr_assert(str_eq_null(a->apparmor_profile, b->apparmor_profile));
}

/* A policy that differs from the defaults in every field, so that a failed
 * load can be checked against something non-trivial. */
static const char busy_yaml[] = "network: restricted\n"
                                "allow_domains: [pypi.org]\n"
                                "memory_limit: 1G\n"
                                "cpu_limit: 2\n"
                                "pids_limit: 100\n"
                                "disk_limit: 2G\n"
                                "timeout: 60\n"
                                "env: {A: a, B: ~}\n"
                                "workdir: /work\n"
                                "readonly_rootfs: false\n"
                                "user: 0\n"
                                "backend: gvisor\n"
                                "mounts: [/src:/src]\n"
                                "hostname: busy\n"
                                "landlock: required\n"
                                "apparmor: off\n"
                                "apparmor_profile: custom\n";

static void assert_one_line(const psrun_error *err)
{
        cr_assert_null(strchr(err->msg, '\n'), "message is not one line: %s", err->msg);
        cr_assert_gt(strlen(err->msg), 0);
}

/* Loading yaml over a busy policy fails with errnum and exactly msg, and
 * leaves the policy untouched. */
static void expect_error(const char *yaml, int errnum, const char *msg)
{
        struct policy p, before;
        psrun_error err = {0};

        load_ok(&p, busy_yaml);
        load_ok(&before, busy_yaml);
        int r = load(&p, yaml, &err);
        cr_assert_eq(r, -errnum, "want %d, got %d (%s)\n--- yaml:\n%s", -errnum, r, err.msg, yaml);
        cr_assert_eq(err.code, errnum);
        cr_assert_str_eq(err.msg, msg, "\n got: %s\nwant: %s\n--- yaml:\n%s", err.msg, msg, yaml);
        assert_one_line(&err);
        assert_policy_eq(&p, &before);
        policy_free(&p);
        policy_free(&before);
}

/* Same for -o. */
static void expect_option_error(const char *opt, int errnum, const char *msg)
{
        struct policy p, before;
        psrun_error err = {0};

        load_ok(&p, busy_yaml);
        load_ok(&before, busy_yaml);
        int r = policy_set_option(&p, opt, &err);
        cr_assert_eq(r, -errnum, "-o %s: want %d, got %d (%s)", opt, -errnum, r, err.msg);
        cr_assert_eq(err.code, errnum);
        cr_assert_str_eq(err.msg, msg, "-o %s\n got: %s\nwant: %s", opt, err.msg, msg);
        assert_one_line(&err);
        assert_policy_eq(&p, &before);
        policy_free(&p);
        policy_free(&before);
}

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
                {"landlock: auto", offsetof(struct policy, landlock), POLICY_LAYER_AUTO},
                {"landlock: required", offsetof(struct policy, landlock), POLICY_LAYER_REQUIRED},
                {"landlock: off", offsetof(struct policy, landlock), POLICY_LAYER_OFF},
                {"apparmor: auto", offsetof(struct policy, apparmor), POLICY_LAYER_AUTO},
                {"apparmor: required", offsetof(struct policy, apparmor), POLICY_LAYER_REQUIRED},
                {"apparmor: 'off'", offsetof(struct policy, apparmor), POLICY_LAYER_OFF},
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
        expect_error("landlock: sometimes", EINVAL,
                     "policy.yaml:1:11: landlock: `sometimes` is not one of auto, required, off");
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

/* ---- document-level errors ---- */

Test(policy, unknown_keys)
{
        expect_error("network_mode: none\n", EINVAL,
                     "policy.yaml:1:1: unknown key `network_mode`, did you mean `network`?");
        expect_error("memory_limit: 1G\nnetwork_mode: none\n", EINVAL,
                     "policy.yaml:2:1: unknown key `network_mode`, did you mean `network`?");
        expect_error("  memroy_limit: 1G\n", EINVAL,
                     "policy.yaml:1:3: unknown key `memroy_limit`, did you mean `memory_limit`?");
        expect_error("Timeout: 5", EINVAL,
                     "policy.yaml:1:1: unknown key `Timeout`, did you mean `timeout`?");
        expect_error("frobnicate: 1\n", EINVAL, "policy.yaml:1:1: unknown key `frobnicate`");
        expect_error("\"we\\nird\": 1\n", EINVAL, "policy.yaml:1:1: unknown key `we\\nird`");
        expect_error("network: none\nnetwork: full\n", EINVAL,
                     "policy.yaml:2:1: duplicate key `network`");
        expect_error("[a]: 1\n", EINVAL, "policy.yaml:1:1: expected a string as key, got a list");
}

Test(policy, top_level_must_be_mapping)
{
        expect_error("- network: none\n", EINVAL,
                     "policy.yaml:1:1: the top level must be a mapping of keys, got a list");
        expect_error("hello\n", EINVAL,
                     "policy.yaml:1:1: the top level must be a mapping of keys, got a string");
        expect_error("[]", EINVAL,
                     "policy.yaml:1:1: the top level must be a mapping of keys, got a list");
}

Test(policy, malformed_yaml)
{
        expect_error("network: none\n  bad: indent\n", EINVAL,
                     "policy.yaml:2:6: YAML syntax error: mapping values are not allowed in this "
                     "context");
        expect_error("network: [none\n", EINVAL,
                     "policy.yaml:2:1: YAML syntax error: did not find expected ',' or ']'");
        expect_error("env: {A: b\n", EINVAL,
                     "policy.yaml:2:1: YAML syntax error: did not find expected ',' or '}'");
        expect_error("network: 'none\n", EINVAL,
                     "policy.yaml:2:1: YAML syntax error: found unexpected end of stream");
        expect_error("network: *undefined\n", EINVAL,
                     "policy.yaml:1:10: YAML syntax error: found undefined alias");
        expect_error("hostname: box\ncpu_limit: 1\n\tpids_limit: 3\n", EINVAL,
                     "policy.yaml:3:1: YAML syntax error: found a tab character that violates "
                     "indentation");
        /* invalid UTF-8 is located by offset */
        expect_error("hostname: box\nnetwork: \xff\n", EINVAL,
                     "policy.yaml:2:10: YAML syntax error: invalid leading UTF-8 octet");
        expect_error("network: none\n---\nnetwork: full\n", EINVAL,
                     "policy.yaml:3:1: only one YAML document is allowed");
        expect_error("network: none\n---\n[\n", EINVAL,
                     "policy.yaml:4:1: YAML syntax error: did not find expected node content");
}

Test(policy, anchors_and_aliases)
{
        struct policy p;

        load_ok(&p, "hostname: &h box\n"
                    "env: {HOST: *h}\n"
                    "allow_domains: &d [a.com]\n"
                    "network: restricted\n");
        cr_assert_str_eq(p.hostname, "box");
        cr_assert_str_eq(p.env[0].value, "box");
        policy_free(&p);
        /* A self-referencing node must not send the walk into a loop. */
        expect_error("mounts: &m [*m]\n", EINVAL,
                     "policy.yaml:1:9: mounts[0]: expected SOURCE:TARGET[:ro|rw] or a mapping, "
                     "got a list");
}

Test(policy, size_limit)
{
        size_t len = POLICY_MAX_DOCUMENT_SIZE + 1;
        char *big = malloc(len + 1);
        struct policy p;
        psrun_error err = {0};

        cr_assert_not_null(big);
        memset(big, '#', len);
        big[len] = '\0';
        init(&p);
        cr_assert_eq(policy_load_buffer(&p, "big.yaml", big, len, &err), -EFBIG);
        cr_assert_str_eq(err.msg, "big.yaml: larger than 1 MiB");
        /* exactly the limit is fine (all comment) */
        cr_assert_eq(policy_load_buffer(&p, "big.yaml", big, len - 1, &err), 0, "%s", err.msg);
        policy_free(&p);
        free(big);
}

Test(policy, null_error_pointer)
{
        struct policy p;

        init(&p);
        cr_assert_eq(policy_load_buffer(&p, NULL, "network: bogus", 14, NULL), -EINVAL);
        cr_assert_eq(policy_load_buffer(&p, NULL, "workdir: rel", 12, NULL), -EINVAL);
        cr_assert_eq(policy_set_option(&p, "workdir=rel", NULL), -EINVAL);
        cr_assert_eq(policy_set_option(&p, "bogus", NULL), -EINVAL);
        cr_assert_eq(policy_set_option(&p, "hostname=box", NULL), 0);
        p.memory_limit = 1;
        cr_assert_eq(policy_validate(&p, NULL), -ERANGE);
        policy_free(&p);
}

Test(policy, default_name)
{
        struct policy p;
        psrun_error err = {0};

        init(&p);
        cr_assert_eq(policy_load_buffer(&p, NULL, "bogus: 1", 8, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "policy:1:1: unknown key `bogus`");
        policy_free(&p);
}

/* ---- all or nothing ---- */

Test(policy, failed_load_changes_nothing)
{
        /* Every key before the bad one is valid and would change the policy. */
        expect_error("network: full\n"
                     "memory_limit: 2G\n"
                     "cpu_limit: 3\n"
                     "pids_limit: 10\n"
                     "disk_limit: 3G\n"
                     "timeout: 1h\n"
                     "env: {A: changed, NEW: x}\n"
                     "workdir: /elsewhere\n"
                     "readonly_rootfs: true\n"
                     "user: root\n"
                     "backend: native\n"
                     "mounts: [/x:/y]\n"
                     "allow_domains: [x.com]\n"
                     "hostname: other\n"
                     "landlock: off\n"
                     "apparmor: required\n"
                     "apparmor_profile: other\n"
                     "bogus: 1\n",
                     EINVAL, "policy.yaml:18:1: unknown key `bogus`");
        /* failing half-way through a list */
        expect_error("env: [X=1, Y=2, 9=3]", EINVAL,
                     "policy.yaml:1:17: env[2]: \"9\" is not a valid variable name (letters, "
                     "digits and '_', not starting with a digit)");
        expect_error("mounts: [/a:/a, /b:/b, /c:c]", EINVAL,
                     "policy.yaml:1:24: mounts[2].target: must be an absolute path");
        expect_error("allow_domains: [a.com, b.com, -]", EINVAL,
                     "policy.yaml:1:31: allow_domains[2]: \"-\" is not a valid domain name: a "
                     "label starts or ends with '-'");
        expect_error("hostname: ok\nnetwork: [\n", EINVAL,
                     "policy.yaml:3:1: YAML syntax error: did not find expected node content");
}

Test(policy, failed_option_changes_nothing)
{
        expect_option_error("env={NEW: x, 9: y}", EINVAL,
                            "-o env.9: \"9\" is not a valid variable name (letters, digits and "
                            "'_', not starting with a digit)");
        expect_option_error("mounts=[/new:/new, /x:/proc]", EINVAL,
                            "-o mounts[1].target: must not be /proc or below it (psrun sets it "
                            "up)");
        expect_option_error("allow_domains=[new.com, 'a b']", EINVAL,
                            "-o allow_domains[1]: \"a b\" is not a valid domain name: only "
                            "letters, digits, '-' and '.' are allowed");
}

/* ---- -o ---- */

Test(option, accepted_forms)
{
        struct policy p;

        init(&p);
        set_ok(&p, "memory_limit=1G");
        set_ok(&p, "cpu_limit=1.5");
        set_ok(&p, "pids_limit= 100 ");
        set_ok(&p, "timeout=90s");
        set_ok(&p, "network=restricted");
        set_ok(&p, "allow_domains=[a.com,B.org]");
        set_ok(&p, "readonly_rootfs=false");
        set_ok(&p, "user=0:0");
        set_ok(&p, "workdir=/w/./x/");
        set_ok(&p, "hostname=\"box\"");
        set_ok(&p, "mounts=/src:/dst:ro");
        set_ok(&p, "landlock=off");
        set_ok(&p, "apparmor_profile=my-prof");
        set_ok(&p, "backend=gvisor");
        cr_assert_eq(p.memory_limit, GiB);
        cr_assert_float_eq(p.cpu_limit, 1.5, 1e-12);
        cr_assert_eq(p.pids_limit, 100);
        cr_assert_eq(p.timeout_ms, 90000);
        cr_assert_eq(p.network, POLICY_NETWORK_RESTRICTED);
        cr_assert_eq(p.n_allow_domains, 2);
        cr_assert_str_eq(p.allow_domains[1], "b.org");
        cr_assert_not(p.readonly_rootfs);
        cr_assert_eq(p.uid, 0);
        cr_assert_str_eq(p.workdir, "/w/x");
        cr_assert_str_eq(p.hostname, "box");
        cr_assert_eq(p.n_mounts, 1);
        cr_assert_str_eq(p.mounts[0].source, "/src");
        cr_assert_str_eq(p.mounts[0].target, "/dst");
        cr_assert(p.mounts[0].readonly);
        cr_assert_eq(p.landlock, POLICY_LAYER_OFF);
        cr_assert_str_eq(p.apparmor_profile, "my-prof");
        cr_assert_eq(p.backend, POLICY_BACKEND_GVISOR);

        /* a plain value is taken literally: no alias, no comment; lists add up */
        set_ok(&p, "allow_domains=*.example.com");
        cr_assert_eq(p.n_allow_domains, 3);
        cr_assert_str_eq(p.allow_domains[2], "*.example.com");
        set_ok(&p, "env=A=b#c");
        set_ok(&p, "env={B: 'x y', C: ~}");
        set_ok(&p, "env=TERM");
        set_ok(&p, "env=[D=1, E]");
        cr_assert_eq(p.n_env, 6);
        cr_assert_str_eq(p.env[0].value, "b#c");
        cr_assert_str_eq(p.env[1].value, "x y");
        cr_assert_null(p.env[2].value);
        cr_assert_str_eq(p.env[3].name, "TERM");
        cr_assert_null(p.env[3].value);
        cr_assert_str_eq(p.env[4].value, "1");
        cr_assert_null(p.env[5].value);

        set_ok(&p, "mounts=[{source: /a, target: /b, readonly: false}, /c:/d]");
        cr_assert_eq(p.n_mounts, 3);
        cr_assert_not(p.mounts[1].readonly);
        cr_assert(p.mounts[2].readonly);

        psrun_error err = {0};
        cr_assert_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        policy_free(&p);
}

Test(option, after_file_overrides_only_that_key)
{
        struct policy p;

        load_ok(&p, "memory_limit: 2G\ncpu_limit: 2\n");
        set_ok(&p, "memory_limit=1G");
        cr_assert_eq(p.memory_limit, GiB);
        cr_assert_float_eq(p.cpu_limit, 2.0, 1e-12);
        policy_free(&p);
}

Test(option, errors)
{
        expect_option_error("memory", EINVAL, "-o memory: expected key=value");
        expect_option_error("=5", EINVAL, "-o =5: expected key=value");
        expect_option_error("", EINVAL, "-o : expected key=value");
        expect_option_error("memory_limit=12Q", EINVAL,
                            "-o memory_limit: \"12Q\" is not a size (use e.g. 512M, 2G)");
        expect_option_error("memory_limit=1M", ERANGE,
                            "-o memory_limit: \"1M\" is too small (at least 4M)");
        expect_option_error("network_mode=none", EINVAL,
                            "-o network_mode: unknown key `network_mode`, did you mean `network`?");
        expect_option_error("frob=1", EINVAL, "-o frob: unknown key `frob`");
        expect_option_error("network=internet", EINVAL,
                            "-o network: `internet` is not one of none, restricted, full");
        expect_option_error("timeout=0", ERANGE, "-o timeout: must be greater than 0");
        expect_option_error("timeout=-3", ERANGE, "-o timeout: must be greater than 0");
        expect_option_error("hostname=", EINVAL, "-o hostname: expected a hostname, got null");
        expect_option_error("pids_limit={a: 1}", EINVAL,
                            "-o pids_limit: expected an integer, got a mapping");
        expect_option_error("mounts=/a:rel", EINVAL, "-o mounts.target: must be an absolute path");
        expect_option_error("mounts=[/a:/b, /c:rel]", EINVAL,
                            "-o mounts[1].target: must be an absolute path");
        expect_option_error("env={A: [1]}", EINVAL,
                            "-o env.A: expected a string or null, got a list");
        expect_option_error("env={A: b", EINVAL,
                            "-o env: YAML syntax error: did not find expected ',' or '}' (at "
                            "the end of the value)");
        expect_option_error("env=[A] x", EINVAL,
                            "-o env: YAML syntax error: did not find expected <document start> "
                            "(at character 5)");
        expect_option_error("readonly_rootfs=maybe", EINVAL,
                            "-o readonly_rootfs: expected a boolean (true or false), got a string");
        expect_option_error("hostname=\xff", EINVAL, "-o hostname: value is not valid UTF-8");
        expect_option_error("user=nobody", EINVAL,
                            "-o user: \"nobody\" is not a user (use UID[:GID], root or sandbox)");
}

/* ---- files ---- */

Test(file, load_and_errors)
{
        char dir[] = "/tmp/psrun-policy-test-XXXXXX";
        char path[256], missing[256];
        struct policy p;
        psrun_error err = {0};

        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/p.yaml", dir);
        snprintf(missing, sizeof(missing), "%s/missing.yaml", dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("memory_limit: 1G\nnetwork_mode: none\n", f);
        fclose(f);

        init(&p);
        cr_assert_eq(policy_load_file(&p, path, &err), -EINVAL);
        char want[512];
        snprintf(want, sizeof(want), "%s:2:1: unknown key `network_mode`, did you mean `network`?",
                 path);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(p.memory_limit, 512 * MiB);

        f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("memory_limit: 1G\n", f);
        fclose(f);
        cr_assert_eq(policy_load_file(&p, path, &err), 0, "%s", err.msg);
        cr_assert_eq(p.memory_limit, GiB);

        cr_assert_eq(policy_load_file(&p, missing, &err), -ENOENT);
        snprintf(want, sizeof(want), "policy: open %s: No such file or directory", missing);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(err.code, ENOENT);

        cr_assert_eq(policy_load_file(&p, dir, &err), -EISDIR);
        snprintf(want, sizeof(want), "policy: read %s: Is a directory", dir);
        cr_assert_str_eq(err.msg, want);

        /* just over 1 MiB of comments */
        f = fopen(path, "w");
        cr_assert_not_null(f);
        for (size_t i = 0; i <= POLICY_MAX_DOCUMENT_SIZE; i++)
                fputc(i % 80 == 79 ? '\n' : '#', f);
        fclose(f);
        cr_assert_eq(policy_load_file(&p, path, &err), -EFBIG);
        snprintf(want, sizeof(want), "policy: %s: larger than 1 MiB", path);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(p.memory_limit, GiB);

        unlink(path);
        rmdir(dir);
        policy_free(&p);
}

/* ---- copy and validate ---- */

Test(policy, copy_is_deep)
{
        struct policy a, b;

        load_ok(&a, busy_yaml);
        cr_assert_eq(policy_copy(&b, &a), 0);
        assert_policy_eq(&a, &b);
        cr_assert_neq(a.env, b.env);
        cr_assert_neq(a.env[0].name, b.env[0].name);
        cr_assert_neq(a.mounts[0].target, b.mounts[0].target);
        cr_assert_neq(a.allow_domains[0], b.allow_domains[0]);
        cr_assert_neq(a.workdir, b.workdir);
        policy_free(&a);
        cr_assert_str_eq(b.env[0].name, "A"); /* still valid after freeing a */
        policy_free(&b);
}

Test(validate, allow_domains_need_restricted)
{
        struct policy p;
        psrun_error err = {0};

        load_ok(&p, "allow_domains: [pypi.org]");
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "allow_domains: only used with `network: restricted`");
        set_ok(&p, "network=full");
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        set_ok(&p, "network=restricted");
        cr_assert_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        policy_free(&p);
}

/* The C API can fill the struct directly; validate catches what the parser would have. */
Test(validate, catches_direct_writes)
{
        struct policy p;
        psrun_error err = {0};

        init(&p);
        p.memory_limit = 1;
        cr_assert_eq(policy_validate(&p, &err), -ERANGE);
        cr_assert_str_eq(err.msg, "memory_limit: must be between 4M and 1P");
        policy_free(&p);

        init(&p);
        p.timeout_ms = 0;
        cr_assert_eq(policy_validate(&p, &err), -ERANGE);
        cr_assert_str_eq(err.msg, "timeout: must be between 1ms and 30d");
        policy_free(&p);

        init(&p);
        p.cpu_limit = 0.0 / 0.0;
        cr_assert_eq(policy_validate(&p, &err), -ERANGE);
        cr_assert_str_eq(err.msg, "cpu_limit: must be greater than 0 and at most 1024");
        policy_free(&p);

        init(&p);
        p.network = (enum policy_network) 7;
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "network: invalid value 7");
        policy_free(&p);

        init(&p);
        p.uid = 70000;
        cr_assert_eq(policy_validate(&p, &err), -ERANGE);
        policy_free(&p);

        init(&p);
        free(p.workdir);
        p.workdir = strdup("/a//b");
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "workdir: must be written as /a/b");
        policy_free(&p);

        init(&p);
        free(p.hostname);
        p.hostname = strdup("bad host");
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert(strstr(err.msg, "hostname: \"bad host\" is not a valid hostname"), "%s", err.msg);
        policy_free(&p);

        init(&p);
        p.mounts = calloc(2, sizeof(*p.mounts));
        p.n_mounts = 2;
        p.mounts[0] = (struct policy_mount){strdup("/a"), strdup("/x"), true};
        p.mounts[1] = (struct policy_mount){strdup("/b"), strdup("/x"), true};
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "mounts[1].target: already the target of mounts[0]");
        free(p.mounts[1].target);
        p.mounts[1].target = strdup("/dev/x");
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert_str_eq(err.msg,
                         "mounts[1].target: must not be /dev or below it (psrun sets it up)");
        policy_free(&p);

        init(&p);
        p.env = calloc(1, sizeof(*p.env));
        p.n_env = 1;
        p.env[0].name = strdup("BAD-NAME");
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert(strstr(err.msg, "env[0]: \"BAD-NAME\" is not a valid variable name"), "%s",
                  err.msg);
        policy_free(&p);

        init(&p);
        p.network = POLICY_NETWORK_RESTRICTED;
        p.allow_domains = calloc(2, sizeof(char *));
        p.allow_domains[0] = strdup("Upper.COM");
        p.n_allow_domains = 1;
        cr_assert_eq(policy_validate(&p, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "allow_domains[0]: must be written as upper.com");
        policy_free(&p);
}
