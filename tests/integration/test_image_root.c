/* SPDX-License-Identifier: MIT */
/* `image:` as the root (docs/images.md, "Mounting"): one read-only overlay
 * of the image's layers with psrun's /etc files, /workspace, /tmp, /proc
 * and /dev, and nothing of the host's filesystem. */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integration/common.h"
#include "integration/image.h"

TEST_IMAGE_SUITE(image_root, img, test_require_root);

/* psrun run -o image=... -o image_store=... [extra] -- sh -c script */
static void run_sh(struct test_run *r, const char *const *extra, const char *script)
{
        test_image_run_sh(r, &img, NULL, extra, script);
}

Test(image_root, the_root_is_the_images)
{
        struct test_run r;
        /* The host has /usr, /home and /etc/os-release; the image has none. */
        cr_assert_eq(access("/usr/bin", F_OK), 0);
        run_sh(&r, NULL,
               "cat /etc/image-only; for p in /usr /home /etc/os-release /etc/shadow /root; do "
               "test -e $p && echo host:$p; done; ls /");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect(strstr(r.out, "from-the-image\n"), "%s", r.out);
        cr_expect_null(strstr(r.out, "host:"), "a host path is visible: %s", r.out);
        cr_expect(strstr(r.out, "app\nbin\ndev\netc\nimgbin\nproc\ntmp\nworkspace\n"), "%s", r.out);
        test_run_free(&r);
}

Test(image_root, read_only_with_a_writable_workspace)
{
        struct test_run r;
        run_sh(&r, NULL,
               "touch /x 2>&1; touch /etc/passwd 2>&1; touch /workspace/y && echo ws-ok; "
               "touch /tmp/z && echo tmp-ok");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect(strstr(r.out, "touch: /x: Read-only file system"), "%s", r.out);
        cr_expect(strstr(r.out, "touch: /etc/passwd: Read-only file system"), "%s", r.out);
        cr_expect(strstr(r.out, "ws-ok\ntmp-ok\n"), "%s", r.out);
        test_run_free(&r);
}

Test(image_root, config_env_and_workdir)
{
        struct test_run r;
        run_sh(&r, NULL, "pwd; echo $PATH; echo $IMG_VAR; echo $HOME");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "/app\n/bin:/imgbin\nfrom-image\n/workspace\n");
        test_run_free(&r);

        /* The policy wins. */
        const char *const extra[] = {"-o", "workdir=/tmp", "-o", "env={PATH: /bin, IMG_VAR: mine}",
                                     NULL};
        run_sh(&r, extra, "pwd; echo $PATH; echo $IMG_VAR");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "/tmp\n/bin\nmine\n");
        test_run_free(&r);
}

Test(image_root, passwd_is_the_images_with_the_sandbox_user)
{
        struct test_run r;
        run_sh(&r, NULL, "id; cat /etc/passwd; cat /etc/hostname; ls -ln /bin/busybox");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect(strstr(r.out, "uid=1000(sandbox) gid=1000(sandbox)"), "%s", r.out);
        cr_expect(strstr(r.out, "root:x:0:0:root:/root:/bin/sh\n"), "%s", r.out);
        cr_expect(strstr(r.out, "\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n"), "%s", r.out);
        cr_expect(strstr(r.out, "sandbox\n"), "%s", r.out);
        /* Unpacked shifted: the image's root owns its files. */
        cr_expect(strstr(r.out, " 1 0        0 "), "%s", r.out);
        test_run_free(&r);
}

Test(image_root, no_host_inode_is_shared)
{
        /* The image's busybox is the store's copy, not the host's file: a
         * flock or inotify watch on it reaches no host program. */
        struct stat host;
        cr_assert_eq(stat("/bin/busybox", &host), 0);
        struct test_run r;
        run_sh(&r, NULL, "stat -L -c '%i' /bin/busybox");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        unsigned long ino = strtoul(r.out, NULL, 10);
        cr_expect_neq(ino, 0);
        cr_expect_neq(ino, (unsigned long) host.st_ino, "the sandbox sees the host's inode");
        test_run_free(&r);
}

Test(image_root, writable_root_keeps_the_store_clean)
{
        struct test_run r;
        const char *const extra[] = {"-o", "readonly_rootfs=false", "-o", "user=0", NULL};
        run_sh(&r, extra, "echo new > /etc/new && cat /etc/new; rm /etc/image-only && echo rm-ok");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "new\nrm-ok\n");
        test_run_free(&r);
        /* Nothing reached the layers: the next sandbox has the file. */
        run_sh(&r, NULL, "cat /etc/image-only; test -e /etc/new || echo no-new");
        cr_expect_str_eq(r.out, "from-the-image\nno-new\n");
        test_run_free(&r);
}

