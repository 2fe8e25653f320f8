/* SPDX-License-Identifier: MIT */
/*
 * What other runtimes' test suites (crun's, in the peer tier) found: the
 * command forms runc and crun accept, and one regression test per bug of
 * issue 11, the hostile case first where there is one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci_test.h"

TestSuite(oci_conformance, .init = bundle_setup, .fini = bundle_teardown, .timeout = 60);

/* The test's build directory as an absolute path, so that psrun() still
 * finds the binary after a chdir into the bundle. */
static void chdir_bundle(void)
{
        char build[PATH_MAX];
        const char *b = getenv("PSRUN_BUILD") ? getenv("PSRUN_BUILD") : "build";
        cr_assert_not_null(realpath(b, build));
        setenv("PSRUN_BUILD", build, 1);
        cr_assert_eq(chdir(B.dir), 0);
}

/* The tests that chdir into the bundle leave it before it is removed. */
static void leave_bundle(void)
{
        if (chdir("/") < 0)
                cr_log_warn("chdir /: %s", strerror(errno));
        bundle_teardown();
}

/* ---- command forms ---- */

Test(oci_conformance, run_takes_the_bundle_from_the_current_directory, .fini = leave_bundle)
{
        /* runc's and crun's `run [--detach] [--keep] ID` with the bundle
         * from the current directory: no `--`, one argument that is an id. */
        bundle_config("c1", &(struct cfg){.args = "[\"echo\",\"from cwd\"]"});
        chdir_bundle();
        struct out o;
        cr_assert_eq(psrun(&o, NULL, "run", "c1", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "from cwd"), "%s", o.out);
        cr_expect_str_eq(oci_status("c1"), "", "run without --keep deletes");

        cr_assert_eq(psrun(&o, NULL, "run", "--keep", "c2", NULL), 0, "%s", o.err);
        cr_expect_str_eq(oci_status("c2"), "stopped", "--keep keeps it");
        cr_expect_eq(psrun(&o, NULL, "delete", "c2", NULL), 0, "%s", o.err);

        /* crun's form: --config relative to the bundle. */
        char path[512], other[512];
        snprintf(path, sizeof(path), "%s/config.json", B.dir);
        snprintf(other, sizeof(other), "%s/other.json", B.dir);
        bundle_config("c3", &(struct cfg){.args = "[\"echo\",\"from other.json\"]"});
        cr_assert_eq(rename(path, other), 0);
        cr_assert_eq(psrun(&o, NULL, "run", "--config", "other.json", "c3", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "from other.json"), "%s", o.out);
        cr_expect_eq(psrun(&o, NULL, "create", "--config", "other.json", "c4", NULL), 0, "%s",
                     o.err);
        cr_expect_str_eq(oci_status("c4"), "created");
        cr_expect_eq(psrun(&o, NULL, "delete", "--force", "c4", NULL), 0, "%s", o.err);
}

Test(oci_conformance, run_without_a_bundle_here_says_which_run_it_is, .fini = leave_bundle)
{
        /* No config.json here: the error names both readings. */
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-oci-nobundle");
        cr_assert_not_null(mkdtemp(dir));
        chdir_bundle();
        cr_assert_eq(chdir(dir), 0);
        struct out o;
        int r = psrun(&o, NULL, "run", "ls", NULL);
        rmdir(dir);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "no config.json") && contains(o.err, "psrun run -- ls"), "%s",
                  o.err);
        /* Not an id (a path): never the OCI run. */
        r = psrun(&o, NULL, "run", "--detach", "a/b", NULL);
        cr_expect_neq(r, 0);
}

Test(oci_conformance, version_has_spec_and_features_lines)
{
        struct out o;
        cr_assert_eq(psrun(&o, NULL, "--version", NULL), 0, "%s", o.err);
        cr_expect(strncmp(o.out, "psrun version ", 14) == 0, "%s", o.out);
        cr_expect(contains(o.out, "\nspec: 1."), "%s", o.out);
        cr_expect(contains(o.out, "\n+CAP +SECCOMP"), "%s", o.out);
}
