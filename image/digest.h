/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * SHA-256, streaming: a blob is hashed while it arrives, so a mismatch is
 * known the moment its last byte is, without reading it again. libcrypto's
 * EVP (SHA-NI / AVX2 code) is loaded with dlopen at the first use, so
 * neither psrun's start-up nor loading libpsrun.so pays for it; where it is
 * missing, a portable implementation does the same work, slower
 * (docs/images.md has both measured).
 */

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#define SHA256_HEX_LEN 64
/* "sha256:" and 64 lowercase hex digits */
#define DIGEST_STR_LEN (7 + SHA256_HEX_LEN)

struct sha256;

int sha256_new(struct sha256 **ret, psrun_error *err);
void sha256_update(struct sha256 *h, const void *buf, size_t len);
/* The digest as 64 lowercase hex digits and a NUL. The state is reset, so
 * the same object may hash the next input. */
void sha256_final_hex(struct sha256 *h, char hex[SHA256_HEX_LEN + 1]);
void sha256_free(struct sha256 *h);
/* A short text's digest (a reference's name in the store) by the portable
 * code: not worth loading libcrypto for, on psrun run's start-up path. */
void sha256_hex_portable(const void *buf, size_t len, char hex[SHA256_HEX_LEN + 1]);
static inline void sha256_freep(struct sha256 **h)
{
        sha256_free(*h);
}

/* The hash of everything fd reads from its current offset to EOF. */
int sha256_fd(int fd, char hex[SHA256_HEX_LEN + 1], psrun_error *err);

/* "libcrypto" or "portable": the implementation sha256_new uses. */
const char *sha256_implementation(void);
/* Tests and the benchmark: use the portable code even where libcrypto is. */
void sha256_force_portable(bool on);

/* A digest string as registries and manifests write it: "sha256:" and 64
 * lowercase hex digits, nothing else (other algorithms are refused by
 * name). Fills hex (may be NULL). The message names `what` ("image: ...").
 */
int digest_parse(const char *s, char hex[SHA256_HEX_LEN + 1], psrun_error *err);
bool digest_valid(const char *s);
