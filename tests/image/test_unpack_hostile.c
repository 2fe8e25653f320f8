/* SPDX-License-Identifier: MIT */
/*
 * Hostile layers applied for real (root): each is applied inside the layer
 * directory only or refused with one line naming the entry, in bounded
 * time and disk, and nothing beside the layer directory is touched.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "common/clock.h"
#include "image/image_test.h"

TestSuite(unpack_hostile, .timeout = 120);

static struct work w;

static void setup(void)
{
        work_make(&w);
}

static void teardown(void)
{
        work_remove(&w);
}

/* The layer is refused with code and a message holding `what`, and nothing
 * outside is touched. */
static void expect_refused(struct tarbuf *b, const struct unpack_limits *lim, int code,
                           const char *what)
{
        tb_end(b);
        psrun_error err = {0};
        int k = work_unpack(&w, b, true, lim, NULL, &err);
        cr_assert_eq(k, -code, "want -%d (%s), got %d: %s", code, what, k, err.msg);
        cr_assert(strstr(err.msg, what), "message `%s` lacks `%s`", err.msg, what);
        cr_assert(!strncmp(err.msg, "layer: ", 7), "%s", err.msg);
        work_assert_untouched(&w);
        tb_free(b);
}

static void expect_applied(struct tarbuf *b, const struct unpack_limits *lim,
                           struct unpack_stats *st)
{
        tb_end(b);
        psrun_error err = {0};
        struct unpack_stats local;
        int k = work_unpack(&w, b, true, lim, st ? st : &local, &err);
        cr_assert_eq(k, 0, "%s", err.msg);
        work_assert_untouched(&w);
        tb_free(b);
}

static bool exists(const char *path)
{
        struct stat s;
        return lstat(path, &s) == 0;
}

static char *slurp(const char *path)
{
        static char buf[256];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        cr_assert_geq(n, 0);
        buf[n] = '\0';
        return buf;
}

Test(unpack_hostile, dotdot_climbing_out_is_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "a/../../outside/pwned", "x");
        expect_refused(&b, NULL, EINVAL, "entry `a/../../outside/pwned`: the name climbs out");
}

Test(unpack_hostile, dotdot_inside_is_cleaned, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "./a/b/../c", "x");
        expect_applied(&b, NULL, NULL);
        cr_assert(exists(in_layer(&w, "a/c")));
        cr_assert(!exists(in_layer(&w, "a/b")));
}

Test(unpack_hostile, absolute_names_land_inside, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        char name[200];
        snprintf(name, sizeof(name), "%s/pwned", w.outside); /* an absolute host path */
        tb_file(&b, name, "x");
        tb_file(&b, "/etc/psrun-unpack-test", "x");
        expect_applied(&b, NULL, NULL);
        cr_assert(exists(in_layer(&w, name + 1)));
        cr_assert(exists(in_layer(&w, "etc/psrun-unpack-test")));
        cr_assert(!exists("/etc/psrun-unpack-test"));
}

Test(unpack_hostile, a_file_through_a_symlink_stays_inside, .init = setup, .fini = teardown)
{
        /* Each resolved as the sandbox would see it: below the layer's root. */
        struct tarbuf b = {0};
        tb_dir(&b, w.outside); /* the host path, as a directory of the layer */
        tb_symlink(&b, "abs", w.outside);
        tb_file(&b, "abs/pwned", "x");
        tb_dir(&b, "outside");
        tb_symlink(&b, "rel", "../../../../../../outside");
        tb_file(&b, "rel/pwned2", "y");
        expect_applied(&b, NULL, NULL);
        char rel[200];
        snprintf(rel, sizeof(rel), "%s/pwned", w.outside + 1);
        cr_assert(exists(in_layer(&w, rel)));
        cr_assert(exists(in_layer(&w, "outside/pwned2")));
}

