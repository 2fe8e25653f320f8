/* SPDX-License-Identifier: MIT */
/*
 * The policy parser, source by source: unknown keys, malformed and hostile
 * documents, -o, files, and that a failing source leaves the policy exactly
 * as it was; then policy_copy and policy_validate.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "lib/testlib.h"
#include "policy_test.h"

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
        set_ok(&p, "gvisor_platform=kvm");
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
        cr_assert_eq(p.gvisor_platform, POLICY_GVISOR_PLATFORM_KVM);

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
        char dir[64];
        char path[256], missing[256];
        struct policy p;
        psrun_error err = {0};

        test_tmp_template(dir, sizeof(dir), "psrun-policy-test");
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

/* ---- bounded parsing (issue 10): depth, values, tags ---- */

static char *repeat(const char *head, const char *unit, size_t n, const char *mid,
                    const char *close_unit, const char *tail)
{
        size_t len = strlen(head) + n * (strlen(unit) + strlen(close_unit)) + strlen(mid) +
                     strlen(tail) + 1;
        char *s = malloc(len), *o = s;
        cr_assert_not_null(s);
        o = stpcpy(o, head);
        for (size_t i = 0; i < n; i++)
                o = stpcpy(o, unit);
        o = stpcpy(o, mid);
        for (size_t i = 0; i < n; i++)
                o = stpcpy(o, close_unit);
        stpcpy(o, tail);
        return s;
}

static double seconds_since(const struct timespec *t0)
{
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (double) (t1.tv_sec - t0->tv_sec) + (double) (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

Test(policy, deep_nesting_refused_fast)
{
        /* 100,000 levels took libyaml 35 s before the depth was bounded. */
        _cleanup_free_ char *flow = repeat("env: ", "[", 100000, "", "]", "\n");
        _cleanup_free_ char *opt = repeat("env=", "{a: ", 20000, "1", "}", "");
        struct policy p;
        psrun_error err = {0};
        struct timespec t0;

        init(&p);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(policy_load_buffer(&p, "deep.yaml", flow, strlen(flow), &err), -EINVAL);
        cr_assert_str_eq(err.msg, "deep.yaml:1:69: nested too deeply (more than 64 levels)");
        cr_assert_eq(policy_set_option(&p, opt, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "-o env: nested too deeply (more than 64 levels)");
        cr_assert_lt(seconds_since(&t0), 1.0, "deep documents took %.2f s", seconds_since(&t0));
        /* Block style too; and 64 levels (the top mapping is one) are still a
         * (wrong-typed) value. */
        char block[8192], *o = block;
        o += sprintf(o, "env:\n");
        for (int i = 1; i <= 70; i++)
                o += sprintf(o, "%*sk:\n", i, "");
        cr_assert_eq(policy_load_buffer(&p, "block.yaml", block, strlen(block), &err), -EINVAL);
        cr_assert(strstr(err.msg, "nested too deeply"), "%s", err.msg);
        _cleanup_free_ char *ok = repeat("env: ", "[", 63, "", "]", "\n");
        cr_assert_eq(policy_load_buffer(&p, "ok.yaml", ok, strlen(ok), &err), -EINVAL);
        cr_assert(strstr(err.msg, "expected"), "%s", err.msg);
        policy_free(&p);
}

Test(policy, many_values_refused)
{
        /* 300,000 one-character list items fit in 1 MiB. */
        _cleanup_free_ char *wide = repeat("allow_domains: [", "a,", 300000, "a", "", "]\n");
        struct policy p;
        psrun_error err = {0};
        init(&p);
        cr_assert_eq(policy_load_buffer(&p, "wide.yaml", wide, strlen(wide), &err), -E2BIG);
        cr_assert(strstr(err.msg, "more than 262144 YAML values"), "%s", err.msg);
        policy_free(&p);
}

Test(policy, tags_refused)
{
        expect_error("timeout: !foo 5\n", EINVAL,
                     "policy.yaml:1:10: YAML tag `!foo` is not supported: write the value alone");
        expect_error("timeout: !!str 5\n", EINVAL,
                     "policy.yaml:1:10: YAML tag `tag:yaml.org,2002:str` is not supported: write "
                     "the value alone");
        expect_error("env: !custom {A: b}\n", EINVAL,
                     "policy.yaml:1:6: YAML tag `!custom` is not supported: write the value "
                     "alone");
        expect_option_error("env={A: !x b}", EINVAL,
                            "-o env: YAML tag `!x` is not supported: write the value alone");
}
