/* SPDX-License-Identifier: MIT */
/* config.json fields, each seen from inside the container. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci_test.h"

TestSuite(oci_config, .init = bundle_setup, .fini = bundle_teardown, .timeout = 60);

/* Runs the config to completion with `run` and returns its output. */
static int run_config(const char *id, const struct cfg *c, struct out *o)
{
        bundle_config(id, c);
        return psrun(o, NULL, "run", "--bundle", B.dir, id, NULL);
}

Test(oci_config, process_user_env_cwd_umask_hostname)
{
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"id; pwd; echo $HOME; umask; "
                                                 "hostname\"]",
                                         .user = "{\"uid\":1000,\"gid\":1000,"
                                                 "\"additionalGids\":[5,7],\"umask\":63}",
                                         .cwd = "/tmp"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "uid=1000"), "%s", o.out);
        cr_expect(contains(o.out, "gid=1000"), "%s", o.out);
        cr_expect(contains(o.out, "groups=5,7") || contains(o.out, "groups=5("), "%s", o.out);
        cr_expect(contains(o.out, "/tmp\n/root\n0077\noci-test"), "%s", o.out);
}

Test(oci_config, masked_and_readonly_paths)
{
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"sh\",\"-c\",\"wc -c < /proc/kcore; "
                                      "echo 1 > /proc/sys/kernel/ns_last_pid && echo wrote; "
                                      "ls /sys/firmware | wc -l\"]"},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "0\n"), "/proc/kcore not masked: %s", o.out);
        cr_expect(!contains(o.out, "wrote"), "/proc/sys writable: %s", o.out);
        cr_expect(contains(o.err, "Read-only file system"), "%s", o.err);
}

/* A read-only path that is a file (crun's suite found it: a directory-only
 * bind broke it), and one that is a directory, in a writable root. */
Test(oci_config, readonly_paths_of_files_and_directories)
{
        char path[400];
        snprintf(path, sizeof(path), "%s/rootfs/etc/ro-file", B.dir);
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs("before\n", f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/rootfs/root/ro-dir", B.dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){
                        .args = "[\"sh\",\"-c\",\"echo x > /etc/ro-file || echo refused-file; "
                                "touch /root/ro-dir/x || echo refused-dir; "
                                "echo y > /etc/passwd.new && echo root-writable\"]",
                        .no_masks = true,
                        .linux_extra = ",\"readonlyPaths\":[\"/etc/ro-file\",\"/root/ro-dir\"]"},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "refused-file\nrefused-dir\nroot-writable"), "%s", o.out);
        cr_expect(contains(o.err, "Read-only file system"), "%s", o.err);
}

Test(oci_config, readonly_root)
{
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"touch /x || echo refused; "
                                                 "touch /dev/shm/y && echo shm-ok\"]",
                                         .readonly = true},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "refused"), "%s", o.out);
        cr_expect(contains(o.out, "shm-ok"), "%s", o.out);
}

Test(oci_config, user_namespace_mappings)
{
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){
                        .args = "[\"sh\",\"-c\",\"id -u; cat /proc/self/uid_map "
                                "/proc/self/gid_map\"]",
                        .namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":"
                                      "\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"},"
                                      "{\"type\":\"user\"}]",
                        .linux_extra = ",\"uidMappings\":[{\"containerID\":0,\"hostID\":200000,"
                                       "\"size\":65536}],\"gidMappings\":[{\"containerID\":0,"
                                       "\"hostID\":200000,\"size\":65536}]",
                },
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "0\n"), "%s", o.out);
        cr_expect(contains(o.out, "200000"), "mapping not in place: %s", o.out);
}

Test(oci_config, sysctl_namespaced_and_refused)
{
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"cat\",\"/proc/sys/net/ipv4/ip_forward\","
                                                 "\"/proc/sys/kernel/shmmni\"]",
                                         .linux_extra = ",\"sysctl\":{\"net.ipv4.ip_forward\":"
                                                        "\"1\",\"kernel.shmmni\":\"1234\"}"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "1\n1234"), "%s", o.out);
        r = run_config("c2", &(struct cfg){.linux_extra = ",\"sysctl\":{\"kernel.panic\":\"1\"}"},
                       &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "kernel.panic") && contains(o.err, "not namespaced"), "%s",
                  o.err);
}

