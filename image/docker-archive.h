/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Import from a docker-archive: the tar `docker save`, `podman save` and
 * `skopeo copy ... docker-archive:FILE` write. Its manifest.json lists
 * each image's Config (a file in the archive) and Layers (uncompressed
 * layer tars, in order); the config's rootfs.diff_ids are the layers'
 * digests, so every layer is verified against the config as it is copied
 * into the store, and the config against the digest its bytes hash to.
 * The store gets an OCI manifest made from them (config and layers as
 * they are: its digest is the manifest's, not one the archive names).
 * An archive holding several images is refused naming the count.
 */

#include <stdbool.h>

#include "common/error.h"
#include "image/store.h"

#define DOCKER_ARCHIVE_MAX_FILES 100000 /* entries of the archive, at most */

/* name: what the record is called ("docker-archive:/abs/file"). */
int image_store_import_docker_archive(struct image_store *s, const char *file, const char *name,
                                      bool fetch_only, struct image_record *rec,
                                      struct store_pull_stats *st, psrun_error *err);
