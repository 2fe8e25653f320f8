/* SPDX-License-Identifier: MIT */
/* A synthesized /etc: just enough for libc, shells and interpreters. The
 * host's /etc (shadow, ssh keys, credentials, configs) never enters. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mount.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "rootfs/rootfs.h"

/* Host files that say nothing about the host's users or secrets but that
 * programs need: the dynamic linker cache, alternatives symlinks, CA
 * certificates, timezone, protocol and service names. */
static const char *const host_etc_entries[] = {
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/alternatives",
        "/etc/ssl/certs",
        "/etc/localtime",
        "/etc/os-release",
        "/etc/protocols",
        "/etc/services",
        "/etc/mime.types",
        NULL,
};

static int add_file(struct rootfs_plan *plan, const char *path, const char *text)
{
        struct mount_step s = {.op = MOUNT_OP_WRITE,
                               .target = path,
                               .data = text,
                               .data_len = strlen(text),
                               .mode = 0644};
        return rootfs_plan_add(plan, &s);
}

static int add_host_entry(struct rootfs_plan *plan, const char *path)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return 0; /* absent on this host: nothing to carry over */

        _cleanup_free_ char *parent = strdup(path);
        if (!parent)
                return -ENOMEM;
        *strrchr(parent, '/') = '\0';
        int r = rootfs_plan_mkdir_p(plan, parent, 0755);
        if (r < 0)
                return r;

        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlink(path, target, sizeof(target) - 1);
                if (n < 0)
                        return 0;
                target[n] = '\0';
                struct mount_step l = {.op = MOUNT_OP_SYMLINK, .source = target, .target = path};
                return rootfs_plan_add(plan, &l);
        }
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return 0;

        struct mount_step mp = {
                .op = S_ISDIR(st.st_mode) ? MOUNT_OP_MKDIR : MOUNT_OP_MKFILE,
                .target = path,
                .mode = S_ISDIR(st.st_mode) ? 0755 : 0644,
        };
        struct mount_step b = {
                .op = MOUNT_OP_BIND,
                .source = path,
                .target = path,
                .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                .recursive = true,
                .optional = true,
                .from_host = true,
        };
        r = rootfs_plan_add(plan, &mp);
        return r < 0 ? r : rootfs_plan_add(plan, &b);
}

static const char nsswitch[] = "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
                               "networks: files\nprotocols: files\nservices: files\n";

void rootfs_etc_synth(const struct rootfs_options *o, struct rootfs_etc *e)
{
        int n = snprintf(e->passwd, sizeof(e->passwd),
                         "root:x:0:0:root:/workspace:/bin/sh\n"
                         "sandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n"
                         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
        if (o->uid != 0 && o->uid != 1000 && o->uid != 65534)
                snprintf(e->passwd + n, sizeof(e->passwd) - n,
                         "user:x:%u:%u:user:/workspace:/bin/sh\n", (unsigned) o->uid,
                         (unsigned) o->gid);
        n = snprintf(e->group, sizeof(e->group),
                     "root:x:0:\ntty:x:5:\nsandbox:x:1000:\nnogroup:x:65534:\n");
        if (o->gid != 0 && o->gid != 5 && o->gid != 1000 && o->gid != 65534)
                snprintf(e->group + n, sizeof(e->group) - n, "user:x:%u:\n", (unsigned) o->gid);
        snprintf(e->hosts, sizeof(e->hosts),
                 "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                 "127.0.1.1\t%s\n",
                 o->hostname);
        snprintf(e->hostname, sizeof(e->hostname), "%s\n", o->hostname);
        e->nsswitch = nsswitch;
        /* network none: no resolver; lookups of anything but /etc/hosts fail
         * fast. full and restricted: psrun's DNS proxy on the gateway. */
        e->resolv_conf = o->resolv_conf ? o->resolv_conf : "# psrun: no DNS in this sandbox\n";
}

void rootfs_etc_files(const struct rootfs_etc *e, struct rootfs_etc_file files[ROOTFS_ETC_FILES])
{
        const struct rootfs_etc_file f[ROOTFS_ETC_FILES] = {
                {"passwd", e->passwd},
                {"group", e->group},
                {"hosts", e->hosts},
                {"hostname", e->hostname},
                {"nsswitch.conf", e->nsswitch},
                {"resolv.conf", e->resolv_conf},
        };
        memcpy(files, f, sizeof(f));
}

int rootfs_add_etc(struct rootfs_plan *plan, const struct rootfs_options *o)
{
        struct rootfs_etc e;
        struct rootfs_etc_file files[ROOTFS_ETC_FILES];
        rootfs_etc_synth(o, &e);
        rootfs_etc_files(&e, files);
        int r = rootfs_plan_mkdir_p(plan, "/etc", 0755);
        for (size_t i = 0; r >= 0 && i < ROOTFS_ETC_FILES; i++) {
                char path[64];
                snprintf(path, sizeof(path), "/etc/%s", files[i].name);
                r = add_file(plan, path, files[i].text);
        }
        for (const char *const *p = host_etc_entries; r >= 0 && *p; p++)
                r = add_host_entry(plan, *p);
        return r;
}
