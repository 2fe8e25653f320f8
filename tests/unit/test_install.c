/* SPDX-License-Identifier: MIT */
/* Package specs and installer command lines (runtime/session/package.c): the
 * hostile specs first. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "runtime/session/package.h"

Test(install, hostile_specs_are_refused_naming_package)
{
        static const char *const python[] = {
                "",
                "-r/etc/passwd",
                "--index-url=http://evil.test/",
                "-e.",
                "http://evil.test/x.whl",
                "https://evil.test/x.tar.gz",
                "git+https://evil.test/x",
                "file:///etc/passwd",
                "psfake @ http://evil.test/x",
                "psfake@http://evil.test/x",
                "./x",
                "../x",
                "/workspace/x.whl",
                "x.whl/..",
                "psfake; id",
                "psfake && id",
                "psfake|id",
                "psfake`id`",
                "psfake$(id)",
                "psfake\nid",
                "psfake id",
                "'psfake'",
                "\"psfake\"",
                "psfake; python_version < '3'",
                "psfake[",
                "psfake[a,]",
                "psfake==",
                "psfake=1",
                "psfake>=1,",
                "psfake==1 ; id",
                "psfake*",
                ".psfake",
                "psfake-",
                "psfake\\",
                "~/x",
                "psfake#egg",
        };
        for (size_t i = 0; i < sizeof(python) / sizeof(python[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_PYTHON, python[i], &err), -EINVAL,
                             "python `%s` accepted", python[i]);
                cr_expect(strncmp(err.msg, "package: ", 9) == 0, "%s", err.msg);
                cr_expect_null(strchr(err.msg, '\n'), "`%s`: multi-line", python[i]);
        }
        static const char *const node[] = {
                "",
                "-g",
                "--registry=http://evil.test/",
                "http://evil.test/x.tgz",
                "git+ssh://git@evil.test/x",
                "github:user/repo",
                "user/repo",
                "file:../x",
                "./x",
                "x.tgz/../../y",
                "@scope",
                "@scope/",
                "@/x",
                "lodash@",
                "lodash@1 || 2",
                "lodash@1||2",
                "lodash@1 - 2",
                "lodash;id",
                "lodash@$(id)",
                "lodash@`id`",
                "lodash@npm:other",
                "lodash@../x",
                ".lodash",
                "_lodash",
        };
        for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_NODE, node[i], &err), -EINVAL,
                             "node `%s` accepted", node[i]);
                cr_expect(strncmp(err.msg, "package: ", 9) == 0, "%s", err.msg);
        }
        char long_spec[INSTALL_SPEC_MAX + 2];
        memset(long_spec, 'a', sizeof(long_spec) - 1);
        long_spec[sizeof(long_spec) - 1] = '\0';
        psrun_error err = {0};
        cr_expect_eq(install_check_spec(INSTALL_TOOL_PYTHON, long_spec, &err), -EINVAL);
        cr_expect_eq(install_check_spec(INSTALL_TOOL_PYTHON, NULL, &err), -EINVAL);
}

/* Names the grammar would take but the tools read as a local archive or
 * directory: each would install what the sandbox planted in /workspace
 * (pip: any requirement ending like an archive; npm: a name or version
 * part ending in .tgz/.tar.gz/.tar, or a version part starting with `.`). */
