/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 through libcrypto's EVP when libcrypto.so.3 can be loaded, else
 * the portable FIPS 180-4 code below. Both produce the same digest; the unit
 * tier checks each against the standard's vectors.
 */

#include "image/digest.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/number.h"

/* libcrypto's EVP, resolved by name: its header is not needed, only these
 * five entry points (stable since OpenSSL 1.1). */
struct evp_api {
        void *(*md_ctx_new)(void);
        void (*md_ctx_free)(void *ctx);
        const void *(*sha256)(void);
        int (*digest_init_ex)(void *ctx, const void *type, void *engine);
        int (*digest_update)(void *ctx, const void *d, size_t cnt);
        int (*digest_final_ex)(void *ctx, unsigned char *md, unsigned int *s);
};

static struct evp_api evp;
static bool evp_loaded;
static bool force_portable;
static pthread_once_t evp_once = PTHREAD_ONCE_INIT;

static void evp_load(void)
{
        static const char *const names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"};
        void *lib = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(names) && !lib; i++)
                lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
                return;
        struct evp_api api = {
                .md_ctx_new = (void *(*) (void) ) dlsym(lib, "EVP_MD_CTX_new"),
                .md_ctx_free = (void (*)(void *)) dlsym(lib, "EVP_MD_CTX_free"),
                .sha256 = (const void *(*) (void) ) dlsym(lib, "EVP_sha256"),
                .digest_init_ex =
                        (int (*)(void *, const void *, void *)) dlsym(lib, "EVP_DigestInit_ex"),
                .digest_update =
                        (int (*)(void *, const void *, size_t)) dlsym(lib, "EVP_DigestUpdate"),
                .digest_final_ex = (int (*)(void *, unsigned char *, unsigned int *)) dlsym(
                        lib, "EVP_DigestFinal_ex"),
        };
        if (!api.md_ctx_new || !api.md_ctx_free || !api.sha256 || !api.digest_init_ex ||
            !api.digest_update || !api.digest_final_ex) {
                dlclose(lib);
                return;
        }
        evp = api;
        evp_loaded = true;
}

static bool use_evp(void)
{
        pthread_once(&evp_once, evp_load);
        return evp_loaded && !__atomic_load_n(&force_portable, __ATOMIC_RELAXED);
}

void sha256_force_portable(bool on)
{
        __atomic_store_n(&force_portable, on, __ATOMIC_RELAXED);
}

const char *sha256_implementation(void)
{
        return use_evp() ? "libcrypto" : "portable";
}

/* The portable implementation (FIPS 180-4, section 6.2). */
struct sha256_portable {
        uint32_t h[8];
        uint64_t bytes;
        unsigned char block[64];
        size_t fill;
};

static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n)
{
        return (x >> n) | (x << (32 - n));
}

