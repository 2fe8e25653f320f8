/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What image/store.c (records, blobs, layers, pulls) and image/store-prune.c
 * (holds and prune) share: the store's handle and three of its helpers.
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "image/store.h"
#include "image/unpack.h"

struct image_store {
        char *root;
        int dirfd;
        struct unpack_limits limits; /* every layer's, image_store_set_limits */
        image_store_runner run;      /* image_store_set_runner, or NULL */
        void *run_ctx;
        char *owners; /* image_store_set_owners, or NULL: IMAGE_OWNERS_SHIFTED */
};

/* locks/<name>, flock'ed with op (LOCK_SH / LOCK_EX), the fd in *ret. */
int store_lock_file(struct image_store *s, const char *name, int op, int *ret, psrun_error *err);
/* blobs/sha256/<hex> is there with size bytes (size < 0: any). */
bool store_blob_present(struct image_store *s, const char *hex, int64_t size);
/* Removes rel, a tree of the store, never following a symlink in it. */
int store_remove_tree(struct image_store *s, const char *rel);
