/* SPDX-License-Identifier: MIT */
/* Garbage collection: the cgroups of psrun runs that were killed before they
 * could remove their own (a cgroup cannot remove itself). Only directories
 * named psrun-<pid>-<n> whose pid is gone are touched. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "runtime/cgroup/internal.h"

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static inline void cg_freep(struct cgroup **cg)
{
        cg_free(*cg);
}

/* "psrun-<pid>-<n>" with decimal numbers and nothing else; the pid. */
static bool parse_cgroup_name(const char *name, pid_t *ret_pid)
{
        if (strncmp(name, "psrun-", 6) != 0)
                return false;
        const char *p = name + 6;
        const char *digits = p;
        long long pid = 0;
        while (*p >= '0' && *p <= '9' && p - digits < 10)
                pid = pid * 10 + (*p++ - '0');
        if (p == digits || *p != '-' || pid <= 0 || pid > INT_MAX)
                return false;
        const char *n = ++p;
        while (*p >= '0' && *p <= '9' && p - n < 10)
                p++;
        if (p == n || *p != '\0')
                return false;
        *ret_pid = (pid_t) pid;
        return true;
}

static int strv_add_unique(char ***v, size_t *n, const char *s)
{
        for (size_t i = 0; i < *n; i++)
                if (strcmp((*v)[i], s) == 0)
                        return 0;
        char **nv = realloc(*v, (*n + 2) * sizeof(char *));
        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strdup(s);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

/* Names of psrun cgroups directly below dir whose creating process is gone.
 * kill(pid, 0) failing with EPERM still means the process exists. */
static int collect_dead(const char *dir, char ***names, size_t *n)
{
        _cleanup_(closedirp) DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                pid_t pid;
                if (de->d_type != DT_DIR || !parse_cgroup_name(de->d_name, &pid))
                        continue;
                if (kill(pid, 0) == 0 || errno != ESRCH)
                        continue;
                int r = strv_add_unique(names, n, de->d_name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Remove the cgroups of dead runs directly below `bases`. Returns how many. */
static int gc_below(const struct cgroup_ops *ops, struct cg_dir bases[CG_SLOT_MAX],
                    psrun_error *err)
{
        int r;
        _cleanup_strv_free_ char **names = NULL;
        size_t n = 0;
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                if (!bases[s].path || bases[s].alias)
                        continue;
                r = collect_dead(bases[s].path, &names, &n);
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: gc: scanning %s", bases[s].path);
        }

        int removed = 0, failed = 0;
        for (size_t i = 0; i < n; i++) {
                /* A stand-in for the dead run's handle, with the slots where a
                 * directory of that name exists, then the normal teardown. */
                _cleanup_(cg_freep) struct cgroup *cg = cg_new(ops);
                if (!cg)
                        return psrun_error_errno(err, ENOMEM, "cgroup: gc");
                snprintf(cg->name, sizeof(cg->name), "%s", names[i]);
                for (int s = 0; s < CG_SLOT_MAX; s++) {
                        if (!bases[s].path)
                                continue;
                        struct cg_dir *d = &cg->dir[s];
                        d->path = cg_path_join(bases[s].path, names[i]);
                        d->rel = cg_path_join(bases[s].rel, names[i]);
                        d->alias = bases[s].alias;
                        if (!d->path || !d->rel)
                                return psrun_error_errno(err, ENOMEM, "cgroup: gc");
                        if (!cg_is_dir(d->path))
                                cg_dir_clear(d);
                }
                psrun_error e = {0};
                r = ops->kill(cg, &e);
                int rr = cg_remove_dirs(cg, r < 0 ? NULL : &e);
                if (r < 0 || rr < 0) {
                        /* Go on with the others; report the first failure. */
                        if (!failed) {
                                failed = r < 0 ? r : rr;
                                if (err)
                                        *err = e;
                        }
                        continue;
                }
                removed++;
        }
        if (failed)
                return failed;
        return removed;
}

int cgroup_gc(const char *parent, psrun_error *err)
{
        const struct cgroup_ops *ops;
        _cleanup_(cg_dirs_clear) struct cg_dir bases[CG_SLOT_MAX] = {0};
        int r = cg_find_bases(parent, NULL, &ops, bases, err);
        if (r < 0)
                return r;
        /* gc looks leniently (a hierarchy without the parent is skipped),
         * but a parent found in none is a mistake, as it is for run. */
        bool found = false;
        for (int s = 0; s < CG_SLOT_MAX; s++)
                found = found || bases[s].path;
        if (parent && !found)
                return psrun_error_set(err, ENOENT,
                                       "cgroup: gc: parent cgroup %s does not exist in any "
                                       "hierarchy",
                                       parent);
        int total = 0;
        for (;;) {
                r = gc_below(ops, bases, err);
                if (r < 0)
                        return r;
                total += r;
                /* On v2, runs from a cgroup with processes nest below an
                 * ancestor (see cgroup_create): look there too. */
                if (parent || ops != &cgroup_v2_ops || !cg_dir_ascend(&bases[CG_SLOT_UNIFIED]))
                        return total;
        }
}

int cgroup_gc_siblings(const struct cgroup *cg, psrun_error *err)
{
        /* The directories cg was made in are where earlier runs of the same
         * set-up were made too: no need to read the host's tables again. */
        _cleanup_(cg_dirs_clear) struct cg_dir bases[CG_SLOT_MAX] = {0};
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                const struct cg_dir *d = &cg->dir[s];
                if (!d->path)
                        continue;
                bases[s].path = strdup(d->path);
                bases[s].rel = strdup(d->rel);
                bases[s].alias = d->alias;
                if (!bases[s].path || !bases[s].rel)
                        return psrun_error_errno(err, ENOMEM, "cgroup: gc");
                cg_dir_ascend(&bases[s]);
        }
        return gc_below(cg->ops, bases, err);
}
