/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A token bucket, for what a sandbox may make psrun do per second (the DNS
 * proxy's reads, its NFLOG reports: netns/dns-proxy.c).
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/clock.h"

/* A token bucket in thousandths of a token. */
struct bucket {
        uint64_t milli, last_ms;
        uint32_t rate, burst; /* per second; at most */
};

static inline void bucket_init(struct bucket *b, uint32_t rate, uint32_t burst)
{
        *b = (struct bucket){(uint64_t) burst * 1000, monotonic_ms(), rate, burst};
}

static inline void bucket_refill(struct bucket *b, uint64_t now)
{
        if (now > b->last_ms) {
                b->milli += (now - b->last_ms) * b->rate;
                if (b->milli > (uint64_t) b->burst * 1000)
                        b->milli = (uint64_t) b->burst * 1000;
                b->last_ms = now;
        }
}

static inline bool bucket_take(struct bucket *b)
{
        bucket_refill(b, monotonic_ms());
        if (b->milli < 1000)
                return false;
        b->milli -= 1000;
        return true;
}

/* Milliseconds until the next token (0: one is there). */
static inline uint64_t bucket_wait_ms(struct bucket *b, uint64_t now)
{
        bucket_refill(b, now);
        return b->milli >= 1000 ? 0 : (1000 - b->milli + b->rate - 1) / b->rate;
}
