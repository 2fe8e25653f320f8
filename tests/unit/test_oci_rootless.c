/* SPDX-License-Identifier: MIT */
/* The OCI runtime rootless (runtime/oci/rootless.c): --rootless's words,
 * the user's state root and its checks, what limits become without a
 * cgroup, and which maps the user writes itself. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "runtime/oci/config.h"
#include "runtime/oci/rootless.h"
#include "runtime/plan.h"

Test(oci_rootless, mode_words)
{
        cr_expect_eq(oci_rootless_mode_from_string(NULL), OCI_ROOTLESS_AUTO);
        cr_expect_eq(oci_rootless_mode_from_string("auto"), OCI_ROOTLESS_AUTO);
        cr_expect_eq(oci_rootless_mode_from_string("true"), OCI_ROOTLESS_TRUE);
        cr_expect_eq(oci_rootless_mode_from_string("false"), OCI_ROOTLESS_FALSE);
        cr_expect_eq(oci_rootless_mode_from_string("TRUE"), -EINVAL);
        cr_expect_eq(oci_rootless_mode_from_string(""), -EINVAL);
        cr_expect(oci_rootless_active(OCI_ROOTLESS_TRUE));
        cr_expect(!oci_rootless_active(OCI_ROOTLESS_FALSE));
}

static char xdg[64];

static void make_xdg(mode_t mode)
{
        test_tmp_template(xdg, sizeof(xdg), "psrun-unit-xdg");
        cr_assert_not_null(mkdtemp(xdg));
        cr_assert_eq(chmod(xdg, mode), 0);
        setenv("XDG_RUNTIME_DIR", xdg, 1);
}

static void remove_xdg(void)
{
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", xdg);
        cr_expect_eq(system(cmd), 0);
}

Test(oci_rootless, root_is_made_0700_below_xdg_runtime_dir)
{
        make_xdg(0700);
        _cleanup_free_ char *path = NULL;
        psrun_error err = {0};
        /* Without create nothing is made, and that is no error. */
        cr_expect_eq(oci_rootless_root(false, &path, &err), 0, "%s", err.msg);
        cr_expect_null(path);
        cr_assert_eq(oci_rootless_root(true, &path, &err), 0, "%s", err.msg);
        char want[128];
        snprintf(want, sizeof(want), "%s/psrun/oci", xdg);
        cr_expect_str_eq(path, want);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700);
        remove_xdg();
}

Test(oci_rootless, root_refuses_links_shared_dirs_and_no_xdg)
{
        _cleanup_free_ char *path = NULL;
        psrun_error err = {0};
        unsetenv("XDG_RUNTIME_DIR");
        cr_expect_eq(oci_rootless_root(true, &path, &err), -EINVAL);
        cr_expect(strstr(err.msg, "set XDG_RUNTIME_DIR") && strstr(err.msg, "--root"), "%s",
                  err.msg);
        setenv("XDG_RUNTIME_DIR", "relative/dir", 1);
        cr_expect_eq(oci_rootless_root(true, &path, &err), -EINVAL);

        make_xdg(01777);
        cr_expect_eq(oci_rootless_root(true, &path, &err), -EPERM);
        cr_expect(strstr(err.msg, "writable by group or others"), "%s", err.msg);
        cr_expect_null(path);
        remove_xdg();

        make_xdg(0700);
        char link[128];
        snprintf(link, sizeof(link), "%s/psrun", xdg);
        cr_assert_eq(symlink("/tmp", link), 0);
        cr_expect_eq(oci_rootless_root(true, &path, &err), -ELOOP);
        cr_expect(strstr(err.msg, "is a symbolic link"), "%s", err.msg);
        cr_expect_null(path);
        remove_xdg();
}

Test(oci_rootless, root_refuses_another_users_directory)
{
        if (geteuid() != 0)
                cr_skip_test("needs root to chown a directory to someone else");
        make_xdg(0700);
        cr_assert_eq(chown(xdg, 4321, 4321), 0);
        _cleanup_free_ char *path = NULL;
        psrun_error err = {0};
        cr_expect_eq(oci_rootless_root(true, &path, &err), -EPERM);
        cr_expect(strstr(err.msg, "owned by uid 4321"), "%s", err.msg);
        remove_xdg();
}

static void parse(const char *json, struct oci_config *c)
{
        psrun_error err = {0};
        cr_assert_eq(oci_config_parse(json, strlen(json), c, &err), 0, "%s", err.msg);
}

#define CONFIG_HEAD                                                                                \
        "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"rootfs\"}, "                           \
        "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 0, \"gid\": 0}}, "