static void expect_one_line(const char *const *argv, const char *needle)
{
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, 125, "exit %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, needle), "stderr lacks `%s`: %s", needle, r.err);
        cr_expect(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
        test_run_free(&r);
}

Test(image_root, bad_references)
{
        const char *const a[] = {"run", "-o", "image=Not A Ref", "--", "true", NULL};
        expect_one_line(a, "-o image: `Not A Ref`: has a space");
        const char *const b[] = {"run", "-o",   img.store, "-o", "image=oci:/nonexistent/layout",
                                 "--",  "true", NULL};
        expect_one_line(b, "image: oci:/nonexistent/layout: No such file or directory");
        char tagged[600];
        snprintf(tagged, sizeof(tagged), "image=oci:%s:nosuchtag", img.layout);
        const char *const c[] = {"run", "-o", img.store, "-o", tagged, "--", "true", NULL};
        expect_one_line(c, "nosuchtag");
}

Test(image_root, mounts_get_mount_points_but_never_over_an_image_symlink)
{
        char src[300], opt[700];
        snprintf(src, sizeof(src), "%s/tree/etc", img.dir);
        snprintf(opt, sizeof(opt), "mounts=%s:/data/deep", src);
        const char *const extra[] = {"-o", opt, NULL};
        struct test_run r;
        run_sh(&r, extra, "cat /data/deep/image-only; ls /bin/sh");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "from-the-image\n/bin/sh\n");
        test_run_free(&r);
        /* /bin/sh is the image's symlink: psrun's layer may not make it a
         * directory to mount on. */
        snprintf(opt, sizeof(opt), "mounts=%s:/bin/sh/x", src);
        const char *const argv[] = {"run", "-o", img.ref, "-o",        img.store,
                                    "-o",  opt,  "--",    "/bin/true", NULL};
        expect_one_line(argv,
                        "image: /bin/sh/x: /bin/sh is a symlink in the image, so psrun cannot "
                        "make it there");
}

/* The side-channel helper (tests/helper/sidechannel.c) on the image root or
 * on the host's root, bound read-only at /sidechannel. */
static void run_sidechannel(struct test_run *r, bool on_image, const char *const *args)
{
        static char mount[1200];
        snprintf(mount, sizeof(mount), "mounts=%s:/sidechannel:ro",
                 test_helper_path("sidechannel"));
        const char *argv[16];
        size_t n = 0;
        argv[n++] = "run";
        if (on_image) {
                argv[n++] = "-o";
                argv[n++] = img.ref;
                argv[n++] = "-o";
                argv[n++] = img.store;
        }
        argv[n++] = "-o";
        argv[n++] = mount;
        argv[n++] = "--";
        argv[n++] = "/sidechannel";
        for (size_t i = 0; args[i] && n < 15; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        test_run_psrun(r, argv);
}

Test(image_root, a_host_flock_does_not_reach_the_sandbox)
{
        /* The host holds an exclusive lock on its /bin/busybox. On the host's
         * root the sandbox's file is that inode and its lock attempt fails
         * (the control: the side channel is real); on the image root it is
         * the store's copy and the lock is free. */
        int fd = open("/bin/busybox", O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
        const char *const args[] = {"flock", "/bin/busybox", NULL};
        struct test_run r;
        run_sidechannel(&r, false, args);
        cr_expect_str_eq(r.out, "held\n", "the host-root control: %s / %s", r.out, r.err);
        test_run_free(&r);
        run_sidechannel(&r, true, args);
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "free\n", "a host lock reached the image root: %s", r.err);
        test_run_free(&r);
        close(fd);
}

static volatile bool reading;

static void *read_host_busybox(void *arg)
{
        (void) arg;
        char buf[64];
        while (reading) {
                int fd = open("/bin/busybox", O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) !read(fd, buf, sizeof(buf));
                        close(fd);
                }
                usleep(5000);
        }
        return NULL;
}

Test(image_root, host_reads_give_the_sandbox_no_inotify_events)
{
        /* A thread opens and reads the host's /bin/busybox every 5 ms while
         * the sandbox watches its own /bin/busybox for 500 ms. On the host's
         * root the watch sees the host's reads (the control); on the image
         * root it sees none. */
        const char *const args[] = {"inotify", "/bin/busybox", "500", NULL};
        pthread_t t;
        reading = true;
        cr_assert_eq(pthread_create(&t, NULL, read_host_busybox, NULL), 0);
        struct test_run host, image;
        run_sidechannel(&host, false, args);
        run_sidechannel(&image, true, args);
        reading = false;
        pthread_join(t, NULL);
        cr_expect_gt(strtol(host.out, NULL, 10), 0, "the host-root control saw no event: %s / %s",
                     host.out, host.err);
        cr_expect_eq(image.status, 0, "stderr: %s", image.err);
        cr_expect_str_eq(image.out, "0\n", "the image root saw host reads: %s", image.out);
        test_run_free(&host);
        test_run_free(&image);
}
