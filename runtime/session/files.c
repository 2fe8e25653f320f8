/* SPDX-License-Identifier: MIT */
/*
 * Host-side files of a session's /workspace (psrun_write_file, _read_file,
 * _list_files, _remove). The supervisor hands us an O_PATH fd of the
 * workspace's root (opened before any sandboxed code ran); every path is
 * resolved from it with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS),
 * so `..`, absolute symlinks and /proc magic links planted by the sandbox
 * all stay inside the workspace. The last component is never followed when
 * something is created, replaced or removed (renameat/unlinkat act on the
 * name itself), and nothing but a regular file is ever opened for reading:
 * O_PATH first, fstat, then a reopen of that very inode.
 *
 * Writes are not done here: the bytes go to the supervisor's file writer
 * (supervisor-files.c), a process in the session's cgroup, so that the
 * workspace's pages are charged to the sandbox's memory_limit as if the
 * sandbox had written them, not to the caller's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/session/session.h"
#include "runtime/session/workspace.h"

#define LIST_MAX_DEPTH    64
#define RESOLVE_WORKSPACE (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
/* Up to this much goes in the request itself; more in a memfd. */
#define WRITE_INLINE_MAX SESS_WRITE_INLINE_MAX

static int ws_open(psrun_session *s, struct ws *w, psrun_error *err)
{
        if (!s)
                return psrun_error_set(err, EINVAL, "session: no session given");
        struct sess_req req = {.op = SESS_OP_WORKSPACE};
        struct sess_reply rep;
        int fd = -1;
        int r = session_call(session_dir(s), &req, NULL, 0, NULL, 0, &rep, &fd, NULL, err);
        if (r < 0)
                return r;
        if (fd < 0)
                return psrun_error_set(err, EPROTO, "session: no workspace fd in the reply");
        *w = (struct ws){.fd = fd,
                         .uid = rep.uid,
                         .gid = rep.gid,
                         .disk_limit = rep.disk_limit,
                         .remote = rep.files_remote != 0};
        return 0;
}

static void ws_close(struct ws *w)
{
        w->fd = safe_close(w->fd);
}

/* Create and remove as the sandbox's user: the workspace's file system
 * belongs to the sandbox's user namespace, where our own uid has no
 * mapping (the kernel refuses to create files for it), and what we create
 * is the sandbox user's by construction. fsuid/fsgid are per thread (the
 * raw syscalls, which glibc's wrappers are) and drop the file-system
 * capabilities while they are not 0: other threads are not affected. */
struct ws_fsids ws_become_user(const struct ws *w)
{
        struct ws_fsids old;
        old.gid = setfsgid(w->gid);
        old.uid = setfsuid(w->uid);
        return old;
}

void ws_restore_ids(struct ws_fsids old)
{
        (void) setfsuid((uid_t) old.uid);
        (void) setfsgid((gid_t) old.gid);
}

int ws_relative(const char *field, const char *path, const char **rel, psrun_error *err)
{
        if (!path || !path[0])
                return psrun_error_set(err, EINVAL, "%s: empty path", field);
        if (path[0] != '/') {
                *rel = path;
                return 0;
        }
        size_t n = strlen(WORKSPACE);
        if (strncmp(path, WORKSPACE, n) == 0 && (path[n] == '\0' || path[n] == '/')) {
                const char *p = path + n;
                while (*p == '/')
                        p++;
                *rel = *p ? p : ".";
                return 0;
        }
        return psrun_error_set(err, EPERM, "%s: `%s` is outside " WORKSPACE, field, path);
}

/* The workspace, and path (field, for the message) relative to it. */
static int ws_open_path(psrun_session *s, const char *field, const char *path, struct ws *w,
                        const char **rel, psrun_error *err)
{
        int r = ws_relative(field, path, rel, err);
        return r < 0 ? r : ws_open(s, w, err);
}

