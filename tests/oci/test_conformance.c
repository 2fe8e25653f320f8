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

/* A new user namespace with a 64 Ki range at 200000, and its mappings. */
#define USERNS_200000                                                                              \
        "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},"        \
        "{\"type\":\"mount\"},{\"type\":\"user\"}]"
#define MAPS_200000                                                                                \
        ",\"uidMappings\":[{\"containerID\":0,\"hostID\":200000,\"size\":65536}],"                 \
        "\"gidMappings\":[{\"containerID\":0,\"hostID\":200000,\"size\":65536}]"

static int run_config(const char *id, const struct cfg *c, struct out *o)
{
        bundle_config(id, c);
        return psrun(o, NULL, "run", "--bundle", B.dir, id, NULL);
}

static void write_rootfs_file(const char *rel, const char *text)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/rootfs/%s", B.dir, rel);
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        fputs(text, f);
        fclose(f);
}

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

/* ---- bug 5: a cgroup mount without a cgroup namespace ---- */

static const char *no_cgroupns = "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
                                 "{\"type\":\"uts\"},{\"type\":\"mount\"}]";

/* Shows the memory limit the container's cgroup has (v1 or v2), whether the
 * host's root cgroup is what is mounted, and whether it is writable. */
static const char *cgroup_probe =
        "[\"sh\",\"-c\",\"for f in /sys/fs/cgroup/memory/memory.limit_in_bytes "
        "/sys/fs/cgroup/memory.max; do [ -e $f ] && cat $f && (echo 1 > $f 2>/dev/null && echo "
        "WROTE || echo refused); done; [ -e /sys/fs/cgroup/memory/cgroup.sane_behavior ] && echo "
        "HOST-ROOT; echo SIBLINGS=$(ls /sys/fs/cgroup/memory /sys/fs/cgroup 2>/dev/null | grep -c "
        "psrun-oci-test)\"]";

Test(oci_conformance, cgroup_mount_without_cgroupns_is_the_containers_own_cgroup)
{
        struct out o;
        const char *mount = ",{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\","
                            "\"source\":\"cgroup\",\"options\":[\"nosuid\",\"noexec\",\"nodev\"]}";
        int r = run_config("c1",
                           &(struct cfg){.args = cgroup_probe,
                                         .namespaces = no_cgroupns,
                                         .mounts_extra = mount,
                                         .linux_extra = ",\"resources\":{\"memory\":{\"limit\":"
                                                        "67108864}}"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "67108864\nrefused\n"),
                  "not the container's own cgroup, or writable without rw: %s", o.out);
        cr_expect(!contains(o.out, "HOST-ROOT"), "the host's root cgroup is visible: %s", o.out);
        cr_expect(!contains(o.out, "WROTE"), "%s", o.out);
        cr_expect(contains(o.out, "SIBLINGS=0\n"), "other containers' cgroups are visible: %s",
                  o.out);
}

Test(oci_conformance, cgroup_mount_rw_when_asked)
{
        struct out o;
        const char *mount = ",{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\","
                            "\"source\":\"cgroup\",\"options\":[\"nosuid\",\"noexec\",\"nodev\","
                            "\"rw\"]}";
        /* Writable, but still only its own cgroup: the mount's options. */
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"sh\",\"-c\",\"awk '$5 ~ /^\\\\/sys\\\\/fs\\\\/cgroup/ "
                                      "{ print $4, $5, substr($6, 1, 2) }' /proc/self/mountinfo\"]",
                              .namespaces = no_cgroupns,
                              .mounts_extra = mount},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "/psrun-oci-test-") && contains(o.out, " rw\n"),
                  "not the own cgroup, rw: %s", o.out);
        cr_expect(!contains(o.out, "\n/ /sys/fs/cgroup/"), "a hierarchy's root: %s", o.out);
}

Test(oci_conformance, cgroup_mount_in_a_user_namespace_without_cgroupns)
{
        /* A v1 hierarchy cannot be mounted in a user namespace; its own
         * cgroup bound from the host can (crun's resources-pid-limit-userns). */
        struct out o;
        const char *mount = ",{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\","
                            "\"source\":\"cgroup\",\"options\":[\"nosuid\",\"noexec\",\"nodev\"]}";
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /sys/fs/cgroup/pids/pids.max "
                                      "2>/dev/null || cat /sys/fs/cgroup/pids.max\"]",
                              .namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},"
                                            "{\"type\":\"ipc\"},{\"type\":\"uts\"},"
                                            "{\"type\":\"mount\"},{\"type\":\"user\"}]",
                              .mounts_extra = mount,
                              .linux_extra = ",\"uidMappings\":[{\"containerID\":0,\"hostID\":"
                                             "200000,\"size\":65536}],\"gidMappings\":[{"
                                             "\"containerID\":0,\"hostID\":200000,\"size\":"
                                             "65536}],\"resources\":{\"pids\":{\"limit\":77}}"},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "77\n"), "not the container's own pids limit: %s", o.out);
}

