/* SPDX-License-Identifier: MIT */

#include "image/store.h"
#include "image/store-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"
#include "image/digest.h"
#include "image/jsondoc.h"
#include "image/reference.h"

#define RECORD_MAX (8u << 20)

static const char *const store_dirs[] = {"blobs",  "blobs/sha256", "layers", "layers/sha256",
                                         "images", "tmp",          "locks"};

const char *image_store_root(const struct image_store *s)
{
        return s->root;
}

void image_store_close(struct image_store *s)
{
        if (!s)
                return;
        safe_close(s->dirfd);
        free(s->root);
        free(s->owners);
        free(s);
}

int image_store_open(const char *root, struct image_store **ret, psrun_error *err)
{
        if (!root || root[0] != '/')
                return psrun_error_set(err, EINVAL, "image: the store must be an absolute path");
        if (mkdir(root, 0700) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "image: store %s", root);
        _cleanup_(image_store_closep) struct image_store *s = calloc(1, sizeof(*s));
        if (!s || !(s->root = strdup(root)))
                return psrun_error_errno(err, ENOMEM, "image");
        /* A sandbox maps 65536 ids: an owner past them could never be one. */
        s->limits.id_count = 65536;
        s->dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dirfd < 0)
                return psrun_error_errno(err, errno, "image: store %s", root);
        for (size_t i = 0; i < ARRAY_SIZE(store_dirs); i++)
                if (mkdirat(s->dirfd, store_dirs[i], 0700) < 0 && errno != EEXIST)
                        return psrun_error_errno(err, errno, "image: store %s/%s", root,
                                                 store_dirs[i]);
        *ret = TAKE_PTR(s);
        return 0;
}

/* Full disk is said once, plainly; other errors as they are. */
static int store_io_error(struct image_store *s, int errnum, const char *what, psrun_error *err)
{
        if (errnum == ENOSPC || errnum == EDQUOT)
                return psrun_error_set(err, ENOSPC,
                                       "image: the store %s is full (no space left writing %s); "
                                       "nothing of it was kept",
                                       s->root, what);
        return psrun_error_errno(err, errnum, "image: store %s: %s", s->root, what);
}

int store_lock_file(struct image_store *s, const char *name, int op, int *ret, psrun_error *err)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "locks/%s", name) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        _cleanup_close_ int fd =
                openat(s->dirfd, path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return store_io_error(s, errno, path, err);
        while (flock(fd, op) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno == EWOULDBLOCK)
                        return -EWOULDBLOCK;
                return psrun_error_errno(err, errno, "image: store %s: lock %s", s->root, name);
        }
        *ret = TAKE_FD(fd);
        return 0;
}

static int ref_hex(const char *canonical, char hex[SHA256_HEX_LEN + 1], psrun_error *err)
{
        sha256_hex_portable(canonical, strlen(canonical), hex);
        return 0;
}

int image_store_lock_image(struct image_store *s, const char *reference, int fds[2],
                           psrun_error *err)
{
        fds[0] = fds[1] = -1;
        char hex[SHA256_HEX_LEN + 1], name[80];
        int r = ref_hex(reference, hex, err);
        if (r < 0)
                return r;
        if ((r = store_lock_file(s, "store", LOCK_SH, &fds[0], err)) < 0)
                return r;
        snprintf(name, sizeof(name), "image-%s", hex);
        if ((r = store_lock_file(s, name, LOCK_EX, &fds[1], err)) < 0) {
                fds[0] = safe_close(fds[0]);
                return r;
        }
        return 0;
}

void image_store_unlock(int fds[2])
{
        fds[1] = safe_close(fds[1]);
        fds[0] = safe_close(fds[0]);
}

/* ---- records ---- */

static void descriptor_clear(struct descriptor *d)
{
        free(d->media_type);
        free(d->digest);
        free(d->os);
        free(d->arch);
        free(d->variant);
        free(d->ref_name);
        *d = (struct descriptor){0};
}

void image_record_free(struct image_record *r)
{
        if (!r)
                return;
        free(r->reference);
        free(r->manifest);
        free(r->index);
        free(r->media_type);
        descriptor_clear(&r->config);
        for (size_t i = 0; i < r->n_layers; i++)
                descriptor_clear(&r->layers[i]);
        free(r->layers);
        *r = (struct image_record){0};
}

