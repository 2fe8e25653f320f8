/* SPDX-License-Identifier: MIT */
/*
 * Applying one mount step, in the child between clone3() and execve()
 * (runtime/child.c runs the list): async-signal-safe only, no allocation,
 * no stdio, the step read and never changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "rootfs/mounts.h"

/* An atime mode (noatime, strictatime) is a value in the MOUNT_ATTR__ATIME
 * field, not a bit: the kernel takes it only with that field cleared. */
static uint64_t atime_clear(uint64_t attr)
{
        return attr & MOUNT_ATTR__ATIME ? MOUNT_ATTR__ATIME : 0;
}

static int setattr(const char *target, uint64_t attr, bool recursive)
{
        struct mount_attr a = {.attr_set = attr, .attr_clr = atime_clear(attr)};
        if (mount_setattr(AT_FDCWD, target, recursive ? AT_RECURSIVE : 0, &a, sizeof(a)) < 0)
                return -errno;
        return 0;
}

static int give(const struct mount_step *s)
{
        if (s->chown && lchown(s->target, s->uid, s->gid) < 0)
                return -errno;
        return 0;
}

static int bind_from_fd(const struct mount_step *s, int tree)
{
        /* The detached copy of the source is made read-only (etc.) before it
         * is attached: never visible with weaker flags. */
        if (s->attr_set) {
                struct mount_attr a = {.attr_set = s->attr_set,
                                       .attr_clr = atime_clear(s->attr_set)};
                unsigned flags = AT_EMPTY_PATH | (s->recursive ? AT_RECURSIVE : 0);
                if (mount_setattr(tree, "", flags, &a, sizeof(a)) < 0)
                        return -errno;
        }
        if (move_mount(tree, "", AT_FDCWD, s->target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

int mount_step_apply(const struct mount_step *s, int host_fd)
{
        int fd, r;
        struct stat st;

        switch (s->op) {
        case MOUNT_OP_MKDIR:
                if (mkdir(s->target, s->mode) < 0 && errno != EEXIST)
                        return -errno;
                return give(s);
        case MOUNT_OP_MKFILE:
                /* A mount point: whatever is there already (a FIFO, a
                 * socket, a device node) is never opened for I/O, which
                 * could block on a FIFO or wake a device. */
                if (mknod(s->target, S_IFREG | (s->mode & 07777), 0) < 0 && errno != EEXIST)
                        return -errno;
                return give(s);
        case MOUNT_OP_SYMLINK:
                if (symlink(s->source, s->target) < 0 && errno != EEXIST)
                        return -errno;
                return 0;
        case MOUNT_OP_WRITE:
                fd = open(s->target,
                          O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (s->existing ? 0 : O_CREAT | O_TRUNC),
                          s->mode);
                if (fd < 0)
                        return -errno;
                r = write_all(fd, s->data, s->data_len);
                close(fd);
                return r < 0 ? r : give(s);
        case MOUNT_OP_BIND:
                if (s->from_host)
                        return host_fd < 0 ? -ENOENT : bind_from_fd(s, host_fd);
                /* MS_REC: a non-recursive bind of a tree with locked submounts
                 * is refused in a user namespace, and would hide them. */
                if (mount(s->source, s->target, NULL, MS_BIND | (s->single ? 0 : MS_REC), NULL) < 0)
                        return -errno;
                return s->attr_set ? setattr(s->target, s->attr_set, s->recursive) : 0;
        case MOUNT_OP_MOUNT:
                if (mount(s->source, s->target, s->fstype, s->flags, s->data) < 0)
                        return -errno;
                return s->attr_set ? setattr(s->target, s->attr_set, s->recursive) : 0;
        case MOUNT_OP_MASK:
                if (stat(s->target, &st) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode))
                        r = mount("psrun-mask", s->target, "tmpfs",
                                  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                  "size=0,nr_inodes=1,mode=0555");
                else
                        r = mount("/dev/null", s->target, NULL, MS_BIND, NULL);
                return r < 0 ? -errno : 0;
        case MOUNT_OP_SETATTR:
                return setattr(s->target, s->attr_set, s->recursive);
        case MOUNT_OP_MKNOD:
                if (mknod(s->target, s->mode, s->dev) < 0 && errno != EEXIST)
                        return -errno;
                return give(s);
        case MOUNT_OP_DETACH:
                if (umount2(s->target, MNT_DETACH) < 0)
                        return -errno;
                if (rmdir(s->target) < 0)
                        return -errno;
                return 0;
        default:
                return -EINVAL;
        }
}

/* "/proc/self/fd/<fd>" without snprintf (not async-signal-safe). */
static void fd_path(char buf[32], int fd)
{
        static const char prefix[] = "/proc/self/fd/";
        char digits[12];
        size_t n = 0;
        do
                digits[n++] = (char) ('0' + fd % 10);
        while ((fd /= 10) > 0);
        memcpy(buf, prefix, sizeof(prefix) - 1);
        size_t off = sizeof(prefix) - 1;
        while (n > 0)
                buf[off++] = digits[--n];
        buf[off] = '\0';
}

int mount_step_apply_early(const struct mount_step *s, int root_fd)
{
        /* The target, resolved inside the new root: a symbolic link in the
         * image cannot point the mount elsewhere. Mounted through its fd. */
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        const char *rel = s->target[0] == '/' ? s->target + 1 : s->target;
        int fd = (int) syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
        if (fd < 0 && errno == ENOENT && !strchr(rel, '/')) {
                if (mkdirat(root_fd, rel, 0555) < 0 && errno != EEXIST)
                        return -errno;
                fd = (int) syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
        }
        if (fd < 0)
                return -errno;
        char path[32];
        fd_path(path, fd);
        int r = mount(s->source, path, s->fstype, s->flags, s->data) < 0 ? -errno : 0;
        close(fd);
        return r;
}
