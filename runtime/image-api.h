/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The image store as the rest of the runtime opens it (runtime/image-api.c,
 * which also implements the public psrun_image_* functions): one default
 * root and one set of unpacking limits, so that `psrun image pull` and a
 * sandbox whose policy names an image unpack layers the same way (owners
 * shifted into the sandbox's id range, PSRUN_ID_BASE; at most max_size
 * declared bytes a layer).
 */

#include <stdint.h>

#include "common/error.h"
#include "image/store.h"

/* $PSRUN_IMAGE_STORE when set and absolute, else IMAGE_STORE_DEFAULT. */
#define IMAGE_STORE_DEFAULT "/var/lib/psrun/images"
const char *image_store_default_root(void);

/* Opens (creating, parents too) the store at root (NULL: the default),
 * with the sandbox's id shift and max_size (0: unpack's default 8 GiB). */
int image_api_store_open(const char *root, uint64_t max_size, struct image_store **ret,
                         psrun_error *err);
