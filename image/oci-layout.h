/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Import from an OCI image layout directory (image-spec image-layout.md:
 * `oci-layout`, `index.json`, `blobs/sha256/<hex>`), as `skopeo copy
 * ... oci:DIR:TAG` and `umoci` write it. The image is the index.json entry
 * whose org.opencontainers.image.ref.name is TAG (the only entry when no
 * tag is given); an index there gives the host's platform. Every blob is
 * verified as it is copied into the store, as a registry's are.
 */

#include <stdbool.h>

#include "common/error.h"
#include "image/store.h"

/* name: what the record is called; NULL for "oci:DIR[:TAG]". */
int image_store_import_oci(struct image_store *s, const char *dir, const char *tag,
                           const char *name, bool fetch_only, struct image_record *rec,
                           struct store_pull_stats *st, psrun_error *err);
