/* SPDX-License-Identifier: MIT */
/* docker-archive import (image/docker-archive.h): the archive read once
 * through image/tar.c to find its files, then each one copied from where
 * it lies, verified. */
#include "image/docker-archive.h"

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
#include "image/manifest.h"
#include "image/tar.h"

#define ARCHIVE_JSON_MAX (8u << 20) /* manifest.json, a config */
#define MEDIA_OCI_LAYER  "application/vnd.oci.image.layer.v1.tar"

struct afile {
        char *name; /* cleaned: no `./`, no `..` */
        char *link; /* a symlink's target, cleaned, relative to the archive's root */
        uint64_t off, size;
};

struct archive {
        int fd;
        const char *file;
        struct afile *v;
        size_t n;
        /* what the source copies: the config and layers, by digest */
        const struct descriptor *want;
        const struct afile **want_file;
        size_t n_want;
};

static void archive_free(struct archive *a)
{
        for (size_t i = 0; i < a->n; i++) {
                free(a->v[i].name);
                free(a->v[i].link);
        }
        free(a->v);
        free(a->want_file);
        safe_close(a->fd);
}

/* A name cleaned as a path below the archive's root: `.` and empty parts
 * dropped, `..` taken back; NULL when it climbs out (or out of memory). */
static char *clean_path(const char *base, const char *name)
{
        size_t cap = strlen(base) + strlen(name) + 2;
        char *in = malloc(cap), *out = malloc(cap);
        if (!in || !out) {
                free(in);
                free(out);
                return NULL;
        }
        snprintf(in, cap, "%s%s%s", base, base[0] ? "/" : "", name);
        size_t len = 0;
        char *save = NULL;
        for (char *part = strtok_r(in, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
                if (strcmp(part, ".") == 0)
                        continue;
                if (strcmp(part, "..") == 0) {
                        if (len == 0) {
                                free(in);
                                free(out);
                                return NULL;
                        }
                        while (len > 0 && out[len - 1] != '/')
                                len--;
                        if (len > 0)
                                len--;
                        continue;
                }
                if (len)
                        out[len++] = '/';
                size_t pl = strlen(part);
                memcpy(out + len, part, pl);
                len += pl;
        }
        out[len] = '\0';
        free(in);
        return out;
}

static ssize_t fd_read(void *ctx, void *buf, size_t len, psrun_error *err)
{
        struct archive *a = ctx;
        for (;;) {
                ssize_t n = read(a->fd, buf, len);
                if (n >= 0)
                        return n;
                if (errno != EINTR)
                        return psrun_error_errno(err, errno, "image: docker archive %s", a->file);
        }
}

/* Every regular file and symlink of the archive, with where its data is. */
static int scan(struct archive *a, psrun_error *err)
{
        struct tar_reader *t = tar_reader_new(fd_read, a);
        if (!t)
                return psrun_error_errno(err, ENOMEM, "image");
        int r;
        const struct tar_entry *e;
        while ((r = tar_next(t, &e, err)) > 0) {
                if (e->type != TAR_REG && e->type != TAR_SYMLINK)
                        continue;
                if (a->n >= DOCKER_ARCHIVE_MAX_FILES) {
                        r = psrun_error_set(err, E2BIG,
                                            "image: docker archive %s has more than %d files",
                                            a->file, DOCKER_ARCHIVE_MAX_FILES);
                        break;
                }
                struct afile *nv = realloc(a->v, (a->n + 1) * sizeof(*a->v));
                if (!nv) {
                        r = psrun_error_errno(err, ENOMEM, "image");
                        break;
                }
                a->v = nv;
                struct afile *f = &a->v[a->n];
                *f = (struct afile){.off = tar_offset(t), .size = e->size};
                f->name = clean_path("", e->path);
                if (f->name && e->type == TAR_SYMLINK) {
                        /* relative to the link's directory; an absolute or
                         * climbing target names nothing in the archive */
                        char *dir = strdup(f->name), *slash = dir ? strrchr(dir, '/') : NULL;
                        if (slash)
                                *slash = '\0';
                        else if (dir)
                                dir[0] = '\0';
                        f->link =
                                dir && e->linkpath[0] != '/' ? clean_path(dir, e->linkpath) : NULL;
                        free(dir);
                        if (!f->link)
                                f->link = strdup(""); /* resolves to nothing */
                }
                if (!f->name || (e->type == TAR_SYMLINK && !f->link)) {
                        free(f->name);
                        free(f->link);
                        if (f->name) {
                                r = psrun_error_errno(err, ENOMEM, "image");
                                break;
                        }
                        continue; /* a name climbing out: never looked up */
                }
                a->n++;
        }
        tar_reader_free(t);
        if (r < 0)
                return psrun_error_prefix(err, "image: docker archive %s", a->file);
        return 0;
}

/* A file by name, through at most 8 symlinks. */
static const struct afile *find(const struct archive *a, const char *name, psrun_error *err)
{
        _cleanup_free_ char *want = clean_path("", name);
        if (!want) {
                psrun_error_set(err, ENOENT, "image: docker archive %s has no file `%s`", a->file,
                                name);
                return NULL;
        }
        for (int hops = 0; hops < 8; hops++) {
                const struct afile *f = NULL;
                for (size_t i = 0; i < a->n; i++)
                        if (strcmp(a->v[i].name, want) == 0)
                                f = &a->v[i]; /* a later entry wins, as tar extracts */
                if (!f)
                        break;
                if (!f->link)
                        return f;
                free(want);
                if (!(want = strdup(f->link))) {
                        psrun_error_errno(err, ENOMEM, "image");
                        return NULL;
                }
        }
        psrun_error_set(err, ENOENT, "image: docker archive %s has no file `%s`", a->file, name);
        return NULL;
}

static int read_small(const struct archive *a, const struct afile *f, char **buf, size_t *len,
                      psrun_error *err)
{
        if (f->size > ARCHIVE_JSON_MAX)
                return psrun_error_set(err, EFBIG,
                                       "image: docker archive %s: `%s` is over %u bytes", a->file,
                                       f->name, ARCHIVE_JSON_MAX);
        char *b = malloc(f->size + 1);
        if (!b)
                return psrun_error_errno(err, ENOMEM, "image");
        size_t got = 0;
        while (got < f->size) {
                ssize_t n = pread(a->fd, b + got, f->size - got, (off_t) (f->off + got));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        free(b);
                        return psrun_error_errno(err, n < 0 ? errno : EPROTO,
                                                 "image: docker archive %s: `%s`", a->file,
                                                 f->name);
                }
                got += (size_t) n;
        }
        b[got] = '\0';
        *buf = b;
        *len = got;
        return 0;
}

