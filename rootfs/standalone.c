/* SPDX-License-Identifier: MIT */
/* The root of `psrun run`: the host's system directories read-only, and
 * nothing else of the host. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "rootfs/rootfs.h"

/* The host directories a program needs to run. /etc is synthesized; /home,
 * /root, /run, /var, /srv, /opt, /mnt, /media and the rest never enter. */
static const char *const system_dirs[] = {"/usr",   "/bin",   "/sbin",   "/lib",
                                          "/lib32", "/lib64", "/libx32", NULL};

/* Scratch for overlay upper layers when the root is writable; detached once
 * the overlays hold it. */
#define SCRATCH "/.scratch"

static int add_system_dir(struct rootfs_plan *plan, const struct rootfs_options *o, const char *dir)
{
        struct stat st;
        if (lstat(dir, &st) < 0)
                return 0;
        if (S_ISLNK(st.st_mode)) {
                /* merged /usr: /bin -> usr/bin, keep the link as it is */
                char target[PATH_MAX];
                ssize_t n = readlink(dir, target, sizeof(target) - 1);
                if (n < 0)
                        return -errno;
                target[n] = '\0';
                struct mount_step l = {.op = MOUNT_OP_SYMLINK, .source = target, .target = dir};
                return rootfs_plan_add(plan, &l);
        }
        if (!S_ISDIR(st.st_mode))
                return 0;

        char src[PATH_MAX];
        snprintf(src, sizeof(src), ROOTFS_OLDROOT "%s", dir);
        int r = rootfs_plan_mkdir_p(plan, dir, 0755);
        if (r < 0)
                return r;
        if (o->readonly) {
                struct mount_step b = {
                        .op = MOUNT_OP_BIND,
                        .source = dir,
                        .target = dir,
                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                        .recursive = true,
                        .from_host = true,
                };
                return rootfs_plan_add(plan, &b);
        }

        /* Writable root: an overlay per directory, the host's copy as the
         * lower layer, changes in a tmpfs that dies with the sandbox. */
        char upper[PATH_MAX], work[PATH_MAX], data[3 * PATH_MAX + 64];
        snprintf(upper, sizeof(upper), SCRATCH "%s.upper", dir);
        snprintf(work, sizeof(work), SCRATCH "%s.work", dir);
        snprintf(data, sizeof(data), "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", src, upper,
                 work);
        struct mount_step steps[] = {
                {.op = MOUNT_OP_MKDIR, .target = upper, .mode = 0755},
                {.op = MOUNT_OP_MKDIR, .target = work, .mode = 0755},
                {.op = MOUNT_OP_MOUNT,
                 .source = "overlay",
                 .fstype = "overlay",
                 .target = dir,
                 .data = data,
                 .flags = MS_NOSUID | MS_NODEV},
        };
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(steps); i++)
                r = rootfs_plan_add(plan, &steps[i]);
        return r;
}

static int add_tmpfs(struct rootfs_plan *plan, const char *path, mode_t mode, uint64_t size,
                     uid_t uid, gid_t gid)
{
        char data[128];
        snprintf(data, sizeof(data), "mode=%04o,size=%llu,uid=%u,gid=%u", (unsigned) mode,
                 (unsigned long long) size, (unsigned) uid, (unsigned) gid);
        int r = rootfs_plan_mkdir_p(plan, path, mode);
        struct mount_step m = {
                .op = MOUNT_OP_MOUNT,
                .source = "tmpfs",
                .fstype = "tmpfs",
                .target = path,
                .data = data,
                .flags = MS_NOSUID | MS_NODEV,
        };
        return r < 0 ? r : rootfs_plan_add(plan, &m);
}

