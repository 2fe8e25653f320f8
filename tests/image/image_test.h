/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the image tier's files: a work directory per test holding
 * `layer` (the layer directory) and `outside` (which nothing may touch). */

#include <stdbool.h>
#include <stddef.h>

#include "image/unpack.h"
#include "lib/tarbuild.h"

struct work {
        char dir[64];
        char layer[96], outside[96];
        int layer_fd;
};

void work_make(struct work *w);
void work_remove(struct work *w);
/* outside is still empty, and the work directory holds only the two. */
void work_assert_untouched(const struct work *w);
/* Unpack b (gzipped when gzip) into w's layer: unpack_layer's answer. */
int work_unpack(struct work *w, const struct tarbuf *b, bool gzip, const struct unpack_limits *lim,
                struct unpack_stats *st, psrun_error *err);
/* A path inside the layer (static storage, two in turn). */
const char *in_layer(const struct work *w, const char *rel);