/* The store's source: a file of the archive, hashed as it is copied. */
static int archive_source(void *ctx, const struct descriptor *d, int fd, off_t have,
                          psrun_error *err)
{
        struct archive *a = ctx;
        const struct afile *f = NULL;
        for (size_t i = 0; i < a->n_want && !f; i++)
                if (strcmp(a->want[i].digest, d->digest) == 0)
                        f = a->want_file[i];
        if (!f)
                return psrun_error_set(err, ENOENT, "image: docker archive %s: no file for %s",
                                       a->file, d->digest);
        if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
                return psrun_error_errno(err, errno, "image: blob %s", d->digest);
        if ((int64_t) f->size != d->size)
                return psrun_error_set(err, EBADMSG,
                                       "image: docker archive %s: `%s` is not %lld bytes", a->file,
                                       f->name, (long long) d->size);
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        int r = sha256_new(&h, err);
        if (r < 0)
                return r;
        const size_t bufsize = 1 << 20;
        _cleanup_free_ char *buf = malloc(bufsize);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "image");
        uint64_t done = 0;
        while (done < f->size) {
                size_t want = f->size - done < bufsize ? (size_t) (f->size - done) : bufsize;
                ssize_t n = pread(a->fd, buf, want, (off_t) (f->off + done));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return psrun_error_errno(err, n < 0 ? errno : EPROTO,
                                                 "image: docker archive %s: `%s`", a->file,
                                                 f->name);
                sha256_update(h, buf, (size_t) n);
                if ((r = write_all(fd, buf, (size_t) n)) < 0)
                        return psrun_error_errno(err, r, "image: writing blob %s", d->digest);
                done += (uint64_t) n;
        }
        char got[SHA256_HEX_LEN + 1];
        sha256_final_hex(h, got);
        if (strcmp(got, d->digest + 7) != 0)
                return psrun_error_set(
                        err, EBADMSG,
                        "image: docker archive %s: `%s` does not match %s (it hashes "
                        "to sha256:%s): refused",
                        a->file, f->name, d->digest, got);
        return 0;
}

