/* SPDX-License-Identifier: MIT */
/*
 * What the parent clones before clone3 (rootfs/sources.c): a masked /proc
 * path gets its clone of the host's /dev/null only where this kernel has a
 * file there, since each clone unused costs an RCU grace period to free.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/testlib.h"
#include "rootfs/mounts.h"

TestSuite(rootfs_sources, .init = test_require_root, .timeout = 30);

static void add(struct rootfs_plan *plan, const struct mount_step *s)
{
        cr_assert_geq(rootfs_plan_add(plan, s), 0);
}

/* A root with a procfs of its own and masks of a file, a directory and a
 * path no kernel has; the mask's index by target. */
static void proc_plan(struct rootfs_plan *plan, bool fresh_proc)
{
        if (fresh_proc)
                add(plan, &(struct mount_step){.op = MOUNT_OP_MOUNT,
                                               .source = "proc",
                                               .fstype = "proc",
                                               .target = "/proc"});
        static const char *const targets[] = {"/proc/version", "/proc/sys",
                                              "/proc/psrun-no-such-file"};
        for (size_t i = 0; i < 3; i++)
                add(plan, &(struct mount_step){
                                  .op = MOUNT_OP_MASK, .target = targets[i], .optional = true});
}

Test(rootfs_sources, a_mask_clones_dev_null_only_for_a_file_the_kernel_has)
{
        struct stat st;
        cr_assert_eq(stat("/proc/version", &st), 0, "the host's /proc is no full procfs");
        struct rootfs_plan plan = {0};
        proc_plan(&plan, true);
        struct rootfs_sources src;
        psrun_error err = {0};
        cr_assert_eq(rootfs_sources_open(&plan, &src, &err), 0, "%s", err.msg);
        cr_expect_geq(src.fds[1], 0, "the file /proc/version got no clone of /dev/null");
        cr_expect_eq(fstat(src.fds[1], &st), 0);
        cr_expect(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3), "not /dev/null");
        cr_expect_eq(src.fds[2], -1, "the directory /proc/sys (a tmpfs mask) got a clone");
        cr_expect_eq(src.fds[3], -1, "a path the kernel lacks got a clone");
        rootfs_sources_close(&src);
        rootfs_plan_free(&plan);
}

Test(rootfs_sources, without_a_procfs_of_its_own_every_mask_gets_its_clone)
{
        /* The host's /proc then says nothing of what the root has there
         * (an OCI bundle's own files): nothing is skipped. */
        struct rootfs_plan plan = {0};
        proc_plan(&plan, false);
        struct rootfs_sources src;
        psrun_error err = {0};
        cr_assert_eq(rootfs_sources_open(&plan, &src, &err), 0, "%s", err.msg);
        for (size_t i = 0; i < 3; i++)
                cr_expect_geq(src.fds[i], 0, "mask %zu got no clone", i);
        rootfs_sources_close(&src);
        rootfs_plan_free(&plan);
}