Test(oci_rootless, limits_refused_unless_best_effort)
{
        _cleanup_(oci_config_free) struct oci_config strict = {0}, best = {0}, none = {0};
        parse(CONFIG_HEAD "\"linux\": {\"resources\": {\"pids\": {\"limit\": 50}}}}", &strict);
        parse(CONFIG_HEAD "\"annotations\": {\"run.psrun.limits\": \"best_effort\"}, "
                          "\"linux\": {\"resources\": {\"memory\": {\"limit\": 1048576000}, "
                          "\"pids\": {\"limit\": 50}, \"cpu\": {\"quota\": 1000}}}}",
              &best);
        parse(CONFIG_HEAD "\"linux\": {\"resources\": {\"devices\": [{\"allow\": false, "
                          "\"access\": \"rwm\"}]}}}",
              &none);
        struct plan p;
        char said[320];
        psrun_error err = {0};
        plan_init(&p);
        p.clone_flags = CLONE_NEWPID;
        cr_expect_eq(oci_rootless_limits(&strict, &p, said, sizeof(said), &err), -EPERM);
        cr_expect(strstr(err.msg, "linux.resources.pids") && strstr(err.msg, "best_effort"), "%s",
                  err.msg);
        /* Device rules ask for no limit a cgroup alone could hold. */
        cr_expect_eq(oci_rootless_limits(&none, &p, said, sizeof(said), &err), 0, "%s", err.msg);
        cr_expect_str_eq(said, "");
        cr_expect_eq(p.n_rlimits, 0);

        cr_assert_eq(oci_rootless_limits(&best, &p, said, sizeof(said), &err), 0, "%s", err.msg);
        cr_expect(strstr(said, "memory.limit: RLIMIT_AS") && strstr(said, "RLIMIT_NPROC") &&
                          strstr(said, "cpu, blockIO"),
                  "%s", said);
        struct rlimit as;
        cr_assert_eq(getrlimit(RLIMIT_AS, &as), 0);
        bool found = false;
        for (size_t i = 0; i < p.n_rlimits; i++)
                if (p.rlimits[i].resource == RLIMIT_AS) {
                        found = true;
                        cr_expect_eq(p.rlimits[i].limit.rlim_max,
                                     as.rlim_max < 1048576000 ? as.rlim_max : 1048576000);
                }
        cr_expect(found);

        _cleanup_(oci_config_free) struct oci_config bad = {0};
        parse(CONFIG_HEAD "\"annotations\": {\"run.psrun.limits\": \"maybe\"}}", &bad);
        cr_expect_eq(oci_rootless_limits(&bad, &p, said, sizeof(said), &err), -EINVAL);
        cr_expect(strstr(err.msg, "run.psrun.limits: \"maybe\" is not strict or best_effort"), "%s",
                  err.msg);

        /* No pid namespace of its own: nothing could kill it whole. */
        p.clone_flags = 0;
        cr_expect_eq(oci_rootless_limits(&none, &p, said, sizeof(said), &err), -EPERM);
        cr_expect(strstr(err.msg, "needs a new pid namespace"), "%s", err.msg);
        plan_free(&p);
}

Test(oci_rootless, identity_needs_a_user_namespace_and_picks_who_writes_the_maps)
{
        char own[600], sub[600];
        snprintf(own, sizeof(own),
                 CONFIG_HEAD "\"linux\": {\"namespaces\": [{\"type\": \"user\"}, {\"type\": "
                             "\"pid\"}], \"uidMappings\": [{\"containerID\": 0, \"hostID\": %u, "
                             "\"size\": 1}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": "
                             "%u, \"size\": 1}]}}",
                 (unsigned) geteuid(), (unsigned) getegid());
        snprintf(sub, sizeof(sub),
                 CONFIG_HEAD "\"linux\": {\"namespaces\": [{\"type\": \"user\"}], \"uidMappings\": "
                             "[{\"containerID\": 0, \"hostID\": %u, \"size\": 1}, "
                             "{\"containerID\": 1, \"hostID\": 100000, \"size\": 65536}], "
                             "\"gidMappings\": [{\"containerID\": 0, \"hostID\": %u, \"size\": "
                             "1}]}}",
                 (unsigned) geteuid(), (unsigned) getegid());
        _cleanup_(oci_config_free) struct oci_config c_own = {0}, c_sub = {0}, c_none = {0};
        parse(own, &c_own);
        parse(sub, &c_sub);
        parse(CONFIG_HEAD "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}]}}", &c_none);
        struct plan p;
        psrun_error err = {0};

        plan_init(&p);
        cr_expect_eq(oci_rootless_plan_identity(&c_none, &p, &err), -EPERM);
        cr_expect(strstr(err.msg, "needs a user namespace"), "%s", err.msg);
        plan_free(&p);

        plan_init(&p);
        cr_assert_eq(oci_rootless_plan_identity(&c_own, &p, &err), 0, "%s", err.msg);
        cr_expect(p.rootless.active && p.rootless.setgroups_deny && !p.rootless.subids);
        cr_expect(p.rootfs.sources_in_child);
        plan_free(&p);

        plan_init(&p);
        int r = oci_rootless_plan_identity(&c_sub, &p, &err);
        if (access("/usr/bin/newuidmap", X_OK) == 0 || access("/bin/newuidmap", X_OK) == 0) {
                cr_expect_eq(r, 0, "%s", err.msg);
                cr_expect(p.rootless.subids && !p.rootless.setgroups_deny);
        } else {
                cr_expect_eq(r, -ENOENT);
                cr_expect(strstr(err.msg, "package uidmap"), "%s", err.msg);
        }
        plan_free(&p);
}
