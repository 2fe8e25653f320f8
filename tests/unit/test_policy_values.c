/* SPDX-License-Identifier: MIT */
/*
 * The pure value functions behind the policy parser: sizes, durations, CPU
 * counts, enum names, key suggestions, paths, domain names, users.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

struct size_case {
        const char *text;
        int ret;
        uint64_t value;
};

static const struct size_case size_cases[] = {
        {"0", 0, 0},
        {"1", 0, 1},
        {"4096", 0, 4096},
        {"1b", 0, 1},
        {"1k", 0, KiB},
        {"1K", 0, KiB},
        {"1kb", 0, KiB},
        {"1KiB", 0, KiB},
        {"64k", 0, 64 * KiB},
        {"512M", 0, 512 * MiB},
        {"100MB", 0, 100 * MiB},
        {"1GiB", 0, GiB},
        {"1 G", -EINVAL, 0}, /* no space before the unit */
        {"1G ", -EINVAL, 0},
        {"1.5G", 0, 3 * GiB / 2},
        {".5K", 0, 512},
        {"1.3K", 0, 1331}, /* 1331.2 rounded down */
        {"1.0", 0, 1},     /* a whole number written with a fraction */
        {"1T", 0, 1ULL << 40},
        {"1P", 0, 1ULL << 50},
        {"1E", 0, 1ULL << 60},
        {"15E", 0, 15ULL << 60},
        {"18446744073709551615", 0, UINT64_MAX},
        {"18446744073709551616", -ERANGE, 0},
        {"16E", -ERANGE, 0},
        {"99999999999999999999999P", -ERANGE, 0},
        {"99999999999999999999999Q", -EINVAL, 0}, /* a bad unit beats an overflow */
        {"1.5", -EINVAL, 0},                      /* a fraction of a byte */
        {"1.5b", -EINVAL, 0},
        {"", -EINVAL, 0},
        {"k", -EINVAL, 0},
        {"M", -EINVAL, 0},
        {"-1", -EINVAL, 0},
        {"-1M", -EINVAL, 0},
        {"+1", -EINVAL, 0},
        {" 1", -EINVAL, 0},
        {"1.", -EINVAL, 0},
        {"1.G", -EINVAL, 0},
        {"1..5G", -EINVAL, 0},
        {"12Q", -EINVAL, 0},
        {"1ZB", -EINVAL, 0},
        {"1Mi", -EINVAL, 0},
        {"1MBB", -EINVAL, 0},
        {"0x10", -EINVAL, 0},
        {"1e3", -EINVAL, 0},
        {"inf", -EINVAL, 0},
        {"nan", -EINVAL, 0},
};

Test(units, parse_size_cases)
{
        for (size_t i = 0; i < ARRAY_SIZE(size_cases); i++) {
                const struct size_case *c = &size_cases[i];
                uint64_t v = 12345;
                int r = parse_size(c->text, &v);
                cr_assert_eq(r, c->ret, "parse_size(\"%s\") = %d, want %d", c->text, r, c->ret);
                if (c->ret == 0)
                        cr_assert_eq(v, c->value, "parse_size(\"%s\") = %llu, want %llu", c->text,
                                     (unsigned long long) v, (unsigned long long) c->value);
                else
                        cr_assert_eq(v, 12345, "parse_size(\"%s\") wrote on failure", c->text);
        }
}

Test(units, parse_size_null)
{
        uint64_t v;
        cr_assert_eq(parse_size(NULL, &v), -EINVAL);
}

