/* SPDX-License-Identifier: MIT */
/*
 * Cgroups of OCI containers: named by the bundle's cgroupsPath (or the
 * container id), made by `create`, reopened by every later command from the
 * "controller:path" list kept in state.json, and removed by `delete`. Unlike
 * psrun run's throwaway cgroups they outlive the process that made them, so
 * the handle can be closed without touching what is on disk.
 *
 * Also here: freezing and listing pids. Resources are in cgroup-res.c and
 * the drivers' cgroup-v1-oci.c and cgroup-v2-oci.c.
 */
#include "runtime/cgroup/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "runtime/cgroup/resources.h"

#define CG_FREEZE_TIMEOUT_MS 5000

static inline void cg_freep(struct cgroup **cg)
{
        cg_free(*cg);
}

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* ---- create ------------------------------------------------------------- */

/* Directories cgroup_create_at made, undone in reverse unless kept. */
struct made_dirs {
        char *v[64];
        size_t n;
        bool keep;
};

static void made_dirs_undo(struct made_dirs *m)
{
        while (m->n > 0) {
                char *d = m->v[--m->n];
                /* A cgroup that just lost its last task may be EBUSY briefly. */
                for (int i = 0; !m->keep && rmdir(d) < 0 && errno == EBUSY && i < 50; i++)
                        sleep_ms(10);
                free(d);
        }
}

static int made_dirs_mkdir(struct made_dirs *m, const char *path, psrun_error *err)
{
        if (m->n >= ARRAY_SIZE(m->v))
                return psrun_error_set(err, ENAMETOOLONG, "cgroup: %s: too deeply nested", path);
        if (mkdir(path, 0755) < 0)
                return psrun_error_errno(err, errno, "cgroup: creating %s", path);
        m->v[m->n] = strdup(path);
        if (!m->v[m->n]) {
                rmdir(path);
                return psrun_error_errno(err, ENOMEM, "cgroup");
        }
        m->n++;
        return 0;
}

/* A new cpuset cgroup starts with no CPUs and no memory nodes, and no task
 * can join it until it has some: give it its parent's. */
static int cpuset_inherit(const char *dir, psrun_error *err)
{
        static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
        _cleanup_free_ char *parent = strdup(dir);
        if (!parent)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        *strrchr(parent, '/') = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char cur[4096], up[4096];
                ssize_t n = cg_read(dir, files[i], cur, sizeof(cur));
                if (n < 0)
                        return psrun_error_errno(err, (int) n, "cgroup: reading %s/%s", dir,
                                                 files[i]);
                if (cur[strspn(cur, " \n")] != '\0')
                        continue;
                n = cg_read(parent, files[i], up, sizeof(up));
                if (n < 0)
                        return psrun_error_errno(err, (int) n, "cgroup: reading %s/%s", parent,
                                                 files[i]);
                up[strcspn(up, "\n")] = '\0';
                int r = cg_write_str(dir, files[i], up);
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: copying %s into %s", files[i],
                                                 dir);
        }
        return 0;
}

static bool word_in(const char *list, const char *word, size_t wlen)
{
        for (const char *p = list; *p;) {
                p += strspn(p, " \n");
                size_t len = strcspn(p, " \n");
                if (len == wlen && strncmp(p, word, wlen) == 0)
                        return true;
                p += len;
        }
        return false;
}

