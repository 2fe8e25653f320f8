/* SPDX-License-Identifier: MIT */

#include "image/registries.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/number.h"
#include "image/jsondoc.h"
#include "image/reference.h"

void registry_endpoints_free(struct registry_endpoint *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i].host);
        free(v);
}

void registries_free(struct registries *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n; i++) {
                free(r->v[i].name);
                registry_endpoints_free(r->v[i].mirrors, r->v[i].n_mirrors);
        }
        free(r->v);
        free(r->ca_file);
        *r = (struct registries){0};
}

/* host[:port] as a reference's first component may be one. */
static bool valid_host(const char *s)
{
        if (!*s || strlen(s) > 253 + 6)
                return false;
        /* a reference with this host and a one-part path must parse with
         * this host: the grammar is reference.c's */
        _cleanup_free_ char *probe = NULL;
        if (asprintf(&probe, "%s/x", s) < 0)
                return false;
        struct image_ref ref;
        psrun_error e = {0};
        if (image_ref_parse(probe, &ref, &e) < 0)
                return false;
        bool same = strcmp(ref.registry, s) == 0 || strcmp(s, "docker.io") == 0 ||
                    strcmp(s, "index.docker.io") == 0;
        image_ref_free(&ref);
        return same;
}

static int find_or_add(struct registries *r, const char *name, struct registry_conf **ret,
                       psrun_error *err)
{
        const char *canon = strcmp(name, "index.docker.io") == 0 ? "docker.io" : name;
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->v[i].name, canon) == 0) {
                        *ret = &r->v[i];
                        return 0;
                }
        if (r->n >= 1024)
                return psrun_error_set(err, E2BIG, "image: registries: more than 1024 registries");
        struct registry_conf *v = realloc(r->v, (r->n + 1) * sizeof(*v));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "image: registries");
        r->v = v;
        v[r->n] = (struct registry_conf){.name = strdup(canon)};
        if (!v[r->n].name)
                return psrun_error_errno(err, ENOMEM, "image: registries");
        *ret = &v[r->n++];
        return 0;
}

static int add_mirror(struct registries *r, const char *registry, const char *mirror,
                      const char *where, psrun_error *err)
{
        char shown[96];
        if (!valid_host(registry))
                return psrun_error_set(err, EINVAL, "image: %s: `%s` is not a registry host[:port]",
                                       where, number_shown(registry, shown, sizeof(shown)));
        bool insecure = false;
        const char *host = mirror;
        if (strncmp(host, "https://", 8) == 0)
                host += 8;
        else if (strncmp(host, "http://", 7) == 0) {
                host += 7;
                insecure = true;
        } else if (strstr(host, "://"))
                return psrun_error_set(err, EINVAL,
                                       "image: %s: mirror `%s`: only https:// or "
                                       "http://",
                                       where, number_shown(mirror, shown, sizeof(shown)));
        _cleanup_free_ char *h = strdup(host);
        if (!h)
                return psrun_error_errno(err, ENOMEM, "image: registries");
        size_t hl = strlen(h);
        if (hl && h[hl - 1] == '/')
                h[hl - 1] = '\0';
        if (!valid_host(h))
                return psrun_error_set(
                        err, EINVAL, "image: %s: mirror `%s` is not [https://|http://]host[:port]",
                        where, number_shown(mirror, shown, sizeof(shown)));
        struct registry_conf *c;
        int rc = find_or_add(r, registry, &c, err);
        if (rc < 0)
                return rc;
        if (c->n_mirrors >= 16)
                return psrun_error_set(err, E2BIG, "image: %s: more than 16 mirrors for %s", where,
                                       c->name);
        struct registry_endpoint *m = realloc(c->mirrors, (c->n_mirrors + 1) * sizeof(*m));
        if (!m)
                return psrun_error_errno(err, ENOMEM, "image: registries");
        c->mirrors = m;
        m[c->n_mirrors++] = (struct registry_endpoint){
                .host = TAKE_PTR(h), .insecure = insecure, .mirror = true};
        return 0;
}