static const struct size_case duration_cases[] = {
        {"0", 0, 0},
        {"300", 0, 300000},
        {"2.5", 0, 2500},
        {"300s", 0, 300000},
        {"5m", 0, 300000},
        {"5min", 0, 300000},
        {"1h", 0, 3600000},
        {"1.5h", 0, 5400000},
        {"1d", 0, 86400000},
        {"30d", 0, 30ULL * 86400000},
        {"500ms", 0, 500},
        {"500MS", 0, 500},
        {"0.5ms", 0, 0}, /* 1 ms resolution, rounded down */
        {"0.001", 0, 1},
        {".5s", 0, 500},
        {"10 s", -EINVAL, 0}, /* no space before the unit */
        {"18446744073709551615ms", 0, UINT64_MAX},
        {"18446744073709552s", -ERANGE, 0},
        {"99999999999999999999", -ERANGE, 0},
        {"", -EINVAL, 0},
        {"s", -EINVAL, 0},
        {"-1", -EINVAL, 0},
        {"-5s", -EINVAL, 0},
        {"5x", -EINVAL, 0},
        {"5 minutes", -EINVAL, 0},
        {"1h30m", -EINVAL, 0},
        {"1.", -EINVAL, 0},
        {"1e3", -EINVAL, 0},
};

Test(units, parse_duration_cases)
{
        for (size_t i = 0; i < ARRAY_SIZE(duration_cases); i++) {
                const struct size_case *c = &duration_cases[i];
                uint64_t v = 12345;
                int r = parse_duration_ms(c->text, &v);
                cr_assert_eq(r, c->ret, "parse_duration_ms(\"%s\") = %d, want %d", c->text, r,
                             c->ret);
                if (c->ret == 0)
                        cr_assert_eq(v, c->value, "parse_duration_ms(\"%s\") = %llu, want %llu",
                                     c->text, (unsigned long long) v,
                                     (unsigned long long) c->value);
                else
                        cr_assert_eq(v, 12345, "parse_duration_ms(\"%s\") wrote on failure",
                                     c->text);
        }
}

Test(units, parse_cpus)
{
        double v = 0;

        cr_assert_eq(parse_cpus("2", &v), 0);
        cr_assert_float_eq(v, 2.0, 1e-9);
        cr_assert_eq(parse_cpus("0.5", &v), 0);
        cr_assert_float_eq(v, 0.5, 1e-9);
        cr_assert_eq(parse_cpus(".25", &v), 0);
        cr_assert_float_eq(v, 0.25, 1e-9);
        cr_assert_eq(parse_cpus("1.5", &v), 0);
        cr_assert_float_eq(v, 1.5, 1e-9);
        cr_assert_eq(parse_cpus("99999999999999999999", &v), -ERANGE);
        const char *bad[] = {"", "abc", "1.", "-1", "1e3", "inf", "nan", "0x1", "2 ", "2c"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                cr_assert_eq(parse_cpus(bad[i], &v), -EINVAL, "parse_cpus(\"%s\")", bad[i]);
}

Test(units, parse_uint64)
{
        uint64_t v = 0;

        cr_assert_eq(parse_uint64("0", &v), 0);
        cr_assert_eq(v, 0);
        cr_assert_eq(parse_uint64("4194304", &v), 0);
        cr_assert_eq(v, 4194304);
        cr_assert_eq(parse_uint64("18446744073709551615", &v), 0);
        cr_assert_eq(v, UINT64_MAX);
        cr_assert_eq(parse_uint64("18446744073709551616", &v), -ERANGE);
        cr_assert_eq(parse_uint64("", &v), -EINVAL);
        cr_assert_eq(parse_uint64("-1", &v), -EINVAL);
        cr_assert_eq(parse_uint64("1.5", &v), -EINVAL);
        cr_assert_eq(parse_uint64("12a", &v), -EINVAL);
}

Test(units, format_round_trip)
{
        char buf[32];
        const uint64_t sizes[] = {0,          1,   1000,       KiB,       4 * MiB,
                                  1536 * MiB, GiB, 1ULL << 50, UINT64_MAX};

        format_size(4 * MiB, buf, sizeof(buf));
        cr_assert_str_eq(buf, "4M");
        format_size(1ULL << 50, buf, sizeof(buf));
        cr_assert_str_eq(buf, "1P");
        format_size(1000, buf, sizeof(buf));
        cr_assert_str_eq(buf, "1000");
        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                uint64_t back;
                format_size(sizes[i], buf, sizeof(buf));
                cr_assert_eq(parse_size(buf, &back), 0, "%s", buf);
                cr_assert_eq(back, sizes[i], "%s", buf);
        }

        format_duration_ms(30ULL * 86400000, buf, sizeof(buf));
        cr_assert_str_eq(buf, "30d");
        format_duration_ms(300000, buf, sizeof(buf));
        cr_assert_str_eq(buf, "5m");
        format_duration_ms(1500, buf, sizeof(buf));
        cr_assert_str_eq(buf, "1500ms");
        format_duration_ms(0, buf, sizeof(buf));
        cr_assert_str_eq(buf, "0s");
        const uint64_t durations[] = {0, 1, 999, 1000, 90000, 3600000, 86400000 + 1};
        for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
                uint64_t back;
                format_duration_ms(durations[i], buf, sizeof(buf));
                cr_assert_eq(parse_duration_ms(buf, &back), 0, "%s", buf);
                cr_assert_eq(back, durations[i], "%s", buf);
        }
}

