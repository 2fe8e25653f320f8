/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Image references, Docker-style, checked against the distribution
 * project's reference grammar:
 *
 *   reference := [host[:port]/]path[:tag][@sha256:hex]
 *
 * `python:3.11-slim` means docker.io/library/python:3.11-slim (Docker's
 * default registry; a one-component name there is under library/); the
 * first component names a host when it has a `.` or a `:`, is `localhost`,
 * or is a bracketed IPv6 address. No tag and no digest means `latest`.
 * Pure: a string in, a struct out, one-line errors naming `image`.
 */

#include "common/error.h"

#define IMAGE_DEFAULT_REGISTRY "docker.io"
#define IMAGE_NAME_MAX         255 /* host and path together, as the grammar bounds them */
#define IMAGE_TAG_MAX          128

struct image_ref {
        char *registry;   /* "docker.io", "ghcr.io", "127.0.0.1:5000", "[::1]:5000" */
        char *repository; /* "library/python" */
        char *tag;        /* "3.11-slim"; "latest" when neither tag nor digest was given */
        char *digest;     /* "sha256:<hex>" or NULL */
};

int image_ref_parse(const char *text, struct image_ref *ref, psrun_error *err);
void image_ref_free(struct image_ref *ref);

/* The canonical full form: registry/repository[:tag][@digest]; NULL when
 * out of memory. */
char *image_ref_string(const struct image_ref *ref);