static void portable_block(struct sha256_portable *s, const unsigned char *p)
{
        uint32_t w[64];
        for (int i = 0; i < 16; i++)
                w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 |
                       (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
                uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
                uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
        uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
        for (int i = 0; i < 64; i++) {
                uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                              K[i] + w[i];
                uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
                h = g;
                g = f;
                f = e;
                e = d + t1;
                d = c;
                c = b;
                b = a;
                a = t1 + t2;
        }
        s->h[0] += a;
        s->h[1] += b;
        s->h[2] += c;
        s->h[3] += d;
        s->h[4] += e;
        s->h[5] += f;
        s->h[6] += g;
        s->h[7] += h;
}

static void portable_init(struct sha256_portable *s)
{
        static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
        memcpy(s->h, iv, sizeof(iv));
        s->bytes = 0;
        s->fill = 0;
}

static void portable_update(struct sha256_portable *s, const unsigned char *p, size_t len)
{
        s->bytes += len;
        if (s->fill) {
                size_t take = 64 - s->fill < len ? 64 - s->fill : len;
                memcpy(s->block + s->fill, p, take);
                s->fill += take;
                p += take;
                len -= take;
                if (s->fill < 64)
                        return;
                portable_block(s, s->block);
                s->fill = 0;
        }
        for (; len >= 64; p += 64, len -= 64)
                portable_block(s, p);
        memcpy(s->block, p, len);
        s->fill = len;
}

static void portable_final(struct sha256_portable *s, unsigned char out[32])
{
        uint64_t bits = s->bytes * 8;
        static const unsigned char pad[64] = {0x80};
        size_t padlen = s->fill < 56 ? 56 - s->fill : 120 - s->fill;
        portable_update(s, pad, padlen);
        unsigned char len_be[8];
        for (int i = 0; i < 8; i++)
                len_be[i] = (unsigned char) (bits >> (56 - 8 * i));
        portable_update(s, len_be, 8);
        for (int i = 0; i < 8; i++) {
                out[4 * i] = (unsigned char) (s->h[i] >> 24);
                out[4 * i + 1] = (unsigned char) (s->h[i] >> 16);
                out[4 * i + 2] = (unsigned char) (s->h[i] >> 8);
                out[4 * i + 3] = (unsigned char) s->h[i];
        }
}

struct sha256 {
        void *evp_ctx; /* NULL: portable */
        struct sha256_portable portable;
};

int sha256_new(struct sha256 **ret, psrun_error *err)
{
        _cleanup_free_ struct sha256 *h = calloc(1, sizeof(*h));
        if (!h)
                return psrun_error_errno(err, ENOMEM, "image: sha256");
        if (use_evp()) {
                h->evp_ctx = evp.md_ctx_new();
                if (!h->evp_ctx || evp.digest_init_ex(h->evp_ctx, evp.sha256(), NULL) != 1) {
                        if (h->evp_ctx)
                                evp.md_ctx_free(h->evp_ctx);
                        return psrun_error_set(err, EIO, "image: sha256: libcrypto refused");
                }
        } else {
                portable_init(&h->portable);
        }
        *ret = TAKE_PTR(h);
        return 0;
}

void sha256_update(struct sha256 *h, const void *buf, size_t len)
{
        if (h->evp_ctx)
                evp.digest_update(h->evp_ctx, buf, len);
        else
                portable_update(&h->portable, buf, len);
}

void sha256_final_hex(struct sha256 *h, char hex[SHA256_HEX_LEN + 1])
{
        unsigned char md[32];
        if (h->evp_ctx) {
                unsigned int n = 0;
                evp.digest_final_ex(h->evp_ctx, md, &n);
                evp.digest_init_ex(h->evp_ctx, evp.sha256(), NULL);
        } else {
                portable_final(&h->portable, md);
                portable_init(&h->portable);
        }
        static const char digits[] = "0123456789abcdef";
        for (int i = 0; i < 32; i++) {
                hex[2 * i] = digits[md[i] >> 4];
                hex[2 * i + 1] = digits[md[i] & 15];
        }
        hex[SHA256_HEX_LEN] = '\0';
}

void sha256_hex_portable(const void *buf, size_t len, char hex[SHA256_HEX_LEN + 1])
{
        struct sha256 h = {0};
        portable_init(&h.portable);
        portable_update(&h.portable, buf, len);
        sha256_final_hex(&h, hex);
}

void sha256_free(struct sha256 *h)
{
        if (!h)
                return;
        if (h->evp_ctx)
                evp.md_ctx_free(h->evp_ctx);
        free(h);
}

int sha256_fd(int fd, char hex[SHA256_HEX_LEN + 1], psrun_error *err)
{
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        int r = sha256_new(&h, err);
        if (r < 0)
                return r;
        const size_t size = 1 << 20;
        _cleanup_free_ char *buf = malloc(size);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "image: sha256");
        for (;;) {
                ssize_t n = read(fd, buf, size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return psrun_error_errno(err, errno, "image: sha256: read");
                if (n == 0)
                        break;
                sha256_update(h, buf, (size_t) n);
        }
        sha256_final_hex(h, hex);
        return 0;
}

static bool is_lower_hex(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool digest_valid(const char *s)
{
        if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != DIGEST_STR_LEN)
                return false;
        for (const char *p = s + 7; *p; p++)
                if (!is_lower_hex(*p))
                        return false;
        return true;
}

int digest_parse(const char *s, char hex[SHA256_HEX_LEN + 1], psrun_error *err)
{
        char shown[96];
        if (!s || !*s)
                return psrun_error_set(err, EINVAL, "image: empty digest");
        if (!digest_valid(s)) {
                const char *colon = strchr(s, ':');
                if (colon && strncmp(s, "sha256:", 7) != 0) {
                        char algo[24];
                        size_t n = (size_t) (colon - s) < sizeof(algo) - 1 ? (size_t) (colon - s)
                                                                           : sizeof(algo) - 1;
                        memcpy(algo, s, n);
                        algo[n] = '\0';
                        return psrun_error_set(err, ENOTSUP,
                                               "image: digest `%s`: algorithm `%s` is not "
                                               "supported (only sha256)",
                                               number_shown(s, shown, sizeof(shown)),
                                               number_shown(algo, (char[32]){0}, 32));
                }
                return psrun_error_set(err, EINVAL,
                                       "image: `%s` is not a digest (sha256: and 64 lowercase "
                                       "hex digits)",
                                       number_shown(s, shown, sizeof(shown)));
        }
        if (hex)
                memcpy(hex, s + 7, SHA256_HEX_LEN + 1);
        return 0;
}