/* ---- bug 11: HOME ---- */

Test(oci_conformance, home_from_the_images_passwd_else_slash)
{
        write_rootfs_file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
                                        "user:x:1000:1000:user:/home/user:/bin/sh\n");
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"echo HOME=$HOME\"]",
                                         .env = "[\"PATH=/bin\"]",
                                         .user = "{\"uid\":1000,\"gid\":1000}"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "HOME=/home/user\n"), "%s", o.out);
        r = run_config("c2",
                       &(struct cfg){.args = "[\"sh\",\"-c\",\"echo HOME=$HOME\"]",
                                     .env = "[\"PATH=/bin\"]",
                                     .user = "{\"uid\":4242,\"gid\":4242}"},
                       &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "HOME=/\n"), "%s", o.out);
        /* The config's own HOME wins. */
        r = run_config("c3", &(struct cfg){.args = "[\"sh\",\"-c\",\"echo HOME=$HOME\"]"}, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "HOME=/root\n"), "%s", o.out);
}

Test(oci_conformance, home_lookup_of_a_hostile_passwd_neither_hangs_nor_escapes)
{
        /* /etc/passwd a FIFO: read as a file it would block create forever. */
        char path[512];
        snprintf(path, sizeof(path), "%s/rootfs/etc/passwd", B.dir);
        unlink(path);
        cr_assert_eq(mkfifo(path, 0644), 0);
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"echo HOME=$HOME\"]",
                                         .env = "[\"PATH=/bin\"]"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "HOME=/\n"), "%s", o.out);
        /* A symbolic link to the host's /etc/passwd resolves in the image,
         * where there is none: root's home is not taken from the host. */
        unlink(path);
        cr_assert_eq(symlink("/../../../../../../../../etc/passwd", path), 0);
        r = run_config("c2",
                       &(struct cfg){.args = "[\"sh\",\"-c\",\"echo HOME=$HOME\"]",
                                     .env = "[\"PATH=/bin\"]"},
                       &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "HOME=/\n"), "the host's passwd was read: %s", o.out);
}

Test(oci_conformance, exec_sets_home_too)
{
        write_rootfs_file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
        oci_up("c1", &(struct cfg){.env = "[\"PATH=/bin\"]"});
        struct out o;
        cr_assert_eq(psrun(&o, NULL, "exec", "c1", "sh", "-c", "echo HOME=$HOME", NULL), 0, "%s",
                     o.err);
        cr_expect(contains(o.out, "HOME=/root\n"), "%s", o.out);
}

/* ---- sysctl kernel.hostname: the hostname field's ---- */

Test(oci_conformance, sysctl_kernel_hostname_is_refused)
{
        struct out o;
        int r = run_config(
                "c1", &(struct cfg){.linux_extra = ",\"sysctl\":{\"kernel.hostname\":\"x\"}"}, &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "kernel.hostname") && contains(o.err, "hostname field"), "%s",
                  o.err);
        cr_expect_str_eq(oci_status("c1"), "", "left behind");
}

/* ---- bug 2: bind mount options ---- */

/* The options of the mount at /mnt, as mountinfo shows them (field 6),
 * then its optional fields (propagation). */
static const char *mnt_options =
        "[\"awk\",\"$5 == \\\"/mnt\\\" { o = $6; p = \\\"\\\"; for (i = 7; $i != \\\"-\\\"; "
        "i++) p = p \\\" \\\" $i; print \\\"OPTS=\\\" o \\\" PROP=\\\" p }\","
        "\"/proc/self/mountinfo\"]";

static void bind_with(const char *id, const char *options, struct out *o)
{
        char src[300], mounts[800];
        snprintf(src, sizeof(src), "%s/src", B.dir);
        mkdir(src, 0755);
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[%s]}",
                 src, options);
        int r = run_config(id, &(struct cfg){.args = mnt_options, .mounts_extra = mounts}, o);
        cr_assert_eq(r, 0, "[%s]: %s", options, o->err);
}

Test(oci_conformance, bind_mounts_take_atime_options)
{
        /* The atime mode is a field of the mount attributes: set without
         * its mask it was EINVAL. */
        struct out o;
        bind_with("c1", "\"bind\",\"strictatime\"", &o);
        cr_expect(contains(o.out, "OPTS=") && !contains(o.out, "relatime") &&
                          !contains(o.out, "noatime"),
                  "strictatime: %s", o.out);
        bind_with("c2", "\"rbind\",\"noatime\",\"nodiratime\"", &o);
        cr_expect(contains(o.out, "noatime") && contains(o.out, "nodiratime"), "noatime: %s",
                  o.out);
        bind_with("c3", "\"bind\",\"ro\",\"noexec\"", &o);
        cr_expect(contains(o.out, "OPTS=ro,") && contains(o.out, "noexec"), "ro: %s", o.out);
}

