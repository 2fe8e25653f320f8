/* SPDX-License-Identifier: MIT */
/*
 * Applying one mount step, in the child between clone3() and execve()
 * (runtime/child.c runs the list): async-signal-safe only, no allocation,
 * no stdio, the step read and never changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "rootfs/mounts.h"

/*
 * Every path a step names inside the root is resolved in the root of this
 * process (the new root: the steps run after the pivot) with no magic
 * links, and the step acts on what was found through an fd, never on the
 * path string. Until execve the child holds psrun's host fds (the state
 * root, the container's state and cgroup directories, the copies of bind
 * sources), and the kernel's own lookup of /proc/self/fd/N/x (an image's
 * working directory or volume is enough) would create x in one of them, on
 * the host, as real root: the CVE-2024-21626 class one step before the
 * chdir. Symbolic links in the image still resolve as they would with this
 * root, clamped to it. root: this process's root, opened once for all the
 * steps (runtime/child-setup.c, step_mounts): nothing between them changes
 * the process's root, and a mount on "/" stacks above the root a lookup
 * starts from, as it would for open("/").
 */
static int open_in_root(int root, const char *path, int flags)
{
        struct open_how how = {.flags = (uint64_t) flags | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        for (int tries = 0;; tries++) {
                int fd = (int) syscall(SYS_openat2, root, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                /* EAGAIN: a `..` on the way raced with a rename or a mount
                 * elsewhere, and the kernel could not prove the result is
                 * inside the root; it asks to try again. */
                if (errno != EAGAIN || tries >= 16)
                        return -errno;
        }
}

/* A step's target as the directory that holds it (resolved in the root)
 * and its last component ("." for the root itself). */
struct target {
        int dir;
        const char *name;
        char buf[PATH_MAX];
};

static int open_parent(int root, const char *path, struct target *t)
{
        size_t len = strlen(path);
        if (len >= sizeof(t->buf))
                return -ENAMETOOLONG;
        memcpy(t->buf, path, len + 1);
        while (len > 1 && t->buf[len - 1] == '/')
                t->buf[--len] = '\0';
        char *slash = strrchr(t->buf, '/');
        const char *parent = "/";
        t->name = t->buf;
        if (slash) {
                t->name = slash + 1;
                *slash = '\0';
                if (slash != t->buf)
                        parent = t->buf;
        }
        if (!t->name[0])
                t->name = ".";
        t->dir = open_in_root(root, parent, O_PATH | O_DIRECTORY);
        return t->dir < 0 ? t->dir : 0;
}

/* An atime mode (noatime, strictatime) is a value in the MOUNT_ATTR__ATIME
 * field, not a bit: the kernel takes it only with that field cleared. */
static uint64_t atime_clear(uint64_t attr)
{
        return attr & MOUNT_ATTR__ATIME ? MOUNT_ATTR__ATIME : 0;
}

/* fd: a mount's root (a resolved target, or a detached tree). */
static int setattr_fd(int fd, uint64_t attr, bool recursive)
{
        struct mount_attr a = {.attr_set = attr, .attr_clr = atime_clear(attr)};
        if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) <
            0)
                return -errno;
        return 0;
}

/* attr_set on the mount now at the step's target (looked up again: the fd
 * of the target taken before the mount is the directory it covers). */
static int setattr_target(int root, const struct mount_step *s)
{
        if (!s->attr_set)
                return 0;
        _cleanup_close_ int fd = open_in_root(root, s->target, O_PATH);
        return fd < 0 ? fd : setattr_fd(fd, s->attr_set, s->recursive);
}

/* mount(2) takes its target as a path only: "." from the resolved target,
 * then back to the root. */
static int mount_at(int target, const char *source, const char *fstype, unsigned long flags,
                    const void *data)
{
        if (fchdir(target) < 0)
                return -errno;
        int r = mount(source, ".", fstype, flags, data) < 0 ? -errno : 0;
        if (chdir("/") < 0 && r == 0)
                r = -errno;
        return r;
}

