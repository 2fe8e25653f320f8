/* SPDX-License-Identifier: MIT */
/*
 * The driver-independent half of the cgroup layer: which driver this host
 * gets, where each hierarchy is mounted and where the caller sits in it,
 * naming, creating and removing directories, attaching, killing by signal,
 * and garbage-collecting what dead runs left behind.
 */
#include "runtime/cgroup/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/fileio.h"

/* Deep enough for any sandbox's own sub-cgroups (sessions nest one level);
 * the bound only keeps recursion finite on a hostile tree. */
#define CG_MAX_DEPTH 32

#define CG_MAX_CPUS 1000000

static const char *const slot_names[CG_SLOT_MAX] = {
        [CG_SLOT_MEMORY] = "memory",     [CG_SLOT_PIDS] = "pids",
        [CG_SLOT_CPU] = "cpu",           [CG_SLOT_CPUACCT] = "cpuacct",
        [CG_SLOT_FREEZER] = "freezer",   [CG_SLOT_CPUSET] = "cpuset",
        [CG_SLOT_DEVICES] = "devices",   [CG_SLOT_BLKIO] = "blkio",
        [CG_SLOT_HUGETLB] = "hugetlb",   [CG_SLOT_NET_CLS] = "net_cls",
        [CG_SLOT_NET_PRIO] = "net_prio", [CG_SLOT_PERF_EVENT] = "perf_event",
        [CG_SLOT_UNIFIED] = "unified",
};

static atomic_bool ignore_unified;
static const struct cgroup_ops *_Atomic forced_driver;
static atomic_uint name_counter;

const char *cg_slot_name(enum cg_slot slot)
{
        return slot < CG_SLOT_MAX ? slot_names[slot] : NULL;
}

int cg_slot_from_name(const char *name)
{
        for (int s = 0; s < CG_SLOT_MAX; s++)
                if (strcmp(name, slot_names[s]) == 0)
                        return s;
        return -1;
}

void cgroup_test_set_ignore_unified(bool ignore)
{
        atomic_store(&ignore_unified, ignore);
}

bool cg_ignore_unified(void)
{
        return atomic_load(&ignore_unified);
}