int ws_resolve(const struct ws *w, const char *rel, uint64_t flags, mode_t mode)
{
        struct open_how how = {
                .flags = flags | O_CLOEXEC, .mode = mode, .resolve = RESOLVE_WORKSPACE};
        int fd = (int) syscall(SYS_openat2, w->fd, rel, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

int ws_open_parent(const struct ws *w, const char *field, const char *path, const char *rel,
                   bool create, int *dir_fd, char name[NAME_MAX + 1], psrun_error *err)
{
        size_t len = strlen(rel);
        while (len > 1 && rel[len - 1] == '/')
                len--;
        if (len >= PATH_MAX)
                return psrun_error_set(err, ENAMETOOLONG, "%s: path too long", field);
        char buf[PATH_MAX];
        memcpy(buf, rel, len);
        buf[len] = '\0';
        char *slash = strrchr(buf, '/');
        const char *last = slash ? slash + 1 : buf;
        if (!last[0] || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
                return psrun_error_set(err, EINVAL, "%s: `%s` does not name a file", field, path);
        if (strlen(last) > NAME_MAX)
                return psrun_error_set(err, ENAMETOOLONG, "%s: a name in `%s` is too long", field,
                                       path);
        snprintf(name, NAME_MAX + 1, "%s", last);
        const char *parent = ".";
        if (slash) {
                *slash = '\0';
                parent = buf[0] ? buf : ".";
        }
        int fd = ws_resolve(w, parent, O_PATH | O_DIRECTORY, 0);
        if (fd == -ENOENT && create) {
                /* Create the missing parents one by one, each owned by the
                 * sandbox's user, each resolved in the workspace again. */
                char partial[PATH_MAX];
                size_t plen = strlen(parent);
                memcpy(partial, parent, plen + 1);
                for (size_t i = 0; i <= plen; i++) {
                        if (partial[i] != '/' && partial[i] != '\0')
                                continue;
                        char saved = partial[i];
                        partial[i] = '\0';
                        if (i > 0 && partial[i - 1] != '/') {
                                char *cut = strrchr(partial, '/');
                                const char *comp = cut ? cut + 1 : partial;
                                _cleanup_close_ int up = -1;
                                if (cut) {
                                        *cut = '\0';
                                        up = ws_resolve(w, partial[0] ? partial : ".",
                                                        O_PATH | O_DIRECTORY, 0);
                                        *cut = '/';
                                } else {
                                        up = ws_resolve(w, ".", O_PATH | O_DIRECTORY, 0);
                                }
                                if (up < 0)
                                        return psrun_error_errno(err, up, "%s: `%s`", field, path);
                                if (strcmp(comp, "..") != 0 && strcmp(comp, ".") != 0) {
                                        if (mkdirat(up, comp, 0755) < 0 && errno != EEXIST)
                                                return psrun_error_errno(err, errno,
                                                                         "%s: create the "
                                                                         "directories of `%s`",
                                                                         field, path);
                                }
                        }
                        partial[i] = saved;
                }
                fd = ws_resolve(w, parent, O_PATH | O_DIRECTORY, 0);
        }
        if (fd < 0)
                return psrun_error_errno(err, fd, "%s: `%s`", field, path);
        *dir_fd = fd;
        return 0;
}

PSRUN_PUBLIC int psrun_write_file_opts(psrun_session *s, const char *path, const void *data,
                                       size_t len, unsigned mode, const psrun_write_options *o,
                                       psrun_error *err)
{
        const char *rel;
        int r = ws_relative("path", path, &rel, err);
        if (r < 0)
                return r;
        if (!s)
                return psrun_error_set(err, EINVAL, "session: no session given");
        if (!data && len)
                return psrun_error_set(err, EINVAL, "write_file: no data given");
        size_t path_len = strlen(path);
        if (path_len >= PATH_MAX)
                return psrun_error_set(err, ENAMETOOLONG, "path: too long");
        struct sess_req req = {
                .op = SESS_OP_WRITE,
                .mode = mode & 0777,
                .path_len = (uint32_t) path_len,
                .data_len = (uint64_t) len,
        };
        bool inline_data = len <= WRITE_INLINE_MAX;
        size_t payload_len = path_len + 1 + (inline_data ? len : 0);
        _cleanup_free_ char *payload = malloc(payload_len);
        if (!payload)
                return psrun_error_errno(err, ENOMEM, "write_file");
        memcpy(payload, path, path_len + 1);
        if (inline_data && len)
                memcpy(payload + path_len + 1, data, len);
        /* More goes in a memfd: the request stays one small message, and
         * the writer reads the bytes from its mapping. */
        _cleanup_close_ int memfd = -1;
        if (!inline_data) {
                memfd = memfd_create("psrun-write", MFD_CLOEXEC);
                if (memfd < 0)
                        return psrun_error_errno(err, errno, "write_file: memfd_create");
                r = write_all(memfd, data, len);
                if (r < 0)
                        return psrun_error_errno(err, r, "write_file: %zu bytes into a memfd", len);
        }
        struct sess_reply rep;
        if (o && o->cancel)
                return session_call_cancellable(session_dir(s), &req, payload, payload_len,
                                                memfd >= 0 ? &memfd : NULL, memfd >= 0 ? 1 : 0,
                                                &rep, o->cancel, "write_file", err);
        return session_call(session_dir(s), &req, payload, payload_len, memfd >= 0 ? &memfd : NULL,
                            memfd >= 0 ? 1 : 0, &rep, NULL, NULL, err);
}

PSRUN_PUBLIC int psrun_write_file(psrun_session *s, const char *path, const void *data, size_t len,
                                  unsigned mode, psrun_error *err)
{
        return psrun_write_file_opts(s, path, data, len, mode, NULL, err);
}

/*
 * A large buffer is fresh memory: the copy into it would take a fault per
 * page. Populated in one call instead (the kernel still zeroes it), a 100
 * MiB read is 10-15% faster here. Best effort: older kernels say EINVAL,
 * and the copy then faults the pages in as before.
 */
static void prefault(char *buf, size_t len)
{
#ifdef MADV_POPULATE_WRITE
        const uintptr_t page = 4096;
        if (len < (1U << 20))
                return;
        uintptr_t start = ((uintptr_t) buf + page - 1) & ~(page - 1);
        uintptr_t end = ((uintptr_t) buf + len) & ~(page - 1);
        if (end > start)
                (void) madvise((void *) start, end - start, MADV_POPULATE_WRITE);
#else
        (void) buf;
        (void) len;
#endif
}

int ws_open_regular(const struct ws *w, const char *path, const char *rel, int *ret,
                    psrun_error *err)
{
        /* O_PATH never opens the object itself: a FIFO cannot block us and
         * a device is never opened. Only a regular file is reopened. */
        _cleanup_close_ int opath = ws_resolve(w, rel, O_PATH, 0);
        if (opath < 0)
                return psrun_error_errno(err, opath, "path: `%s`", path);
        struct stat st;
        if (fstat(opath, &st) < 0)
                return psrun_error_errno(err, errno, "path: `%s`", path);
        if (!S_ISREG(st.st_mode))
                return psrun_error_set(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                                       "path: `%s` is not a regular file", path);
        char self[64];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", opath);
        _cleanup_close_ int fd = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "path: `%s`", path);
        struct stat again;
        if (fstat(fd, &again) < 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev)
                return psrun_error_set(err, EAGAIN, "path: `%s` changed while opened", path);
        *ret = TAKE_FD(fd);
        return 0;
}

/*
 * A rootless session's file operations are the supervisor's (its file
 * writer's, in the sandbox's user namespace): the workspace's files are
 * owned by the user's subordinate ids, which the caller's own uid may not
 * read, list or remove, and no permission is widened for it. One request:
 * op on path, what the reply carries (its fd, and for a listing how many
 * entries and whether truncated).
 */
static int remote_call(psrun_session *s, uint32_t op, const char *path, struct sess_req *extra,
                       int *fd, struct sess_reply *rep_out, psrun_error *err)
{
        size_t path_len = strlen(path);
        if (path_len >= PATH_MAX)
                return psrun_error_set(err, ENAMETOOLONG, "path: too long");
        struct sess_req req = extra ? *extra : (struct sess_req){0};
        req.op = op;
        req.path_len = (uint32_t) path_len;
        struct sess_reply rep;
        int r = session_call(session_dir(s), &req, path, path_len + 1, NULL, 0, &rep, fd, NULL,
                             err);
        if (r >= 0 && rep_out)
                *rep_out = rep;
        return r;
}

PSRUN_PUBLIC int psrun_read_file(psrun_session *s, const char *path, uint64_t offset,
                                 size_t max_bytes, psrun_file_data *out, psrun_error *err)
{
        if (!out)
                return psrun_error_set(err, EINVAL, "read_file: no result given");
        memset(out, 0, sizeof(*out));
        const char *rel;
        struct ws w;
        int r = ws_open_path(s, "path", path, &w, &rel, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = -1;
        if (w.remote) {
                ws_close(&w);
                r = remote_call(s, SESS_OP_READ, path, NULL, &fd, NULL, err);
                if (r >= 0 && fd < 0)
                        r = psrun_error_set(err, EPROTO, "read_file: no fd in the reply");
        } else {
                r = ws_open_regular(&w, path, rel, &fd, err);
                ws_close(&w);
        }
        if (r < 0)
                return r;
        struct stat again;
        if (fstat(fd, &again) < 0 || !S_ISREG(again.st_mode))
                return psrun_error_set(err, EAGAIN, "path: `%s` changed while opened", path);
        uint64_t size = (uint64_t) again.st_size;
        uint64_t avail = offset < size ? size - offset : 0;
        /* "All of it" is bounded: the size is the sandbox's to choose (a
         * sparse file costs it no disk), and this buffer is the caller's
         * memory. Past the bound the caller says how much it wants. */
        if (!max_bytes && avail > PSRUN_READ_ALL_MAX)
                return psrun_error_set(err, EFBIG,
                                       "path: `%s` has %llu bytes from offset %llu, more than the "
                                       "%u MiB a read of all of it returns: read it in parts "
                                       "(offset, max_bytes)",
                                       path, (unsigned long long) avail,
                                       (unsigned long long) offset, PSRUN_READ_ALL_MAX >> 20);
        size_t want = max_bytes && max_bytes < avail ? max_bytes : (size_t) avail;
        if ((uint64_t) want != (max_bytes && max_bytes < avail ? max_bytes : avail))
                return psrun_error_set(err, EFBIG, "path: `%s` is too large to read at once", path);
        char *buf = malloc(want + 1);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "read_file");
        prefault(buf, want);
        size_t got = 0;
        while (got < want) {
                ssize_t n = pread(fd, buf + got, want - got, (off_t) (offset + got));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        free(buf);
                        return psrun_error_errno(err, r, "path: `%s`", path);
                }
                if (n == 0)
                        break;
                got += (size_t) n;
        }
        buf[got] = '\0';
        out->data = buf;
        out->len = got;
        out->size = size;
        out->truncated = offset + got < size;
        return 0;
}

static const char *type_name(mode_t m)
{
        static const struct {
                mode_t type;
                const char *name;
        } types[] = {
                {S_IFREG, "file"},    {S_IFDIR, "dir"},  {S_IFLNK, "symlink"}, {S_IFIFO, "fifo"},
                {S_IFSOCK, "socket"}, {S_IFCHR, "char"}, {S_IFBLK, "block"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(types); i++)
                if ((m & S_IFMT) == types[i].type)
                        return types[i].name;
        return "other";
}

struct listing {
        psrun_file_entry *e;
        size_t n, cap;
        size_t bytes;                  /* of names, NULs included */
        size_t max_entries, max_bytes; /* the caller's bounds */
        bool truncated;
};

/* Every name is the entry's whole path below the listed directory, so a
 * deep tree of long names is the sandbox's way to make a listing large:
 * it is bounded in bytes as well as in entries. Reaching a bound ends the
 * walk; what was read so far is the listing, marked truncated. */
static bool listing_full(struct listing *l, size_t name_len)
{
        if (l->n < l->max_entries && l->bytes + name_len + 1 <= l->max_bytes)
                return false;
        l->truncated = true;
        return true;
}

static int list_dir(int dir_fd, const char *prefix, bool recursive, int depth, struct listing *l)
{
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        size_t prefix_len = strlen(prefix);
        int r = 0;
        struct dirent *de;
        while (r >= 0 && !l->truncated && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* gone meanwhile */
                size_t name_len = prefix_len + strlen(de->d_name);
                if (listing_full(l, name_len))
                        break;
                if (l->n == l->cap) {
                        size_t cap = l->cap ? 2 * l->cap : 64;
                        psrun_file_entry *grown = realloc(l->e, cap * sizeof(*grown));
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        l->e = grown;
                        l->cap = cap;
                }
                psrun_file_entry *e = &l->e[l->n];
                if (asprintf(&e->name, "%s%s", prefix, de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                e->type = type_name(st.st_mode);
                e->size = (uint64_t) st.st_size;
                e->mode = st.st_mode & 07777;
                e->mtime = (int64_t) st.st_mtime;
                l->n++;
                l->bytes += name_len + 1;
                if (recursive && S_ISDIR(st.st_mode) && depth < LIST_MAX_DEPTH) {
                        /* One component, O_NOFOLLOW: a directory swapped for
                         * a symlink meanwhile is not entered. */
                        _cleanup_close_ int sub =
                                openat(dirfd(d), de->d_name,
                                       O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        _cleanup_free_ char *p = NULL;
                        if (sub < 0)
                                continue;
                        if (asprintf(&p, "%s/", e->name) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        r = list_dir(sub, p, recursive, depth + 1, l);
                }
        }
        closedir(d);
        return r;
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const psrun_file_entry *) a)->name, ((const psrun_file_entry *) b)->name);
}

PSRUN_PUBLIC void psrun_file_entries_free(psrun_file_entry *e, size_t n)
{
        for (size_t i = 0; e && i < n; i++)
                free(e[i].name);
        free(e);
}

PSRUN_PUBLIC void psrun_listing_free(psrun_listing *l)
{
        if (!l)
                return;
        psrun_file_entries_free(l->entries, l->n);
        *l = (psrun_listing){0};
}

PSRUN_PUBLIC int psrun_list_dir(psrun_session *s, const char *dir, const psrun_list_options *o,
                                psrun_listing *out, psrun_error *err)
{
        static const psrun_list_options defaults = {0};
        if (!out)
                return psrun_error_set(err, EINVAL, "list_files: no result given");
        *out = (psrun_listing){0};
        if (!o)
                o = &defaults;
        if (o->max_entries > PSRUN_LIST_MAX_ENTRIES)
                return psrun_error_set(err, EINVAL, "max_entries: %zu is more than %d",
                                       o->max_entries, PSRUN_LIST_MAX_ENTRIES);
        if (o->max_bytes > PSRUN_LIST_MAX_BYTES)
                return psrun_error_set(err, EINVAL, "max_bytes: %zu is more than %d", o->max_bytes,
                                       PSRUN_LIST_MAX_BYTES);
        const char *shown = dir ? dir : WORKSPACE;
        const char *rel;
        struct ws w;
        int r = ws_open_path(s, "dir", shown, &w, &rel, err);
        if (r < 0)
                return r;
        size_t max_entries = o->max_entries ? o->max_entries : PSRUN_LIST_MAX_ENTRIES;
        size_t max_bytes = o->max_bytes ? o->max_bytes : PSRUN_LIST_MAX_BYTES;
        if (!w.remote) {
                r = ws_list(&w, shown, rel, o->recursive != 0, max_entries, max_bytes, out, err);
                ws_close(&w);
                return r;
        }
        ws_close(&w);
        struct sess_req req = {.flags = o->recursive ? SESS_REQ_RECURSIVE : 0,
                               .max = max_entries,
                               .offset = max_bytes};
        struct sess_reply rep;
        _cleanup_close_ int fd = -1;
        r = remote_call(s, SESS_OP_LIST, shown, &req, &fd, &rep, err);
        if (r < 0)
                return r;
        if (fd < 0)
                return psrun_error_set(err, EPROTO, "list_files: no listing in the reply");
        return ws_listing_read(fd, rep.list_n, rep.list_truncated != 0, max_entries, max_bytes, out,
                               err);
}

int ws_list(const struct ws *w, const char *shown, const char *rel, bool recursive,
            size_t max_entries, size_t max_bytes, psrun_listing *out, psrun_error *err)
{
        _cleanup_close_ int fd = ws_resolve(w, rel, O_PATH | O_DIRECTORY, 0);
        if (fd < 0)
                return psrun_error_errno(err, fd, "dir: `%s`", shown);
        struct listing l = {.max_entries = max_entries, .max_bytes = max_bytes};
        int r = list_dir(fd, "", recursive, 0, &l);
        if (r < 0) {
                psrun_file_entries_free(l.e, l.n);
                return psrun_error_errno(err, r, "dir: `%s`", shown);
        }
        if (l.n)
                qsort(l.e, l.n, sizeof(*l.e), cmp_entry);
        *out = (psrun_listing){.entries = l.e, .n = l.n, .truncated = l.truncated};
        return 0;
}

/* A listing in a memfd, from the writer to the client: per entry its
 * fixed part, then the name's bytes (no NUL). */
struct ws_wire_entry {
        uint32_t name_len, mode;
        uint64_t size;
        int64_t mtime;
        char type[8];
};

int ws_listing_write(const psrun_listing *l, int *ret, psrun_error *err)
{
        _cleanup_close_ int fd = memfd_create("psrun-listing", MFD_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "list_files: memfd_create");
        for (size_t i = 0; i < l->n; i++) {
                const psrun_file_entry *e = &l->entries[i];
                struct ws_wire_entry we = {.name_len = (uint32_t) strlen(e->name),
                                           .mode = e->mode,
                                           .size = e->size,
                                           .mtime = e->mtime};
                snprintf(we.type, sizeof(we.type), "%s", e->type);
                int r = write_all(fd, (const char *) &we, sizeof(we));
                if (r >= 0)
                        r = write_all(fd, e->name, we.name_len);
                if (r < 0)
                        return psrun_error_errno(err, r, "list_files: the listing");
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return psrun_error_errno(err, errno, "list_files: the listing");
        *ret = TAKE_FD(fd);
        return 0;
}

/* The type names entries point to (static strings, as type_name's). */
static const char *wire_type(const char *t)
{
        static const char *const names[] = {"file",   "dir",  "symlink", "fifo",
                                            "socket", "char", "block",   "other"};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(t, names[i]) == 0)
                        return names[i];
        return "other";
}

int ws_listing_read(int fd, uint64_t n, bool truncated, size_t max_entries, size_t max_bytes,
                    psrun_listing *out, psrun_error *err)
{
        /* The supervisor's: still bounded by what the caller asked. */
        if (n > max_entries)
                return psrun_error_set(err, EPROTO, "list_files: %llu entries in the reply",
                                       (unsigned long long) n);
        psrun_file_entry *e = n ? calloc((size_t) n, sizeof(*e)) : NULL;
        if (n && !e)
                return psrun_error_errno(err, ENOMEM, "list_files");
        _cleanup_fclose_ FILE *f = fdopen(dup(fd), "re");
        size_t bytes = 0, i = 0;
        int r = f ? 0 : -errno;
        for (; r >= 0 && i < n; i++) {
                struct ws_wire_entry we;
                if (fread(&we, sizeof(we), 1, f) != 1 || we.name_len > PATH_MAX ||
                    (bytes += we.name_len + 1) > max_bytes ||
                    !(e[i].name = malloc(we.name_len + 1)) ||
                    fread(e[i].name, 1, we.name_len, f) != we.name_len) {
                        r = -EPROTO;
                        break;
                }
                e[i].name[we.name_len] = '\0';
                we.type[sizeof(we.type) - 1] = '\0';
                e[i].type = wire_type(we.type);
                e[i].mode = we.mode;
                e[i].size = we.size;
                e[i].mtime = we.mtime;
        }
        if (r < 0) {
                psrun_file_entries_free(e, n);
                return psrun_error_errno(err, r, "list_files: a malformed listing in the reply");
        }
        *out = (psrun_listing){.entries = e, .n = (size_t) n, .truncated = truncated};
        return 0;
}

PSRUN_PUBLIC int psrun_list_files(psrun_session *s, const char *dir, int recursive,
                                  psrun_file_entry **entries, size_t *n, psrun_error *err)
{
        if (!entries || !n)
                return psrun_error_set(err, EINVAL, "list_files: no result given");
        *entries = NULL;
        *n = 0;
        psrun_listing l;
        int r = psrun_list_dir(s, dir, &(psrun_list_options){.recursive = recursive}, &l, err);
        if (r < 0)
                return r;
        /* This call has no way to say "truncated": it fails instead. */
        if (l.truncated) {
                psrun_listing_free(&l);
                return psrun_error_set(
                        err, E2BIG,
                        "dir: more than %d entries or %d MiB of names (psrun_list_dir "
                        "returns a truncated listing)",
                        PSRUN_LIST_MAX_ENTRIES, PSRUN_LIST_MAX_BYTES >> 20);
        }
        *entries = l.entries;
        *n = l.n;
        return 0;
}

/* Remove name in dir_fd, a directory's contents first; never follows a
 * symlink (unlinkat acts on the link, subdirectories are opened with
 * O_NOFOLLOW one component at a time). */
static int remove_at(int dir_fd, const char *name, int depth)
{
        if (unlinkat(dir_fd, name, 0) == 0)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        if (depth > LIST_MAX_DEPTH * 4)
                return -ELOOP;
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        r = remove_at(dirfd(d), de->d_name, depth + 1);
        closedir(d);
        if (r < 0)
                return r;
        return unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int ws_remove(const struct ws *w, const char *path, const char *rel, psrun_error *err)
{
        _cleanup_close_ int dir = -1;
        char name[NAME_MAX + 1];
        int r = ws_open_parent(w, "path", path, rel, false, &dir, name, err);
        if (r < 0)
                return r;
        _cleanup_close_ int rdir = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rdir < 0)
                return psrun_error_errno(err, errno, "path: `%s`", path);
        struct ws_fsids ids = ws_become_user(w);
        r = remove_at(rdir, name, 0);
        ws_restore_ids(ids);
        if (r < 0)
                return psrun_error_errno(err, r, "path: `%s`", path);
        return 0;
}

PSRUN_PUBLIC int psrun_remove(psrun_session *s, const char *path, psrun_error *err)
{
        const char *rel;
        struct ws w;
        int r = ws_open_path(s, "path", path, &w, &rel, err);
        if (r < 0)
                return r;
        if (w.remote) {
                ws_close(&w);
                return remote_call(s, SESS_OP_REMOVE, path, NULL, NULL, NULL, err);
        }
        r = ws_remove(&w, path, rel, err);
        ws_close(&w);
        return r;
}
