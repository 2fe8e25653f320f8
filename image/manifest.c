/* SPDX-License-Identifier: MIT */

#include "image/manifest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/number.h"
#include "image/digest.h"
#include "image/jsondoc.h"

static const char *const layer_types[] = {
        "application/vnd.oci.image.layer.v1.tar",
        "application/vnd.oci.image.layer.v1.tar+gzip",
        "application/vnd.oci.image.layer.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.diff.tar",
};

bool manifest_layer_type_known(const char *media_type)
{
        for (size_t i = 0; i < ARRAY_SIZE(layer_types); i++)
                if (media_type && strcmp(media_type, layer_types[i]) == 0)
                        return true;
        return false;
}

const char *manifest_host_arch(void)
{
#if defined(__x86_64__)
        return "amd64";
#elif defined(__aarch64__)
        return "arm64";
#elif defined(__i386__)
        return "386";
#elif defined(__arm__)
        return "arm";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return "ppc64le";
#elif defined(__s390x__)
        return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
        return "riscv64";
#else
        return "unknown";
#endif
}

static void descriptor_free(struct descriptor *d)
{
        free(d->media_type);
        free(d->digest);
        free(d->os);
        free(d->arch);
        free(d->variant);
        free(d->ref_name);
        *d = (struct descriptor){0};
}

void manifest_free(struct manifest *m)
{
        if (!m)
                return;
        free(m->media_type);
        descriptor_free(&m->config);
        for (size_t i = 0; i < m->n_layers; i++)
                descriptor_free(&m->layers[i]);
        free(m->layers);
        for (size_t i = 0; i < m->n_manifests; i++)
                descriptor_free(&m->manifests[i]);
        free(m->manifests);
        *m = (struct manifest){0};
}

static int dup_opt(const char *s, char **ret, psrun_error *err)
{
        *ret = NULL;
        if (s && !(*ret = strdup(s)))
                return psrun_error_errno(err, ENOMEM, "image");
        return 0;
}

/* One descriptor: mediaType, digest, size required; platform and the
 * ref.name annotation when `index_entry`. `what` names it in messages. */
static int parse_descriptor(struct jdoc *d, jnode *n, bool index_entry, const char *what,
                            struct descriptor *out, psrun_error *err)
{
        *out = (struct descriptor){0};
        if (!jdoc_is_object(n))
                return psrun_error_set(err, EINVAL, "image: %s: %s is not an object", d->name,
                                       what);
        const char *media = NULL, *digest = NULL;
        int64_t size = -1;
        bool has_size = false;
        int r;
        if ((r = jdoc_get_string(d, n, "mediaType", &media, err)) < 0 ||
            (r = jdoc_get_string(d, n, "digest", &digest, err)) < 0 ||
            (r = jdoc_get_int64(d, n, "size", &size, &has_size, err)) < 0)
                return r;
        if (!media)
                return psrun_error_set(err, EINVAL, "image: %s: %s has no mediaType", d->name,
                                       what);
        if (!digest)
                return psrun_error_set(err, EINVAL, "image: %s: %s has no digest", d->name, what);
        psrun_error derr = {0};
        if (digest_parse(digest, NULL, &derr) < 0)
                return psrun_error_set(err, derr.code, "image: %s: %s: %s", d->name, what,
                                       derr.msg + strlen("image: "));
        if (!has_size || size < 0)
                return psrun_error_set(err, EINVAL, "image: %s: %s has no size (or a negative one)",
                                       d->name, what);
        jnode *urls;
        if ((r = jdoc_get(d, n, "urls", &urls, err)) < 0)
                return r;
        if (urls && jdoc_array_len(urls) > 0)
                return psrun_error_set(err, ENOTSUP,
                                       "image: %s: %s %s is a foreign layer (urls): not fetched",
                                       d->name, what, digest);
        out->size = size;
        if ((r = dup_opt(media, &out->media_type, err)) < 0 ||
            (r = dup_opt(digest, &out->digest, err)) < 0)
                goto fail;
        if (index_entry) {
                jnode *platform, *ann;
                const char *os = NULL, *arch = NULL, *variant = NULL, *refname = NULL;
                if ((r = jdoc_get(d, n, "platform", &platform, err)) < 0)
                        goto fail;
                if (platform &&
                    ((r = jdoc_get_string(d, platform, "os", &os, err)) < 0 ||
                     (r = jdoc_get_string(d, platform, "architecture", &arch, err)) < 0 ||
                     (r = jdoc_get_string(d, platform, "variant", &variant, err)) < 0))
                        goto fail;
                if ((r = jdoc_get(d, n, "annotations", &ann, err)) < 0)
                        goto fail;
                if (ann && (r = jdoc_get_string(d, ann, "org.opencontainers.image.ref.name",
                                                &refname, err)) < 0)
                        goto fail;
                if ((r = dup_opt(os, &out->os, err)) < 0 ||
                    (r = dup_opt(arch, &out->arch, err)) < 0 ||
                    (r = dup_opt(variant, &out->variant, err)) < 0 ||
                    (r = dup_opt(refname, &out->ref_name, err)) < 0)
                        goto fail;
        }
        return 0;
fail:
        descriptor_free(out);
        return r;
}