void cgroup_test_set_driver(const char *name)
{
        const struct cgroup_ops *ops = NULL;
        if (name && strcmp(name, cgroup_v2_ops.name) == 0)
                ops = &cgroup_v2_ops;
        else if (name && strcmp(name, cgroup_v1_ops.name) == 0)
                ops = &cgroup_v1_ops;
        atomic_store(&forced_driver, ops);
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

void cg_dir_clear(struct cg_dir *d)
{
        free(d->path);
        free(d->rel);
        *d = (struct cg_dir){0};
}

void cg_dirs_clear(struct cg_dir (*dirs)[CG_SLOT_MAX])
{
        for (int s = 0; s < CG_SLOT_MAX; s++)
                cg_dir_clear(&(*dirs)[s]);
}

struct cgroup *cg_new(const struct cgroup_ops *ops)
{
        struct cgroup *cg = calloc(1, sizeof(*cg));
        if (cg) {
                cg->ops = ops;
                cg->unified_fd = -1;
                cg->events_fd = -1;
                for (int i = 0; i < CG_USAGE_FILES; i++)
                        cg->usage_fd[i] = -1;
        }
        return cg;
}

/* "a" + "/" + "b", with "/" + "b" not doubling the slash. */
char *cg_path_join(const char *a, const char *b)
{
        char *ret;
        size_t la = strlen(a);
        bool slash = la > 0 && a[la - 1] == '/';
        if (asprintf(&ret, "%s%s%s", a, slash ? "" : "/", b) < 0)
                return NULL;
        return ret;
}

static int file_path(char *buf, size_t size, const char *dir, const char *file)
{
        int n = snprintf(buf, size, "%s/%s", dir, file);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

bool cg_host_has_swap(void)
{
        char buf[4096];
        _cleanup_close_ int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_into(fd, buf, sizeof(buf)) < 0)
                return true; /* can't tell: assume the worst */
        const char *line = strstr(buf, "SwapTotal:");
        if (!line)
                return false;
        unsigned long long kb = 0;
        return sscanf(line, "SwapTotal: %llu", &kb) == 1 && kb > 0;
}

int cg_no_swap_limit(psrun_error *err, const char *dir)
{
        return psrun_error_set(err, EOPNOTSUPP,
                               "cgroup: this host has swap, but its kernel cannot keep the "
                               "sandbox out of it (swap accounting is off: no swap limit file "
                               "in %s); boot with swapaccount=1 or turn swap off",
                               dir);
}

bool cg_file_exists(const char *dir, const char *file)
{
        char p[PATH_MAX];
        return file_path(p, sizeof(p), dir, file) == 0 && access(p, F_OK) == 0;
}

bool cg_is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cg_write_str(const char *dir, const char *file, const char *value)
{
        char p[PATH_MAX];
        int r = file_path(p, sizeof(p), dir, file);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* Control files take one write; a short one means the kernel refused
         * part of the value. */
        size_t n = strlen(value);
        ssize_t w = write(fd, value, n);
        if (w < 0)
                return -errno;
        return (size_t) w == n ? 0 : -EIO;
}

int cg_write(const char *dir, const char *file, const char *fmt, ...)
{
        char value[128];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(value, sizeof(value), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(value))
                return -EINVAL;
        return cg_write_str(dir, file, value);
}

ssize_t cg_read(const char *dir, const char *file, char *buf, size_t size)
{
        char p[PATH_MAX];
        int r = file_path(p, sizeof(p), dir, file);
        if (r < 0)
                return r;
        if (size == 0)
                return -EINVAL;
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_into(fd, buf, size);
}

static int parse_u64(const char *s, uint64_t *ret)
{
        while (*s == ' ' || *s == '\t')
                s++;
        if (strncmp(s, "max", 3) == 0 && (s[3] == '\0' || s[3] == '\n' || s[3] == ' ')) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (*s < '0' || *s > '9')
                return -EPROTO;
        errno = 0;
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
                return -errno;
        if (*end != '\0' && *end != '\n' && *end != ' ')
                return -EPROTO;
        *ret = v;
        return 0;
}

int cg_parse_u64(const char *text, const char *key, uint64_t *ret)
{
        if (!key)
                return parse_u64(text, ret);
        size_t klen = strlen(key);
        for (const char *line = text; line && *line;) {
                if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
                        return parse_u64(line + klen + 1, ret);
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return -ENOENT;
}

int cg_read_u64(const char *dir, const char *file, uint64_t *ret)
{
        char buf[128];
        ssize_t n = cg_read(dir, file, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        return cg_parse_u64(buf, NULL, ret);
}

int cg_read_key_u64(const char *dir, const char *file, const char *key, uint64_t *ret)
{
        char buf[8192];
        ssize_t n = cg_read(dir, file, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        return cg_parse_u64(buf, key, ret);
}

/*
 * Send `sig` to every process in dir and its descendant cgroups. Returns how
 * many were signalled. The caller's own pid is never signalled: a caller that
 * sits in the cgroup by mistake must not kill itself.
 */
static int signal_tree(const char *dir, int sig, int depth)
{
        char p[PATH_MAX];
        int r = file_path(p, sizeof(p), dir, "cgroup.procs");
        if (r < 0)
                return r;
        int count = 0;
        {
                _cleanup_fclose_ FILE *f = fopen(p, "re");
                if (!f)
                        return -errno;
                long pid;
                pid_t self = getpid();
                while (fscanf(f, "%ld", &pid) == 1) {
                        /* pid 0 or -1 would signal our process group or everything. */
                        if (pid <= 0 || pid > INT_MAX || pid == self)
                                continue;
                        if (kill((pid_t) pid, sig) == 0)
                                count++;
                }
        }
        if (depth >= CG_MAX_DEPTH)
                return count;
        _cleanup_(closedirp) DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? count : -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
                    strcmp(de->d_name, "..") == 0)
                        continue;
                _cleanup_free_ char *sub = cg_path_join(dir, de->d_name);
                if (!sub)
                        return -ENOMEM;
                r = signal_tree(sub, sig, depth + 1);
                if (r > 0)
                        count += r;
                else if (r < 0 && r != -ENOENT)
                        return r;
        }
        return count;
}

int cg_signal_tree(const char *dir, int sig)
{
        return signal_tree(dir, sig, 0);
}

int cg_sigkill_until_empty(struct cgroup *cg, uint64_t deadline_ms, psrun_error *err)
{
        unsigned pause = 1;
        for (;;) {
                int total = 0;
                for (int s = 0; s < CG_SLOT_MAX; s++) {
                        const struct cg_dir *d = &cg->dir[s];
                        if (!d->path || d->alias)
                                continue;
                        int r = cg_signal_tree(d->path, SIGKILL);
                        if (r == -ENOENT)
                                continue;
                        if (r < 0)
                                return psrun_error_errno(err, r, "cgroup: killing processes in %s",
                                                         d->path);
                        total += r;
                }
                if (total == 0)
                        return 0;
                if (monotonic_ms() >= deadline_ms)
                        return psrun_error_set(err, ETIMEDOUT,
                                               "cgroup: %s still has %d process(es) after "
                                               "SIGKILL",
                                               cg->name, total);
                /* Killed processes take a moment to exit; back off gently. */
                sleep_ms(pause);
                if (pause < 50)
                        pause *= 2;
        }
}

int cg_wait_unpopulated(const char *dir, uint64_t deadline_ms, psrun_error *err)
{
        char p[PATH_MAX];
        int r = file_path(p, sizeof(p), dir, "cgroup.events");
        if (r < 0)
                return psrun_error_errno(err, r, "cgroup: %s", dir);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return psrun_error_errno(err, errno, "cgroup: opening %s", p);
        for (;;) {
                char buf[512];
                ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
                if (n < 0)
                        return psrun_error_errno(err, errno, "cgroup: reading %s", p);
                buf[n] = '\0';
                const char *pop = strstr(buf, "populated ");
                if (pop && pop[10] == '0')
                        return 0;
                uint64_t now = monotonic_ms();
                if (now >= deadline_ms)
                        return psrun_error_set(err, ETIMEDOUT,
                                               "cgroup: %s still populated after kill", dir);
                /* cgroup.events raises POLLPRI on change; the short cap covers a
                 * change that landed between the read and the poll. */
                uint64_t wait = deadline_ms - now;
                struct pollfd pfd = {.fd = fd, .events = POLLPRI};
                if (poll(&pfd, 1, wait > 20 ? 20 : (int) wait) < 0 && errno != EINTR)
                        return psrun_error_errno(err, errno, "cgroup: poll %s", p);
        }
}

/* rmdir dir after its descendant cgroups; a cgroup whose last process just
 * died can report EBUSY for a moment, so that is retried briefly. */
static int remove_tree(const char *dir, int depth)
{
        if (depth < CG_MAX_DEPTH) {
                _cleanup_(closedirp) DIR *d = opendir(dir);
                if (!d && errno == ENOENT)
                        return 0;
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
                            strcmp(de->d_name, "..") == 0)
                                continue;
                        _cleanup_free_ char *sub = cg_path_join(dir, de->d_name);
                        if (!sub)
                                return -ENOMEM;
                        int r = remove_tree(sub, depth + 1);
                        if (r < 0)
                                return r;
                }
        }
        uint64_t deadline = monotonic_ms() + 500;
        unsigned pause = 1;
        while (rmdir(dir) < 0) {
                if (errno == ENOENT)
                        return 0;
                if (errno != EBUSY || monotonic_ms() >= deadline)
                        return -errno;
                sleep_ms(pause);
                if (pause < 32)
                        pause *= 2;
        }
        return 0;
}