Test(oci_conformance, bind_mounts_take_propagation_options)
{
        struct out o;
        bind_with("c1", "\"rbind\",\"shared\"", &o);
        cr_expect(contains(o.out, "PROP= shared:"), "shared ignored: %s", o.out);
        bind_with("c2", "\"rbind\",\"rprivate\"", &o);
        cr_expect(contains(o.out, "PROP=\n"), "private: %s", o.out);
}

Test(oci_conformance, propagation_of_a_bound_file)
{
        /* Docker binds /etc/resolv.conf, /etc/hosts and /etc/hostname as
         * ["rbind", "rprivate"], podman /run/.containerenv too: a
         * propagation change on a file's mount failed with ENOTDIR when it
         * was made from the target as the working directory. */
        char src[300], mounts[1200];
        snprintf(src, sizeof(src), "%s/resolv.conf", B.dir);
        FILE *f = fopen(src, "we");
        cr_assert_not_null(f);
        fputs("nameserver 192.0.2.53\n", f);
        fclose(f);
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/etc/resolv.conf\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\",\"rprivate\"]},"
                 "{\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"bind\",\"shared\",\"ro\"]}",
                 src, src);
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /etc/resolv.conf; grep "
                                                 "' /etc/hosts ' /proc/self/mountinfo\"]",
                                         .mounts_extra = mounts},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "nameserver 192.0.2.53"), "%s", o.out);
        cr_expect(contains(o.out, " shared:"), "shared ignored on a file: %s", o.out);
}

Test(oci_conformance, rbind_stays_recursive_whatever_follows)
{
        /* A source with a mount below it: ["rbind", ..., "bind"] keeps it. */
        char src[300], sub[320], mounts[800];
        snprintf(src, sizeof(src), "%s/src", B.dir);
        snprintf(sub, sizeof(sub), "%s/sub", src);
        cr_assert_eq(mkdir(src, 0755), 0);
        cr_assert_eq(mkdir(sub, 0755), 0);
        cr_assert_eq(mount("psrun-test", sub, "tmpfs", 0, "size=64k"), 0, "%s", strerror(errno));
        char file[340];
        snprintf(file, sizeof(file), "%s/file", sub);
        FILE *f = fopen(file, "we");
        cr_assert_not_null(f);
        fputs("below\n", f);
        fclose(f);
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\",\"ro\",\"bind\"]}",
                 src);
        struct out o;
        int r = run_config(
                "c1", &(struct cfg){.args = "[\"cat\",\"/mnt/sub/file\"]", .mounts_extra = mounts},
                &o);
        umount2(sub, MNT_DETACH);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "below"), "the submount was dropped: %s", o.out);
}

/* ---- bug 6: what already sits at a mount point ---- */

Test(oci_conformance, mount_points_that_are_fifos_sockets_devices_or_links)
{
        /* A FIFO at a file mount point hung create forever (opened for
         * writing), a device node failed with ENXIO. Now each is only a
         * place to mount on; a symbolic link leads inside the image. */
        char dir[300], path[400], src[300];
        snprintf(dir, sizeof(dir), "%s/rootfs/mnt", B.dir);
        mkdir(dir, 0755);
        snprintf(path, sizeof(path), "%s/fifo", dir);
        cr_assert_eq(mkfifo(path, 0644), 0);
        snprintf(path, sizeof(path), "%s/dev", dir);
        cr_assert_eq(mknod(path, S_IFCHR | 0600, makedev(1, 3)), 0, "%s", strerror(errno));
        snprintf(path, sizeof(path), "%s/sock", dir);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        cr_assert_lt(strlen(path), sizeof(sa.sun_path));
        strcpy(sa.sun_path, path);
        cr_assert_eq(bind(s, (struct sockaddr *) &sa, sizeof(sa)), 0, "%s", strerror(errno));
        close(s);
        /* A link whose target, read on the host, would be the host's file. */
        char host_file[64];
        test_tmp_template(host_file, sizeof(host_file), "psrun-oci-linktarget");
        int fd = mkstemp(host_file);
        cr_assert_geq(fd, 0);
        close(fd);
        snprintf(path, sizeof(path), "%s/link", dir);
        cr_assert_eq(symlink(host_file, path), 0);

        snprintf(src, sizeof(src), "%s/src-file", B.dir);
        FILE *f = fopen(src, "we");
        cr_assert_not_null(f);
        fputs("mounted\n", f);
        fclose(f);
        char mounts[1600];
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/mnt/fifo\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"bind\"]},"
                 "{\"destination\":\"/mnt/dev\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"bind\"]},"
                 "{\"destination\":\"/mnt/sock\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"bind\"]},"
                 "{\"destination\":\"/mnt/link\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"bind\"]}",
                 src, src, src, src);
        struct out o;
        time_t t0 = time(NULL);
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"cat\",\"/mnt/fifo\",\"/mnt/dev\",\"/mnt/sock\","
                                      "\"/mnt/link\"]",
                              .mounts_extra = mounts},
                &o);
        struct stat st;
        int host_size = stat(host_file, &st) == 0 ? (int) st.st_size : -1;
        unlink(host_file);
        cr_expect_lt(time(NULL) - t0, 30, "create took too long");
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "mounted\nmounted\nmounted\nmounted\n"), "%s", o.out);
        cr_expect_eq(host_size, 0, "the link led to the host's file");
}

