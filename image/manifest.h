/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Image manifests and indexes, OCI and Docker schema 2, from untrusted
 * bytes (a registry's answer, an OCI layout's blob). Pure: a buffer in, a
 * validated struct out. Every descriptor has a sha256 digest and a size;
 * layer media types are the tar ones psrun unpacks (plain, gzip, zstd);
 * Docker schema 1 and foreign (non-distributable) layers are refused by
 * name.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define MEDIA_OCI_MANIFEST    "application/vnd.oci.image.manifest.v1+json"
#define MEDIA_OCI_INDEX       "application/vnd.oci.image.index.v1+json"
#define MEDIA_OCI_CONFIG      "application/vnd.oci.image.config.v1+json"
#define MEDIA_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MEDIA_DOCKER_LIST     "application/vnd.docker.distribution.manifest.list.v2+json"
#define MEDIA_DOCKER_CONFIG   "application/vnd.docker.container.image.v1+json"

/* The Accept header of a manifest request: every kind psrun reads. */
#define MANIFEST_ACCEPT                                                                            \
        MEDIA_OCI_MANIFEST ", " MEDIA_OCI_INDEX ", " MEDIA_DOCKER_MANIFEST ", " MEDIA_DOCKER_LIST

/* Bounds on what a manifest may ask (containers/image reads at most 4 MiB
 * of one; overlayfs stacks at most ~500 lower layers). */
#define MANIFEST_MAX_BYTES  (4u << 20)
#define MANIFEST_MAX_LAYERS 256
#define INDEX_MAX_MANIFESTS 1024

struct descriptor {
        char *media_type;
        char *digest; /* "sha256:<hex>" */
        int64_t size;
        /* index entries */
        char *os, *arch, *variant;
        /* OCI layout index.json: org.opencontainers.image.ref.name */
        char *ref_name;
};

enum manifest_kind { MANIFEST_IMAGE, MANIFEST_INDEX };

struct manifest {
        enum manifest_kind kind;
        char *media_type;
        struct descriptor config;  /* MANIFEST_IMAGE */
        struct descriptor *layers; /* MANIFEST_IMAGE */
        size_t n_layers;
        struct descriptor *manifests; /* MANIFEST_INDEX */
        size_t n_manifests;
};

/* content_type: the HTTP Content-Type it came with, or NULL. `name` is for
 * messages ("127.0.0.1:5000/test/small:v1"). */
int manifest_parse(const char *buf, size_t len, const char *content_type, const char *name,
                   struct manifest *m, psrun_error *err);
void manifest_free(struct manifest *m);

/* The entry of an index for os/arch (variant may be NULL: any; for arm64
 * an entry with variant v8 or none). -ENOENT naming the platforms there
 * are when none matches. */
int manifest_choose(const struct manifest *index, const char *os, const char *arch,
                    const char *variant, const char *name, const struct descriptor **ret,
                    psrun_error *err);

/* This host's platform in OCI's words ("amd64", "arm64", ...). */
const char *manifest_host_arch(void);

/* Whether a layer media type is one psrun unpacks. */
bool manifest_layer_type_known(const char *media_type);
