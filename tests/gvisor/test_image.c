/* SPDX-License-Identifier: MIT */
/*
 * `image:` under `backend: gvisor` (docs/images.md, "Under gVisor"): the
 * bundle's root is the image's overlay, attached in runsc's mount
 * namespace; the image's Env and WorkingDir apply, nothing of the host's
 * filesystem is there, the root is read-only (or an upper bounded by
 * disk_limit), the store holds the image while the run or session lives,
 * and nothing is left after. The image is the one the integration tier
 * builds offline (tests/integration/image.h).
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "gvisor/common.h"
#include "image/store.h"
#include "integration/image.h"
#include "session/common.h"

TEST_IMAGE_SUITE(gvisor_image, img, gv_require, .timeout = 120);

/* psrun run -o backend=gvisor -o image=... -o image_store=... [extra] --
 * /bin/sh -c script */
static void run_sh(struct test_run *r, const char *const *extra, const char *script)
{
        static const char *const gvisor[] = {"-o", "backend=gvisor", NULL};
        test_image_run_sh(r, &img, gvisor, extra, script);
}

/* No mount of this process's namespace names the test's directory (the
 * layers, the store): the overlay lives in runsc's namespace only. */
static bool no_mount_of_the_store(char *why, size_t size)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return true;
        char line[4096];
        bool none = true;
        while (none && fgets(line, sizeof(line), f))
                if (strstr(line, img.dir)) {
                        snprintf(why, size, "%s", line);
                        none = false;
                }
        fclose(f);
        return none;
}

static struct store_prune_stats remove_and_prune(void)
{
        struct image_store *s = NULL;
        psrun_error err = {0};
        cr_assert_eq(image_store_open(test_image_value(img.store), &s, &err), 0, "%s", err.msg);
        char ref[4200], real[4096];
        cr_assert_not_null(realpath(img.layout, real));
        snprintf(ref, sizeof(ref), "oci:%s:v1", real);
        /* Gone already after the first call: the prune is what counts. */
        (void) image_store_remove(s, ref, &err);
        struct store_prune_stats st = {0};
        cr_assert_eq(image_store_prune(s, &st, &err), 0, "%s", err.msg);
        image_store_close(s);
        return st;
}

Test(gvisor_image, a_program_of_the_image_with_its_env_and_workdir)
{
        struct test_run r;
        /* The host has /usr/bin and /etc/os-release; the image has neither. */
        cr_assert_eq(access("/usr/bin", F_OK), 0);
        run_sh(&r, NULL,
               "cat /etc/image-only; pwd; echo $PATH; echo $IMG_VAR; id; cat /etc/hostname; "
               "for p in /usr /home /etc/os-release /etc/shadow /root; do test -e $p && "
               "echo host:$p; done; head -1 /etc/resolv.conf; grep -c sandbox /etc/hosts; "
               "grep -q '^sandbox:x:1000:1000:' /etc/passwd && echo passwd-ok");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out,
                         "from-the-image\n/app\n/bin:/imgbin\nfrom-image\n"
                         "uid=1000(sandbox) gid=1000(sandbox)\nsandbox\n# psrun: no DNS in this "
                         "sandbox\n1\npasswd-ok\n",
                         "stderr: %s", r.err);
        cr_expect_str_eq(gv_field(&r, "backend"), "\"gvisor\"", "%s", r.result);
        test_run_free(&r);
}

Test(gvisor_image, the_root_is_read_only_and_the_workspace_and_tmp_are_not)
{
        struct test_run r;
        /* As the image's root, so that the refusal is the mount's, not a
         * permission's. */
        const char *const extra[] = {"-o", "user=0", NULL};
        run_sh(&r, extra,
               "touch /x 2>&1; touch /etc/passwd 2>&1; touch /workspace/y && echo ws-ok; "
               "touch /tmp/z && echo tmp-ok");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect(strstr(r.out, "touch: /x: Read-only file system"), "%s", r.out);
        cr_expect(strstr(r.out, "touch: /etc/passwd: Read-only file system"), "%s", r.out);
        cr_expect(strstr(r.out, "ws-ok\ntmp-ok\n"), "%s", r.out);
        test_run_free(&r);
}

Test(gvisor_image, a_writable_root_is_bounded_and_leaves_the_store_clean)
{
        struct test_run r;
        const char *const extra[] = {"-o", "readonly_rootfs=false", "-o", "user=0",
                                     "-o", "disk_limit=2M",         NULL};
        run_sh(&r, extra,
               "echo new > /etc/new && cat /etc/new; rm /etc/image-only && echo rm-ok; "
               "dd if=/dev/zero of=/big bs=1024 count=4096 2>/dev/null && echo unbounded; "
               "rm -f /big");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "new\nrm-ok\n", "stderr: %s", r.err);
        test_run_free(&r);
        /* Nothing reached the layers: the next sandbox has the file. */
        run_sh(&r, NULL, "cat /etc/image-only; test -e /etc/new || echo no-new");
        cr_expect_str_eq(r.out, "from-the-image\nno-new\n", "stderr: %s", r.err);
        test_run_free(&r);
}

