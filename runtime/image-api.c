/* SPDX-License-Identifier: MIT */
/*
 * The public image API (include/psrun.h: psrun_image_*): the store of
 * image/store.h behind an options struct, its records as psrun_image_info
 * with the image config's fields read from the config blob.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "image/digest.h"
#include "image/docker-archive.h"
#include "image/jsondoc.h"
#include "image/oci-layout.h"
#include "image/reference.h"
#include "image/registries.h"
#include "image/registry.h"
#include "image/store.h"
#include "runtime/image-api.h"
#include "runtime/image-rootless.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"

#define CONFIG_MAX (8u << 20) /* an image config blob, at most */

const char *image_store_default_root(void)
{
        const char *e = getenv("PSRUN_IMAGE_STORE");
        if (e && e[0] == '/')
                return e;
        if (!rootless_active())
                return IMAGE_STORE_DEFAULT;
        /* A user's own store, never root's nor a shared path. */
        static __thread char user_root[PATH_MAX];
        psrun_error err = {0};
        return image_rootless_default_root(user_root, sizeof(user_root), &err) < 0 ? NULL
                                                                                   : user_root;
}

PSRUN_PUBLIC const char *psrun_image_store_default(void)
{
        return image_store_default_root();
}

/* mkdir -p of root's parents (the store makes root itself, 0700). */
static int make_parents(const char *root, psrun_error *err)
{
        char buf[PATH_MAX];
        if (strlen(root) >= sizeof(buf))
                return psrun_error_set(err, ENAMETOOLONG, "image: store %s: path too long", root);
        strcpy(buf, root);
        for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return psrun_error_errno(err, errno, "image: store %s: %s", root, buf);
                *p = '/';
        }
        return 0;
}

/* A user's store (docs/rootless.md, "Images"): checked to be the user's
 * alone, its layers owned through the user's subordinate ids or as the
 * user, as its `owners` file says. The runner's context lives as long as
 * the thread: the same user's ids for every store it opens. */
static int open_user_store(const char *root, uint64_t max_size, struct image_store **ret,
                           psrun_error *err)
{
        static __thread struct image_rootless rl;
        int r = image_rootless_check_root(root, err);
        if (r < 0 || (r = image_rootless_init(&rl, err)) < 0)
                return r;
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        if ((r = image_store_open(root, &s, err)) < 0 ||
            (r = image_store_set_owners(s, rl.owners, err)) < 0)
                return r;
        struct unpack_limits lim = {.max_bytes = max_size};
        image_rootless_limits(&rl, &lim);
        image_store_set_limits(s, &lim);
        image_store_set_runner(s, image_rootless_run, &rl);
        *ret = TAKE_PTR(s);
        return 0;
}

int image_api_store_open(const char *root, uint64_t max_size, struct image_store **ret,
                         psrun_error *err)
{
        if (!root)
                root = image_store_default_root();
        if (!root) {
                psrun_error e = {0};
                char buf[PATH_MAX];
                image_rootless_default_root(buf, sizeof(buf), &e);
                *err = e;
                return -e.code;
        }
        if (root[0] != '/')
                return psrun_error_set(err, EINVAL, "image: store `%s` is not an absolute path",
                                       root);
        if (rootless_active())
                return open_user_store(root, max_size, ret, err);
        int r = make_parents(root, err);
        if (r < 0)
                return r;
        if ((r = image_store_open(root, ret, err)) < 0)
                return r;
        /* A user's store is not root's: its layers are the user's ids'. */
        if ((r = image_store_set_owners(*ret, IMAGE_OWNERS_SHIFTED, err)) < 0) {
                image_store_close(*ret);
                *ret = NULL;
                return r;
        }
        struct unpack_limits lim = {
                .max_bytes = max_size,
                .uid_shift = PSRUN_ID_BASE,
                .gid_shift = PSRUN_ID_BASE,
                .id_count = PSRUN_ID_COUNT,
        };
        image_store_set_limits(*ret, &lim);
        return 0;
}

/* The store's owners as the public info says them: "shifted" (root's),
 * "subordinate ids" or "one id" (a user's), without the ids. */
static void owners_to_info(const struct image_store *s, psrun_image_info *info)
{
        const char *o = image_store_owners(s);
        size_t n = strncmp(o, "subordinate ids", 15) == 0 ? 15
                   : strncmp(o, "one id", 6) == 0         ? 6
                                                          : strlen(o);
        snprintf(info->owners, sizeof(info->owners), "%.*s", (int) n, o);
}

