/* SPDX-License-Identifier: MIT */
/*
 * Image references (image/reference.c), the registries configuration
 * (image/registries.c) and the sha256 implementations (image/digest.c):
 * tables of valid and hostile input, one-line errors naming `image`.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/cleanup.h"
#include "image/digest.h"
#include "image/reference.h"
#include "image/registries.h"

TestSuite(image_reference, .timeout = 30);

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct ref_case {
        const char *text;
        const char *registry, *repository, *tag, *digest; /* NULL registry: refused */
};

static const struct ref_case cases[] = {
        {"python:3.11-slim", "docker.io", "library/python", "3.11-slim", NULL},
        {"python", "docker.io", "library/python", "latest", NULL},
        {"library/python", "docker.io", "library/python", "latest", NULL},
        {"docker.io/python", "docker.io", "library/python", "latest", NULL},
        {"index.docker.io/org/x:1", "docker.io", "org/x", "1", NULL},
        {"org/tool", "docker.io", "org/tool", "latest", NULL},
        {"ghcr.io/org/tool@sha256:" D64, "ghcr.io", "org/tool", NULL, "sha256:" D64},
        {"ghcr.io/org/tool:v1@sha256:" D64, "ghcr.io", "org/tool", "v1", "sha256:" D64},
        {"127.0.0.1:5000/test/small:v1", "127.0.0.1:5000", "test/small", "v1", NULL},
        {"localhost/x", "localhost", "x", "latest", NULL},
        {"localhost:5000/a/b/c", "localhost:5000", "a/b/c", "latest", NULL},
        {"[::1]:5000/x:y", "[::1]:5000", "x", "y", NULL},
        {"Host.Example/x", "Host.Example", "x", "latest", NULL},
        {"a.b/x__y.z-w---v:T_1.2-3", "a.b", "x__y.z-w---v", "T_1.2-3", NULL},
        /* refused */
        {"", NULL, NULL, NULL, NULL},
        {"Python", NULL, NULL, NULL, NULL},
        {"python:", NULL, NULL, NULL, NULL},
        {"python:-x", NULL, NULL, NULL, NULL},
        {"python:.x", NULL, NULL, NULL, NULL},
        {"py thon", NULL, NULL, NULL, NULL},
        {"py\nthon", NULL, NULL, NULL, NULL},
        {"python\xc3\xa9", NULL, NULL, NULL, NULL},
        {"../etc/passwd", NULL, NULL, NULL, NULL},
        {"a/../b", NULL, NULL, NULL, NULL},
        {"a//b", NULL, NULL, NULL, NULL},
        {"a/b/", NULL, NULL, NULL, NULL},
        {"/a", NULL, NULL, NULL, NULL},
        {"a_.b", NULL, NULL, NULL, NULL},
        {"a___b", NULL, NULL, NULL, NULL},
        {"-a", NULL, NULL, NULL, NULL},
        {"host:99999/x", NULL, NULL, NULL, NULL},
        {"host:0/x", NULL, NULL, NULL, NULL},
        {"ho_st.io/x", NULL, NULL, NULL, NULL},
        {"-host.io/x", NULL, NULL, NULL, NULL},
        {"[zz]:1/x", NULL, NULL, NULL, NULL},
        {"x@sha256:abc", NULL, NULL, NULL, NULL},
        {"x@sha256:" D64 "00", NULL, NULL, NULL, NULL},
        {"x@sha512:" D64 D64, NULL, NULL, NULL, NULL},
        {"x@SHA256:" D64, NULL, NULL, NULL, NULL},
        {"x@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", NULL, NULL,
         NULL, NULL},
        {"x@", NULL, NULL, NULL, NULL},
        {D64, NULL, NULL, NULL, NULL},
        {"ghcr.io/", NULL, NULL, NULL, NULL},
        {"ghcr.io/X", NULL, NULL, NULL, NULL},
};

