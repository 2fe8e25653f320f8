/* SPDX-License-Identifier: MIT */
/* One layer applied to a layer directory (image/unpack.h). */
#include "image/unpack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/number.h"
#include "image/tar.h"

#define COPY_BUF (256 * 1024)
/* Deeper trees than this are not taken apart to be replaced by an entry. */
#define REMOVE_DEPTH_MAX 256

struct dir_time {
        char *path;
        struct timespec mtime;
};

struct unpack {
        int root;
        const struct unpack_limits *lim;
        struct unpack_stats *st;
        const struct tar_entry *e;
        char shown[300];
        /* The last parent directory resolved, by its cleaned name: entries
         * come directory by directory. Dropped whenever an entry removes
         * something or makes a symlink (either may change what a name
         * resolves to). */
        char *cache_path;
        int cache_fd;
        struct dir_time *dirs;
        size_t n_dirs, cap_dirs;
        char *buf;
        psrun_error *err;
};

static int fail(struct unpack *u, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int fail(struct unpack *u, int code, const char *fmt, ...)
{
        char what[PSRUN_ERROR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return psrun_error_set(u->err, code, "layer: entry `%s`: %s",
                               number_shown(u->e->path, u->shown, sizeof(u->shown)), what);
}

static int fail_errno(struct unpack *u, int code, const char *what)
{
        if (code < 0)
                code = -code;
        return fail(u, code, "%s: %s", what, strerror(code));
}

/* Lexically clean `in` into `out` (as large): no leading `/`, no empty,
 * `.` or `..` components; "" for the root. -EINVAL when `..` climbs above
 * the root, -ENAMETOOLONG for a component over NAME_MAX. */
static int clean_path(const char *in, char *out)
{
        size_t o = 0;
        const char *p = in;
        while (*p) {
                while (*p == '/')
                        p++;
                const char *end = strchrnul(p, '/');
                size_t len = (size_t) (end - p);
                if (len == 0)
                        break;
                if (len > NAME_MAX)
                        return -ENAMETOOLONG;
                if (len == 1 && p[0] == '.') {
                } else if (len == 2 && p[0] == '.' && p[1] == '.') {
                        if (o == 0)
                                return -EINVAL;
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--; /* the slash before the component */
                } else {
                        if (o > 0)
                                out[o++] = '/';
                        memcpy(out + o, p, len);
                        o += len;
                }
                p = end;
        }
        out[o] = '\0';
        return 0;
}

/* path's parent ("" for the root's children) and last component. */
static void split_path(char *path, const char **parent, const char **base)
{
        char *slash = strrchr(path, '/');
        if (!slash) {
                *parent = "";
                *base = path;
                return;
        }
        *slash = '\0';
        *parent = path;
        *base = slash + 1;
}

static int open_in_root(int root, const char *path, int flags)
{
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        int fd = (int) syscall(SYS_openat2, root, *path ? path : ".", &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

/* The cached name is forgotten; its fd stays open until the next parent
 * is resolved, since the entry being applied may be using it. */
static void cache_forget(struct unpack *u)
{
        free(u->cache_path);
        u->cache_path = NULL;
}

static void cache_drop(struct unpack *u)
{
        u->cache_fd = safe_close(u->cache_fd);
        free(u->cache_path);
        u->cache_path = NULL;
}

/* The owner of what the layer makes without an entry (missing parents,
 * whiteouts): the image's root, shifted. */
static int own_as_root(struct unpack *u, int dirfd, const char *name)
{
        if (u->lim->keep_owner)
                return 0;
        if (fchownat(dirfd, name, u->lim->uid_shift, u->lim->gid_shift,
                     AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH)) < 0)
                return -errno;
        return 0;
}

/* An entry's owner, shifted; nothing with keep_owner (the unpacker's own
 * id owns every file). */
static int own_entry(struct unpack *u, int dirfd, const char *name, int flags)
{
        if (u->lim->keep_owner)
                return 0;
        return fchownat(dirfd, name, u->e->uid + u->lim->uid_shift, u->e->gid + u->lim->gid_shift,
                        flags) < 0
                       ? -errno
                       : 0;
}

/* The parent directory, made (0755, root's) where missing, as an fd owned
 * by the cache. */
static int open_parent(struct unpack *u, const char *parent, int *ret)
{
        if (u->cache_path && !strcmp(u->cache_path, parent)) {
                *ret = u->cache_fd;
                return 0;
        }
        cache_drop(u);
        int fd = open_in_root(u->root, parent, O_RDONLY | O_DIRECTORY);
        if (fd == -ENOENT) {
                /* Component by component: each made in the one before. */
                _cleanup_free_ char *prefix = strdup(parent);
                if (!prefix)
                        return fail_errno(u, ENOMEM, "parent");
                _cleanup_close_ int at = open_in_root(u->root, "", O_RDONLY | O_DIRECTORY);
                if (at < 0)
                        return fail_errno(u, at, "the layer directory");
                for (char *p = prefix;;) {
                        char *slash = strchr(p, '/');
                        if (slash)
                                *slash = '\0';
                        int next = open_in_root(u->root, prefix, O_RDONLY | O_DIRECTORY);
                        if (next == -ENOENT) {
                                const char *comp = strrchr(prefix, '/');
                                comp = comp ? comp + 1 : prefix;
                                if (mkdirat(at, comp, 0755) < 0) {
                                        /* EEXIST: a symlink whose target this layer
                                         * lacks. It may be a lower layer's, which this
                                         * directory cannot see (nor make). */
                                        if (errno == EEXIST)
                                                return fail(
                                                        u, ENOENT,
                                                        "parent `%s` is a symlink to "
                                                        "nothing in this layer",
                                                        number_shown(prefix, u->shown + 200, 100));
                                        return fail(u, errno, "parent `%s`: cannot make it: %s",
                                                    number_shown(prefix, u->shown + 200, 100),
                                                    strerror(errno));
                                }
                                int k = own_as_root(u, at, comp);
                                if (k < 0)
                                        return fail_errno(u, k, "parent: chown");
                                next = open_in_root(u->root, prefix, O_RDONLY | O_DIRECTORY);
                        }
                        if (next < 0)
                                return fail(u, -next, "parent `%s`: %s",
                                            number_shown(prefix, u->shown + 200, 100),
                                            strerror(-next));
                        closep(&at);
                        at = next;
                        if (!slash)
                                break;
                        *slash = '/';
                        p = slash + 1;
                }
                fd = TAKE_FD(at);
        }
        if (fd < 0)
                return fail(u, -fd, "parent `%s`: %s", number_shown(parent, u->shown + 200, 100),
                            strerror(-fd));
        if (!(u->cache_path = strdup(parent))) {
                close(fd);
                return fail_errno(u, ENOMEM, "parent");
        }
        u->cache_fd = fd;
        *ret = fd;
        return 0;
}

static int remove_tree(int dirfd, const char *name, int depth)
{
        if (depth > REMOVE_DEPTH_MAX)
                return -ELOOP;
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        int r = 0;
        for (struct dirent *de; r == 0 && (de = readdir(d));) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (unlinkat(fd, de->d_name, 0) == 0)
                        continue;
                if (errno == EISDIR || errno == EPERM)
                        r = remove_tree(fd, de->d_name, depth + 1);
                else
                        r = -errno;
        }
        closedir(d);
        if (r == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
                r = -errno;
        return r;
}

/* Makes room for a new entry: 1 when an existing directory stays (a
 * directory entry over it), 0 when the name is free, -errno. */
static int make_room(struct unpack *u, int dirfd, const char *base, bool keep_dir)
{
        struct stat s;
        if (fstatat(dirfd, base, &s, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fail_errno(u, errno, "stat");
        if (S_ISDIR(s.st_mode) && keep_dir)
                return 1;
        cache_forget(u);
        int k = S_ISDIR(s.st_mode) ? remove_tree(dirfd, base, 0)
                                   : (unlinkat(dirfd, base, 0) < 0 ? -errno : 0);
        if (k < 0)
                return fail_errno(u, k, "replacing an earlier entry");
        return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
        return !strncmp(s, prefix, strlen(prefix));
}

static bool is_opaque_xattr(const struct tar_xattr *x)
{
        return (!strcmp(x->name, "trusted.overlay.opaque") ||
                !strcmp(x->name, "user.overlay.opaque")) &&
               x->size == 1 && x->value[0] == 'y';
}

/* Which of an image's xattrs a layer directory keeps. */
static bool xattr_kept(const char *name)
{
        if (has_prefix(name, "user.overlay."))
                return false; /* overlayfs's own: an image cannot forge them */
        return has_prefix(name, "user.") || !strcmp(name, "security.capability");
}

static int set_opaque(struct unpack *u, int fd)
{
        /* Without root trusted.* cannot be written; the user's overlays are
         * mounted with userxattr and read the user.* mark alone. */
        static const char *const names[] = {"trusted.overlay.opaque", "user.overlay.opaque"};
        for (size_t i = u->lim->unprivileged ? 1 : 0; i < ARRAY_SIZE(names); i++)
                if (fsetxattr(fd, names[i], "y", 1, 0) < 0)
                        return fail(u, errno, "marking the directory opaque (%s): %s", names[i],
                                    strerror(errno));
        u->st->opaques++;
        return 0;
}

/* The mode an entry gets: the image's, but never a setuid or setgid file
 * in an unprivileged user's store, which that user could run on the host
 * as the owner (a subordinate id) it shows. */
static mode_t entry_mode(struct unpack *u, bool is_dir)
{
        mode_t m = u->e->mode;
        if (u->lim->unprivileged && !is_dir && (m & (S_ISUID | S_ISGID))) {
                u->st->setid_cleared++;
                m &= ~(mode_t) (S_ISUID | S_ISGID);
        }
        return m;
}

/* Owner, xattrs, then mode (chown clears setuid bits and capabilities, so
 * it goes first), on an fd of a regular file or directory. */
static int set_meta_fd(struct unpack *u, int fd, bool is_dir)
{
        int k = own_entry(u, fd, "", AT_EMPTY_PATH);
        if (k < 0)
                return fail_errno(u, k, "chown");
        for (size_t i = 0; i < u->e->n_xattrs; i++) {
                const struct tar_xattr *x = &u->e->xattrs[i];
                if (is_dir && is_opaque_xattr(x)) {
                        if ((k = set_opaque(u, fd)) < 0)
                                return k;
                        continue;
                }
                /* A file capability is inert in the sandbox (no_new_privs),
                 * and without root only the user namespace's own. */
                if (!xattr_kept(x->name) ||
                    (u->lim->unprivileged && !strcmp(x->name, "security.capability"))) {
                        u->st->dropped_xattrs++;
                        continue;
                }
                if (fsetxattr(fd, x->name, x->value, x->size, 0) < 0) {
                        if (errno == EOPNOTSUPP) {
                                u->st->dropped_xattrs++;
                                continue;
                        }
                        return fail(u, errno, "xattr `%s`: %s",
                                    number_shown(x->name, u->shown + 200, 100), strerror(errno));
                }
        }
        if (fchmod(fd, entry_mode(u, is_dir)) < 0)
                return fail_errno(u, errno, "chmod");
        return 0;
}

static struct timespec entry_mtime(const struct tar_entry *e)
{
        return (struct timespec){.tv_sec = e->mtime, .tv_nsec = e->mtime_nsec};
}

static int copy_data(struct unpack *u, struct tar_reader *r, int fd)
{
        for (;;) {
                ssize_t n = tar_read_data(r, u->buf, COPY_BUF, u->err);
                if (n < 0)
                        return psrun_error_prefix(u->err, "layer");
                if (n == 0)
                        return 0;
                int k = write_all(fd, u->buf, (size_t) n);
                if (k < 0)
                        return fail_errno(u, k, "write");
        }
}

static int apply_reg(struct unpack *u, struct tar_reader *r, int dirfd, const char *base)
{
        int k = make_room(u, dirfd, base, false);
        if (k < 0)
                return k;
        _cleanup_close_ int fd =
                openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return fail_errno(u, errno, "create");
        k = copy_data(u, r, fd);
        if (k < 0)
                return k;
        k = set_meta_fd(u, fd, false);
        if (k < 0)
                return k;
        struct timespec ts[2] = {entry_mtime(u->e), entry_mtime(u->e)};
        if (futimens(fd, ts) < 0)
                return fail_errno(u, errno, "set mtime");
        return 0;
}

static int remember_dir(struct unpack *u, const char *path)
{
        if (u->n_dirs == u->cap_dirs) {
                size_t cap = u->cap_dirs ? u->cap_dirs * 2 : 64;
                struct dir_time *d = realloc(u->dirs, cap * sizeof(*d));
                if (!d)
                        return fail_errno(u, ENOMEM, "directory list");
                u->dirs = d;
                u->cap_dirs = cap;
        }
        if (!(u->dirs[u->n_dirs].path = strdup(path)))
                return fail_errno(u, ENOMEM, "directory list");
        u->dirs[u->n_dirs++].mtime = entry_mtime(u->e);
        return 0;
}

static int apply_dir(struct unpack *u, int dirfd, const char *base, const char *path)
{
        _cleanup_close_ int fd = -1;
        if (!*base) {
                fd = open_in_root(u->root, "", O_RDONLY | O_DIRECTORY);
        } else {
                int k = make_room(u, dirfd, base, true);
                if (k < 0)
                        return k;
                if (k == 0 && mkdirat(dirfd, base, 0700) < 0)
                        return fail_errno(u, errno, "mkdir");
                fd = openat(dirfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        fd = -errno;
        }
        if (fd < 0)
                return fail_errno(u, fd, "open");
        int k = set_meta_fd(u, fd, true);
        if (k < 0)
                return k;
        return remember_dir(u, path);
}

static int apply_symlink(struct unpack *u, int dirfd, const char *base)
{
        int k = make_room(u, dirfd, base, false);
        if (k < 0)
                return k;
        cache_forget(u);
        if (symlinkat(u->e->linkpath, dirfd, base) < 0)
                return fail_errno(u, errno, "symlink");
        if ((k = own_entry(u, dirfd, base, AT_SYMLINK_NOFOLLOW)) < 0)
                return fail_errno(u, k, "chown");
        /* Xattrs on a symlink: only trusted.* and security.*, none kept. */
        u->st->dropped_xattrs += u->e->n_xattrs;
        struct timespec ts[2] = {entry_mtime(u->e), entry_mtime(u->e)};
        if (utimensat(dirfd, base, ts, AT_SYMLINK_NOFOLLOW) < 0)
                return fail_errno(u, errno, "set mtime");
        return 0;
}

static int apply_hardlink(struct unpack *u, int dirfd, const char *base)
{
        _cleanup_free_ char *target = malloc(strlen(u->e->linkpath) + 1);
        if (!target)
                return fail_errno(u, ENOMEM, "link");
        int k = clean_path(u->e->linkpath, target);
        if (k < 0 || !*target)
                return fail(u, EINVAL, "hardlink target `%s` is outside the layer",
                            number_shown(u->e->linkpath, u->shown + 200, 100));
        const char *tparent, *tbase;
        split_path(target, &tparent, &tbase);
        _cleanup_close_ int tfd = open_in_root(u->root, tparent, O_PATH | O_DIRECTORY);
        struct stat s;
        if (tfd < 0 || fstatat(tfd, tbase, &s, AT_SYMLINK_NOFOLLOW) < 0)
                return fail(u, ENOENT, "hardlink target `%s` is not an earlier entry of this layer",
                            number_shown(u->e->linkpath, u->shown + 200, 100));
        if (S_ISDIR(s.st_mode))
                return fail(u, EPERM, "hardlink to a directory");
        struct stat here;
        if (fstatat(dirfd, base, &here, AT_SYMLINK_NOFOLLOW) == 0 && here.st_ino == s.st_ino &&
            here.st_dev == s.st_dev)
                return 0; /* already that file */
        k = make_room(u, dirfd, base, false);
        if (k < 0)
                return k;
        if (linkat(tfd, tbase, dirfd, base, 0) < 0)
                return fail_errno(u, errno, "link");
        return 0;
}

/* A whiteout of `name` in dirfd: overlayfs's char 0/0, unless this layer
 * has that name itself (whiteouts hide lower layers only). */
static int make_whiteout(struct unpack *u, int dirfd, const char *name)
{
        struct stat s;
        if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        if (errno != ENOENT)
                return fail_errno(u, errno, "whiteout: stat");
        if (mknodat(dirfd, name, S_IFCHR | 0, makedev(0, 0)) < 0)
                return fail_errno(u, errno, "whiteout: mknod");
        int k = own_as_root(u, dirfd, name);
        if (k < 0)
                return fail_errno(u, k, "whiteout: chown");
        u->st->whiteouts++;
        return 0;
}

static int apply_device(struct unpack *u, int dirfd, const char *base)
{
        if (u->e->type == TAR_CHAR && u->e->devmajor == 0 && u->e->devminor == 0)
                return make_whiteout(u, dirfd, base); /* overlay's own form */
        u->st->skipped_devices++;
        return 0;
}

static int apply_fifo(struct unpack *u, int dirfd, const char *base)
{
        int k = make_room(u, dirfd, base, false);
        if (k < 0)
                return k;
        if (mkfifoat(dirfd, base, 0600) < 0)
                return fail_errno(u, errno, "mkfifo");
        if ((k = own_entry(u, dirfd, base, AT_SYMLINK_NOFOLLOW)) < 0)
                return fail_errno(u, k, "chown");
        /* Nothing but this layer writes here, so the name is still the FIFO. */
        if (fchmodat(dirfd, base, entry_mode(u, false), 0) < 0)
                return fail_errno(u, errno, "chmod");
        struct timespec ts[2] = {entry_mtime(u->e), entry_mtime(u->e)};
        if (utimensat(dirfd, base, ts, AT_SYMLINK_NOFOLLOW) < 0)
                return fail_errno(u, errno, "set mtime");
        return 0;
}

#define WH        ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define WH_META   ".wh..wh."

static int apply_whiteout_name(struct unpack *u, int dirfd, const char *base)
{
        if (!strcmp(base, WH_OPAQUE))
                return set_opaque(u, dirfd);
        if (has_prefix(base, WH_META)) {
                u->st->skipped_other++; /* aufs's hardlink and metadata dirs */
                return 0;
        }
        const char *name = base + strlen(WH);
        if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
                return fail(u, EINVAL, "a whiteout of no name");
        return make_whiteout(u, dirfd, name);
}

static int apply_entry(struct unpack *u, struct tar_reader *r, const struct tar_entry *e)
{
        u->e = e;
        if (++u->st->entries > u->lim->max_entries)
                return fail(u, E2BIG, "more than %" PRIu64 " entries in the layer",
                            u->lim->max_entries);
        if (e->size > u->lim->max_bytes - u->st->bytes)
                return fail(u, EFBIG,
                            "%" PRIu64 " bytes would take the layer past its %" PRIu64
                            " bytes (%" PRIu64 " so far)",
                            e->size, u->lim->max_bytes, u->st->bytes);
        u->st->bytes += e->size;
        if (u->lim->id_count && (e->uid >= u->lim->id_count || e->gid >= u->lim->id_count))
                return fail(u, ERANGE,
                            "owner %" PRIu32 ":%" PRIu32
                            " is outside the sandbox's ids 0..%" PRIu32,
                            e->uid, e->gid, u->lim->id_count - 1);
        if (e->uid > UINT32_MAX - 1 - u->lim->uid_shift ||
            e->gid > UINT32_MAX - 1 - u->lim->gid_shift)
                return fail(u, ERANGE, "owner %" PRIu32 ":%" PRIu32 " overflows when shifted",
                            e->uid, e->gid);

        _cleanup_free_ char *path = malloc(strlen(e->path) + 1);
        if (!path)
                return fail_errno(u, ENOMEM, "name");
        int k = clean_path(e->path, path);
        if (k == -ENAMETOOLONG)
                return fail(u, ENAMETOOLONG, "a name component over %d bytes", NAME_MAX);
        if (k < 0)
                return fail(u, EINVAL, "the name climbs out of the layer with `..`");
        _cleanup_free_ char *full = strdup(path);
        if (!full)
                return fail_errno(u, ENOMEM, "name");
        const char *parent, *base;
        split_path(path, &parent, &base);
        if (!*base && e->type != TAR_DIR)
                return fail(u, EINVAL, "the layer's root as a non-directory");
        int dirfd = -1;
        k = open_parent(u, parent, &dirfd);
        if (k < 0)
                return k;
        if (has_prefix(base, WH))
                return apply_whiteout_name(u, dirfd, base);
        switch (e->type) {
        case TAR_REG:
                return apply_reg(u, r, dirfd, base);
        case TAR_DIR:
                return apply_dir(u, dirfd, base, full);
        case TAR_SYMLINK:
                return apply_symlink(u, dirfd, base);
        case TAR_HARDLINK:
                return apply_hardlink(u, dirfd, base);
        case TAR_CHAR:
        case TAR_BLOCKDEV:
                return apply_device(u, dirfd, base);
        case TAR_FIFO:
                return apply_fifo(u, dirfd, base);
        }
        return fail(u, EINVAL, "unknown entry type");
}

/* Directories' mtimes, now that nothing more is made in them. One that a
 * later entry replaced is gone or not a directory: left. */
static int finish_dirs(struct unpack *u)
{
        for (size_t i = 0; i < u->n_dirs; i++) {
                _cleanup_close_ int fd =
                        open_in_root(u->root, u->dirs[i].path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
                if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP)
                        continue;
                if (fd < 0)
                        return psrun_error_errno(
                                u->err, fd, "layer: directory `%s`",
                                number_shown(u->dirs[i].path, u->shown, sizeof(u->shown)));
                struct timespec ts[2] = {u->dirs[i].mtime, u->dirs[i].mtime};
                if (futimens(fd, ts) < 0)
                        return psrun_error_errno(
                                u->err, errno, "layer: directory `%s`: set mtime",
                                number_shown(u->dirs[i].path, u->shown, sizeof(u->shown)));
        }
        return 0;
}

static void unpack_done(struct unpack *u)
{
        cache_drop(u);
        for (size_t i = 0; i < u->n_dirs; i++)
                free(u->dirs[i].path);
        free(u->dirs);
        free(u->buf);
}

static void tar_reader_freep(struct tar_reader **r)
{
        tar_reader_free(*r);
}

static void decompressor_freep(struct decompressor **d)
{
        decompressor_free(*d);
}

static int unpack_run(struct unpack *u, int fd)
{
        int k;
        _cleanup_(decompressor_freep) struct decompressor *d = decompressor_new(fd);
        _cleanup_(tar_reader_freep) struct tar_reader *r =
                d ? tar_reader_new(decompressor_read, d) : NULL;
        if (!r || !(u->buf = malloc(COPY_BUF)))
                return psrun_error_errno(u->err, ENOMEM, "layer");

        /* The root as the image's root would have it, until a `./` entry. */
        _cleanup_close_ int rootfd = open_in_root(u->root, "", O_RDONLY | O_DIRECTORY);
        if (rootfd < 0)
                return psrun_error_errno(u->err, rootfd, "layer: the layer directory");
        if (own_as_root(u, rootfd, "") < 0 || fchmod(rootfd, 0755) < 0)
                return psrun_error_errno(u->err, errno, "layer: the layer directory");

        for (;;) {
                const struct tar_entry *e;
                k = tar_next(r, &e, u->err);
                u->st->compression = decompressor_kind(d);
                if (k < 0)
                        return psrun_error_prefix(u->err, "layer");
                if (k == 0)
                        break;
                k = apply_entry(u, r, e);
                if (k < 0)
                        return k;
        }
        return finish_dirs(u);
}

int unpack_layer(int fd, const char *media_type, int dest_dirfd, const struct unpack_limits *lim,
                 struct unpack_stats *st, psrun_error *err)
{
        enum layer_compression declared;
        int k = layer_media_type(media_type, &declared, err);
        if (k < 0)
                return psrun_error_prefix(err, "layer");
        struct unpack_limits l = *lim;
        if (!l.max_bytes)
                l.max_bytes = UNPACK_DEFAULT_MAX_BYTES;
        if (!l.max_entries)
                l.max_entries = UNPACK_DEFAULT_MAX_ENTRIES;
        struct unpack_stats local;
        if (!st)
                st = &local;
        memset(st, 0, sizeof(*st));
        struct unpack u = {.root = dest_dirfd, .lim = &l, .st = st, .cache_fd = -1, .err = err};
        k = unpack_run(&u, fd);
        unpack_done(&u);
        return k;
}
