/* SPDX-License-Identifier: MIT */
/*
 * Unpacked layers as overlayfs lower directories (root): two layers with a
 * whiteout and an opaque directory mounted as overlayfs would be for a
 * sandbox's root, by host root and with `userxattr` in a user namespace;
 * and the cross-check with Debian's umoci: the same multi-layer image
 * unpacked by `umoci unpack` and by unpack_layer (stacked in an overlay)
 * gives the same tree (names, types, modes, owners, sizes, contents, link
 * targets, xattrs, mtimes of non-directories).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "image/image_test.h"
#include "lib/testlib.h"

TestSuite(unpack_overlay, .timeout = 120);

static char dir[64];

static void setup(void)
{
        test_require_root();
        test_tmp_template(dir, sizeof(dir), "psrun-overlay");
        cr_assert(mkdtemp(dir));
}

static int rm_one(const char *path, const struct stat *s, int flag, struct FTW *f)
{
        return remove(path);
}

static void teardown(void)
{
        char m[128];
        snprintf(m, sizeof(m), "%s/merged", dir);
        umount2(m, MNT_DETACH);
        nftw(dir, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

static void unpack_into(const char *name, struct tarbuf *b)
{
        char path[128];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        cr_assert_eq(mkdir(path, 0700), 0);
        int dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        tb_end(b);
        int fd = tb_to_fd(b, true);
        struct unpack_limits lim = {0};
        psrun_error err = {0};
        cr_assert_eq(unpack_layer(fd, "application/vnd.oci.image.layer.v1.tar+gzip", dfd, &lim,
                                  NULL, &err),
                     0, "%s", err.msg);
        close(fd);
        close(dfd);
        tb_free(b);
}

static void two_layers(void)
{
        struct tarbuf b = {0};
        tb_dir(&b, "etc");
        tb_file(&b, "etc/a", "a1");
        tb_file(&b, "etc/b", "b1");
        tb_dir(&b, "opq");
        tb_file(&b, "opq/old", "old");
        tb_dir(&b, "opq/olddir");
        tb_file(&b, "gone", "gone");
        tb_dir(&b, "gonedir");
        tb_file(&b, "gonedir/x", "x");
        unpack_into("l1", &b);
        tb_file(&b, ".wh.gone", "");
        tb_file(&b, ".wh.gonedir", "");
        tb_file(&b, ".wh.never-was", "");
        tb_dir(&b, "opq");
        tb_file(&b, "opq/.wh..wh..opq", "");
        tb_file(&b, "opq/new", "new");
        tb_file(&b, "etc/b", "b2");
        tb_file(&b, "etc/c", "c2");
        unpack_into("l2", &b);
        char m[128];
        snprintf(m, sizeof(m), "%s/merged", dir);
        cr_assert_eq(mkdir(m, 0755), 0);
}

/* `ls -A` of each directory and a file's content, in one line, run by sh
 * in the mount. */
/* Each directory's names and two files' contents, in one line, run by sh
 * in the mount. */
#define LISTING_CMD                                                                                \
        "cd %s/merged && echo $(ls -A) / $(ls -A etc) / $(ls -A opq) / $(cat etc/b) / "            \
        "$(cat opq/new)"
#define LISTING_WANT "etc opq / a b c / new / b2 / new\n"

static void expect_listing(const char *shell_prefix)
{
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s '" LISTING_CMD "'", shell_prefix, dir);
        FILE *p = popen(cmd, "r");
        cr_assert(p);
        char out[512] = {0};
        size_t n = fread(out, 1, sizeof(out) - 1, p);
        int status = pclose(p);
        out[n] = '\0';
        cr_assert_eq(status, 0, "%s: %s", cmd, out);
        cr_assert_str_eq(out, LISTING_WANT);
}

Test(unpack_overlay, two_layers_merge_with_whiteouts_and_an_opaque_dir, .init = setup,
     .fini = teardown)
{
        two_layers();
        cr_assert_eq(unshare(CLONE_NEWNS), 0);
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
        char opts[512], m[128];
        snprintf(opts, sizeof(opts), "lowerdir=%s/l2:%s/l1", dir, dir);
        snprintf(m, sizeof(m), "%s/merged", dir);
        /* Read-only: lower directories only, no upper. */
        cr_assert_eq(mount("overlay", m, "overlay", MS_RDONLY, opts), 0, "%s", strerror(errno));
        expect_listing("sh -c");
}

