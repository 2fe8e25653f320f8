/* SPDX-License-Identifier: MIT */
/* The OCI runtime without root (runtime/oci/rootless.h, docs/rootless.md). */
#include "runtime/oci/rootless.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"

int oci_rootless_mode_from_string(const char *s)
{
        if (!s || strcmp(s, "auto") == 0)
                return OCI_ROOTLESS_AUTO;
        if (strcmp(s, "true") == 0)
                return OCI_ROOTLESS_TRUE;
        if (strcmp(s, "false") == 0)
                return OCI_ROOTLESS_FALSE;
        return -EINVAL;
}

/* The initial user namespace maps every id onto itself. */
static bool in_initial_userns(void)
{
        _cleanup_close_ int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
        char buf[128] = "";
        if (fd < 0 || read_into(fd, buf, sizeof(buf)) < 0)
                return false;
        /* One line, "0 0 4294967295". */
        const char *nl = strchr(buf, '\n');
        if (nl && nl[1])
                return false;
        unsigned long long inside, outside, count;
        return sscanf(buf, "%llu %llu %llu", &inside, &outside, &count) == 3 && inside == 0 &&
               outside == 0 && count == 4294967295ULL;
}

bool oci_rootless_active(enum oci_rootless_mode mode)
{
        if (mode != OCI_ROOTLESS_AUTO)
                return mode == OCI_ROOTLESS_TRUE;
        return geteuid() != 0 || !in_initial_userns();
}

/* One level of the state root: a directory of ours that nobody else can
 * write, opened without following a link; made 0700 when create is set. */
static int open_private_dir(int dir_fd, const char *name, const char *path, bool create,
                            psrun_error *err)
{
        if (create && mkdirat(dir_fd, name, 0700) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "root \"%s\": create", path);
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && !create)
                return -ENOENT;
        struct stat st;
        if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
            fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                return psrun_error_set(err, ELOOP, "root \"%s\": is a symbolic link; refusing it",
                                       path);
        if (fd < 0)
                return psrun_error_errno(err, errno, "root \"%s\"", path);
        _cleanup_close_ int owned = fd;
        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "root \"%s\"", path);
        if (st.st_uid != geteuid())
                return psrun_error_set(err, EPERM,
                                       "root \"%s\": owned by uid %u, not by this user (uid %u); "
                                       "refusing it",
                                       path, (unsigned) st.st_uid, (unsigned) geteuid());
        if (st.st_mode & 022)
                return psrun_error_set(err, EPERM,
                                       "root \"%s\": writable by group or others (mode %04o); "
                                       "refusing it",
                                       path, (unsigned) (st.st_mode & 07777));
        return TAKE_FD(owned);
}

int oci_rootless_root(bool create, char **ret, psrun_error *err)
{
        *ret = NULL;
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        if (!xdg || xdg[0] != '/')
                return psrun_error_set(err, EINVAL,
                                       "root: rootless psrun keeps its state in "
                                       "$XDG_RUNTIME_DIR/psrun/oci: set XDG_RUNTIME_DIR to a "
                                       "directory of this user's (mode 0700), or pass --root DIR");
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL;
        if (asprintf(&p1, "%s", xdg) < 0 || asprintf(&p2, "%s/psrun", xdg) < 0 ||
            asprintf(&p3, "%s/psrun/oci", xdg) < 0)
                return psrun_error_errno(err, ENOMEM, "root");
        /* XDG_RUNTIME_DIR itself is made by the login (systemd-logind, pam):
         * psrun checks it but does not make it. */
        _cleanup_close_ int top = open_private_dir(AT_FDCWD, p1, p1, false, err);
        if (top == -ENOENT)
                return psrun_error_set(err, ENOENT,
                                       "root \"%s\": XDG_RUNTIME_DIR does not exist: set it to a "
                                       "directory of this user's, or pass --root DIR",
                                       p1);
        if (top < 0)
                return top;
        _cleanup_close_ int mid = open_private_dir(top, "psrun", p2, create, err);
        if (mid == -ENOENT)
                return 0;
        if (mid < 0)
                return mid;
        _cleanup_close_ int leaf = open_private_dir(mid, "oci", p3, create, err);
        if (leaf == -ENOENT)
                return 0;
        if (leaf < 0)
                return leaf;
        *ret = TAKE_PTR(p3);
        return 0;
}

/* ---- identity ---- */

static const struct oci_namespace *user_namespace(const struct oci_linux *l)
{
        for (size_t i = 0; l && i < l->n_namespaces; i++)
                if (l->namespaces[i].type == CLONE_NEWUSER)
                        return &l->namespaces[i];
        return NULL;
}

static bool only_own_id(const struct oci_id_mapping *m, size_t n, uint32_t own)
{
        return n == 1 && m[0].size == 1 && m[0].host_id == own;
}

/* The id the child sets itself up as: the namespace's root when it is
 * mapped, else the first id mapped. */
