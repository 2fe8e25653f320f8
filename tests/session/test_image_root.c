/* SPDX-License-Identifier: MIT */
/* A session on an image root: one root for its life, its `tools` checked
 * at create, its layers held until it is destroyed. */
#include "image/store.h"
#include "integration/image.h"
#include "session/common.h"

TEST_IMAGE_SUITE(session_image, img, test_require_root);

Test(session_image, one_root_across_execs, .timeout = 60)
{
        struct sess t;
        const char *const kv[] = {"image",       test_image_value(img.ref),
                                  "image_store", test_image_value(img.store),
                                  "tools",       "[sh]",
                                  NULL};
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
        /* The host has python3 in /usr/bin; the image has not. */
        const char *const kv[] = {"image",       test_image_value(img.ref),
                                  "image_store", test_image_value(img.store),
                                  "tools",       "[sh, python]",
                                  NULL};
        char want[700];
        snprintf(want, sizeof(want),
                 "tools: `python` is not in the root of %s (no python3 or python on PATH)",
                 test_image_value(img.ref));
        sess_expect_create_fails(kv, want);
}

Test(session_image, held_until_destroyed, .timeout = 60)
{
        struct sess t;
        const char *const kv[] = {"image", test_image_value(img.ref), "image_store",
                                  test_image_value(img.store), NULL};
        sess_start(&t, kv);
        sess_sh_ok(&t, "cat /etc/image-only");

        /* The record removed and the store pruned while the session lives:
         * its layer stays. */
        struct image_store *s = NULL;
        psrun_error err = {0};
        cr_assert_eq(image_store_open(test_image_value(img.store), &s, &err), 0, "%s", err.msg);
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
