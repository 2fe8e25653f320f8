/* SPDX-License-Identifier: MIT */
/*
 * Where the cgroup hierarchies are, and where we are in them: the mount
 * table (/proc/self/mountinfo) and /proc/self/cgroup, read once per create
 * or gc (struct cg_host), and the paths psrun's cgroups go below.
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"

/* Does the comma-separated list contain `word`? */
static bool list_has(const char *list, const char *word)
{
        size_t wlen = strlen(word);
        for (const char *p = list; p && *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t) (end - p) : strlen(p);
                if (len == wlen && strncmp(p, word, wlen) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
        char *out = s;
        for (char *in = s; *in;) {
                if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
                    in[3] >= '0' && in[3] <= '7') {
                        *out++ = (char) ((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
                        in += 4;
                } else {
                        *out++ = *in++;
                }
        }
        *out = '\0';
}

/*
 * Where is the hierarchy holding `controller` (NULL: cgroup2) mounted, and
 * which of its directories is the mount's root? A hierarchy may be mounted
 * several times (bind mounts into containers); the one under /sys/fs/cgroup
 * with the whole hierarchy visible wins.
 */
static int find_mount(const char *mountinfo, const char *controller, char **ret_mountpoint,
                      char **ret_root)
{
        _cleanup_free_ char *copy = strdup(mountinfo);
        if (!copy)
                return -ENOMEM;
        _cleanup_free_ char *best_mp = NULL, *best_root = NULL;
        int best_score = -1;
        char *lines = NULL;
        for (char *line = strtok_r(copy, "\n", &lines); line; line = strtok_r(NULL, "\n", &lines)) {
                char *sep = strstr(line, " - ");
                if (!sep)
                        continue;
                *sep = '\0';
                char *tail = sep + 3;
                char *save = NULL;
                char *fstype = strtok_r(tail, " ", &save);
                char *source = strtok_r(NULL, " ", &save);
                char *super = strtok_r(NULL, " ", &save);
                if (!fstype || !source || !super)
                        continue;
                if (controller) {
                        if (strcmp(fstype, "cgroup") != 0 || !list_has(super, controller))
                                continue;
                } else if (strcmp(fstype, "cgroup2") != 0) {
                        continue;
                }
                /* id parent major:minor root mountpoint ... */
                char *root = NULL, *mp = NULL;
                save = NULL;
                char *field = strtok_r(line, " ", &save);
                for (int i = 0; field && i < 5; i++, field = strtok_r(NULL, " ", &save)) {
                        if (i == 3)
                                root = field;
                        else if (i == 4)
                                mp = field;
                }
                if (!root || !mp)
                        continue;
                unescape_octal(root);
                unescape_octal(mp);
                int score = 0;
                if (strcmp(mp, CG_FS_ROOT) == 0 || strncmp(mp, CG_FS_ROOT "/", 15) == 0)
                        score += 2;
                if (strcmp(root, "/") == 0)
                        score += 1;
                if (score > best_score) {
                        char *m = strdup(mp), *r = strdup(root);
                        if (!m || !r) {
                                free(m);
                                free(r);
                                return -ENOMEM;
                        }
                        free(best_mp);
                        free(best_root);
                        best_mp = m;
                        best_root = r;
                        best_score = score;
                }
        }
        if (!best_mp)
                return -ENOENT;
        *ret_mountpoint = TAKE_PTR(best_mp);
        *ret_root = TAKE_PTR(best_root);
        return 0;
}

/* In the text of a /proc/<pid>/cgroup file, the path for the hierarchy that
 * holds `controller` (NULL: the cgroup2 "0::" line). */
int cg_proc_cgroup_lookup(const char *content, const char *controller, char **ret)
{
        _cleanup_free_ char *copy = strdup(content);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *c1 = strchr(line, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c1 = '\0';
                *c2 = '\0';
                const char *ctrls = c1 + 1;
                bool match = controller ? list_has(ctrls, controller)
                                        : strcmp(line, "0") == 0 && *ctrls == '\0';
                if (!match)
                        continue;
                char *path = strdup(c2 + 1);
                if (!path)
                        return -ENOMEM;
                *ret = path;
                return 0;
        }
        return -ENOENT;
}

/* procfs files report no size, so read until EOF. */
/* /proc/self/mountinfo and the like: small, but of no fixed size. */
#define PROC_FILE_MAX (16 << 20)

int cg_read_whole_file(const char *p, char **ret)
{
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_all(fd, PROC_FILE_MAX, ret, NULL);
}

/* `rel` below the mount root `root`: the rest of rel ("" for the root itself),
 * or NULL when rel is outside what the mount shows. */
static const char *strip_root(const char *rel, const char *root)
{
        if (strcmp(root, "/") == 0)
                return strcmp(rel, "/") == 0 ? "" : rel;
        size_t len = strlen(root);
        if (strncmp(rel, root, len) != 0 || (rel[len] != '\0' && rel[len] != '/'))
                return NULL;
        return rel + len;
}

void cg_host_clear(struct cg_host *host)
{
        free(host->mountinfo);
        free(host->self_cgroup);
        *host = (struct cg_host){0};
}

int cg_host_load(struct cg_host *host, psrun_error *err)
{
        int r = cg_read_whole_file("/proc/self/mountinfo", &host->mountinfo);
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: reading /proc/self/mountinfo");
        r = cg_read_whole_file("/proc/self/cgroup", &host->self_cgroup);
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: reading /proc/self/cgroup");
        return 0;
}

int cg_own_path(const struct cg_host *host, const char *controller, char **ret)
{
        return cg_proc_cgroup_lookup(host->self_cgroup, controller, ret);
}

int cg_locate(const struct cg_host *host, const char *controller, const char *rel,
              struct cg_dir *out, char **ret_mount, psrun_error *err)
{
        const char *label = controller ? controller : "cgroup2";
        _cleanup_free_ char *mp = NULL, *root = NULL;
        int r = find_mount(host->mountinfo, controller, &mp, &root);
        if (r == -ENOENT)
                return -ENODEV;
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: parsing /proc/self/mountinfo");
        const char *sub = strip_root(rel, root);
        if (!sub)
                return psrun_error_set(err, ENOENT,
                                       "cgroup: %s is outside the part of the %s hierarchy "
                                       "mounted at %s (%s)",
                                       rel, label, mp, root);
        _cleanup_free_ char *path = NULL, *rel_copy = strdup(rel);
        if (asprintf(&path, "%s%s", mp, sub) < 0 || !rel_copy)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        out->path = TAKE_PTR(path);
        out->rel = TAKE_PTR(rel_copy);
        out->alias = false;
        if (ret_mount)
                *ret_mount = TAKE_PTR(mp);
        return 0;
}

int cg_resolve_parent(const struct cg_host *host, const char *controller, const char *parent,
                      struct cg_dir *out, psrun_error *err)
{
        const char *label = controller ? controller : "cgroup2";
        _cleanup_free_ char *own = NULL;
        const char *rel = parent;
        int r;
        if (!rel) {
                /* Only a mounted hierarchy needs the caller's place in it. */
                _cleanup_free_ char *mp = NULL, *root = NULL;
                r = find_mount(host->mountinfo, controller, &mp, &root);
                if (r == -ENOENT)
                        return -ENODEV;
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: parsing /proc/self/mountinfo");
                r = cg_proc_cgroup_lookup(host->self_cgroup, controller, &own);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "cgroup: finding this process's cgroup in the %s "
                                                 "hierarchy (/proc/self/cgroup)",
                                                 label);
                rel = own;
        }
        struct cg_dir d = {0};
        r = cg_locate(host, controller, rel, &d, NULL, err);
        if (r < 0)
                return r;
        if (!cg_is_dir(d.path)) {
                r = psrun_error_set(err, ENOENT,
                                    "cgroup: parent cgroup %s does not exist in the %s "
                                    "hierarchy (%s)",
                                    rel, label, d.path);
                cg_dir_clear(&d);
                return r;
        }
        *out = d;
        return 0;
}

/* Slots sharing one directory (co-mounted cpu,cpuacct): the first one seen
 * owns it, the cgroup2 slot first of all. */
void cg_mark_aliases(struct cg_dir dirs[CG_SLOT_MAX])
{
        for (int i = 0; i < CG_SLOT_MAX; i++) {
                /* The cgroup2 slot (last) goes first: it is never an alias. */
                int s = i == 0 ? CG_SLOT_UNIFIED : i - 1;
                struct cg_dir *d = &dirs[s];
                if (!d->path)
                        continue;
                for (int j = 0; j < i; j++) {
                        struct cg_dir *owner = &dirs[j == 0 ? CG_SLOT_UNIFIED : j - 1];
                        if (owner->path && !owner->alias && strcmp(owner->path, d->path) == 0) {
                                d->alias = true;
                                break;
                        }
                }
        }
}
