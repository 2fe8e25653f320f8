/* SPDX-License-Identifier: MIT */
/*
 * Idmapped bind mounts (mounts[].uidMappings/gidMappings, "idmap",
 * "ridmap"), with runc's meaning: ids on disk in a mapping's containerID
 * range are seen at the same offset in its hostID range, and then through
 * the container's own user namespace, if it has one.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci_test.h"

/* The bundle's filesystem must take idmapped mounts (tmpfs does from Linux
 * 6.3 on): probed with the kernel itself by setup(); each test then skips
 * with the reason if it does not. */
static void setup(void);
static bool idmap_unsupported;

static void require_idmap(void)
{
        if (idmap_unsupported)
                cr_skip_test("idmapped mounts: the filesystem of %s takes none on this kernel",
                             B.dir);
}

TestSuite(oci_idmap, .init = setup, .fini = bundle_teardown, .timeout = 60);

#define USERNS                                                                                     \
        "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},"        \
        "{\"type\":\"mount\"},{\"type\":\"user\"}]"
#define MAPS_200000                                                                                \
        ",\"uidMappings\":[{\"containerID\":0,\"hostID\":200000,\"size\":65536}],"                 \
        "\"gidMappings\":[{\"containerID\":0,\"hostID\":200000,\"size\":65536}]"
#define MOUNT_MAPS(host)                                                                           \
        ",\"uidMappings\":[{\"containerID\":0,\"hostID\":" host ",\"size\":65536}],"               \
        "\"gidMappings\":[{\"containerID\":0,\"hostID\":" host ",\"size\":65536}]"

/* B.dir/src with file (0:0) and file-1 (1:2); its path in *src. */
static void make_source(char *src, size_t len)
{
        snprintf(src, len, "%s/src", B.dir);
        cr_assert(mkdir(src, 0755) == 0 || errno == EEXIST, "%s", strerror(errno));
        char path[600];
        const struct {
                const char *name;
                uid_t uid;
                gid_t gid;
        } files[] = {{"file", 0, 0}, {"file-1", 1, 2}};
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/%s", src, files[i].name);
                FILE *f = fopen(path, "we");
                cr_assert_not_null(f, "%s: %s", path, strerror(errno));
                fclose(f);
                cr_assert_eq(chown(path, files[i].uid, files[i].gid), 0);
        }
}

/* The container's /foo: a bind of B.dir/src with the given options and
 * extra fields (",\"uidMappings\":..."). */
static int run_bind(const char *id, const char *options, const char *extra, const char *script,
                    const char *namespaces, const char *linux_extra, struct out *o)
{
        static char mounts[32768];
        char src[300], args[600];
        make_source(src, sizeof(src));
        snprintf(mounts, sizeof(mounts),
                 ",{\"destination\":\"/foo\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":%s%s}",
                 src, options, extra);
        snprintf(args, sizeof(args), "[\"sh\",\"-c\",\"%s\"]", script);
        bundle_config(id, &(struct cfg){.args = args,
                                        .mounts_extra = mounts,
                                        .namespaces = namespaces,
                                        .linux_extra = linux_extra});
        return psrun(o, NULL, "run", "--bundle", B.dir, id, NULL);
}

static void chown_rootfs(uid_t uid)
{
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "chown -R %u:%u %s/rootfs", (unsigned) uid, (unsigned) uid,
                 B.dir);
        cr_assert_eq(system(cmd), 0);
}

static void setup(void)
{
        bundle_setup();
        int tree = open_tree(AT_FDCWD, B.dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        cr_assert_geq(tree, 0, "open_tree %s: %s", B.dir, strerror(errno));
        int userns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        /* Our own user namespace is refused as EINVAL too: a new one, from
         * a child that waits until we have opened it. */
        int hold[2];
        cr_assert_eq(pipe2(hold, O_CLOEXEC), 0);
        pid_t pid = (pid_t) syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
                char c;
                close(hold[1]);
                (void) !read(hold[0], &c, 1);
                _exit(0);
        }
        close(hold[0]);
        char path[64], map[] = "0 100000 65536\n";
        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        cr_assert(fd >= 0 && write(fd, map, strlen(map)) == (ssize_t) strlen(map));
        close(fd);
        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) pid);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        cr_assert(fd >= 0 && write(fd, map, strlen(map)) == (ssize_t) strlen(map));
        close(fd);
        close(userns);
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) pid);
        userns = open(path, O_RDONLY | O_CLOEXEC);
        close(hold[1]);
        waitpid(pid, NULL, 0);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t) userns};
        int r = mount_setattr(tree, "", AT_EMPTY_PATH, &a, sizeof(a));
        int e = errno;
        close(userns);
        close(tree);
        idmap_unsupported = r < 0 && e == EINVAL;
        cr_assert(r == 0 || idmap_unsupported, "mount_setattr MOUNT_ATTR_IDMAP: %s", strerror(e));
}

#define STAT_BOTH "stat -c =%u=%g= /foo/file /foo/file-1"

Test(oci_idmap, mappings_of_its_own_without_a_user_namespace)
{
        require_idmap();
        /* No user namespace: the ids are the mapping's host ids, as runc
         * shows them. */
        struct out o;
        int r = run_bind("c1", "[\"bind\"]", MOUNT_MAPS("100000"), STAT_BOTH, NULL, NULL, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "=100000=100000=\n=100001=100002="), "%s", o.out);
}

