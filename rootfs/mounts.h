/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A root filesystem is described as a list of mount steps, built in the
 * parent and applied in order by the child after it has pivoted into a fresh
 * tmpfs with the host's root at /.oldroot. Steps carry only plain data so the
 * child can apply them without allocating.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* Where the host's root is while the new root is being built (for overlay
 * lower layers; bind sources are opened as fds before the pivot). */
#define ROOTFS_OLDROOT "/.oldroot"

enum mount_op {
        MOUNT_OP_MKDIR,   /* mkdir target (EEXIST is fine) */
        MOUNT_OP_MKFILE,  /* create an empty file as a bind target */
        MOUNT_OP_SYMLINK, /* symlink target -> source */
        MOUNT_OP_WRITE,   /* create target with data[0..data_len) */
        MOUNT_OP_BIND,    /* recursive bind source -> target, then attr_set */
        MOUNT_OP_MOUNT,   /* mount fstype (source) on target with flags/data, then attr_set */
        MOUNT_OP_MASK,    /* hide target: the host's /dev/null over a file, ro tmpfs over a dir */
        MOUNT_OP_SETATTR, /* mount_setattr(target, attr_set) on an existing mount */
        MOUNT_OP_DETACH,  /* umount2(MNT_DETACH) target, then rmdir it */
        MOUNT_OP_MKNOD,   /* mknod target (mode has the type) dev, then chown */
        _MOUNT_OP_MAX,
};

struct mount_step {
        enum mount_op op;
        const char *source;
        const char *target;
        const char *fstype;
        const char *data;
        size_t data_len;
        unsigned long flags; /* mount(2) flags for MOUNT_OP_MOUNT */
        uint64_t attr_set;   /* MOUNT_ATTR_* added after BIND/MOUNT, or by SETATTR */
        bool recursive;      /* attr_set applies to submounts too */
        bool from_host;      /* BIND: source is a host path, opened by the parent
                              * before clone3 (rootfs_sources_open), with the ids
                              * of the user who runs psrun */
        bool node;           /* BIND (from_host): no host path but a device node
                              * the parent makes (mode, dev, uid, gid: host ids)
                              * in a tmpfs of its own, source its name there: a
                              * user namespace cannot mknod (OCI linux.devices) */
        bool single;         /* BIND: the source mount alone, not its submounts */
        unsigned long peers; /* BIND (from_host): what the parent's clone keeps of the
                              * source's peer group: 0, private (nothing reaches
                              * the host or comes from it); MS_SLAVE, mounts made
                              * on the host below it come in; MS_SHARED, both ways.
                              * Only a config's (r)shared or (r)slave asks. */
        bool existing;       /* WRITE: the file must exist (sysctls): no create, no truncate */
        bool early;          /* MOUNT (OCI, user namespace): made (detached) before the
                              * pivot, while the host's /proc and /sys are still there to
                              * make a new instance "not too revealing"; attached in the
                              * steps' order, after the pivot */
        dev_t dev;           /* MKNOD */
        mode_t mode;
        bool chown; /* MKDIR/MKFILE/WRITE: give it to uid:gid (sandbox ids) */
        uid_t uid;
        gid_t gid;
        bool optional; /* a missing target (or source) is not an error */
        /* BIND (from_host): an idmapped mount (MOUNT_ATTR_IDMAP on the parent's
         * clone): ids on disk are read and written through the user namespace
         * with these uid_map and gid_map lines ("ns-id host-id count\n"...), or
         * through the one at idmap_userns (a path); on the top mount alone or
         * (idmap_recursive) on every mount of the tree. */
        const char *idmap_uids, *idmap_gids;
        const char *idmap_userns;
        bool idmap_recursive;
};

/* Most layers an image root may have (a manifest has at most 256): the
 * child of a rootless run keeps an fd of each on its stack. */
#define ROOTFS_MAX_LOWERS 256

/* Most steps one plan may hold: the child keeps a per-step fd on its stack
 * (it must not allocate), and no real root needs more than a few hundred. */
#define ROOTFS_MAX_STEPS 4096

/* An image root (rootfs/overlay.c): one overlayfs made by the parent,
 * attached by the child as its root. Its lower directories are the image's
 * layers, top first, under a tmpfs layer psrun writes per sandbox (the
 * synthesized /etc files, the mount points the steps mount on); with
 * `writable`, an upper directory in a tmpfs of upper_size bytes. */
struct rootfs_top_entry {
        char *path; /* relative to the root: "etc/passwd" */
        char *data; /* a file's contents; NULL: a directory */
        size_t len;
};

struct rootfs_overlay {
        char **lowers; /* host directories, top first */
        size_t n_lowers;
        bool writable;
        uint64_t upper_size;
        uint32_t id_shift; /* the host id of the sandbox's 0: owner of psrun's entries */
        struct rootfs_top_entry *top;
        size_t n_top;
        /* Rootless (docs/rootless.md, "Images"): made by the child in the
         * sandbox's user namespace (rootfs_overlay_make_in_child), since
         * only there may an unprivileged user mount an overlay, on the
         * layers' directories as the child opened them in its own mount
         * namespace (the overlay takes no layer of another namespace's);
         * the tmpfs sizes as fsconfig text, made by the parent. */
        bool in_child;
        char top_size[24], upper_size_text[24];
};

