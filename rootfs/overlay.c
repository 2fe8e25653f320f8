/* SPDX-License-Identifier: MIT */
/*
 * An image root: one overlayfs of the image's layers, made by the parent
 * (fsopen/fsconfig lowerdir+) and handed to the child detached, as the
 * bind sources are (rootfs/sources.c). On top of the layers, a tmpfs layer
 * psrun writes for this sandbox alone: the synthesized /etc files and the
 * mount points of the steps (/proc, /dev, /workspace, /tmp, the policy's
 * mounts), so that a root with no upper directory needs no write. The
 * layers' owners were shifted into the sandbox's id range when they were
 * unpacked; psrun's own entries are given the same shift.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "rootfs/rootfs.h"

void rootfs_overlay_free(struct rootfs_overlay *o)
{
        if (!o)
                return;
        for (size_t i = 0; i < o->n_lowers; i++)
                free(o->lowers[i]);
        free(o->lowers);
        for (size_t i = 0; i < o->n_top; i++) {
                free(o->top[i].path);
                free(o->top[i].data);
        }
        free(o->top);
        free(o);
}

/* What the filesystem said of a refused fsconfig (its log, "e overlay:
 * ..."), else the errno's text. */
static int fs_error(psrun_error *err, int fs, int r, const char *what)
{
        char msg[256];
        ssize_t n = fs >= 0 ? read(fs, msg, sizeof(msg) - 1) : -1;
        if (n > 2) {
                msg[n] = '\0';
                msg[strcspn(msg, "\n")] = '\0';
                return psrun_error_set(err, -r, "rootfs: image root: %s: %s", what, msg + 2);
        }
        return psrun_error_errno(err, r, "rootfs: image root: %s", what);
}

static int tmpfs_mount(uint64_t size, uint32_t owner, int *ret, psrun_error *err)
{
        _cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        char sz[32], id[16];
        snprintf(sz, sizeof(sz), "%llu", (unsigned long long) size);
        snprintf(id, sizeof(id), "%u", owner);
        if (fs < 0)
                return psrun_error_errno(err, errno, "rootfs: image root: tmpfs");
        if (fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "uid", id, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "gid", id, 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return fs_error(err, fs, -errno, "tmpfs");
        int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0)
                return psrun_error_errno(err, errno, "rootfs: image root: tmpfs");
        *ret = mnt;
        return 0;
}

/* Each entry's parents are made as directories when missing. Owner -1:
 * the maker's (async-signal-safe: the child of a rootless run calls it). */
