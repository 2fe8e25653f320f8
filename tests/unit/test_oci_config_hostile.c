/* SPDX-License-Identifier: MIT */
/*
 * The config.json parser on hostile input: YAML that is not JSON, syntax
 * errors, nesting, value-count and size limits, file errors, and a bounded
 * mutation fuzz loop over the fixtures.
 */
#include <limits.h>

#include "lib/testlib.h"
#include "oci_config_test.h"

/* ---- not JSON, syntax, limits ---- */

Test(oci_config_hostile, yaml_that_is_not_json)
{
        CASES({"{\"ociVersion\": &v \"1.0.2\", \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: not JSON: YAML anchor \"&v\""},
              {"{\"ociVersion\": \"1.0.2\", \"root\": &r {\"path\": \"r\"}}", EINVAL,
               "config.json:1:33: not JSON: YAML anchor \"&r\""},
              {"{\"ociVersion\": \"1.0.2\", \"root\": *r}", EINVAL,
               "config.json:1:33: not JSON: YAML alias \"*r\""},
              {"{\"a\": &x [1, 2], \"b\": *x}", EINVAL,
               "config.json:1:7: not JSON: YAML anchor \"&x\""},
              {"{\"ociVersion\": !!str \"1.0.2\"}", EINVAL,
               "config.json:1:16: not JSON: YAML tag \"tag:yaml.org,2002:str\""},
              {"ociVersion: 1.0.2\nroot: {path: r}\n", EINVAL,
               "config.json:1:1: not JSON: YAML block-style mapping"},
              {"{\"a\":\n- 1\n}", EINVAL,
               "config.json:2:1: JSON syntax error: did not find expected node content"},
              {"{'ociVersion': '1.0.2'}", EINVAL,
               "config.json:1:2: not JSON: strings must be in double quotes"},
              {"{\"ociVersion\": 1.0.2}", EINVAL,
               "config.json:1:16: not JSON: \"1.0.2\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{ociVersion: \"1.0.2\"}", EINVAL,
               "config.json:1:2: not JSON: \"ociVersion\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{1: \"x\"}", EINVAL, "config.json:1:2: not JSON: object keys must be strings"},
              {"{[1]: \"x\"}", EINVAL, "config.json:1:2: not JSON: object keys must be strings"},
              {"{\"a\": }", EINVAL, "config.json:1:7: not JSON: a value is missing"},
              {"{\"a\": 0x10}", EINVAL,
               "config.json:1:7: not JSON: \"0x10\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{\"a\": 010}", EINVAL,
               "config.json:1:7: not JSON: \"010\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{\"a\": +1}", EINVAL,
               "config.json:1:7: not JSON: \"+1\" is not a number, true, false or null (strings "
               "must be in double quotes)"},
              {"{\"a\": .5}", EINVAL,
               "config.json:1:7: not JSON: \".5\" is not a number, true, false or null (strings "
               "must be in double quotes)"},
              {"{\"a\": True}", EINVAL,
               "config.json:1:7: not JSON: \"True\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{\"a\": ~}", EINVAL,
               "config.json:1:7: not JSON: \"~\" is not a number, true, false or null (strings "
               "must be in double quotes)"},
              {"{\"a\": .nan}", EINVAL,
               "config.json:1:7: not JSON: \".nan\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"---\n{\"ociVersion\": \"1.0.2\"}", EINVAL,
               "config.json:1:1: not JSON: YAML document start (\"---\" or a directive)"},
              {"%YAML 1.1\n---\n{}", EINVAL,
               "config.json:1:1: not JSON: YAML document start (\"---\" or a directive)"},
              {"{\"ociVersion\": \"1.0.2\"}\n...\n", EINVAL,
               "config.json:2:1: not JSON: YAML document end (\"...\")"},
              {"{\"a\": 1}\n---\n{\"b\": 2}", EINVAL,
               "config.json:2:1: more than one JSON document"},
              {"{\"a\": |\n  text\n}", EINVAL,
               "config.json:1:7: JSON syntax error: found character that cannot start any "
               "token"});
        assert_no_leaks();
}

Test(oci_config_hostile, syntax_errors_and_empty_text)
{
        CASES({"", EINVAL, "config.json:1:1: empty, expected a JSON object"},
              {"  \n\t\n", EINVAL, "config.json:1:1: empty, expected a JSON object"},
              {"# just a comment\n", EINVAL, "config.json:1:1: empty, expected a JSON object"},
              {"{\"ociVersion\": \"1.0.2\",\n \"root\" {\"path\": \"r\"}}", EINVAL,
               "config.json:2:9: not JSON: a value is missing"},
              {"{\"ociVersion\": \"1.0.2\"\n \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:2:2: JSON syntax error: did not find expected ',' or '}'"},
              {"{\"ociVersion\": \"1.0.2\"", EINVAL,
               "config.json:2:1: JSON syntax error: did not find expected ',' or '}'"},
              {"{\"a\": [1, 2}", EINVAL,
               "config.json:1:12: JSON syntax error: did not find expected ',' or ']'"},
              {"{\"a\": \"x\xff\"}", EINVAL,
               "config.json:1:9: JSON syntax error: invalid leading UTF-8 octet"},
              {"{\"a\": \"unterminated}", EINVAL,
               "config.json:1:21: JSON syntax error: found unexpected end of stream"},
              {"{\"a\": \"\\q\"}", EINVAL,
               "config.json:1:8: JSON syntax error: found unknown escape character"},
              {"{} {}", EINVAL,
               "config.json:1:4: JSON syntax error: did not find expected <document start>"});
        /* NUL bytes inside the buffer. */
        expect_error_len("{\"ociVersion\": \"1.0.2\"}\0", 24, EINVAL,
                         "config.json:1:24: not JSON: NUL byte in the text");
        expect_error_len("{\n\"a\":\0 1}", 9, EINVAL,
                         "config.json:2:5: not JSON: NUL byte in the text");
        /* A NULL buffer is the empty text. */
        expect_error_len(NULL, 0, EINVAL, "config.json:1:1: empty, expected a JSON object");
        assert_no_leaks();
}

/* JSON allows tabs before and after the top-level value, where YAML would
 * take them for indentation. */
Test(oci_config_hostile, tabs_around_the_document)
{
        struct oci_config c;

        parse_ok("\t \t{\"ociVersion\":\t\"1.0.2\",\n\t\"root\": {\"path\": \"r\"}}\n\t\r\n\t", &c);
        cr_assert_str_eq(c.root.path, "r");
        oci_config_free(&c);
        expect_error("\t{\"ociVersion\": \"1.0.2\",\n\t\"root\": 5}\t", EINVAL,
                     "config.json:2:10: root: expected an object, got a number");
        assert_no_leaks();
}

static char *nested(size_t depth)
{
        /* {"ociVersion": "1.0.2", "root": {"path": "r"}, "x": [[[...]]]} */
        static const char head[] =
                "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"}, \"x\": ";
        size_t len = strlen(head) + 2 * depth + 2;
        char *s = malloc(len);

        cr_assert_not_null(s);
        memcpy(s, head, strlen(head));
        memset(s + strlen(head), '[', depth);
        memset(s + strlen(head) + depth, ']', depth);
        s[len - 2] = '}';
        s[len - 1] = '\0';
        return s;
}

