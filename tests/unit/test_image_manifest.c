/* SPDX-License-Identifier: MIT */
/*
 * What a registry sends, parsed as the hostile input it is: manifests and
 * indexes (image/manifest.c), WWW-Authenticate challenges, token answers
 * and auth.json files (image/auth.c).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "image/auth.h"
#include "image/manifest.h"

TestSuite(image_manifest, .timeout = 30);

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"

#define OCI_MANIFEST                                                                               \
        "{\"schemaVersion\":2,\"mediaType\":\"" MEDIA_OCI_MANIFEST "\",\"config\":{\"mediaType\":" \
        "\"" MEDIA_OCI_CONFIG "\",\"digest\":\"" D1 "\",\"size\":7},\"layers\":[{\"mediaType\":"   \
        "\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"" D2 "\",\"size\":100},"     \
        "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+zstd\",\"digest\":\"" D3          \
        "\",\"size\":5}]}"

static int parse(const char *doc, const char *ctype, struct manifest *m, psrun_error *err)
{
        return manifest_parse(doc, strlen(doc), ctype, "test", m, err);
}

Test(image_manifest, oci_manifest)
{
        struct manifest m;
        psrun_error err = {0};
        cr_assert(parse(OCI_MANIFEST, MEDIA_OCI_MANIFEST, &m, &err) == 0, "%s", err.msg);
        cr_expect_eq(m.kind, MANIFEST_IMAGE);
        cr_expect_str_eq(m.config.digest, D1);
        cr_assert_eq(m.n_layers, 2);
        cr_expect_eq(m.layers[0].size, 100);
        cr_expect_str_eq(m.layers[1].digest, D3);
        manifest_free(&m);
        /* no mediaType field: the Content-Type says */
        const char *docker =
                "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"" MEDIA_DOCKER_CONFIG
                "\",\"digest\":\"" D1 "\",\"size\":7},\"layers\":[{\"mediaType\":"
                "\"application/vnd.docker.image.rootfs.diff.tar.gzip\",\"digest\":\"" D2
                "\",\"size\":1}]}";
        cr_assert(parse(docker, MEDIA_DOCKER_MANIFEST "; charset=utf-8", &m, &err) == 0, "%s",
                  err.msg);
        cr_expect_str_eq(m.media_type, MEDIA_DOCKER_MANIFEST);
        manifest_free(&m);
}

Test(image_manifest, index_chooses_the_host)
{
        const char *doc =
                "{\"schemaVersion\":2,\"mediaType\":\"" MEDIA_DOCKER_LIST "\",\"manifests\":["
                "{\"mediaType\":\"" MEDIA_DOCKER_MANIFEST "\",\"digest\":\"" D1
                "\",\"size\":1,\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\","
                "\"variant\":\"v8\"}},"
                "{\"mediaType\":\"" MEDIA_DOCKER_MANIFEST "\",\"digest\":\"" D2
                "\",\"size\":1,\"platform\":{\"os\":\"windows\",\"architecture\":"
                "\"amd64\"}},"
                "{\"mediaType\":\"" MEDIA_DOCKER_MANIFEST "\",\"digest\":\"" D3
                "\",\"size\":1,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}"
                "]}";
        struct manifest m;
        psrun_error err = {0};
        cr_assert(parse(doc, MEDIA_DOCKER_LIST, &m, &err) == 0, "%s", err.msg);
        cr_expect_eq(m.kind, MANIFEST_INDEX);
        const struct descriptor *d;
        cr_assert(manifest_choose(&m, "linux", "amd64", NULL, "test", &d, &err) == 0);
        cr_expect_str_eq(d->digest, D3);
        cr_assert(manifest_choose(&m, "linux", "arm64", NULL, "test", &d, &err) == 0);
        cr_expect_str_eq(d->digest, D1);
        cr_expect(manifest_choose(&m, "linux", "s390x", NULL, "test", &d, &err) == -ENOENT);
        cr_expect(strstr(err.msg, "linux/amd64") && strstr(err.msg, "windows/amd64"), "%s",
                  err.msg);
        manifest_free(&m);
}