/* A run that waits on its stdin: the store is pruned meanwhile. */
Test(gvisor_image, held_while_the_run_lives_and_nothing_left_after)
{
        int in[2], out[2];
        cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(in[0], 0);
                dup2(out[1], 1);
                execl(test_psrun_path(), "psrun", "run", "-o", "backend=gvisor", "-o", img.ref,
                      "-o", img.store, "--", "/bin/sh", "-c",
                      "echo up; read x; cat /etc/image-only", (char *) NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        char buf[256] = {0};
        size_t used = 0;
        while (used < 3) {
                ssize_t k = read(out[0], buf + used, sizeof(buf) - 1 - used);
                if (k <= 0)
                        break;
                used += (size_t) k;
        }
        cr_assert_str_eq(buf, "up\n", "the run did not start");

        struct store_prune_stats st = remove_and_prune();
        cr_expect_eq(st.layers_removed, 0, "a held layer was pruned");
        cr_expect_geq(st.kept_in_use, 1);

        cr_assert_eq(write(in[1], "go\n", 3), 3);
        close(in[1]);
        used = 0;
        memset(buf, 0, sizeof(buf));
        for (ssize_t k; (k = read(out[0], buf + used, sizeof(buf) - 1 - used)) > 0;)
                used += (size_t) k;
        close(out[0]);
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
        cr_expect_str_eq(buf, "from-the-image\n", "the layer went while the run lived");

        /* Nothing left: the hold (prune now takes the layer), the state
         * directory, a mount, a cgroup. */
        st = remove_and_prune();
        cr_expect_eq(st.layers_removed, 1, "kept %u", st.kept_in_use);
        char why[4096] = "";
        cr_expect(gv_no_state_of(pid, why, sizeof(why)), "left in the state directory: %s", why);
        cr_expect(no_mount_of_the_store(why, sizeof(why)), "left mounted: %s", why);
        cr_expect(test_no_cgroup_leftovers_of(pid, why, sizeof(why)), "%s", why);
}

Test(gvisor_image, a_session_on_the_image)
{
        struct sess t;
        const char *const kv[] = {"backend",     "gvisor",
                                  "image",       test_image_value(img.ref),
                                  "image_store", test_image_value(img.store),
                                  "tools",       "[sh]",
                                  NULL};
        sess_start(&t, kv);
        psrun_error err = {0};
        static const char data[] = "from-the-host\n";
        cr_assert_eq(psrun_write_file(t.s, "in.txt", data, sizeof(data) - 1, 0644, &err), 0, "%s",
                     err.msg);
        psrun_exec_result res = sess_sh(&t,
                                        "cat /etc/image-only /workspace/in.txt; pwd; "
                                        "echo $IMG_VAR; test -e /usr || echo no-usr; "
                                        "echo kept > /workspace/out.txt",
                                        NULL);
        cr_expect_str_eq(res.stdout_data,
                         "from-the-image\nfrom-the-host\n/app\nfrom-image\nno-usr\n", "stderr: %s",
                         res.stderr_data);
        cr_expect_str_eq(res.result.backend, "gvisor");
        psrun_exec_result_free(&res);
        /* One root for the session's life: what an exec left is there. */
        res = sess_sh(&t, "cat /workspace/out.txt; id -u", NULL);
        cr_expect_str_eq(res.stdout_data, "kept\n1000\n", "stderr: %s", res.stderr_data);
        psrun_exec_result_free(&res);
        psrun_file_data fd = {0};
        cr_assert_eq(psrun_read_file(t.s, "out.txt", 0, 1024, &fd, &err), 0, "%s", err.msg);
        cr_expect(fd.len == 5 && fd.data && memcmp(fd.data, "kept\n", 5) == 0);
        free(fd.data);

        struct store_prune_stats st = remove_and_prune();
        cr_expect_eq(st.layers_removed, 0, "a held layer was pruned");
        sess_sh_ok(&t, "cat /etc/image-only && ls /bin/busybox");

        sess_end(&t);
        st = remove_and_prune();
        cr_expect_eq(st.layers_removed, 1, "kept %u", st.kept_in_use);
        char why[4096] = "";
        cr_expect(no_mount_of_the_store(why, sizeof(why)), "left mounted: %s", why);
}

Test(gvisor_image, a_session_missing_a_tool_fails_the_create)
{
        /* The host has python3 in /usr/bin; the image has not. */
        const char *const kv[] = {"backend",     "gvisor",
                                  "image",       test_image_value(img.ref),
                                  "image_store", test_image_value(img.store),
                                  "tools",       "[sh, python]",
                                  NULL};
        char want[700];
        snprintf(want, sizeof(want),
                 "tools: `python` is not in the root of %s (no python3 or python on PATH)",
                 test_image_value(img.ref));
        sess_expect_create_fails(kv, want);
}
