/* SPDX-License-Identifier: MIT */
/*
 * The same container under three seccomp profiles of the years before
 * openat2, close_range, statx and faccessat2 (tests/oci/data/seccomp: the
 * default profile of Docker 1.12 from 2016, moby's of 19.03 from 2019, and
 * what runtime-tools' generator wrote), each with noNewPrivileges false and
 * true. Without it the filter is loaded before psrun's child changes its
 * identity, capabilities and working directory, so a uid and a cwd of the
 * container's own make those steps run under the profile: they may call
 * only what it allows (CHILD_AFTER_FILTER_SYSCALLS in
 * runtime/child-internal.h). Before, create failed "chdir: /tmp: Operation
 * not permitted".
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "oci/oci_test.h"

TestSuite(oci_old_profiles, .init = bundle_setup, .fini = bundle_teardown, .timeout = 120);

static const char *const profiles[] = {"docker-1.12.0.json", "moby-19.03.0.json",
                                       "runtime-tools-0.9.0.json"};

/* ",\"seccomp\":" and the profile, for cfg.linux_extra (the caller frees). */
static char *seccomp_of(const char *name)
{
        char here[PATH_MAX], path[PATH_MAX + 64];
        snprintf(here, sizeof(here), "%s", __FILE__);
        snprintf(path, sizeof(path), "%s/data/seccomp/%s", dirname(here), name);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = read_all(fd, 1 << 20, &data, &len);
        cr_assert_geq(r, 0, "%s: %s", path, strerror(-r));
        char *extra = NULL;
        cr_assert_gt(asprintf(&extra, ",\"seccomp\":%.*s", (int) len, data), 0);
        return extra;
}

static const char user_1000[] = "{\"uid\":1000,\"gid\":1000,\"additionalGids\":[1001]}";

Test(oci_old_profiles, a_container_runs_under_each_with_and_without_no_new_privileges)
{
        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
                _cleanup_free_ char *seccomp = seccomp_of(profiles[i]);
                for (int nnp = 0; nnp <= 1; nnp++) {
                        char id[32];
                        snprintf(id, sizeof(id), "c%zu-%d", i, nnp);
                        bundle_config(id, &(struct cfg){
                                                  .args = "[\"sh\",\"-c\",\"id -u; id -G; pwd\"]",
                                                  .user = user_1000,
                                                  .cwd = "/tmp",
                                                  .new_privs = !nnp,
                                                  .linux_extra = seccomp,
                                          });
                        struct out o;
                        int r = psrun(&o, NULL, "run", "--bundle", B.dir, id, NULL);
                        cr_expect_eq(r, 0, "%s, noNewPrivileges %s: %s", profiles[i],
                                     nnp ? "true" : "false", o.err);
                        cr_expect_str_eq(o.out, "1000\n1000 1001\n/tmp\n", "%s, nnp %d",
                                         profiles[i], nnp);
                        psrun(&o, NULL, "delete", "--force", id, NULL);
                }
        }
}

Test(oci_old_profiles, create_start_and_an_exec_under_each_without_no_new_privileges)
{
        /* create + start separately: the exec FIFO and create's lock let
         * go of under the filter; then an exec into it, whose process runs
         * the same steps under the same profile. */
        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
                _cleanup_free_ char *seccomp = seccomp_of(profiles[i]);
                char id[32];
                snprintf(id, sizeof(id), "e%zu", i);
                bundle_config(id, &(struct cfg){
                                          .user = user_1000,
                                          .cwd = "/tmp",
                                          .new_privs = true,
                                          .linux_extra = seccomp,
                                  });
                struct out o;
                cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, id, NULL), 0, "%s: %s",
                             profiles[i], o.err);
                cr_assert_eq(psrun(&o, NULL, "start", id, NULL), 0, "%s: %s", profiles[i], o.err);
                cr_expect(wait_status(id, "running", 5000), "%s", profiles[i]);
                int r = psrun(&o, NULL, "exec", "--cwd", "/root", "--user", "1000:1000", id, "sh",
                              "-c", "id -u; pwd", NULL);
                cr_expect_eq(r, 0, "%s: exec: %s", profiles[i], o.err);
                cr_expect_str_eq(o.out, "1000\n/root\n", "%s", profiles[i]);
                cr_expect_eq(psrun(&o, NULL, "delete", "--force", id, NULL), 0, "%s", o.err);
        }
}

Test(oci_old_profiles, the_profiles_are_old_ones)
{
        /* What makes the tests above worth running: none of the three
         * allows what psrun's steps used to call after the filter. */
        static const char *const newer[] = {"\"openat2\"", "\"close_range\"", "\"faccessat2\"",
                                            "\"clone3\""};
        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
                _cleanup_free_ char *seccomp = seccomp_of(profiles[i]);
                cr_expect(contains(seccomp, "\"defaultAction\": \"SCMP_ACT_ERRNO\""), "%s",
                          profiles[i]);
                for (size_t k = 0; k < ARRAY_SIZE(newer); k++)
                        cr_expect(!contains(seccomp, newer[k]), "%s allows %s", profiles[i],
                                  newer[k]);
        }
}
