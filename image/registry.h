/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI distribution protocol, client side, for pulls: manifests by tag
 * or digest, blobs by digest, over libcurl (HTTP/2 where offered, TLS
 * verified against the system CA store or a configured CA, redirects to
 * blob storage followed, proxies from the environment as curl reads them).
 * libcurl is loaded with dlopen at the first pull: neither psrun's
 * start-up nor loading libpsrun.so pays for it, and a host without it
 * gets one line saying so.
 *
 * Authentication: anonymous first; on a 401 the WWW-Authenticate challenge
 * says Basic (credentials sent) or Bearer (a token fetched from the realm
 * with service and scope, with the credentials when there are any, then
 * the request again). Credentials come from auth.json / config.json files
 * (image/auth.h), never the command line; the Authorization header is
 * never sent to another host a redirect names.
 */

#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "image/digest.h"
#include "image/reference.h"
#include "image/registries.h"

struct registry_options {
        const struct registries *registries; /* mirrors, insecure hosts, CA; may be NULL */
        const char *auth_file;               /* NULL: the files podman and Docker read */
        const char *ca_file;                 /* NULL: registries->ca_file, else the system's */
        long max_recv_bytes_per_s;           /* 0: unlimited */
};

struct registry_client;

int registry_open(const struct registry_options *opt, const struct image_ref *ref,
                  struct registry_client **ret, psrun_error *err);
void registry_close(struct registry_client *c);
static inline void registry_closep(struct registry_client **c)
{
        registry_close(*c);
}

/* GET /v2/<repo>/manifests/<reference> (a tag or "sha256:..."). The body
 * is hashed: it must match the digest asked for, and the
 * Docker-Content-Digest the server sent. digest gets "sha256:<hex>". */
int registry_get_manifest(struct registry_client *c, const char *reference, char **body,
                          size_t *len, char **content_type, char digest[DIGEST_STR_LEN + 1],
                          psrun_error *err);

/* GET /v2/<repo>/blobs/<digest> into fd, whose first `have` bytes are what
 * an interrupted download already wrote (asked again with Range; a server
 * answering 200 rewrites it from the start). Verified while it streams:
 * more bytes than `size`, or a digest mismatch, is -EBADMSG naming the
 * digest. */
int registry_get_blob(struct registry_client *c, const char *digest, int64_t size, int fd,
                      off_t have, psrun_error *err);

/* Which endpoint answered last ("127.0.0.1:5000", a mirror's host). */
const char *registry_endpoint(const struct registry_client *c);

/* Whether libcurl can be loaded (tests and `psrun features`). */
int registry_transport_available(psrun_error *err);
