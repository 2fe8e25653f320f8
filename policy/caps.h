/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Capability sets for the sandboxed process, as bit masks (bit n = cap n).
 * The default sandbox keeps none; OCI configs may ask for some.
 */

#include <stdint.h>

struct caps_plan {
        uint64_t bounding;
        uint64_t effective;
        uint64_t permitted;
        uint64_t inheritable;
        uint64_t ambient;
        int last_cap; /* highest capability the running kernel knows */
};

/* Highest capability number of the running kernel (libcap's view, checked
 * against /proc/sys/kernel/cap_last_cap). */
int caps_last_cap(void);

/* A plan with every set empty. */
void caps_plan_none(struct caps_plan *plan);