Test(oci_config, rlimits_and_a_hard_limit_above_ours)
{
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"ulimit -n; ulimit -Hn\"]",
                                         .process_extra = ",\"rlimits\":[{\"type\":"
                                                          "\"RLIMIT_NOFILE\",\"soft\":123,"
                                                          "\"hard\":456}]"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "123\n456"), "%s", o.out);

        struct rlimit cur;
        getrlimit(RLIMIT_NOFILE, &cur);
        char extra[256];
        snprintf(extra, sizeof(extra),
                 ",\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1024,\"hard\":%llu}]",
                 (unsigned long long) cur.rlim_max * 2);
        r = run_config("c2", &(struct cfg){.args = "[\"true\"]", .process_extra = extra}, &o);
        /* With CAP_SYS_RESOURCE (not on the CI hosts) raising is allowed. */
        if (r == 0)
                cr_skip_test("this host's root may raise hard limits (CAP_SYS_RESOURCE)");
        cr_expect(contains(o.err, "RLIMIT_NOFILE") && contains(o.err, "CAP_SYS_RESOURCE"), "%s",
                  o.err);
}

Test(oci_config, capabilities_the_host_lacks_are_an_error)
{
        struct out o;
        int r = run_config(
                "c1", &(struct cfg){.args = "[\"true\"]", .caps = "[\"CAP_SYS_RESOURCE\"]"}, &o);
        if (r == 0)
                cr_skip_test("this host's bounding set has CAP_SYS_RESOURCE");
        cr_expect(contains(o.err, "CAP_SYS_RESOURCE") && contains(o.err, "bounding set"), "%s",
                  o.err);
        r = run_config("c2",
                       &(struct cfg){.args = "[\"grep\",\"Cap\",\"/proc/self/status\"]",
                                     .caps = "[\"CAP_KILL\"]"},
                       &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "CapEff:\t0000000000000020"), "%s", o.out);
        cr_expect(contains(o.out, "CapBnd:\t0000000000000020"), "%s", o.out);
}

Test(oci_config, oom_score_adj)
{
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"cat\",\"/proc/self/oom_score_adj\"]",
                                         .process_extra = ",\"oomScoreAdj\":500"},
                           &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "500"), "%s", o.out);
}

Test(oci_config, seccomp_from_config)
{
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){
                        .args = "[\"sh\",\"-c\",\"mkdir /tmp/d && echo made; echo still-here\"]",
                        .linux_extra = ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                                       "\"architectures\":[\"SCMP_ARCH_X86_64\"],"
                                       "\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
                                       "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1}]}"},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(!contains(o.out, "made"), "%s", o.out);
        cr_expect(contains(o.out, "still-here"), "%s", o.out);
        cr_expect(contains(o.err, "Operation not permitted"), "%s", o.err);
}