Test(image_reference, table)
{
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct ref_case *c = &cases[i];
                struct image_ref ref;
                psrun_error err = {0};
                int r = image_ref_parse(c->text, &ref, &err);
                if (!c->registry) {
                        cr_expect(r == -EINVAL, "`%s` should be refused (got %d)", c->text, r);
                        cr_expect(strncmp(err.msg, "image: ", 7) == 0, "`%s`: %s", c->text,
                                  err.msg);
                        cr_expect(!strchr(err.msg, '\n'), "`%s`: one line: %s", c->text, err.msg);
                        continue;
                }
                cr_assert(r == 0, "`%s`: %s", c->text, err.msg);
                cr_expect_str_eq(ref.registry, c->registry, "%s", c->text);
                cr_expect_str_eq(ref.repository, c->repository, "%s", c->text);
                if (c->tag)
                        cr_expect(ref.tag && strcmp(ref.tag, c->tag) == 0, "%s tag", c->text);
                else
                        cr_expect(!ref.tag, "%s: no tag", c->text);
                if (c->digest)
                        cr_expect(ref.digest && strcmp(ref.digest, c->digest) == 0, "%s", c->text);
                else
                        cr_expect(!ref.digest, "%s: no digest", c->text);
                image_ref_free(&ref);
        }
}