Test(unpack_overlay, the_same_layers_in_a_user_namespace_with_userxattr, .init = setup,
     .fini = teardown)
{
        if (system("unshare --version >/dev/null 2>&1") != 0)
                cr_skip_test("unshare (util-linux) is missing");
        two_layers();
        char prefix[512];
        snprintf(prefix, sizeof(prefix),
                 "unshare --user --map-root-user --mount sh -c 'mount -t overlay overlay -o "
                 "lowerdir=%s/l2:%s/l1,userxattr %s/merged && exec sh -c \"$0\"'",
                 dir, dir, dir);
        expect_listing(prefix);
}

/* One line per tree entry, for comparing two trees. */
static FILE *walk_out;
static size_t walk_root_len;

static unsigned long long content_hash(const char *path)
{
        unsigned long long h = 1469598103934665603ULL;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                for (ssize_t i = 0; i < n; i++)
                        h = (h ^ (unsigned char) buf[i]) * 1099511628211ULL;
        close(fd);
        return h;
}

static int walk_one(const char *path, const struct stat *s, int flag, struct FTW *f)
{
        const char *rel = path + walk_root_len;
        fprintf(walk_out, "%s|%o|%u:%u", *rel ? rel : "/", (unsigned) s->st_mode, s->st_uid,
                s->st_gid);
        if (S_ISREG(s->st_mode))
                fprintf(walk_out, "|size=%lld|nlink=%lu|h=%llx|mtime=%lld", (long long) s->st_size,
                        (unsigned long) s->st_nlink, content_hash(path),
                        (long long) s->st_mtim.tv_sec);
        if (S_ISLNK(s->st_mode)) {
                char t[4096] = {0};
                cr_assert_geq(readlink(path, t, sizeof(t) - 1), 0);
                fprintf(walk_out, "|->%s|mtime=%lld", t, (long long) s->st_mtim.tv_sec);
        } else {
                char names[4096];
                ssize_t n = llistxattr(path, names, sizeof(names));
                for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t) strlen(names + i) + 1) {
                        const char *x = names + i;
                        /* overlayfs's own (its opaque marks, which a mount by host root
                         * does not hide under user.) are not the image's. */
                        if (!strncmp(x, "user.overlay.", 13) || !strncmp(x, "trusted.", 8))
                                continue;
                        char v[256] = {0};
                        ssize_t vl = lgetxattr(path, x, v, sizeof(v) - 1);
                        fprintf(walk_out, "|%s=", x);
                        for (ssize_t j = 0; j < vl; j++)
                                fprintf(walk_out, "%02x", (unsigned char) v[j]);
                }
        }
        fputc('\n', walk_out);
        return 0;
}

static char *tree_listing(const char *root)
{
        char *buf = NULL;
        size_t len = 0;
        walk_out = open_memstream(&buf, &len);
        walk_root_len = strlen(root);
        cr_assert_eq(nftw(root, walk_one, 64, FTW_PHYS), 0);
        fclose(walk_out);
        /* Sorted, for the two walks' orders to agree. */
        char path[160];
        snprintf(path, sizeof(path), "%s/listing", dir);
        FILE *f = fopen(path, "w");
        fwrite(buf, 1, len, f);
        fclose(f);
        free(buf);
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "LC_ALL=C sort %s", path);
        FILE *p = popen(cmd, "r");
        char *sorted = NULL;
        size_t slen = 0, cap = 0;
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
                if (slen + n + 1 > cap) {
                        cap = (slen + n + 1) * 2;
                        sorted = realloc(sorted, cap);
                }
                memcpy(sorted + slen, chunk, n);
                slen += n;
        }
        pclose(p);
        sorted = realloc(sorted, slen + 1);
        sorted[slen] = '\0';
        return sorted;
}

static void first_difference(const char *a, const char *b, char *out, size_t size)
{
        while (*a && *b) {
                const char *ea = strchrnul(a, '\n'), *eb = strchrnul(b, '\n');
                if (ea - a != eb - b || memcmp(a, b, (size_t) (ea - a))) {
                        snprintf(out, size, "psrun: %.*s / umoci: %.*s", (int) (ea - a), a,
                                 (int) (eb - b), b);
                        return;
                }
                a = *ea ? ea + 1 : ea;
                b = *eb ? eb + 1 : eb;
        }
        snprintf(out, size, "one tree ends first: psrun `%.80s` / umoci `%.80s`", a, b);
}