struct rootfs_plan {
        struct rootfs_overlay *overlay; /* NULL: no image root */
        struct mount_step *steps;
        size_t n_steps, cap_steps;
        char **strings; /* owned copies the steps point into */
        size_t n_strings, cap_strings;
        /* The host's bind sources are cloned by the child, in its own mount
         * namespace (rootfs_sources_clone_host), not by the parent: psrun
         * without root may not clone mounts of the host's namespace. */
        bool sources_in_child;
        /* One id mapped (rootfs_options.one_id): no gid=5 for devpts. */
        bool one_id;
};

/* Appending copies every string into the plan. Returns 0, -ENOMEM, or -E2BIG
 * past ROOTFS_MAX_STEPS steps. */
int rootfs_plan_add(struct rootfs_plan *plan, const struct mount_step *step);
/* Convenience: mkdir target and every missing parent below "/" that an
 * earlier step has not already created. */
int rootfs_plan_mkdir_p(struct rootfs_plan *plan, const char *path, mode_t mode);
void rootfs_plan_free(struct rootfs_plan *plan);
/* Whether a step mounts a cgroup file system (v1 or v2): what the cgroup
 * namespace of the process that mounts it shows. */
bool rootfs_plan_mounts_cgroupfs(const struct rootfs_plan *plan);
/* Replace step index's source with a copy of source. 0 or -ENOMEM. */
int rootfs_plan_set_source(struct rootfs_plan *plan, size_t index, const char *source);

/*
 * What the parent opens before clone3 (rootfs/sources.c), as the user who
 * runs psrun, in psrun's own namespaces: a child in a new user namespace
 * could reach only what its mapped ids may, and could make no device node.
 * The child inherits the fds.
 *   fds[i]    a from_host BIND step's source, cloned (open_tree) and made
 *             private (so nothing mounted below it in the sandbox reaches
 *             the host's peer group), idmapped if the step says so; the
 *             host's /dev/null for a MASK step;
 *             -1 otherwise (and for an optional source that is missing)
 *   nodes_fd  a detached tmpfs holding the `node` steps' device nodes, or -1
 */
struct rootfs_sources {
        int *fds;
        size_t n;
        int nodes_fd;
        int root_fd; /* the image root's detached overlay (plan->overlay), or -1 */
};

#define ROOTFS_SOURCES_INIT                                                                        \
        {                                                                                          \
                .fds = NULL, .n = 0, .nodes_fd = -1, .root_fd = -1                                 \
        }

/* Returns 0 or -errno with err naming the step ("rootfs: bind /src on /mnt:
 * Permission denied"); on failure nothing is left open. */
int rootfs_sources_open(const struct rootfs_plan *plan, struct rootfs_sources *s, psrun_error *err);
void rootfs_sources_close(struct rootfs_sources *s);
/* The image root's overlay, detached (rootfs/overlay.c): its fd in *ret. */
int rootfs_overlay_open(const struct rootfs_overlay *o, int *ret, psrun_error *err);
/* The same, made by the child of a rootless run in its own user namespace
 * (async-signal-safe), on lower_fds (the layers' directories, top first,
 * opened in the child's mount namespace), mounted with userxattr: 0 with
 * the detached overlay in *ret, or -errno. */
int rootfs_overlay_make_in_child(const struct rootfs_overlay *o, const int *lower_fds, int *ret);
void rootfs_overlay_free(struct rootfs_overlay *o);

/* In the child, while its mount namespace is still a private copy of the
 * host's (async-signal-safe): a detached copy of each `node` step's node,
 * into fds[i]. A detached mount can be cloned only from the caller's own
 * namespace, so the tmpfs is attached at dir meanwhile and detached again.
 * On failure *failed is the step's index. */
int rootfs_sources_clone_nodes(const struct rootfs_plan *plan, int nodes_fd, int *fds,
                               const char *dir, size_t *failed);

/* In the child of a plan with sources_in_child (async-signal-safe): what
 * rootfs_sources_open would have cloned, from the child's copy of the
 * host's mount namespace, which its user namespace owns; idmapped binds are
 * refused (-EOPNOTSUPP). On failure *failed is the step's index. */
int rootfs_sources_clone_host(const struct rootfs_plan *plan, int *fds, size_t *failed);

/* "mount proc on /proc", "bind /usr on /usr" — for error messages. */
void mount_step_describe(const struct mount_step *step, char *buf, size_t len);

/* Applying a step (rootfs/mounts-apply.c), for the child: async-signal-safe.
 * host_fd: the detached copy (open_tree) of a from_host BIND's source, made
 * before the pivot, or -1. root: an O_PATH fd of this process's root, in
 * which every path of the step is resolved (openat2 RESOLVE_IN_ROOT).
 * Returns 0 or -errno. */
int mount_step_apply(const struct mount_step *step, int root, int host_fd);
/* An `early` MOUNT before the pivot: the new instance made as a detached
 * mount (fsopen/fsmount); returns its fd, which mount_step_apply attaches
 * (host_fd) at the step's place in the order, or -errno. */
int mount_step_apply_early(const struct mount_step *step);