static int add_insecure(struct registries *r, const char *host, const char *where, psrun_error *err)
{
        char shown[96];
        if (!valid_host(host))
                return psrun_error_set(err, EINVAL, "image: %s: `%s` is not a registry host[:port]",
                                       where, number_shown(host, shown, sizeof(shown)));
        struct registry_conf *c;
        int rc = find_or_add(r, host, &c, err);
        if (rc < 0)
                return rc;
        c->insecure = true;
        return 0;
}

int registries_set_ca_file(struct registries *r, const char *path, psrun_error *err)
{
        if (!path || path[0] != '/')
                return psrun_error_set(err, EINVAL,
                                       "image: registries: ca-file must be an "
                                       "absolute path");
        char *p = strdup(path);
        if (!p)
                return psrun_error_errno(err, ENOMEM, "image: registries");
        free(r->ca_file);
        r->ca_file = p;
        return 0;
}

int registries_set_mirrors(struct registries *r, char *const *entries, psrun_error *err)
{
        for (size_t i = 0; entries && entries[i]; i++) {
                const char *eq = strchr(entries[i], '=');
                int rc;
                if (eq) {
                        _cleanup_free_ char *reg = strndup(entries[i], (size_t) (eq - entries[i]));
                        if (!reg)
                                return psrun_error_errno(err, ENOMEM, "image: registries");
                        rc = add_mirror(r, reg, eq + 1, "registry_mirrors", err);
                } else {
                        rc = add_mirror(r, "docker.io", entries[i], "registry_mirrors", err);
                }
                if (rc < 0)
                        return rc;
        }
        return 0;
}