/* ---- enums: every value round-trips, nothing else does ---- */

Test(enums, network_round_trip)
{
        for (int i = 0; i < _POLICY_NETWORK_MAX; i++) {
                const char *s = policy_network_to_string((enum policy_network) i);
                cr_assert_not_null(s, "network %d has no name", i);
                cr_assert_eq(policy_network_from_string(s), i, "%s", s);
        }
        cr_assert_null(policy_network_to_string(_POLICY_NETWORK_MAX));
        cr_assert_null(policy_network_to_string((enum policy_network) - 1));
        cr_assert_str_eq(policy_network_to_string(POLICY_NETWORK_NONE), "none");
        cr_assert_str_eq(policy_network_to_string(POLICY_NETWORK_RESTRICTED), "restricted");
        cr_assert_str_eq(policy_network_to_string(POLICY_NETWORK_FULL), "full");
        cr_assert_eq(policy_network_from_string("internet"), -EINVAL);
        cr_assert_eq(policy_network_from_string("None"), -EINVAL);
        cr_assert_eq(policy_network_from_string(""), -EINVAL);
        cr_assert_eq(policy_network_from_string(NULL), -EINVAL);
}

Test(enums, backend_round_trip)
{
        for (int i = 0; i < _POLICY_BACKEND_MAX; i++) {
                const char *s = policy_backend_to_string((enum policy_backend) i);
                cr_assert_not_null(s, "backend %d has no name", i);
                cr_assert_eq(policy_backend_from_string(s), i, "%s", s);
        }
        cr_assert_null(policy_backend_to_string(_POLICY_BACKEND_MAX));
        cr_assert_null(policy_backend_to_string((enum policy_backend) - 1));
        cr_assert_str_eq(policy_backend_to_string(POLICY_BACKEND_NATIVE), "native");
        cr_assert_str_eq(policy_backend_to_string(POLICY_BACKEND_GVISOR), "gvisor");
        cr_assert_eq(policy_backend_from_string("docker"), -EINVAL);
        cr_assert_eq(policy_backend_from_string(NULL), -EINVAL);
}

Test(enums, layer_round_trip)
{
        for (int i = 0; i < _POLICY_LAYER_MAX; i++) {
                const char *s = policy_layer_to_string((enum policy_layer) i);
                cr_assert_not_null(s, "layer %d has no name", i);
                cr_assert_eq(policy_layer_from_string(s), i, "%s", s);
        }
        cr_assert_null(policy_layer_to_string(_POLICY_LAYER_MAX));
        cr_assert_null(policy_layer_to_string((enum policy_layer) - 1));
        cr_assert_str_eq(policy_layer_to_string(POLICY_LAYER_AUTO), "auto");
        cr_assert_str_eq(policy_layer_to_string(POLICY_LAYER_REQUIRED), "required");
        cr_assert_str_eq(policy_layer_to_string(POLICY_LAYER_OFF), "off");
        cr_assert_eq(policy_layer_from_string("on"), -EINVAL);
        cr_assert_eq(policy_layer_from_string(NULL), -EINVAL);
}

/* ---- suggestions ---- */

struct suggest_case {
        const char *word;
        const char *want; /* NULL: no suggestion */
};