static int add_user_mount(struct rootfs_plan *plan, const struct rootfs_user_mount *m, size_t index,
                          psrun_error *err)
{
        /* The host path is resolved here, by the user who runs psrun; the
         * child binds exactly what was resolved. */
        char real[PATH_MAX];
        if (!realpath(m->source, real))
                return psrun_error_errno(err, errno, "mounts[%zu].source: %s", index, m->source);
        struct stat st;
        if (stat(real, &st) < 0)
                return psrun_error_errno(err, errno, "mounts[%zu].source: %s", index, m->source);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return psrun_error_set(err, EINVAL,
                                       "mounts[%zu].source: %s is neither a directory nor a "
                                       "regular file",
                                       index, m->source);

        _cleanup_free_ char *parent = strdup(m->target);
        if (!parent)
                return -ENOMEM;
        char *slash = strrchr(parent, '/');
        if (slash == parent)
                slash[1] = '\0';
        else
                *slash = '\0';

        int r = strcmp(parent, "/") == 0 ? 0 : rootfs_plan_mkdir_p(plan, parent, 0755);
        struct mount_step mp = {
                .op = S_ISDIR(st.st_mode) ? MOUNT_OP_MKDIR : MOUNT_OP_MKFILE,
                .target = m->target,
                .mode = S_ISDIR(st.st_mode) ? 0755 : 0644,
        };
        uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (m->readonly)
                attr |= MOUNT_ATTR_RDONLY;
        struct mount_step b = {.op = MOUNT_OP_BIND,
                               .source = real,
                               .target = m->target,
                               .attr_set = attr,
                               .recursive = true,
                               .from_host = true};
        if (r >= 0)
                r = rootfs_plan_add(plan, &mp);
        if (r >= 0)
                r = rootfs_plan_add(plan, &b);
        return r < 0 ? psrun_error_errno(err, r, "mounts[%zu]", index) : 0;
}

int rootfs_plan_standalone(const struct rootfs_options *o, struct rootfs_plan *plan,
                           psrun_error *err)
{
        int r = 0;
        if (!o->readonly)
                r = add_tmpfs(plan, SCRATCH, 0700, o->workspace_size, 0, 0);
        for (const char *const *d = system_dirs; r >= 0 && *d; d++)
                r = add_system_dir(plan, o, *d);
        if (r >= 0 && !o->readonly) {
                struct mount_step detach = {.op = MOUNT_OP_DETACH, .target = SCRATCH};
                r = rootfs_plan_add(plan, &detach);
        }
        if (r >= 0)
                r = rootfs_add_etc(plan, o);
        if (r >= 0)
                r = add_tmpfs(plan, "/workspace", 0755, o->workspace_size, o->uid, o->gid);
        if (r >= 0)
                r = add_tmpfs(plan, "/tmp", 01777, o->tmp_size, 0, 0);
        if (r >= 0)
                r = rootfs_add_dev(plan, o->tmp_size, o->pty_limit);
        if (r >= 0)
                r = rootfs_add_proc(plan, rootfs_default_masked_paths,
                                    rootfs_default_readonly_paths);
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: plan");

        for (size_t i = 0; i < o->n_mounts; i++) {
                r = add_user_mount(plan, &o->mounts[i], i, err);
                if (r < 0)
                        return r;
        }

        /* A workdir inside the writable space is created for the user, as a
         * shell's `mkdir -p && cd` would; elsewhere it must exist. */
        if (o->workdir &&
            (strncmp(o->workdir, "/workspace/", 11) == 0 || strncmp(o->workdir, "/tmp/", 5) == 0)) {
                _cleanup_free_ char *dir = strdup(o->workdir);
                if (!dir)
                        return psrun_error_errno(err, ENOMEM, "rootfs: plan");
                /* Each missing component below the tmpfs, owned by the user. */
                for (char *p = strchr(dir + 1, '/') + 1;; p++) {
                        if (*p != '/' && *p != '\0')
                                continue;
                        char saved = *p;
                        *p = '\0';
                        struct mount_step m = {.op = MOUNT_OP_MKDIR,
                                               .target = dir,
                                               .mode = 0755,
                                               .chown = true,
                                               .uid = o->uid,
                                               .gid = o->gid};
                        r = rootfs_plan_add(plan, &m);
                        if (r < 0)
                                return psrun_error_errno(err, r, "rootfs: plan");
                        *p = saved;
                        if (saved == '\0')
                                break;
                }
        }

        /* The host's root leaves the sandbox's view for good. */
        struct mount_step detach = {.op = MOUNT_OP_DETACH, .target = ROOTFS_OLDROOT};
        r = rootfs_plan_add(plan, &detach);
        if (r >= 0 && o->readonly) {
                struct mount_step ro = {.op = MOUNT_OP_SETATTR,
                                        .target = "/",
                                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                    MOUNT_ATTR_NODEV};
                r = rootfs_plan_add(plan, &ro);
        }
        return r < 0 ? psrun_error_errno(err, r, "rootfs: plan") : 0;
}