/* ---- bug 1: psrun's own steps after a config's seccomp filter ---- */

Test(oci_conformance, a_profile_refusing_close_range_with_new_privileges)
{
        /* Without noNewPrivileges the config's filter is loaded before the
         * privileges drop, so every psrun step after it runs under it:
         * "close inherited fds: Operation not permitted" was the result of
         * an (old Docker) profile without close_range. create + start, so
         * that create's lock is let go of through the fallback too. */
        const char *seccomp = ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                              "\"architectures\":[\"SCMP_ARCH_X86_64\"],"
                              "\"syscalls\":[{\"names\":[\"close_range\"],"
                              "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1}]}";
        struct out o;
        bundle_config("c1",
                      &(struct cfg){.args = "[\"sh\",\"-c\",\"ls /proc/self/fd; sleep 1000\"]",
                                    .user = "{\"uid\":1000,\"gid\":1000}",
                                    .new_privs = true,
                                    .linux_extra = seccomp});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "start", "c1", NULL), 0, "start blocked or failed: %s", o.err);
        cr_expect(wait_status("c1", "running", 5000));
        cr_expect_eq(psrun(&o, NULL, "delete", "--force", "c1", NULL), 0, "%s", o.err);

        int r = run_config("c2",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"ls /proc/self/fd | wc -l\"]",
                                         .new_privs = true,
                                         .user = "{\"uid\":1000,\"gid\":1000}",
                                         .linux_extra = seccomp},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        /* 0, 1, 2 and ls's own directory fd: nothing of psrun's. */
        cr_expect(contains(o.out, "4\n"), "fds leaked into the process: %s", o.out);
}

/* ---- bug 12: linux.resources.network ---- */

Test(oci_conformance, network_resources_are_applied_or_refused_never_dropped)
{
        /* Where net_cls and net_prio are mounted (v1) they are applied;
         * anywhere else the field is an error naming it, and nothing is
         * left behind. */
        bool have = access("/sys/fs/cgroup/net_cls/net_cls.classid", F_OK) == 0 ||
                    access("/sys/fs/cgroup/net_cls,net_prio/net_cls.classid", F_OK) == 0;
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"true\"]",
                                         .linux_extra = ",\"resources\":{\"network\":{\"classID\":"
                                                        "1048577}}"},
                           &o);
        if (have) {
                cr_expect_eq(r, 0, "%s", o.err);
        } else {
                cr_expect_neq(r, 0, "network resources silently dropped");
                cr_expect(contains(o.err, "linux.resources.network.classID") &&
                                  contains(o.err, "net_cls"),
                          "%s", o.err);
                cr_expect_str_eq(oci_status("c1"), "", "left behind");
        }
        r = run_config("c2",
                       &(struct cfg){.args = "[\"true\"]",
                                     .linux_extra = ",\"resources\":{\"network\":{\"priorities\":"
                                                    "[{\"name\":\"lo\",\"priority\":5}]}}"},
                       &o);
        if (!have) {
                cr_expect_neq(r, 0, "network priorities silently dropped");
                cr_expect(contains(o.err, "linux.resources.network.priorities"), "%s", o.err);
        }
        /* Bad input names the field. */
        r = run_config("c3",
                       &(struct cfg){.linux_extra = ",\"resources\":{\"network\":{\"classID\":"
                                                    "\"x\"}}"},
                       &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "linux.resources.network.classID"), "%s", o.err);
}

/* ---- bug 9: a user namespace without mappings ---- */

Test(oci_conformance, user_namespace_without_mappings_gets_psruns_range)
{
        /* Refused before; crun maps a range of its own. psrun's is the one
         * its sandboxes use: root inside is an unprivileged id outside. */
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"id -u; cat /proc/self/uid_map "
                                                 "/proc/self/gid_map\"]",
                                         .namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},"
                                                       "{\"type\":\"ipc\"},{\"type\":\"uts\"},"
                                                       "{\"type\":\"mount\"},{\"type\":\"user\"}]"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "0\n"), "%s", o.out);
        /* 0x70000000 = 1879048192 (runtime/run.h), 65536 ids, for both. */
        const char *line = strstr(o.out, "1879048192");
        cr_expect(line && strstr(line + 1, "1879048192"), "not the default range: %s", o.out);
        /* One kind of mapping without the other is still an error. */
        r = run_config("c2",
                       &(struct cfg){.namespaces = "[{\"type\":\"pid\"},{\"type\":\"mount\"},"
                                                   "{\"type\":\"user\"}]",
                                     .linux_extra = ",\"uidMappings\":[{\"containerID\":0,"
                                                    "\"hostID\":200000,\"size\":65536}]"},
                       &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "linux.gidMappings"), "%s", o.err);
}