static const char *const hostile[] = {
        /* not JSON, or not an object */
        "",
        "[]",
        "\"x\"",
        "{",
        "{\"schemaVersion\":2,}",
        "{'schemaVersion':2}",
        "{schemaVersion: 2}",
        "{\"schemaVersion\":2}\x00{}",
        /* schema versions */
        "{\"schemaVersion\":1,\"fsLayers\":[]}",
        "{\"schemaVersion\":\"2\"}",
        "{\"layers\":[]}",
        /* wrong media types */
        "{\"schemaVersion\":2,\"mediaType\":\"text/html\",\"layers\":[]}",
        "{\"schemaVersion\":2,\"mediaType\":\"" MEDIA_OCI_INDEX "\",\"layers\":[]}",
        "{\"schemaVersion\":2,\"mediaType\":\"" MEDIA_OCI_MANIFEST "\",\"config\":{\"mediaType\":"
        "\"x\",\"digest\":\"" D1 "\",\"size\":1},\"layers\":[{\"mediaType\":\"text/plain\","
        "\"digest\":\"" D2 "\",\"size\":1}]}",
        /* missing or bad digests and sizes */
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"size\":1},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"sha256:abc\","
        "\"size\":1},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"md5:abc\","
        "\"size\":1},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\"},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\",\"size\":-1},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\",\"size\":1e3},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\",\"size\":99999999999999999999999},\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\",\"size\":\"1\"},\"layers\":[]}",
        /* a foreign layer */
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\",\"size\":1},\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\","
        "\"digest\":\"" D2 "\",\"size\":1,\"urls\":[\"http://evil/\"]}]}",
        /* duplicate keys, both shapes */
        "{\"schemaVersion\":2,\"schemaVersion\":2,\"layers\":[]}",
        "{\"schemaVersion\":2,\"layers\":[],\"manifests\":[]}",
        /* no config; layers not an array */
        "{\"schemaVersion\":2,\"layers\":[]}",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" D1
        "\",\"size\":1},\"layers\":{}}",
        /* YAML that is not JSON */
        "{\"schemaVersion\": 2, \"layers\": !!str x}",
        "{\"schemaVersion\": 2, \"a\": &x 1, \"b\": *x}",
};

Test(image_manifest, hostile_documents)
{
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
                struct manifest m;
                psrun_error err = {0};
                size_t len = strlen(hostile[i]);
                if (strstr(hostile[i], "}\x00") == NULL && i == 7)
                        len = strlen(hostile[i]) + 3; /* through the NUL */
                int r = manifest_parse(hostile[i], len, NULL, "test", &m, &err);
                cr_expect(r < 0, "accepted #%zu: %s", i, hostile[i]);
                cr_expect(strncmp(err.msg, "image: ", 7) == 0 && !strchr(err.msg, '\n'), "#%zu: %s",
                          i, err.msg);
        }
}

Test(image_manifest, content_type_must_agree)
{
        struct manifest m;
        psrun_error err = {0};
        cr_expect(parse(OCI_MANIFEST, MEDIA_OCI_INDEX, &m, &err) == -EINVAL);
        cr_expect(strstr(err.msg, "served as") != NULL, "%s", err.msg);
        cr_expect(parse(OCI_MANIFEST, "application/vnd.docker.distribution.manifest.v1+prettyjws",
                        &m, &err) == -ENOTSUP);
}

Test(image_manifest, huge_and_deep)
{
        /* past the 4 MiB cap: refused before parsing */
        size_t big = MANIFEST_MAX_BYTES + 1;
        _cleanup_free_ char *buf = malloc(big + 1);
        cr_assert(buf);
        memset(buf, ' ', big);
        buf[0] = '{';
        buf[big - 1] = '}';
        buf[big] = '\0';
        struct manifest m;
        psrun_error err = {0};
        cr_expect(manifest_parse(buf, big, NULL, "test", &m, &err) == -EFBIG);
        /* 1 MiB of nesting: an error, not a stack overflow */
        size_t depth = 1u << 19;
        _cleanup_free_ char *deep = malloc(2 * depth + 32);
        cr_assert(deep);
        size_t n = (size_t) sprintf(deep, "{\"schemaVersion\":2,\"a\":");
        memset(deep + n, '[', depth);
        memset(deep + n + depth, ']', depth);
        n += 2 * depth;
        deep[n++] = '}';
        cr_expect(manifest_parse(deep, n, NULL, "test", &m, &err) < 0);
        /* too many layers */
        size_t layers = MANIFEST_MAX_LAYERS + 1;
        size_t cap = 256 + layers * 160;
        _cleanup_free_ char *many = malloc(cap);
        cr_assert(many);
        n = (size_t) sprintf(many,
                             "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":"
                             "\"" D1 "\",\"size\":1},\"layers\":[");
        for (size_t i = 0; i < layers; i++)
                n += (size_t) sprintf(many + n,
                                      "%s{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\","
                                      "\"digest\":\"" D2 "\",\"size\":1}",
                                      i ? "," : "");
        n += (size_t) sprintf(many + n, "]}");
        cr_expect(manifest_parse(many, n, NULL, "test", &m, &err) == -E2BIG, "%s", err.msg);
}