static uint32_t setup_id(const struct oci_id_mapping *m, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (m[i].container_id == 0)
                        return 0;
        return m[0].container_id;
}

int oci_rootless_plan_identity(const struct oci_config *c, struct plan *p, psrun_error *err)
{
        const struct oci_linux *l = c->linux_;
        const struct oci_namespace *user = user_namespace(l);
        if (!user)
                return psrun_error_set(err, EPERM,
                                       "linux.namespaces: a rootless container needs a user "
                                       "namespace (psrun runs as uid %u, without privileges): add "
                                       "{\"type\": \"user\"} with uidMappings and gidMappings, as "
                                       "`psrun spec --rootless` writes",
                                       (unsigned) geteuid());
        p->rootless.active = true;
        /* A user may not clone the host's mounts from outside: the child
         * clones the bind sources in its own mount namespace. */
        p->rootfs.sources_in_child = true;
        if (user->path)
                return 0; /* joined: its maps were written by whoever made it */
        if (!l->n_uid_mappings || !l->n_gid_mappings)
                return psrun_error_set(err, EINVAL,
                                       "linux.uidMappings: a rootless container's new user "
                                       "namespace needs uidMappings and gidMappings (its own uid "
                                       "%u, or its /etc/subuid range), as `psrun spec --rootless` "
                                       "writes",
                                       (unsigned) geteuid());
        p->rootless.setup_uid = setup_id(l->uid_mappings, l->n_uid_mappings);
        p->rootless.setup_gid = setup_id(l->gid_mappings, l->n_gid_mappings);
        if (only_own_id(l->uid_mappings, l->n_uid_mappings, geteuid()) &&
            only_own_id(l->gid_mappings, l->n_gid_mappings, getegid())) {
                /* The one mapping a user may write itself; the kernel takes
                 * its gid_map only with setgroups denied. */
                p->rootless.setgroups_deny = true;
                if (c->process && c->process->user.n_additional_gids)
                        return psrun_error_set(err, EPERM,
                                               "process.user.additionalGids: a rootless "
                                               "container that maps only the user's own ids "
                                               "cannot set groups (setgroups is denied in it): "
                                               "map a /etc/subgid range too");
                return 0;
        }
        /* Anything else is the setuid helpers' to check against
         * /etc/subuid and /etc/subgid, range by range. */
        if (!idmap_have_helpers())
                return psrun_error_set(err, ENOENT,
                                       "linux.uidMappings: ids beyond the user's own need "
                                       "newuidmap and newgidmap (package uidmap), which are not "
                                       "installed");
        p->rootless.subids = true;
        return 0;
}

/* ---- limits without a cgroup ---- */

static const char *asked_limit(const struct oci_resources *r)
{
        if (!r)
                return NULL;
        const struct oci_memory *m = r->memory;
        if (m && ((m->limit.set && m->limit.value > 0) ||
                  (m->reservation.set && m->reservation.value > 0) ||
                  (m->swap.set && m->swap.value > 0) || (m->kernel.set && m->kernel.value > 0) ||
                  (m->kernel_tcp.set && m->kernel_tcp.value > 0)))
                return "linux.resources.memory";
        const struct oci_cpu *cpu = r->cpu;
        if (cpu &&
            ((cpu->quota.set && cpu->quota.value > 0) || (cpu->shares.set && cpu->shares.value) ||
             (cpu->cpus && cpu->cpus[0]) || (cpu->mems && cpu->mems[0]) ||
             (cpu->realtime_runtime.set && cpu->realtime_runtime.value > 0) ||
             (cpu->idle.set && cpu->idle.value)))
                return "linux.resources.cpu";
        if (r->pids && r->pids->limit.set && r->pids->limit.value > 0)
                return "linux.resources.pids";
        if (r->block_io)
                return "linux.resources.blockIO";
        if (r->n_hugepage_limits)
                return "linux.resources.hugepageLimits";
        if (r->n_unified)
                return "linux.resources.unified";
        if (r->network)
                return "linux.resources.network";
        return NULL;
}

static const char *annotation(const struct oci_config *c, const char *key)
{
        for (size_t i = 0; i < c->n_annotations; i++)
                if (strcmp(c->annotations[i].key, key) == 0)
                        return c->annotations[i].value;
        return NULL;
}

/* value as resource's limit, at most what the config's own rlimit and the
 * user's hard limit say (a user cannot raise a hard limit). */
static int add_rlimit(struct plan *p, int resource, uint64_t value, psrun_error *err)
{
        struct rlimit cur;
        if (getrlimit(resource, &cur) == 0 && value > cur.rlim_max)
                value = cur.rlim_max;
        for (size_t i = 0; i < p->n_rlimits; i++) {
                struct plan_rlimit *l = &p->rlimits[i];
                if (l->resource != resource)
                        continue;
                if (l->limit.rlim_max > value)
                        l->limit.rlim_max = value;
                if (l->limit.rlim_cur > value)
                        l->limit.rlim_cur = value;
                return 0;
        }
        if (p->n_rlimits >= PLAN_MAX_RLIMITS)
                return psrun_error_set(err, E2BIG, "process.rlimits: too many with the limits'");
        p->rlimits[p->n_rlimits++] =
                (struct plan_rlimit){.resource = resource, .limit = {value, value}};
        return 0;
}

