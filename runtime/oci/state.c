/* SPDX-License-Identifier: MIT */
/*
 * The OCI container state directory: ids, the root, one directory per
 * container, its lock, state.json and the create/start FIFO. The layout and
 * the protocols are described in state.h.
 */
#include "runtime/oci/state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/fault.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "runtime/oci/state-internal.h"

struct oci_root {
        int fd;
        char *path;
        log_fn log; /* NULL: nothing is logged */
        void *log_userdata;
};

struct oci_container {
        struct oci_root *root; /* borrowed */
        char *id;
        int dir_fd;
        int lock_fd;
        int lock_op; /* 0, LOCK_SH or LOCK_EX */
        bool deleted;
};

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* ---- ids ---- */

static bool id_char_ok(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '+' || c == '-';
}

int oci_id_validate(const char *id, psrun_error *err)
{
        char buf[SHOWN_MAX];
        size_t len;

        if (!id || !*id)
                return psrun_error_set(err, EINVAL, "container id must not be empty");
        len = strlen(id);
        /* The id names a directory: longer than NAME_MAX could never be created. */
        if (len > OCI_ID_MAX)
                return psrun_error_set(err, EINVAL,
                                       "container id \"%s\": is %zu bytes long, at most %d allowed",
                                       shown(id, buf), len, OCI_ID_MAX);
        for (size_t i = 0; i < len; i++)
                if (!id_char_ok(id[i]))
                        return psrun_error_set(err, EINVAL,
                                               "container id \"%s\": must contain only letters, "
                                               "digits, '_', '.', '+' and '-'",
                                               shown(id, buf));
        if (streq(id, ".") || streq(id, ".."))
                return psrun_error_set(err, EINVAL,
                                       "container id \"%s\": must not be \".\" or \"..\"", id);
        return 0;
}

static int not_exist(psrun_error *err, const char *id)
{
        return psrun_error_set(err, ENOENT, "container \"%s\" does not exist", id);
}

/* ---- the root ---- */

/* mkdirat + openat; a directory we make gets exactly 0700 whatever the
 * umask. Returns the fd, or -errno. */
