/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Root filesystem composition. The standalone root (psrun run) is a tmpfs
 * skeleton holding read-only binds of the host's /usr, /bin, /lib*, /sbin,
 * a synthesized /etc, /workspace and /tmp tmpfs, a fresh /proc with masked
 * paths and a minimal /dev; it is remounted read-only at the end.
 * (Overlayfs is used only where a writable root is asked for: it needs an
 * upper layer or two lower ones, and does not show a lower dir's submounts,
 * so the read-only case is better served by binds.) An image root
 * (rootfs_plan_image) is one overlay of the image's layers instead, made by
 * the parent (rootfs/overlay.c).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "rootfs/mounts.h"

/* A host path bound into the sandbox (the policy's `mounts`, filled by
 * runtime/plan-policy.c). The strings are borrowed. */
struct rootfs_user_mount {
        const char *source; /* host path, absolute */
        const char *target; /* sandbox path, absolute and normalized */
        bool readonly;
};

struct rootfs_options {
        bool readonly;
        uint64_t workspace_size; /* bytes */
        uint64_t tmp_size;       /* bytes, /tmp and /dev/shm each */
        uid_t uid;               /* owner of /workspace, inside the sandbox */
        gid_t gid;
        const char *hostname;
        const char *workdir; /* created (owned by uid:gid) when under /workspace or /tmp */
        const struct rootfs_user_mount *mounts;
        size_t n_mounts;
        uint64_t pty_limit;      /* max= of the sandbox's devpts instance; 0: the kernel's */
        const char *resolv_conf; /* NULL: no resolver (network none) */
        /* The sandbox's user namespace maps one id (rootless without
         * subordinate ids, docs/rootless.md): psrun's own mounts are owned
         * by uid:gid, not root, and devpts has no tty group. */
        bool one_id;
};

int rootfs_plan_standalone(const struct rootfs_options *opts, struct rootfs_plan *plan,
                           psrun_error *err);

/* Building blocks, shared with OCI bundles. */
int rootfs_add_proc(struct rootfs_plan *plan, const char *const *masked,
                    const char *const *readonly);
int rootfs_add_dev(struct rootfs_plan *plan, uint64_t shm_size, uint64_t pty_limit);
int rootfs_add_etc(struct rootfs_plan *plan, const struct rootfs_options *opts);
/* The synthesized /etc files' contents (rootfs/etc.c). */
struct rootfs_etc {
        char passwd[1024], group[512], hosts[512], hostname[128];
        const char *nsswitch, *resolv_conf;
};
void rootfs_etc_synth(const struct rootfs_options *opts, struct rootfs_etc *e);

/* Its files, by name below /etc, in the order psrun writes them: passwd
 * and group first (an image root merges those with the image's own). */
#define ROOTFS_ETC_FILES 6
struct rootfs_etc_file {
        const char *name, *text;
};
void rootfs_etc_files(const struct rootfs_etc *e, struct rootfs_etc_file files[ROOTFS_ETC_FILES]);

/* An image root (docs/images.md, "Mounting"): the layers' directories as
 * one read-only overlay (an upper in a tmpfs of workspace_size bytes when
 * opts->readonly is false), with psrun's /etc files (/etc/passwd and
 * /etc/group the image's, with the sandbox's user added when the image has
 * no entry for its id), /workspace, /tmp, /dev, /proc and the policy's
 * mounts as in the standalone root; nothing of the host's filesystem. */
struct rootfs_image_options {
        const char *const *lowers; /* the layers' directories, top first */
        size_t n_lowers;
        uint32_t id_shift;   /* host id of the sandbox's uid 0 */
        const char *workdir; /* made in psrun's layer when the image lacks it; NULL: none */
};
int rootfs_plan_image(const struct rootfs_options *opts, const struct rootfs_image_options *img,
                      struct rootfs_plan *plan, psrun_error *err);
/* A file of the image (the topmost layer that has it, whiteouts and opaque
 * directories honoured; no symlink followed): *ret malloc'd, NUL-ended;
 * -ENOENT when the image has none. */
int rootfs_image_read(const char *const *lowers, size_t n_lowers, const char *dir, const char *name,
                      size_t max, char **ret, size_t *ret_len);
/* Whether every parent of path is a directory in the image (or absent):
 * psrun's layer may not put a directory over the image's symlink (a
 * merged-/usr /bin). -ELOOP (a symlink) or -ENOTDIR with the parent in bad. */
int rootfs_image_check_parents(const char *const *lowers, size_t n_lowers, const char *path,
                               char *bad, size_t bad_size);
/* What rootfs_add_proc adds after mounting /proc, also for an OCI bundle's
 * linux.maskedPaths and readonlyPaths: each masked path hidden (optional: a
 * path the kernel lacks is skipped), each read-only path bound onto itself
 * and made read-only. Lists NULL-terminated, either may be NULL. */
int rootfs_add_masks(struct rootfs_plan *plan, const char *const *masked,
                     const char *const *readonly);

/* The harmless device nodes of a /dev of one's own making (null zero full
 * random urandom tty), bound from the host's since mknod does not work in a
 * user namespace, then the standard links of /dev (ptmx, fd, stdin, stdout,
 * stderr; core too with core_link). Shared by psrun run's /dev and an OCI
 * bundle's tmpfs /dev. */
struct rootfs_dev_options {
        /* true: leave this node out (the caller makes it itself) */
        bool (*skip)(const char *path, const void *userdata);
        const void *skip_userdata;
        bool single;    /* bind the node alone, not its submounts */
        bool core_link; /* /dev/core -> /proc/kcore, as config-linux.md lists */
};
int rootfs_add_default_devices(struct rootfs_plan *plan, const struct rootfs_dev_options *o);

/* Docker's defaults: paths hidden from /proc, and paths made read-only. */
extern const char *const rootfs_default_masked_paths[];
extern const char *const rootfs_default_readonly_paths[];

/* Paths beneath which the default sandbox may write (for Landlock):
 * NULL-terminated, static storage, plus the rw `mounts` the caller adds. */
extern const char *const rootfs_writable_paths[];
