/* SPDX-License-Identifier: MIT */
/*
 * config.json -> the mount steps of a container's root. They run after the
 * child has pivoted into the bundle's root with the host's root detached, so
 * every target resolves inside the container (a symbolic link in the image
 * cannot lead a mount out of it); host bind sources are opened as fds before
 * the pivot. Order: the config's mounts, the devices the spec says a runtime
 * supplies, linux.devices, sysctls, masked and read-only paths, and a
 * read-only root last.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "rootfs/mounts.h"
#include "rootfs/rootfs.h"
#include "runtime/oci/plan.h"
#include "runtime/run.h"

#define MS_ATTR_FLAGS                                                                              \
        (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME | \
         MS_STRICTATIME)

/* mount(2) flags as mount_setattr attributes, for bind mounts. */
static uint64_t attr_of_flags(unsigned long flags)
{
        static const struct {
                unsigned long flag;
                uint64_t attr;
        } map[] = {
                {MS_RDONLY, MOUNT_ATTR_RDONLY},
                {MS_NOSUID, MOUNT_ATTR_NOSUID},
                {MS_NODEV, MOUNT_ATTR_NODEV},
                {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
                {MS_NOATIME, MOUNT_ATTR_NOATIME},
                {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME},
                {MS_STRICTATIME, MOUNT_ATTR_STRICTATIME},
        };
        uint64_t attr = 0;
        for (size_t i = 0; i < ARRAY_SIZE(map); i++)
                if (flags & map[i].flag)
                        attr |= map[i].attr;
        return attr;
}

/* The error of a failed rootfs_plan_add() and its kin. */
static int plan_error(int r, psrun_error *err)
{
        if (r == -E2BIG)
                return psrun_error_set(err, E2BIG, "mounts: more than %d mount steps",
                                       ROOTFS_MAX_STEPS);
        return r < 0 ? psrun_error_errno(err, r, "plan") : 0;
}

static int add(struct rootfs_plan *plan, const struct mount_step *s, psrun_error *err)
{
        return plan_error(rootfs_plan_add(plan, s), err);
}

static int mkdir_parents(struct rootfs_plan *plan, const char *path, psrun_error *err)
{
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return psrun_error_errno(err, ENOMEM, "plan");
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                int r = rootfs_plan_mkdir_p(plan, dir, 0755);
                if (r < 0)
                        return plan_error(r, err);
        }
        return 0;
}

/* The kernel's most lines in one uid_map or gid_map. */
#define ID_MAP_MAX_LINES 340

static int format_id_map(const struct oci_id_mapping *m, size_t n, size_t index, const char *field,
                         char **ret, psrun_error *err)
{
        if (n > ID_MAP_MAX_LINES)
                return psrun_error_set(err, E2BIG, "mounts[%zu].%s: %zu mappings, at most %d",
                                       index, field, n, ID_MAP_MAX_LINES);
        /* "4294967295 4294967295 4294967295\n" at most per line. */
        char *buf = malloc(n * 33 + 1);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "plan");
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++)
                off += (size_t) sprintf(buf + off, "%" PRIu32 " %" PRIu32 " %" PRIu32 "\n",
                                        m[i].container_id, m[i].host_id, m[i].size);
        *ret = buf;
        return 0;
}

/*
 * An idmapped bind (runc's rules): its own uidMappings and gidMappings,
 * both, written as a user namespace's maps (containerID inside, hostID
 * outside: an id on disk is read as containerID's range and seen as
 * hostID's); with "idmap"/"ridmap" and none, the container's user
 * namespace. Mappings alone imply "idmap".
 */
