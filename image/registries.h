/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Which hosts serve a registry and how: mirrors tried before the registry
 * itself, registries (or mirrors) reached over plain HTTP, and the CA that
 * TLS is verified against when not the system's. From a JSON file in the
 * spirit of Docker's daemon.json and containers-registries.conf:
 *
 *   {
 *     "registry-mirrors": ["https://mirror.example"],      (docker.io's, as Docker's)
 *     "insecure-registries": ["127.0.0.1:5000"],
 *     "registries": {
 *       "ghcr.io": {"mirrors": ["ghcr-cache.internal:5000"]},
 *       "registry.internal:5000": {"insecure": true}
 *     },
 *     "ca-file": "/etc/psrun/registry-ca.pem"
 *   }
 *
 * and from the policy keys registry_mirrors ("MIRROR" for docker.io, or
 * "REGISTRY=MIRROR") and insecure_registries ("HOST[:PORT]"). A mirror is
 * host[:port] with an optional https:// (the default) or http:// (that
 * mirror is plain HTTP). Pure: no file is opened but by registries_load.
 */

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#define REGISTRIES_FILE_MAX (1u << 20)

struct registry_endpoint {
        char *host;    /* host[:port] the requests go to */
        bool insecure; /* plain HTTP */
        bool mirror;
};

struct registry_conf {
        char *name; /* "docker.io", "127.0.0.1:5000" */
        struct registry_endpoint *mirrors;
        size_t n_mirrors;
        bool insecure;
};

struct registries {
        struct registry_conf *v;
        size_t n;
        char *ca_file;
};

int registries_parse(struct registries *r, const char *buf, size_t len, const char *name,
                     psrun_error *err);
/* Reads and parses a file; a missing file is an error (the caller decides
 * whether a default path may be absent). */
int registries_load(struct registries *r, const char *path, psrun_error *err);
/* The policy keys: each adds to what r holds. */
int registries_set_mirrors(struct registries *r, char *const *entries, psrun_error *err);
int registries_set_insecure(struct registries *r, char *const *entries, psrun_error *err);
int registries_set_ca_file(struct registries *r, const char *path, psrun_error *err);
void registries_free(struct registries *r);

/* The endpoints a pull from `registry` tries in order: its mirrors, then
 * the registry itself (docker.io's API host is registry-1.docker.io). */
int registries_endpoints(const struct registries *r, const char *registry,
                         struct registry_endpoint **ret, size_t *ret_n, psrun_error *err);
void registry_endpoints_free(struct registry_endpoint *v, size_t n);