Test(oci_conformance, stdio_pipes_belong_to_the_process_user)
{
        /* As runc: a process running as uid 1000 can reopen its stdout
         * (a pipe of the caller's) through /dev/stdout. */
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"stat -L -c %u /proc/self/fd/1; "
                                                 "echo via-dev-stdout > /dev/stdout\"]",
                                         .user = "{\"uid\":1000,\"gid\":1000}"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "1000\n"), "stdout not given to uid 1000: %s", o.out);
        cr_expect(contains(o.out, "via-dev-stdout"), "%s / %s", o.out, o.err);
}

/* ---- bug 3: mounts in the config's order, in a user namespace too ---- */

Test(oci_conformance, user_namespace_mounts_keep_the_configs_order)
{
        /* proc was mounted before every other mount in a user namespace: a
         * proc below a bind mount that comes first was hidden by it (or
         * failed, its directory not made yet). */
        char src[300], sub[320], mounts[900];
        snprintf(src, sizeof(src), "%s/src", B.dir);
        snprintf(sub, sizeof(sub), "%s/proc", src);
        cr_assert_eq(mkdir(src, 0755), 0);
        cr_assert_eq(mkdir(sub, 0755), 0);
        /* The image has /mnt (the user namespace's root cannot make it). */
        char mnt[300];
        snprintf(mnt, sizeof(mnt), "%s/rootfs/mnt", B.dir);
        mkdir(mnt, 0755);
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\"]},"
                 "{\"destination\":\"/mnt/proc\",\"type\":\"proc\",\"source\":\"proc\"}",
                 src);
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"sh\",\"-c\",\"head -n 1 /mnt/proc/self/status\"]",
                              .namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},"
                                            "{\"type\":\"ipc\"},{\"type\":\"uts\"},"
                                            "{\"type\":\"mount\"},{\"type\":\"user\"}]",
                              .mounts_extra = mounts,
                              .linux_extra = ",\"uidMappings\":[{\"containerID\":0,\"hostID\":"
                                             "200000,\"size\":65536}],\"gidMappings\":[{"
                                             "\"containerID\":0,\"hostID\":200000,\"size\":"
                                             "65536}]"},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "Name:"), "proc hidden under the bind: %s", o.out);
}

/* ---- bug 4: mount and uts namespaces joined by path, or none asked for ---- */

/* How many mounts of pid's mount namespace are at or below dir. */
static int mounts_below(pid_t pid, const char *dir)
{
        char path[64], line[4096];
        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) pid);
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        int n = 0;
        while (fgets(line, sizeof(line), f)) {
                char mp[2048];
                if (sscanf(line, "%*s %*s %*s %*s %2047s", mp) == 1 &&
                    strncmp(mp, dir, strlen(dir)) == 0)
                        n++;
        }
        fclose(f);
        return n;
}

Test(oci_conformance, no_mount_namespace_asked_for_leaks_no_mount)
{
        /* Refused before. Now a private copy of the runtime's namespace:
         * the container runs, and its mounts never reach ours. */
        char rootfs[300];
        snprintf(rootfs, sizeof(rootfs), "%s/rootfs", B.dir);
        oci_up("c1", &(struct cfg){.namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},"
                                                 "{\"type\":\"ipc\"},{\"type\":\"uts\"}]"});
        cr_expect_str_eq(oci_status("c1"), "running");
        cr_expect_eq(mounts_below(getpid(), rootfs), 0, "the container's mounts reached ours");
        cr_expect_gt(mounts_below(oci_pid("c1"), "/proc"), 0, "no /proc in the container");
        struct out o;
        cr_expect_eq(psrun(&o, NULL, "delete", "--force", "c1", NULL), 0, "%s", o.err);
}

Test(oci_conformance, mount_and_uts_namespaces_joined_by_path)
{
        /* c2 joins c1's mount and uts namespaces by path (refused before:
         * "needs a new mount namespace"). Its root is built in a private
         * copy of c1's mount namespace, which stays as it was; the uts
         * namespace is shared, hostname and all (runc's semantics). */
        oci_up("c1", NULL);
        pid_t pid = oci_pid("c1");
        cr_assert_gt(pid, 0);
        int before = mounts_below(pid, "/");
        char ns[600];
        snprintf(ns, sizeof(ns),
                 "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
                 "{\"type\":\"uts\",\"path\":\"/proc/%d/ns/uts\"},"
                 "{\"type\":\"mount\",\"path\":\"/proc/%d/ns/mnt\"}]",
                 (int) pid, (int) pid);
        struct out o;
        int r = run_config("c2", &(struct cfg){.args = "[\"hostname\"]", .namespaces = ns}, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "oci-test"), "%s", o.out);
        cr_expect_eq(mounts_below(pid, "/"), before, "c1's mount namespace was changed");
        cr_expect_str_eq(oci_status("c1"), "running");
}