static int plan_idmap(const struct oci_mount *m, const struct oci_userns *u, size_t index,
                      struct mount_step *b, char **uids, char **gids, psrun_error *err)
{
        if (!m->idmap && !m->n_uid_mappings && !m->n_gid_mappings)
                return 0;
        b->idmap_recursive = m->idmap_recursive;
        if (m->n_uid_mappings || m->n_gid_mappings) {
                if (!m->n_uid_mappings || !m->n_gid_mappings)
                        return psrun_error_set(err, EINVAL,
                                               "mounts[%zu].%s: an idmapped mount needs both "
                                               "uidMappings and gidMappings",
                                               index,
                                               m->n_uid_mappings ? "gidMappings" : "uidMappings");
                int r = format_id_map(m->uid_mappings, m->n_uid_mappings, index, "uidMappings",
                                      uids, err);
                if (r >= 0)
                        r = format_id_map(m->gid_mappings, m->n_gid_mappings, index, "gidMappings",
                                          gids, err);
                b->idmap_uids = *uids;
                b->idmap_gids = *gids;
                return r;
        }
        if (u && u->path) {
                b->idmap_userns = u->path;
                return 0;
        }
        if (u && u->new_userns) {
                b->idmap_uids = u->uid_map;
                b->idmap_gids = u->gid_map;
                return 0;
        }
        return psrun_error_set(err, EINVAL,
                               "mounts[%zu].options: \"%s\" without uidMappings and gidMappings "
                               "needs a user namespace to take them from",
                               index, m->idmap_recursive ? "ridmap" : "idmap");
}

static int add_bind(struct rootfs_plan *plan, const struct oci_mount *m, const char *bundle,
                    const struct oci_userns *userns, size_t index, psrun_error *err)
{
        _cleanup_free_ char *source = NULL;
        if (!m->source)
                return psrun_error_set(err, EINVAL, "mounts[%zu].source: a bind mount needs one",
                                       index);
        if (m->source[0] == '/')
                source = strdup(m->source);
        else if (asprintf(&source, "%s/%s", bundle, m->source) < 0)
                source = NULL;
        if (!source)
                return psrun_error_errno(err, ENOMEM, "plan");
        struct stat st;
        if (stat(source, &st) < 0)
                return psrun_error_errno(err, errno, "mounts[%zu].source: %s", index, source);

        int r;
        if (S_ISDIR(st.st_mode)) {
                r = rootfs_plan_mkdir_p(plan, m->destination, 0755);
                r = plan_error(r, err);
        } else {
                r = mkdir_parents(plan, m->destination, err);
                struct mount_step f = {
                        .op = MOUNT_OP_MKFILE, .target = m->destination, .mode = 0644};
                if (r >= 0)
                        r = add(plan, &f, err);
        }
        if (r < 0)
                return r;
        struct mount_step b = {
                .op = MOUNT_OP_BIND,
                .source = source,
                .target = m->destination,
                .from_host = true,
                .single = m->bind != OCI_BIND_RECURSIVE,
                .peers = m->propagation & (MS_SHARED | MS_SLAVE),
                /* As mount(8) does: flags apply to the bind mount itself. */
                .attr_set = attr_of_flags(m->flags),
        };
        _cleanup_free_ char *uids = NULL, *gids = NULL;
        r = plan_idmap(m, userns, index, &b, &uids, &gids, err);
        if (r >= 0)
                r = add(plan, &b, err);
        if (r >= 0 && (m->attr_set || m->attr_clr)) {
                /* rro, rnosuid...: the whole tree. */
                struct mount_step a = {.op = MOUNT_OP_SETATTR,
                                       .target = m->destination,
                                       .attr_set = m->attr_set,
                                       .recursive = true};
                r = add(plan, &a, err);
        }
        if (r >= 0 && m->propagation) {
                /* shared, slave, private, unbindable (r*: the whole tree) on
                 * the bind mount, as mount(8) applies them after binding. */
                struct mount_step p = {
                        .op = MOUNT_OP_MOUNT, .target = m->destination, .flags = m->propagation};
                r = add(plan, &p, err);
        }
        return r;
}

/* The controllers of a v1 hierarchy from its super options ("rw,cpu,cpuacct"
 * -> "cpu,cpuacct"); "" for cgroup2. */
static void hierarchy_controllers(char *super, bool v2, char *data, size_t len)
{
        data[0] = '\0';
        for (char *save = NULL, *o = strtok_r(super, ",", &save); o && !v2;
             o = strtok_r(NULL, ",", &save)) {
                if (strcmp(o, "rw") == 0 || strcmp(o, "ro") == 0)
                        continue;
                if (data[0])
                        strncat(data, ",", len - strlen(data) - 1);
                strncat(data, o, len - strlen(data) - 1);
        }
}