static int hash_hex(const char *buf, size_t len, char digest[DIGEST_STR_LEN + 1], psrun_error *err)
{
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        int r = sha256_new(&h, err);
        if (r < 0)
                return r;
        char hex[SHA256_HEX_LEN + 1];
        sha256_update(h, buf, len);
        sha256_final_hex(h, hex);
        snprintf(digest, DIGEST_STR_LEN + 1, "sha256:%s", hex);
        return 0;
}

/* manifest.json's one image: its Config and Layers, by name. */
static int read_manifest(struct archive *a, char **config, char ***layers, size_t *n_layers,
                         psrun_error *err)
{
        const struct afile *mf = find(a, "manifest.json", err);
        if (!mf)
                return -err->code;
        _cleanup_free_ char *raw = NULL;
        size_t len = 0;
        int r = read_small(a, mf, &raw, &len, err);
        if (r < 0)
                return r;
        /* the document is an array; the JSON reader takes objects */
        _cleanup_free_ char *doc = NULL;
        if (asprintf(&doc, "{\"m\":%s}", raw) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        char name[64];
        snprintf(name, sizeof(name), "manifest.json");
        struct jdoc d = {0};
        if ((r = jdoc_parse(&d, doc, strlen(doc), name, err)) < 0)
                return psrun_error_prefix(err, "image: docker archive %s", a->file);
        jnode *m = NULL, *entry, *lv = NULL;
        const char *cfg = NULL;
        r = jdoc_get(&d, jdoc_root(&d), "m", &m, err);
        if (r >= 0 && (!m || !jdoc_is_array(m)))
                r = psrun_error_set(err, EINVAL,
                                    "image: docker archive %s: manifest.json is not a list",
                                    a->file);
        if (r >= 0 && jdoc_array_len(m) != 1)
                r = psrun_error_set(err, EINVAL,
                                    "image: docker archive %s holds %zu images (psrun imports "
                                    "archives of one)",
                                    a->file, jdoc_array_len(m));
        if (r >= 0 && !jdoc_is_object(entry = jdoc_array_item(&d, m, 0)))
                r = psrun_error_set(
                        err, EINVAL,
                        "image: docker archive %s: manifest.json's entry is not an object",
                        a->file);
        if (r >= 0)
                r = jdoc_get_string(&d, entry, "Config", &cfg, err);
        if (r >= 0)
                r = jdoc_get(&d, entry, "Layers", &lv, err);
        if (r >= 0 && (!cfg || !lv || !jdoc_is_array(lv)))
                r = psrun_error_set(
                        err, EINVAL,
                        "image: docker archive %s: manifest.json names no Config or Layers",
                        a->file);
        if (r >= 0 && jdoc_array_len(lv) > MANIFEST_MAX_LAYERS)
                r = psrun_error_set(err, E2BIG, "image: docker archive %s: more than %d layers",
                                    a->file, MANIFEST_MAX_LAYERS);
        if (r >= 0) {
                size_t n = jdoc_array_len(lv);
                char **v = calloc(n + 1, sizeof(char *));
                *config = strdup(cfg);
                if (!v || !*config)
                        r = psrun_error_errno(err, ENOMEM, "image");
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        const char *s = jdoc_string(jdoc_array_item(&d, lv, i));
                        if (!s)
                                r = psrun_error_set(
                                        err, EINVAL,
                                        "image: docker archive %s: a layer name is not a string",
                                        a->file);
                        else if (!(v[i] = strdup(s)))
                                r = psrun_error_errno(err, ENOMEM, "image");
                }
                *layers = v;
                *n_layers = n;
        }
        jdoc_free(&d);
        return r;
}

