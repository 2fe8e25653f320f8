/* SPDX-License-Identifier: MIT */

#include "image/oci-layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "image/digest.h"
#include "image/jsondoc.h"

struct layout {
        int dirfd;
        const char *dir;
};

static int open_blob(const struct layout *l, const char *digest, psrun_error *err)
{
        char path[96];
        /* digest_valid: the name is 64 hex digits, no path of its own */
        if (!digest_valid(digest))
                return psrun_error_set(err, EINVAL, "image: %s: bad digest", l->dir);
        snprintf(path, sizeof(path), "blobs/sha256/%s", digest + 7);
        int fd = openat(l->dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: %s: blob %s", l->dir, digest);
        return fd;
}

static int layout_source(void *ctx, const struct descriptor *d, int fd, off_t have,
                         psrun_error *err)
{
        const struct layout *l = ctx;
        _cleanup_close_ int src = open_blob(l, d->digest, err);
        if (src < 0)
                return src;
        /* a local copy is redone, not resumed */
        if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
                return psrun_error_errno(err, errno, "image: blob %s", d->digest);
        int r = image_copy_verified(src, fd, d->digest, d->size, err);
        if (r < 0)
                return psrun_error_prefix(err, "%s", l->dir);
        return 0;
}

/* A small JSON blob (manifest, index) read whole and verified. */
static int read_small_blob(const struct layout *l, const struct descriptor *d, char **buf,
                           size_t *len, psrun_error *err)
{
        if (d->size > (int64_t) MANIFEST_MAX_BYTES)
                return psrun_error_set(err, EFBIG, "image: %s: manifest %s of %lld bytes", l->dir,
                                       d->digest, (long long) d->size);
        _cleanup_close_ int fd = open_blob(l, d->digest, err);
        if (fd < 0)
                return fd;
        int r = read_all(fd, MANIFEST_MAX_BYTES, buf, len);
        if (r < 0)
                return psrun_error_errno(err, r, "image: %s: blob %s", l->dir, d->digest);
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        if ((r = sha256_new(&h, err)) < 0)
                return r;
        char hex[SHA256_HEX_LEN + 1];
        sha256_update(h, *buf, *len);
        sha256_final_hex(h, hex);
        if ((int64_t) *len != d->size || strcmp(hex, d->digest + 7) != 0) {
                free(*buf);
                *buf = NULL;
                return psrun_error_set(err, EBADMSG,
                                       "image: %s: blob %s does not match its digest: refused",
                                       l->dir, d->digest);
        }
        return 0;
}

static int check_layout_file(const struct layout *l, psrun_error *err)
{
        _cleanup_close_ int fd = openat(l->dirfd, "oci-layout", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: %s: not an OCI layout (oci-layout)",
                                         l->dir);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_all(fd, 4096, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "image: %s/oci-layout", l->dir);
        struct jdoc d;
        if ((r = jdoc_parse(&d, buf, len, "oci-layout", err)) < 0)
                return psrun_error_prefix(err, "%s", l->dir);
        const char *version = NULL;
        r = jdoc_get_string(&d, jdoc_root(&d), "imageLayoutVersion", &version, err);
        if (r >= 0 && (!version || strcmp(version, "1.0.0") != 0))
                r = psrun_error_set(err, ENOTSUP, "image: %s: imageLayoutVersion is not 1.0.0",
                                    l->dir);
        jdoc_free(&d);
        return r;
}

static int choose_entry(const struct layout *l, const struct manifest *index, const char *tag,
                        const struct descriptor **ret, psrun_error *err)
{
        *ret = NULL;
        for (size_t i = 0; i < index->n_manifests; i++) {
                const struct descriptor *e = &index->manifests[i];
                if (tag ? (e->ref_name && strcmp(e->ref_name, tag) == 0)
                        : index->n_manifests == 1) {
                        *ret = e;
                        return 0;
                }
        }
        if (!tag)
                return psrun_error_set(err, ENOENT,
                                       "image: %s holds %zu images: name one as oci:DIR:TAG",
                                       l->dir, index->n_manifests);
        return psrun_error_set(err, ENOENT, "image: %s has no image tagged `%s`", l->dir, tag);
}

static bool is_index(const char *t)
{
        return strcmp(t, MEDIA_OCI_INDEX) == 0 || strcmp(t, MEDIA_DOCKER_LIST) == 0;
}

static int import_locked(struct image_store *s, const struct layout *l, const char *tag,
                         const char *name, bool fetch_only, struct image_record *rec,
                         struct store_pull_stats *st, psrun_error *err)
{
        int r = check_layout_file(l, err);
        if (r < 0)
                return r;
        _cleanup_close_ int ifd = openat(l->dirfd, "index.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (ifd < 0)
                return psrun_error_errno(err, errno, "image: %s/index.json", l->dir);
        _cleanup_free_ char *ibuf = NULL;
        size_t ilen = 0;
        if ((r = read_all(ifd, MANIFEST_MAX_BYTES, &ibuf, &ilen)) < 0)
                return psrun_error_errno(err, r, "image: %s/index.json", l->dir);
        struct manifest index;
        if ((r = manifest_parse(ibuf, ilen, MEDIA_OCI_INDEX, "index.json", &index, err)) < 0)
                return psrun_error_prefix(err, "%s", l->dir);
        const struct descriptor *entry;
        r = choose_entry(l, &index, tag, &entry, err);
        struct descriptor chosen = {0};
        if (r >= 0) {
                chosen.digest = strdup(entry->digest);
                chosen.media_type = strdup(entry->media_type);
                chosen.size = entry->size;
                if (!chosen.digest || !chosen.media_type)
                        r = psrun_error_errno(err, ENOMEM, "image");
        }
        manifest_free(&index);
        _cleanup_free_ char *cd = chosen.digest, *ct = chosen.media_type;
        if (r < 0)
                return r;
        _cleanup_free_ char *body = NULL, *index_digest = NULL;
        size_t len = 0;
        if ((r = read_small_blob(l, &chosen, &body, &len, err)) < 0)
                return r;
        struct manifest m;
        if ((r = manifest_parse(body, len, chosen.media_type, chosen.digest, &m, err)) < 0)
                return psrun_error_prefix(err, "%s", l->dir);
        if (m.kind == MANIFEST_INDEX || is_index(chosen.media_type)) {
                const struct descriptor *plat;
                r = manifest_choose(&m, "linux", manifest_host_arch(), NULL, l->dir, &plat, err);
                struct descriptor next = {0};
                if (r >= 0) {
                        next.digest = strdup(plat->digest);
                        next.media_type = strdup(plat->media_type);
                        next.size = plat->size;
                }
                manifest_free(&m);
                _cleanup_free_ char *nd = next.digest, *nt = next.media_type;
                if (r < 0)
                        return r;
                if (!nd || !nt)
                        return psrun_error_errno(err, ENOMEM, "image");
                if ((r = image_store_put_blob(s, chosen.digest, body, len, err)) < 0)
                        return r;
                index_digest = TAKE_PTR(cd);
                chosen.digest = nd;
                free(body);
                body = NULL;
                if ((r = read_small_blob(l, &next, &body, &len, err)) < 0)
                        return r;
                if ((r = manifest_parse(body, len, next.media_type, next.digest, &m, err)) < 0)
                        return psrun_error_prefix(err, "%s", l->dir);
                chosen.digest = NULL;
                cd = TAKE_PTR(nd);
        }
        if (m.kind != MANIFEST_IMAGE) {
                manifest_free(&m);
                return psrun_error_set(err, EINVAL, "image: %s: the entry is not an image", l->dir);
        }
        /* the record, as a pull makes it */
        *rec = (struct image_record){0};
        rec->reference = strdup(name);
        rec->manifest = strdup(cd);
        rec->index = index_digest ? strdup(index_digest) : NULL;
        rec->media_type = strdup(m.media_type);
        rec->config = (struct descriptor){.media_type = strdup(m.config.media_type),
                                          .digest = strdup(m.config.digest),
                                          .size = m.config.size};
        rec->layers = calloc(m.n_layers ? m.n_layers : 1, sizeof(*rec->layers));
        bool oom = !rec->reference || !rec->manifest || (index_digest && !rec->index) ||
                   !rec->media_type || !rec->config.media_type || !rec->config.digest ||
                   !rec->layers;
        for (size_t i = 0; !oom && i < m.n_layers; i++) {
                rec->layers[i] = (struct descriptor){.media_type = strdup(m.layers[i].media_type),
                                                     .digest = strdup(m.layers[i].digest),
                                                     .size = m.layers[i].size};
                rec->n_layers = i + 1;
                oom = !rec->layers[i].media_type || !rec->layers[i].digest;
        }
        manifest_free(&m);
        if (oom)
                r = psrun_error_errno(err, ENOMEM, "image");
        if (r >= 0)
                r = image_store_put_blob(s, rec->manifest, body, len, err);
        if (r >= 0)
                r = image_store_fetch_blob(s, &rec->config, layout_source, (void *) l, st, err);
        for (size_t i = 0; r >= 0 && i < rec->n_layers; i++)
                r = image_store_fetch_blob(s, &rec->layers[i], layout_source, (void *) l, st, err);
        if (r >= 0)
                r = image_store_commit(s, rec, fetch_only, st, err);
        if (r < 0)
                image_record_free(rec);
        return r;
}

int image_store_import_oci(struct image_store *s, const char *dir, const char *tag,
                           const char *name, bool fetch_only, struct image_record *rec,
                           struct store_pull_stats *st, psrun_error *err)
{
        *rec = (struct image_record){0};
        *st = (struct store_pull_stats){0};
        _cleanup_free_ char *default_name = NULL;
        if (!name) {
                if (asprintf(&default_name, "oci:%s%s%s", dir, tag ? ":" : "", tag ? tag : "") < 0)
                        return psrun_error_errno(err, ENOMEM, "image");
                name = default_name;
        }
        _cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return psrun_error_errno(err, errno, "image: OCI layout %s", dir);
        struct layout l = {.dirfd = dirfd, .dir = dir};
        int fds[2];
        int r = image_store_lock_image(s, name, fds, err);
        if (r < 0)
                return r;
        r = import_locked(s, &l, tag, name, fetch_only, rec, st, err);
        image_store_unlock(fds);
        return r;
}
