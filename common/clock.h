/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The one clock psrun measures deadlines and durations with: monotonic, so
 * that a change of the wall clock neither fires nor postpones a timeout.
 */

#include <stdint.h>
#include <time.h>

/* Milliseconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline uint64_t monotonic_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}