/* A cgroup mount's read-only-ness: read-only unless the config says "rw"
 * (a writable view of its own limits is something to ask for). */
static uint64_t cgroup_attrs(const struct oci_mount *m)
{
        bool rw = (m->clear_flags & MS_RDONLY) && !(m->flags & MS_RDONLY);
        return attr_of_flags(m->flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC)) |
               (rw ? 0 : MOUNT_ATTR_RDONLY);
}

/* The container's own cgroup in the hierarchy mounted at mnt, bound at
 * target: a BIND step whose fstype "cgroup" marks it as waiting for the
 * cgroup (oci_rootfs_own_cgroup() appends the container's path in that
 * hierarchy to the source, or turns it into a no-op without one). data: the
 * hierarchy's controllers ("" for cgroup2). */
static int add_own_cgroup_bind(struct rootfs_plan *plan, const struct oci_mount *m, const char *mnt,
                               const char *controllers, const char *target, psrun_error *err)
{
        struct mount_step b = {
                .op = MOUNT_OP_BIND,
                .source = mnt,
                .target = target,
                .fstype = "cgroup",
                .data = controllers,
                .from_host = true,
                .single = true,
                .attr_set = cgroup_attrs(m),
        };
        return add(plan, &b, err);
}

/* cgroup (v1) on a v1 or hybrid host: a read-only tmpfs holding each of the
 * host's hierarchies. In a cgroup namespace each is a new mount, rooted at
 * the namespace's cgroup. Without one a new mount would show the host's
 * whole hierarchy (every other container's cgroups too): there each is a
 * bind of the container's own cgroup directory, as runc does. */
static int add_cgroup_v1(struct rootfs_plan *plan, const struct oci_mount *m, bool cgroupns,
                         psrun_error *err)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return psrun_error_errno(err, errno, "mounts: %s: read /proc/self/mountinfo",
                                         m->destination);
        unsigned long flags = (m->flags & MS_ATTR_FLAGS) & ~(unsigned long) MS_RDONLY;
        struct mount_step tmpfs = {
                .op = MOUNT_OP_MOUNT,
                .source = "tmpfs",
                .fstype = "tmpfs",
                .target = m->destination,
                .flags = flags,
                .data = "mode=755",
        };
        int r = add(plan, &tmpfs, err);
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        while (r >= 0 && getline(&line, &cap, f) > 0) {
                /* "... <mount point> <opts> ... - <fstype> <source> <super opts>" */
                char mnt[512], fstype[32], super[512];
                char *dash = strstr(line, " - ");
                if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
                    sscanf(dash + 3, "%31s %*s %511s", fstype, super) != 2)
                        continue;
                bool v2 = strcmp(fstype, "cgroup2") == 0;
                if (strcmp(fstype, "cgroup") != 0 && !v2)
                        continue;
                const char *base = strrchr(mnt, '/');
                if (!base || !base[1] || strncmp(mnt, "/sys/fs/cgroup/", 15) != 0)
                        continue;
                /* The controllers are the super options that are not rw/ro. */
                char data[512];
                hierarchy_controllers(super, v2, data, sizeof(data));
                char target[1024];
                snprintf(target, sizeof(target), "%s/%s", m->destination, base + 1);
                struct mount_step d = {.op = MOUNT_OP_MKDIR, .target = target, .mode = 0755};
                struct mount_step c = {
                        .op = MOUNT_OP_MOUNT,
                        .source = v2 ? "cgroup2" : "cgroup",
                        .fstype = v2 ? "cgroup2" : "cgroup",
                        .target = target,
                        .flags = m->flags & MS_ATTR_FLAGS,
                        .data = v2 ? NULL : data,
                };
                r = add(plan, &d, err);
                if (r >= 0 && cgroupns)
                        r = add(plan, &c, err);
                else if (r >= 0)
                        r = add_own_cgroup_bind(plan, m, mnt, data, target, err);
        }
        if (r < 0 || (cgroupns && !(m->flags & MS_RDONLY)))
                return r;
        struct mount_step ro = {
                .op = MOUNT_OP_SETATTR, .target = m->destination, .attr_set = MOUNT_ATTR_RDONLY};
        return add(plan, &ro, err);
}

