/* SPDX-License-Identifier: MIT */
/*
 * The image root's planning (docs/images.md, "Mounting"): the policy's
 * `image` resolved in its store — the record that is there, else pulled or
 * imported once — its layers held for the sandbox's life, and its config's
 * Env, WorkingDir and User read for the plan. The store unpacks with the
 * sandbox's id shift, so the image's uid 0 is the sandbox's uid 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "image/docker-archive.h"
#include "image/jsondoc.h"
#include "image/oci-layout.h"
#include "image/reference.h"
#include "image/registries.h"
#include "image/store.h"
#include "policy/policy.h"
#include "runtime/image-api.h"
#include "runtime/image-rootless.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"

/* Read when present: the registries file of docs/images.md. */
#define REGISTRIES_FILE "/etc/psrun/registries.json"
#define CONFIG_MAX      (4u << 20)

void plan_image_free(struct plan_image *img)
{
        image_hold_release(&img->hold);
        for (size_t i = 0; i < img->n_lowers; i++)
                free(img->lowers[i]);
        free(img->lowers);
        strv_free(img->env);
        free(img->workdir);
        free(img->user);
        free(img->reference);
        *img = (struct plan_image){0};
}

int plan_image_check_reference(const char *image, psrun_error *err)
{
        if (strncmp(image, "oci:", 4) == 0 || strncmp(image, "docker-archive:", 15) == 0)
                return 0;
        struct image_ref ref;
        int r = image_ref_parse(image, &ref, err);
        if (r >= 0)
                image_ref_free(&ref);
        return r;
}

/* The store's name of a local image, oci:DIR[:TAG] or docker-archive:FILE:
 * its path made absolute (*dir the path, *tag oci:'s tag or NULL). */