static const struct suggest_case suggest_cases[] = {
        {"network_mode", "network"}, /* begins with a key */
        {"netwrok", "network"},      /* transposition: distance 2 */
        {"Network", "network"},      /* case */
        {"NETWORK", "network"},
        {"memory-limit", "memory_limit"}, /* '-' for '_' */
        {"memory_limt", "memory_limit"},
        {"memory_limit_mb", "memory_limit"},
        {"mem", "memory_limit"}, /* unique prefix */
        {"memory", "memory_limit"},
        {"cpu", "cpu_limit"},
        {"pids", "pids_limit"},
        {"timeout_ms", "timeout"},
        {"envs", "env"},
        {"env_vars", "env"},
        {"mount", "mounts"},
        {"readonly", "readonly_rootfs"},
        {"apparmor_profil", "apparmor_profile"},
        {"apparmor_foo", "apparmor"}, /* longest key it begins with */
        {"apparmor_profile_x", "apparmor_profile"},
        {"landlok", "landlock"},
        {"hostnam", "hostname"},
        {"app", NULL}, /* prefix of two keys */
        {"frobnicate", NULL},
        {"x", NULL},
        {"", NULL},
        {"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", NULL},
};

Test(suggest, keys)
{
        for (size_t i = 0; i < ARRAY_SIZE(suggest_cases); i++) {
                const struct suggest_case *c = &suggest_cases[i];
                const char *got = policy_suggest_key(c->word);
                if (c->want)
                        cr_assert(got && strcmp(got, c->want) == 0, "suggest(\"%s\") = %s, want %s",
                                  c->word, got ? got : "NULL", c->want);
                else
                        cr_assert_null(got, "suggest(\"%s\") = %s, want none", c->word, got);
        }
        cr_assert_null(policy_suggest_key(NULL));
}

Test(suggest, from_candidates)
{
        const char *const names[] = {"source", "target", "readonly"};

        cr_assert_str_eq(policy_suggest_from("sorce", names, 3), "source");
        cr_assert_str_eq(policy_suggest_from("tagret", names, 3), "target");
        cr_assert_str_eq(policy_suggest_from("read_only", names, 3), "readonly");
        cr_assert_str_eq(policy_suggest_from("read", names, 3), "readonly");
        cr_assert_null(policy_suggest_from("dest", names, 3));
        cr_assert_null(policy_suggest_from("ro", names, 3));
        cr_assert_null(policy_suggest_from("source", names, 0));
}

/* ---- pure checks ---- */

static void expect_path(const char *in, const char *want)
{
        _cleanup_free_ char *out = NULL;
        psrun_error err = {0};
        int r = policy_normalize_path(in, &out, &err);

        cr_assert_eq(r, 0, "normalize(\"%s\"): %s", in, err.msg);
        cr_assert_str_eq(out, want, "normalize(\"%s\")", in);
}

static void expect_bad_path(const char *in, int errnum, const char *msg)
{
        char *out = NULL;
        psrun_error err = {0};
        int r = policy_normalize_path(in, &out, &err);

        cr_assert_eq(r, -errnum, "normalize(\"%s\") = %d", in, r);
        cr_assert_null(out);
        cr_assert_str_eq(err.msg, msg, "normalize(\"%s\")", in);
}

Test(checks, normalize_path)
{
        expect_path("/", "/");
        expect_path("//", "/");
        expect_path("/workspace", "/workspace");
        expect_path("/a//b/./c/", "/a/b/c");
        expect_path("/./.", "/");
        expect_path("/a/.../b", "/a/.../b");
        expect_path("/a/..b", "/a/..b");
        expect_bad_path("", EINVAL, "must be an absolute path");
        expect_bad_path("rel", EINVAL, "must be an absolute path");
        expect_bad_path("./a", EINVAL, "must be an absolute path");
        expect_bad_path("/a/../b", EINVAL, "must not contain `..`");
        expect_bad_path("/..", EINVAL, "must not contain `..`");
        expect_bad_path("/a/b/..", EINVAL, "must not contain `..`");
        expect_bad_path("/a\nb", EINVAL, "must not contain control characters");

        char long_path[POLICY_PATH_MAX + 2];
        memset(long_path, 'a', sizeof(long_path));
        long_path[0] = '/';
        long_path[POLICY_PATH_MAX] = '\0'; /* exactly the limit */
        _cleanup_free_ char *out = NULL;
        psrun_error err = {0};
        cr_assert_eq(policy_normalize_path(long_path, &out, &err), 0);
        long_path[POLICY_PATH_MAX] = 'a';
        long_path[POLICY_PATH_MAX + 1] = '\0';
        expect_bad_path(long_path, ENAMETOOLONG, "is longer than 4095 characters");
}