Test(oci_config, cgroup_resources)
{
        struct out o;
        bundle_config("c1", &(struct cfg){.linux_extra = ",\"resources\":{\"memory\":{\"limit\":"
                                                         "67108864},\"pids\":{\"limit\":10},"
                                                         "\"cpu\":{\"shares\":512}}"});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        char dir[1024], path[1200], text[64];
        if (oci_cgroup_dir("c1", "memory", dir, sizeof(dir))) {
                snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", dir);
                cr_assert(read_text(path, text, sizeof(text)), "%s", path);
                cr_expect_str_eq(text, "67108864");
                cr_assert(oci_cgroup_dir("c1", "pids", dir, sizeof(dir)));
                snprintf(path, sizeof(path), "%s/pids.max", dir);
                cr_assert(read_text(path, text, sizeof(text)));
                cr_expect_str_eq(text, "10");
        } else {
                cr_assert(oci_cgroup_dir("c1", "unified", dir, sizeof(dir)));
                snprintf(path, sizeof(path), "%s/memory.max", dir);
                cr_assert(read_text(path, text, sizeof(text)), "%s", path);
                cr_expect_str_eq(text, "67108864");
                snprintf(path, sizeof(path), "%s/pids.max", dir);
                cr_assert(read_text(path, text, sizeof(text)));
                cr_expect_str_eq(text, "10");
        }
        /* The pids limit holds inside. */
        cr_assert_eq(psrun(&o, NULL, "delete", "c1", NULL), 0, "%s", o.err);
        int r = run_config("c2",
                           &(struct cfg){.args = "[\"sh\",\"-c\",\"for i in $(seq 20); do sleep 5 "
                                                 "& done; echo forked\"]",
                                         .linux_extra = ",\"resources\":{\"pids\":{\"limit\":5}}"},
                           &o);
        cr_expect(contains(o.err, "fork") || contains(o.err, "Resource temporarily unavailable") ||
                          contains(o.err, "can't fork"),
                  "no fork was refused (exit %d): %s / %s", r, o.out, o.err);
}

Test(oci_config, zero_resources_mean_not_given)
{
        /* What Docker writes for limits it leaves alone. */
        struct out o;
        bundle_config("c1", &(struct cfg){.linux_extra = ",\"resources\":{\"cpu\":{\"shares\":0,"
                                                         "\"quota\":0,\"period\":0},"
                                                         "\"blockIO\":{\"weight\":0},"
                                                         "\"pids\":{\"limit\":0},"
                                                         "\"memory\":{\"limit\":0}}"});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        char dir[1024], path[1200], text[64];
        if (oci_cgroup_dir("c1", "cpu", dir, sizeof(dir))) {
                snprintf(path, sizeof(path), "%s/cpu.shares", dir);
                cr_assert(read_text(path, text, sizeof(text)));
                cr_expect_str_eq(text, "1024", "shares 0 was written");
                cr_assert(oci_cgroup_dir("c1", "pids", dir, sizeof(dir)));
        } else {
                cr_assert(oci_cgroup_dir("c1", "unified", dir, sizeof(dir)));
                snprintf(path, sizeof(path), "%s/cpu.max", dir);
                cr_assert(read_text(path, text, sizeof(text)));
                cr_expect_str_eq(text, "max 100000", "quota/period 0 were written");
        }
        snprintf(path, sizeof(path), "%s/pids.max", dir);
        cr_assert(read_text(path, text, sizeof(text)));
        cr_expect_str_eq(text, "max");
}

Test(oci_config, join_namespaces_by_path)
{
        /* A process of ours in new uts and net namespaces, with a hostname. */
        int ready[2];
        cr_assert_eq(pipe(ready), 0);
        pid_t holder = fork();
        cr_assert_geq(holder, 0);
        if (holder == 0) {
                if (unshare(CLONE_NEWUTS | CLONE_NEWNET) < 0 || sethostname("joined-uts", 10) < 0)
                        _exit(1);
                (void) !write(ready[1], "x", 1);
                pause();
                _exit(0);
        }
        char c;
        cr_assert_eq(read(ready[0], &c, 1), 1);
        char ns[512];
        snprintf(ns, sizeof(ns),
                 "[{\"type\":\"pid\"},{\"type\":\"mount\"},{\"type\":\"ipc\"},"
                 "{\"type\":\"uts\",\"path\":\"/proc/%d/ns/uts\"},"
                 "{\"type\":\"network\",\"path\":\"/proc/%d/ns/net\"}]",
                 (int) holder, (int) holder);
        char netns[64], inside[64] = "";
        snprintf(netns, sizeof(netns), "/proc/%d/ns/net", (int) holder);
        cr_assert_gt(readlink(netns, inside, sizeof(inside) - 1), 0);
        struct out o;
        /* hostname must not be set when the uts namespace is joined. */
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"uname -n; readlink "
                                                  "/proc/self/ns/net\"]",
                                          .namespaces = ns});
        char cfgpath[512];
        snprintf(cfgpath, sizeof(cfgpath), "sed -i 's/\"hostname\":\"oci-test\",//' %s/config.json",
                 B.dir);
        cr_assert_eq(system(cfgpath), 0);
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        kill(holder, SIGKILL);
        waitpid(holder, NULL, 0);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "joined-uts"), "%s", o.out);
        cr_expect(contains(o.out, inside), "not in %s: %s", inside, o.out);
}