/* Controllers whose files `res` writes, as cgroup2 names them. */
static bool res_needs(const struct oci_resources *res, const char *ctrl, size_t len)
{
        if (!res)
                return false;
        const struct {
                const char *name;
                bool needed;
        } uses[] = {
                {"memory", res->memory != NULL},
                {"cpu", res->cpu != NULL},
                {"cpuset", res->cpu && (res->cpu->cpus || res->cpu->mems)},
                {"pids", res->pids != NULL},
                {"io", res->block_io != NULL},
                {"hugetlb", res->n_hugepage_limits > 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(uses); i++)
                if (uses[i].needed && strlen(uses[i].name) == len &&
                    strncmp(uses[i].name, ctrl, len) == 0)
                        return true;
        /* "memory.high" needs memory; "cgroup.*" needs nothing. */
        for (size_t i = 0; i < res->n_unified; i++) {
                const char *dot = strchr(res->unified[i].key, '.');
                if (dot && (size_t) (dot - res->unified[i].key) == len &&
                    strncmp(res->unified[i].key, ctrl, len) == 0)
                        return true;
        }
        return false;
}

/*
 * cgroup2: hand every controller `dir` has on to its children, as runc does,
 * so a later `update` finds them in the container's cgroup. Only the ones
 * `res` needs must succeed: a cgroup with processes of its own may not give
 * controllers away ("no internal processes"), which is not an error until
 * something needs them.
 */
static int v2_enable_controllers(const char *dir, const struct oci_resources *res, psrun_error *err)
{
        char available[512] = "", enabled[512] = "";
        ssize_t n = cg_read(dir, "cgroup.controllers", available, sizeof(available));
        if (n < 0)
                return psrun_error_errno(err, (int) n, "cgroup: reading %s/cgroup.controllers",
                                         dir);
        n = cg_read(dir, "cgroup.subtree_control", enabled, sizeof(enabled));
        if (n < 0)
                return psrun_error_errno(err, (int) n, "cgroup: reading %s/cgroup.subtree_control",
                                         dir);
        for (const char *p = available; *(p += strspn(p, " \n"));) {
                size_t len = strcspn(p, " \n");
                const char *name = p;
                p += len;
                if (word_in(enabled, name, len))
                        continue;
                int r = cg_write(dir, "cgroup.subtree_control", "+%.*s", (int) len, name);
                if (r >= 0 || !res_needs(res, name, len))
                        continue;
                if (r == -EBUSY)
                        return psrun_error_errno(err, r,
                                                 "cgroup: cannot enable the %.*s controller in "
                                                 "%s: that cgroup has processes of its own, and "
                                                 "cgroup v2 gives controllers only to children of "
                                                 "cgroups without member processes; use a "
                                                 "cgroupsPath below an empty cgroup",
                                                 (int) len, name, dir);
                return psrun_error_errno(err, r, "cgroup: enabling the %.*s controller in %s",
                                         (int) len, name, dir);
        }
        return 0;
}

/* Processes in the leaf (or below it): the cgroup belongs to someone. */
static int check_not_busy(const char *dir, psrun_error *err)
{
        int count = cg_count_tree(dir);
        if (count < 0)
                return psrun_error_errno(err, count, "cgroup: reading %s/cgroup.procs", dir);
        if (count > 0)
                return psrun_error_set(err, EBUSY,
                                       "cgroup: %s already exists and has %d process(es) in it: "
                                       "is another container using this cgroupsPath?",
                                       dir, count);
        return 0;
}

/* mkdir -p of one hierarchy's directory below its mount, enabling
 * controllers on the way down (v2) or filling cpuset (v1). An existing leaf
 * is adopted when empty. */
static int make_one(const struct cgroup_ops *ops, enum cg_slot slot, const char *mount,
                    const char *leaf, const struct oci_resources *res, struct made_dirs *made,
                    psrun_error *err)
{
        bool v2 = ops == &cgroup_v2_ops;
        bool cpuset = slot == CG_SLOT_CPUSET;
        size_t mlen = strlen(mount);
        _cleanup_free_ char *cur = strdup(leaf);
        if (!cur)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        /* leaf is mount + "/a/b/c": walk "/a", "/a/b", "/a/b/c". */
        for (char *p = cur + mlen; *p == '/';) {
                char *next = strchr(p + 1, '/');
                bool last = !next;
                if (v2) {
                        *p = '\0';
                        int r = v2_enable_controllers(p == cur + mlen ? mount : cur, res, err);
                        *p = '/';
                        if (r < 0)
                                return r;
                }
                if (next)
                        *next = '\0';
                int r = 0;
                if (cg_is_dir(cur)) {
                        if (last)
                                r = check_not_busy(cur, err);
                } else {
                        r = made_dirs_mkdir(made, cur, err);
                        if (r == 0 && cpuset)
                                r = cpuset_inherit(cur, err);
                }
                if (r < 0)
                        return r;
                if (last)
                        break;
                *next = '/';
                p = next;
        }
        /* An adopted leaf may have been made by hand, cpuset empty. */
        return cpuset ? cpuset_inherit(leaf, err) : 0;
}

/* The slots an OCI container gets: on v1 every hierarchy psrun knows that is
 * mounted (a cgroup is joined in all of them, as runc does), plus cgroup2. */
static bool oci_slot_wanted(const struct cgroup_ops *ops, enum cg_slot slot)
{
        if (slot == CG_SLOT_UNIFIED)
                return ops == &cgroup_v2_ops || !cg_ignore_unified();
        return ops == &cgroup_v1_ops;
}

static bool is_plain_name(const char *s)
{
        return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
               !strchr(s, '\n') && strlen(s) < NAME_MAX;
}

/* cgroupsPath (or id) as a hierarchy path, for the hierarchy where the
 * caller sits at `own`. */
static int oci_rel(const char *path, const char *id, const char *own, char **ret, psrun_error *err)
{
        _cleanup_free_ char *rel = NULL;
        if (path && path[0] == '/')
                rel = strdup(path);
        else
                rel = cg_path_join(own, path ? path : id);
        if (!rel)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        if (!cg_path_is_canonical(rel) || strcmp(rel, "/") == 0)
                return psrun_error_set(err, EINVAL,
                                       "cgroup: invalid cgroupsPath \"%s\": expected a path such "
                                       "as /psrun/abc or psrun/abc, without \".\", \"..\", empty "
                                       "components or a trailing \"/\"",
                                       path ? path : id);
        *ret = TAKE_PTR(rel);
        return 0;
}

static int open_unified(struct cgroup *cg, psrun_error *err)
{
        const char *unified = cg->dir[CG_SLOT_UNIFIED].path;
        if (!unified)
                return 0;
        cg->unified_fd = open(unified, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cg->unified_fd < 0)
                return psrun_error_errno(err, errno, "cgroup: opening %s", unified);
        return 0;
}

static void name_from_rel(struct cgroup *cg, const char *rel)
{
        const char *base = strrchr(rel, '/');
        snprintf(cg->name, sizeof(cg->name), "%s", base ? base + 1 : rel);
}

/* Where cgroupsPath (or id) puts the container in every hierarchy: cg's
 * directories (nothing made yet) and the mounts they are below. */
static int locate_at(const char *path, const char *id, struct cgroup *cg, char *mounts[CG_SLOT_MAX],
                     psrun_error *err)
{
        if (!path && !is_plain_name(id))
                return psrun_error_set(err, EINVAL,
                                       "cgroup: no cgroupsPath, and the container id \"%s\" "
                                       "cannot name a cgroup",
                                       id ? id : "");
        _cleanup_(cg_host_clear) struct cg_host host = {0};
        int r = cg_host_load(&host, err);
        if (r < 0)
                return r;
        for (int s = 0; s < CG_SLOT_MAX && r >= 0; s++) {
                if (!oci_slot_wanted(cg->ops, s))
                        continue;
                const char *ctrl = s == CG_SLOT_UNIFIED ? NULL : cg_slot_name(s);
                _cleanup_free_ char *own = NULL, *rel = NULL;
                /* The caller's own cgroup matters only to relative paths, and
                 * only where the hierarchy is mounted. */
                if (!(path && path[0] == '/') && cg_own_path(&host, ctrl, &own) < 0)
                        continue;
                r = oci_rel(path, id, own ? own : "/", &rel, err);
                if (r < 0)
                        break;
                r = cg_locate(&host, ctrl, rel, &cg->dir[s], &mounts[s], err);
                if (r == -ENODEV)
                        r = 0;
        }
        if (r < 0)
                return r;
        cg_mark_aliases(cg->dir);
        for (int s = 0; s < CG_SLOT_MAX && !cg->name[0]; s++)
                if (cg->dir[s].rel)
                        name_from_rel(cg, cg->dir[s].rel);
        if (!cg->name[0])
                return psrun_error_set(err, ENODEV, "cgroup: no cgroup hierarchy is mounted");
        return 0;
}

static void free_mounts(char *mounts[CG_SLOT_MAX])
{
        for (int s = 0; s < CG_SLOT_MAX; s++)
                free(mounts[s]);
}

int cgroup_plan_at(const char *path, const char *id, char ***ret, psrun_error *err)
{
        _cleanup_(cg_freep) struct cgroup *cg = cg_new(cg_driver());
        char *mounts[CG_SLOT_MAX] = {0};
        if (!cg)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        int r = locate_at(path, id, cg, mounts, err);
        free_mounts(mounts);
        /* A leaf in use is refused by cgroup_create_at too; refused here, it
         * is never recorded as the container's (and never killed by a
         * delete of a create that died in between). */
        for (int s = 0; s < CG_SLOT_MAX && r >= 0; s++)
                if (cg->dir[s].path && !cg->dir[s].alias && cg_is_dir(cg->dir[s].path))
                        r = check_not_busy(cg->dir[s].path, err);
        if (r >= 0)
                r = cgroup_paths(cg, ret, err);
        return r;
}

int cgroup_create_at(const char *path, const char *id, const struct oci_resources *res,
                     struct cgroup **ret, psrun_error *err)
{
        if (!ret)
                return psrun_error_set(err, EINVAL, "cgroup: no result pointer");
        *ret = NULL;
        const struct cgroup_ops *ops = cg_driver();
        _cleanup_(cg_freep) struct cgroup *cg = cg_new(ops);
        if (!cg)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        char *mounts[CG_SLOT_MAX] = {0};
        int r = locate_at(path, id, cg, mounts, err);

        _cleanup_(made_dirs_undo) struct made_dirs made = {0};
        for (int s = 0; s < CG_SLOT_MAX && r >= 0; s++)
                if (cg->dir[s].path && !cg->dir[s].alias)
                        r = make_one(ops, s, mounts[s], cg->dir[s].path, res, &made, err);
        free_mounts(mounts);
        if (r < 0)
                return r;
        if (res && (r = cg_res_apply(cg, res, err)) < 0)
                return r;
        if ((r = open_unified(cg, err)) < 0)
                return r;
        made.keep = true;
        *ret = TAKE_PTR(cg);
        return 0;
}

/* ---- paths, open, close, remove ---------------------------------------- */

int cgroup_paths(const struct cgroup *cg, char ***ret, psrun_error *err)
{
        if (!cg || !ret)
                return psrun_error_set(err, EINVAL, "cgroup: paths: invalid arguments");
        _cleanup_strv_free_ char **v = calloc(CG_SLOT_MAX + 1, sizeof(char *));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        size_t n = 0;
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                const struct cg_dir *d = &cg->dir[s];
                if (!d->path)
                        continue;
                /* /proc/<pid>/cgroup spells the cgroup2 hierarchy "0::". */
                int k = s == CG_SLOT_UNIFIED ? asprintf(&v[n], "0::%s", d->rel)
                                             : asprintf(&v[n], "%s:%s", cg_slot_name(s), d->rel);
                if (k < 0) {
                        v[n] = NULL;
                        return psrun_error_errno(err, ENOMEM, "cgroup");
                }
                n++;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

int cgroup_open(char *const *paths, struct cgroup **ret, psrun_error *err)
{
        if (!paths || !ret)
                return psrun_error_set(err, EINVAL, "cgroup: open: invalid arguments");
        *ret = NULL;
        const struct cgroup_ops *ops = cg_driver();
        _cleanup_(cg_host_clear) struct cg_host host = {0};
        int r = cg_host_load(&host, err);
        if (r < 0)
                return r;
        _cleanup_(cg_freep) struct cgroup *cg = cg_new(ops);
        if (!cg)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        for (char *const *p = paths; *p; p++) {
                const char *line = *p, *rel;
                int slot;
                char name[32];
                if (strncmp(line, "0::", 3) == 0) {
                        slot = CG_SLOT_UNIFIED;
                        rel = line + 3;
                } else {
                        size_t len = strcspn(line, ":");
                        if (!line[len] || len >= sizeof(name))
                                return psrun_error_set(
                                        err, EINVAL, "cgroup: \"%s\" is not controller:path", line);
                        snprintf(name, sizeof(name), "%.*s", (int) len, line);
                        slot = cg_slot_from_name(name);
                        rel = line + len + 1;
                }
                /* The list comes from a file: it must not climb out. */
                if (!cg_path_is_canonical(rel))
                        return psrun_error_set(err, EINVAL, "cgroup: invalid cgroup path \"%s\"",
                                               line);
                /* Hierarchies psrun doesn't know, or this driver doesn't use. */
                if (slot < 0 || cg->dir[slot].path || !oci_slot_wanted(ops, slot))
                        continue;
                const char *ctrl = slot == CG_SLOT_UNIFIED ? NULL : cg_slot_name(slot);
                r = cg_locate(&host, ctrl, rel, &cg->dir[slot], NULL, err);
                /* Not mounted, or outside what this mount shows. */
                if (r == -ENODEV || r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (!cg_is_dir(cg->dir[slot].path))
                        cg_dir_clear(&cg->dir[slot]);
        }
        cg_mark_aliases(cg->dir);
        for (int s = 0; s < CG_SLOT_MAX && !cg->name[0]; s++)
                if (cg->dir[s].rel)
                        name_from_rel(cg, cg->dir[s].rel);
        if (!cg->name[0])
                return psrun_error_set(err, ENOENT,
                                       "cgroup: none of the container's cgroups exists any more "
                                       "(%s%s)",
                                       paths[0] ? paths[0] : "no paths", paths[0] ? ", ..." : "");
        r = open_unified(cg, err);
        if (r < 0)
                return r;
        psrun_error_clear(err);
        *ret = TAKE_PTR(cg);
        return 0;
}

void cgroup_close(struct cgroup *cg)
{
        cg_free(cg);
}

int cgroup_remove(struct cgroup *cg, psrun_error *err)
{
        if (!cg)
                return 0;
        _cleanup_(cg_freep) struct cgroup *owned = cg;
        /* A frozen task dies only once thawed, whoever froze it. */
        (void) cgroup_freeze(cg, false, NULL);
        int r = cg->ops->kill(cg, err);
        /* Remove what can be removed even when a process survived. */
        int rr = cg_remove_dirs(cg, r < 0 ? NULL : err);
        return r < 0 ? r : rr;
}

/* ---- freezer ------------------------------------------------------------ */

/* v1 freezer.state where there is a v1 freezer hierarchy (what other v1
 * tools look at), else cgroup2's cgroup.freeze (5.2+). */
static int freezer_of(const struct cgroup *cg, const char **dir, bool *v1)
{
        const char *freezer = cg->dir[CG_SLOT_FREEZER].path;
        const char *unified = cg->dir[CG_SLOT_UNIFIED].path;
        if (cg->ops == &cgroup_v1_ops && freezer) {
                *dir = freezer;
                *v1 = true;
                return 0;
        }
        if (unified && cg_file_exists(unified, "cgroup.freeze")) {
                *dir = unified;
                *v1 = false;
                return 0;
        }
        return -EOPNOTSUPP;
}

static int frozen_state(const char *dir, bool v1)
{
        if (v1) {
                char state[64];
                ssize_t n = cg_read(dir, "freezer.state", state, sizeof(state));
                if (n < 0)
                        return (int) n;
                return strncmp(state, "FROZEN", 6) == 0;
        }
        uint64_t frozen = 0;
        int r = cg_read_key_u64(dir, "cgroup.events", "frozen", &frozen);
        return r < 0 ? r : frozen != 0;
}

int cgroup_is_frozen(struct cgroup *cg)
{
        const char *dir;
        bool v1;
        if (!cg)
                return -EINVAL;
        int r = freezer_of(cg, &dir, &v1);
        return r < 0 ? r : frozen_state(dir, v1);
}

/* Poll until frozen_state says `want`. cgroup.events raises POLLPRI when it
 * changes; freezer.state has to be read again. A v1 cgroup can stay
 * FREEZING when a task was busy at the first write, so FROZEN is written
 * again now and then, as the kernel lets each write retry the laggards. */
static int wait_frozen(const char *dir, bool v1, bool want, uint64_t deadline)
{
        char events[PATH_MAX];
        snprintf(events, sizeof(events), "%s/cgroup.events", dir);
        _cleanup_close_ int fd = v1 ? -1 : open(events, O_RDONLY | O_CLOEXEC);
        unsigned pause = 1;
        for (uint64_t next_write = monotonic_ms() + 100;;) {
                int r = frozen_state(dir, v1);
                if (r < 0)
                        return r;
                if (r == want)
                        return 0;
                uint64_t now = monotonic_ms();
                if (now >= deadline)
                        return -ETIMEDOUT;
                if (v1 && want && now >= next_write) {
                        cg_write(dir, "freezer.state", "FROZEN");
                        next_write = now + 100;
                }
                if (fd >= 0) {
                        /* Reading the fd acknowledges the last change, so
                         * the next poll waits for a new one. */
                        char ack[256];
                        if (pread(fd, ack, sizeof(ack), 0) < 0)
                                return -errno;
                        struct pollfd pfd = {.fd = fd, .events = POLLPRI};
                        uint64_t left = deadline - now;
                        poll(&pfd, 1, left > 50 ? 50 : (int) left);
                } else {
                        sleep_ms(pause);
                        if (pause < 16)
                                pause *= 2;
                }
        }
}

int cgroup_freeze(struct cgroup *cg, bool frozen, psrun_error *err)
{
        const char *dir;
        bool v1;
        if (!cg)
                return psrun_error_set(err, EINVAL, "cgroup: freeze: no cgroup");
        if (freezer_of(cg, &dir, &v1) < 0)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "cgroup: no freezer for %s: no v1 freezer hierarchy and no "
                                       "cgroup.freeze (cgroup v2, Linux 5.2+)",
                                       cg->name);
        const char *file = v1 ? "freezer.state" : "cgroup.freeze";
        const char *value = v1 ? (frozen ? "FROZEN" : "THAWED") : (frozen ? "1" : "0");
        int r = cg_write(dir, file, "%s", value);
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: writing %s to %s/%s", value, dir, file);
        r = wait_frozen(dir, v1, frozen, monotonic_ms() + CG_FREEZE_TIMEOUT_MS);
        if (r == -ETIMEDOUT && frozen) {
                /* Half frozen is worse than not frozen: give it back. */
                cg_write(dir, file, "%s", v1 ? "THAWED" : "0");
                return psrun_error_set(err, ETIMEDOUT,
                                       "cgroup: %s did not freeze within %d s (a task in "
                                       "uninterruptible sleep?); thawed it again",
                                       dir, CG_FREEZE_TIMEOUT_MS / 1000);
        }
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: waiting for %s to %s", dir,
                                         frozen ? "freeze" : "thaw");
        return 0;
}

/* ---- pids --------------------------------------------------------------- */

static int cmp_pid(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

int cgroup_pids(struct cgroup *cg, pid_t **ret, size_t *n, psrun_error *err)
{
        if (!cg || !ret || !n)
                return psrun_error_set(err, EINVAL, "cgroup: pids: invalid arguments");
        *ret = NULL;
        *n = 0;
        _cleanup_free_ pid_t *pids = NULL;
        size_t count = 0;
        /* Every hierarchy: a process that joined only some of them (an exec
         * that failed half way) still belongs to the container. */
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                const struct cg_dir *d = &cg->dir[s];
                if (!d->path || d->alias)
                        continue;
                int r = cg_collect_pids(d->path, &pids, &count);
                if (r < 0 && r != -ENOENT)
                        return psrun_error_errno(err, r, "cgroup: listing processes in %s",
                                                 d->path);
        }
        if (count == 0)
                return 0;
        qsort(pids, count, sizeof(*pids), cmp_pid);
        size_t out = 1;
        for (size_t i = 1; i < count; i++)
                if (pids[i] != pids[out - 1])
                        pids[out++] = pids[i];
        *ret = TAKE_PTR(pids);
        *n = out;
        return 0;
}

/* ---- listing processes -------------------------------------------------- */

static int collect(const char *dir, pid_t **pids, size_t *n, int depth)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
        {
                _cleanup_fclose_ FILE *f = fopen(p, "re");
                if (!f)
                        return -errno;
                long pid;
                while (fscanf(f, "%ld", &pid) == 1) {
                        if (pid <= 0 || pid > INT_MAX)
                                continue;
                        if (*n % 64 == 0) {
                                pid_t *grown = reallocarray(*pids, *n + 64, sizeof(pid_t));
                                if (!grown)
                                        return -ENOMEM;
                                *pids = grown;
                        }
                        (*pids)[(*n)++] = (pid_t) pid;
                }
        }
        /* Deep enough for any container's own nesting; the bound only keeps
         * recursion finite on a hostile tree. */
        if (depth >= 32)
                return 0;
        _cleanup_(closedirp) DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
                    strcmp(de->d_name, "..") == 0)
                        continue;
                _cleanup_free_ char *sub = cg_path_join(dir, de->d_name);
                if (!sub)
                        return -ENOMEM;
                int r = collect(sub, pids, n, depth + 1);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}

int cg_collect_pids(const char *dir, pid_t **pids, size_t *n)
{
        return collect(dir, pids, n, 0);
}

int cg_count_tree(const char *dir)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = collect(dir, &pids, &n, 0);
        return r < 0 ? r : (int) (n > INT_MAX ? INT_MAX : n);
}
