/* SPDX-License-Identifier: MIT */
/* The escape tier's hostile checks again on an image root (tests/escape
 * runs them on the host-/usr root): the same seccomp refusals, pid 1 out
 * of reach, no device nodes, /proc masked, nothing mounted on the host. */
#include <unistd.h>

#include "integration/common.h"
#include "integration/image.h"

TEST_IMAGE_SUITE(image_hostile, img, test_require_root);

static void expect_probe(const char *user, const char *cmd, const char *arg, const char *want)
{
        const char *const extra[] = {"-o", img.ref, "-o", img.store, "-o", user, NULL};
        struct test_run r;
        run_probe(&r, extra, cmd, arg);
        cr_expect_str_eq(r.out, want, "%s %s (%s): %s", cmd, arg ? arg : "", user, r.err);
        test_run_free(&r);
}

Test(image_hostile, denied_syscalls_fail_with_eperm)
{
        static const char *const denied[] = {
                "unshare-user", "unshare-net", "mount",           "bpf",
                "keyctl",       "ptrace",      "perf_event_open", "io_uring_setup",
                "userfaultfd",  "init_module", "setns",           "chroot",
        };
        for (size_t i = 0; i < sizeof(denied) / sizeof(*denied); i++)
                expect_probe("user=1000", "syscall", denied[i], "EPERM\n");
        expect_probe("user=1000", "syscall", "getpid", "ok\n");
}

Test(image_hostile, pid1_is_out_of_reach)
{
        static const char *const who[] = {"user=1000", "user=root"};
        for (size_t i = 0; i < 2; i++) {
                expect_probe(who[i], "openrw", "/proc/1/mem", "EACCES\n");
                expect_probe(who[i], "exists", "/proc/1/root/", "EACCES\n");
        }
        expect_probe("user=1000", "signal", "1", "EPERM\n");
}

Test(image_hostile, no_device_nodes_and_proc_masked)
{
        expect_probe("user=root", "mknod", "/tmp/mem", "EPERM\n");
        expect_probe("user=1000", "socket", "packet", "EPERM\n");
        expect_probe("user=1000", "exists", "/dev/mem", "ENOENT\n");
        expect_probe("user=1000", "exists", "/sys/kernel", "ENOENT\n");
        /* As root of the sandbox: the image's files are its own, the
         * root is still read-only. */
        expect_probe("user=root", "openrw", "/etc/image-only", "EROFS\n");
}

static int mount_count(void)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        cr_assert_not_null(f);
        int n = 0, c;
        while ((c = fgetc(f)) != EOF)
                n += c == '\n';
        fclose(f);
        return n;
}

Test(image_hostile, host_mount_table_untouched)
{
        int before = mount_count();
        struct test_run r;
        const char *const argv[] = {"run",
                                    "-o",
                                    img.ref,
                                    "-o",
                                    img.store,
                                    "-o",
                                    "readonly_rootfs=false",
                                    "--",
                                    "/bin/sh",
                                    "-c",
                                    "cat /proc/self/mountinfo",
                                    NULL};
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, 0, "%s", r.err);
        /* The root is the overlay, and no host path is named in it. */
        cr_expect(strstr(r.out, " / / ") && strstr(r.out, " - overlay "), "%s", r.out);
        cr_expect_null(strstr(r.out, img.dir), "the store's path shows: %s", r.out);
        test_run_free(&r);
        cr_expect_eq(mount_count(), before);
}