Test(oci_config, apparmor_profile_applied_or_refused)
{
        struct out o;
        bool apparmor = access("/sys/kernel/security/apparmor/profiles", R_OK) == 0;
        if (apparmor) {
                /* psrun run loads psrun-default; OCI mode only names it. */
                struct test_run tr;
                test_run_psrun(&tr, (const char *const[]){"run", "--", "true", NULL});
                cr_assert_eq(tr.status, 0, "%s", tr.err);
                test_run_free(&tr);
        }
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"cat\",\"/proc/self/attr/current\"]",
                                         .process_extra = ",\"apparmorProfile\":"
                                                          "\"psrun-default\""},
                           &o);
        if (apparmor) {
                cr_assert_eq(r, 0, "%s", o.err);
                cr_expect(contains(o.out, "psrun-default"), "%s", o.out);
        } else {
                /* Asked for by name, the layer fails closed. */
                cr_expect_neq(r, 0);
                cr_expect(contains(o.err, "process.apparmorProfile"), "%s", o.err);
        }
}

Test(oci_config, domainname_personality_time_offsets)
{
        struct out o;
        char cfgpath[600];
        bundle_config("c1",
                      &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /proc/sys/kernel/domainname; "
                                            "uname -m; cut -d. -f1 /proc/uptime\"]",
                                    .namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},"
                                                  "{\"type\":\"ipc\"},{\"type\":\"uts\"},"
                                                  "{\"type\":\"mount\"},{\"type\":\"time\"}]",
                                    .linux_extra = ",\"personality\":{\"domain\":\"LINUX32\"},"
                                                   "\"timeOffsets\":{\"boottime\":{\"secs\":"
                                                   "86400000,\"nanosecs\":0}}"});
        /* domainname is a top-level field: add it next to the hostname. */
        snprintf(cfgpath, sizeof(cfgpath),
                 "sed -i 's/\"hostname\":\"oci-test\",/\"hostname\":\"oci-test\","
                 "\"domainname\":\"psrun.test\",/' %s/config.json",
                 B.dir);
        cr_assert_eq(system(cfgpath), 0);
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "psrun.test\n"), "%s", o.out);
        cr_expect(contains(o.out, "i686") || contains(o.out, "i386"), "personality: %s", o.out);
        /* /proc/uptime is the boot time clock: 1000 days ahead. */
        char *last = strrchr(o.out, '\n');
        while (last && last > o.out && last[-1] != '\n')
                last--;
        cr_expect(last && atol(last) >= 86400000L, "uptime not offset: %s", o.out);
}

Test(oci_config, hostile_image_symlinks_stay_inside)
{
        /* An image whose /etc and /data are symbolic links to a path that
         * exists on the host (and, in the image, below its own root), with a
         * bind mount, a tmpfs and a missing working directory below them:
         * every target resolves inside the container, so the host
         * directory stays empty. */
        char host_dir[64], cmd[1200], src[600];
        test_tmp_template(host_dir, sizeof(host_dir), "psrun-oci-escape");
        cr_assert_not_null(mkdtemp(host_dir));
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd %s/rootfs; rm -rf etc; ln -s ../../../../../../..%s etc; "
                 "ln -s %s data; mkdir -p ./%s; echo secret > %s/../psrun-escape-src-%d",
                 B.dir, host_dir, host_dir, host_dir, B.dir, (int) getpid());
        cr_assert_eq(system(cmd), 0);
        snprintf(src, sizeof(src), "%s/../psrun-escape-src-%d", B.dir, (int) getpid());
        char mounts[1400];
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\",\"ro\"]},"
                 "{\"destination\":\"/data/sub/dir\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}",
                 src);
        struct out o;
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /etc/hosts; ls /data/sub; "
                                                  "pwd\"]",
                                          .cwd = "/data/work",
                                          .mounts_extra = mounts});
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        snprintf(cmd, sizeof(cmd), "[ -z \"$(ls -A %s)\" ]", host_dir);
        int empty = system(cmd);
        unlink(src);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", host_dir);
        cr_expect_eq(system(cmd), 0);
        cr_expect_eq(empty, 0, "something was created in the host's %s", host_dir);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "secret\ndir\n") && contains(o.out, "/work\n"), "%s", o.out);
}

