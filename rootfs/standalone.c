/* SPDX-License-Identifier: MIT */
/* The root of `psrun run`: the host's system directories read-only, and
 * nothing else of the host. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "rootfs/rootfs.h"

/* The host directories a program needs to run. /etc is synthesized; /home,
 * /root, /run, /var, /srv, /opt, /mnt, /media and the rest never enter. */
static const char *const system_dirs[] = {"/usr",   "/bin",   "/sbin",   "/lib",
                                          "/lib32", "/lib64", "/libx32", NULL};

/* Scratch for overlay upper layers when the root is writable; detached once
 * the overlays hold it. */
#define SCRATCH "/.scratch"

static int add_system_dir(struct rootfs_plan *plan, const struct rootfs_options *o, const char *dir)
{
        struct stat st;
        if (lstat(dir, &st) < 0)
                return 0;
        if (S_ISLNK(st.st_mode)) {
                /* merged /usr: /bin -> usr/bin, keep the link as it is */
                char target[PATH_MAX];
                ssize_t n = readlink(dir, target, sizeof(target) - 1);
                if (n < 0)
                        return -errno;
                target[n] = '\0';
                struct mount_step l = {.op = MOUNT_OP_SYMLINK, .source = target, .target = dir};
                return rootfs_plan_add(plan, &l);
        }
        if (!S_ISDIR(st.st_mode))
                return 0;

        char src[PATH_MAX];
        snprintf(src, sizeof(src), ROOTFS_OLDROOT "%s", dir);
        int r = rootfs_plan_mkdir_p(plan, dir, 0755);
        if (r < 0)
                return r;
        if (o->readonly) {
                struct mount_step b = {
                        .op = MOUNT_OP_BIND,
                        .source = dir,
                        .target = dir,
                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                        .recursive = true,
                        .from_host = true,
                };
                return rootfs_plan_add(plan, &b);
        }

        /* Writable root: an overlay per directory, the host's copy as the
         * lower layer, changes in a tmpfs that dies with the sandbox. */
        char upper[PATH_MAX], work[PATH_MAX], data[3 * PATH_MAX + 64];
        snprintf(upper, sizeof(upper), SCRATCH "%s.upper", dir);
        snprintf(work, sizeof(work), SCRATCH "%s.work", dir);
        snprintf(data, sizeof(data), "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", src, upper,
                 work);
        struct mount_step steps[] = {
                {.op = MOUNT_OP_MKDIR, .target = upper, .mode = 0755},
                {.op = MOUNT_OP_MKDIR, .target = work, .mode = 0755},
                {.op = MOUNT_OP_MOUNT,
                 .source = "overlay",
                 .fstype = "overlay",
                 .target = dir,
                 .data = data,
                 .flags = MS_NOSUID | MS_NODEV},
        };
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(steps); i++)
                r = rootfs_plan_add(plan, &steps[i]);
        return r;
}

/* The owner of psrun's own mounts: root, or the one id mapped. */
static uid_t root_uid(const struct rootfs_options *o)
{
        return o->one_id ? o->uid : 0;
}

static gid_t root_gid(const struct rootfs_options *o)
{
        return o->one_id ? o->gid : 0;
}

static int add_tmpfs(struct rootfs_plan *plan, const char *path, mode_t mode, uint64_t size,
                     uid_t uid, gid_t gid)
{
        char data[128];
        snprintf(data, sizeof(data), "mode=%04o,size=%llu,uid=%u,gid=%u", (unsigned) mode,
                 (unsigned long long) size, (unsigned) uid, (unsigned) gid);
        int r = rootfs_plan_mkdir_p(plan, path, mode);
        struct mount_step m = {
                .op = MOUNT_OP_MOUNT,
                .source = "tmpfs",
                .fstype = "tmpfs",
                .target = path,
                .data = data,
                .flags = MS_NOSUID | MS_NODEV,
        };
        return r < 0 ? r : rootfs_plan_add(plan, &m);
}