static int open_store(const psrun_image_options *o, struct image_store **s, psrun_error *err)
{
        return image_api_store_open(o ? o->store : NULL, o ? o->max_size : 0, s, err);
}

/* ---- the record as the public info ---- */

static void free_strv(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

PSRUN_PUBLIC void psrun_image_info_free(psrun_image_info *info)
{
        if (!info)
                return;
        free(info->reference);
        free(info->media_type);
        for (size_t i = 0; info->layers && i < info->n_layers; i++)
                free(info->layers[i].media_type);
        free(info->layers);
        free(info->os);
        free(info->architecture);
        free(info->created);
        free_strv(info->env, info->n_env);
        free_strv(info->entrypoint, info->n_entrypoint);
        free_strv(info->cmd, info->n_cmd);
        free(info->working_dir);
        free(info->user);
        *info = (psrun_image_info){0};
}

PSRUN_PUBLIC void psrun_image_list_free(psrun_image_info *list, size_t n)
{
        for (size_t i = 0; list && i < n; i++)
                psrun_image_info_free(&list[i]);
        free(list);
}

static int dup_opt(const char *in, char **out)
{
        if (!in)
                return 0;
        *out = strdup(in);
        return *out ? 0 : -ENOMEM;
}

/* A member that is a string, copied; absent or null is NULL. */
static int config_string(struct jdoc *d, jnode *obj, const char *key, char **out, psrun_error *err)
{
        jnode *n;
        int r = jdoc_get(d, obj, key, &n, err);
        if (r < 0 || !n)
                return r;
        const char *v = jdoc_string(n);
        if (!v) {
                if (n->type == YAML_SCALAR_NODE) /* null */
                        return 0;
                return psrun_error_set(err, EINVAL, "%s: `%s` is not a string", d->name, key);
        }
        return dup_opt(v, out) < 0 ? psrun_error_errno(err, ENOMEM, "image") : 0;
}

static int config_strv(struct jdoc *d, jnode *obj, const char *key, char ***out, size_t *n_out,
                       psrun_error *err)
{
        jnode *n;
        int r = jdoc_get(d, obj, key, &n, err);
        if (r < 0 || !n)
                return r;
        if (!jdoc_is_array(n)) {
                if (n->type == YAML_SCALAR_NODE && !jdoc_string(n)) /* null */
                        return 0;
                return psrun_error_set(err, EINVAL, "%s: `%s` is not a list of strings", d->name,
                                       key);
        }
        size_t len = jdoc_array_len(n);
        char **v = calloc(len + 1, sizeof(char *));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "image");
        for (size_t i = 0; i < len; i++) {
                const char *s = jdoc_string(jdoc_array_item(d, n, i));
                if (!s || !(v[i] = strdup(s))) {
                        free_strv(v, i);
                        return s ? psrun_error_errno(err, ENOMEM, "image")
                                 : psrun_error_set(err, EINVAL, "%s: `%s` is not a list of strings",
                                                   d->name, key);
                }
        }
        *out = v;
        *n_out = len;
        return 0;
}

/* The image config (image-spec config.md): os, architecture, created, and
 * config.{Env,Entrypoint,Cmd,WorkingDir,User}. */
static int read_config(struct image_store *s, const char *digest, psrun_image_info *info,
                       psrun_error *err)
{
        if (!digest_valid(digest))
                return psrun_error_set(err, EINVAL, "image: config digest `%s` is not valid",
                                       digest);
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/blobs/sha256/%s", image_store_root(s), digest + 7) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return psrun_error_errno(err, errno, "image: config %s", digest);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_all(fd, CONFIG_MAX, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "image: config %s", digest);
        char name[96];
        snprintf(name, sizeof(name), "image: config %s", digest);
        struct jdoc d = {0};
        if ((r = jdoc_parse(&d, buf, len, name, err)) < 0)
                return r;
        jnode *root = jdoc_root(&d), *cfg = NULL;
        r = config_string(&d, root, "os", &info->os, err);
        if (r >= 0)
                r = config_string(&d, root, "architecture", &info->architecture, err);
        if (r >= 0)
                r = config_string(&d, root, "created", &info->created, err);
        if (r >= 0)
                r = jdoc_get(&d, root, "config", &cfg, err);
        if (r >= 0 && cfg && jdoc_is_object(cfg)) {
                r = config_strv(&d, cfg, "Env", &info->env, &info->n_env, err);
                if (r >= 0)
                        r = config_strv(&d, cfg, "Entrypoint", &info->entrypoint,
                                        &info->n_entrypoint, err);
                if (r >= 0)
                        r = config_strv(&d, cfg, "Cmd", &info->cmd, &info->n_cmd, err);
                if (r >= 0)
                        r = config_string(&d, cfg, "WorkingDir", &info->working_dir, err);
                if (r >= 0)
                        r = config_string(&d, cfg, "User", &info->user, err);
        }
        jdoc_free(&d);
        return r;
}

