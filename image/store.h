/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The image store: content-addressed and shared, safe under concurrent
 * pulls and SIGKILL, with no daemon. Under its root:
 *
 *   blobs/sha256/<hex>    verified blobs (manifests, configs, layers as fetched)
 *   layers/sha256/<hex>/  each layer unpacked once (named by its blob's
 *                         digest), shared by every image that has it
 *   images/<hex>.json     one record per reference (hex: the sha256 of its
 *                         canonical form): manifest digest, config, layers
 *   tmp/                  downloads and unpacks in progress
 *   locks/                flock(2) files: store (pulls shared, prune
 *                         exclusive), image-<hex>, blob-<hex>, layer-<hex>,
 *                         and use-<hex> (held shared by whoever runs on a
 *                         layer; prune never takes what is held)
 *
 * Nothing is visible before it is whole: a blob is written in tmp/,
 * verified while it streams, then renamed into blobs/; a layer is unpacked
 * in tmp/ and renamed into layers/; the record is written last, by rename.
 * A pull killed at any point leaves at most files in tmp/ that the next
 * pull of the same blob resumes (its lock is free again) and prune clears.
 * Two pulls of one image take its lock in turn: the second finds the work
 * done.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "image/manifest.h"
#include "image/registry.h"
#include "image/unpack.h"

struct image_store;

struct image_record {
        char *reference;  /* canonical: "127.0.0.1:5000/test/small:v1", "oci:/dir:tag" */
        char *manifest;   /* "sha256:..." of the image manifest */
        char *index;      /* the index it was chosen from, or NULL */
        char *media_type; /* the manifest's */
        struct descriptor config;
        struct descriptor *layers;
        size_t n_layers;
        bool unpacked; /* every layer is in layers/ */
};

struct store_pull_options {
        const struct registry_options *registry;
        /* fetch and verify the blobs and write the record, but leave the
         * layers packed (unpacking is a step of its own) */
        bool fetch_only;
};

struct store_pull_stats {
        unsigned blobs_fetched; /* downloaded by this pull */
        unsigned blobs_present; /* already in the store */
        unsigned blobs_resumed; /* continued from an interrupted pull */
        int64_t bytes_fetched;
        unsigned layers_unpacked;
        bool network; /* the registry was asked at all */
};

struct store_prune_stats {
        unsigned blobs_removed, layers_removed, tmp_removed;
        unsigned kept_in_use; /* unreferenced, but held by a user */
        int64_t bytes_removed;
};

/* Opens (creating) the store at root, an absolute path. Its layers are
 * unpacked with image/unpack.c's default bounds and owners as in the image
 * until image_store_set_limits says otherwise (the sandbox's id shift, the
 * policy's image_max_size). */
int image_store_open(const char *root, struct image_store **ret, psrun_error *err);
void image_store_close(struct image_store *s);
static inline void image_store_closep(struct image_store **s)
{
        image_store_close(*s);
}
const char *image_store_root(const struct image_store *s);
void image_store_set_limits(struct image_store *s, const struct unpack_limits *limits);

/*
 * Runs fn(arg, err) where the store's layers may be written, moved and
 * removed: an unprivileged user's store, whose layers belong to the user's
 * subordinate ids, runs it in a user namespace mapped onto them
 * (runtime/image-rootless.c). Unpacking (from making tmp/layer-<hex> to
 * its rename into layers/) and every tree removal go through it; without a
 * runner fn is called in place.
 */
typedef int (*image_store_fn)(void *arg, psrun_error *err);
typedef int (*image_store_runner)(void *ctx, image_store_fn fn, void *arg, psrun_error *err);
void image_store_set_runner(struct image_store *s, image_store_runner run, void *ctx);

/* How the store's layer files are owned: IMAGE_OWNERS_SHIFTED (root's
 * store: the image's ids + the sandbox's host base), or what an
 * unprivileged user's store says in its root's `owners` file ("subordinate
 * ids START", "one id UID"). image_store_set_owners writes that file at the
 * first use (root's kind, IMAGE_OWNERS_SHIFTED, is a store without one) and
 * refuses, one line, a store whose file says otherwise: its layers would be
 * owned by ids the sandbox does not map. */
#define IMAGE_OWNERS_SHIFTED "shifted"
int image_store_set_owners(struct image_store *s, const char *owners, psrun_error *err);
const char *image_store_owners(const struct image_store *s);

/* Pulls a registry reference (image/reference.h). A digest reference whose
 * record is there asks no registry; a tag is resolved again (tags move),
 * and what is present is not fetched again. */
int image_store_pull(struct image_store *s, const char *reference,
                     const struct store_pull_options *o, struct image_record *rec,
                     struct store_pull_stats *st, psrun_error *err);

/* The record of a reference (as given to pull or import): -ENOENT when
 * there is none. */
int image_store_lookup(struct image_store *s, const char *reference, struct image_record *rec,
                       psrun_error *err);
int image_store_list(struct image_store *s, struct image_record **ret, size_t *ret_n,
                     psrun_error *err);
void image_records_free(struct image_record *v, size_t n);
/* Removes a record (not its blobs: prune does that). */
int image_store_remove(struct image_store *s, const char *reference, psrun_error *err);
/* Removes every blob, layer and tmp entry no record refers to, but never
 * one a user holds. Waits for running pulls. */
int image_store_prune(struct image_store *s, struct store_prune_stats *st, psrun_error *err);

/* A user of an image (a sandbox, a session) holds its layers for its life:
 * shared locks prune respects. Released by image_hold_release or by the
 * holder's death (the kernel drops flocks). */
struct image_hold {
        int *fds;
        size_t n;
};
int image_store_hold(struct image_store *s, const struct image_record *rec, struct image_hold *h,
                     psrun_error *err);
void image_hold_release(struct image_hold *h);

/* The directory of an unpacked layer, "<root>/layers/sha256/<hex>";
 * NULL when out of memory. */
char *image_store_layer_path(const struct image_store *s, const char *digest);

void image_record_free(struct image_record *r);

/* For the store's sources (registry, OCI layout): a blob's bytes into fd
 * (whose first `have` bytes an interrupted copy wrote), verified against
 * the descriptor. */
typedef int (*store_blob_source)(void *ctx, const struct descriptor *d, int fd, off_t have,
                                 psrun_error *err);
/* Publishes one blob from a source (locked, verified, renamed). */
int image_store_fetch_blob(struct image_store *s, const struct descriptor *d,
                           store_blob_source source, void *ctx, struct store_pull_stats *st,
                           psrun_error *err);
/* Publishes bytes already in memory and already verified to hash to digest. */
int image_store_put_blob(struct image_store *s, const char *digest, const char *buf, size_t len,
                         psrun_error *err);
/* Unpacks what is not yet unpacked (unless fetch_only), then writes the
 * record. The caller holds the image lock (image_store_lock_image). */
int image_store_commit(struct image_store *s, struct image_record *rec, bool fetch_only,
                       struct store_pull_stats *st, psrun_error *err);
/* The locks a source takes around a whole import: shared on the store,
 * exclusive on the reference. Returns an fd pair in *fds (closed by
 * image_store_unlock). */
int image_store_lock_image(struct image_store *s, const char *reference, int fds[2],
                           psrun_error *err);
void image_store_unlock(int fds[2]);

/* Copies src to dst, hashing; -EBADMSG naming the digest when the bytes
 * are not `size` bytes hashing to `digest`. */
int image_copy_verified(int src, int dst, const char *digest, int64_t size, psrun_error *err);