int oci_rootfs_own_cgroup(struct rootfs_plan *plan, char *const *paths, psrun_error *err)
{
        for (size_t i = 0; i < plan->n_steps; i++) {
                struct mount_step *s = &plan->steps[i];
                if (s->op != MOUNT_OP_BIND || !s->fstype || strcmp(s->fstype, "cgroup") != 0)
                        continue;
                /* "memory:/a/b", "cpu,cpuacct:/a/b", "0::/a/b" (cgroup2). */
                const char *rel = NULL;
                for (char *const *p = paths; p && *p && !rel; p++) {
                        const char *colon = strrchr(*p, ':');
                        if (!colon)
                                continue;
                        if (!s->data[0]) {
                                if (strncmp(*p, "0::", 3) == 0)
                                        rel = *p + 3;
                                continue;
                        }
                        /* Any controller of the line in the hierarchy's list. */
                        char ctl[256];
                        size_t n = (size_t) (colon - *p);
                        if (n >= sizeof(ctl))
                                continue;
                        memcpy(ctl, *p, n);
                        ctl[n] = '\0';
                        char have[512];
                        snprintf(have, sizeof(have), ",%s,", s->data);
                        for (char *save = NULL, *c = strtok_r(ctl, ",", &save); c && !rel;
                             c = strtok_r(NULL, ",", &save)) {
                                char want[260];
                                snprintf(want, sizeof(want), ",%s,", c);
                                if (strstr(have, want))
                                        rel = colon + 1;
                        }
                }
                if (!rel) {
                        /* No cgroup of the container's there (--cgroup-manager
                         * disabled, a hierarchy psrun does not use): an empty
                         * directory, never the host's hierarchy. */
                        s->op = MOUNT_OP_MKDIR;
                        s->mode = 0755;
                        continue;
                }
                _cleanup_free_ char *source = NULL;
                if (asprintf(&source, "%s%s", s->source, strcmp(rel, "/") == 0 ? "" : rel) < 0)
                        return psrun_error_errno(err, ENOMEM, "plan");
                int r = rootfs_plan_set_source(plan, i, source);
                if (r < 0)
                        return psrun_error_errno(err, r, "plan");
        }
        return 0;
}

static bool host_is_cgroup2_only(void)
{
        /* /sys/fs/cgroup is itself cgroup2 on a unified host. */
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        while (f && getline(&line, &cap, f) > 0) {
                char mnt[512], fstype[32];
                char *dash = strstr(line, " - ");
                if (dash && sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1 &&
                    sscanf(dash + 3, "%31s", fstype) == 1 && strcmp(mnt, "/sys/fs/cgroup") == 0)
                        return strcmp(fstype, "cgroup2") == 0;
        }
        return false;
}