static int record_to_info(struct image_store *s, const struct image_record *rec,
                          psrun_image_info *info, psrun_error *err)
{
        *info = (psrun_image_info){0};
        if (dup_opt(rec->reference, &info->reference) < 0 ||
            dup_opt(rec->media_type, &info->media_type) < 0)
                goto oom;
        snprintf(info->digest, sizeof(info->digest), "%s", rec->manifest ? rec->manifest : "");
        snprintf(info->index, sizeof(info->index), "%s", rec->index ? rec->index : "");
        snprintf(info->config, sizeof(info->config), "%s",
                 rec->config.digest ? rec->config.digest : "");
        info->size = rec->config.size;
        info->unpacked = rec->unpacked;
        owners_to_info(s, info);
        if (rec->n_layers) {
                info->layers = calloc(rec->n_layers, sizeof(*info->layers));
                if (!info->layers)
                        goto oom;
                info->n_layers = rec->n_layers;
                for (size_t i = 0; i < rec->n_layers; i++) {
                        snprintf(info->layers[i].digest, sizeof(info->layers[i].digest), "%s",
                                 rec->layers[i].digest);
                        info->layers[i].size = rec->layers[i].size;
                        info->size += rec->layers[i].size;
                        if (dup_opt(rec->layers[i].media_type, &info->layers[i].media_type) < 0)
                                goto oom;
                }
        }
        int r = read_config(s, rec->config.digest, info, err);
        if (r < 0) {
                psrun_image_info_free(info);
                return psrun_error_prefix(err, "%s", rec->reference);
        }
        return 0;
oom:
        psrun_image_info_free(info);
        return psrun_error_errno(err, ENOMEM, "image");
}

static void stats_to_info(const struct store_pull_stats *st, psrun_image_info *info)
{
        info->blobs_fetched = st->blobs_fetched;
        info->blobs_present = st->blobs_present;
        info->blobs_resumed = st->blobs_resumed;
        info->layers_unpacked = st->layers_unpacked;
        info->bytes_fetched = st->bytes_fetched;
        info->network = st->network;
}

/* What a pull or an import hands back: REC and ST as OUT (when asked);
 * REC is freed. */
static int record_done(struct image_store *s, struct image_record *rec,
                       const struct store_pull_stats *st, psrun_image_info *out, psrun_error *err)
{
        int r = out ? record_to_info(s, rec, out, err) : 0;
        if (out && r >= 0)
                stats_to_info(st, out);
        image_record_free(rec);
        return r < 0 ? r : 0;
}

/* ---- local sources' names ---- */

/* A tag of a local source, as the reference grammar's: 1-128 of
 * [A-Za-z0-9_.-], not starting with `.` or `-` (so never `..` or a path). */