/* The config's rootfs.diff_ids: the uncompressed layers' digests. */
static int read_diff_ids(const char *buf, size_t len, const char *cdigest, char ***ids, size_t *n,
                         psrun_error *err)
{
        char name[96];
        snprintf(name, sizeof(name), "config %s", cdigest);
        struct jdoc d = {0};
        int r = jdoc_parse(&d, buf, len, name, err);
        if (r < 0)
                return psrun_error_prefix(err, "image");
        jnode *rootfs = NULL, *v = NULL;
        r = jdoc_get(&d, jdoc_root(&d), "rootfs", &rootfs, err);
        if (r >= 0 && rootfs && jdoc_is_object(rootfs))
                r = jdoc_get(&d, rootfs, "diff_ids", &v, err);
        if (r >= 0 && (!v || !jdoc_is_array(v)))
                r = psrun_error_set(err, EINVAL, "image: config %s has no rootfs.diff_ids",
                                    cdigest);
        if (r >= 0) {
                *n = jdoc_array_len(v);
                *ids = calloc(*n + 1, sizeof(char *));
                if (!*ids)
                        r = psrun_error_errno(err, ENOMEM, "image");
                for (size_t i = 0; r >= 0 && i < *n; i++) {
                        const char *s = jdoc_string(jdoc_array_item(&d, v, i));
                        if (!s || !digest_valid(s))
                                r = psrun_error_set(err, EINVAL,
                                                    "image: config %s: diff_ids[%zu] is not a "
                                                    "sha256 digest",
                                                    cdigest, i);
                        else if (!((*ids)[i] = strdup(s)))
                                r = psrun_error_errno(err, ENOMEM, "image");
                }
        }
        jdoc_free(&d);
        return r;
}