static bool is_index_type(const char *t)
{
        return strcmp(t, MEDIA_OCI_INDEX) == 0 || strcmp(t, MEDIA_DOCKER_LIST) == 0;
}

static bool is_manifest_type(const char *t)
{
        return strcmp(t, MEDIA_OCI_MANIFEST) == 0 || strcmp(t, MEDIA_DOCKER_MANIFEST) == 0;
}

/* "application/json; charset=utf-8" compares as "application/json". */
static size_t media_len(const char *t)
{
        size_t n = strcspn(t, "; \t");
        return n;
}

static int parse_list(struct jdoc *d, jnode *arr, bool index_entries, size_t max, const char *what,
                      struct descriptor **ret, size_t *ret_n, psrun_error *err)
{
        size_t n = jdoc_array_len(arr);
        if (n > max)
                return psrun_error_set(err, E2BIG, "image: %s: %zu %s (at most %zu)", d->name, n,
                                       what, max);
        struct descriptor *v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "image");
        *ret = v;
        *ret_n = 0;
        for (size_t i = 0; i < n; i++) {
                char label[48];
                snprintf(label, sizeof(label), "%s[%zu]", what, i);
                int r = parse_descriptor(d, jdoc_array_item(d, arr, i), index_entries, label, &v[i],
                                         err);
                if (r < 0)
                        return r;
                *ret_n = i + 1;
        }
        return 0;
}