Test(unpack_hostile, a_file_through_a_symlink_to_nothing_is_refused, .init = setup,
     .fini = teardown)
{
        struct stat before;
        cr_assert_eq(stat("/etc/passwd", &before), 0);
        struct tarbuf b = {0};
        tb_symlink(&b, "etc", "/host-etc");
        tb_file(&b, "etc/passwd", "root:x:0:0::/:/bin/sh\n");
        expect_refused(&b, NULL, ENOENT,
                       "entry `etc/passwd`: parent `etc` is a symlink to nothing in this layer");
        tb_symlink(&b, "loop", "/loop"); /* itself, in the layer's root */
        tb_file(&b, "loop/passwd", "x");
        expect_refused(&b, NULL, ELOOP, "entry `loop/passwd`: parent `loop`: Too many levels");
        struct stat after;
        cr_assert_eq(stat("/etc/passwd", &after), 0);
        cr_assert_eq(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
        cr_assert_eq(before.st_size, after.st_size);

        tb_symlink(&b, "up", "../../..");
        tb_file(&b, "up/outside/pwned", "x"); /* `..` stops at the layer's root */
        expect_applied(&b, NULL, NULL);
        cr_assert(exists(in_layer(&w, "outside/pwned")));
}

Test(unpack_hostile, a_directory_replaced_by_a_symlink_then_written_through, .init = setup,
     .fini = teardown)
{
        /* The parent resolved for d/a must not be reused for d/b once d
         * is a symlink to the host. */
        struct tarbuf b = {0};
        tb_dir(&b, "d");
        tb_file(&b, "d/a", "x");
        tb_dir(&b, w.outside);
        tb_symlink(&b, "d", w.outside);
        tb_file(&b, "d/b", "y");
        expect_applied(&b, NULL, NULL);
        char rel[200];
        snprintf(rel, sizeof(rel), "%s/b", w.outside + 1);
        cr_assert(exists(in_layer(&w, rel)));
}

Test(unpack_hostile, hardlinks_outside_the_layer_are_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_hardlink(&b, "h", "../outside/secret");
        expect_refused(&b, NULL, EINVAL,
                       "entry `h`: hardlink target `../outside/secret` is outside");
}

Test(unpack_hostile, hardlinks_to_host_files_are_refused, .init = setup, .fini = teardown)
{
        struct stat before;
        cr_assert_eq(stat("/etc/passwd", &before), 0);
        struct tarbuf b = {0};
        tb_hardlink(&b, "h", "/etc/passwd");
        expect_refused(&b, NULL, ENOENT,
                       "entry `h`: hardlink target `/etc/passwd` is not an earlier");
        struct stat after;
        cr_assert_eq(stat("/etc/passwd", &after), 0);
        cr_assert_eq(before.st_nlink, after.st_nlink);
}

Test(unpack_hostile, hardlinks_through_a_symlink_are_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_symlink(&b, "e", "/etc");
        tb_hardlink(&b, "h", "e/passwd");
        expect_refused(&b, NULL, ENOENT, "entry `h`: hardlink target `e/passwd` is not an earlier");
}

Test(unpack_hostile, hardlinks_within_the_layer_work, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "bin/busybox", "ELF");
        tb_hardlink(&b, "bin/sh", "bin/busybox");
        tb_hardlink(&b, "bin/sh", "./bin/busybox"); /* again: nothing to do */
        tb_dir(&b, "d");
        tb_hardlink(&b, "dirlink", "d");
        expect_refused(&b, NULL, EPERM, "entry `dirlink`: hardlink to a directory");
        struct stat s;
        cr_assert_eq(stat(in_layer(&w, "bin/sh"), &s), 0);
        cr_assert_eq(s.st_nlink, 2);
}

Test(unpack_hostile, device_nodes_are_skipped, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "dev/sda", '4', 0, NULL, 0666, 0, 0);
        memcpy(b.data + h + 329, "0000010", 7);
        tb_fix_checksum(&b, h);
        h = tb_header(&b, "dev/mem", '3', 0, NULL, 0666, 0, 0);
        memcpy(b.data + h + 329, "0000001", 7);
        memcpy(b.data + h + 337, "0000001", 7);
        tb_fix_checksum(&b, h);
        tb_header(&b, "fifo", '6', 0, NULL, 0640, 0, 0);
        struct unpack_stats st;
        expect_applied(&b, NULL, &st);
        cr_assert(!exists(in_layer(&w, "dev/sda")));
        cr_assert(!exists(in_layer(&w, "dev/mem")));
        cr_assert_eq(st.skipped_devices, 2);
        struct stat s;
        cr_assert_eq(lstat(in_layer(&w, "fifo"), &s), 0);
        cr_assert(S_ISFIFO(s.st_mode));
        cr_assert_eq(s.st_mode & 07777, 0640);
}