static bool tag_valid(const char *t)
{
        size_t n = strlen(t);
        if (n == 0 || n > IMAGE_TAG_MAX || t[0] == '.' || t[0] == '-')
                return false;
        return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* "oci:DIR[:TAG]": the directory (made absolute: the record's name must
 * not depend on where it was imported from) and the tag, after the last
 * `:` (a directory whose name has a `:` is named with its tag). */
static int parse_oci(const char *source, char **dir, char **tag, char **name, bool must_exist,
                     psrun_error *err)
{
        const char *spec = source + 4;
        const char *colon = strrchr(spec, ':');
        _cleanup_free_ char *d = NULL, *t = NULL;
        if (colon) {
                d = strndup(spec, (size_t) (colon - spec));
                t = strdup(colon + 1);
                if (!d || !t)
                        return psrun_error_errno(err, ENOMEM, "image");
                if (!tag_valid(t))
                        return psrun_error_set(err, EINVAL,
                                               "image: `%s`: `%s` is not a valid tag (1-128 of "
                                               "[A-Za-z0-9_.-], not starting with . or -)",
                                               source, t);
        } else if (!(d = strdup(spec))) {
                return psrun_error_errno(err, ENOMEM, "image");
        }
        if (!d[0])
                return psrun_error_set(err, EINVAL,
                                       "image: `%s` names no directory (oci:DIR[:TAG])", source);
        char real[PATH_MAX];
        if (realpath(d, real)) {
                free(d);
                if (!(d = strdup(real)))
                        return psrun_error_errno(err, ENOMEM, "image");
        } else if (must_exist || d[0] != '/') {
                return psrun_error_errno(err, errno, "image: OCI layout %s", d);
        }
        if (asprintf(name, "oci:%s%s%s", d, t ? ":" : "", t ? t : "") < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        if (dir)
                *dir = TAKE_PTR(d);
        if (tag)
                *tag = TAKE_PTR(t);
        return 0;
}

/* The name a reference is recorded under, checked before the store is
 * opened: a registry reference in its canonical form, a local source
 * with its path made absolute. */
static int record_name(const char *reference, char **ret, psrun_error *err)
{
        if (!reference || !reference[0])
                return psrun_error_set(err, EINVAL, "image: no reference given");
        if (strncmp(reference, "oci:", 4) == 0)
                return parse_oci(reference, NULL, NULL, ret, false, err);
        if (strncmp(reference, "docker-archive:", 15) == 0) {
                char real[PATH_MAX];
                const char *f = reference + 15;
                if (realpath(f, real))
                        f = real;
                else if (f[0] != '/')
                        return psrun_error_errno(err, errno, "image: docker archive %s", f);
                return asprintf(ret, "docker-archive:%s", f) < 0
                               ? psrun_error_errno(err, ENOMEM, "image")
                               : 0;
        }
        struct image_ref ref;
        int r = image_ref_parse(reference, &ref, err);
        if (r < 0)
                return r;
        *ret = image_ref_string(&ref);
        image_ref_free(&ref);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "image");
}

/* ---- the registries the options name ---- */

static int load_registries(const psrun_image_options *o, struct registries *regs, psrun_error *err)
{
        int r = 0;
        if (!o)
                return 0;
        if (o->registries_file)
                r = registries_load(regs, o->registries_file, err);
        if (r >= 0 && o->mirrors)
                r = registries_set_mirrors(regs, (char *const *) o->mirrors, err);
        if (r >= 0 && o->insecure)
                r = registries_set_insecure(regs, (char *const *) o->insecure, err);
        return r;
}

/* ---- the functions ---- */

PSRUN_PUBLIC int psrun_image_pull(const char *reference, const psrun_image_options *o,
                                  psrun_image_info *out, psrun_error *err)
{
        if (out)
                *out = (psrun_image_info){0};
        if (reference &&
            (strncmp(reference, "oci:", 4) == 0 || strncmp(reference, "docker-archive:", 15) == 0))
                return psrun_error_set(err, EINVAL,
                                       "image: `%s` is a local source: import it, not pull",
                                       reference);
        _cleanup_free_ char *name = NULL;
        int r = record_name(reference, &name, err);
        if (r < 0)
                return r;
        struct registries regs = {0};
        if ((r = load_registries(o, &regs, err)) < 0) {
                registries_free(&regs);
                return r;
        }
        struct registry_options ro = {
                .registries = &regs,
                .auth_file = o ? o->auth_file : NULL,
                .ca_file = o ? o->ca_file : NULL,
        };
        struct store_pull_options po = {.registry = &ro, .fetch_only = o && o->fetch_only};
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        struct image_record rec;
        struct store_pull_stats st = {0};
        r = open_store(o, &s, err);
        if (r >= 0)
                r = image_store_pull(s, reference, &po, &rec, &st, err);
        registries_free(&regs);
        if (r < 0)
                return r;
        return record_done(s, &rec, &st, out, err);
}

static int import_docker_archive(const char *source, const psrun_image_options *o,
                                 psrun_image_info *out, psrun_error *err)
{
        char real[PATH_MAX];
        if (!realpath(source + 15, real))
                return psrun_error_errno(err, errno, "image: docker archive %s", source + 15);
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "docker-archive:%s", real) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        struct image_record rec;
        struct store_pull_stats st = {0};
        int r = open_store(o, &s, err);
        if (r >= 0)
                r = image_store_import_docker_archive(s, real, name, o && o->fetch_only, &rec, &st,
                                                      err);
        if (r < 0)
                return r;
        return record_done(s, &rec, &st, out, err);
}