static int give(const struct mount_step *s, int dir, const char *name)
{
        if (s->chown && fchownat(dir, name, s->uid, s->gid, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

/* A detached tree attached at the step's target. */
static int attach(int root, const struct mount_step *s, int tree)
{
        _cleanup_close_ int target = open_in_root(root, s->target, O_PATH);
        if (target < 0)
                return target;
        if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

static int bind_from_fd(int root, const struct mount_step *s, int tree)
{
        /* The detached copy of the source is made read-only (etc.) before it
         * is attached: never visible with weaker flags. */
        if (s->attr_set) {
                int r = setattr_fd(tree, s->attr_set, s->recursive);
                if (r < 0)
                        return r;
        }
        return attach(root, s, tree);
}

static int bind_in_root(int root, const struct mount_step *s)
{
        /* A source inside the root (a path bound onto itself to be made
         * read-only), resolved as targets are. Not copied with open_tree(): a
         * detached copy is a mount namespace, and by now psrun run's user
         * namespace may make none (namespace_limit). mount(2) takes both
         * ends as paths: a directory source as "." from its fd (a file cannot
         * be the working directory: its path), the target as its path. The
         * kernel binds only onto a mount of this mount namespace, which holds
         * the root's tree alone (and psrun run's /.oldroot), and no process
         * of the container runs yet to change a path in between; and what is
         * then at the target, resolved in the root, must be the source found
         * above (-EXDEV otherwise). MS_REC unless asked otherwise: a
         * non-recursive bind of a tree with locked submounts is refused in a
         * user namespace, and would hide them. */
        _cleanup_close_ int source = open_in_root(root, s->source, O_PATH);
        if (source < 0)
                return source;
        struct stat want, got;
        if (fstat(source, &want) < 0)
                return -errno;
        _cleanup_close_ int target = open_in_root(root, s->target, O_PATH);
        if (target < 0)
                return target;
        bool dir = S_ISDIR(want.st_mode);
        if (dir && fchdir(source) < 0)
                return -errno;
        int r = mount(dir ? "." : s->source, s->target, NULL, MS_BIND | (s->single ? 0 : MS_REC),
                      NULL);
        r = r < 0 ? -errno : 0;
        if (dir && chdir("/") < 0 && r == 0)
                r = -errno;
        if (r < 0)
                return r;
        _cleanup_close_ int bound = open_in_root(root, s->target, O_PATH);
        if (bound < 0 || fstat(bound, &got) < 0 || got.st_dev != want.st_dev ||
            got.st_ino != want.st_ino) {
                (void) umount2(s->target, MNT_DETACH);
                return bound < 0 ? bound : -EXDEV;
        }
        return setattr_target(root, s);
}

static int mask_file(const struct mount_step *s, int target, int null_tree)
{
        /* The CVE-2025-31133 class: the container's own /dev/null may be a
         * symbolic link (to /proc/sys/kernel/core_pattern, say), and a bind
         * by path would put that file, writable, over the masked one. The
         * mask is a clone of the host's /dev/null, taken before the pivot
         * (step_open_sources), and checked to be the null device. */
        struct stat st;
        if (null_tree < 0)
                return -ENODEV;
        if (fstat(null_tree, &st) < 0)
                return -errno;
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
                return -ENODEV;
        if (move_mount(null_tree, "", target, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

static int mask(int root, const struct mount_step *s, int null_tree)
{
        _cleanup_close_ int target = open_in_root(root, s->target, O_PATH);
        if (target < 0)
                return target;
        struct stat st;
        if (fstat(target, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return mount_at(target, "psrun-mask", "tmpfs",
                                MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                "size=0,nr_inodes=1,mode=0555");
        return mask_file(s, target, null_tree);
}

static int make_node(const struct mount_step *s, int dir, const char *name)
{
        /* Something the image put at the node's path (a symbolic link to a
         * host file through /proc, a regular file, another device) is
         * replaced, never followed or kept. */
        struct stat st;
        if (mknodat(dir, name, s->mode, s->dev) == 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if ((st.st_mode & S_IFMT) == (s->mode & S_IFMT) && st.st_rdev == s->dev)
                return 0;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (unlinkat(dir, name, 0) < 0)
                return -errno;
        return mknodat(dir, name, s->mode, s->dev) < 0 ? -errno : 0;
}

/* The steps that create an entry: in the directory that holds it. */
static int create_entry(int root, const struct mount_step *s)
{
        struct target t;
        int r = open_parent(root, s->target, &t);
        if (r < 0)
                return r;
        _cleanup_close_ int dir = t.dir;
        int fd;

        switch (s->op) {
        case MOUNT_OP_MKDIR:
                if (mkdirat(dir, t.name, s->mode) < 0 && errno != EEXIST)
                        return -errno;
                return give(s, dir, t.name);
        case MOUNT_OP_MKFILE:
                /* A mount point: whatever is there already (a FIFO, a
                 * socket, a device node) is never opened for I/O, which
                 * could block on a FIFO or wake a device. */
                if (mknodat(dir, t.name, S_IFREG | (s->mode & 07777), 0) < 0 && errno != EEXIST)
                        return -errno;
                return give(s, dir, t.name);
        case MOUNT_OP_SYMLINK:
                if (symlinkat(s->source, dir, t.name) < 0 && errno != EEXIST)
                        return -errno;
                return 0;
        case MOUNT_OP_WRITE:
                fd = openat(dir, t.name,
                            O_WRONLY | O_CLOEXEC | O_NOFOLLOW |
                                    (s->existing ? 0 : O_CREAT | O_TRUNC),
                            s->mode);
                if (fd < 0)
                        return -errno;
                r = write_all(fd, s->data, s->data_len);
                close(fd);
                return r < 0 ? r : give(s, dir, t.name);
        case MOUNT_OP_MKNOD:
                r = make_node(s, dir, t.name);
                return r < 0 ? r : give(s, dir, t.name);
        default:
                return -EINVAL;
        }
}

/* A propagation change (no fstype: "rprivate", "shared"...) through the
 * resolved target's fd: the target may be a file (Docker binds
 * /etc/resolv.conf, /etc/hosts and /etc/hostname and makes them rprivate),
 * which mount_at cannot make its working directory. */
static int propagate(int target, unsigned long flags)
{
        struct mount_attr a = {
                .propagation = flags & (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE),
        };
        unsigned int at = AT_EMPTY_PATH | ((flags & MS_REC) ? AT_RECURSIVE : 0);
        return mount_setattr(target, "", at, &a, sizeof(a)) < 0 ? -errno : 0;
}

static int mount_new(int root, const struct mount_step *s, int host_fd)
{
        if (s->early) {
                /* Made before the pivot (mount_step_apply_early). */
                if (host_fd < 0)
                        return -EBADF;
                return bind_from_fd(root, s, host_fd);
        }
        _cleanup_close_ int target = open_in_root(root, s->target, O_PATH);
        if (target < 0)
                return target;
        if (!s->fstype)
                return propagate(target, s->flags);
        int r = mount_at(target, s->source, s->fstype, s->flags, s->data);
        return r < 0 ? r : setattr_target(root, s);
}

int mount_step_apply(const struct mount_step *s, int root, int host_fd)
{
        _cleanup_close_ int target = -1;

        switch (s->op) {
        case MOUNT_OP_MKDIR:
        case MOUNT_OP_MKFILE:
        case MOUNT_OP_SYMLINK:
        case MOUNT_OP_WRITE:
        case MOUNT_OP_MKNOD:
                return create_entry(root, s);
        case MOUNT_OP_BIND:
                if (s->from_host)
                        return host_fd < 0 ? -ENOENT : bind_from_fd(root, s, host_fd);
                return bind_in_root(root, s);
        case MOUNT_OP_MOUNT:
                return mount_new(root, s, host_fd);
        case MOUNT_OP_MASK:
                return mask(root, s, host_fd);
        case MOUNT_OP_SETATTR:
                target = open_in_root(root, s->target, O_PATH);
                return target < 0 ? target : setattr_fd(target, s->attr_set, s->recursive);
        case MOUNT_OP_DETACH:
                /* Only psrun's own /.oldroot, before anything of the
                 * sandbox can run: a path is safe here. */
                if (umount2(s->target, MNT_DETACH) < 0)
                        return -errno;
                if (rmdir(s->target) < 0)
                        return -errno;
                return 0;
        default:
                return -EINVAL;
        }
}

int mount_step_apply_early(const struct mount_step *s)
{
        /* A new instance as a detached mount (fsopen/fsmount), made while the
         * host's /proc and /sys are still in this mount namespace: the
         * kernel lets a user namespace make procfs or sysfs only where a
         * full instance is visible. It is attached later, at the step's place
         * in the config's order (mount_step_apply with host_fd), after the
         * pivot, where every target resolves inside the root. */
        static const struct {
                unsigned long flag;
                uint64_t attr;
        } attrs[] = {
                {MS_RDONLY, MOUNT_ATTR_RDONLY},
                {MS_NOSUID, MOUNT_ATTR_NOSUID},
                {MS_NODEV, MOUNT_ATTR_NODEV},
                {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
                {MS_NOATIME, MOUNT_ATTR_NOATIME},
                {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME},
                {MS_STRICTATIME, MOUNT_ATTR_STRICTATIME},
        };
        int fs = fsopen(s->fstype, FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        int r = 0;
        if (s->source && fsconfig(fs, FSCONFIG_SET_STRING, "source", s->source, 0) < 0)
                r = -errno;
        /* "key=value,flag,...": one fsconfig each, from a copy on the stack. */
        char data[1024];
        size_t len = s->data ? strlen(s->data) : 0;
        if (r == 0 && len >= sizeof(data))
                r = -E2BIG;
        if (r == 0 && len) {
                memcpy(data, s->data, len + 1);
                for (char *opt = data, *next; r == 0 && opt; opt = next) {
                        next = strchr(opt, ',');
                        if (next)
                                *next++ = '\0';
                        if (!*opt)
                                continue;
                        char *eq = strchr(opt, '=');
                        if (eq)
                                *eq = '\0';
                        if ((eq ? fsconfig(fs, FSCONFIG_SET_STRING, opt, eq + 1, 0)
                                : fsconfig(fs, FSCONFIG_SET_FLAG, opt, NULL, 0)) < 0)
                                r = -errno;
                }
        }
        if (r == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        uint64_t attr = 0;
        for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
                if (s->flags & attrs[i].flag)
                        attr |= attrs[i].attr;
        int tree = r == 0 ? fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attr) : -1;
        if (r == 0 && tree < 0)
                r = -errno;
        close(fs);
        return r < 0 ? r : tree;
}

int rootfs_sources_clone_nodes(const struct rootfs_plan *plan, int nodes_fd, int *fds,
                               const char *dir, size_t *failed)
{
        if (nodes_fd < 0)
                return 0;
        /* Attached, the tmpfs is in our mount namespace (a private copy of
         * the host's: nothing reaches the host), where open_tree may clone
         * from it; the fd then names the attached mount. */
        if (move_mount(nodes_fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                *failed = 0;
                return -errno;
        }
        int r = 0;
        for (size_t i = 0; r == 0 && i < plan->n_steps; i++) {
                const struct mount_step *s = &plan->steps[i];
                if (s->op != MOUNT_OP_BIND || !s->node)
                        continue;
                fds[i] = open_tree(nodes_fd, s->source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (fds[i] < 0) {
                        r = -errno;
                        *failed = i;
                }
        }
        if (umount2(dir, MNT_DETACH) < 0 && r == 0) {
                r = -errno;
                *failed = 0;
        }
        return r;
}