Test(unpack_hostile, a_20g_entry_stops_at_its_header, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_header(&b, "big", '0', 20ULL << 30, NULL, 0644, 0, 0);
        tb_data(&b, "only this", 9); /* the rest never comes */
        int64_t t0 = monotonic_ms();
        expect_refused(&b, NULL, EFBIG, "entry `big`: 21474836480 bytes would take the layer past");
        cr_assert_lt(monotonic_ms() - t0, 2000);
        cr_assert(!exists(in_layer(&w, "big")));
}

/* GNU tar's two sparse forms of a 20 GB file with 4 KiB of data. */
static void sparse_with_gnu_tar(const char *format)
{
        if (system("tar --version >/dev/null 2>&1") != 0)
                cr_skip_test("GNU tar is not installed: no real sparse archive to test");
        char cmd[512];
        snprintf(cmd, sizeof(cmd),
                 "cd %s && truncate -s 20G sparse && printf data | dd of=sparse bs=1 seek=1G "
                 "conv=notrunc status=none && tar --sparse --format=%s -cf sparse.tar sparse && "
                 "rm sparse",
                 w.outside, format);
        cr_assert_eq(system(cmd), 0);
        char path[200];
        snprintf(path, sizeof(path), "%s/sparse.tar", w.outside);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        unlink(path);
        psrun_error err = {0};
        struct unpack_limits lim = {0};
        int k = unpack_layer(fd, NULL, w.layer_fd, &lim, NULL, &err);
        close(fd);
        cr_assert_eq(k, -EOPNOTSUPP, "%d: %s", k, err.msg);
        cr_assert(strstr(err.msg, "sparse"), "%s", err.msg);
        cr_assert_null(strchr(err.msg, '\n'));
        work_assert_untouched(&w);
}

Test(unpack_hostile, gnu_sparse_20g_is_refused, .init = setup, .fini = teardown)
{
        sparse_with_gnu_tar("gnu");
}

Test(unpack_hostile, pax_sparse_20g_is_refused, .init = setup, .fini = teardown)
{
        sparse_with_gnu_tar("posix");
}

/* A writer child streaming a gzip layer into a pipe: `entries` entries of
 * `size` zero bytes each, named f<N>. Returns the read end. */
static int stream_layer(pid_t *pid, unsigned long entries, size_t size)
{
        int p[2];
        cr_assert_eq(pipe(p), 0);
        *pid = fork();
        cr_assert_geq(*pid, 0);
        if (*pid == 0) {
                close(p[0]);
                signal(SIGPIPE, SIG_DFL);
                gzFile g = gzdopen(p[1], "wb1");
                static unsigned char zero[65536];
                for (unsigned long i = 0; i < entries; i++) {
                        struct tarbuf b = {0};
                        char name[32];
                        snprintf(name, sizeof(name), "f%lu", i);
                        tb_header(&b, name, '0', size, NULL, 0644, 0, 0);
                        if (gzwrite(g, b.data, (unsigned) b.len) <= 0)
                                _exit(1);
                        tb_free(&b);
                        for (size_t left = (size + 511) / 512 * 512; left > 0;) {
                                size_t n = left < sizeof(zero) ? left : sizeof(zero);
                                if (gzwrite(g, zero, (unsigned) n) <= 0)
                                        _exit(1);
                                left -= n;
                        }
                }
                gzwrite(g, zero, 1024);
                gzclose(g);
                _exit(0);
        }
        close(p[1]);
        return p[0];
}