Test(checks, mount_target)
{
        psrun_error err = {0};
        const char *ok[] = {"/data",    "/workspace/x", "/procfs",
                            "/devices", "/.oldrootx",   "/opt/proc"};
        const char *bad[] = {"/",        "/proc",     "/proc/sys",  "/dev",
                             "/dev/shm", "/.oldroot", "/.oldroot/a"};

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                cr_assert_eq(policy_check_mount_target(ok[i], &err), 0, "%s: %s", ok[i], err.msg);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                cr_assert_eq(policy_check_mount_target(bad[i], &err), -EINVAL, "%s", bad[i]);
        policy_check_mount_target("/proc/1", &err);
        cr_assert_str_eq(err.msg, "must not be /proc or below it (psrun sets it up)");
        policy_check_mount_target("/", &err);
        cr_assert_str_eq(err.msg, "must not be `/`");
}

static void expect_domain(const char *in, const char *want)
{
        _cleanup_free_ char *out = NULL;
        psrun_error err = {0};

        cr_assert_eq(policy_normalize_domain(in, &out, &err), 0, "%s: %s", in, err.msg);
        cr_assert_str_eq(out, want, "%s", in);
}

Test(checks, domains)
{
        char label63[64], label64[65], long_name[260];
        psrun_error err = {0};
        char *out = NULL;

        expect_domain("example.com", "example.com");
        expect_domain("Example.COM", "example.com");
        expect_domain("*.Example.com", "*.example.com");
        expect_domain("example.com.", "example.com");
        expect_domain("localhost", "localhost");
        expect_domain("a-b.c0.io", "a-b.c0.io");
        expect_domain("123.com", "123.com");

        memset(label63, 'a', 63);
        label63[63] = '\0';
        expect_domain(label63, label63);
        memset(label64, 'a', 64);
        label64[64] = '\0';

        /* 4 labels of 63 + 3 dots = 255 > 253 */
        snprintf(long_name, sizeof(long_name), "%s.%s.%s.%s", label63, label63, label63, label63);

        const char *bad[] = {"",          ".",
                             "*",         "*.",
                             "*.*.a.com", "a.*.com",
                             "a..b",      ".a.com",
                             "-a.com",    "a-.com",
                             "a_b.com",   "exa mple.com",
                             "a.com/x",   "ex\xc3\xa4mple.com",
                             label64,     long_name,
                             "a.com..",   "http://a.com"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_assert_eq(policy_normalize_domain(bad[i], &out, &err), -EINVAL,
                             "accepted \"%s\"", bad[i]);
                cr_assert_null(out);
        }
        policy_normalize_domain(label64, &out, &err);
        cr_assert(strstr(err.msg, "a label is longer than 63 characters"), "%s", err.msg);
        policy_normalize_domain("a_b.com", &out, &err);
        cr_assert_str_eq(err.msg, "\"a_b.com\" is not a valid domain name: only letters, "
                                  "digits, '-' and '.' are allowed");
}

Test(checks, hostname)
{
        char h63[64], h64[65];
        psrun_error err = {0};

        memset(h63, 'h', 63);
        h63[63] = '\0';
        memset(h64, 'h', 64);
        h64[64] = '\0';
        const char *ok[] = {"sandbox", "a", "my-box", "Box1", "0", h63};
        const char *bad[] = {"", "-a", "a-", "a_b", "a.b", "a b", h64};
        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                cr_assert_eq(policy_check_hostname(ok[i], &err), 0, "%s", ok[i]);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                cr_assert_eq(policy_check_hostname(bad[i], &err), -EINVAL, "%s", bad[i]);
}