Test(oci_config, rootfs_propagation)
{
        struct out o;
        int r = run_config(
                "c1",
                &(struct cfg){.args = "[\"awk\",\"$5 == \\\"/\\\"\",\"/proc/self/mountinfo\"]",
                              .linux_extra = ",\"rootfsPropagation\":\"shared\""},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "shared:"), "the root is not shared: %s", o.out);
        r = run_config(
                "c2",
                &(struct cfg){.args = "[\"awk\",\"$5 == \\\"/\\\"\",\"/proc/self/mountinfo\"]"},
                &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(!contains(o.out, "shared:") && !contains(o.out, "master:"),
                  "the root propagates by default: %s", o.out);
}

Test(oci_config, mounts_inside_do_not_reach_a_shared_host_mount)
{
        /* A host directory that is a shared mount, bound into the container,
         * which mounts a tmpfs below it: the host must not see that tmpfs. */
        char dir[600], cmd[2000], mounts[800];
        snprintf(dir, sizeof(dir), "%s/shared", B.dir);
        cr_assert(mkdir(dir, 0755) == 0 || errno == EEXIST, "%s", strerror(errno));
        cr_assert_eq(mount(dir, dir, NULL, MS_BIND, NULL), 0, "bind: %s", strerror(errno));
        cr_assert_eq(mount(NULL, dir, NULL, MS_SHARED, NULL), 0, "shared: %s", strerror(errno));
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/shared\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\"]}",
                 dir);
        struct out o;
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"mount -t tmpfs inside "
                                                  "/shared && touch /shared/made-inside && "
                                                  "echo mounted\"]",
                                          .caps = "[\"CAP_SYS_ADMIN\"]",
                                          .mounts_extra = mounts});
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        int host_sees = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[1024];
        while (f && fgets(line, sizeof(line), f))
                if (strstr(line, " - tmpfs inside "))
                        host_sees = 1;
        if (f)
                fclose(f);
        snprintf(cmd, sizeof(cmd), "%s/made-inside", dir);
        bool file_on_host = access(cmd, F_OK) == 0;
        while (umount2(dir, MNT_DETACH) == 0)
                ; /* the tmpfs, should it have come through, then the bind */
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "mounted"), "%s", o.out);
        cr_expect(!host_sees, "the container's tmpfs propagated to the host");
        cr_expect(!file_on_host, "the file went to the host's directory");
}

/* Whether this process's mount table has a mount at `path`. */
static bool host_has_mount(const char *path)
{
        char line[2048], want[700];
        snprintf(want, sizeof(want), " %s ", path);
        bool found = false;
        FILE *f = fopen("/proc/self/mountinfo", "re");
        while (f && fgets(line, sizeof(line), f))
                if (strstr(line, want))
                        found = true;
        if (f)
                fclose(f);
        return found;
}

/*
 * A bind of a shared host directory with a propagation option, as
 * containerd writes Kubernetes' volumes (Bidirectional: rshared,
 * HostToContainer: rslave, None: rprivate): a tmpfs the host mounts below
 * it after the start must show inside for rshared and rslave only, and a
 * tmpfs the container mounts there must reach the host for rshared only.
 * The test's own mount namespace plays the host, so nothing it mounts
 * outlives it, failure or not.
 */