void image_records_free(struct image_record *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                image_record_free(&v[i]);
        free(v);
}

static void write_descriptor(FILE *f, const struct descriptor *d)
{
        fputs("{\"mediaType\":", f);
        json_write_string(f, d->media_type);
        fputs(",\"digest\":", f);
        json_write_string(f, d->digest);
        fprintf(f, ",\"size\":%lld}", (long long) d->size);
}

static int record_write(struct image_store *s, const struct image_record *rec, psrun_error *err)
{
        char hex[SHA256_HEX_LEN + 1];
        int r = ref_hex(rec->reference, hex, err);
        if (r < 0)
                return r;
        char tmp[128], final[128];
        snprintf(tmp, sizeof(tmp), "tmp/image-%s.json", hex);
        snprintf(final, sizeof(final), "images/%s.json", hex);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return psrun_error_errno(err, ENOMEM, "image");
        fputs("{\"reference\":", f);
        json_write_string(f, rec->reference);
        fputs(",\"manifest\":", f);
        json_write_string(f, rec->manifest);
        if (rec->index) {
                fputs(",\"index\":", f);
                json_write_string(f, rec->index);
        }
        fputs(",\"mediaType\":", f);
        json_write_string(f, rec->media_type);
        fputs(",\"config\":", f);
        write_descriptor(f, &rec->config);
        fputs(",\"layers\":[", f);
        for (size_t i = 0; i < rec->n_layers; i++) {
                if (i)
                        fputc(',', f);
                write_descriptor(f, &rec->layers[i]);
        }
        fprintf(f, "],\"unpacked\":%s}\n", rec->unpacked ? "true" : "false");
        if (fclose(f) != 0)
                return psrun_error_errno(err, ENOMEM, "image");
        _cleanup_close_ int fd =
                openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return store_io_error(s, errno, "an image record", err);
        if ((r = write_all(fd, buf, len)) < 0 || (fsync(fd) < 0 && (r = -errno))) {
                unlinkat(s->dirfd, tmp, 0);
                return store_io_error(s, -r, "an image record", err);
        }
        if (renameat(s->dirfd, tmp, s->dirfd, final) < 0) {
                r = -errno;
                unlinkat(s->dirfd, tmp, 0);
                return store_io_error(s, -r, "an image record", err);
        }
        return 0;
}

static int read_descriptor(struct jdoc *d, jnode *n, struct descriptor *out, psrun_error *err)
{
        const char *media = NULL, *digest = NULL;
        int64_t size = -1;
        bool has = false;
        int r;
        if ((r = jdoc_get_string(d, n, "mediaType", &media, err)) < 0 ||
            (r = jdoc_get_string(d, n, "digest", &digest, err)) < 0 ||
            (r = jdoc_get_int64(d, n, "size", &size, &has, err)) < 0)
                return r;
        if (!media || !digest_valid(digest) || !has || size < 0)
                return psrun_error_set(err, EINVAL, "image: %s: a descriptor is not whole",
                                       d->name);
        out->media_type = strdup(media);
        out->digest = strdup(digest);
        out->size = size;
        if (!out->media_type || !out->digest)
                return psrun_error_errno(err, ENOMEM, "image");
        return 0;
}

