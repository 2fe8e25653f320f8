/* SPDX-License-Identifier: MIT */
/*
 * The gVisor backend's pure parts: the config.json it writes from a plan
 * (read back with psrun's own OCI parser), runsc's error log, and the keys
 * it refuses.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/testlib.h"
#include "policy/policy.h"
#include "runtime/gvisor/gvisor.h"
#include "runtime/oci/config.h"
#include "runtime/run.h"

static void config_of(const char *const *opts, pid_t netns_pid, struct oci_config *out)
{
        struct policy pol;
        cr_assert_eq(policy_init(&pol), 0);
        psrun_error err = {0};
        cr_assert_eq(policy_set_option(&pol, "backend=gvisor", &err), 0, "%s", err.msg);
        for (size_t i = 0; opts && opts[i]; i++)
                cr_assert_eq(policy_set_option(&pol, opts[i], &err), 0, "%s: %s", opts[i], err.msg);
        char *argv[] = {"/bin/echo", "hi there", NULL};
        struct plan plan;
        cr_assert_eq(plan_from_policy(&pol, argv, NULL, &plan, &err), 0, "%s", err.msg);
        cr_expect_eq(plan.seccomp.len, 0, "no native seccomp plan under gVisor");
        cr_expect_eq(plan.landlock.ruleset_fd, -1, "no native Landlock plan under gVisor");
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        struct gvisor_config c = {.root = "/R", .workspace = "/W", .netns_pid = netns_pid};
        cr_assert_eq(gvisor_write_config(f, &plan, &c, &err), 0, "%s", err.msg);
        fclose(f);
        cr_assert_eq(oci_config_parse(buf, len, out, &err), 0, "%s\n%s", err.msg, buf);
        free(buf);
        plan_free(&plan);
        policy_free(&pol);
}

static const struct oci_mount *mount_at(const struct oci_config *c, const char *dest)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i].destination, dest) == 0)
                        return &c->mounts[i];
        return NULL;
}

static bool has_option(const struct oci_mount *m, const char *opt)
{
        for (size_t i = 0; m && i < m->n_options; i++)
                if (strcmp(m->options[i], opt) == 0)
                        return true;
        return false;
}

Test(gvisor_bundle, the_default_sandbox)
{
        struct oci_config c;
        config_of(NULL, 0, &c);
        cr_expect_str_eq(c.root.path, "/R");
        cr_expect(c.root.readonly);
        cr_expect_str_eq(c.hostname, "sandbox");
        cr_assert_not_null(c.process);
        cr_expect_eq(c.process->user.uid, 1000);
        cr_expect_eq(c.process->user.gid, 1000);
        cr_expect_eq(c.process->n_args, 2);
        cr_expect_str_eq(c.process->args[1], "hi there");
        cr_expect_str_eq(c.process->cwd, "/workspace");
        cr_expect(c.process->no_new_privileges);
        cr_assert_not_null(c.process->capabilities);
        cr_expect_eq(c.process->capabilities->bounding, 0);
        cr_expect_eq(c.process->capabilities->effective, 0);
        cr_expect_eq(c.process->capabilities->permitted, 0);
        cr_expect_eq(c.process->capabilities->ambient, 0);
        bool home = false;
        for (size_t i = 0; i < c.process->n_env; i++)
                home |= strcmp(c.process->env[i], "HOME=/workspace") == 0;
        cr_expect(home);
        /* The kernel quotas psrun run caps that an rlimit carries:
         * RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE (runtime/plan.c). */
        cr_expect_eq(c.process->n_rlimits, 2, "RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE");

        /* The workspace is the host tmpfs, writable; /tmp a tmpfs of the
         * sentry's, sized; /proc gVisor's; the host's /usr read-only. */
        const struct oci_mount *ws = mount_at(&c, "/workspace");
        cr_assert_not_null(ws);
        cr_expect_str_eq(ws->type, "bind");
        cr_expect_str_eq(ws->source, "/W");
        cr_expect(has_option(ws, "rw") && has_option(ws, "nosuid") && has_option(ws, "nodev"));
        const struct oci_mount *tmp = mount_at(&c, "/tmp");
        cr_assert_not_null(tmp);
        cr_expect_str_eq(tmp->type, "tmpfs");
        cr_expect(has_option(tmp, "size=134217728") && has_option(tmp, "mode=1777"));
        cr_expect_not_null(mount_at(&c, "/proc"));
        cr_expect_not_null(mount_at(&c, "/dev/shm"));
        struct stat st;
        if (lstat("/usr", &st) == 0 && S_ISDIR(st.st_mode)) {
                const struct oci_mount *usr = mount_at(&c, "/usr");
                cr_assert_not_null(usr);
                cr_expect_str_eq(usr->source, "/usr");
                cr_expect(has_option(usr, "ro") && has_option(usr, "rbind"));
        }
        /* Nothing else of the host: no /etc as a whole, no /dev nodes (runsc
         * makes its own /dev), no private directories. */
        static const char *const never[] = {"/etc",  "/dev", "/dev/null", "/root",
                                            "/home", "/run", "/var",      "/etc/shadow"};
        for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
                cr_expect_null(mount_at(&c, never[i]), "%s is mounted", never[i]);
        for (size_t i = 0; i < c.n_mounts; i++) {
                const struct oci_mount *m = &c.mounts[i];
                if (m->type && strcmp(m->type, "bind") == 0 &&
                    strncmp(m->destination, "/etc/", 5) == 0)
                        cr_expect(has_option(m, "ro"), "%s is writable", m->destination);
        }

        /* The native backend's user namespace: its ids, not the host's. */
        cr_assert_not_null(c.linux_);
        cr_assert_eq(c.linux_->n_uid_mappings, 1);
        cr_expect_eq(c.linux_->uid_mappings[0].container_id, 0);
        cr_expect_eq(c.linux_->uid_mappings[0].host_id, PSRUN_ID_BASE);
        cr_expect_eq(c.linux_->uid_mappings[0].size, PSRUN_ID_COUNT);
        bool user = false, net = false;
        for (size_t i = 0; i < c.linux_->n_namespaces; i++) {
                user |= c.linux_->namespaces[i].type == CLONE_NEWUSER;
                if (c.linux_->namespaces[i].type == CLONE_NEWNET) {
                        net = true;
                        cr_expect_null(c.linux_->namespaces[i].path);
                }
        }
        cr_expect(user && net);
        oci_config_free(&c);
}