static int make_parents(int root, const char *path, uid_t uid, gid_t gid)
{
        char buf[4096];
        size_t n = strlen(path);
        if (n >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        for (char *p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
                *p = '\0';
                if (mkdirat(root, buf, 0755) == 0) {
                        if (fchownat(root, buf, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
                            fchmodat(root, buf, 0755, 0) < 0)
                                return -errno;
                } else if (errno != EEXIST) {
                        return -errno;
                }
                *p = '/';
        }
        return 0;
}

/* psrun's entries into the top layer; on failure *failed is the entry. */
static int write_top_entries(int root, const struct rootfs_overlay *o, uid_t uid, gid_t gid,
                             size_t *failed)
{
        for (size_t i = 0; i < o->n_top; i++) {
                const struct rootfs_top_entry *e = &o->top[i];
                *failed = i;
                int r = make_parents(root, e->path, uid, gid);
                if (r < 0)
                        return r;
                if (!e->data) {
                        if (mkdirat(root, e->path, 0755) < 0 && errno != EEXIST)
                                return -errno;
                } else {
                        int fd =
                                openat(root, e->path,
                                       O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
                        if (fd < 0)
                                return -errno;
                        r = write_all(fd, e->data, e->len);
                        close(fd);
                        if (r < 0)
                                return r;
                }
                /* The modes as written whatever psrun's umask (a session's
                 * supervisor runs with 077). */
                if (fchownat(root, e->path, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
                    fchmodat(root, e->path, e->data ? 0644 : 0755, 0) < 0)
                        return -errno;
        }
        return 0;
}

static int write_top(int root, const struct rootfs_overlay *o, psrun_error *err)
{
        size_t failed = 0;
        int r = write_top_entries(root, o, o->id_shift, o->id_shift, &failed);
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: image root: %s", o->top[failed].path);
        return 0;
}

static int set_path(int fs, const char *key, int dirfd, const char *sub, psrun_error *err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d%s", dirfd, sub);
        if (fsconfig(fs, FSCONFIG_SET_STRING, key, path, 0) < 0)
                return fs_error(err, fs, -errno, key);
        return 0;
}

int rootfs_overlay_open(const struct rootfs_overlay *o, int *ret, psrun_error *err)
{
        _cleanup_close_ int top = -1, upper = -1, fs = -1;
        size_t bytes = 1 << 20;
        for (size_t i = 0; i < o->n_top; i++)
                bytes += o->top[i].len + 4096;
        int r = tmpfs_mount(bytes, o->id_shift, &top, err);
        if (r < 0)
                return r;
        r = write_top(top, o, err);
        if (r < 0)
                return r;
        /* Read-only from here: the child sees psrun's layer as the image's. */
        if (mount_setattr(top, "", AT_EMPTY_PATH,
                          &(struct mount_attr){.attr_set = MOUNT_ATTR_RDONLY},
                          sizeof(struct mount_attr)) < 0)
                return psrun_error_errno(err, errno, "rootfs: image root: read-only top layer");

        fs = fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0)
                return psrun_error_errno(err, errno, "rootfs: image root: overlay");
        r = set_path(fs, "lowerdir+", top, "", err);
        /* Each layer by an fd of its own: the overlay's options (in the
         * sandbox's mountinfo) then name no host path. */
        for (size_t i = 0; r >= 0 && i < o->n_lowers; i++) {
                _cleanup_close_ int dir =
                        open(o->lowers[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dir < 0)
                        r = psrun_error_errno(err, errno, "rootfs: image root: %s", o->lowers[i]);
                else
                        r = set_path(fs, "lowerdir+", dir, "", err);
        }
        if (r >= 0 && o->writable) {
                r = tmpfs_mount(o->upper_size, o->id_shift, &upper, err);
                if (r >= 0 &&
                    (mkdirat(upper, "upper", 0755) < 0 ||
                     fchownat(upper, "upper", o->id_shift, o->id_shift, 0) < 0 ||
                     fchmodat(upper, "upper", 0755, 0) < 0 || mkdirat(upper, "work", 0700) < 0))
                        r = psrun_error_errno(err, errno, "rootfs: image root: upper");
                if (r >= 0)
                        r = set_path(fs, "upperdir", upper, "/upper", err);
                if (r >= 0)
                        r = set_path(fs, "workdir", upper, "/work", err);
        }
        if (r < 0)
                return r;
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return fs_error(err, fs, -errno, "overlay");
        uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (!o->writable)
                attr |= MOUNT_ATTR_RDONLY;
        int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attr);
        if (mnt < 0)
                return psrun_error_errno(err, errno, "rootfs: image root: overlay");
        *ret = mnt;
        return 0;
}

/* ---- made by the child, in the sandbox's user namespace (rootless) ---- */

/* "/proc/self/fd/N" + sub, without stdio (async-signal-safe). */
static void fd_path(char buf[64], int fd, const char *sub)
{
        static const char prefix[] = "/proc/self/fd/";
        char digits[12];
        size_t n = 0, k = sizeof(prefix) - 1;
        unsigned v = (unsigned) fd;
        do
                digits[n++] = (char) ('0' + v % 10);
        while ((v /= 10) && n < sizeof(digits));
        memcpy(buf, prefix, k);
        while (n)
                buf[k++] = digits[--n];
        size_t sl = strlen(sub);
        if (k + sl >= 64)
                sl = 63 - k;
        memcpy(buf + k, sub, sl);
        buf[k + sl] = '\0';
}

static int child_tmpfs(const char *size)
{
        int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        int r = 0;
        if (fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        int mnt = r < 0 ? r : fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0 && r == 0)
                r = -errno;
        close(fs);
        return r < 0 ? r : mnt;
}

static int child_set_path(int fs, const char *key, int dirfd, const char *sub)
{
        char path[64];
        fd_path(path, dirfd, sub);
        return fsconfig(fs, FSCONFIG_SET_STRING, key, path, 0) < 0 ? -errno : 0;
}

int rootfs_overlay_make_in_child(const struct rootfs_overlay *o, const int *lower_fds, int *ret)
{
        size_t failed = 0;
        int top = child_tmpfs(o->top_size), upper = -1, fs = -1, r;
        if (top < 0)
                return top;
        /* Owned by whoever makes them: the user namespace's 0, or the one id
         * mapped, as the sandbox sees its own root. */
        r = write_top_entries(top, o, (uid_t) -1, (gid_t) -1, &failed);
        if (r >= 0 && mount_setattr(top, "", AT_EMPTY_PATH,
                                    &(struct mount_attr){.attr_set = MOUNT_ATTR_RDONLY},
                                    sizeof(struct mount_attr)) < 0)
                r = -errno;
        if (r >= 0 && (fs = fsopen("overlay", FSOPEN_CLOEXEC)) < 0)
                r = -errno;
        /* Opaque directories are marked user.overlay.opaque in a user's
         * store: trusted.* is host root's alone. */
        if (r >= 0 && fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
                r = -errno;
        if (r >= 0)
                r = child_set_path(fs, "lowerdir+", top, "");
        for (size_t i = 0; r >= 0 && i < o->n_lowers; i++)
                r = child_set_path(fs, "lowerdir+", lower_fds[i], "");
        if (r >= 0 && o->writable) {
                upper = child_tmpfs(o->upper_size_text);
                r = upper < 0 ? upper : 0;
                if (r >= 0 &&
                    (mkdirat(upper, "upper", 0755) < 0 || fchmodat(upper, "upper", 0755, 0) < 0 ||
                     mkdirat(upper, "work", 0700) < 0))
                        r = -errno;
                if (r >= 0)
                        r = child_set_path(fs, "upperdir", upper, "/upper");
                if (r >= 0)
                        r = child_set_path(fs, "workdir", upper, "/work");
        }
        if (r >= 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        if (r >= 0) {
                uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
                if (!o->writable)
                        attr |= MOUNT_ATTR_RDONLY;
                int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attr);
                if (mnt < 0)
                        r = -errno;
                else
                        *ret = mnt;
        }
        safe_close(top);
        safe_close(upper);
        safe_close(fs);
        return r;
}

static bool is_whiteout(const struct stat *st)
{
        return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

static bool is_opaque(int dirfd)
{
        char v[2];
        return (fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y') ||
               (fgetxattr(dirfd, "user.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y');
}

int rootfs_image_read(const char *const *lowers, size_t n_lowers, const char *dir, const char *name,
                      size_t max, char **ret, size_t *ret_len)
{
        for (size_t i = 0; i < n_lowers; i++) {
                _cleanup_close_ int layer =
                        open(lowers[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (layer < 0)
                        return -errno;
                struct stat st;
                if (fstatat(layer, dir, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }
                if (!S_ISDIR(st.st_mode))
                        return -ENOENT; /* a whiteout, a file or a symlink hides it */
                _cleanup_close_ int d =
                        openat(layer, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (d < 0)
                        return -errno;
                if (fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                return -errno;
                        if (is_opaque(d))
                                return -ENOENT;
                        continue;
                }
                if (is_whiteout(&st) || !S_ISREG(st.st_mode))
                        return -ENOENT;
                _cleanup_close_ int fd = openat(d, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                return read_all(fd, max, ret, ret_len);
        }
        return -ENOENT;
}

/* What the image has at rel (top layer first, no symlink followed on the
 * host or in a layer): 'd' a directory, 'l' a symlink, 'f' anything else,
 * 0 nothing (or a whiteout). */
static char image_kind(const char *const *lowers, size_t n_lowers, const char *rel)
{
        for (size_t i = 0; i < n_lowers; i++) {
                _cleanup_close_ int layer =
                        open(lowers[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (layer < 0)
                        return 0;
                struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                                  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
                _cleanup_close_ int fd = (int) syscall(SYS_openat2, layer, rel, &how, sizeof(how));
                if (fd < 0 && errno == ELOOP)
                        return 'l'; /* a component is a symlink in this layer */
                if (fd < 0)
                        continue;
                struct stat st;
                if (fstat(fd, &st) < 0)
                        return 0;
                if (S_ISLNK(st.st_mode))
                        return 'l';
                if (S_ISCHR(st.st_mode) && st.st_rdev == 0)
                        return 0; /* whited out */
                return S_ISDIR(st.st_mode) ? 'd' : 'f';
        }
        return 0;
}

int rootfs_image_check_parents(const char *const *lowers, size_t n_lowers, const char *path,
                               char *bad, size_t bad_size)
{
        char buf[4096];
        const char *rel = path[0] == '/' ? path + 1 : path;
        if (strlen(rel) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, rel);
        for (char *p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
                *p = '\0';
                char k = image_kind(lowers, n_lowers, buf);
                if (k == 'l' || k == 'f') {
                        snprintf(bad, bad_size, "/%s", buf);
                        return k == 'l' ? -ELOOP : -ENOTDIR;
                }
                *p = '/';
        }
        return 0;
}
