/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The image store of a user without privileges (docs/rootless.md,
 * "Images"; runtime/image-rootless.c): where it is, the checks that keep it
 * the user's alone, and how its layers are owned — the image's ids shifted
 * into the user's subordinate range (unpacked in a user namespace mapped
 * onto it), or, with no range, every file the user's own.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "image/store.h"
#include "image/unpack.h"

struct image_rootless {
        bool subids;    /* layers owned by the subordinate range */
        uint32_t count; /* ids of the range mapped (at most 65536) */
        uid_t uid;
        gid_t gid;
        char uid_map[96], gid_map[96]; /* the helper namespace's maps */
        char owners[64];               /* image_store_set_owners' text */
};

/* $XDG_DATA_HOME/psrun/images, else ~/.local/share/psrun/images ($HOME, or
 * the password database's home). */
int image_rootless_default_root(char *buf, size_t size, psrun_error *err);

/* Makes root (and its missing parents) 0700 and refuses, one line, a root
 * that is a symlink, not a directory, not the user's, or writable by group
 * or others, and an ancestor that someone else may change (owned by
 * another user, or writable by others without the sticky bit). */
int image_rootless_check_root(const char *root, psrun_error *err);

/* The user's ids (rootless_subids) as the store will own layers with. */
int image_rootless_init(struct image_rootless *rl, psrun_error *err);
/* Unpacking's limits for that store: unprivileged, and the owners in the
 * helper's namespace (subordinate ids) or left as the user's (one id). */
void image_rootless_limits(const struct image_rootless *rl, struct unpack_limits *lim);
/* The store's runner (image_store_set_runner), ctx a struct image_rootless
 * that outlives the store: fn in a forked helper in a user namespace with
 * rl's maps (written by newuidmap/newgidmap), its result and error handed
 * back; without subordinate ids fn runs in place. */
int image_rootless_run(void *ctx, image_store_fn fn, void *arg, psrun_error *err);
/* fn in a forked helper in a user namespace of its own in every case: the
 * subordinate maps as above, or with one id the user as its 0 (the helper
 * writes that map itself). */
int image_rootless_run_ns(const struct image_rootless *rl, image_store_fn fn, void *arg,
                          psrun_error *err);