Test(gvisor_bundle, mounts_workdir_and_network_namespace)
{
        static const char *const opts[] = {"mounts=[/usr/share:/data, /srv:/out:rw]",
                                           "workdir=/workspace/app", "hostname=box", NULL};
        struct oci_config c;
        config_of(opts, 4242, &c);
        const struct oci_mount *ro = mount_at(&c, "/data");
        cr_assert_not_null(ro);
        cr_expect(has_option(ro, "ro"));
        const struct oci_mount *rw = mount_at(&c, "/out");
        cr_assert_not_null(rw);
        cr_expect(has_option(rw, "rw") && !has_option(rw, "ro"));
        cr_expect_str_eq(c.process->cwd, "/workspace/app");
        cr_expect_str_eq(c.hostname, "box");
        bool path = false;
        for (size_t i = 0; i < c.linux_->n_namespaces; i++)
                if (c.linux_->namespaces[i].type == CLONE_NEWNET)
                        path = c.linux_->namespaces[i].path &&
                               strcmp(c.linux_->namespaces[i].path, "/proc/4242/ns/net") == 0;
        cr_expect(path, "the network namespace psrun prepared");
        oci_config_free(&c);
}

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs(text, f);
        fclose(f);
}

Test(gvisor_bundle, runsc_error_log)
{
        char path[64];
        test_tmp_template(path, sizeof(path), "psrun-gv-log");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        close(fd);
        char msg[256];
        write_text(path, "");
        cr_expect_eq(gvisor_read_error(path, msg, sizeof(msg)), -ENOENT);
        /* runsc writes objects back to back, without newlines. */
        write_text(path, "{\"msg\":\"first\",\"level\":\"error\",\"time\":\"t\"}"
                         "{\"msg\":\"only a warning\",\"level\":\"warning\",\"time\":\"t\"}"
                         "{\"msg\":\"starting: failed to load \\\"/x\\\": no such file or "
                         "directory\\nmore\\u0001\",\"level\":\"error\",\"time\":\"t\"}");
        cr_assert_eq(gvisor_read_error(path, msg, sizeof(msg)), 0);
        cr_expect_str_eq(msg, "starting: failed to load \"/x\": no such file or directory more?");
        cr_expect_eq(gvisor_error_exit_code(msg), 127);
        cr_expect_eq(gvisor_error_exit_code("failed to load /x: permission denied"), 126);
        cr_expect_eq(gvisor_error_exit_code("cannot create sandbox: EOF"), 125);
        unlink(path);
        cr_expect_eq(gvisor_read_error(path, msg, sizeof(msg)), -ENOENT);
}

Test(gvisor_bundle, refused_keys)
{
        static const struct {
                const char *opt, *key;
        } cases[] = {
                {"landlock=required", "landlock:"},
                {"apparmor=required", "apparmor:"},
                {"readonly_rootfs=false", "readonly_rootfs:"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct policy pol;
                cr_assert_eq(policy_init(&pol), 0);
                psrun_error err = {0};
                cr_assert_eq(gvisor_check_policy(&pol, &err), 0, "the defaults: %s", err.msg);
                cr_assert_eq(policy_set_option(&pol, cases[i].opt, &err), 0);
                cr_expect_eq(gvisor_check_policy(&pol, &err), -EOPNOTSUPP, "%s", cases[i].opt);
                cr_expect(strncmp(err.msg, cases[i].key, strlen(cases[i].key)) == 0, "%s", err.msg);
                policy_free(&pol);
        }
}