Test(unpack_overlay, umoci_unpacks_the_same_tree, .init = setup, .fini = teardown)
{
        if (system("umoci --version >/dev/null 2>&1") != 0)
                cr_skip_test("umoci is missing (scripts/install-deps.sh installs it): no "
                             "cross-check");
        if (system("busybox --help >/dev/null 2>&1") != 0)
                cr_skip_test("busybox-static is missing");
        /* A busybox tree, then a layer of changes with a whiteout and an
         * opaque directory, built offline with umoci itself. */
        char cmd[4096];
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd %s; mkdir -p t1/bin t1/etc t1/home/u t1/opq/sub t1/gone.d; "
                 "cp \"$(command -v busybox)\" t1/bin/busybox; "
                 "for c in sh ls cat; do ln -s busybox t1/bin/$c; done; "
                 "ln t1/bin/busybox t1/bin/hardlinked; "
                 "echo 'root:x:0:0::/:/bin/sh' > t1/etc/passwd; "
                 "cp t1/bin/busybox t1/bin/su; chmod 4755 t1/bin/su; chmod 2750 t1/home/u; "
                 "echo secret > t1/home/u/f; chmod 600 t1/home/u/f; chown -R 1000:1000 t1/home/u; "
                 "ln -s ../etc/passwd t1/home/u/link; chown -h 1000:100 t1/home/u/link; "
                 "echo old > t1/opq/old; echo x > t1/opq/sub/x; echo g > t1/gone; "
                 "mkfifo t1/fifo; "
                 "python3 -c 'import os; os.setxattr(\"t1/etc/passwd\", \"user.note\", b\"hi\")'; "
                 "mkdir -p t2/opq; echo new > t2/opq/new; echo root2 > t2/passwd; "
                 "umoci init --layout oci; umoci new --image oci:t; "
                 "umoci insert --image oci:t t1 /; "
                 "umoci insert --image oci:t --whiteout /gone; "
                 "umoci insert --image oci:t --whiteout /gone.d; "
                 "umoci insert --image oci:t --opaque t2/opq /opq; "
                 "umoci insert --image oci:t t2/passwd /etc/passwd; "
                 "umoci unpack --image oci:t bundle >/dev/null; "
                 "python3 -c 'import json,sys; "
                 "m=json.load(open(\"oci/index.json\"))[\"manifests\"][0]; "
                 "d=m[\"digest\"].split(\":\")[1]; man=json.load(open(\"oci/blobs/sha256/\"+d)); "
                 "[print(l[\"mediaType\"], l[\"digest\"].split(\":\")[1]) for l in "
                 "man[\"layers\"]]' "
                 "> layers",
                 dir);
        cr_assert_eq(system(cmd), 0, "building the image with umoci failed");

        char path[256];
        snprintf(path, sizeof(path), "%s/layers", dir);
        FILE *f = fopen(path, "r");
        cr_assert(f);
        char mt[128], digest[80], lowers[4096] = "";
        int n = 0;
        while (fscanf(f, "%127s %79s", mt, digest) == 2) {
                char ldir[256], blob[256];
                snprintf(ldir, sizeof(ldir), "%s/L%d", dir, n);
                snprintf(blob, sizeof(blob), "%s/oci/blobs/sha256/%s", dir, digest);
                cr_assert_eq(mkdir(ldir, 0700), 0);
                int dfd = open(ldir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                int fd = open(blob, O_RDONLY | O_CLOEXEC);
                cr_assert_geq(fd, 0);
                struct unpack_limits lim = {0};
                psrun_error err = {0};
                cr_assert_eq(unpack_layer(fd, mt, dfd, &lim, NULL, &err), 0, "layer %d: %s", n,
                             err.msg);
                close(fd);
                close(dfd);
                /* overlayfs lists the uppermost lower directory first. */
                char tmp[4096];
                snprintf(tmp, sizeof(tmp), "%s%s%s", ldir, *lowers ? ":" : "", lowers);
                snprintf(lowers, sizeof(lowers), "%s", tmp);
                n++;
        }
        fclose(f);
        cr_assert_eq(n, 5, "the image has %d layers", n);

        cr_assert_eq(unshare(CLONE_NEWNS), 0);
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
        char m[128], opts[4200];
        snprintf(m, sizeof(m), "%s/merged", dir);
        cr_assert_eq(mkdir(m, 0755), 0);
        snprintf(opts, sizeof(opts), "lowerdir=%s", lowers);
        cr_assert_eq(mount("overlay", m, "overlay", MS_RDONLY, opts), 0, "%s", strerror(errno));

        char rootfs[128];
        snprintf(rootfs, sizeof(rootfs), "%s/bundle/rootfs", dir);
        char *ours = tree_listing(m), *theirs = tree_listing(rootfs);
        char why[1024];
        first_difference(ours, theirs, why, sizeof(why));
        cr_assert_str_eq(ours, theirs, "the trees differ: %s", why);
        cr_assert(strstr(ours, "/opq/new|"), "%s", ours);
        cr_assert_null(strstr(ours, "/opq/old|"));
        cr_assert_null(strstr(ours, "/gone|"));
        cr_assert(strstr(ours, "/bin/su|104755|0:0"), "%s", ours);
        free(ours);
        free(theirs);
}
