/* SPDX-License-Identifier: MIT */
/* A session on an image root: one root for its life, its `tools` checked
 * at create, its layers held until it is destroyed. */
#include "image/store.h"
#include "integration/image.h"
#include "session/common.h"

static struct test_image img;

static void setup(void)
{
        test_require_root();
        test_image_make(&img, NULL);
}

static void teardown(void)
{
        test_image_remove(&img);
}

TestSuite(session_image, .init = setup, .fini = teardown);

/* The value of "image=..." or "image_store=..." */
static const char *value(const char *kv)
{
        return strchr(kv, '=') + 1;
}

Test(session_image, one_root_across_execs, .timeout = 60)
{
        struct sess t;
        const char *const kv[] = {"image", value(img.ref), "image_store", value(img.store),
                                  "tools", "[sh]",         NULL};
        sess_start(&t, kv);
        psrun_exec_result res =
                sess_sh(&t,
                        "cat /etc/image-only; pwd; echo kept > /workspace/f; test -e /usr || "
                        "echo no-usr; touch /x 2>&1",
                        NULL);
        cr_expect_str_eq(res.stdout_data,
                         "from-the-image\n/app\nno-usr\ntouch: /x: Read-only file system\n",
                         "stderr: %s", res.stderr_data);
        psrun_exec_result_free(&res);
        res = sess_sh(&t, "cat /workspace/f /etc/image-only; id -u", NULL);
        cr_expect_str_eq(res.stdout_data, "kept\nfrom-the-image\n1000\n", "stderr: %s",
                         res.stderr_data);
        psrun_exec_result_free(&res);
        sess_end(&t);
}

Test(session_image, missing_tool_fails_the_create, .timeout = 60)
{
        char root[64];
        test_tmp_template(root, sizeof(root), "psrun-sess");
        cr_assert_not_null(mkdtemp(root));
        setenv("PSRUN_SESSION_ROOT", root, 1);
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        cr_assert_eq(psrun_policy_set(p, "image", value(img.ref), &err), 0, "%s", err.msg);
        cr_assert_eq(psrun_policy_set(p, "image_store", value(img.store), &err), 0, "%s", err.msg);
        cr_assert_eq(psrun_policy_set(p, "tools", "[sh, python]", &err), 0, "%s", err.msg);
        psrun_session_options o = {.name = "t"};
        psrun_session *s = NULL;
        int r = psrun_session_create(p, &o, &s, &err);
        psrun_policy_free(p);
        cr_expect_lt(r, 0, "created without python");
        char want[700];
        snprintf(want, sizeof(want),
                 "tools: `python` is not in the root of %s (no python3 or python on PATH)",
                 value(img.ref));
        cr_expect(strstr(err.msg, want), "got: %s\nwant: %s", err.msg, want);
        cr_expect_null(strchr(err.msg, '\n'), "%s", err.msg);
        if (s)
                psrun_session_destroy(s, &err);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        test_sh(cmd);
}

Test(session_image, held_until_destroyed, .timeout = 60)
{
        struct sess t;
        const char *const kv[] = {"image", value(img.ref), "image_store", value(img.store), NULL};
        sess_start(&t, kv);
        sess_sh_ok(&t, "cat /etc/image-only");

        /* The record removed and the store pruned while the session lives:
         * its layer stays. */
        struct image_store *s = NULL;
        psrun_error err = {0};
        cr_assert_eq(image_store_open(value(img.store), &s, &err), 0, "%s", err.msg);
        char ref[4200], real[4096];
        cr_assert_not_null(realpath(img.layout, real));
        snprintf(ref, sizeof(ref), "oci:%s:v1", real);
        cr_assert_eq(image_store_remove(s, ref, &err), 0, "%s", err.msg);
        struct store_prune_stats st = {0};
        cr_assert_eq(image_store_prune(s, &st, &err), 0, "%s", err.msg);
        cr_expect_eq(st.layers_removed, 0);
        cr_expect_geq(st.kept_in_use, 1);
        sess_sh_ok(&t, "cat /etc/image-only && ls /bin/busybox");

        sess_end(&t);
        /* Destroyed: the hold is gone, and prune takes the layer. */
        st = (struct store_prune_stats){0};
        cr_assert_eq(image_store_prune(s, &st, &err), 0, "%s", err.msg);
        cr_expect_eq(st.layers_removed, 1, "kept %u", st.kept_in_use);
        image_store_close(s);
}