int oci_rootless_limits(const struct oci_config *c, struct plan *p, char *said, size_t size,
                        psrun_error *err)
{
        said[0] = '\0';
        if (!(p->clone_flags & CLONE_NEWPID))
                return psrun_error_set(err, EPERM,
                                       "linux.namespaces: a rootless container without a cgroup "
                                       "needs a new pid namespace: delete and kill --all kill it "
                                       "through its init, and could not find its processes "
                                       "among the host's");
        const char *mode = annotation(c, OCI_ROOTLESS_LIMITS_ANNOTATION);
        if (mode && strcmp(mode, "strict") != 0 && strcmp(mode, "best_effort") != 0)
                return psrun_error_set(err, EINVAL,
                                       "annotations: " OCI_ROOTLESS_LIMITS_ANNOTATION
                                       ": \"%s\" is not strict or best_effort",
                                       mode);
        const struct oci_resources *res = c->linux_ ? c->linux_->resources : NULL;
        const char *asked = asked_limit(res);
        if (!asked)
                return 0;
        if (!mode || strcmp(mode, "strict") == 0)
                return psrun_error_set(
                        err, EPERM,
                        "%s: a limit needs a cgroup, and this user cannot write "
                        "the container's (cgroup v1, or no delegated cgroup v2 "
                        "subtree): run as root, give the user a delegated "
                        "subtree, or set the annotation " OCI_ROOTLESS_LIMITS_ANNOTATION
                        "=best_effort for rlimits (docs/rootless.md)",
                        asked);
        /* Best effort: RLIMIT_AS bounds each process's address space (not
         * the container's sum); RLIMIT_NPROC the processes of the
         * container's uid, which the kernel counts in the container's own
         * user namespace. Nothing holds cpu, block io or the rest. */
        const char *memory = "not enforced", *pids = "not enforced";
        int r = 0;
        if (res->memory && res->memory->limit.set && res->memory->limit.value > 0 &&
            (r = add_rlimit(p, RLIMIT_AS, (uint64_t) res->memory->limit.value, err)) >= 0)
                memory = "RLIMIT_AS (each process)";
        if (r >= 0 && res->pids && res->pids->limit.set && res->pids->limit.value > 0 &&
            (r = add_rlimit(p, RLIMIT_NPROC, (uint64_t) res->pids->limit.value, err)) >= 0)
                pids = "RLIMIT_NPROC";
        if (r < 0)
                return r;
        snprintf(said, size,
                 "rootless, no cgroup (" OCI_ROOTLESS_LIMITS_ANNOTATION
                 "=best_effort): memory.limit: %s; pids.limit: %s; cpu, blockIO, hugepages, "
                 "unified, network: not enforced",
                 memory, pids);
        return 0;
}

/* ---- processes without a cgroup ---- */

static int ns_of(pid_t pid, struct stat *st)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int) pid);
        return stat(path, st) < 0 ? -errno : 0;
}

static int cmp_pid(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

int oci_pidns_pids(pid_t init_pid, pid_t **ret, size_t *n, psrun_error *err)
{
        *ret = NULL;
        *n = 0;
        struct stat theirs, ours;
        int r = ns_of(init_pid, &theirs);
        if (r == -ENOENT || r == -ESRCH)
                return -ESRCH;
        if (r < 0)
                return psrun_error_errno(err, r, "pid namespace of %d", (int) init_pid);
        if (stat("/proc/self/ns/pid", &ours) < 0)
                return psrun_error_errno(err, errno, "/proc/self/ns/pid");
        if (theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "the container has no cgroup and shares psrun's pid "
                                       "namespace: its processes cannot be told from the host's");
        DIR *d = opendir("/proc");
        if (!d)
                return psrun_error_errno(err, errno, "/proc");
        _cleanup_free_ pid_t *pids = NULL;
        size_t count = 0, cap = 0;
        for (struct dirent *e; (e = readdir(d));) {
                char *end;
                long v = strtol(e->d_name, &end, 10);
                struct stat st;
                if (*end || v <= 0 || ns_of((pid_t) v, &st) < 0 || st.st_ino != theirs.st_ino ||
                    st.st_dev != theirs.st_dev)
                        continue;
                if (count == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        pid_t *np = realloc(pids, ncap * sizeof(*np));
                        if (!np) {
                                closedir(d);
                                return psrun_error_errno(err, ENOMEM, "pids");
                        }
                        pids = np;
                        cap = ncap;
                }
                pids[count++] = (pid_t) v;
        }
        closedir(d);
        if (count)
                qsort(pids, count, sizeof(*pids), cmp_pid);
        *ret = TAKE_PTR(pids);
        *n = count;
        return 0;
}