static void reap(pid_t pid)
{
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

Test(unpack_hostile, a_decompression_bomb_stops_at_max_bytes, .init = setup, .fini = teardown)
{
        /* 4 GiB of zeros in 1 MiB entries (a few MB of gzip); the layer may
         * hold 64 MiB. */
        pid_t pid;
        int fd = stream_layer(&pid, 4096, 1 << 20);
        struct unpack_limits lim = {.max_bytes = 64 << 20};
        struct unpack_stats st;
        psrun_error err = {0};
        int64_t t0 = monotonic_ms();
        int k = unpack_layer(fd, NULL, w.layer_fd, &lim, &st, &err);
        int64_t took = monotonic_ms() - t0;
        close(fd);
        reap(pid);
        cr_assert_eq(k, -EFBIG, "%d: %s", k, err.msg);
        cr_assert(strstr(err.msg, "entry `f64`: 1048576 bytes would take the layer past its "
                                  "67108864 bytes"),
                  "%s", err.msg);
        cr_assert_leq(st.bytes, 64 << 20);
        cr_assert_lt(took, 20000, "%lld ms", (long long) took);
        work_assert_untouched(&w);
}

Test(unpack_hostile, a_million_tiny_files_stop_at_max_entries, .init = setup, .fini = teardown)
{
        pid_t pid;
        int fd = stream_layer(&pid, 1000000, 0);
        struct unpack_limits lim = {.max_entries = 20000};
        struct unpack_stats st;
        psrun_error err = {0};
        int64_t t0 = monotonic_ms();
        int k = unpack_layer(fd, NULL, w.layer_fd, &lim, &st, &err);
        int64_t took = monotonic_ms() - t0;
        close(fd);
        reap(pid);
        cr_assert_eq(k, -E2BIG, "%d: %s", k, err.msg);
        cr_assert(strstr(err.msg, "entry `f20000`: more than 20000 entries"), "%s", err.msg);
        cr_assert_lt(took, 20000, "%lld ms", (long long) took);
        work_assert_untouched(&w);
}

Test(unpack_hostile, names_past_path_max_are_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        char *rec = NULL, *name = malloc(4200);
        size_t rlen = 0;
        for (size_t i = 0; i < 4200; i++)
                name[i] = i % 100 == 99 ? '/' : 'n';
        tb_pax_record(&rec, &rlen, "path", name, 4200);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_file(&b, "short", "");
        expect_refused(&b, NULL, ENAMETOOLONG, "pax path of 4200 bytes");

        memset(name, 'c', 300);
        rec = NULL;
        rlen = 0;
        tb_pax_record(&rec, &rlen, "path", name, 300);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_file(&b, "short", "");
        expect_refused(&b, NULL, ENAMETOOLONG, "a name component over 255 bytes");
        free(name);
}

Test(unpack_hostile, a_long_name_below_path_max_is_made, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        char *rec = NULL, name[4001];
        size_t rlen = 0;
        for (size_t i = 0; i < 4000; i++)
                name[i] = i % 200 == 100 ? '/' : 'n';
        name[4000] = '\0';
        tb_pax_record(&rec, &rlen, "path", name, 4000);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_file(&b, "short", "deep");
        expect_applied(&b, NULL, NULL);
        int dfd = open(w.layer, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s", strerror(errno));
        char buf[8] = {0};
        cr_assert_eq(read(fd, buf, sizeof(buf)), 4);
        cr_assert_str_eq(buf, "deep");
        close(fd);
        close(dfd);
}

Test(unpack_hostile, duplicate_entries_later_wins, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "a", "one");
        tb_file(&b, "a", "two");
        tb_dir(&b, "d");
        tb_file(&b, "d/child", "x");
        tb_file(&b, "d", "now a file");
        tb_file(&b, "x", "a file");
        tb_dir(&b, "x");
        tb_file(&b, "x/kept", "k");
        tb_header(&b, "x", '5', 0, NULL, 0700, 0, 0); /* a directory again: its content stays */
        tb_symlink(&b, "s", "t1");
        tb_symlink(&b, "s", "t2");
        expect_applied(&b, NULL, NULL);
        cr_assert_str_eq(slurp(in_layer(&w, "a")), "two");
        cr_assert_str_eq(slurp(in_layer(&w, "d")), "now a file");
        cr_assert_str_eq(slurp(in_layer(&w, "x/kept")), "k");
        struct stat s;
        cr_assert_eq(stat(in_layer(&w, "x"), &s), 0);
        cr_assert_eq(s.st_mode & 07777, 0700);
        char target[16] = {0};
        cr_assert_eq(readlink(in_layer(&w, "s"), target, sizeof(target) - 1), 2);
        cr_assert_str_eq(target, "t2");
}

static bool is_whiteout(const char *path)
{
        struct stat s;
        return lstat(path, &s) == 0 && S_ISCHR(s.st_mode) && s.st_rdev == makedev(0, 0);
}

static bool is_opaque(const char *path)
{
        char v[4] = {0};
        return getxattr(path, "trusted.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y' &&
               getxattr(path, "user.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y';
}

Test(unpack_hostile, whiteouts_for_missing_paths_are_overlay_whiteouts, .init = setup,
     .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, ".wh.ghost", "");
        tb_file(&b, "no/such/dir/.wh.file", "");
        tb_file(&b, "opq/.wh..wh..opq", "");
        tb_file(&b, "opq/mine", "stays");
        tb_file(&b, "kept", "this layer's own");
        tb_file(&b, ".wh.kept", "");     /* hides lower layers only */
        tb_file(&b, ".wh..wh.plnk", ""); /* aufs's: skipped */
        /* The overlay form, as an overlay upper directory exported. */
        size_t h = tb_header(&b, "ovl-whiteout", '3', 0, NULL, 0, 0, 0);
        (void) h;
        struct unpack_stats st;
        expect_applied(&b, NULL, &st);
        cr_assert(is_whiteout(in_layer(&w, "ghost")));
        cr_assert(is_whiteout(in_layer(&w, "no/such/dir/file")));
        cr_assert(is_whiteout(in_layer(&w, "ovl-whiteout")));
        cr_assert(is_opaque(in_layer(&w, "opq")));
        cr_assert_str_eq(slurp(in_layer(&w, "opq/mine")), "stays");
        cr_assert_str_eq(slurp(in_layer(&w, "kept")), "this layer's own");
        cr_assert(!exists(in_layer(&w, ".wh.ghost")));
        cr_assert(!exists(in_layer(&w, ".wh..wh.plnk")));
        cr_assert_eq(st.whiteouts, 3);
        cr_assert_eq(st.opaques, 1);
        cr_assert_eq(st.skipped_other, 1);
}

Test(unpack_hostile, a_whiteout_of_dotdot_is_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "a/.wh...", "");
        expect_refused(&b, NULL, EINVAL, "entry `a/.wh...`: a whiteout of no name");
}

Test(unpack_hostile, setuid_caps_owners_and_mtimes_are_kept_shifted, .init = setup,
     .fini = teardown)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        /* VFS_CAP_REVISION_2, cap_net_raw permitted+effective. */
        static const char cap[20] = {0x01, 0x00, 0x00, 0x02, 0x00, 0x20};
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.security.capability", cap, sizeof(cap));
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.user.note", "hi", 2);
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.security.selinux", "system_u:object_r:x", 19);
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.trusted.overlay.redirect", "/etc", 4);
        tb_pax_record(&rec, &rlen, "mtime", "1234567890.5", 12);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_header(&b, "bin/ping", '0', 0, NULL, 04755, 0, 0);
        tb_header(&b, "home/user", '5', 0, NULL, 02750, 1000, 1000);
        tb_header(&b, "home/user/f", '0', 0, NULL, 0600, 1000, 100);
        tb_header(&b, "home/user/l", '2', 0, "f", 0777, 1000, 1000);
        struct unpack_limits lim = {.uid_shift = 100000, .gid_shift = 200000, .id_count = 65536};
        struct unpack_stats st;
        expect_applied(&b, &lim, &st);
        struct stat s;
        cr_assert_eq(stat(in_layer(&w, "bin/ping"), &s), 0);
        cr_assert_eq(s.st_mode & 07777, 04755);
        cr_assert_eq(s.st_uid, 100000);
        cr_assert_eq(s.st_gid, 200000);
        cr_assert_eq(s.st_mtim.tv_sec, 1234567890);
        cr_assert_eq(s.st_mtim.tv_nsec, 500000000);
        char v[32];
        cr_assert_eq(getxattr(in_layer(&w, "bin/ping"), "security.capability", v, sizeof(v)), 20);
        cr_assert_eq(memcmp(v, cap, 20), 0);
        cr_assert_eq(getxattr(in_layer(&w, "bin/ping"), "user.note", v, sizeof(v)), 2);
        cr_assert_eq(getxattr(in_layer(&w, "bin/ping"), "trusted.overlay.redirect", v, sizeof(v)),
                     -1);
        cr_assert_eq(st.dropped_xattrs, 2);
        cr_assert_eq(stat(in_layer(&w, "home/user"), &s), 0);
        cr_assert_eq(s.st_mode & 07777, 02750);
        cr_assert_eq(s.st_uid, 101000);
        cr_assert_eq(s.st_gid, 201000);
        cr_assert_eq(s.st_mtim.tv_sec, 1700000000); /* set after its children were made */
        cr_assert_eq(lstat(in_layer(&w, "home/user/l"), &s), 0);
        cr_assert_eq(s.st_uid, 101000);
        /* The layer's root and made parents: the image's root, shifted. */
        cr_assert_eq(stat(w.layer, &s), 0);
        cr_assert_eq(s.st_uid, 100000);
        cr_assert_eq(s.st_mode & 07777, 0755);
        cr_assert_eq(stat(in_layer(&w, "bin"), &s), 0);
        cr_assert_eq(s.st_gid, 200000);
}