/* ---- bug 8: hooks ---- */

Test(oci_conformance, start_container_hook_path_is_the_containers)
{
        /* runtime-spec: startContainer's path resolves in the container's
         * mount namespace: a program only the image has runs, one only the
         * host has does not. */
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "cp %s/rootfs/bin/busybox %s/rootfs/bin/only-in-image", B.dir,
                 B.dir);
        cr_assert_eq(system(cmd), 0);
        struct out o;
        bundle_config("c1", &(struct cfg){.hooks = "\"startContainer\":[{\"path\":\"/bin/only-in-"
                                                   "image\",\"args\":[\"sh\",\"-c\",\"echo ran > "
                                                   "/tmp/start-hook\"]}]"});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "start", "c1", NULL), 0, "%s", o.err);
        char path[400], text[64];
        snprintf(path, sizeof(path), "%s/rootfs/tmp/start-hook", B.dir);
        cr_expect(read_text(path, text, sizeof(text)) && strcmp(text, "ran") == 0,
                  "the hook did not run in the container");
        cr_expect_eq(psrun(&o, NULL, "delete", "--force", "c1", NULL), 0, "%s", o.err);

        /* A host path the image lacks (the test's own bundle directory). */
        char hooks[800];
        snprintf(hooks, sizeof(hooks),
                 "\"startContainer\":[{\"path\":\"%s/rootfs/bin/only-in-image\","
                 "\"args\":[\"sh\",\"-c\",\"true\"]}]",
                 B.dir);
        bundle_config("c2", &(struct cfg){.hooks = hooks});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c2", NULL), 0, "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "start", "c2", NULL), 0,
                      "a host path ran as a startContainer hook");
        cr_expect(contains(o.err, "startContainer"), "%s", o.err);
}

Test(oci_conformance, create_container_hook_runs_a_dynamically_linked_host_program)
{
        /* runtime-spec: createContainer runs in the container's namespaces
         * before the pivot, so its program is the runtime's and finds its
         * loader and libraries. psrun's init has pivoted by then: the hook
         * ran with the container's root, and a dynamically linked host
         * program (the host's sh) failed with ENOENT. In a user namespace
         * too. */
        char out[400], hooks[1200];
        const char *variants[][2] = {{"c1", NULL}, {"c2", USERNS_200000}};
        for (size_t i = 0; i < 2; i++) {
                snprintf(out, sizeof(out), "%s/rootfs/tmp/hook-%s", B.dir, variants[i][0]);
                snprintf(hooks, sizeof(hooks),
                         "\"createContainer\":[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\","
                         "\"cat /proc/sys/kernel/hostname > %s\"]}]",
                         out);
                struct out o;
                bundle_config(variants[i][0],
                              &(struct cfg){.args = "[\"true\"]",
                                            .hooks = hooks,
                                            .namespaces = variants[i][1],
                                            .linux_extra = variants[i][1] ? MAPS_200000 : NULL});
                int r = psrun(&o, NULL, "run", "--bundle", B.dir, variants[i][0], NULL);
                cr_expect_eq(r, 0, "%s: %s", variants[i][0], o.err);
                char text[64];
                /* Its hostname is the container's: its uts namespace. */
                cr_expect(read_text(out, text, sizeof(text)) && strcmp(text, "oci-test") == 0,
                          "%s: the hook did not run in the container's namespaces", variants[i][0]);
        }
}

/* ---- bug 7 (part): an overlay of host directories ---- */

Test(oci_conformance, overlay_with_host_layers)
{
        /* lowerdir, upperdir and workdir are host paths: the overlay was
         * mounted after the root had moved, where they are not. */
        char lower[300], upper[300], work[300], mounts[1200], cmd[1400];
        snprintf(lower, sizeof(lower), "%s/lower", B.dir);
        snprintf(upper, sizeof(upper), "%s/upper", B.dir);
        snprintf(work, sizeof(work), "%s/work", B.dir);
        snprintf(cmd, sizeof(cmd), "mkdir -p %s %s %s && echo from-lower > %s/file", lower, upper,
                 work, lower);
        cr_assert_eq(system(cmd), 0);
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/mnt\",\"type\":\"overlay\",\"source\":\"overlay\","
                 "\"options\":[\"lowerdir=%s\",\"upperdir=%s\",\"workdir=%s\"]}",
                 lower, upper, work);
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /mnt/file; echo new > /mnt/added\"]",
                              .mounts_extra = mounts},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "from-lower"), "%s", o.out);
        char path[400], text[64];
        snprintf(path, sizeof(path), "%s/added", upper);
        cr_expect(read_text(path, text, sizeof(text)) && strcmp(text, "new") == 0,
                  "the write did not reach upperdir");
}