static int add_user_mount(struct rootfs_plan *plan, const struct rootfs_user_mount *m, size_t index,
                          psrun_error *err)
{
        /* The host path is resolved here, by the user who runs psrun; the
         * child binds exactly what was resolved. */
        char real[PATH_MAX];
        if (!realpath(m->source, real))
                return psrun_error_errno(err, errno, "mounts[%zu].source: %s", index, m->source);
        struct stat st;
        if (stat(real, &st) < 0)
                return psrun_error_errno(err, errno, "mounts[%zu].source: %s", index, m->source);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return psrun_error_set(err, EINVAL,
                                       "mounts[%zu].source: %s is neither a directory nor a "
                                       "regular file",
                                       index, m->source);

        _cleanup_free_ char *parent = strdup(m->target);
        if (!parent)
                return -ENOMEM;
        char *slash = strrchr(parent, '/');
        if (slash == parent)
                slash[1] = '\0';
        else
                *slash = '\0';

        int r = strcmp(parent, "/") == 0 ? 0 : rootfs_plan_mkdir_p(plan, parent, 0755);
        struct mount_step mp = {
                .op = S_ISDIR(st.st_mode) ? MOUNT_OP_MKDIR : MOUNT_OP_MKFILE,
                .target = m->target,
                .mode = S_ISDIR(st.st_mode) ? 0755 : 0644,
        };
        uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (m->readonly)
                attr |= MOUNT_ATTR_RDONLY;
        struct mount_step b = {.op = MOUNT_OP_BIND,
                               .source = real,
                               .target = m->target,
                               .attr_set = attr,
                               .recursive = true,
                               .from_host = true};
        if (r >= 0)
                r = rootfs_plan_add(plan, &mp);
        if (r >= 0)
                r = rootfs_plan_add(plan, &b);
        return r < 0 ? psrun_error_errno(err, r, "mounts[%zu]", index) : 0;
}

/* A workdir inside the writable space is created for the user, as a
 * shell's `mkdir -p && cd` would; elsewhere it must exist. */
static int add_workdir(struct rootfs_plan *plan, const struct rootfs_options *o)
{
        if (!o->workdir ||
            (strncmp(o->workdir, "/workspace/", 11) != 0 && strncmp(o->workdir, "/tmp/", 5) != 0))
                return 0;
        _cleanup_free_ char *dir = strdup(o->workdir);
        if (!dir)
                return -ENOMEM;
        /* Each missing component below the tmpfs, owned by the user. */
        for (char *p = strchr(dir + 1, '/') + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                *p = '\0';
                struct mount_step m = {.op = MOUNT_OP_MKDIR,
                                       .target = dir,
                                       .mode = 0755,
                                       .chown = true,
                                       .uid = o->uid,
                                       .gid = o->gid};
                int r = rootfs_plan_add(plan, &m);
                if (r < 0)
                        return r;
                *p = saved;
                if (saved == '\0')
                        break;
        }
        return 0;
}

/* The default masks of one kind: proc, those under /proc (mounted with
 * them); else the others (/sys's) — added after the policy's mounts, so
 * that a bind of the host's /sys is masked as psrun's own would be —
 * where a step made their top directory or the root has its own (every:
 * an image's). The host-/usr root has no /sys of its own: without such
 * a mount its /sys masks would be skipped by the child every time, each
 * after a clone of /dev/null made for it before the clone3
 * (rootfs/sources.c). */
static void default_masks(const struct rootfs_plan *plan, bool proc, bool every, const char **out,
                          size_t cap)
{
        size_t n = 0;
        for (const char *const *p = rootfs_default_masked_paths; *p && n + 1 < cap; p++) {
                if ((strncmp(*p, "/proc/", 6) == 0) != proc)
                        continue;
                const char *slash = strchr(*p + 1, '/');
                size_t top = slash ? (size_t) (slash - *p) : strlen(*p);
                bool made = proc || every;
                for (size_t i = 0; !made && i < plan->n_steps; i++) {
                        const char *t = plan->steps[i].target;
                        made = t && strlen(t) == top && strncmp(t, *p, top) == 0;
                }
                if (made)
                        out[n++] = *p;
        }
        out[n] = NULL;
}

/* The policy's mounts, then the masks that are not /proc's over them. */
static int add_user_mounts(struct rootfs_plan *plan, const struct rootfs_user_mount *mounts,
                           size_t n, bool image, psrun_error *err)
{
        for (size_t i = 0; i < n; i++) {
                int r = add_user_mount(plan, &mounts[i], i, err);
                if (r < 0)
                        return r;
        }
        const char *masked[32];
        default_masks(plan, false, image, masked, ARRAY_SIZE(masked));
        int r = rootfs_add_masks(plan, masked, NULL);
        return r < 0 ? psrun_error_errno(err, r, "rootfs: plan") : 0;
}