Test(checks, env_names)
{
        psrun_error err = {0};
        const char *ok[] = {"A", "_", "PATH", "a_b", "_X1", "lower"};
        const char *bad[] = {"", "1A", "A-B", "A B", "A=B", "Ä", "A.B"};

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                cr_assert_eq(policy_check_env_name(ok[i], &err), 0, "%s", ok[i]);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                cr_assert_eq(policy_check_env_name(bad[i], &err), -EINVAL, "%s", bad[i]);
}

Test(checks, apparmor_profile)
{
        char p255[256], p256[257];
        psrun_error err = {0};

        memset(p255, 'p', 255);
        p255[255] = '\0';
        memset(p256, 'p', 256);
        p256[256] = '\0';
        cr_assert_eq(policy_check_apparmor_profile("psrun-default", &err), 0);
        cr_assert_eq(policy_check_apparmor_profile("/usr/bin/foo", &err), 0);
        cr_assert_eq(policy_check_apparmor_profile(p255, &err), 0);
        const char *bad[] = {"", "a b", "a\tb", "a\nb", "a\x7f", p256};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                cr_assert_eq(policy_check_apparmor_profile(bad[i], &err), -EINVAL, "case %zu", i);
}

struct user_case {
        const char *text;
        int ret;
        uint32_t uid, gid;
};

Test(checks, users)
{
        static const struct user_case cases[] = {
                {"0", 0, 0, 0},
                {"1000", 0, 1000, 1000},
                {"1000:100", 0, 1000, 100},
                {"65535:65535", 0, 65535, 65535},
                {"0:65535", 0, 0, 65535},
                {"root", 0, 0, 0},
                {"sandbox", 0, 1000, 1000},
                {"65536", -ERANGE, 0, 0},
                {"1000:65536", -ERANGE, 0, 0},
                {"99999999999999999999", -ERANGE, 0, 0},
                {"", -EINVAL, 0, 0},
                {"abc", -EINVAL, 0, 0},
                {"Root", -EINVAL, 0, 0},
                {"-1", -EINVAL, 0, 0},
                {"1000:", -EINVAL, 0, 0},
                {":1000", -EINVAL, 0, 0},
                {"1:2:3", -EINVAL, 0, 0},
                {"1000:abc", -EINVAL, 0, 0},
                {" 1", -EINVAL, 0, 0},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                uint32_t uid = 7, gid = 7;
                psrun_error err = {0};
                int r = policy_parse_user(cases[i].text, &uid, &gid, &err);
                cr_assert_eq(r, cases[i].ret, "user \"%s\" = %d (%s)", cases[i].text, r, err.msg);
                if (r == 0) {
                        cr_assert_eq(uid, cases[i].uid, "%s", cases[i].text);
                        cr_assert_eq(gid, cases[i].gid, "%s", cases[i].text);
                } else {
                        cr_assert(uid == 7 && gid == 7, "\"%s\" wrote on failure", cases[i].text);
                }
        }
}

Test(checks, escape)
{
        char buf[128];
        char longv[200];

        cr_assert_str_eq(policy_escape("plain", buf, sizeof(buf)), "plain");
        cr_assert_str_eq(policy_escape("a\nb\tc\"d\\e`f\x01", buf, sizeof(buf)),
                         "a\\nb\\tc\\\"d\\\\e\\`f\\x01");
        memset(longv, 'x', sizeof(longv) - 1);
        longv[sizeof(longv) - 1] = '\0';
        policy_escape(longv, buf, sizeof(buf));
        cr_assert_lt(strlen(buf), 80);
        cr_assert(strstr(buf, "...") != NULL);
        /* A tiny buffer is still terminated. */
        policy_escape(longv, buf, 10);
        cr_assert_lt(strlen(buf), 10);
}