/* A user's own store (docs/rootless.md, "Images"): no setuid or setgid
 * file the user could run on the host, no file capability, no trusted.*
 * (opaque by user.overlay.opaque alone); with keep_owner no owner is set,
 * any id taken. */
Test(unpack_hostile, a_users_store_drops_setid_caps_and_trusted_and_keeps_its_owner, .init = setup,
     .fini = teardown)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        static const char cap[20] = {0x01, 0x00, 0x00, 0x02, 0x00, 0x20};
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.security.capability", cap, sizeof(cap));
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.user.note", "hi", 2);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_header(&b, "bin/ping", '0', 0, NULL, 04755, 70000, 7);
        tb_header(&b, "bin/sg", '0', 0, NULL, 02755, 0, 0);
        tb_header(&b, "home", '5', 0, NULL, 02750, 1000, 1000);
        tb_header(&b, "home/.wh..wh..opq", '0', 0, NULL, 0644, 0, 0);
        struct unpack_limits lim = {.unprivileged = true, .keep_owner = true};
        struct unpack_stats st;
        expect_applied(&b, &lim, &st);
        struct stat s;
        cr_assert_eq(stat(in_layer(&w, "bin/ping"), &s), 0);
        cr_assert_eq(s.st_mode & 07777, 0755);
        cr_assert_eq(s.st_uid, geteuid(), "owner %u: keep_owner sets none", (unsigned) s.st_uid);
        cr_assert_eq(stat(in_layer(&w, "bin/sg"), &s), 0);
        cr_assert_eq(s.st_mode & 07777, 0755);
        cr_assert_eq(st.setid_cleared, 2);
        char v[32];
        cr_assert_eq(getxattr(in_layer(&w, "bin/ping"), "security.capability", v, sizeof(v)), -1);
        cr_assert_eq(getxattr(in_layer(&w, "bin/ping"), "user.note", v, sizeof(v)), 2);
        /* A directory keeps its setgid bit: nothing runs as it. */
        cr_assert_eq(stat(in_layer(&w, "home"), &s), 0);
        cr_assert_eq(s.st_mode & 07777, 02750);
        cr_assert_eq(s.st_uid, geteuid());
        cr_assert_eq(getxattr(in_layer(&w, "home"), "user.overlay.opaque", v, sizeof(v)), 1);
        cr_assert_eq(getxattr(in_layer(&w, "home"), "trusted.overlay.opaque", v, sizeof(v)), -1);
}