static int add_mount(struct rootfs_plan *plan, const struct oci_mount *m, const char *bundle,
                     const struct oci_userns *userns, bool cgroupns, size_t index, psrun_error *err)
{
        bool new_userns = userns && userns->new_userns;
        if (m->bind != OCI_BIND_NONE)
                return add_bind(plan, m, bundle, userns, index, err);
        if (!m->type)
                return psrun_error_set(err, EINVAL, "mounts[%zu].type: missing", index);
        if (m->idmap || m->n_uid_mappings || m->n_gid_mappings)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "mounts[%zu].%s: idmapped mounts are bind mounts only "
                                       "(type \"%s\")",
                                       index, m->idmap ? "options" : "uidMappings", m->type);
        int r = rootfs_plan_mkdir_p(plan, m->destination, 0755);
        if (r < 0)
                return plan_error(r, err);
        const char *type = m->type;
        if (strcmp(type, "cgroup") == 0 && !host_is_cgroup2_only()) {
                /* A v1 hierarchy cannot be mounted in a user namespace: with
                 * a cgroup namespace there the container gets an empty
                 * directory; without one, binds of its own cgroups (binds
                 * need no mount of a hierarchy). */
                if (new_userns && cgroupns)
                        return 0;
                return add_cgroup_v1(plan, m, cgroupns, err);
        }
        if (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0) {
                type = "cgroup2";
                /* Without a cgroup namespace: the container's own cgroup,
                 * not the host's whole hierarchy (add_cgroup_v1). */
                if (!cgroupns)
                        return add_own_cgroup_bind(plan, m, "/sys/fs/cgroup", "", m->destination,
                                                   err);
        }
        struct mount_step s = {
                .op = MOUNT_OP_MOUNT,
                .source = m->source ? m->source : type,
                .fstype = type,
                .target = m->destination,
                .flags = m->flags,
                .data = m->data,
                /* In a user namespace (a new one, or rootless psrun's
                 * own, as under rootless podman) the kernel lets proc and
                 * sysfs be mounted only where a full instance is visible:
                 * before the host's root leaves. An overlay's lowerdir,
                 * upperdir and workdir are host paths: made then too. (Made
                 * detached, attached in the config's order.) */
                .early = ((new_userns || (userns && userns->rootless)) &&
                          (strcmp(type, "proc") == 0 || strcmp(type, "sysfs") == 0)) ||
                         strcmp(type, "overlay") == 0,
        };
        r = add(plan, &s, err);
        if (r >= 0 && (m->attr_set || m->attr_clr)) {
                struct mount_step a = {.op = MOUNT_OP_SETATTR,
                                       .target = m->destination,
                                       .attr_set = m->attr_set,
                                       .recursive = true};
                r = add(plan, &a, err);
        }
        if (r >= 0 && m->propagation) {
                struct mount_step p = {
                        .op = MOUNT_OP_MOUNT, .target = m->destination, .flags = m->propagation};
                r = add(plan, &p, err);
        }
        return r;
}

static bool has_tmpfs_dev(const struct oci_config *c)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i].destination, "/dev") == 0)
                        return c->mounts[i].bind == OCI_BIND_NONE;
        return false;
}

static bool config_has_device(const char *path, const void *userdata)
{
        const struct oci_config *c = userdata;
        for (size_t i = 0; c->linux_ && i < c->linux_->n_devices; i++)
                if (strcmp(c->linux_->devices[i].path, path) == 0)
                        return true;
        return false;
}

/* config-linux.md "Default Devices": what a runtime supplies in a /dev of
 * its own making, less the nodes linux.devices makes itself. */
static int add_default_devices(struct rootfs_plan *plan, const struct oci_config *c,
                               psrun_error *err)
{
        const struct rootfs_dev_options o = {
                .skip = config_has_device, .skip_userdata = c, .single = true, .core_link = true};
        return plan_error(rootfs_add_default_devices(plan, &o), err);
}

/* The host id a container id maps to: through the config's mappings, or
 * psrun's own range when it gives none (runtime/oci/plan.c). */