int rootfs_plan_standalone(const struct rootfs_options *o, struct rootfs_plan *plan,
                           psrun_error *err)
{
        int r = 0;
        plan->one_id = o->one_id;
        if (!o->readonly)
                r = add_tmpfs(plan, SCRATCH, 0700, o->workspace_size, root_uid(o), root_gid(o));
        for (const char *const *d = system_dirs; r >= 0 && *d; d++)
                r = add_system_dir(plan, o, *d);
        if (r >= 0 && !o->readonly) {
                struct mount_step detach = {.op = MOUNT_OP_DETACH, .target = SCRATCH};
                r = rootfs_plan_add(plan, &detach);
        }
        if (r >= 0)
                r = rootfs_add_etc(plan, o);
        if (r >= 0)
                r = add_tmpfs(plan, "/workspace", 0755, o->workspace_size, o->uid, o->gid);
        if (r >= 0)
                r = add_tmpfs(plan, "/tmp", 01777, o->tmp_size, root_uid(o), root_gid(o));
        if (r >= 0)
                r = rootfs_add_dev(plan, o->tmp_size, o->pty_limit);
        const char *masked[32];
        default_masks(plan, true, false, masked, ARRAY_SIZE(masked));
        if (r >= 0)
                r = rootfs_add_proc(plan, masked, rootfs_default_readonly_paths);
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: plan");
        r = add_user_mounts(plan, o->mounts, o->n_mounts, false, err);
        if (r < 0)
                return r;

        r = add_workdir(plan, o);
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: plan");

        /* The host's root leaves the sandbox's view for good. */
        struct mount_step detach = {.op = MOUNT_OP_DETACH, .target = ROOTFS_OLDROOT};
        r = rootfs_plan_add(plan, &detach);
        if (r >= 0 && o->readonly) {
                struct mount_step ro = {.op = MOUNT_OP_SETATTR,
                                        .target = "/",
                                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                    MOUNT_ATTR_NODEV};
                r = rootfs_plan_add(plan, &ro);
        }
        return r < 0 ? psrun_error_errno(err, r, "rootfs: plan") : 0;
}

/* ---- the image root ---- */

/* Whether a passwd or group text has an entry whose third field is id, or
 * whose first is name. */
static bool has_entry(const char *text, unsigned id, const char *name)
{
        for (const char *line = text; line && *line;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);
                size_t nlen = strlen(name);
                if (len > nlen && strncmp(line, name, nlen) == 0 && line[nlen] == ':')
                        return true;
                const char *f = memchr(line, ':', len);
                f = f ? memchr(f + 1, ':', len - (size_t) (f + 1 - line)) : NULL;
                if (f) {
                        char *stop;
                        unsigned long v = strtoul(f + 1, &stop, 10);
                        if (stop != f + 1 && *stop == ':' && v == id)
                                return true;
                }
                line = end ? end + 1 : NULL;
        }
        return false;
}

/* The image's file with the sandbox's user added, or psrun's own. */
static int etc_merged(const struct rootfs_image_options *img, const char *name, const char *synth,
                      unsigned id, const char *entry, char **ret)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = rootfs_image_read(img->lowers, img->n_lowers, "etc", name, 1 << 20, &text, &len);
        if (r == -ENOENT)
                return (*ret = strdup(synth)) ? 0 : -ENOMEM;
        if (r < 0)
                return r;
        char idname[32];
        snprintf(idname, sizeof(idname), "%u", id);
        bool have = has_entry(text, id, "\n"); /* by id only */
        if (have)
                return (*ret = TAKE_PTR(text)) ? 0 : -ENOMEM;
        const char *nl = len && text[len - 1] != '\n' ? "\n" : "";
        /* The name "sandbox" unless the image uses it for another id. */
        const char *user = has_entry(text, (unsigned) -1, "sandbox") ? "psrun-sandbox" : "sandbox";
        return asprintf(ret, "%s%s%s%s\n", text, nl, user, entry) < 0 ? -ENOMEM : 0;
}