int registries_set_insecure(struct registries *r, char *const *entries, psrun_error *err)
{
        for (size_t i = 0; entries && entries[i]; i++) {
                int rc = add_insecure(r, entries[i], "insecure_registries", err);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

static int string_list(struct jdoc *d, jnode *arr, const char *key, const char *registry,
                       struct registries *r, bool mirrors, psrun_error *err)
{
        if (!jdoc_is_array(arr))
                return psrun_error_set(err, EINVAL, "image: %s: `%s` must be a list of strings",
                                       d->name, key);
        for (size_t i = 0; i < jdoc_array_len(arr); i++) {
                const char *s = jdoc_string(jdoc_array_item(d, arr, i));
                if (!s)
                        return psrun_error_set(err, EINVAL,
                                               "image: %s: `%s` must be a list of "
                                               "strings",
                                               d->name, key);
                int rc = mirrors ? add_mirror(r, registry, s, d->name, err)
                                 : add_insecure(r, s, d->name, err);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

static int parse_registry(struct jdoc *d, const char *name, jnode *obj, struct registries *r,
                          psrun_error *err)
{
        char shown[96];
        if (!jdoc_is_object(obj))
                return psrun_error_set(err, EINVAL, "image: %s: registries.`%s` must be an object",
                                       d->name, number_shown(name, shown, sizeof(shown)));
        if (!valid_host(name))
                return psrun_error_set(err, EINVAL, "image: %s: `%s` is not a registry host[:port]",
                                       d->name, number_shown(name, shown, sizeof(shown)));
        struct registry_conf *c;
        int rc = find_or_add(r, name, &c, err);
        if (rc < 0)
                return rc;
        for (size_t i = 0; i < jdoc_object_len(obj); i++) {
                const char *key = jdoc_object_key(d, obj, i);
                jnode *v = jdoc_object_value(d, obj, i);
                if (key && strcmp(key, "mirrors") == 0) {
                        if ((rc = string_list(d, v, "mirrors", name, r, true, err)) < 0)
                                return rc;
                } else if (key && strcmp(key, "insecure") == 0) {
                        if (!v || v->type != YAML_SCALAR_NODE ||
                            v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
                            (strcmp((char *) v->data.scalar.value, "true") != 0 &&
                             strcmp((char *) v->data.scalar.value, "false") != 0))
                                return psrun_error_set(err, EINVAL,
                                                       "image: %s: registries.%s.insecure must be "
                                                       "true or false",
                                                       d->name, name);
                        if (strcmp((char *) v->data.scalar.value, "true") == 0 &&
                            (rc = add_insecure(r, name, d->name, err)) < 0)
                                return rc;
                } else {
                        return psrun_error_set(err, EINVAL,
                                               "image: %s: registries.%s: unknown key `%s` "
                                               "(mirrors, insecure)",
                                               d->name, name,
                                               number_shown(key ? key : "?", shown, sizeof(shown)));
                }
        }
        return 0;
}

int registries_parse(struct registries *r, const char *buf, size_t len, const char *name,
                     psrun_error *err)
{
        if (len > REGISTRIES_FILE_MAX)
                return psrun_error_set(err, EFBIG, "image: %s: larger than %u bytes", name,
                                       REGISTRIES_FILE_MAX);
        struct jdoc d;
        int rc = jdoc_parse(&d, buf, len, name, err);
        if (rc < 0)
                return rc;
        jnode *root = jdoc_root(&d);
        char shown[96];
        for (size_t i = 0; i < jdoc_object_len(root) && rc >= 0; i++) {
                const char *key = jdoc_object_key(&d, root, i);
                jnode *v = jdoc_object_value(&d, root, i);
                if (key && strcmp(key, "registry-mirrors") == 0) {
                        rc = string_list(&d, v, key, "docker.io", r, true, err);
                } else if (key && strcmp(key, "insecure-registries") == 0) {
                        rc = string_list(&d, v, key, NULL, r, false, err);
                } else if (key && strcmp(key, "ca-file") == 0) {
                        const char *s = jdoc_string(v);
                        rc = s ? registries_set_ca_file(r, s, err)
                               : psrun_error_set(err, EINVAL, "image: %s: ca-file must be a string",
                                                 name);
                } else if (key && strcmp(key, "registries") == 0) {
                        if (!jdoc_is_object(v)) {
                                rc = psrun_error_set(err, EINVAL,
                                                     "image: %s: registries must be an object",
                                                     name);
                                break;
                        }
                        for (size_t j = 0; j < jdoc_object_len(v) && rc >= 0; j++) {
                                const char *reg = jdoc_object_key(&d, v, j);
                                rc = reg ? parse_registry(&d, reg, jdoc_object_value(&d, v, j), r,
                                                          err)
                                         : psrun_error_set(err, EINVAL,
                                                           "image: %s: a key is not "
                                                           "a string",
                                                           name);
                        }
                } else {
                        rc = psrun_error_set(err, EINVAL,
                                             "image: %s: unknown key `%s` (registry-mirrors, "
                                             "insecure-registries, registries, ca-file)",
                                             name,
                                             number_shown(key ? key : "?", shown, sizeof(shown)));
                }
        }
        jdoc_free(&d);
        return rc;
}

int registries_load(struct registries *r, const char *path, psrun_error *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: registries file %s", path);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int rc = read_all(fd, REGISTRIES_FILE_MAX, &buf, &len);
        if (rc < 0)
                return psrun_error_errno(err, rc, "image: registries file %s", path);
        return registries_parse(r, buf, len, path, err);
}

int registries_endpoints(const struct registries *r, const char *registry,
                         struct registry_endpoint **ret, size_t *ret_n, psrun_error *err)
{
        const struct registry_conf *c = NULL;
        for (size_t i = 0; r && i < r->n; i++)
                if (strcmp(r->v[i].name, registry) == 0)
                        c = &r->v[i];
        size_t n = (c ? c->n_mirrors : 0) + 1;
        struct registry_endpoint *v = calloc(n, sizeof(*v));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "image: registries");
        for (size_t i = 0; c && i < c->n_mirrors; i++) {
                v[i] = c->mirrors[i];
                /* a mirror listed as insecure by name is plain HTTP too */
                for (size_t j = 0; j < r->n; j++)
                        if (strcmp(r->v[j].name, c->mirrors[i].host) == 0 && r->v[j].insecure)
                                v[i].insecure = true;
                if (!(v[i].host = strdup(c->mirrors[i].host))) {
                        registry_endpoints_free(v, i);
                        return psrun_error_errno(err, ENOMEM, "image: registries");
                }
        }
        size_t last = n - 1;
        const char *host = strcmp(registry, "docker.io") == 0 ? "registry-1.docker.io" : registry;
        v[last] = (struct registry_endpoint){.host = strdup(host), .insecure = c && c->insecure};
        if (!v[last].host) {
                registry_endpoints_free(v, last);
                return psrun_error_errno(err, ENOMEM, "image: registries");
        }
        *ret = v;
        *ret_n = n;
        return 0;
}