Test(oci_idmap, mappings_that_match_the_user_namespace_show_ids_as_on_disk)
{
        require_idmap();
        chown_rootfs(200000);
        struct out o;
        int r = run_bind("c1", "[\"bind\",\"idmap\"]", MOUNT_MAPS("200000"),
                         STAT_BOTH " && touch /foo/made && stat -c =%u=%g= /foo/made", USERNS,
                         MAPS_200000, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "=0=0=\n=1=2=\n=0=0="), "%s", o.out);
        /* Written through the mount: on disk as the container's root, 0. */
        char path[600];
        struct stat st;
        snprintf(path, sizeof(path), "%s/src/made", B.dir);
        cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
        cr_expect(st.st_uid == 0 && st.st_gid == 0, "on disk as %u:%u", (unsigned) st.st_uid,
                  (unsigned) st.st_gid);
}

Test(oci_idmap, idmap_without_mappings_takes_the_containers)
{
        require_idmap();
        chown_rootfs(200000);
        struct out o;
        int r = run_bind("c1", "[\"bind\",\"idmap\"]", "", STAT_BOTH, USERNS, MAPS_200000, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "=0=0=\n=1=2="), "%s", o.out);
        /* The same bind without idmap: the host's ids are unmapped there. */
        r = run_bind("c2", "[\"bind\"]", "", STAT_BOTH, USERNS, MAPS_200000, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "=65534=65534=\n=65534=65534="), "%s", o.out);
}

Test(oci_idmap, idmap_with_psrun_s_default_range)
{
        require_idmap();
        /* A user namespace with no mappings gets psrun's range; idmap
         * takes that one. */
        chown_rootfs(0x70000000);
        struct out o;
        int r = run_bind("c1", "[\"bind\",\"idmap\"]", "", STAT_BOTH, USERNS, NULL, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "=0=0=\n=1=2="), "%s", o.out);
}

Test(oci_idmap, ridmap_maps_submounts_idmap_only_the_top)
{
        require_idmap();
        char src[300], sub[400];
        make_source(src, sizeof(src));
        snprintf(sub, sizeof(sub), "%s/sub", src);
        cr_assert(mkdir(sub, 0755) == 0 || errno == EEXIST);
        cr_assert_eq(mount("idmap-sub", sub, "tmpfs", 0, "size=64k"), 0, "%s", strerror(errno));
        char f[500];
        snprintf(f, sizeof(f), "%s/f", sub);
        FILE *fp = fopen(f, "we");
        if (fp)
                fclose(fp);
        struct out o1, o2;
        int r1 = run_bind("c1", "[\"rbind\",\"idmap\"]", MOUNT_MAPS("100000"),
                          "stat -c =%u=%g= /foo/file /foo/sub/f", NULL, NULL, &o1);
        int r2 = run_bind("c2", "[\"rbind\",\"ridmap\"]", MOUNT_MAPS("100000"),
                          "stat -c =%u=%g= /foo/file /foo/sub/f", NULL, NULL, &o2);
        umount2(sub, MNT_DETACH);
        cr_assert_not_null(fp, "%s", f);
        cr_assert_eq(r1, 0, "%s", o1.err);
        cr_assert_eq(r2, 0, "%s", o2.err);
        cr_expect(contains(o1.out, "=100000=100000=\n=0=0="), "idmap: %s", o1.out);
        cr_expect(contains(o2.out, "=100000=100000=\n=100000=100000="), "ridmap: %s", o2.out);
}

Test(oci_idmap, bad_idmaps_are_refused_naming_the_field)
{
        char lines[341 * 64 + 64] = ",\"uidMappings\":[";
        for (int i = 0; i < 341; i++)
                snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines),
                         "%s{\"containerID\":%d,\"hostID\":%d,\"size\":1}", i ? "," : "", i,
                         100000 + i);
        strcat(lines, "],\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1}]");
        const struct {
                const char *options, *extra, *namespaces, *want;
        } cases[] = {
                {"[\"bind\"]",
                 ",\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1}]", NULL,
                 ".gidMappings: an idmapped mount needs both uidMappings and gidMappings"},
                {"[\"bind\",\"idmap\"]", "", NULL,
                 "without uidMappings and gidMappings needs a user namespace to take them "
                 "from"},
                {"[\"bind\"]",
                 ",\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":100},"
                 "{\"containerID\":50,\"hostID\":300000,\"size\":100}],"
                 "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1}]",
                 NULL, "idmap: uidMappings: Invalid argument"},
                {"[\"bind\"]", lines, NULL, ".uidMappings: 341 mappings, at most 340"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct out o;
                char id[16];
                snprintf(id, sizeof(id), "bad%zu", i);
                int r = run_bind(id, cases[i].options, cases[i].extra, "true", cases[i].namespaces,
                                 NULL, &o);
                cr_expect_neq(r, 0, "case %zu ran", i);
                cr_expect(contains(o.err, cases[i].want), "case %zu: %s", i, o.err);
                cr_expect_str_eq(oci_status(id), "", "case %zu left a container", i);
        }
        /* Not a bind. */
        struct out o;
        bundle_config("bad-tmpfs",
                      &(struct cfg){.args = "[\"true\"]",
                                    .mounts_extra =
                                            ",{\"destination\":\"/t\",\"type\":\"tmpfs\","
                                            "\"source\":\"tmpfs\",\"options\":[\"idmap\"]}"});
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "bad-tmpfs", NULL);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, ".options: idmapped mounts are bind mounts only"), "%s", o.err);
}