static int top_add(struct rootfs_overlay *ov, const char *path, const char *data)
{
        struct rootfs_top_entry *v = realloc(ov->top, (ov->n_top + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        ov->top = v;
        struct rootfs_top_entry *e = &v[ov->n_top];
        *e = (struct rootfs_top_entry){.path = strdup(path[0] == '/' ? path + 1 : path)};
        if (data) {
                e->data = strdup(data);
                e->len = strlen(data);
        }
        if (!e->path || (data && !e->data)) {
                free(e->path);
                free(e->data);
                return -ENOMEM;
        }
        ov->n_top++;
        return 0;
}

int rootfs_plan_image(const struct rootfs_options *o, const struct rootfs_image_options *img,
                      struct rootfs_plan *plan, psrun_error *err)
{
        if (img->n_lowers > ROOTFS_MAX_LOWERS)
                return psrun_error_set(err, E2BIG,
                                       "image: %zu layers, more than the %d psrun mounts",
                                       img->n_lowers, ROOTFS_MAX_LOWERS);
        struct rootfs_overlay *ov = calloc(1, sizeof(*ov));
        if (!ov || !(ov->lowers = calloc(img->n_lowers + 1, sizeof(char *)))) {
                free(ov);
                return psrun_error_errno(err, ENOMEM, "rootfs: plan");
        }
        plan->overlay = ov;
        plan->one_id = o->one_id;
        for (; ov->n_lowers < img->n_lowers; ov->n_lowers++)
                if (!(ov->lowers[ov->n_lowers] = strdup(img->lowers[ov->n_lowers])))
                        return psrun_error_errno(err, ENOMEM, "rootfs: plan");
        ov->writable = !o->readonly;
        ov->upper_size = o->workspace_size;
        ov->id_shift = img->id_shift;

        struct rootfs_etc e;
        rootfs_etc_synth(o, &e);
        _cleanup_free_ char *passwd = NULL, *group = NULL, *pwent = NULL, *grent = NULL;
        if (asprintf(&pwent, ":x:%u:%u:sandbox:/workspace:/bin/sh", (unsigned) o->uid,
                     (unsigned) o->gid) < 0 ||
            asprintf(&grent, ":x:%u:", (unsigned) o->gid) < 0)
                return psrun_error_errno(err, ENOMEM, "rootfs: plan");
        int r = etc_merged(img, "passwd", e.passwd, o->uid, pwent, &passwd);
        if (r >= 0)
                r = etc_merged(img, "group", e.group, o->gid, grent, &group);
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: image root: the image's /etc");

        /* psrun's layer: the mount points, then /etc's files. */
        static const char *const dirs[] = {"proc", "dev", "tmp", "workspace", "etc"};
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(dirs); i++)
                r = top_add(ov, dirs[i], NULL);
        if (r >= 0 && img->workdir && strcmp(img->workdir, "/") != 0)
                r = top_add(ov, img->workdir, NULL);
        struct rootfs_etc_file files[ROOTFS_ETC_FILES];
        rootfs_etc_files(&e, files);
        files[0].text = passwd;
        files[1].text = group;
        for (size_t i = 0; r >= 0 && i < ROOTFS_ETC_FILES; i++) {
                char path[64];
                snprintf(path, sizeof(path), "etc/%s", files[i].name);
                r = top_add(ov, path, files[i].text);
        }
        for (size_t i = 0; r >= 0 && i < o->n_mounts; i++) {
                struct stat st;
                bool dir = stat(o->mounts[i].source, &st) < 0 || S_ISDIR(st.st_mode);
                r = top_add(ov, o->mounts[i].target, dir ? NULL : "");
        }
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: plan");
        /* Nothing of psrun's layer may turn the image's symlink into a
         * directory (its /bin -> usr/bin, say): a parent of an entry must be
         * a directory in the image, or absent. */
        for (size_t i = 0; i < ov->n_top; i++) {
                char bad[512];
                r = rootfs_image_check_parents(img->lowers, img->n_lowers, ov->top[i].path, bad,
                                               sizeof(bad));
                if (r < 0)
                        return psrun_error_set(err, -r,
                                               "image: /%s: %s is %s in the image, so psrun "
                                               "cannot make it there",
                                               ov->top[i].path, bad,
                                               r == -ELOOP ? "a symlink" : "not a directory");
        }

        /* The tmpfs sizes as a child that makes the overlay passes them. */
        uint64_t top_bytes = 1 << 20;
        for (size_t i = 0; i < ov->n_top; i++)
                top_bytes += ov->top[i].len + 4096;
        snprintf(ov->top_size, sizeof(ov->top_size), "%llu", (unsigned long long) top_bytes);
        snprintf(ov->upper_size_text, sizeof(ov->upper_size_text), "%llu",
                 (unsigned long long) ov->upper_size);

        r = add_tmpfs(plan, "/workspace", 0755, o->workspace_size, o->uid, o->gid);
        if (r >= 0)
                r = add_tmpfs(plan, "/tmp", 01777, o->tmp_size, root_uid(o), root_gid(o));
        if (r >= 0)
                r = rootfs_add_dev(plan, o->tmp_size, o->pty_limit);
        size_t proc_at = plan->n_steps;
        const char *masked[32];
        default_masks(plan, true, false, masked, ARRAY_SIZE(masked));
        if (r >= 0)
                r = rootfs_add_proc(plan, masked, rootfs_default_readonly_paths);
        if (r < 0)
                return psrun_error_errno(err, r, "rootfs: plan");
        /* A new proc needs a whole one in the namespace ("not too
         * revealing"): made before the pivot drops the host's, as an OCI
         * bundle's in a user namespace is. */
        for (size_t i = proc_at; i < plan->n_steps; i++)
                if (plan->steps[i].op == MOUNT_OP_MOUNT && plan->steps[i].fstype &&
                    strcmp(plan->steps[i].fstype, "proc") == 0)
                        plan->steps[i].early = true;
        r = add_user_mounts(plan, o->mounts, o->n_mounts, true, err);
        if (r < 0)
                return r;
        r = add_workdir(plan, o);
        if (r >= 0 && o->readonly) {
                struct mount_step ro = {.op = MOUNT_OP_SETATTR,
                                        .target = "/",
                                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                    MOUNT_ATTR_NODEV};
                r = rootfs_plan_add(plan, &ro);
        }
        return r < 0 ? psrun_error_errno(err, r, "rootfs: plan") : 0;
}