/* Remove every directory the cgroup owns, last slot first. Returns the first
 * failure; keeps going so as much as possible is gone. */
int cg_remove_dirs(struct cgroup *cg, psrun_error *err)
{
        int ret = 0;
        for (int s = CG_SLOT_MAX - 1; s >= 0; s--) {
                struct cg_dir *d = &cg->dir[s];
                if (d->path && !d->alias) {
                        int r = remove_tree(d->path, 0);
                        if (r < 0 && ret == 0)
                                ret = psrun_error_errno(err, r, "cgroup: removing %s", d->path);
                }
                cg_dir_clear(d);
        }
        return ret;
}

const struct cgroup_ops *cg_driver(void)
{
        /* A cgroup2 filesystem right at /sys/fs/cgroup is the unified layout;
         * anything else (tmpfs of v1 mounts, possibly with cgroup2 at
         * unified/) gets the v1 driver. */
        const struct cgroup_ops *forced = atomic_load(&forced_driver);
        if (forced)
                return forced;
        struct statfs sfs;
        if (statfs(CG_FS_ROOT, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
                return &cgroup_v2_ops;
        return &cgroup_v1_ops;
}

const char *cgroup_driver_name(void)
{
        return cg_driver()->name;
}

/* A parent must be canonical: it is compared with what /proc/<pid>/cgroup
 * prints, and must not climb out of the hierarchy. */
bool cg_path_is_canonical(const char *parent)
{
        size_t len = strlen(parent);
        bool ok = parent[0] == '/' && len < PATH_MAX / 2 && !strchr(parent, '\n') &&
                  (len == 1 || parent[len - 1] != '/');
        for (const char *p = parent; ok && *p;) {
                const char *comp = p + 1;
                const char *end = strchr(comp, '/');
                size_t clen = end ? (size_t) (end - comp) : strlen(comp);
                if ((clen == 0 && len > 1) || (clen == 1 && comp[0] == '.') ||
                    (clen == 2 && comp[0] == '.' && comp[1] == '.'))
                        ok = false;
                p = end ? end : comp + clen;
        }
        return ok;
}

static int validate_parent(const char *parent, psrun_error *err)
{
        if (parent && !cg_path_is_canonical(parent))
                return psrun_error_set(err, EINVAL,
                                       "cgroup: invalid cgroup parent \"%s\": expected an "
                                       "absolute path such as /psrun, without \".\", \"..\" or "
                                       "empty components",
                                       parent);
        return 0;
}

static int validate_limits(const struct cgroup_limits *limits, psrun_error *err)
{
        /* The bound keeps the quota arithmetic far from overflow; the kernel
         * refuses quotas past ~2^44 us anyway. */
        if (!isfinite(limits->cpus) || limits->cpus < 0 || limits->cpus > CG_MAX_CPUS)
                return psrun_error_set(err, EINVAL,
                                       "cgroup: invalid cpu limit %g: expected 0 (no limit) up "
                                       "to %d",
                                       limits->cpus, CG_MAX_CPUS);
        return 0;
}

void cg_free(struct cgroup *cg)
{
        if (!cg)
                return;
        if (cg->unified_fd >= 0)
                close(cg->unified_fd);
        cg_close_usage(cg);
        for (int s = 0; s < CG_SLOT_MAX; s++)
                cg_dir_clear(&cg->dir[s]);
        free(cg);
}

void cgroup_destroy(struct cgroup *cg)
{
        if (!cg)
                return;
        /* Usually the cgroup is empty already (the sandbox's pid 1 took its
         * namespace down with it): then a plain rmdir per hierarchy is all. */
        bool removed = true;
        for (int s = CG_SLOT_MAX - 1; s >= 0; s--) {
                const struct cg_dir *d = &cg->dir[s];
                if (d->path && !d->alias && rmdir(d->path) < 0 && errno != ENOENT)
                        removed = false;
        }
        if (!removed) {
                /* Processes still inside would keep rmdir failing; nothing
                 * useful can be done with a kill error here. */
                cg->ops->kill(cg, NULL);
                cg_remove_dirs(cg, NULL);
        }
        cg_free(cg);
}

/* mkdir <parent>/<name> in every slot; -EEXIST (a stale directory of a
 * previous process with our pid) lets the caller pick another name. */
static int make_dirs(struct cgroup *cg, const struct cg_dir parents[CG_SLOT_MAX], psrun_error *err)
{
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                const struct cg_dir *p = &parents[s];
                if (!p->path)
                        continue;
                struct cg_dir *d = &cg->dir[s];
                d->path = cg_path_join(p->path, cg->name);
                d->rel = cg_path_join(p->rel, cg->name);
                d->alias = p->alias;
                if (!d->path || !d->rel) {
                        cg_dir_clear(d);
                        return psrun_error_errno(err, ENOMEM, "cgroup");
                }
                if (d->alias)
                        continue;
                if (mkdir(d->path, 0755) < 0) {
                        int e = errno;
                        psrun_error_errno(err, e, "cgroup: creating %s", d->path);
                        cg_dir_clear(d);
                        return -e;
                }
        }
        return 0;
}

/* Below `parents` (one directory per slot), make the cgroup and apply the
 * limits. On failure everything made here is removed again. */
static int create_below(const struct cgroup_ops *ops, struct cg_dir parents[CG_SLOT_MAX],
                        const struct cgroup_limits *limits, struct cgroup **ret, psrun_error *err)
{
        cg_mark_aliases(parents);
        if (ops->prepare_parents) {
                int r = ops->prepare_parents(parents, limits, err);
                if (r < 0)
                        return r;
        }

        _cleanup_(cgroup_destroyp) struct cgroup *cg = cg_new(ops);
        if (!cg)
                return psrun_error_errno(err, ENOMEM, "cgroup");
        int r;
        for (int attempt = 0;; attempt++) {
                snprintf(cg->name, sizeof(cg->name), "psrun-%d-%u", (int) getpid(),
                         atomic_fetch_add(&name_counter, 1));
                r = make_dirs(cg, parents, err);
                if (r != -EEXIST || attempt >= 16)
                        break;
                r = cg_remove_dirs(cg, err);
                if (r < 0)
                        return r;
                psrun_error_clear(err);
        }
        if (r < 0)
                return r;

        r = ops->apply_limits(cg, limits, err);
        if (r < 0)
                return r;
        const char *unified = cg->dir[CG_SLOT_UNIFIED].path;
        if (unified) {
                cg->unified_fd = open(unified, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (cg->unified_fd < 0)
                        return psrun_error_errno(err, errno, "cgroup: opening %s", unified);
        }
        *ret = TAKE_PTR(cg);
        return 0;
}

int cg_find_bases(const char *parent, const struct cgroup_limits *limits,
                  const struct cgroup_ops **ret_ops, struct cg_dir bases[CG_SLOT_MAX],
                  psrun_error *err)
{
        int r = validate_parent(parent, err);
        if (r < 0)
                return r;
        const struct cgroup_ops *ops = cg_driver();
        _cleanup_(cg_host_clear) struct cg_host host = {0};
        r = cg_host_load(&host, err);
        if (r < 0)
                return r;
        r = ops->find_parents(&host, parent, limits, bases, err);
        if (r < 0)
                return r;
        cg_mark_aliases(bases);
        *ret_ops = ops;
        return 0;
}

int cgroup_create(const char *parent, const struct cgroup_limits *limits, struct cgroup **ret,
                  psrun_error *err)
{
        static const struct cgroup_limits no_limits;
        if (!ret)
                return psrun_error_set(err, EINVAL, "cgroup: no result pointer");
        *ret = NULL;
        if (!limits)
                limits = &no_limits;
        int r = validate_limits(limits, err);
        if (r < 0)
                return r;
        const struct cgroup_ops *ops;
        _cleanup_(cg_dirs_clear) struct cg_dir parents[CG_SLOT_MAX] = {0};
        r = cg_find_bases(parent, limits, &ops, parents, err);
        if (r < 0)
                return r;
        r = create_below(ops, parents, limits, ret, err);
        /* cgroup v2 gives controllers only to children of cgroups without
         * processes of their own, and psrun usually shares its cgroup with a
         * shell (a systemd session scope, a service): then nest below the
         * closest ancestor that can take them, which still holds the limits
         * of everything above it. An explicit parent is never second-guessed. */
        while (r == -EBUSY && !parent && ops == &cgroup_v2_ops &&
               cg_dir_ascend(&parents[CG_SLOT_UNIFIED])) {
                psrun_error_clear(err);
                r = create_below(ops, parents, limits, ret, err);
        }
        return r;
}

bool cg_dir_ascend(struct cg_dir *d)
{
        if (!d->path || !d->rel || strcmp(d->rel, "/") == 0)
                return false;
        char *ps = strrchr(d->path, '/'), *rs = strrchr(d->rel, '/');
        if (!ps || !rs)
                return false;
        *ps = '\0';
        if (rs == d->rel)
                rs[1] = '\0';
        else
                *rs = '\0';
        return true;
}

int cgroup_create_child(const struct cgroup *parent, const struct cgroup_limits *limits,
                        struct cgroup **ret, psrun_error *err)
{
        static const struct cgroup_limits no_limits;
        if (!ret || !parent)
                return psrun_error_set(err, EINVAL, "cgroup: create child: invalid arguments");
        *ret = NULL;
        if (!limits)
                limits = &no_limits;
        int r = validate_limits(limits, err);
        if (r < 0)
                return r;
        _cleanup_(cg_dirs_clear) struct cg_dir parents[CG_SLOT_MAX] = {0};
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                const struct cg_dir *d = &parent->dir[s];
                if (!d->path)
                        continue;
                parents[s].path = strdup(d->path);
                parents[s].rel = strdup(d->rel);
                if (!parents[s].path || !parents[s].rel)
                        return psrun_error_errno(err, ENOMEM, "cgroup");
        }
        return create_below(parent->ops, parents, limits, ret, err);
}

int cgroup_clone_fd(const struct cgroup *cg)
{
        return cg ? cg->unified_fd : -1;
}

bool cgroup_attach_after_clone(const struct cgroup *cg)
{
        for (int s = 0; cg && s < CG_SLOT_MAX; s++)
                if (cg->dir[s].path && !cg->dir[s].alias &&
                    (s != CG_SLOT_UNIFIED || cg->unified_fd < 0))
                        return true;
        return false;
}

int cgroup_attach(struct cgroup *cg, pid_t pid, psrun_error *err)
{
        if (!cg || pid <= 0)
                return psrun_error_set(err, EINVAL, "cgroup: attach: invalid arguments");
        _cleanup_free_ char *content = NULL;
        char proc_path[64];
        snprintf(proc_path, sizeof(proc_path), "/proc/%d/cgroup", (int) pid);
        int r = cg_read_whole_file(proc_path, &content);
        if (r < 0)
                return psrun_error_errno(err, r == -ENOENT ? ESRCH : r,
                                         "cgroup: attach: reading /proc/%d/cgroup", (int) pid);
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                const struct cg_dir *d = &cg->dir[s];
                if (!d->path || d->alias)
                        continue;
                /* Writing cgroup.procs takes a global lock even when the
                 * process is already there (as after CLONE_INTO_CGROUP), so
                 * skip the hierarchies where it already is. */
                _cleanup_free_ char *current = NULL;
                const char *ctrl = s == CG_SLOT_UNIFIED ? NULL : cg_slot_name(s);
                if (cg_proc_cgroup_lookup(content, ctrl, &current) == 0 &&
                    strcmp(current, d->rel) == 0)
                        continue;
                r = cg_write(d->path, "cgroup.procs", "%d", (int) pid);
                if (r < 0)
                        return psrun_error_errno(err, r, "cgroup: moving process %d into %s",
                                                 (int) pid, d->path);
        }
        return 0;
}