Test(oci_config_hostile, nesting_is_bounded)
{
        struct oci_config c;
        _cleanup_free_ char *ok = nested(OCI_CONFIG_MAX_DEPTH - 1);
        _cleanup_free_ char *deep = nested(OCI_CONFIG_MAX_DEPTH);
        _cleanup_free_ char *very_deep = nested(1000000);

        /* The top-level object is one level. */
        parse_ok(ok, &c);
        oci_config_free(&c);
        expect_error(deep, EINVAL, "config.json:1:116: nested too deeply (more than 64 levels)");
        expect_error(very_deep, EINVAL,
                     "config.json:1:116: nested too deeply (more than 64 levels)");
        assert_no_leaks();
}

Test(oci_config_hostile, value_count_is_bounded)
{
        static const char head[] =
                "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"}, \"x\": [";
        size_t n = OCI_CONFIG_MAX_NODES, len = strlen(head) + 2 * n + 2;
        _cleanup_free_ char *json = malloc(len + 1);
        struct oci_config c;
        char *o;

        cr_assert_not_null(json);
        o = json + strlen(head);
        memcpy(json, head, strlen(head));
        for (size_t i = 0; i < n; i++) {
                *o++ = '0';
                *o++ = ',';
        }
        o[-1] = ']';
        *o++ = '}';
        *o = '\0';
        /* The document's own values (object, keys, strings, root, ...) push it
         * over: 262144 zeros plus 9 others. */
        expect_error(json, E2BIG, "config.json:1:524324: too many values (more than 262144)");

        /* Many values below the limit are fine, and a map of 50000 keys is
         * checked for duplicates without comparing every pair. */
        size_t keys = 50000;
        _cleanup_free_ char *map = malloc(keys * 24 + 256);
        cr_assert_not_null(map);
        o = map + sprintf(map, HEAD "\"annotations\": {");
        for (size_t i = 0; i < keys; i++)
                o += sprintf(o, "%s\"k%zu\": \"v\"", i ? ", " : "", i);
        sprintf(o, "}}");
        parse_ok(map, &c);
        cr_assert_eq(c.n_annotations, keys);
        cr_assert_str_eq(c.annotations[keys - 1].key, "k49999");
        oci_config_free(&c);
        sprintf(o, ", \"k123\": \"again\"}}");
        expect_error(map, EINVAL, "config.json:2:738907: annotations[\"k123\"]: duplicate key");
        assert_no_leaks();
}

