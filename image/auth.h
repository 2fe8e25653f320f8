/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Registry authentication, the pure parts: the WWW-Authenticate challenge
 * of a 401 (RFC 7235: `Bearer realm="…",service="…",scope="…"` as Docker
 * Hub and GHCR send it, or `Basic realm="…"`), the token server's answer,
 * and credentials from the files Docker and podman read (`auths` in
 * auth.json / config.json: {"auths": {"host": {"auth": base64(user:pass)}}}).
 * Credentials never come from the command line.
 */

#include <stddef.h>

#include "common/error.h"

#define AUTH_FILE_MAX   (1u << 20)
#define AUTH_HEADER_MAX 4096
#define AUTH_TOKEN_MAX  (64u << 10)

enum auth_scheme { AUTH_NONE, AUTH_BASIC, AUTH_BEARER };

struct auth_challenge {
        enum auth_scheme scheme;
        char *realm;
        char *service;
        char *scope;
};

/* Parses one WWW-Authenticate value. Several challenges in one value:
 * Bearer is preferred over Basic. An unknown scheme is -ENOTSUP. */
int auth_challenge_parse(const char *header, struct auth_challenge *c, psrun_error *err);
void auth_challenge_free(struct auth_challenge *c);

/* The token from a token server's JSON answer ("token", else
 * "access_token"). */
int auth_token_parse(const char *buf, size_t len, char **ret, psrun_error *err);

/* Looks `registry` up in an auths document: keys "host", "host/…",
 * "https://host", "https://host/v1/" (docker.io also as
 * "https://index.docker.io/v1/"). 0 with *user NULL when there is no
 * entry. */
int auth_lookup(const char *buf, size_t len, const char *name, const char *registry, char **user,
                char **password, psrun_error *err);

/* The credential files in the order podman reads them: $REGISTRY_AUTH_FILE,
 * $XDG_RUNTIME_DIR/containers/auth.json, $HOME/.config/containers/auth.json,
 * $HOME/.docker/config.json, $DOCKER_CONFIG/config.json. The first with an
 * entry for `registry` wins. */
int auth_find(const char *registry, const char *explicit_file, char **user, char **password,
              psrun_error *err);

/* base64 (RFC 4648, with padding) of len bytes; NULL when out of memory. */
char *base64_encode(const unsigned char *p, size_t len);
/* Decodes; -EINVAL for anything but canonical base64. */
int base64_decode(const char *s, unsigned char **ret, size_t *ret_len);
