/* SPDX-License-Identifier: MIT */
#pragma once
/*
 * A small image for the image-root tests, built offline: the host's static
 * busybox and its applets' links in /bin, a file only the image has
 * (/etc/image-only), an /etc/passwd of its own, /app its WorkingDir, and a
 * config Env with PATH=/bin:/imgbin and IMG_VAR (tests/integration/mkimage.py
 * writes the layout). Skips where the host has no static busybox or no
 * python3.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/testlib.h"

struct test_image {
        char dir[256];    /* the scratch directory */
        char ref[512];    /* image=oci:DIR:v1 */
        char store[512];  /* image_store=DIR */
        char layout[300]; /* DIR of the layout */
};

static inline int test_sh(const char *cmd)
{
        int st = system(cmd);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static inline void test_image_make(struct test_image *t, const char *tools_cmd)
{
        if (access("/bin/busybox", X_OK) != 0 ||
            test_sh("file -L /bin/busybox | grep -q 'statically linked'") != 0)
                cr_skip_test("no static /bin/busybox on this host");
        if (access("/usr/bin/python3", X_OK) != 0)
                cr_skip_test("no /usr/bin/python3 on this host (mkimage.py)");
        test_tmp_template(t->dir, sizeof(t->dir), "psrun-image");
        cr_assert_not_null(mkdtemp(t->dir));
        char cmd[4096], src[1024];
        if (!getcwd(src, sizeof(src)))
                cr_assert_fail("getcwd");
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd %s; mkdir -p tree/bin tree/etc tree/app tree/imgbin; "
                 "cp /bin/busybox tree/bin/; "
                 "for c in sh cat ls stat touch id true echo pwd env mkdir grep sleep rm; do "
                 "ln -s busybox tree/bin/$c; done; %s "
                 "echo from-the-image > tree/etc/image-only; "
                 "printf 'root:x:0:0:root:/root:/bin/sh\\nnobody:x:65534:65534::/:/bin/false\\n' "
                 "> tree/etc/passwd; "
                 "python3 %s/tests/integration/mkimage.py layout v1 tree "
                 "'{\"Env\": [\"PATH=/bin:/imgbin\", \"IMG_VAR=from-image\"], "
                 "\"WorkingDir\": \"/app\"}' >/dev/null",
                 t->dir, tools_cmd ? tools_cmd : "", src);
        cr_assert_eq(test_sh(cmd), 0, "building the image failed: %s", cmd);
        snprintf(t->layout, sizeof(t->layout), "%s/layout", t->dir);
        snprintf(t->ref, sizeof(t->ref), "image=oci:%s:v1", t->layout);
        snprintf(t->store, sizeof(t->store), "image_store=%s/store", t->dir);
}

static inline void test_image_remove(struct test_image *t)
{
        char cmd[512];
        if (!t->dir[0])
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
        test_sh(cmd);
}

/* A suite with one image: VAR is built by the suite's init (after
 * REQUIRE(), which skips or fails where the tier cannot run) and removed by
 * its fini; further arguments are the suite's Criterion options. */
#define TEST_IMAGE_SUITE(suite, var, require, ...)                                                 \
        static struct test_image var;                                                              \
        static void suite##_init(void)                                                             \
        {                                                                                          \
                require();                                                                         \
                test_image_make(&var, NULL);                                                       \
        }                                                                                          \
        static void suite##_fini(void)                                                             \
        {                                                                                          \
                test_image_remove(&var);                                                           \
        }                                                                                          \
        TestSuite(suite, .init = suite##_init, .fini = suite##_fini, ##__VA_ARGS__)

/* The value of "image=..." or "image_store=..." (t->ref, t->store). */
static inline const char *test_image_value(const char *kv)
{
        return strchr(kv, '=') + 1;
}

/* psrun run [PRE...] -o image=... -o image_store=... [EXTRA...] --
 * /bin/sh -c SCRIPT; PRE and EXTRA are NULL-terminated lists of
 * arguments, either may be NULL. */
static inline void test_image_run_sh(struct test_run *r, const struct test_image *t,
                                     const char *const *pre, const char *const *extra,
                                     const char *script)
{
        const char *argv[40];
        size_t n = 0;
        argv[n++] = "run";
        for (size_t i = 0; pre && pre[i] && n < 8; i++)
                argv[n++] = pre[i];
        argv[n++] = "-o";
        argv[n++] = t->ref;
        argv[n++] = "-o";
        argv[n++] = t->store;
        for (size_t i = 0; extra && extra[i] && n < 34; i++)
                argv[n++] = extra[i];
        argv[n++] = "--";
        argv[n++] = "/bin/sh";
        argv[n++] = "-c";
        argv[n++] = script;
        argv[n] = NULL;
        test_run_psrun(r, argv);
}