int cgroup_attach_fds(struct cgroup *cg, int *fds, size_t max, psrun_error *err)
{
        size_t n = 0;
        for (int s = 0; cg && s < CG_SLOT_MAX; s++) {
                const struct cg_dir *d = &cg->dir[s];
                if (!d->path || d->alias || (s == CG_SLOT_UNIFIED && cg->unified_fd >= 0))
                        continue;
                char p[PATH_MAX];
                int r = file_path(p, sizeof(p), d->path, "cgroup.procs");
                int fd = r < 0 ? r : open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0 || n == max) {
                        r = fd < 0 ? (r < 0 ? r : -errno) : -E2BIG;
                        if (fd >= 0)
                                close(fd);
                        while (n > 0)
                                close(fds[--n]);
                        return psrun_error_errno(err, r, "cgroup: open %s/cgroup.procs", d->path);
                }
                fds[n++] = fd;
        }
        return (int) n;
}

int cgroup_kill(struct cgroup *cg, psrun_error *err)
{
        if (!cg)
                return psrun_error_set(err, EINVAL, "cgroup: kill: no cgroup");
        return cg->ops->kill(cg, err);
}

int cgroup_read_stats(struct cgroup *cg, struct cgroup_stats *stats, psrun_error *err)
{
        if (!cg || !stats)
                return psrun_error_set(err, EINVAL, "cgroup: read stats: invalid arguments");
        *stats = (struct cgroup_stats){0};
        return cg->ops->read_stats(cg, stats, err);
}

const char *cgroup_path(const struct cgroup *cg, const char *controller)
{
        if (!cg || !controller)
                return NULL;
        for (int s = 0; s < CG_SLOT_MAX; s++) {
                if (strcmp(controller, slot_names[s]) != 0)
                        continue;
                /* On a cgroup2 host every controller lives in the one directory. */
                if (!cg->dir[s].path && cg->ops == &cgroup_v2_ops)
                        return cg->dir[CG_SLOT_UNIFIED].path;
                return cg->dir[s].path;
        }
        return NULL;
}