/* ---- bug 7: device nodes and bind sources in a user namespace ---- */

Test(oci_conformance, user_namespace_device_nodes_the_host_lacks)
{
        /* No mknod in a user namespace: the host's node of the same path
         * was bound ("bind /dev/foo: No such file or directory" where the
         * host has none, and the host's node, not the config's, where it
         * has one). Now the config's node, with its owner and mode, made by
         * the runtime as crun does, and usable. */
        char devices[600];
        snprintf(devices, sizeof(devices),
                 "%s,\"devices\":[{\"path\":\"/dev/psrun-test-null\",\"type\":\"c\",\"major\":1,"
                 "\"minor\":3,\"fileMode\":416,\"uid\":10,\"gid\":11},"
                 "{\"path\":\"/dev/sub/psrun-test-zero\",\"type\":\"c\",\"major\":1,\"minor\":5}]",
                 MAPS_200000);
        cr_assert_neq(access("/dev/psrun-test-null", F_OK), 0, "the host has the node");
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"stat -c '%u:%g %a %t:%T' "
                                                 "/dev/psrun-test-null; echo x > "
                                                 "/dev/psrun-test-null && head -c 5 "
                                                 "/dev/sub/psrun-test-zero | wc -c\"]",
                                         .namespaces = USERNS_200000,
                                         .linux_extra = devices},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "10:11 640 1:3\n"), "not the config's node: %s", o.out);
        cr_expect(contains(o.out, "5\n"), "the node does not work: %s", o.out);
        cr_expect_neq(access("/dev/psrun-test-null", F_OK), 0, "a node was left on the host");

        /* An owner the user namespace does not map is an error naming it. */
        r = run_config("c2",
                       &(struct cfg){.namespaces = USERNS_200000,
                                     .linux_extra = MAPS_200000
                                     ",\"devices\":[{\"path\":\"/dev/psrun-test-null\",\"type\":"
                                     "\"c\",\"major\":1,\"minor\":3,\"uid\":70000}]"},
                       &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "linux.devices[0].uid: 70000 is not mapped"), "%s", o.err);
        cr_expect_str_eq(oci_status("c2"), "", "left behind");
}

Test(oci_conformance, user_namespace_bind_sources_only_the_hosts_root_may_reach)
{
        /* The sources were opened by the child, with the user namespace's
         * mapped ids: a source below a directory only the host's root may
         * search was EACCES, where runc and crun bind it. Through a
         * symbolic link too, and onto a destination that is a link inside
         * the image (resolved there, not ELOOP). */
        char locked[300], src[320], link[320], mounts[1200], cmd[1400];
        snprintf(locked, sizeof(locked), "%s/locked", B.dir);
        snprintf(src, sizeof(src), "%s/src", locked);
        snprintf(link, sizeof(link), "%s/link", locked);
        snprintf(cmd, sizeof(cmd),
                 "set -e; mkdir -p %s; echo hello > %s/content; ln -s %s %s; chmod 000 %s; "
                 "mkdir -p %s/rootfs/real; ln -s /real %s/rootfs/viaimage",
                 src, src, src, link, locked, B.dir, B.dir);
        cr_assert_eq(system(cmd), 0);
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/foo\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"bind\",\"ro\"]},"
                 "{\"destination\":\"/viaimage\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\",\"ro\"]}",
                 src, link);
        cr_assert_eq(mkdir(strcat(strcpy(cmd, B.dir), "/rootfs/foo"), 0755), 0);
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /foo/content "
                                                 "/real/content\"]",
                                         .namespaces = USERNS_200000,
                                         .mounts_extra = mounts,
                                         .linux_extra = MAPS_200000},
                           &o);
        chmod(locked, 0755);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "hello\nhello\n"), "%s", o.out);

        /* What the user who runs psrun cannot reach stays out of reach: a
         * missing source is still an error naming the mount. */
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/foo\",\"type\":\"bind\",\"source\":\"%s/missing\","
                 "\"options\":[\"bind\"]}",
                 B.dir);
        r = run_config("c2",
                       &(struct cfg){.namespaces = USERNS_200000,
                                     .mounts_extra = mounts,
                                     .linux_extra = MAPS_200000},
                       &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, ".source: ") && contains(o.err, "/missing: No such file"), "%s",
                  o.err);
        cr_expect_str_eq(oci_status("c2"), "", "left behind");
}

/* ---- socket activation (crun's listen_pid_env) ---- */