Test(oci_config_hostile, size_is_bounded)
{
        size_t len = OCI_CONFIG_MAX_SIZE + 1;
        _cleanup_free_ char *big = malloc(len);
        char path[PATH_MAX];
        test_tmp_template(path, sizeof(path), "psrun-oci-config");
        struct oci_config c;
        psrun_error err = {0};
        int fd;

        cr_assert_not_null(big);
        /* A valid config padded with spaces: only the size is wrong. */
        memset(big, ' ', len);
        memcpy(big, HEAD "\"x\": 1}", strlen(HEAD "\"x\": 1}"));
        expect_error_len(big, len, EFBIG, "config.json: larger than 16 MiB");
        parse_ok(HEAD "\"x\": 1}", &c);
        oci_config_free(&c);
        /* Exactly the limit is accepted. */
        cr_assert_eq(oci_config_parse(big, len - 1, &c, &err), 0, "%s", err.msg);
        oci_config_free(&c);

        fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, big, len), (ssize_t) len);
        close(fd);
        memset(&c, 0xa5, sizeof(c));
        cr_assert_eq(oci_config_load_file(path, &c, &err), -EFBIG);
        unlink(path);
        cr_assert(all_zero(&c, sizeof(c)));
        char want[PSRUN_ERROR_MSG_MAX];
        snprintf(want, sizeof(want), "%s: larger than 16 MiB", path);
        cr_assert_str_eq(err.msg, want);
        assert_no_leaks();
}

Test(oci_config_hostile, load_file_errors)
{
        struct oci_config c;
        psrun_error err = {0};

        cr_assert_eq(oci_config_load_file(FIXTURES "no-such-file.json", &c, &err), -ENOENT);
        cr_assert_str_eq(err.msg, FIXTURES "no-such-file.json: No such file or directory");
        cr_assert(all_zero(&c, sizeof(c)));
        cr_assert_eq(oci_config_load_file(FIXTURES, &c, &err), -EISDIR);
        cr_assert_str_eq(err.msg, FIXTURES ": read: Is a directory");
        /* Errors in a file name the file. */
        char path[PATH_MAX];
        test_tmp_template(path, sizeof(path), "psrun-oci-config");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        const char *text = HEAD "\"process\": {\"args\": [\"sh\"]}}";
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        cr_assert_eq(oci_config_load_file(path, &c, &err), -EINVAL);
        unlink(path);
        char want[PSRUN_ERROR_MSG_MAX];
        snprintf(want, sizeof(want), "%s:2:12: process.cwd: missing (required)", path);
        cr_assert_str_eq(err.msg, want);
        /* A NULL err is allowed. */
        cr_assert_eq(oci_config_parse("[]", 2, &c, NULL), -EINVAL);
        assert_no_leaks();
}

