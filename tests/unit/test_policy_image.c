/* SPDX-License-Identifier: MIT */
/* The image keys (policy/policy-image.c): image, image_store,
 * registry_mirrors, insecure_registries, image_max_size, tools. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "policy_test.h"
#include "runtime/plan.h"

Test(policy_image, defaults)
{
        struct policy p;
        init(&p);
        cr_expect_null(p.image);
        cr_expect_null(p.image_store);
        cr_expect_eq(p.n_registry_mirrors, 0);
        cr_expect_eq(p.n_insecure_registries, 0);
        cr_expect_eq(p.image_max_size, 8 * GiB);
        cr_expect_eq(p.n_tools, 0);
        policy_free(&p);
}

Test(policy_image, references)
{
        static const char *const good[] = {
                "python:3.11-slim",
                "127.0.0.1:5000/test/small:v1",
                "ghcr.io/org/"
                "tool@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "oci:/srv/layout",
                "oci:/srv/layout:v1",
                "oci:./rel/layout:latest",
                "docker-archive:/srv/image.tar",
                "docker-archive:./rel/image.tar",
                /* kept as a string: its grammar is the planner's (below) */
                "a/UPPER",
        };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                struct policy p;
                char opt[256];
                init(&p);
                snprintf(opt, sizeof(opt), "image=%s", good[i]);
                set_ok(&p, opt);
                cr_expect_str_eq(p.image, good[i]);
                psrun_error err = {0};
                cr_expect_eq(policy_validate(&p, &err), 0, "%s: %s", good[i], err.msg);
                policy_free(&p);
        }
}

Test(policy_image, oci_split)
{
        char *dir, *tag;
        cr_assert_eq(policy_image_split_oci("oci:/a/b:v1", &dir, &tag), 0);
        cr_expect_str_eq(dir, "/a/b");
        cr_expect_str_eq(tag, "v1");
        free(dir);
        free(tag);
        cr_assert_eq(policy_image_split_oci("oci:/a:b/c", &dir, &tag), 0);
        cr_expect_str_eq(dir, "/a:b/c");
        cr_expect_null(tag);
        free(dir);
}

Test(policy_image, bad_values)
{
        expect_option_error("image=Bad Name", EINVAL,
                            "-o image: `Bad Name`: has a space, control or non-ASCII character");
        expect_option_error("image=oci:", EINVAL,
                            "-o image: `oci:`: oci: needs a directory (oci:DIR[:TAG])");
        expect_option_error("image=docker-archive:", EINVAL,
                            "-o image: `docker-archive:`: docker-archive: needs a file "
                            "(docker-archive:FILE)");
        expect_option_error("image_store=relative", EINVAL,
                            "-o image_store: must be an absolute path");
        expect_option_error("image_max_size=1k", ERANGE,
                            "-o image_max_size: \"1k\" is too small (at least 1M)");
        expect_option_error("tools=[python, rust]", EINVAL,
                            "-o tools[1]: unknown tool `rust` (known: python, pip, node, npm, sh, "
                            "bash, git, curl, gcc, make, go, java, ruby, perl)");
        expect_option_error("registry_mirrors=['a b']", EINVAL,
                            "-o registry_mirrors[0]: has a space, control or non-ASCII character");
        expect_option_error("insecure_registries=['']", EINVAL, "-o insecure_registries[0]: empty");
}

/* policy/ keeps a reference as one word; the grammar (image/reference.c)
 * is checked by the planner before it makes or opens anything. */
Test(policy_image, reference_grammar_checked_by_the_planner)
{
        psrun_error err = {0};
        cr_expect_eq(plan_image_check_reference("a/UPPER", &err), -EINVAL);
        cr_expect_str_eq(err.msg, "image: `a/UPPER`: repository name must be lowercase");
        err = (psrun_error){0};
        cr_expect_eq(plan_image_check_reference("python:3.11-slim", &err), 0, "%s", err.msg);
        cr_expect_eq(plan_image_check_reference("oci:/srv/layout:v1", &err), 0);
        cr_expect_eq(plan_image_check_reference("docker-archive:/srv/x.tar", &err), 0);
        cr_expect_eq(plan_image_check_reference("x@md5:00", &err), -EINVAL);
        cr_expect(strncmp(err.msg, "image: `x@md5:00`: ", 19) == 0, "%s", err.msg);
}

Test(policy_image, validate_checks_c_api_structs)
{
        struct policy p;
        psrun_error err = {0};
        init(&p);
        p.image = "Bad Name";
        cr_expect_eq(policy_validate(&p, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "image: `Bad Name`: has a space, control or non-ASCII character");
        p.image = NULL;
        p.image_max_size = 0;
        cr_expect_eq(policy_validate(&p, &err), -ERANGE);
        cr_expect_str_eq(err.msg, "image_max_size: must be between 1M and 1P");
        p.image_max_size = POLICY_DEFAULT_IMAGE_MAX_SIZE;
        policy_free(&p);
}

Test(policy_image, tool_table)
{
        const struct policy_tool *t = policy_tool_find("python");
        cr_assert_not_null(t);
        cr_expect_str_eq(t->commands[0], "python3");
        cr_expect_str_eq(t->commands[1], "python");
        cr_expect_null(policy_tool_find("rust"));
        cr_expect_null(policy_tool_at(14));
}
