/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The name a connection asks for, read from what the sandbox sends before
 * anything is relayed (netns/name-relay.c): a TLS ClientHello's SNI on port
 * 443, the Host header of each HTTP/1.x request on port 80. Pure code, on
 * hostile bytes: unit-tested and fuzzed. Both parsers are incremental (fed
 * what has arrived so far, they never rescan it from the start) and strict:
 * whatever two implementations could read two ways (two SNIs, two Host
 * headers, Content-Length with Transfer-Encoding, a bare LF, a folded
 * header) is refused, not guessed at.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most a ClientHello handshake message may be (its 4-byte header
 * included), and the most raw bytes (its records' headers, any record
 * after it) buffered before the verdict. */
#define NAME_CHECK_HELLO_MAX 65536
#define NAME_CHECK_TLS_RAW   (NAME_CHECK_HELLO_MAX + 2048)
/* The most an HTTP request head (request line and headers), a chunk-size
 * line and a chunked body's trailers may be. */
#define NAME_CHECK_HEAD_MAX 32768
#define NAME_CHECK_LINE_MAX 1024

enum name_check_result {
        NAME_REFUSED = -1, /* reason says why; the connection is cut */
        NAME_MORE = 0,     /* nothing decided yet: more bytes needed */
        NAME_FOUND = 1,    /* name holds what the bytes ask for */
};

struct name_found {
        char name[254];     /* lowercase, validated: [a-z0-9_-] labels and dots */
        const char *reason; /* NAME_REFUSED: a static phrase ("no sni") */
        bool ech; /* TLS: an encrypted_client_hello extension (the name is its outer one) */
};

/* ---- TLS (port 443) ---- */

struct name_tls {
        size_t off;         /* raw bytes walked: where the next record header starts */
        size_t hs_have;     /* handshake bytes in the records walked */
        size_t hs_need;     /* the ClientHello's size with its header; 0: not known yet */
        uint8_t hs_head[4]; /* its header, gathered across records */
};

/* buf: the first len bytes the client sent (each call with at least the
 * bytes of the last). NAME_FOUND once the whole ClientHello is there and
 * names an acceptable host: the bytes are then relayed as they are. */
int name_check_tls(struct name_tls *t, const uint8_t *buf, size_t len, struct name_found *out);

/* ---- HTTP/1.x (port 80) ---- */

enum name_http_state {
        HTTP_HEAD,       /* a request head is next */
        HTTP_BODY,       /* left bytes of a Content-Length body */
        HTTP_CHUNK_SIZE, /* a chunk-size line */
        HTTP_CHUNK_DATA, /* left bytes of a chunk */
        HTTP_CHUNK_END,  /* the CRLF after a chunk's data */
        HTTP_TRAILERS,   /* the trailer lines after the last chunk */
};

struct name_http {
        enum name_http_state state;
        uint64_t left;
        size_t trailers; /* bytes of trailers so far */
};

/* buf: len bytes the client sent that are not yet parsed. *used is how
 * many of them are parsed by this call and may be relayed: after
 * NAME_FOUND, a request head (relay it only if its name passes), after
 * NAME_MORE, body bytes or chunk framing (0: more bytes are needed before
 * anything can be said). */
int name_check_http(struct name_http *h, const uint8_t *buf, size_t len, size_t *used,
                    struct name_found *out);

/* Whether s (NUL-terminated, already lowercase) is a name that may be
 * asked for: labels of [a-z0-9_-], 1-63 long, dots between them, at most
 * 253 in all, and not an IPv4 address in any notation inet_aton reads. 0,
 * or the reason it is not ("malformed", "ip-literal"). */
const char *name_check_hostname(const char *s);