Test(image_manifest, www_authenticate)
{
        struct auth_challenge c;
        psrun_error err = {0};
        cr_assert(auth_challenge_parse("Bearer realm=\"https://auth.docker.io/token\","
                                       "service=\"registry.docker.io\","
                                       "scope=\"repository:library/ubuntu:pull\"",
                                       &c, &err) == 0,
                  "%s", err.msg);
        cr_expect_eq(c.scheme, AUTH_BEARER);
        cr_expect_str_eq(c.realm, "https://auth.docker.io/token");
        cr_expect_str_eq(c.service, "registry.docker.io");
        cr_expect_str_eq(c.scope, "repository:library/ubuntu:pull");
        auth_challenge_free(&c);
        /* GHCR's shape, spaces, case, a quoted comma and escape */
        cr_assert(auth_challenge_parse("bearer  realm = \"https://ghcr.io/token\" , "
                                       "service=\"ghcr.io\",scope=\"repository:a/b:pull,push\"",
                                       &c, &err) == 0,
                  "%s", err.msg);
        cr_expect_str_eq(c.scope, "repository:a/b:pull,push");
        auth_challenge_free(&c);
        cr_assert(auth_challenge_parse("Basic realm=\"Registry \\\"x\\\" realm\"", &c, &err) == 0);
        cr_expect_eq(c.scheme, AUTH_BASIC);
        cr_expect_str_eq(c.realm, "Registry \"x\" realm");
        auth_challenge_free(&c);
        /* two challenges: Bearer preferred */
        cr_assert(auth_challenge_parse("Basic realm=\"r\", Bearer realm=\"https://t/x\"", &c,
                                       &err) == 0);
        cr_expect_eq(c.scheme, AUTH_BEARER);
        cr_expect_str_eq(c.realm, "https://t/x");
        auth_challenge_free(&c);

        static const char *const bad[] = {
                "",
                "Negotiate abc",
                "Bearer",
                "Bearer service=\"x\"",
                "Bearer realm=\"file:///etc/passwd\"",
                "Bearer realm=\"https://a\",realm=\"https://b\"",
                "Bearer realm=\"https://a",
                "Bearer realm=\"https://a\x01\"",
                "Bearer realm=",
                "Bearer realm=\"https://a\" junk junk",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_expect(auth_challenge_parse(bad[i], &c, &err) < 0, "accepted: %s", bad[i]);
                cr_expect(!strchr(err.msg, '\n'), "%s", err.msg);
        }
        _cleanup_free_ char *huge = malloc(AUTH_HEADER_MAX + 100);
        memset(huge, 'a', AUTH_HEADER_MAX + 99);
        huge[AUTH_HEADER_MAX + 99] = '\0';
        cr_expect(auth_challenge_parse(huge, &c, &err) == -EINVAL);
}

Test(image_manifest, token_answer)
{
        _cleanup_free_ char *t = NULL;
        psrun_error err = {0};
        const char *a = "{\"token\":\"abc.def\",\"expires_in\":300}";
        cr_assert(auth_token_parse(a, strlen(a), &t, &err) == 0);
        cr_expect_str_eq(t, "abc.def");
        free(t);
        t = NULL;
        const char *b = "{\"access_token\":\"xyz\"}";
        cr_assert(auth_token_parse(b, strlen(b), &t, &err) == 0);
        cr_expect_str_eq(t, "xyz");
        static const char *const bad[] = {"{}", "{\"token\":\"\"}", "{\"token\":1}",
                                          "{\"token\":\"a\\r\\nX-Evil: 1\"}", "[]"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char *x = NULL;
                cr_expect(auth_token_parse(bad[i], strlen(bad[i]), &x, &err) < 0, "%s", bad[i]);
                free(x);
        }
}

Test(image_manifest, auth_json)
{
        /* alice:s3cret, bob:pw */
        const char *doc = "{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"YWxpY2U6czNjcmV0\"},"
                          "\"https://index.docker.io/v1/\":{\"auth\":\"Ym9iOnB3\"},"
                          "\"ghcr.io/org\":{\"auth\":\"Ym9iOnB3\"}}}";
        _cleanup_free_ char *u = NULL, *p = NULL;
        psrun_error err = {0};
        cr_assert(auth_lookup(doc, strlen(doc), "auth.json", "127.0.0.1:5000", &u, &p, &err) == 0);
        cr_expect(u && strcmp(u, "alice") == 0 && strcmp(p, "s3cret") == 0);
        free(u);
        free(p);
        u = p = NULL;
        cr_assert(auth_lookup(doc, strlen(doc), "auth.json", "docker.io", &u, &p, &err) == 0);
        cr_expect(u && strcmp(u, "bob") == 0);
        free(u);
        free(p);
        u = p = NULL;
        cr_assert(auth_lookup(doc, strlen(doc), "auth.json", "ghcr.io", &u, &p, &err) == 0);
        cr_expect(u && strcmp(u, "bob") == 0, "a namespace key serves its host");
        free(u);
        free(p);
        u = p = NULL;
        cr_assert(auth_lookup(doc, strlen(doc), "auth.json", "127.0.0.1:5001", &u, &p, &err) == 0);
        cr_expect(!u, "another port is another registry");
        static const char *const bad[] = {
                "{\"auths\":[]}",
                "{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"!!!\"}}}",
                "{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"bm9jb2xvbg==\"}}}", /* "nocolon" */
                "{\"auths\":{\"127.0.0.1:5000\":{\"identitytoken\":\"x\"}}}",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char *bu = NULL, *bp = NULL;
                cr_expect(auth_lookup(bad[i], strlen(bad[i]), "auth.json", "127.0.0.1:5000", &bu,
                                      &bp, &err) < 0,
                          "%s", bad[i]);
                cr_expect(!strchr(err.msg, '\n'), "%s", err.msg);
        }
}