static int record_parse(const char *buf, size_t len, const char *name, struct image_record *rec,
                        psrun_error *err)
{
        *rec = (struct image_record){0};
        struct jdoc d;
        int r = jdoc_parse(&d, buf, len, name, err);
        if (r < 0)
                return r;
        jnode *root = jdoc_root(&d), *config = NULL, *layers = NULL, *unpacked = NULL;
        const char *ref = NULL, *manifest = NULL, *index = NULL, *media = NULL;
        if ((r = jdoc_get_string(&d, root, "reference", &ref, err)) < 0 ||
            (r = jdoc_get_string(&d, root, "manifest", &manifest, err)) < 0 ||
            (r = jdoc_get_string(&d, root, "index", &index, err)) < 0 ||
            (r = jdoc_get_string(&d, root, "mediaType", &media, err)) < 0 ||
            (r = jdoc_get(&d, root, "config", &config, err)) < 0 ||
            (r = jdoc_get(&d, root, "layers", &layers, err)) < 0 ||
            (r = jdoc_get(&d, root, "unpacked", &unpacked, err)) < 0)
                goto out;
        if (!ref || !digest_valid(manifest) || !media || !config || !jdoc_is_array(layers) ||
            (index && !digest_valid(index))) {
                r = psrun_error_set(err, EINVAL, "image: %s: not an image record", name);
                goto out;
        }
        rec->reference = strdup(ref);
        rec->manifest = strdup(manifest);
        rec->index = index ? strdup(index) : NULL;
        rec->media_type = strdup(media);
        rec->unpacked = unpacked && unpacked->type == YAML_SCALAR_NODE &&
                        strcmp((char *) unpacked->data.scalar.value, "true") == 0;
        if (!rec->reference || !rec->manifest || !rec->media_type || (index && !rec->index)) {
                r = psrun_error_errno(err, ENOMEM, "image");
                goto out;
        }
        if ((r = read_descriptor(&d, config, &rec->config, err)) < 0)
                goto out;
        size_t n = jdoc_array_len(layers);
        if (n > MANIFEST_MAX_LAYERS) {
                r = psrun_error_set(err, EINVAL, "image: %s: too many layers", name);
                goto out;
        }
        rec->layers = calloc(n ? n : 1, sizeof(*rec->layers));
        if (!rec->layers) {
                r = psrun_error_errno(err, ENOMEM, "image");
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                rec->n_layers = i + 1;
                if ((r = read_descriptor(&d, jdoc_array_item(&d, layers, i), &rec->layers[i],
                                         err)) < 0)
                        goto out;
        }
out:
        jdoc_free(&d);
        if (r < 0)
                image_record_free(rec);
        return r;
}

static int record_read_at(struct image_store *s, const char *path, struct image_record *rec,
                          psrun_error *err)
{
        _cleanup_close_ int fd = openat(s->dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT
                                       : psrun_error_errno(err, errno, "image: store %s: %s",
                                                           s->root, path);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_all(fd, RECORD_MAX, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "image: store %s: %s", s->root, path);
        return record_parse(buf, len, path, rec, err);
}

/* The key a reference is recorded under: the canonical form of a
 * registry reference; a local source's name as given. */
static int canonical(const char *reference, char **ret, psrun_error *err)
{
        if (strncmp(reference, "oci:", 4) == 0 || strncmp(reference, "docker-archive:", 15) == 0) {
                *ret = strdup(reference);
                return *ret ? 0 : psrun_error_errno(err, ENOMEM, "image");
        }
        struct image_ref ref;
        int r = image_ref_parse(reference, &ref, err);
        if (r < 0)
                return r;
        *ret = image_ref_string(&ref);
        image_ref_free(&ref);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "image");
}

int image_store_lookup(struct image_store *s, const char *reference, struct image_record *rec,
                       psrun_error *err)
{
        _cleanup_free_ char *canon = NULL;
        int r = canonical(reference, &canon, err);
        if (r < 0)
                return r;
        char hex[SHA256_HEX_LEN + 1], path[128];
        if ((r = ref_hex(canon, hex, err)) < 0)
                return r;
        snprintf(path, sizeof(path), "images/%s.json", hex);
        r = record_read_at(s, path, rec, err);
        if (r == -ENOENT)
                return psrun_error_set(err, ENOENT, "image: %s is not in the store", canon);
        return r;
}