Test(oci_conformance, listen_fds_are_passed_on)
{
        /* As runc and crun: LISTEN_FDS=n in the caller's environment hands
         * fds 3..3+n-1 to the process, with LISTEN_FDS and LISTEN_PID=1. */
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"echo $LISTEN_FDS $LISTEN_PID; "
                                                  "readlink /proc/self/fd/3\"]"});
        char build[PATH_MAX], cmd[2400], out[300], text[400];
        const char *b = getenv("PSRUN_BUILD") ? getenv("PSRUN_BUILD") : "build";
        cr_assert_not_null(realpath(b, build));
        snprintf(out, sizeof(out), "%s/listen.out", B.dir);
        snprintf(cmd, sizeof(cmd),
                 "LISTEN_FDS=1 %s/psrun --root %s run --bundle %s c1 3<%s/config.json >%s 2>&1",
                 build, B.root, B.dir, B.dir, out);
        int r = system(cmd);
        cr_assert(read_text(out, text, sizeof(text)), "no output");
        cr_assert_eq(r, 0, "%s", text);
        cr_expect(contains(text, "1 1\n") && contains(text, "config.json"), "%s", text);

        /* Meant for another process: not taken. */
        snprintf(cmd, sizeof(cmd),
                 "LISTEN_FDS=1 LISTEN_PID=1 %s/psrun --root %s run --bundle %s c1 3<%s/config.json "
                 ">%s 2>&1",
                 build, B.root, B.dir, B.dir, out);
        r = system(cmd);
        cr_assert(read_text(out, text, sizeof(text)), "no output");
        cr_expect(!contains(text, "config.json"), "fd 3 passed on: %s", text);
        /* Named but not open (a stale count, as crun's listen_pid_env
         * test sets): only the fds the caller had are passed, and
         * LISTEN_FDS says how many; psrun's own fds never are. */
        snprintf(cmd, sizeof(cmd),
                 "LISTEN_FDS=2 %s/psrun --root %s run --bundle %s c1 3<%s/config.json 4<&- >%s "
                 "2>&1",
                 build, B.root, B.dir, B.dir, out);
        r = system(cmd);
        cr_assert(read_text(out, text, sizeof(text)), "no output");
        cr_expect_eq(r, 0, "%s", text);
        cr_expect(contains(text, "1 1\n") && contains(text, "config.json"), "%s", text);
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"echo $LISTEN_FDS $LISTEN_PID; "
                                                  "ls /proc/self/fd/\"]"});
        snprintf(cmd, sizeof(cmd),
                 "LISTEN_FDS=3 %s/psrun --root %s run --bundle %s c1 3<&- >%s 2>&1", build, B.root,
                 B.dir, out);
        r = system(cmd);
        cr_assert(read_text(out, text, sizeof(text)), "no output");
        cr_expect_eq(r, 0, "%s", text);
        cr_expect(contains(text, "0 1\n"), "%s", text);
        /* ls's own directory fd is 3: nothing else above 2. */
        cr_expect(!contains(text, "\n4\n"), "an fd of psrun's passed on: %s", text);
}

Test(oci_conformance, new_user_namespace_joins_another_containers_ipc)
{
        /* A namespace joined by path (ipc here; net alike, but sysfs cannot
         * be mounted for a network namespace of another user namespace)
         * belongs to the user namespace it was made in: the container's new
         * one has no rights there (EPERM in the child). psrun enters it
         * before clone3. */
        oci_up("c1", NULL);
        pid_t pid = oci_pid("c1");
        cr_assert_gt(pid, 0);
        char ns[600], theirs[64], link[64];
        snprintf(ns, sizeof(ns),
                 "[{\"type\":\"pid\"},{\"type\":\"mount\"},{\"type\":\"user\"},{\"type\":\"uts\"},{"
                 "\"type\":\"network\"},"
                 "{\"type\":\"ipc\",\"path\":\"/proc/%d/ns/ipc\"}]",
                 (int) pid);
        snprintf(link, sizeof(link), "/proc/%d/ns/ipc", (int) pid);
        ssize_t n = readlink(link, theirs, sizeof(theirs) - 1);
        cr_assert_gt(n, 0);
        theirs[n] = '\0';
        struct out o;
        int r = run_config(
                "c2",
                &(struct cfg){.args = "[\"readlink\",\"/proc/self/ns/ipc\"]", .namespaces = ns},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, theirs), "not c1's ipc namespace (%s): %s", theirs, o.out);
        /* psrun's own namespaces are as they were. */
        char mine[64], self[64];
        n = readlink("/proc/self/ns/ipc", self, sizeof(self) - 1);
        cr_assert_gt(n, 0);
        self[n] = '\0';
        snprintf(mine, sizeof(mine), "%s", self);
        cr_expect(strcmp(mine, theirs) != 0);
}