static int parse_doc(struct jdoc *d, const char *content_type, struct manifest *m, psrun_error *err)
{
        jnode *root = jdoc_root(d);
        const char *field = NULL;
        int64_t schema = 0;
        bool has_schema = false;
        int r;
        if ((r = jdoc_get_string(d, root, "mediaType", &field, err)) < 0 ||
            (r = jdoc_get_int64(d, root, "schemaVersion", &schema, &has_schema, err)) < 0)
                return r;
        if (has_schema && schema == 1)
                return psrun_error_set(err, ENOTSUP,
                                       "image: %s: Docker schema 1 manifests are not supported "
                                       "(push the image again with a current client)",
                                       d->name);
        if (!has_schema || schema != 2)
                return psrun_error_set(err, EINVAL, "image: %s: schemaVersion must be 2", d->name);

        char ctype[128] = "";
        if (content_type) {
                size_t n = media_len(content_type);
                if (n >= sizeof(ctype))
                        n = sizeof(ctype) - 1;
                memcpy(ctype, content_type, n);
                ctype[n] = '\0';
        }
        bool ctype_known = is_index_type(ctype) || is_manifest_type(ctype);
        static const char schema1[] = "application/vnd.docker.distribution.manifest.v1";
        if (strncmp(ctype, schema1, sizeof(schema1) - 1) == 0)
                return psrun_error_set(err, ENOTSUP,
                                       "image: %s: Docker schema 1 manifests are not supported",
                                       d->name);
        if (field && !is_index_type(field) && !is_manifest_type(field)) {
                char shown[96];
                return psrun_error_set(err, EINVAL,
                                       "image: %s: media type `%s` is not a manifest "
                                       "or an index",
                                       d->name, number_shown(field, shown, sizeof(shown)));
        }
        /* The document's own mediaType and the server's Content-Type must
         * agree when both name a manifest kind: a document read as one
         * kind and served as another is refused (the confusion CVE-2021-41190
         * closed). */
        if (field && ctype_known && strcmp(field, ctype) != 0)
                return psrun_error_set(err, EINVAL,
                                       "image: %s: served as %s but its mediaType is %s", d->name,
                                       ctype, field);
        const char *type = field ? field : ctype_known ? ctype : NULL;
        jnode *layers, *manifests, *config;
        if ((r = jdoc_get(d, root, "layers", &layers, err)) < 0 ||
            (r = jdoc_get(d, root, "manifests", &manifests, err)) < 0 ||
            (r = jdoc_get(d, root, "config", &config, err)) < 0)
                return r;
        if (layers && manifests)
                return psrun_error_set(err, EINVAL, "image: %s: has both layers and manifests",
                                       d->name);
        if (!type)
                type = manifests ? MEDIA_OCI_INDEX : MEDIA_OCI_MANIFEST;
        if ((r = dup_opt(type, &m->media_type, err)) < 0)
                return r;

        if (is_index_type(type)) {
                m->kind = MANIFEST_INDEX;
                if (!jdoc_is_array(manifests))
                        return psrun_error_set(err, EINVAL,
                                               "image: %s: an index without a "
                                               "manifests array",
                                               d->name);
                return parse_list(d, manifests, true, INDEX_MAX_MANIFESTS, "manifests",
                                  &m->manifests, &m->n_manifests, err);
        }
        m->kind = MANIFEST_IMAGE;
        if (!config)
                return psrun_error_set(err, EINVAL, "image: %s: a manifest without config",
                                       d->name);
        if ((r = parse_descriptor(d, config, false, "config", &m->config, err)) < 0)
                return r;
        if (!jdoc_is_array(layers))
                return psrun_error_set(err, EINVAL, "image: %s: a manifest without a layers array",
                                       d->name);
        if ((r = parse_list(d, layers, false, MANIFEST_MAX_LAYERS, "layers", &m->layers,
                            &m->n_layers, err)) < 0)
                return r;
        for (size_t i = 0; i < m->n_layers; i++)
                if (!manifest_layer_type_known(m->layers[i].media_type)) {
                        char shown[96];
                        return psrun_error_set(
                                err, ENOTSUP,
                                "image: %s: layer %s has media type `%s`, not a "
                                "tar layer (plain, gzip or zstd)",
                                d->name, m->layers[i].digest,
                                number_shown(m->layers[i].media_type, shown, sizeof(shown)));
                }
        return 0;
}

int manifest_parse(const char *buf, size_t len, const char *content_type, const char *name,
                   struct manifest *m, psrun_error *err)
{
        *m = (struct manifest){0};
        if (len > MANIFEST_MAX_BYTES)
                return psrun_error_set(err, EFBIG, "image: %s: manifest of %zu bytes (at most %u)",
                                       name, len, MANIFEST_MAX_BYTES);
        struct jdoc d;
        int r = jdoc_parse(&d, buf, len, name, err);
        if (r < 0)
                return r;
        r = parse_doc(&d, content_type, m, err);
        jdoc_free(&d);
        if (r < 0)
                manifest_free(m);
        return r;
}

int manifest_choose(const struct manifest *index, const char *os, const char *arch,
                    const char *variant, const char *name, const struct descriptor **ret,
                    psrun_error *err)
{
        *ret = NULL;
        for (size_t i = 0; i < index->n_manifests; i++) {
                const struct descriptor *e = &index->manifests[i];
                if (!e->os || !e->arch || strcmp(e->os, os) != 0 || strcmp(e->arch, arch) != 0)
                        continue;
                if (variant && e->variant && strcmp(variant, e->variant) != 0)
                        continue;
                if (!variant && strcmp(arch, "arm64") == 0 && e->variant &&
                    strcmp(e->variant, "v8") != 0)
                        continue;
                /* nested indexes are not followed */
                if (!is_manifest_type(e->media_type))
                        continue;
                *ret = e;
                return 0;
        }
        char have[256] = "";
        size_t used = 0;
        for (size_t i = 0; i < index->n_manifests && used < sizeof(have) - 40; i++) {
                const struct descriptor *e = &index->manifests[i];
                char one[48];
                snprintf(one, sizeof(one), "%s%.12s/%.12s", i ? ", " : "", e->os ? e->os : "?",
                         e->arch ? e->arch : "?");
                used += (size_t) snprintf(have + used, sizeof(have) - used, "%s", one);
        }
        return psrun_error_set(err, ENOENT, "image: %s: no %s/%s image in the index (it has: %s)",
                               name, os, arch, index->n_manifests ? have : "nothing");
}