Test(install, specs_the_tools_read_as_local_archives_are_refused)
{
        static const char *const python[] = {
                "x-1.0-py3-none-any.whl",
                "x.tgz",
                "x.zip",
                "X-1.0.WHL",
                "x-1.0.tar.gz",
                "x.tar",
                "x.tar.bz2",
                "x.tbz",
                "x.tar.xz",
                "x.txz",
                "x.tlz",
                "x.tar.lz",
                "x-1.0.tar.lzma",
                "x==1.0.whl",
                "x>=1.0.zip",
                "x[a]==1.tgz",
        };
        for (size_t i = 0; i < sizeof(python) / sizeof(python[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_PYTHON, python[i], &err), -EINVAL,
                             "python `%s` accepted", python[i]);
                cr_expect(strstr(err.msg, "pip would install it as a local"), "`%s`: %s", python[i],
                          err.msg);
        }
        static const char *const node[] = {
                "x.tgz",        "x.tar.gz",        "X.TGZ",        "x.tar",          "lodash@x.tgz",
                "lodash@1.tgz", "lodash@x.TAR.GZ", "@scope/x.tgz", "@scope/x@y.tar",
        };
        for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_NODE, node[i], &err), -EINVAL,
                             "node `%s` accepted", node[i]);
                cr_expect(strstr(err.msg, "npm would install it as a local"), "`%s`: %s", node[i],
                          err.msg);
        }
        /* A version part npm reads as a directory below the workspace. */
        static const char *const node_dirs[] = {"lodash@.", "lodash@.x", "lodash@..", "x@.5"};
        for (size_t i = 0; i < sizeof(node_dirs) / sizeof(node_dirs[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_NODE, node_dirs[i], &err), -EINVAL,
                             "node `%s` accepted", node_dirs[i]);
                cr_expect(strncmp(err.msg, "package: ", 9) == 0, "%s", err.msg);
        }
        /* Archive-like text that is not at the end of a part stays a name. */
        psrun_error err = {0};
        cr_expect_eq(install_check_spec(INSTALL_TOOL_PYTHON, "zip.whl-tools", &err), 0, "%s",
                     err.msg);
        cr_expect_eq(install_check_spec(INSTALL_TOOL_NODE, "tgz.js@1.0.0", &err), 0, "%s", err.msg);
}

Test(install, package_names_with_versions_pass)
{
        static const char *const python[] = {
                "requests",
                "requests==2.31.0",
                "requests[socks]>=2.31,<3",
                "Django~=4.2",
                "zope.interface",
                "my_pkg-name.x!=1.0.post1",
                "numpy===1.26",
                "a",
                "pkg>1.0a1",
                "pkg<=2.0+local.1",
                "pkg==1.*",
                "torch[cuda,dev]",
        };
        for (size_t i = 0; i < sizeof(python) / sizeof(python[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_PYTHON, python[i], &err), 0,
                             "python `%s`: %s", python[i], err.msg);
        }
        static const char *const node[] = {
                "lodash",
                "lodash@4.17.21",
                "lodash@^4",
                "@types/node@~20.1.0",
                "react@latest",
                "left-pad@>=1.0.0",
                "a.b_c-d@1.x",
                "@scope/pkg",
                "typescript@5.4.0-beta",
        };
        for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++) {
                psrun_error err = {0};
                cr_expect_eq(install_check_spec(INSTALL_TOOL_NODE, node[i], &err), 0,
                             "node `%s`: %s", node[i], err.msg);
        }
}

Test(install, tools)
{
        enum install_tool t = 0;
        psrun_error err = {0};
        cr_expect_eq(install_tool_from_string(NULL, &t, &err), 0);
        cr_expect_eq(t, INSTALL_TOOL_PYTHON);
        cr_expect_eq(install_tool_from_string("node", &t, &err), 0);
        cr_expect_eq(t, INSTALL_TOOL_NODE);
        cr_expect_str_eq(install_tool_to_string(INSTALL_TOOL_PYTHON), "python");
        cr_expect_str_eq(install_tool_to_string(INSTALL_TOOL_NODE), "node");
        cr_expect_null(install_tool_to_string(0));
        cr_expect_eq(install_tool_from_string("cargo", &t, &err), -EINVAL);
        cr_expect(strncmp(err.msg, "tool: ", 6) == 0, "%s", err.msg);
}

static bool has_pair(char **argv, const char *a, const char *b)
{
        for (size_t i = 0; argv[i] && argv[i + 1]; i++)
                if (strcmp(argv[i], a) == 0 && (!b || strcmp(argv[i + 1], b) == 0))
                        return true;
        return false;
}