int image_store_list(struct image_store *s, struct image_record **ret, size_t *ret_n,
                     psrun_error *err)
{
        *ret = NULL;
        *ret_n = 0;
        int fd = openat(s->dirfd, "images", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: store %s: images", s->root);
        DIR *dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        struct image_record *v = NULL;
        size_t n = 0;
        int r = 0;
        struct dirent *e;
        while ((e = readdir(dir))) {
                size_t l = strlen(e->d_name);
                if (l != SHA256_HEX_LEN + 5 || strcmp(e->d_name + SHA256_HEX_LEN, ".json") != 0)
                        continue;
                struct image_record *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        r = psrun_error_errno(err, ENOMEM, "image");
                        break;
                }
                v = nv;
                char path[128];
                snprintf(path, sizeof(path), "images/%s", e->d_name);
                r = record_read_at(s, path, &v[n], err);
                if (r == -ENOENT) { /* removed meanwhile */
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                n++;
        }
        closedir(dir);
        if (r < 0) {
                image_records_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int image_store_remove(struct image_store *s, const char *reference, psrun_error *err)
{
        _cleanup_free_ char *canon = NULL;
        int r = canonical(reference, &canon, err);
        if (r < 0)
                return r;
        int fds[2];
        if ((r = image_store_lock_image(s, canon, fds, err)) < 0)
                return r;
        char hex[SHA256_HEX_LEN + 1], path[128];
        if ((r = ref_hex(canon, hex, err)) >= 0) {
                snprintf(path, sizeof(path), "images/%s.json", hex);
                if (unlinkat(s->dirfd, path, 0) < 0)
                        r = errno == ENOENT
                                    ? psrun_error_set(err, ENOENT, "image: %s is not in the store",
                                                      canon)
                                    : psrun_error_errno(err, errno, "image: store %s", s->root);
        }
        image_store_unlock(fds);
        return r;
}

/* ---- blobs ---- */

bool store_blob_present(struct image_store *s, const char *hex, int64_t size)
{
        char path[96];
        struct stat st;
        snprintf(path, sizeof(path), "blobs/sha256/%s", hex);
        return fstatat(s->dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
               (size < 0 || st.st_size == size);
}

int image_copy_verified(int src, int dst, const char *digest, int64_t size, psrun_error *err)
{
        char want[SHA256_HEX_LEN + 1], got[SHA256_HEX_LEN + 1];
        int r = digest_parse(digest, want, err);
        if (r < 0)
                return r;
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        if ((r = sha256_new(&h, err)) < 0)
                return r;
        const size_t bufsize = 1 << 20;
        _cleanup_free_ char *buf = malloc(bufsize);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "image");
        int64_t total = 0;
        for (;;) {
                ssize_t n = read(src, buf, bufsize);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return psrun_error_errno(err, errno, "image: blob %s: read", digest);
                if (n == 0)
                        break;
                total += n;
                if (total > size)
                        return psrun_error_set(err, EBADMSG,
                                               "image: blob %s is longer than the %lld bytes its "
                                               "descriptor says: refused",
                                               digest, (long long) size);
                sha256_update(h, buf, (size_t) n);
                if ((r = write_all(dst, buf, (size_t) n)) < 0)
                        return psrun_error_errno(err, r, "image: writing blob %s", digest);
        }
        if (total != size)
                return psrun_error_set(err, EBADMSG,
                                       "image: blob %s is %lld bytes, its descriptor says %lld: "
                                       "refused",
                                       digest, (long long) total, (long long) size);
        sha256_final_hex(h, got);
        if (strcmp(got, want) != 0)
                return psrun_error_set(err, EBADMSG,
                                       "image: blob %s does not match its digest (it hashes to "
                                       "sha256:%s): refused",
                                       digest, got);
        return 0;
}

int image_store_fetch_blob(struct image_store *s, const struct descriptor *d,
                           store_blob_source source, void *ctx, struct store_pull_stats *st,
                           psrun_error *err)
{
        char hex[SHA256_HEX_LEN + 1];
        int r = digest_parse(d->digest, hex, err);
        if (r < 0)
                return r;
        if (store_blob_present(s, hex, d->size)) {
                st->blobs_present++;
                return 0;
        }
        char name[96], tmp[96], final[96];
        snprintf(name, sizeof(name), "blob-%s", hex);
        _cleanup_close_ int lock = -1;
        if ((r = store_lock_file(s, name, LOCK_EX, &lock, err)) < 0)
                return r;
        /* another pull may have finished it while this one waited */
        if (store_blob_present(s, hex, d->size)) {
                st->blobs_present++;
                return 0;
        }
        snprintf(tmp, sizeof(tmp), "tmp/blob-%s", hex);
        snprintf(final, sizeof(final), "blobs/sha256/%s", hex);
        _cleanup_close_ int fd =
                openat(s->dirfd, tmp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return store_io_error(s, errno, d->digest, err);
        struct stat sb;
        if (fstat(fd, &sb) < 0)
                return psrun_error_errno(err, errno, "image: store %s", s->root);
        off_t have = sb.st_size <= d->size ? sb.st_size : 0;
        r = source(ctx, d, fd, have, err);
        if (r < 0) {
                /* a transfer cut short is kept for the next pull to resume;
                 * bad bytes and a full disk are not */
                if (r == -EBADMSG || err->code == ENOSPC || err->code == EDQUOT ||
                    err->code == EBADMSG || err->code == EPROTO) {
                        unlinkat(s->dirfd, tmp, 0);
                        if (err->code == ENOSPC || err->code == EDQUOT)
                                return store_io_error(s, ENOSPC, d->digest, err);
                }
                return r;
        }
        if (have > 0)
                st->blobs_resumed++;
        /* durable before it is visible: a blob under its name is whole */
        if (fdatasync(fd) < 0) {
                r = -errno;
                unlinkat(s->dirfd, tmp, 0);
                return store_io_error(s, -r, d->digest, err);
        }
        if (renameat(s->dirfd, tmp, s->dirfd, final) < 0) {
                r = -errno;
                unlinkat(s->dirfd, tmp, 0);
                return store_io_error(s, -r, d->digest, err);
        }
        st->blobs_fetched++;
        st->bytes_fetched += d->size - have;
        return 0;
}

int image_store_put_blob(struct image_store *s, const char *digest, const char *buf, size_t len,
                         psrun_error *err)
{
        char hex[SHA256_HEX_LEN + 1];
        int r = digest_parse(digest, hex, err);
        if (r < 0)
                return r;
        if (store_blob_present(s, hex, (int64_t) len))
                return 0;
        char tmp[128], final[96];
        snprintf(tmp, sizeof(tmp), "tmp/put-%s.%d", hex, (int) getpid());
        snprintf(final, sizeof(final), "blobs/sha256/%s", hex);
        _cleanup_close_ int fd =
                openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return store_io_error(s, errno, digest, err);
        if ((r = write_all(fd, buf, len)) < 0 || (fdatasync(fd) < 0 && (r = -errno)) ||
            (renameat(s->dirfd, tmp, s->dirfd, final) < 0 && (r = -errno))) {
                unlinkat(s->dirfd, tmp, 0);
                return store_io_error(s, -r, digest, err);
        }
        return 0;
}

/* ---- layers ---- */

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Runs fn where the store's layers may be changed (image_store_set_runner). */
static int store_run(struct image_store *s, image_store_fn fn, void *arg, psrun_error *err)
{
        return s->run ? s->run(s->run_ctx, fn, arg, err) : fn(arg, err);
}

struct remove_args {
        struct image_store *s;
        const char *rel;
};

static int remove_tree_here(void *arg, psrun_error *err)
{
        const struct remove_args *a = arg;
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", a->s->root, a->rel) < 0)
                return -ENOMEM;
        struct stat st;
        if (fstatat(a->s->dirfd, a->rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(a->s->dirfd, a->rel, 0) < 0 ? -errno : 0;
        return nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 ? -errno : 0;
}

/* Removes a tree of the store (its layers' owners' to remove: through the
 * runner; the layer's own symlinks are not followed: FTW_PHYS). */
int store_remove_tree(struct image_store *s, const char *rel)
{
        psrun_error err = {0};
        struct remove_args a = {s, rel};
        return store_run(s, remove_tree_here, &a, &err);
}

void image_store_set_runner(struct image_store *s, image_store_runner run, void *ctx)
{
        s->run = run;
        s->run_ctx = ctx;
}

const char *image_store_owners(const struct image_store *s)
{
        return s->owners ? s->owners : IMAGE_OWNERS_SHIFTED;
}

#define OWNERS_FILE "owners"

static int read_owners(struct image_store *s, char *buf, size_t size)
{
        _cleanup_close_ int fd = openat(s->dirfd, OWNERS_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

int image_store_set_owners(struct image_store *s, const char *owners, psrun_error *err)
{
        char have[128] = "";
        int r = read_owners(s, have, sizeof(have));
        /* Root's stores predate the file: no file is root's kind. */
        if (r == -ENOENT && strcmp(owners, IMAGE_OWNERS_SHIFTED) == 0) {
                snprintf(have, sizeof(have), "%s", owners);
                r = 0;
        } else if (r == -ENOENT) {
                /* Written whole, by rename, before any layer: never a store
                 * of two kinds, whichever of two first pulls wins. */
                char tmp[64];
                snprintf(tmp, sizeof(tmp), "tmp/owners-%d", (int) getpid());
                _cleanup_close_ int fd = openat(
                        s->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0 || write_all(fd, owners, strlen(owners)) < 0 ||
                    write_all(fd, "\n", 1) < 0)
                        return store_io_error(s, errno, OWNERS_FILE, err);
                if (renameat2(s->dirfd, tmp, s->dirfd, OWNERS_FILE, RENAME_NOREPLACE) < 0 &&
                    errno != EEXIST) {
                        r = -errno;
                        unlinkat(s->dirfd, tmp, 0);
                        return store_io_error(s, -r, OWNERS_FILE, err);
                }
                unlinkat(s->dirfd, tmp, 0);
                r = read_owners(s, have, sizeof(have));
        }
        if (r < 0)
                return psrun_error_errno(err, r, "image: store %s: %s", s->root, OWNERS_FILE);
        if (strcmp(have, owners) != 0)
                return psrun_error_set(err, EXDEV,
                                       "image: store %s: its layers are owned as `%s`, not as "
                                       "`%s` as this user's ids ask: use another store "
                                       "(docs/rootless.md)",
                                       s->root, have, owners);
        free(s->owners);
        s->owners = strdup(owners);
        return s->owners ? 0 : psrun_error_errno(err, ENOMEM, "image");
}

void image_store_set_limits(struct image_store *s, const struct unpack_limits *limits)
{
        s->limits = *limits;
}

/* A verified blob into its layer directory (image/unpack.c: hostile input,
 * bounded by the store's limits), the error naming the layer. */
static int unpack_into(struct image_store *s, int blob_fd, const struct descriptor *d,
                       int dest_dirfd, psrun_error *err)
{
        struct unpack_stats st;
        int r = unpack_layer(blob_fd, d->media_type, dest_dirfd, &s->limits, &st, err);
        if (r < 0)
                return psrun_error_prefix(err, "image: %s", d->digest);
        return 0;
}

char *image_store_layer_path(const struct image_store *s, const char *digest)
{
        char *p = NULL;
        if (!digest_valid(digest) || asprintf(&p, "%s/layers/sha256/%s", s->root, digest + 7) < 0)
                return NULL;
        return p;
}

struct unpack_args {
        struct image_store *s;
        const struct descriptor *d;
        char tmp[96], final[96];
};

/* tmp/layer-<hex> made, unpacked and renamed into layers/ (a directory the
 * layer's root owns: only that id moves it), or removed again. */
static int unpack_here(void *arg, psrun_error *err)
{
        const struct unpack_args *a = arg;
        struct image_store *s = a->s;
        const struct descriptor *d = a->d;
        /* what a killed unpack left: its lock is free, so it is garbage */
        struct remove_args rm = {s, a->tmp};
        int r = remove_tree_here(&rm, err);
        if (r < 0)
                return psrun_error_errno(err, r, "image: store %s: removing %s", s->root, a->tmp);
        if (mkdirat(s->dirfd, a->tmp, 0755) < 0)
                return store_io_error(s, errno, a->tmp, err);
        char blob[96];
        snprintf(blob, sizeof(blob), "blobs/sha256/%s", d->digest + 7);
        _cleanup_close_ int bfd = openat(s->dirfd, blob, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        _cleanup_close_ int dfd =
                openat(s->dirfd, a->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (bfd < 0 || dfd < 0)
                r = psrun_error_errno(err, errno, "image: store %s: layer %s", s->root, d->digest);
        else
                r = unpack_into(s, bfd, d, dfd, err);
        if (r >= 0 && (syncfs(dfd) < 0 || renameat(s->dirfd, a->tmp, s->dirfd, a->final) < 0))
                r = store_io_error(s, errno, d->digest, err);
        if (r < 0)
                remove_tree_here(&rm, &(psrun_error){0});
        return r;
}

static int unpack_layer_once(struct image_store *s, const struct descriptor *d,
                             struct store_pull_stats *st, psrun_error *err)
{
        const char *hex = d->digest + 7;
        char name[96], final[96];
        snprintf(final, sizeof(final), "layers/sha256/%s", hex);
        struct stat sb;
        if (fstatat(s->dirfd, final, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode))
                return 0;
        snprintf(name, sizeof(name), "layer-%s", hex);
        _cleanup_close_ int lock = -1;
        int r = store_lock_file(s, name, LOCK_EX, &lock, err);
        if (r < 0)
                return r;
        if (fstatat(s->dirfd, final, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode))
                return 0;
        struct unpack_args a = {.s = s, .d = d};
        snprintf(a.tmp, sizeof(a.tmp), "tmp/layer-%s", hex);
        snprintf(a.final, sizeof(a.final), "%s", final);
        r = store_run(s, unpack_here, &a, err);
        if (r < 0)
                return r;
        st->layers_unpacked++;
        return 0;
}

int image_store_commit(struct image_store *s, struct image_record *rec, bool fetch_only,
                       struct store_pull_stats *st, psrun_error *err)
{
        rec->unpacked = false;
        if (!fetch_only) {
                for (size_t i = 0; i < rec->n_layers; i++) {
                        int r = unpack_layer_once(s, &rec->layers[i], st, err);
                        if (r < 0)
                                return psrun_error_prefix(err, "%s", rec->reference);
                }
                rec->unpacked = true;
        } else {
                /* a record that says unpacked stays so when its layers are */
                bool all = rec->n_layers > 0;
                for (size_t i = 0; i < rec->n_layers && all; i++) {
                        char path[96];
                        struct stat sb;
                        snprintf(path, sizeof(path), "layers/sha256/%s", rec->layers[i].digest + 7);
                        all = fstatat(s->dirfd, path, &sb, AT_SYMLINK_NOFOLLOW) == 0;
                }
                rec->unpacked = all;
        }
        return record_write(s, rec, err);
}

/* ---- pull ---- */

static int registry_source(void *ctx, const struct descriptor *d, int fd, off_t have,
                           psrun_error *err)
{
        return registry_get_blob(ctx, d->digest, d->size, fd, have, err);
}

static int dup_descriptor(const struct descriptor *in, struct descriptor *out, psrun_error *err)
{
        *out = (struct descriptor){.size = in->size};
        out->media_type = strdup(in->media_type);
        out->digest = strdup(in->digest);
        if (!out->media_type || !out->digest) {
                descriptor_clear(out);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        return 0;
}

/* The record of an image manifest already in memory and verified. */
static int record_from_manifest(const char *reference, const char *digest, const char *index,
                                const struct manifest *m, struct image_record *rec,
                                psrun_error *err)
{
        *rec = (struct image_record){0};
        rec->reference = strdup(reference);
        rec->manifest = strdup(digest);
        rec->index = index ? strdup(index) : NULL;
        rec->media_type = strdup(m->media_type);
        rec->layers = calloc(m->n_layers ? m->n_layers : 1, sizeof(*rec->layers));
        if (!rec->reference || !rec->manifest || (index && !rec->index) || !rec->media_type ||
            !rec->layers) {
                image_record_free(rec);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        int r = dup_descriptor(&m->config, &rec->config, err);
        for (size_t i = 0; r >= 0 && i < m->n_layers; i++) {
                r = dup_descriptor(&m->layers[i], &rec->layers[i], err);
                if (r >= 0)
                        rec->n_layers = i + 1;
        }
        if (r < 0)
                image_record_free(rec);
        return r;
}

/* Whether every blob of a record is in the store (and its layers, unless
 * fetch_only). */
static bool record_complete(struct image_store *s, const struct image_record *rec, bool fetch_only)
{
        if (!fetch_only && !rec->unpacked)
                return false;
        if (!store_blob_present(s, rec->manifest + 7, -1) ||
            !store_blob_present(s, rec->config.digest + 7, rec->config.size))
                return false;
        for (size_t i = 0; i < rec->n_layers; i++) {
                if (!store_blob_present(s, rec->layers[i].digest + 7, rec->layers[i].size))
                        return false;
                char path[96];
                struct stat sb;
                snprintf(path, sizeof(path), "layers/sha256/%s", rec->layers[i].digest + 7);
                if (!fetch_only && fstatat(s->dirfd, path, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                        return false;
        }
        return true;
}

static int fetch_blobs(struct image_store *s, struct registry_client *c,
                       const struct image_record *rec, struct store_pull_stats *st,
                       psrun_error *err)
{
        int r = image_store_fetch_blob(s, &rec->config, registry_source, c, st, err);
        for (size_t i = 0; r >= 0 && i < rec->n_layers; i++)
                r = image_store_fetch_blob(s, &rec->layers[i], registry_source, c, st, err);
        return r;
}

static int pull_locked(struct image_store *s, const struct image_ref *ref, const char *canon,
                       const struct store_pull_options *o, struct image_record *rec,
                       struct store_pull_stats *st, psrun_error *err)
{
        /* a digest names its bytes forever: a whole record is the answer */
        if (ref->digest) {
                char hex[SHA256_HEX_LEN + 1], path[128];
                int r = ref_hex(canon, hex, err);
                if (r < 0)
                        return r;
                snprintf(path, sizeof(path), "images/%s.json", hex);
                psrun_error ignored = {0};
                if (record_read_at(s, path, rec, &ignored) == 0) {
                        if (record_complete(s, rec, o->fetch_only))
                                return 0;
                        image_record_free(rec);
                }
        }
        _cleanup_(registry_closep) struct registry_client *c = NULL;
        int r = registry_open(o->registry, ref, &c, err);
        if (r < 0)
                return r;
        st->network = true;
        _cleanup_free_ char *body = NULL, *ctype = NULL;
        size_t len = 0;
        char digest[DIGEST_STR_LEN + 1];
        if ((r = registry_get_manifest(c, ref->digest ? ref->digest : ref->tag, &body, &len, &ctype,
                                       digest, err)) < 0)
                return r;
        struct manifest m;
        if ((r = manifest_parse(body, len, ctype, canon, &m, err)) < 0)
                return r;
        _cleanup_free_ char *index_digest = NULL;
        if (m.kind == MANIFEST_INDEX) {
                const struct descriptor *chosen;
                r = manifest_choose(&m, "linux", manifest_host_arch(), NULL, canon, &chosen, err);
                _cleanup_free_ char *want = r >= 0 ? strdup(chosen->digest) : NULL;
                _cleanup_free_ char *want_type = r >= 0 ? strdup(chosen->media_type) : NULL;
                manifest_free(&m);
                if (r < 0)
                        return r;
                if (!want || !want_type)
                        return psrun_error_errno(err, ENOMEM, "image");
                if ((r = image_store_put_blob(s, digest, body, len, err)) < 0)
                        return r;
                if (!(index_digest = strdup(digest)))
                        return psrun_error_errno(err, ENOMEM, "image");
                free(body);
                free(ctype);
                body = ctype = NULL;
                if ((r = registry_get_manifest(c, want, &body, &len, &ctype, digest, err)) < 0)
                        return r;
                if ((r = manifest_parse(body, len, ctype, canon, &m, err)) < 0)
                        return r;
                if (m.kind != MANIFEST_IMAGE || strcmp(m.media_type, want_type) != 0) {
                        manifest_free(&m);
                        return psrun_error_set(err, EINVAL,
                                               "image: %s: the index entry %s is not the image "
                                               "manifest it says",
                                               canon, want);
                }
        }
        r = record_from_manifest(canon, digest, index_digest, &m, rec, err);
        manifest_free(&m);
        if (r < 0)
                return r;
        if ((r = image_store_put_blob(s, digest, body, len, err)) < 0 ||
            (r = fetch_blobs(s, c, rec, st, err)) < 0 ||
            (r = image_store_commit(s, rec, o->fetch_only, st, err)) < 0)
                image_record_free(rec);
        return r;
}

int image_store_pull(struct image_store *s, const char *reference,
                     const struct store_pull_options *o, struct image_record *rec,
                     struct store_pull_stats *st, psrun_error *err)
{
        *rec = (struct image_record){0};
        *st = (struct store_pull_stats){0};
        struct image_ref ref;
        int r = image_ref_parse(reference, &ref, err);
        if (r < 0)
                return r;
        char *canon = image_ref_string(&ref);
        if (!canon) {
                image_ref_free(&ref);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        int fds[2];
        r = image_store_lock_image(s, canon, fds, err);
        if (r >= 0) {
                r = pull_locked(s, &ref, canon, o, rec, st, err);
                image_store_unlock(fds);
        }
        free(canon);
        image_ref_free(&ref);
        return r;
}