Test(image_reference, long_names_refused)
{
        char name[400];
        memset(name, 'a', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        struct image_ref ref;
        psrun_error err = {0};
        cr_expect(image_ref_parse(name, &ref, &err) == -EINVAL);
        /* a tag of 129 characters */
        char tagged[200] = "x:";
        memset(tagged + 2, 't', 129);
        cr_expect(image_ref_parse(tagged, &ref, &err) == -EINVAL);
}

Test(image_reference, canonical_string)
{
        struct image_ref ref;
        psrun_error err = {0};
        cr_assert(image_ref_parse("python:3.11-slim", &ref, &err) == 0);
        _cleanup_free_ char *s = image_ref_string(&ref);
        cr_expect_str_eq(s, "docker.io/library/python:3.11-slim");
        image_ref_free(&ref);
}

Test(image_reference, registries_file)
{
        const char *doc = "{\"registry-mirrors\": [\"https://mirror.example/\"],\n"
                          " \"insecure-registries\": [\"127.0.0.1:5000\"],\n"
                          " \"registries\": {\"ghcr.io\": {\"mirrors\": [\"http://cache:5000\"]},\n"
                          "                \"reg.internal:5443\": {\"insecure\": true}},\n"
                          " \"ca-file\": \"/etc/psrun/ca.pem\"}";
        struct registries r = {0};
        psrun_error err = {0};
        cr_assert(registries_parse(&r, doc, strlen(doc), "registries.json", &err) == 0, "%s",
                  err.msg);
        struct registry_endpoint *eps;
        size_t n;
        cr_assert(registries_endpoints(&r, "docker.io", &eps, &n, &err) == 0);
        cr_assert_eq(n, 2);
        cr_expect_str_eq(eps[0].host, "mirror.example");
        cr_expect(!eps[0].insecure && eps[0].mirror);
        cr_expect_str_eq(eps[1].host, "registry-1.docker.io");
        registry_endpoints_free(eps, n);
        cr_assert(registries_endpoints(&r, "ghcr.io", &eps, &n, &err) == 0);
        cr_assert_eq(n, 2);
        cr_expect_str_eq(eps[0].host, "cache:5000");
        cr_expect(eps[0].insecure, "an http:// mirror is plain HTTP");
        registry_endpoints_free(eps, n);
        cr_assert(registries_endpoints(&r, "127.0.0.1:5000", &eps, &n, &err) == 0);
        cr_expect(n == 1 && eps[0].insecure);
        registry_endpoints_free(eps, n);
        cr_assert(registries_endpoints(&r, "quay.io", &eps, &n, &err) == 0);
        cr_expect(n == 1 && !eps[0].insecure && strcmp(eps[0].host, "quay.io") == 0);
        registry_endpoints_free(eps, n);
        cr_expect_str_eq(r.ca_file, "/etc/psrun/ca.pem");
        registries_free(&r);
}

Test(image_reference, registries_policy_keys)
{
        struct registries r = {0};
        psrun_error err = {0};
        char *mirrors[] = {"mirror.local:5000", "ghcr.io=https://ghcr-cache:443", NULL};
        char *insecure[] = {"mirror.local:5000", NULL};
        cr_assert(registries_set_mirrors(&r, mirrors, &err) == 0, "%s", err.msg);
        cr_assert(registries_set_insecure(&r, insecure, &err) == 0, "%s", err.msg);
        struct registry_endpoint *eps;
        size_t n;
        cr_assert(registries_endpoints(&r, "docker.io", &eps, &n, &err) == 0);
        cr_expect(n == 2 && strcmp(eps[0].host, "mirror.local:5000") == 0 && eps[0].insecure,
                  "an insecure mirror is plain HTTP");
        registry_endpoints_free(eps, n);
        registries_free(&r);

        static const char *const bad_mirrors[] = {"ftp://x", "x y",      "ghcr.io=",  "=x",
                                                  "a/b=c",   "https://", "host:99999"};
        for (size_t i = 0; i < ARRAY_SIZE(bad_mirrors); i++) {
                char *one[] = {(char *) bad_mirrors[i], NULL};
                struct registries b = {0};
                cr_expect(registries_set_mirrors(&b, one, &err) == -EINVAL, "%s", bad_mirrors[i]);
                cr_expect(strstr(err.msg, "registry_mirrors") && !strchr(err.msg, '\n'), "%s",
                          err.msg);
                registries_free(&b);
        }
}

Test(image_reference, registries_hostile_files)
{
        static const char *const bad[] = {
                "",
                "[]",
                "{\"registry-mirrors\": \"x\"}",
                "{\"registry-mirrors\": [1]}",
                "{\"mirrors\": []}",
                "{\"registries\": {\"ghcr.io\": {\"insecure\": \"yes\"}}}",
                "{\"registries\": {\"ghcr.io\": {\"mirror\": []}}}",
                "{\"registries\": {\"not a host\": {}}}",
                "{\"ca-file\": \"relative.pem\"}",
                "{registry-mirrors: []}",
                "{\"registry-mirrors\": [\"a\"], \"registry-mirrors\": [\"b\"]",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct registries r = {0};
                psrun_error err = {0};
                cr_expect(registries_parse(&r, bad[i], strlen(bad[i]), "registries.json", &err) < 0,
                          "accepted: %s", bad[i]);
                cr_expect(!strchr(err.msg, '\n'), "%s", err.msg);
                registries_free(&r);
        }
}

/* FIPS 180-4 / NIST vectors, through both implementations, streamed in
 * pieces of every size. */
Test(image_reference, sha256_vectors)
{
        static const struct {
                const char *in, *hex;
        } v[] = {
                {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
                {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
                {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        };
        for (int portable = 0; portable < 2; portable++) {
                sha256_force_portable(portable);
                for (size_t i = 0; i < ARRAY_SIZE(v); i++)
                        for (size_t step = 1; step <= 64; step *= 3) {
                                struct sha256 *h;
                                psrun_error err = {0};
                                cr_assert(sha256_new(&h, &err) == 0);
                                size_t len = strlen(v[i].in);
                                for (size_t off = 0; off < len; off += step)
                                        sha256_update(h, v[i].in + off,
                                                      len - off < step ? len - off : step);
                                char hex[SHA256_HEX_LEN + 1];
                                sha256_final_hex(h, hex);
                                cr_expect_str_eq(hex, v[i].hex, "%s, %s", sha256_implementation(),
                                                 v[i].in);
                                sha256_free(h);
                        }
                /* a million 'a's: the padding across many blocks */
                struct sha256 *h;
                psrun_error err = {0};
                cr_assert(sha256_new(&h, &err) == 0);
                char block[1000];
                memset(block, 'a', sizeof(block));
                for (int k = 0; k < 1000; k++)
                        sha256_update(h, block, sizeof(block));
                char hex[SHA256_HEX_LEN + 1];
                sha256_final_hex(h, hex);
                cr_expect_str_eq(
                        hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
                sha256_free(h);
        }
        sha256_force_portable(false);
}

Test(image_reference, digest_parse)
{
        psrun_error err = {0};
        char hex[SHA256_HEX_LEN + 1];
        cr_expect(digest_parse("sha256:" D64, hex, &err) == 0);
        cr_expect_str_eq(hex, D64);
        cr_expect(digest_parse("sha512:" D64 D64, hex, &err) == -ENOTSUP);
        cr_expect(strstr(err.msg, "sha512") != NULL, "%s", err.msg);
        cr_expect(digest_parse("sha256:" D64 "\n", hex, &err) == -EINVAL);
        cr_expect(!strchr(err.msg, '\n'), "%s", err.msg);
        cr_expect(digest_parse("sha256:../../etc/passwd", hex, &err) == -EINVAL);
}