static void propagation_case(const char *id, const char *option, bool want_in, bool want_out)
{
        char dir[600], from_host[700], from_inside[700], mounts[900];
        snprintf(dir, sizeof(dir), "%s/prop-%s", B.dir, id);
        snprintf(from_host, sizeof(from_host), "%s/from-host", dir);
        snprintf(from_inside, sizeof(from_inside), "%s/from-inside", dir);
        cr_assert_eq(mkdir(dir, 0755), 0, "%s", strerror(errno));
        cr_assert_eq(mkdir(from_host, 0755), 0, "%s", strerror(errno));
        cr_assert_eq(mkdir(from_inside, 0755), 0, "%s", strerror(errno));
        cr_assert_eq(mount(dir, dir, NULL, MS_BIND, NULL), 0, "bind: %s", strerror(errno));
        cr_assert_eq(mount(NULL, dir, NULL, MS_SHARED, NULL), 0, "shared: %s", strerror(errno));
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/vol\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\",\"%s\",\"rw\"]}",
                 dir, option);
        oci_up(id, &(struct cfg){.caps = "[\"CAP_SYS_ADMIN\"]", .mounts_extra = mounts});
        cr_assert_eq(mount("host-made", from_host, "tmpfs", 0, NULL), 0, "tmpfs: %s",
                     strerror(errno));
        struct out o;
        cr_assert_eq(psrun(&o, NULL, "exec", id, "sh", "-c",
                           "awk '$5 == \"/vol/from-host\"' /proc/self/mountinfo; "
                           "mount -t tmpfs inside /vol/from-inside && echo mounted",
                           NULL),
                     0, "%s: exec: %s", option, o.err);
        cr_expect(contains(o.out, "mounted"), "%s: the container's mount failed: %s", option,
                  o.out);
        cr_expect_eq(contains(o.out, "/vol/from-host"), want_in,
                     "%s: the host's mount below the bind is %s inside: %s", option,
                     want_in ? "not" : "also", o.out);
        cr_expect_eq(host_has_mount(from_inside), want_out,
                     "%s: the container's mount below the bind %s the host", option,
                     want_out ? "did not reach" : "reached");
        cr_assert_eq(psrun(&o, NULL, "delete", "--force", id, NULL), 0, "%s", o.err);
}

Test(oci_config, bind_propagation_options_reach_the_host_as_asked)
{
        cr_assert_eq(unshare(CLONE_NEWNS), 0, "%s", strerror(errno));
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL), 0, "%s", strerror(errno));
        propagation_case("c1", "rshared", true, true);
        propagation_case("c2", "rslave", true, false);
        propagation_case("c3", "slave", true, false);
        propagation_case("c4", "rprivate", false, false);
        propagation_case("c5", "shared", true, true);
}

Test(oci_config, layers_psrun_cannot_apply_are_refused)
{
        struct out o;
        int r = run_config("c1",
                           &(struct cfg){.args = "[\"true\"]",
                                         .process_extra = ",\"selinuxLabel\":"
                                                          "\"system_u:system_r:container_t:s0\""},
                           &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "process.selinuxLabel"), "%s", o.err);
        r = run_config("c2",
                       &(struct cfg){.args = "[\"true\"]",
                                     .linux_extra = ",\"mountLabel\":\"system_u:object_r:c_t:s0\""},
                       &o);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "linux.mountLabel"), "%s", o.err);
        bundle_config("c3",
                      &(struct cfg){.args = "[\"true\"]",
                                    .linux_extra = ",\"resources\":{\"pids\":{\"limit\":5}}"});
        cr_expect_neq(psrun(&o, NULL, "--cgroup-manager", "disabled", "run", "--bundle", B.dir,
                            "c3", NULL),
                      0);
        cr_expect(contains(o.err, "linux.resources") && contains(o.err, "disabled"), "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "list", "-q", NULL), 0);
        cr_expect_str_eq(o.out, "", "left behind: %s", o.out);
}
