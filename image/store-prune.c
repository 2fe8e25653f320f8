/* SPDX-License-Identifier: MIT */
/*
 * Holds and prune (image/store.h): a user of an image holds its layers
 * (shared locks) for its life; prune removes what no record references and
 * no one holds, and what killed pulls left in tmp/.
 */
#include "image/store.h"
#include "image/store-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "image/digest.h"

void image_hold_release(struct image_hold *h)
{
        for (size_t i = 0; h && i < h->n; i++)
                safe_close(h->fds[i]);
        if (h) {
                free(h->fds);
                *h = (struct image_hold){0};
        }
}

int image_store_hold(struct image_store *s, const struct image_record *rec, struct image_hold *h,
                     psrun_error *err)
{
        *h = (struct image_hold){0};
        h->fds = calloc(rec->n_layers ? rec->n_layers : 1, sizeof(int));
        if (!h->fds)
                return psrun_error_errno(err, ENOMEM, "image");
        for (size_t i = 0; i < rec->n_layers; i++) {
                char name[96];
                snprintf(name, sizeof(name), "use-%s", rec->layers[i].digest + 7);
                int r = store_lock_file(s, name, LOCK_SH, &h->fds[i], err);
                if (r < 0) {
                        image_hold_release(h);
                        return r;
                }
                h->n = i + 1;
                /* held now: prune cannot take it; it must still be here */
                if (!store_blob_present(s, rec->layers[i].digest + 7, rec->layers[i].size)) {
                        image_hold_release(h);
                        return psrun_error_set(err, ENOENT,
                                               "image: %s: layer %s is no longer in "
                                               "the store",
                                               rec->reference, rec->layers[i].digest);
                }
        }
        return 0;
}

/* Adds the digests (hex) a record refers to. */
static int refs_add(char ***v, size_t *n, const char *digest)
{
        if (!digest || !digest_valid(digest))
                return 0;
        char **nv = realloc(*v, (*n + 1) * sizeof(char *));
        if (!nv)
                return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = strdup(digest + 7)))
                return -ENOMEM;
        (*n)++;
        return 0;
}

static bool refs_has(char **v, size_t n, const char *hex)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], hex) == 0)
                        return true;
        return false;
}

static bool is_hex_name(const char *s)
{
        if (strlen(s) != SHA256_HEX_LEN)
                return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
                        return false;
        return true;
}

/* Sweeps one directory of hex-named entries. */
static int sweep(struct image_store *s, const char *dir, char **refs, size_t n_refs, bool layers,
                 struct store_prune_stats *st, psrun_error *err)
{
        int fd = openat(s->dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: store %s: %s", s->root, dir);
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        struct dirent *e;
        int r = 0;
        while ((e = readdir(d))) {
                if (!is_hex_name(e->d_name) || refs_has(refs, n_refs, e->d_name))
                        continue;
                char name[96], rel[160];
                snprintf(name, sizeof(name), "use-%s", e->d_name);
                _cleanup_close_ int use = -1;
                int lr = store_lock_file(s, name, LOCK_EX | LOCK_NB, &use, err);
                if (lr == -EWOULDBLOCK) {
                        st->kept_in_use++;
                        continue;
                }
                if (lr < 0) {
                        r = lr;
                        break;
                }
                snprintf(rel, sizeof(rel), "%s/%s", dir, e->d_name);
                struct stat sb;
                if (fstatat(s->dirfd, rel, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !layers)
                        st->bytes_removed += sb.st_size;
                int rr = store_remove_tree(s, rel);
                if (rr < 0) {
                        r = psrun_error_errno(err, rr, "image: store %s: removing %s", s->root,
                                              rel);
                        break;
                }
                if (layers)
                        st->layers_removed++;
                else
                        st->blobs_removed++;
        }
        closedir(d);
        return r;
}

/* tmp/ entries whose lock nobody holds: what killed pulls left. */
static int sweep_tmp(struct image_store *s, struct store_prune_stats *st, psrun_error *err)
{
        int fd = openat(s->dirfd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: store %s: tmp", s->root);
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        struct dirent *e;
        int r = 0;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                /* blob-<hex> and layer-<hex> have locks of their names;
                 * the rest (records, puts) are written under the image
                 * lock or by one process: prune holds the store lock
                 * exclusively, so no pull is running */
                char lockname[96] = "";
                if (strncmp(e->d_name, "blob-", 5) == 0 || strncmp(e->d_name, "layer-", 6) == 0)
                        snprintf(lockname, sizeof(lockname), "%s", e->d_name);
                _cleanup_close_ int lock = -1;
                if (lockname[0]) {
                        int lr = store_lock_file(s, lockname, LOCK_EX | LOCK_NB, &lock, err);
                        if (lr == -EWOULDBLOCK)
                                continue;
                        if (lr < 0) {
                                r = lr;
                                break;
                        }
                }
                char rel[320];
                snprintf(rel, sizeof(rel), "tmp/%s", e->d_name);
                if (store_remove_tree(s, rel) == 0)
                        st->tmp_removed++;
        }
        closedir(d);
        return r;
}

int image_store_prune(struct image_store *s, struct store_prune_stats *st, psrun_error *err)
{
        *st = (struct store_prune_stats){0};
        _cleanup_close_ int store_lock = -1;
        int r = store_lock_file(s, "store", LOCK_EX, &store_lock, err);
        if (r < 0)
                return r;
        struct image_record *recs = NULL;
        size_t n = 0;
        if ((r = image_store_list(s, &recs, &n, err)) < 0)
                return r;
        char **refs = NULL;
        size_t n_refs = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                r = refs_add(&refs, &n_refs, recs[i].manifest);
                if (r >= 0)
                        r = refs_add(&refs, &n_refs, recs[i].index);
                if (r >= 0)
                        r = refs_add(&refs, &n_refs, recs[i].config.digest);
                for (size_t j = 0; j < recs[i].n_layers && r >= 0; j++)
                        r = refs_add(&refs, &n_refs, recs[i].layers[j].digest);
        }
        image_records_free(recs, n);
        if (r < 0)
                r = psrun_error_errno(err, ENOMEM, "image");
        if (r >= 0)
                r = sweep(s, "layers/sha256", refs, n_refs, true, st, err);
        if (r >= 0)
                r = sweep(s, "blobs/sha256", refs, n_refs, false, st, err);
        if (r >= 0)
                r = sweep_tmp(s, st, err);
        for (size_t i = 0; i < n_refs; i++)
                free(refs[i]);
        free(refs);
        return r;
}