static int local_name(const char *image, char **dir, char **tag, char **name, psrun_error *err)
{
        bool oci = strncmp(image, "oci:", 4) == 0;
        _cleanup_free_ char *d = NULL, *t = NULL;
        if (oci ? policy_image_split_oci(image, &d, &t) < 0 : !(d = strdup(image + 15)))
                return psrun_error_errno(err, ENOMEM, "image");
        char real[PATH_MAX];
        if (!realpath(d, real))
                return psrun_error_errno(err, errno, "image: %s", image);
        if (!(*dir = strdup(real)) || asprintf(name, "%s:%s%s%s", oci ? "oci" : "docker-archive",
                                               real, t ? ":" : "", t ? t : "") < 0) {
                free(*dir);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        *tag = TAKE_PTR(t);
        return 0;
}

static int pull(struct image_store *s, const struct policy *pol, struct image_record *rec,
                psrun_error *err)
{
        _cleanup_(registries_free) struct registries regs = {0};
        int r = 0;
        if (access(REGISTRIES_FILE, F_OK) == 0)
                r = registries_load(&regs, REGISTRIES_FILE, err);
        if (r >= 0 && pol->n_registry_mirrors)
                r = registries_set_mirrors(&regs, pol->registry_mirrors, err);
        if (r >= 0 && pol->n_insecure_registries)
                r = registries_set_insecure(&regs, pol->insecure_registries, err);
        if (r < 0)
                return r;
        struct registry_options ro = {.registries = &regs};
        struct store_pull_options po = {.registry = &ro};
        struct store_pull_stats st = {0};
        return image_store_pull(s, pol->image, &po, rec, &st, err);
}

/* The config's Env, WorkingDir and User (image-spec config.md). */
static int read_config(struct image_store *s, const struct image_record *rec,
                       struct plan_image *img, psrun_error *err)
{
        const char *digest = rec->config.digest;
        if (!digest || strncmp(digest, "sha256:", 7) != 0)
                return psrun_error_set(err, EINVAL, "image: %s: no config", rec->reference);
        _cleanup_free_ char *path = NULL, *buf = NULL;
        if (asprintf(&path, "%s/blobs/sha256/%s", image_store_root(s), digest + 7) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t len = 0;
        if (fd < 0 || read_all(fd, CONFIG_MAX, &buf, &len) < 0)
                return psrun_error_errno(err, errno ? errno : EIO, "image: %s: config %s",
                                         rec->reference, digest);
        _cleanup_(jdoc_free) struct jdoc d = {0};
        int r = jdoc_parse(&d, buf, len, "image config", err);
        if (r < 0)
                return r;
        jnode *root = jdoc_root(&d), *config = NULL, *env = NULL;
        if (!root || !jdoc_is_object(root))
                return psrun_error_set(err, EINVAL, "image: %s: the config is not an object",
                                       rec->reference);
        if ((r = jdoc_get(&d, root, "config", &config, err)) < 0)
                return r;
        if (!config || !jdoc_is_object(config))
                return 0; /* a config with nothing to apply */
        const char *wd = NULL, *user = NULL;
        if ((r = jdoc_get_string(&d, config, "WorkingDir", &wd, err)) < 0 ||
            (r = jdoc_get_string(&d, config, "User", &user, err)) < 0 ||
            (r = jdoc_get(&d, config, "Env", &env, err)) < 0)
                return r;
        if ((wd && *wd == '/' && !(img->workdir = strdup(wd))) ||
            (user && *user && !(img->user = strdup(user))))
                return psrun_error_errno(err, ENOMEM, "image");
        if (env && jdoc_is_array(env)) {
                size_t n = jdoc_array_len(env), k = 0;
                if (!(img->env = calloc(n + 1, sizeof(char *))))
                        return psrun_error_errno(err, ENOMEM, "image");
                for (size_t i = 0; i < n; i++) {
                        const char *e = jdoc_string(jdoc_array_item(&d, env, i));
                        if (e && strchr(e, '=') && e[0] != '=' && !(img->env[k++] = strdup(e)))
                                return psrun_error_errno(err, ENOMEM, "image");
                }
        }
        return 0;
}

int plan_image_resolve(const struct policy *pol, struct plan_image *img, psrun_error *err)
{
        *img = (struct plan_image){0};
        /* The reference's grammar before anything is made or opened. */
        int r = plan_image_check_reference(pol->image, err);
        if (r < 0)
                return r;
        /* Opened as every face opens it (runtime/image-api.c): root's
         * store shifted by PSRUN_ID_BASE, a user's through the user's ids. */
        const char *root = pol->image_store    ? pol->image_store
                           : rootless_active() ? NULL
                                               : POLICY_DEFAULT_IMAGE_STORE;
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        r = image_api_store_open(root, pol->image_max_size, &s, err);
        if (r < 0)
                return r;
        snprintf(img->owners, sizeof(img->owners), "%s", image_store_owners(s));

        bool oci = strncmp(pol->image, "oci:", 4) == 0;
        bool archive = strncmp(pol->image, "docker-archive:", 15) == 0;
        _cleanup_free_ char *dir = NULL, *tag = NULL, *name = NULL;
        if ((oci || archive) && (r = local_name(pol->image, &dir, &tag, &name, err)) < 0)
                return r;
        const char *ref = name ? name : pol->image;

        _cleanup_(image_record_free) struct image_record rec = {0};
        psrun_error lerr = {0};
        r = image_store_lookup(s, ref, &rec, &lerr);
        if (r == 0 && !rec.unpacked) {
                image_record_free(&rec);
                r = -ENOENT;
        }
        if (r == -ENOENT) {
                struct store_pull_stats st = {0};
                /* A local image is imported at its first use, every blob
                 * verified as it is copied, as `psrun image import` does. */
                if (oci)
                        r = image_store_import_oci(s, dir, tag, name, false, &rec, &st, err);
                else if (archive)
                        r = image_store_import_docker_archive(s, dir, name, false, &rec, &st, err);
                else
                        r = pull(s, pol, &rec, err);
        } else if (r < 0) {
                *err = lerr;
        }
        if (r < 0)
                return r;

        /* Held before anything is read of it: no prune from here on. */
        r = image_store_hold(s, &rec, &img->hold, err);
        if (r < 0)
                return r;
        if (!(img->lowers = calloc(rec.n_layers + 1, sizeof(char *))) ||
            !(img->reference = strdup(pol->image))) {
                plan_image_free(img);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        /* The record lists the layers base first; overlayfs wants the top. */
        for (size_t i = 0; i < rec.n_layers; i++) {
                img->lowers[i] = image_store_layer_path(s, rec.layers[rec.n_layers - 1 - i].digest);
                if (!img->lowers[i]) {
                        plan_image_free(img);
                        return psrun_error_errno(err, ENOMEM, "image");
                }
                img->n_lowers++;
        }
        r = read_config(s, &rec, img, err);
        if (r < 0)
                plan_image_free(img);
        return r;
}

/* Whether name is on PATH in the root (every path resolved in it). */
static bool on_path(int root, const char *path, const char *name)
{
        _cleanup_free_ char *copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
        if (!copy)
                return false;
        char *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                char rel[PATH_MAX];
                if (d[0] != '/' ||
                    snprintf(rel, sizeof(rel), "%s/%s", d, name) >= (int) sizeof(rel))
                        continue;
                struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                                       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
                int fd = (int) syscall(SYS_openat2, root, rel, &how, sizeof(how));
                if (fd < 0)
                        continue;
                struct stat st;
                bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
                close(fd);
                if (ok)
                        return true;
        }
        return false;
}

int plan_check_tools(const struct policy *pol, int root, char *const *envp, psrun_error *err)
{
        const char *path = NULL;
        for (size_t i = 0; envp && envp[i]; i++)
                if (strncmp(envp[i], "PATH=", 5) == 0)
                        path = envp[i] + 5;
        for (size_t i = 0; i < pol->n_tools; i++) {
                const struct policy_tool *t = policy_tool_find(pol->tools[i]);
                bool found = false;
                for (size_t j = 0; t && t->commands[j] && !found; j++)
                        found = on_path(root, path, t->commands[j]);
                if (!found) {
                        char cmds[128] = "";
                        for (size_t j = 0; t && t->commands[j]; j++)
                                snprintf(cmds + strlen(cmds), sizeof(cmds) - strlen(cmds), "%s%s",
                                         j ? " or " : "", t->commands[j]);
                        return psrun_error_set(err, ENOENT,
                                               "tools: `%s` is not in the root of %s (no %s on "
                                               "PATH)",
                                               pol->tools[i], pol->image ? pol->image : "the host",
                                               cmds);
                }
        }
        return 0;
}

struct tools_args {
        const struct policy *pol;
        const struct plan *p;
};

/* In the helper's user namespace: a mount namespace of its own, the
 * layers opened there, the overlay made as the sandbox's child makes it. */
static int tools_here(void *arg, psrun_error *err)
{
        const struct tools_args *a = arg;
        const struct rootfs_overlay *o = a->p->rootfs.overlay;
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return psrun_error_errno(err, errno, "tools: a mount namespace");
        int fds[ROOTFS_MAX_LOWERS];
        if (o->n_lowers > ROOTFS_MAX_LOWERS)
                return psrun_error_set(err, E2BIG, "tools: too many layers");
        for (size_t i = 0; i < o->n_lowers; i++)
                if ((fds[i] = open(o->lowers[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
                    0)
                        return psrun_error_errno(err, errno, "tools: %s", o->lowers[i]);
        _cleanup_close_ int root = -1;
        int r = rootfs_overlay_make_in_child(o, fds, &root);
        if (r < 0)
                return psrun_error_errno(err, r, "tools: the image root");
        return plan_check_tools(a->pol, root, a->p->envp, err);
}

static int tools_in_user_namespace(const struct policy *pol, const struct plan *p, psrun_error *err)
{
        struct image_rootless rl;
        int r = image_rootless_init(&rl, err);
        if (r < 0)
                return r;
        struct tools_args a = {pol, p};
        return image_rootless_run_ns(&rl, tools_here, &a, err);
}

int plan_check_planned_tools(const struct policy *pol, const struct plan *p, psrun_error *err)
{
        if (!pol->n_tools)
                return 0;
        /* The image root as the sandbox will see it (its layers and psrun's
         * top, in one overlay opened the way launch opens it, detached and
         * closed here); otherwise the host's root, whose /usr the sandbox
         * is given. */
        _cleanup_close_ int root = -1;
        /* Only a user namespace of the user's may mount a user's overlay:
         * the same one, in a helper's (runtime/image-rootless.c). */
        if (p->rootfs.overlay && p->rootfs.overlay->in_child)
                return tools_in_user_namespace(pol, p, err);
        if (p->rootfs.overlay) {
                int r = rootfs_overlay_open(p->rootfs.overlay, &root, err);
                if (r < 0)
                        return psrun_error_prefix(err, "tools");
        } else if ((root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
                return psrun_error_errno(err, errno, "tools: open /");
        }
        return plan_check_tools(pol, root, p->envp, err);
}