PSRUN_PUBLIC int psrun_image_import(const char *source, const psrun_image_options *o,
                                    psrun_image_info *out, psrun_error *err)
{
        if (out)
                *out = (psrun_image_info){0};
        if (!source ||
            (strncmp(source, "oci:", 4) != 0 && strncmp(source, "docker-archive:", 15) != 0))
                return psrun_error_set(err, EINVAL,
                                       "image: `%s` is not a local source (oci:DIR[:TAG] or "
                                       "docker-archive:FILE)",
                                       source ? source : "");
        if (strncmp(source, "docker-archive:", 15) == 0)
                return import_docker_archive(source, o, out, err);
        _cleanup_free_ char *dir = NULL, *tag = NULL, *name = NULL;
        int r = parse_oci(source, &dir, &tag, &name, true, err);
        if (r < 0)
                return r;
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        struct image_record rec;
        struct store_pull_stats st = {0};
        r = open_store(o, &s, err);
        if (r >= 0)
                r = image_store_import_oci(s, dir, tag, name, o && o->fetch_only, &rec, &st, err);
        if (r < 0)
                return r;
        return record_done(s, &rec, &st, out, err);
}

/* A store that is not there holds no image: listing, inspecting and
 * removing never create one. */
static int open_existing(const psrun_image_options *o, struct image_store **s, psrun_error *err)
{
        const char *root = o && o->store ? o->store : image_store_default_root();
        struct stat st;
        if (root && root[0] == '/' && lstat(root, &st) < 0 && errno == ENOENT)
                return 0;
        return open_store(o, s, err);
}

static int by_reference(const void *a, const void *b)
{
        return strcmp(((const psrun_image_info *) a)->reference,
                      ((const psrun_image_info *) b)->reference);
}

PSRUN_PUBLIC int psrun_image_list(const psrun_image_options *o, psrun_image_info **list, size_t *n,
                                  psrun_error *err)
{
        *list = NULL;
        *n = 0;
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        int r = open_existing(o, &s, err);
        if (r < 0 || !s)
                return r;
        struct image_record *recs = NULL;
        size_t n_recs = 0;
        if ((r = image_store_list(s, &recs, &n_recs, err)) < 0)
                return r;
        psrun_image_info *v = n_recs ? calloc(n_recs, sizeof(*v)) : NULL;
        if (n_recs && !v)
                r = psrun_error_errno(err, ENOMEM, "image");
        size_t i = 0;
        for (; r >= 0 && i < n_recs; i++)
                r = record_to_info(s, &recs[i], &v[i], err);
        image_records_free(recs, n_recs);
        if (r < 0) {
                psrun_image_list_free(v, n_recs); /* calloc'd: the rest are empty */
                return r;
        }
        qsort(v, n_recs, sizeof(*v), by_reference);
        *list = v;
        *n = n_recs;
        return 0;
}

PSRUN_PUBLIC int psrun_image_inspect(const char *reference, const psrun_image_options *o,
                                     psrun_image_info *out, psrun_error *err)
{
        *out = (psrun_image_info){0};
        _cleanup_free_ char *name = NULL;
        int r = record_name(reference, &name, err);
        if (r < 0)
                return r;
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        if ((r = open_existing(o, &s, err)) < 0)
                return r;
        if (!s)
                return psrun_error_set(err, ENOENT, "image: %s is not in the store", name);
        struct image_record rec;
        if ((r = image_store_lookup(s, name, &rec, err)) < 0)
                return r;
        r = record_to_info(s, &rec, out, err);
        image_record_free(&rec);
        return r < 0 ? r : 0;
}

PSRUN_PUBLIC int psrun_image_remove(const char *reference, const psrun_image_options *o,
                                    psrun_error *err)
{
        _cleanup_free_ char *name = NULL;
        int r = record_name(reference, &name, err);
        if (r < 0)
                return r;
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        if ((r = open_existing(o, &s, err)) < 0)
                return r;
        if (!s)
                return psrun_error_set(err, ENOENT, "image: %s is not in the store", name);
        return image_store_remove(s, name, err);
}

PSRUN_PUBLIC int psrun_image_prune(const psrun_image_options *o, psrun_image_prune_stats *stats,
                                   psrun_error *err)
{
        if (stats)
                *stats = (psrun_image_prune_stats){0};
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        int r = open_existing(o, &s, err);
        if (r < 0 || !s)
                return r;
        struct store_prune_stats st = {0};
        if ((r = image_store_prune(s, &st, err)) < 0)
                return r;
        if (stats)
                *stats = (psrun_image_prune_stats){
                        .blobs_removed = st.blobs_removed,
                        .layers_removed = st.layers_removed,
                        .tmp_removed = st.tmp_removed,
                        .kept_in_use = st.kept_in_use,
                        .bytes_removed = st.bytes_removed,
                };
        return 0;
}
