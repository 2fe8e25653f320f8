/* SPDX-License-Identifier: MIT */
/* /proc and /dev for a sandbox: fresh instances, nothing of the host's but a
 * few harmless device nodes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "common/cleanup.h"
#include "common/names.h"
#include "rootfs/rootfs.h"

/* What Docker masks and makes read-only by default; a sandbox should not see
 * less protection than a default container. */
const char *const rootfs_default_masked_paths[] = {
        "/proc/acpi",
        "/proc/asound",
        "/proc/interrupts",
        "/proc/kcore",
        "/proc/keys",
        "/proc/latency_stats",
        "/proc/timer_list",
        "/proc/timer_stats",
        "/proc/sched_debug",
        "/proc/scsi",
        "/sys/firmware",
        "/sys/devices/virtual/powercap",
        NULL,
};

const char *const rootfs_default_readonly_paths[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

const char *const rootfs_writable_paths[] = {"/workspace", "/tmp", "/dev", NULL};

int rootfs_add_proc(struct rootfs_plan *plan, const char *const *masked,
                    const char *const *readonly)
{
        int r = rootfs_plan_mkdir_p(plan, "/proc", 0555);
        if (r < 0)
                return r;
        struct mount_step proc = {
                .op = MOUNT_OP_MOUNT,
                .source = "proc",
                .fstype = "proc",
                .target = "/proc",
                .flags = MS_NOSUID | MS_NODEV | MS_NOEXEC,
        };
        r = rootfs_plan_add(plan, &proc);
        return r < 0 ? r : rootfs_add_masks(plan, masked, readonly);
}

int rootfs_add_masks(struct rootfs_plan *plan, const char *const *masked,
                     const char *const *readonly)
{
        int r = 0;
        for (const char *const *p = masked; r >= 0 && p && *p; p++) {
                struct mount_step m = {.op = MOUNT_OP_MASK, .target = *p, .optional = true};
                r = rootfs_plan_add(plan, &m);
        }
        for (const char *const *p = readonly; r >= 0 && p && *p; p++) {
                /* Bind onto itself, then read-only: a setattr alone would
                 * make the whole /proc read-only. */
                struct mount_step b = {
                        .op = MOUNT_OP_BIND,
                        .source = *p,
                        .target = *p,
                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                    MOUNT_ATTR_NOEXEC,
                        .recursive = true,
                        .optional = true,
                };
                r = rootfs_plan_add(plan, &b);
        }
        return r;
}

int rootfs_add_default_devices(struct rootfs_plan *plan, const struct rootfs_dev_options *o)
{
        static const char *const nodes[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                            "/dev/random", "/dev/urandom", "/dev/tty"};
        static const struct {
                const char *link, *target;
        } links[] = {
                {"/dev/ptmx", "pts/ptmx"},          {"/dev/fd", "/proc/self/fd"},
                {"/dev/stdin", "/proc/self/fd/0"},  {"/dev/stdout", "/proc/self/fd/1"},
                {"/dev/stderr", "/proc/self/fd/2"}, {"/dev/core", "/proc/kcore"},
        };
        int r = 0;
        /* Device nodes can't be created in a user namespace: bind the host's
         * harmless ones. */
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(nodes); i++) {
                if (o->skip && o->skip(nodes[i], o->skip_userdata))
                        continue;
                struct mount_step f = {.op = MOUNT_OP_MKFILE, .target = nodes[i], .mode = 0666};
                struct mount_step b = {
                        .op = MOUNT_OP_BIND,
                        .source = nodes[i],
                        .target = nodes[i],
                        .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                        .from_host = true,
                        .single = o->single,
                };
                r = rootfs_plan_add(plan, &f);
                if (r >= 0)
                        r = rootfs_plan_add(plan, &b);
        }
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(links); i++) {
                if (!o->core_link && streq(links[i].link, "/dev/core"))
                        continue;
                struct mount_step l = {
                        .op = MOUNT_OP_SYMLINK, .source = links[i].target, .target = links[i].link};
                r = rootfs_plan_add(plan, &l);
        }
        return r;
}

int rootfs_add_dev(struct rootfs_plan *plan, uint64_t shm_size, uint64_t pty_limit)
{
        char opts[64], pts_opts[96];
        int r = rootfs_plan_mkdir_p(plan, "/dev", 0755);
        if (r < 0)
                return r;
        struct mount_step dev = {
                .op = MOUNT_OP_MOUNT,
                .source = "tmpfs",
                .fstype = "tmpfs",
                .target = "/dev",
                .data = "mode=0755,size=64k,nr_inodes=64",
                .flags = MS_NOSUID | MS_NOEXEC,
        };
        r = rootfs_plan_add(plan, &dev);
        if (r >= 0) {
                const struct rootfs_dev_options defaults = {0};
                r = rootfs_add_default_devices(plan, &defaults);
        }
        if (r < 0)
                return r;
        struct mount_step steps[] = {
                {.op = MOUNT_OP_MKDIR, .target = "/dev/pts", .mode = 0755},
                {.op = MOUNT_OP_MOUNT,
                 .source = "devpts",
                 .fstype = "devpts",
                 .target = "/dev/pts",
                 .data = pts_opts,
                 .flags = MS_NOSUID | MS_NOEXEC},
                {.op = MOUNT_OP_MKDIR, .target = "/dev/shm", .mode = 01777},
                {.op = MOUNT_OP_MOUNT,
                 .source = "shm",
                 .fstype = "tmpfs",
                 .target = "/dev/shm",
                 .data = opts,
                 .flags = MS_NOSUID | MS_NODEV | MS_NOEXEC},
        };
        snprintf(opts, sizeof(opts), "mode=1777,size=%llu", (unsigned long long) shm_size);
        /* A new instance with its own max=: the kernel's pool of ptys
         * (kernel.pty.max) is shared by every instance but the host's. */
        /* With one id mapped there is no tty group to own the ptys. */
        const char *tty_gid = plan->one_id ? "" : ",gid=5";
        if (pty_limit)
                snprintf(pts_opts, sizeof(pts_opts),
                         "newinstance,ptmxmode=0666,mode=0620%s,max=%llu", tty_gid,
                         (unsigned long long) pty_limit);
        else
                snprintf(pts_opts, sizeof(pts_opts), "newinstance,ptmxmode=0666,mode=0620%s",
                         tty_gid);
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(steps); i++)
                r = rootfs_plan_add(plan, &steps[i]);
        if (r < 0)
                return r;
        /* Nothing may be added to /dev later; pts and shm stay writable. */
        struct mount_step ro = {
                .op = MOUNT_OP_SETATTR, .target = "/dev", .attr_set = MOUNT_ATTR_RDONLY};
        return rootfs_plan_add(plan, &ro);
}