static int host_id(const struct oci_id_mapping *m, size_t n, uint32_t id, uint32_t *ret)
{
        if (n == 0) {
                if (id >= PSRUN_ID_COUNT)
                        return -ERANGE;
                *ret = PSRUN_ID_BASE + id;
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                if (id >= m[i].container_id && id - m[i].container_id < m[i].size) {
                        *ret = m[i].host_id + (id - m[i].container_id);
                        return 0;
                }
        return -ERANGE;
}

/* Rootless: no node can be made, not even in a tmpfs of psrun's (mknod
 * needs CAP_MKNOD of the initial user namespace): the host's node at the
 * same path is bound, when it is the device the config names. Its owner
 * and mode stay the host's, as with runc. */
static int add_host_device(struct rootfs_plan *plan, const struct oci_device *d, size_t i,
                           mode_t mode, dev_t dev, psrun_error *err)
{
        struct stat st;
        const char *why = NULL;
        if (stat(d->path, &st) < 0)
                why = strerror(errno);
        else if ((st.st_mode & S_IFMT) != (mode & S_IFMT) || st.st_rdev != dev)
                why = "the host's node there is another device";
        if (why)
                return psrun_error_set(err, EPERM,
                                       "linux.devices[%zu]: %s: a rootless container gets the "
                                       "host's device node bound (a user makes none), and %s",
                                       i, d->path, why);
        struct mount_step f = {.op = MOUNT_OP_MKFILE, .target = d->path, .mode = 0600};
        struct mount_step b = {.op = MOUNT_OP_BIND,
                               .source = d->path,
                               .target = d->path,
                               .from_host = true,
                               .single = true};
        int r = add(plan, &f, err);
        return r < 0 ? r : add(plan, &b, err);
}

static int add_devices(struct rootfs_plan *plan, const struct oci_config *c, bool new_userns,
                       bool rootless, psrun_error *err)
{
        const struct oci_linux *l = c->linux_;
        for (size_t i = 0; l && i < l->n_devices; i++) {
                const struct oci_device *d = &l->devices[i];
                int r = mkdir_parents(plan, d->path, err);
                if (r < 0)
                        return r;
                mode_t mode = (mode_t) d->type |
                              (d->file_mode.set ? (mode_t) d->file_mode.value & 07777 : 0666);
                uid_t uid = d->uid.set ? (uid_t) d->uid.value : 0;
                gid_t gid = d->gid.set ? (gid_t) d->gid.value : 0;
                dev_t dev = makedev((unsigned) d->major, (unsigned) d->minor);
                if (rootless) {
                        r = add_host_device(plan, d, i, mode, dev, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (new_userns) {
                        /* No mknod in a user namespace: the parent makes the
                         * node (the config's, not whatever the host has at
                         * that path), owned by the host ids of uid and gid,
                         * and the child binds it, as crun does. */
                        uint32_t hu, hg;
                        if (host_id(l->uid_mappings, l->n_uid_mappings, uid, &hu) < 0)
                                return psrun_error_set(err, ERANGE,
                                                       "linux.devices[%zu].uid: %u is not mapped "
                                                       "in the user namespace",
                                                       i, (unsigned) uid);
                        if (host_id(l->gid_mappings, l->n_gid_mappings, gid, &hg) < 0)
                                return psrun_error_set(err, ERANGE,
                                                       "linux.devices[%zu].gid: %u is not mapped "
                                                       "in the user namespace",
                                                       i, (unsigned) gid);
                        char name[24];
                        snprintf(name, sizeof(name), "%zu", i);
                        struct mount_step f = {
                                .op = MOUNT_OP_MKFILE, .target = d->path, .mode = 0600};
                        struct mount_step b = {.op = MOUNT_OP_BIND,
                                               .source = name,
                                               .target = d->path,
                                               .from_host = true,
                                               .node = true,
                                               .single = true,
                                               .mode = mode,
                                               .dev = dev,
                                               .uid = (uid_t) hu,
                                               .gid = (gid_t) hg};
                        r = add(plan, &f, err);
                        if (r >= 0)
                                r = add(plan, &b, err);
                } else {
                        struct mount_step n = {
                                .op = MOUNT_OP_MKNOD,
                                .target = d->path,
                                .mode = mode,
                                .dev = dev,
                                .chown = true,
                                .uid = uid,
                                .gid = gid,
                        };
                        r = add(plan, &n, err);
                }
                if (r < 0)
                        return psrun_error_prefix(err, "linux.devices[%zu]", i);
        }
        return 0;
}

/* Sysctls the kernel keeps per namespace, and which namespace; anything else
 * would change the host (with no user namespace, the container's root could
 * write it). A name ending in '.' is a prefix. */
static const struct {
        const char *name;
        int ns;
} namespaced_sysctls[] = {
        {"kernel.msgmax", CLONE_NEWIPC},   {"kernel.msgmnb", CLONE_NEWIPC},
        {"kernel.msgmni", CLONE_NEWIPC},   {"kernel.sem", CLONE_NEWIPC},
        {"kernel.shmall", CLONE_NEWIPC},   {"kernel.shmmax", CLONE_NEWIPC},
        {"kernel.shmmni", CLONE_NEWIPC},   {"kernel.shm_rmid_forced", CLONE_NEWIPC},
        {"fs.mqueue.", CLONE_NEWIPC},      {"net.", CLONE_NEWNET},
        {"kernel.hostname", CLONE_NEWUTS}, {"kernel.domainname", CLONE_NEWUTS},
};

static int check_sysctl(const char *key, uint64_t flags, psrun_error *err)
{
        if (!key[0] || key[0] == '.' || strstr(key, "..") || strchr(key, '/'))
                return psrun_error_set(err, EINVAL, "linux.sysctl: \"%s\": not a sysctl name", key);
        /* As runc and crun: the hostname has its own field, and two sources
         * for one value would disagree. */
        if (strcmp(key, "kernel.hostname") == 0)
                return psrun_error_set(err, EINVAL,
                                       "linux.sysctl: \"kernel.hostname\": set the hostname "
                                       "field instead");
        for (size_t i = 0; i < ARRAY_SIZE(namespaced_sysctls); i++) {
                const char *name = namespaced_sysctls[i].name;
                size_t len = strlen(name);
                bool match = name[len - 1] == '.' ? strncmp(key, name, len) == 0
                                                  : strcmp(key, name) == 0;
                if (!match)
                        continue;
                int ns = namespaced_sysctls[i].ns;
                if (flags & (uint64_t) ns)
                        return 0;
                return psrun_error_set(err, EPERM, "linux.sysctl: \"%s\": needs a new %s namespace",
                                       key, oci_namespace_to_string(ns));
        }
        return psrun_error_set(err, EPERM,
                               "linux.sysctl: \"%s\": not namespaced: setting it would change the "
                               "host",
                               key);
}

static int add_sysctls(struct rootfs_plan *plan, const struct oci_config *c, uint64_t ns_flags,
                       psrun_error *err)
{
        for (size_t i = 0; c->linux_ && i < c->linux_->n_sysctl; i++) {
                const struct oci_kv *kv = &c->linux_->sysctl[i];
                int r = check_sysctl(kv->key, ns_flags, err);
                if (r < 0)
                        return r;
                char path[512];
                snprintf(path, sizeof(path), "/proc/sys/%s", kv->key);
                for (char *p = path + 10; *p; p++)
                        if (*p == '.')
                                *p = '/';
                struct mount_step w = {
                        .op = MOUNT_OP_WRITE,
                        .target = path,
                        .data = kv->value,
                        .data_len = strlen(kv->value),
                        .existing = true,
                };
                r = add(plan, &w, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_masks(struct rootfs_plan *plan, const struct oci_linux *l, psrun_error *err)
{
        if (!l)
                return 0;
        return plan_error(rootfs_add_masks(plan, (const char *const *) l->masked_paths,
                                           (const char *const *) l->readonly_paths),
                          err);
}

/* Appends "/comp" (n bytes) to path. */
static int path_push(char **path, const char *comp, size_t n)
{
        char *joined = NULL;
        if (asprintf(&joined, "%s/%.*s", *path, (int) n, comp) < 0)
                return -ENOMEM;
        free(*path);
        *path = joined;
        return 0;
}

/* dest as the container will see it: its symbolic links in the image
 * resolved the way the kernel resolves them with the image as "/" (".."
 * stops at the root, absolute targets start from it), as runc's
 * SecureJoin does. The mount then lands where the link points inside the
 * root ("/etc/localtime" -> "/usr/share/zoneinfo/..."), and missing
 * directories are made there, not ELOOP on the link. Only lstat and
 * readlink on paths whose every directory is already resolved: nothing is
 * followed outside the image. The child resolves the result inside the
 * pivoted root again, so a link changed in between cannot lead out. */
static int resolve_in_image(const char *rootfs, const char *dest, char **ret)
{
        _cleanup_free_ char *done = strdup("");
        _cleanup_free_ char *todo = strdup(dest);
        if (!done || !todo)
                return -ENOMEM;
        int links = 0;
        bool missing = false; /* below a missing component nothing is a link */
        while (todo[0]) {
                char *p = todo;
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                const char *rest = p + n;
                if (n == 0)
                        break;
                if (n == 1 && p[0] == '.') {
                        memmove(todo, rest, strlen(rest) + 1);
                        continue;
                }
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        char *slash = strrchr(done, '/');
                        if (slash)
                                *slash = '\0';
                        memmove(todo, rest, strlen(rest) + 1);
                        missing = false;
                        continue;
                }
                _cleanup_free_ char *candidate = strdup(done);
                if (!candidate || path_push(&candidate, p, n) < 0)
                        return -ENOMEM;
                char host[PATH_MAX], link[PATH_MAX];
                struct stat st;
                ssize_t len = -1;
                if (!missing &&
                    snprintf(host, sizeof(host), "%s%s", rootfs, candidate) < (int) sizeof(host)) {
                        if (lstat(host, &st) < 0)
                                missing = true;
                        else if (S_ISLNK(st.st_mode))
                                len = readlink(host, link, sizeof(link) - 1);
                }
                if (len > 0 && ++links <= 40) {
                        link[len] = '\0';
                        char *next = NULL;
                        if (asprintf(&next, "%s%s", link, rest) < 0)
                                return -ENOMEM;
                        free(todo);
                        todo = next;
                        if (link[0] == '/')
                                done[0] = '\0';
                        continue;
                }
                if (len > 0)
                        return -ELOOP;
                free(done);
                done = TAKE_PTR(candidate);
                memmove(todo, rest, strlen(rest) + 1);
        }
        if (!done[0] && path_push(&done, "", 0) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(done);
        return 0;
}

int oci_rootfs_plan(const struct oci_config *c, const char *bundle, const struct oci_userns *userns,
                    struct rootfs_plan *plan, psrun_error *err)
{
        bool new_userns = userns && userns->new_userns;
        uint64_t ns_flags = 0;
        bool cgroupns = false; /* new or joined */
        for (size_t i = 0; c->linux_ && i < c->linux_->n_namespaces; i++) {
                if (!c->linux_->namespaces[i].path)
                        ns_flags |= (uint64_t) c->linux_->namespaces[i].type;
                if (c->linux_->namespaces[i].type == CLONE_NEWCGROUP)
                        cgroupns = true;
        }
        _cleanup_free_ char *joined = NULL, *rootfs = NULL;
        if (c->root.path[0] == '/')
                joined = strdup(c->root.path);
        else if (asprintf(&joined, "%s/%s", bundle, c->root.path) < 0)
                joined = NULL;
        if (!joined)
                return psrun_error_errno(err, ENOMEM, "plan");
        rootfs = realpath(joined, NULL);
        if (!rootfs)
                return psrun_error_errno(err, errno, "root.path: %s", joined);
        int r = 0;
        for (size_t i = 0; r >= 0 && i < c->n_mounts; i++) {
                struct oci_mount m = c->mounts[i];
                _cleanup_free_ char *dest = NULL;
                r = resolve_in_image(rootfs, m.destination, &dest);
                if (r < 0)
                        return psrun_error_errno(err, r, "mounts[%zu].destination: %s", i,
                                                 m.destination);
                m.destination = dest;
                r = add_mount(plan, &m, bundle, userns, cgroupns, i, err);
        }
        if (r >= 0 && has_tmpfs_dev(c))
                r = add_default_devices(plan, c, err);
        if (r >= 0)
                r = add_devices(plan, c, new_userns, userns && userns->rootless, err);
        if (r >= 0 && c->process && c->process->cwd) {
                /* runc makes a missing working directory. */
                r = rootfs_plan_mkdir_p(plan, c->process->cwd, 0755);
                r = plan_error(r, err);
        }
        if (r >= 0)
                r = add_sysctls(plan, c, ns_flags, err);
        if (r >= 0)
                r = add_masks(plan, c->linux_, err);
        if (r >= 0 && c->root.readonly) {
                struct mount_step ro = {
                        .op = MOUNT_OP_SETATTR, .target = "/", .attr_set = MOUNT_ATTR_RDONLY};
                r = add(plan, &ro, err);
        }
        return r;
}