Test(unpack_hostile, owners_the_sandbox_cannot_map_are_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_header(&b, "f", '0', 0, NULL, 0644, 70000, 0);
        struct unpack_limits lim = {.uid_shift = 100000, .gid_shift = 100000, .id_count = 65536};
        expect_refused(&b, &lim, ERANGE,
                       "entry `f`: owner 70000:0 is outside the sandbox's ids 0..65535");
}

Test(unpack_hostile, a_non_layer_media_type_is_refused, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "a", "x");
        tb_end(&b);
        int fd = tb_to_fd(&b, false);
        struct unpack_limits lim = {0};
        psrun_error err = {0};
        cr_assert_eq(unpack_layer(fd, "application/vnd.oci.image.manifest.v1+json", w.layer_fd,
                                  &lim, NULL, &err),
                     -EINVAL);
        cr_assert(strstr(err.msg, "layer: media type"), "%s", err.msg);
        close(fd);
        tb_free(&b);
        work_assert_untouched(&w);
}

Test(unpack_hostile, a_corrupt_stream_names_the_entry_or_byte, .init = setup, .fini = teardown)
{
        struct tarbuf b = {0};
        tb_file(&b, "a", "x");
        size_t h = tb_header(&b, "b", '0', 0, NULL, 0644, 0, 0);
        b.data[h + 148] = 'z';
        expect_refused(&b, NULL, EINVAL, "layer: header at byte 1024: bad header checksum");
}
