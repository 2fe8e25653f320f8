/* SPDX-License-Identifier: MIT */
/* A cgroup v2 subtree a user without privileges may make cgroups in: the
 * one systemd delegates to the user's manager (user@UID.service), found
 * from the caller's own cgroup (docs/rootless.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/internal.h"

/* Where below the delegated subtree sandboxes go: a child of their own,
 * never the cgroup of the user's shell, which psrun must not move. */
#define DELEGATED_CHILD "psrun.slice"

int cgroup_delegated_in(const char *self_cgroup, uid_t uid, char **ret)
{
        *ret = NULL;
        _cleanup_free_ char *rel = NULL;
        if (cg_proc_cgroup_lookup(self_cgroup, NULL, &rel) < 0 || !rel)
                return 0;
        char unit[48];
        snprintf(unit, sizeof(unit), "/user@%u.service", (unsigned) uid);
        char *at = strstr(rel, unit);
        size_t end = at ? (size_t) (at - rel) + strlen(unit) : 0;
        if (!at || (rel[end] != '/' && rel[end] != '\0'))
                return 0;
        rel[end] = '\0';
        size_t len = strlen(rel) + sizeof("/" DELEGATED_CHILD);
        char *out = malloc(len);
        if (!out)
                return -ENOMEM;
        snprintf(out, len, "%s/%s", rel, DELEGATED_CHILD);
        *ret = out;
        return 1;
}

int cgroup_find_delegated(char **ret)
{
        *ret = NULL;
        if (cg_driver() != &cgroup_v2_ops)
                return 0;
        _cleanup_free_ char *self = NULL;
        _cleanup_free_ char *rel = NULL;
        if (cg_read_whole_file("/proc/self/cgroup", &self) < 0)
                return 0;
        int r = cgroup_delegated_in(self, geteuid(), &rel);
        if (r <= 0)
                return r;
        /* The unit's directory: the user's own, with a subtree_control the
         * user may write (Delegate=yes). */
        _cleanup_free_ char *unit_dir = cg_path_join(CG_FS_ROOT, rel);
        if (!unit_dir)
                return -ENOMEM;
        *strrchr(unit_dir, '/') = '\0';
        struct stat st;
        if (stat(unit_dir, &st) < 0 || st.st_uid != geteuid() ||
            !cg_file_exists(unit_dir, "cgroup.subtree_control"))
                return 0;
        char sc[PATH_MAX];
        snprintf(sc, sizeof(sc), "%s/cgroup.subtree_control", unit_dir);
        if (access(sc, W_OK) < 0)
                return 0;
        _cleanup_free_ char *child = cg_path_join(CG_FS_ROOT, rel);
        if (!child)
                return -ENOMEM;
        if (mkdir(child, 0755) < 0 && errno != EEXIST)
                return 0;
        /* The unit holds no processes itself (its manager is in init.scope):
         * its controllers can go to its children. What it cannot give,
         * cgroup_create reports by name. */
        (void) cg_write_str(unit_dir, "cgroup.subtree_control", "+memory +pids +cpu");
        *ret = TAKE_PTR(rel);
        return 1;
}