/* ---- mutation fuzzing ---- */

static uint64_t xorshift(uint64_t *state)
{
        uint64_t x = *state;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *state = x;
}

static char *read_fixture(const char *name, size_t *len)
{
        char path[256];
        FILE *f;
        char *buf;
        long size;

        snprintf(path, sizeof(path), FIXTURES "%s", name);
        f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        rewind(f);
        buf = malloc((size_t) size + 1);
        cr_assert_not_null(buf);
        cr_assert_eq(fread(buf, 1, (size_t) size, f), (size_t) size);
        fclose(f);
        *len = (size_t) size;
        return buf;
}

/* One random edit: replace a byte (often with JSON or YAML punctuation),
 * delete or duplicate a span, or cut the text short. */
static size_t mutate(char *buf, size_t len, size_t cap, uint64_t *rng)
{
        static const char interesting[] = "{}[]\",:-0123456789eE.&*!|>'#\\ \n\t\0\xff";
        size_t at = len ? xorshift(rng) % len : 0;
        size_t span = 1 + xorshift(rng) % 16;

        switch (xorshift(rng) % 6) {
        case 0:
        case 1:
                if (len)
                        buf[at] = interesting[xorshift(rng) % (sizeof(interesting) - 1)];
                return len;
        case 2:
                if (len)
                        buf[at] = (char) xorshift(rng);
                return len;
        case 3:
                span = span > len - at ? len - at : span;
                memmove(buf + at, buf + at + span, len - at - span);
                return len - span;
        case 4:
                span = span > len - at ? len - at : span;
                if (len + span > cap)
                        return len;
                memmove(buf + at + span, buf + at, len - at);
                return len + span;
        default:
                return at;
        }
}

Test(oci_config_hostile, mutation_fuzz, .timeout = 120)
{
        static const char *const fixtures[] = {"docker-run.json", "full.json", "crun-spec.json"};
        uint64_t rng = 0x9e3779b97f4a7c15ULL;
        size_t accepted = 0, rejected = 0;

        for (int i = 0; i < 2000; i++) {
                size_t len, cap;
                _cleanup_free_ char *orig = read_fixture(fixtures[i % 3], &len);
                _cleanup_free_ char *buf = malloc(cap = len * 2 + 64);
                struct oci_config c;
                psrun_error err = {0};
                int edits = 1 + (int) (xorshift(&rng) % 4);

                cr_assert_not_null(buf);
                memcpy(buf, orig, len);
                for (int e = 0; e < edits; e++)
                        len = mutate(buf, len, cap, &rng);
                int r = oci_config_parse(buf, len, &c, &err);
                if (r == 0) {
                        cr_assert_not_null(c.oci_version);
                        cr_assert_not_null(c.root.path);
                        accepted++;
                } else {
                        cr_assert_lt(r, 0);
                        cr_assert_eq(err.code, -r, "code %d vs %d: %s", err.code, r, err.msg);
                        assert_one_line(&err);
                        cr_assert(strncmp(err.msg, "config.json", 11) == 0, "%s", err.msg);
                        cr_assert(all_zero(&c, sizeof(c)));
                        rejected++;
                }
                oci_config_free(&c);
        }
        /* Both outcomes happen, or the mutations are not testing much. */
        cr_assert_gt(accepted, 50, "accepted %zu", accepted);
        cr_assert_gt(rejected, 500, "rejected %zu", rejected);
        assert_no_leaks();
}