static int mkdir_open_at(int dir_fd, const char *name, int open_flags, bool *ret_created)
{
        int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | open_flags;
        bool created = mkdirat(dir_fd, name, 0700) == 0;

        if (!created && errno != EEXIST)
                return -errno;
        _cleanup_close_ int fd = openat(dir_fd, name, flags);
        /* A umask without u+r leaves a directory we can't open unprivileged. */
        if (fd < 0 && errno == EACCES && created &&
            fchmodat(dir_fd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
                fd = openat(dir_fd, name, flags);
        if (fd < 0)
                return -errno;
        if (created && fchmod(fd, 0700) < 0)
                return -errno;
        if (ret_created)
                *ret_created = created;
        return TAKE_FD(fd);
}

/* mkdir -p of an absolute directory path, following symlinks on the way (the
 * admin's /var/run -> /run is fine): returns its fd. */
static int open_parents(const char *path, psrun_error *err)
{
        char buf[SHOWN_MAX];
        _cleanup_close_ int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;

        if (fd < 0)
                return psrun_error_errno(err, errno, "root: open /");
        if (!copy)
                return psrun_error_errno(err, ENOMEM, "root");
        for (char *comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
                int next = mkdir_open_at(fd, comp, 0, NULL);
                if (next < 0)
                        return psrun_error_errno(err, next, "root \"%s\": create or open \"%s\"",
                                                 shown(path, buf), comp);
                close(fd);
                fd = next;
        }
        return TAKE_FD(fd);
}

static int root_check(int fd, const char *path, bool created, psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct stat st;

        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "root \"%s\"", shown(path, buf));
        /* Whoever owns or can write the root can swap container directories. */
        if (st.st_uid != geteuid())
                return psrun_error_set(err, EPERM,
                                       "root \"%s\": owned by uid %u, not by us (uid %u); "
                                       "refusing it",
                                       shown(path, buf), (unsigned) st.st_uid,
                                       (unsigned) geteuid());
        if (!created && (st.st_mode & 022))
                return psrun_error_set(err, EPERM,
                                       "root \"%s\": writable by group or others (mode %04o); "
                                       "refusing it",
                                       shown(path, buf), (unsigned) (st.st_mode & 07777));
        return 0;
}

int oci_root_open(const char *path, struct oci_root **ret, psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct stat st;
        bool created;

        if (!path)
                path = OCI_ROOT_DEFAULT;
        if (!*path)
                return psrun_error_set(err, EINVAL, "root: the path must not be empty");
        _cleanup_free_ char *abs = NULL;
        if (path[0] == '/') {
                abs = strdup(path);
        } else {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);
                if (!cwd)
                        return psrun_error_errno(err, errno, "root: getcwd");
                if (asprintf(&abs, "%s/%s", cwd, path) < 0)
                        abs = NULL;
        }
        if (!abs)
                return psrun_error_errno(err, ENOMEM, "root");
        for (size_t len = strlen(abs); len > 1 && abs[len - 1] == '/'; len--)
                abs[len - 1] = '\0';
        char *slash = strrchr(abs, '/');
        const char *base = slash + 1;
        if (!*base || streq(base, ".") || streq(base, ".."))
                return psrun_error_set(err, EINVAL,
                                       "root \"%s\": must name a directory (not /, . or ..)",
                                       shown(path, buf));

        *slash = '\0';
        _cleanup_close_ int parent_fd = open_parents(abs, err);
        *slash = '/';
        if (parent_fd < 0)
                return parent_fd;
        _cleanup_close_ int fd = mkdir_open_at(parent_fd, base, O_NOFOLLOW, &created);
        if (fd < 0) {
                if (fstatat(parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                        return psrun_error_set(err, ELOOP,
                                               "root \"%s\": is a symbolic link; refusing it",
                                               shown(abs, buf));
                return psrun_error_errno(err, fd, "root \"%s\"", shown(abs, buf));
        }
        int r = root_check(fd, abs, created, err);
        if (r < 0)
                return r;

        struct oci_root *root = calloc(1, sizeof(*root));
        if (!root)
                return psrun_error_errno(err, ENOMEM, "root");
        root->fd = TAKE_FD(fd);
        root->path = TAKE_PTR(abs);
        *ret = root;
        return 0;
}

void oci_root_close(struct oci_root *root)
{
        if (!root)
                return;
        closep(&root->fd);
        free(root->path);
        free(root);
}

void oci_root_set_log(struct oci_root *root, log_fn fn, void *userdata)
{
        root->log = fn;
        root->log_userdata = userdata;
}

void oci_root_log(const struct oci_root *root, enum log_level level, const char *fmt, ...)
{
        va_list ap;

        if (!root)
                return;
        va_start(ap, fmt);
        log_emitv(root->log, root->log_userdata, level, fmt, ap);
        va_end(ap);
}

int oci_root_fd(const struct oci_root *root)
{
        return root->fd;
}

const char *oci_root_path(const struct oci_root *root)
{
        return root->path;
}

static int cmp_strings(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A complete container directory: a real directory holding state.json. */
static bool is_container_dir(int root_fd, const char *name)
{
        struct stat st;
        _cleanup_close_ int fd =
                openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        return fd >= 0 && fstatat(fd, STATE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode);
}

int oci_container_list(struct oci_root *root, char ***ret_ids, psrun_error *err)
{
        _cleanup_strv_free_ char **ids = NULL;
        _cleanup_(closedirp) DIR *dir = NULL;
        size_t n = 0;
        struct dirent *de;
        int fd = openat(root->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return psrun_error_errno(err, errno, "list containers");
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return psrun_error_errno(err, errno, "list containers");
        }
        ids = calloc(1, sizeof(*ids));
        if (!ids)
                return psrun_error_errno(err, ENOMEM, "list containers");
        for (errno = 0; (de = readdir(dir)); errno = 0) {
                /* Temporary and half-deleted directories are not valid ids. */
                if (oci_id_validate(de->d_name, NULL) < 0 ||
                    !is_container_dir(root->fd, de->d_name))
                        continue;
                char **grown = reallocarray(ids, n + 2, sizeof(*ids));
                if (!grown)
                        return psrun_error_errno(err, ENOMEM, "list containers");
                ids = grown;
                ids[n + 1] = NULL;
                ids[n] = strdup(de->d_name);
                if (!ids[n])
                        return psrun_error_errno(err, ENOMEM, "list containers");
                n++;
        }
        if (errno)
                return psrun_error_errno(err, errno, "list containers");
        qsort(ids, n, sizeof(*ids), cmp_strings);
        *ret_ids = TAKE_PTR(ids);
        return (int) n;
}

/* ---- removing a directory's contents ---- */

static int remove_entries(int dir_fd, const char *const *keep, int depth, psrun_error *err);

static int remove_entry(int dir_fd, const char *name, int depth, psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct statx stx;
        struct stat parent, st;
        int r;

        if (statx(dir_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) < 0)
                return errno == ENOENT
                               ? 0
                               : psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        /* unlinkat() never follows a symlink: it removes the link itself. */
        if (!S_ISDIR(stx.stx_mode)) {
                if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                        return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
                return 0;
        }
        /* Never empty a file system mounted here: it is not ours to delete. */
        if (stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)
                return psrun_error_set(err, EBUSY, "remove \"%s\": is a mount point",
                                       shown(name, buf));
        if (depth <= 0)
                return psrun_error_set(err, ELOOP, "remove \"%s\": nested too deeply",
                                       shown(name, buf));
        _cleanup_close_ int fd =
                openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        if (fstat(dir_fd, &parent) < 0 || fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        if (st.st_dev != parent.st_dev)
                return psrun_error_set(err, EBUSY, "remove \"%s\": is a mount point",
                                       shown(name, buf));
        r = remove_entries(fd, NULL, depth - 1, err);
        if (r < 0)
                return r;
        if (unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        return 0;
}

static bool name_in(const char *name, const char *const *list)
{
        for (; list && *list; list++)
                if (streq(name, *list))
                        return true;
        return false;
}

/* Removes everything in dir_fd but the names in keep. */
static int remove_entries(int dir_fd, const char *const *keep, int depth, psrun_error *err)
{
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (fd < 0)
                return psrun_error_errno(err, errno, "open directory");
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return psrun_error_errno(err, errno, "open directory");
        }
        for (errno = 0; (de = readdir(dir)); errno = 0) {
                if (streq(de->d_name, ".") || streq(de->d_name, "..") || name_in(de->d_name, keep))
                        continue;
                r = remove_entry(dir_fd, de->d_name, depth, err);
                if (r < 0)
                        return r;
        }
        return errno ? psrun_error_errno(err, errno, "read directory") : 0;
}

/* ---- one container ---- */

static void container_free(struct oci_container *c)
{
        if (!c)
                return;
        closep(&c->lock_fd);
        closep(&c->dir_fd);
        free(c->id);
        free(c);
}

static void container_freep(struct oci_container **c)
{
        container_free(*c);
}

static struct oci_container *container_new(struct oci_root *root, const char *id)
{
        struct oci_container *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        *c = (struct oci_container){.root = root, .id = strdup(id), .dir_fd = -1, .lock_fd = -1};
        if (!c->id) {
                free(c);
                return NULL;
        }
        return c;
}

void oci_container_close(struct oci_container *c)
{
        container_free(c);
}

const char *oci_container_id(const struct oci_container *c)
{
        return c->id;
}

int oci_container_dir_fd(const struct oci_container *c)
{
        return c->dir_fd;
}

int oci_container_open(struct oci_root *root, const char *id, struct oci_container **ret,
                       psrun_error *err)
{
        _cleanup_(container_freep) struct oci_container *c = NULL;
        int r = oci_id_validate(id, err);

        if (r < 0)
                return r;
        c = container_new(root, id);
        if (!c)
                return psrun_error_errno(err, ENOMEM, "container \"%s\"", id);
        c->dir_fd = openat(root->fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->dir_fd < 0 && errno == ENOENT)
                return not_exist(err, id);
        if (c->dir_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open its directory", id);
        /* No lock file: a create or delete is half done; neither is a container. */
        c->lock_fd = openat(c->dir_fd, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (c->lock_fd < 0 && errno == ENOENT)
                return not_exist(err, id);
        if (c->lock_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open its lock", id);
        *ret = TAKE_PTR(c);
        return 0;
}

/* After we got the lock: is this still the directory named id? A delete
 * that ran while we waited unlinked the lock file and the directory. */
static int check_linked(struct oci_container *c, psrun_error *err)
{
        struct stat lock_st, dir_st, named;

        if (fstat(c->lock_fd, &lock_st) < 0 || fstat(c->dir_fd, &dir_st) < 0)
                return psrun_error_errno(err, errno, "container \"%s\"", c->id);
        if (lock_st.st_nlink == 0)
                return not_exist(err, c->id);
        if (fstatat(c->root->fd, c->id, &named, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? not_exist(err, c->id)
                                       : psrun_error_errno(err, errno, "container \"%s\"", c->id);
        if (named.st_dev != dir_st.st_dev || named.st_ino != dir_st.st_ino)
                return not_exist(err, c->id);
        return 0;
}

int oci_container_lock_timeout(struct oci_container *c, enum oci_lock_mode mode, int timeout_ms,
                               psrun_error *err)
{
        int op = mode == OCI_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH;
        int64_t deadline = (int64_t) monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        int delay_ms = 1;
        int r;

        if (c->deleted)
                return not_exist(err, c->id);
        if (c->lock_op == op)
                return 0;
        if (c->lock_op)
                return psrun_error_set(err, EINVAL, "container \"%s\": already locked %s", c->id,
                                       c->lock_op == LOCK_EX ? "exclusively" : "shared");
        /* Polling with LOCK_NB bounds the wait; a blocking flock() could hang
         * forever behind a stuck psrun. */
        while (flock(c->lock_fd, op | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return psrun_error_errno(err, errno, "container \"%s\": lock", c->id);
                int64_t left = deadline - (int64_t) monotonic_ms();
                if (left <= 0)
                        return psrun_error_set(err, EBUSY,
                                               "container \"%s\" is busy: another psrun process "
                                               "holds its lock (waited %g s)",
                                               c->id, timeout_ms > 0 ? timeout_ms / 1000.0 : 0.0);
                struct timespec ts = {.tv_nsec = (left < delay_ms ? left : delay_ms) * 1000000L};
                nanosleep(&ts, NULL);
                delay_ms = delay_ms < 32 ? delay_ms * 2 : 50;
        }
        c->lock_op = op;
        r = check_linked(c, err);
        if (r < 0) {
                c->deleted = r == -ENOENT;
                oci_container_unlock(c);
        }
        return r;
}

int oci_container_lock(struct oci_container *c, enum oci_lock_mode mode, psrun_error *err)
{
        return oci_container_lock_timeout(c, mode, OCI_LOCK_TIMEOUT_MS, err);
}

void oci_container_unlock(struct oci_container *c)
{
        if (c->lock_op && c->lock_fd >= 0)
                flock(c->lock_fd, LOCK_UN);
        c->lock_op = 0;
}

/* state.json is replaced, never rewritten: readers see the old or the new
 * file whole, and a crash before the rename leaves the old one. */
static int state_write_at(int dir_fd, const char *id, const struct oci_state *s, psrun_error *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = oci_state_check(s, err);

        if (r < 0)
                return psrun_error_prefix(err, "container \"%s\"", id);
        if (!streq(s->id, id))
                return psrun_error_set(err, EINVAL,
                                       "container \"%s\": the state is for id \"%s\" instead", id,
                                       s->id);
        r = oci_state_serialize(s, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "container \"%s\": state", id);
        /* Never write what oci_state_read would refuse: the container must
         * stay deletable. */
        if (len > STATE_MAX_SIZE)
                return psrun_error_set(err, EFBIG,
                                       "container \"%s\": the state would be larger than %d MiB "
                                       "(annotations: %zu)",
                                       id, STATE_MAX_SIZE >> 20, s->n_annotations);
        /* A leftover from a crash: we hold the exclusive lock, nobody else writes. */
        if (unlinkat(dir_fd, STATE_TMP_FILE, 0) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": remove %s", id,
                                         STATE_TMP_FILE);
        _cleanup_close_ int fd = openat(dir_fd, STATE_TMP_FILE,
                                        O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": create %s", id,
                                         STATE_TMP_FILE);
        r = write_all(fd, buf, len);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && renameat(dir_fd, STATE_TMP_FILE, dir_fd, STATE_FILE) < 0)
                r = -errno;
        if (r < 0) {
                unlinkat(dir_fd, STATE_TMP_FILE, 0);
                return psrun_error_errno(err, r, "container \"%s\": write %s", id, STATE_FILE);
        }
        /* Make the rename durable; the new state is in place either way. */
        (void) fsync(dir_fd);
        return 0;
}

int oci_state_write(struct oci_container *c, const struct oci_state *s, psrun_error *err)
{
        if (c->deleted)
                return not_exist(err, c->id);
        if (c->lock_op != LOCK_EX)
                return psrun_error_set(err, ENOLCK,
                                       "container \"%s\": state written without the exclusive "
                                       "lock",
                                       c->id);
        return state_write_at(c->dir_fd, c->id, s, err);
}

int oci_state_read(struct oci_container *c, struct oci_state *s, psrun_error *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        struct stat st;
        int r;

        oci_state_free(s);
        if (c->deleted)
                return not_exist(err, c->id);
        /* O_NONBLOCK: a FIFO planted in its place must not hang us. */
        _cleanup_close_ int fd =
                openat(c->dir_fd, STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT)
                return not_exist(err, c->id);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open %s", c->id,
                                         STATE_FILE);
        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "container \"%s\": %s", c->id, STATE_FILE);
        if (!S_ISREG(st.st_mode))
                return psrun_error_set(err, EBADMSG, "container \"%s\": %s is not a regular file",
                                       c->id, STATE_FILE);
        r = read_all(fd, STATE_MAX_SIZE, &buf, &len);
        if (r == -EFBIG)
                return psrun_error_set(err, EFBIG, "container \"%s\": %s: larger than %d MiB",
                                       c->id, STATE_FILE, STATE_MAX_SIZE >> 20);
        if (r < 0)
                return psrun_error_errno(err, r, "container \"%s\": read %s", c->id, STATE_FILE);
        r = oci_state_parse(s, STATE_FILE, buf, len, err);
        if (r < 0)
                return psrun_error_prefix(err, "container \"%s\"", c->id);
        if (!streq(s->id, c->id)) {
                char bad[SHOWN_MAX];
                r = psrun_error_set(err, EBADMSG, "container \"%s\": %s is for id \"%s\" instead",
                                    c->id, STATE_FILE, shown(s->id, bad));
                oci_state_free(s);
                return r;
        }
        return 0;
}

/* When process pid started (field 22 of /proc/PID/stat), or 0 when it is
 * gone. With the pid, it names one process for as long as the pid lives. */
static unsigned long long process_start_time(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        /* The command name (field 2) may hold spaces and ')'. */
        const char *p = strrchr(buf, ')');
        for (int field = 2; p && *p && field < 22; p++)
                if (*p == ' ')
                        field++;
        return p ? strtoull(p, NULL, 10) : 0;
}

/* The inode of this process's pid namespace: pids name processes only
 * within one. */
static unsigned long long own_pid_namespace(void)
{
        struct stat st;
        return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long) st.st_ino : 0;
}

/* What a temporary directory's name says of its creator
 * (".new~NS-PID-START-RANDOM"): alive (1) or gone (0) when it names a
 * process of this pid namespace, nothing (-1) when it is of another form
 * or namespace. */
static int temp_dir_creator_alive(const char *name)
{
        unsigned long long ns, start;
        int pid, end = 0;
        unsigned rnd;
        if (sscanf(name, ".new~%llx-%d-%llu-%x%n", &ns, &pid, &start, &rnd, &end) != 4 ||
            name[end] != '\0' || pid <= 0 || ns == 0 || ns != own_pid_namespace())
                return -1;
        return process_start_time(pid) == start;
}

/* A name that no valid id can take ('~'), so it never collides with one;
 * it names its creator, so that a sweep can tell a dead create's directory
 * at once, and never takes a live one's (temp_dir_creator_alive). */
static int make_temp_dir(int root_fd, char *name, size_t size, psrun_error *err)
{
        unsigned long long ns = own_pid_namespace();
        unsigned long long start = process_start_time(getpid());
        for (int attempt = 0; attempt < 16; attempt++) {
                unsigned rnd;
                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = (unsigned) monotonic_ms() * 2654435761u ^ (unsigned) attempt;
                if (ns && start)
                        snprintf(name, size, ".new~%llx-%d-%llu-%08x", ns, (int) getpid(), start,
                                 rnd);
                else
                        snprintf(name, size, ".new~%08x%08x", (unsigned) getpid(), rnd);
                if (mkdirat(root_fd, name, 0700) == 0)
                        return 0;
                if (errno != EEXIST)
                        return psrun_error_errno(err, errno, "create a directory in the root");
        }
        return psrun_error_set(err, EEXIST, "create a directory in the root: all names taken");
}

static int remove_temp_dir(int root_fd, const char *name)
{
        _cleanup_close_ int fd =
                openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd >= 0)
                remove_entries(fd, NULL, REMOVE_MAX_DEPTH, NULL);
        return unlinkat(root_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* A live create locks its temporary directory within microseconds of
 * making it, and renames it within milliseconds; one without a lock file
 * this old is a dead create's when its name does not say whose it is. A
 * timestamp up to this far ahead of time() is a fine-grained one (Linux
 * 6.13's multigrain timestamps run ahead of the coarse clock time() reads),
 * not a clock that went back. */
#define TEMP_DIR_GRACE_S 10
#define TEMP_DIR_AHEAD_S 2

/* The directory's lock, taken without waiting: -1 when someone holds it.
 * A directory without a lock file (a create killed before it made one)
 * gets a stand-in fd >= 0 too (its own directory). */
static int try_lock_dir(int dir_fd)
{
        int fd = openat(dir_fd, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                       : -1;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static bool has_lock_file(int root_fd, const char *name)
{
        struct stat st;
        _cleanup_close_ int fd =
                openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd >= 0 && fstatat(fd, LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode);
}

int oci_root_sweep(struct oci_root *root, psrun_error *err)
{
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int removed = 0;
        int fd = openat(root->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return psrun_error_errno(err, errno, "sweep the root");
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return psrun_error_errno(err, errno, "sweep the root");
        }
        time_t now = time(NULL);
        while ((de = readdir(dir))) {
                bool temp = strncmp(de->d_name, ".new~", 5) == 0;
                /* A container directory with its lock but without
                 * state.json: a delete killed after removing the state. (An
                 * empty directory is left alone: it may be anyone's.) */
                bool half_deleted = !temp && oci_id_validate(de->d_name, NULL) >= 0 &&
                                    !is_container_dir(root->fd, de->d_name) &&
                                    has_lock_file(root->fd, de->d_name);
                if (!temp && !half_deleted)
                        continue;
                _cleanup_close_ int dfd = openat(root->fd, de->d_name,
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (dfd < 0 || fstat(dfd, &st) < 0)
                        continue;
                /* A lock file is seen only once it is held (create_held_lock):
                 * a free one is a dead create's, taken at once. Without one,
                 * the create may be alive between its mkdir and its lock:
                 * left alone while its name says its creator runs, or, for a
                 * name that says nothing, while it is recent. */
                if (temp && !has_lock_file(root->fd, de->d_name)) {
                        int alive = temp_dir_creator_alive(de->d_name);
                        bool recent = st.st_mtime > now - TEMP_DIR_GRACE_S &&
                                      st.st_mtime <= now + TEMP_DIR_AHEAD_S;
                        if (alive == 1 || (alive < 0 && recent))
                                continue;
                }
                /* Held while the directory goes, so no one takes it meanwhile. */
                _cleanup_close_ int lock = try_lock_dir(dfd);
                if (lock < 0)
                        continue;
                /* A create publishes its directory (renames it to its id)
                 * while it holds the lock, and may have done so between our
                 * open and our lock: then the directory we hold is a live
                 * container under its new name, not the temporary one we
                 * read. Only if the name still leads to it is it ours. */
                struct stat again;
                if (fstatat(root->fd, de->d_name, &again, AT_SYMLINK_NOFOLLOW) < 0 ||
                    again.st_ino != st.st_ino || again.st_dev != st.st_dev)
                        continue;
                if (temp || !is_container_dir(root->fd, de->d_name)) {
                        remove_entries(dfd, NULL, REMOVE_MAX_DEPTH, NULL);
                        if (unlinkat(root->fd, de->d_name, AT_REMOVEDIR) == 0)
                                removed++;
                }
        }
        return removed;
}

/* The lock file, made locked: created under another name, flocked, then
 * renamed into place (the lock goes with the open file). So a lock file
 * that can be seen is held, or its holder is dead, and a sweep may take a
 * temporary directory with a free lock at once (oci_root_sweep). Returns
 * the fd or -errno. */
#define LOCK_FILE_NEW LOCK_FILE "~"

static int create_held_lock(int dir_fd)
{
        int fd = openat(dir_fd, LOCK_FILE_NEW, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        if (fd < 0)
                return -errno;
        /* Nobody knows the directory yet: this cannot wait. */
        if (flock(fd, LOCK_EX | LOCK_NB) < 0 ||
            renameat(dir_fd, LOCK_FILE_NEW, dir_fd, LOCK_FILE) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* Fills the temporary directory, then renames it to id. */
static int build_and_publish(struct oci_container *c, const char *tmp,
                             const struct oci_state *initial, psrun_error *err)
{
        int root_fd = c->root->fd;
        int r;

        c->dir_fd = openat(root_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->dir_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open its directory", c->id);
        c->lock_fd = create_held_lock(c->dir_fd);
        if (c->lock_fd < 0)
                return psrun_error_errno(err, c->lock_fd, "container \"%s\": create its lock",
                                         c->id);
        c->lock_op = LOCK_EX;
        r = state_write_at(c->dir_fd, c->id, initial, err);
        if (r < 0)
                return r;
        if (renameat2(root_fd, tmp, root_fd, c->id, RENAME_NOREPLACE) < 0) {
                if (errno == EEXIST)
                        return psrun_error_set(err, EEXIST, "container \"%s\" already exists",
                                               c->id);
                if (errno == EINVAL)
                        return psrun_error_errno(err, errno,
                                                 "container \"%s\": the root's file system "
                                                 "lacks rename with RENAME_NOREPLACE",
                                                 c->id);
                return psrun_error_errno(err, errno, "container \"%s\": rename into place", c->id);
        }
        (void) fsync(root_fd);
        return 0;
}

int oci_container_create(struct oci_root *root, const char *id, const struct oci_state *initial,
                         struct oci_container **ret, psrun_error *err)
{
        struct oci_container *c;
        char tmp[96];
        int r = oci_id_validate(id, err);

        if (r < 0)
                return r;
        if (!initial)
                return psrun_error_set(err, EINVAL, "container \"%s\": no state given", id);
        c = container_new(root, id);
        if (!c)
                return psrun_error_errno(err, ENOMEM, "container \"%s\"", id);
        /* What killed creates and deletes left, this id's or another's. */
        (void) oci_root_sweep(root, NULL);
        r = make_temp_dir(root->fd, tmp, sizeof(tmp), err);
        if (r < 0) {
                container_free(c);
                return psrun_error_prefix(err, "container \"%s\"", id);
        }
        /* The worst moment to die: a directory with no lock yet. */
        fault_point("create:temp");
        r = build_and_publish(c, tmp, initial, err);
        if (r < 0) {
                container_free(c);
                remove_temp_dir(root->fd, tmp);
                return r;
        }
        *ret = c;
        return 0;
}

int oci_container_delete(struct oci_container *c, psrun_error *err)
{
        static const char *const keep[] = {STATE_FILE, LOCK_FILE, NULL};
        int r;

        if (c->deleted)
                return not_exist(err, c->id);
        if (c->lock_op == LOCK_SH)
                return psrun_error_set(err, ENOLCK,
                                       "container \"%s\": delete needs the exclusive lock, not "
                                       "the shared one",
                                       c->id);
        r = c->lock_op ? check_linked(c, err) : oci_container_lock(c, OCI_LOCK_EXCLUSIVE, err);
        if (r < 0)
                return r;
        r = remove_entries(c->dir_fd, keep, REMOVE_MAX_DEPTH, err);
        if (r < 0)
                return psrun_error_prefix(err, "container \"%s\": delete", c->id);
        /* Without state.json the container is gone; a failure before this
         * point leaves it whole enough to delete again. */
        if (unlinkat(c->dir_fd, STATE_FILE, 0) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": delete %s", c->id,
                                         STATE_FILE);
        c->deleted = true;
        if (unlinkat(c->dir_fd, LOCK_FILE, 0) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": delete %s", c->id,
                                         LOCK_FILE);
        /* ENOENT: a sweep took the emptied directory meanwhile. */
        if (unlinkat(c->root->fd, c->id, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": remove its directory",
                                         c->id);
        (void) fsync(c->root->fd);
        oci_container_unlock(c);
        return 0;
}

/* ---- the handshake FIFO ---- */

static int check_fifo_name(const struct oci_container *c, const char *name, psrun_error *err)
{
        char buf[SHOWN_MAX];

        if (!name || !*name || strchr(name, '/') || streq(name, ".") || streq(name, "..") ||
            strlen(name) > NAME_MAX || streq(name, STATE_FILE) || streq(name, STATE_TMP_FILE) ||
            streq(name, LOCK_FILE))
                return psrun_error_set(err, EINVAL, "container \"%s\": \"%s\" is not a FIFO name",
                                       c->id, shown(name ? name : "", buf));
        return 0;
}

int oci_container_make_fifo(struct oci_container *c, const char *name, psrun_error *err)
{
        int r = check_fifo_name(c, name, err);

        if (r < 0)
                return r;
        if (c->deleted)
                return not_exist(err, c->id);
        if (mkfifoat(c->dir_fd, name, 0600) < 0) {
                if (errno == EEXIST)
                        return psrun_error_set(err, EEXIST, "container \"%s\": %s already exists",
                                               c->id, name);
                return psrun_error_errno(err, errno, "container \"%s\": create %s", c->id, name);
        }
        /* The umask may have taken bits; the directory is ours and 0700, so
         * the name still refers to the FIFO we just made. */
        if (fchmodat(c->dir_fd, name, 0600, 0) < 0) {
                r = psrun_error_errno(err, errno, "container \"%s\": chmod %s", c->id, name);
                unlinkat(c->dir_fd, name, 0);
                return r;
        }
        return 0;
}

int oci_container_open_fifo(struct oci_container *c, const char *name, int flags, psrun_error *err)
{
        struct stat st;
        int r = check_fifo_name(c, name, err);

        if (r < 0)
                return r;
        _cleanup_close_ int fd = openat(c->dir_fd, name, flags | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT)
                return psrun_error_set(err, ENOENT, "container \"%s\": %s does not exist", c->id,
                                       name);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open %s", c->id, name);
        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "container \"%s\": %s", c->id, name);
        if (!S_ISFIFO(st.st_mode))
                return psrun_error_set(err, EINVAL, "container \"%s\": %s is not a FIFO", c->id,
                                       name);
        return TAKE_FD(fd);
}

int oci_container_fifo_path(const struct oci_container *c, const char *name, char *buf, size_t size)
{
        int n;

        if (check_fifo_name(c, name, NULL) < 0)
                return -EINVAL;
        n = snprintf(buf, size, "%s/%s/%s", c->root->path, c->id, name);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}