static void names_free(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

static int import_locked(struct image_store *s, struct archive *a, const char *name,
                         bool fetch_only, struct image_record *rec, struct store_pull_stats *st,
                         psrun_error *err)
{
        int r = scan(a, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *cfg_name = NULL;
        char **layer_names = NULL, **ids = NULL;
        size_t n_layers = 0, n_ids = 0;
        _cleanup_free_ char *cbuf = NULL, *body = NULL;
        size_t clen = 0;
        char cdigest[DIGEST_STR_LEN + 1], mdigest[DIGEST_STR_LEN + 1];
        const struct afile *cf = NULL;
        r = read_manifest(a, &cfg_name, &layer_names, &n_layers, err);
        if (r >= 0 && !(cf = find(a, cfg_name, err)))
                r = -err->code;
        if (r >= 0)
                r = read_small(a, cf, &cbuf, &clen, err);
        if (r >= 0)
                r = hash_hex(cbuf, clen, cdigest, err);
        if (r >= 0)
                r = read_diff_ids(cbuf, clen, cdigest, &ids, &n_ids, err);
        if (r >= 0 && n_ids != n_layers)
                r = psrun_error_set(err, EINVAL,
                                    "image: docker archive %s: %zu layers, its config %zu diff_ids",
                                    a->file, n_layers, n_ids);
        *rec = (struct image_record){0};
        if (r >= 0) {
                rec->reference = strdup(name);
                rec->media_type = strdup(MEDIA_OCI_MANIFEST);
                rec->config = (struct descriptor){.media_type = strdup(MEDIA_OCI_CONFIG),
                                                  .digest = strdup(cdigest),
                                                  .size = (int64_t) clen};
                rec->layers = calloc(n_layers + 1, sizeof(*rec->layers));
                a->want = calloc(n_layers + 1, sizeof(*a->want));
                a->want_file = calloc(n_layers + 1, sizeof(*a->want_file));
                if (!rec->reference || !rec->media_type || !rec->config.media_type ||
                    !rec->config.digest || !rec->layers || !a->want_file)
                        r = psrun_error_errno(err, ENOMEM, "image");
        }
        /* the config first, then each layer, as the store's sources */
        struct descriptor *want = (struct descriptor *) a->want;
        if (r >= 0) {
                want[0] = rec->config;
                a->want_file[0] = cf;
                a->n_want = 1;
        }
        size_t blen = 0, bcap = 0;
        FILE *mf = r >= 0 ? open_memstream(&body, &bcap) : NULL;
        if (r >= 0 && !mf)
                r = psrun_error_errno(err, ENOMEM, "image");
        if (mf)
                fprintf(mf,
                        "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":"
                        "\"%s\",\"digest\":\"%s\",\"size\":%zu},\"layers\":[",
                        MEDIA_OCI_MANIFEST, MEDIA_OCI_CONFIG, cdigest, clen);
        for (size_t i = 0; r >= 0 && i < n_layers; i++) {
                const struct afile *lf = find(a, layer_names[i], err);
                if (!lf) {
                        r = -err->code;
                        break;
                }
                rec->layers[i] = (struct descriptor){.media_type = strdup(MEDIA_OCI_LAYER),
                                                     .digest = strdup(ids[i]),
                                                     .size = (int64_t) lf->size};
                rec->n_layers = i + 1;
                if (!rec->layers[i].media_type || !rec->layers[i].digest) {
                        r = psrun_error_errno(err, ENOMEM, "image");
                        break;
                }
                /* a layer twice (the same tree) is one blob */
                want[a->n_want] = rec->layers[i];
                a->want_file[a->n_want++] = lf;
                fprintf(mf, "%s{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%llu}",
                        i ? "," : "", MEDIA_OCI_LAYER, ids[i], (unsigned long long) lf->size);
        }
        if (mf) {
                fputs("]}", mf);
                if (fclose(mf) != 0 && r >= 0)
                        r = psrun_error_errno(err, ENOMEM, "image");
                blen = bcap;
        }
        if (r >= 0)
                r = hash_hex(body, blen, mdigest, err);
        if (r >= 0 && !(rec->manifest = strdup(mdigest)))
                r = psrun_error_errno(err, ENOMEM, "image");
        if (r >= 0)
                r = image_store_put_blob(s, mdigest, body, blen, err);
        for (size_t i = 0; r >= 0 && i < a->n_want; i++)
                r = image_store_fetch_blob(s, &want[i], archive_source, a, st, err);
        if (r >= 0)
                r = image_store_commit(s, rec, fetch_only, st, err);
        free(want);
        a->want = NULL;
        names_free(layer_names, n_layers);
        names_free(ids, n_ids);
        if (r < 0)
                image_record_free(rec);
        return r;
}

int image_store_import_docker_archive(struct image_store *s, const char *file, const char *name,
                                      bool fetch_only, struct image_record *rec,
                                      struct store_pull_stats *st, psrun_error *err)
{
        *rec = (struct image_record){0};
        *st = (struct store_pull_stats){0};
        struct archive a = {.file = file};
        a.fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (a.fd < 0)
                return psrun_error_errno(err, errno, "image: docker archive %s", file);
        int fds[2];
        int r = image_store_lock_image(s, name, fds, err);
        if (r >= 0) {
                r = import_locked(s, &a, name, fetch_only, rec, st, err);
                image_store_unlock(fds);
        }
        archive_free(&a);
        return r;
}