Test(install, argv)
{
        struct install_index p = {0};
        psrun_error err = {0};
        _cleanup_strv_free_ char **v = NULL;
        cr_assert_eq(install_argv(&p, INSTALL_TOOL_PYTHON, "psfake==1.0", &v, &err), 0, "%s",
                     err.msg);
        cr_expect_str_eq(v[0], "python3");
        cr_expect_str_eq(v[1], "-I");
        cr_expect(has_pair(v, "--target", INSTALL_PYTHON_DIR));
        cr_expect(has_pair(v, "--", "psfake==1.0"));
        cr_expect(!has_pair(v, "--index-url", NULL), "pip's own default index");
        size_t n = 0;
        while (v[n])
                n++;
        cr_expect_str_eq(v[n - 1], "psfake==1.0");
        cr_expect_str_eq(v[n - 2], "--");

        p.pip_index_url = "http://pypi.test:8080/simple";
        strv_free(TAKE_PTR(v));
        cr_assert_eq(install_argv(&p, INSTALL_TOOL_PYTHON, "psfake", &v, &err), 0);
        cr_expect(has_pair(v, "--index-url", "http://pypi.test:8080/simple"));
        cr_expect(has_pair(v, "--trusted-host", "pypi.test:8080"), "plain http needs it");
        p.pip_index_url = "https://pypi.test/simple";
        strv_free(TAKE_PTR(v));
        cr_assert_eq(install_argv(&p, INSTALL_TOOL_PYTHON, "psfake", &v, &err), 0);
        cr_expect(!has_pair(v, "--trusted-host", NULL), "https needs no trust");

        strv_free(TAKE_PTR(v));
        cr_assert_eq(install_argv(&p, INSTALL_TOOL_NODE, "@scope/pkg@^1", &v, &err), 0);
        cr_expect_str_eq(v[0], "npm");
        cr_expect_str_eq(v[1], "install");
        cr_expect(has_pair(v, "--", "@scope/pkg@^1"));
        p.npm_registry = "http://npm.test/";
        strv_free(TAKE_PTR(v));
        cr_assert_eq(install_argv(&p, INSTALL_TOOL_NODE, "lodash", &v, &err), 0);
        bool reg = false;
        for (size_t i = 0; v[i]; i++)
                reg |= strcmp(v[i], "--registry=http://npm.test/") == 0;
        cr_expect(reg);
        /* The spec is checked here too (the supervisor's own check). */
        strv_free(TAKE_PTR(v));
        cr_expect_eq(install_argv(&p, INSTALL_TOOL_NODE, "--global", &v, &err), -EINVAL);
        cr_expect_null(v);
        /* "": the tool's default, as NULL. */
        p = (struct install_index){.pip_index_url = "", .npm_registry = ""};
        cr_assert_eq(install_argv(&p, INSTALL_TOOL_PYTHON, "psfake", &v, &err), 0);
        cr_expect(!has_pair(v, "--index-url", NULL));
}

/* What an approver is shown as the index: the policy's, else the tool's
 * own default. */
Test(install, index_url)
{
        struct install_index none = {0}, empty = {"", ""};
        struct install_index own = {"http://pypi.test/simple", "http://npm.test/"};
        cr_expect_str_eq(install_index_url(&none, INSTALL_TOOL_PYTHON), "https://pypi.org/simple");
        cr_expect_str_eq(install_index_url(&empty, INSTALL_TOOL_NODE),
                         "https://registry.npmjs.org/");
        cr_expect_str_eq(install_index_url(&own, INSTALL_TOOL_PYTHON), "http://pypi.test/simple");
        cr_expect_str_eq(install_index_url(&own, INSTALL_TOOL_NODE), "http://npm.test/");
}

Test(install, network_check_and_env)
{
        psrun_error err = {0};
        cr_expect_eq(
                install_check_network(POLICY_NETWORK_NONE, POLICY_NETWORK_RESTRICTED, "x", &err),
                0);
        cr_expect_eq(install_check_network(POLICY_NETWORK_FULL, POLICY_NETWORK_NONE, "x", &err), 0);
        cr_expect_eq(install_check_network(POLICY_NETWORK_NONE, POLICY_NETWORK_NONE, "x", &err),
                     -ENETUNREACH);
        cr_expect(strstr(err.msg, "install: `x` cannot be installed"), "%s", err.msg);
        _cleanup_free_ char *path = install_path("/usr/bin:/bin");
        cr_expect_str_eq(path,
                         "/usr/bin:/bin:" INSTALL_PYTHON_DIR "/bin:" INSTALL_NODE_DIR "/.bin");
        _cleanup_free_ char *bare = install_path("");
        cr_expect_str_eq(bare, INSTALL_PYTHON_DIR "/bin:" INSTALL_NODE_DIR "/.bin");
        cr_expect_str_eq(install_env[0], "PYTHONPATH=" INSTALL_PYTHON_DIR);
}
