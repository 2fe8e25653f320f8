/* SPDX-License-Identifier: MIT */
/*
 * An unprivileged user's image store (docs/rootless.md, "Images"): its
 * root under $XDG_DATA_HOME/psrun, checked to be the user's alone, and how
 * its layers are owned. With subordinate ids, a layer's uid N is the
 * range's start + N on the host, as the sandbox maps it: unpacking and
 * every removal of layer files run in a user namespace mapped onto the
 * range by newuidmap/newgidmap (so chown works there), the user's own id
 * mapped beside it for the store's own directories. Without subordinate
 * ids every file stays the user's, and the store says so.
 */
#include "runtime/image-rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/rootless.h"

int image_rootless_default_root(char *buf, size_t size, psrun_error *err)
{
        const char *data = getenv("XDG_DATA_HOME");
        int n;
        if (data && data[0] == '/') {
                n = snprintf(buf, size, "%s/psrun/images", data);
        } else {
                const char *home = getenv("HOME");
                if (!home || home[0] != '/') {
                        const struct passwd *pw = getpwuid(geteuid());
                        home = pw ? pw->pw_dir : NULL;
                }
                if (!home || home[0] != '/')
                        return psrun_error_set(err, ENOENT,
                                               "image: store: no $XDG_DATA_HOME nor home "
                                               "directory for this user: name one with --store "
                                               "or image_store");
                n = snprintf(buf, size, "%s/.local/share/psrun/images", home);
        }
        if (n < 0 || (size_t) n >= size)
                return psrun_error_set(err, ENAMETOOLONG, "image: store: path too long");
        return 0;
}

/* One directory on the way to the store: no one but the user (or root) may
 * change what it holds, unless it is sticky (/tmp), where no one else may
 * rename or remove the user's entries. */
static int check_ancestor(const char *path, const struct stat *st, const char *root,
                          psrun_error *err)
{
        if (st->st_uid != geteuid() && st->st_uid != 0)
                return psrun_error_set(err, EPERM,
                                       "image: store %s: %s belongs to uid %u, not to this user: "
                                       "a store must be on a path no one else controls",
                                       root, path, (unsigned) st->st_uid);
        if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
                return psrun_error_set(err, EPERM,
                                       "image: store %s: %s is writable by others: a store must "
                                       "be on a path no one else controls",
                                       root, path);
        return 0;
}

/* Every directory from / to dir (which exists), as they really are
 * (symlinks resolved), by check_ancestor. */
static int check_ancestors(const char *dir, const char *root, psrun_error *err)
{
        char buf[PATH_MAX];
        if (!realpath(dir, buf))
                return psrun_error_errno(err, errno, "image: store %s: %s", root, dir);
        for (;;) {
                struct stat st;
                const char *d = buf[0] ? buf : "/";
                if (stat(d, &st) < 0)
                        return psrun_error_errno(err, errno, "image: store %s: %s", root, d);
                int r = check_ancestor(d, &st, root, err);
                if (r < 0 || !buf[0])
                        return r;
                *strrchr(buf, '/') = '\0';
        }
}

int image_rootless_check_root(const char *root, psrun_error *err)
{
        char buf[PATH_MAX];
        size_t len = strlen(root);
        if (len >= sizeof(buf))
                return psrun_error_set(err, ENAMETOOLONG, "image: store %s: path too long", root);
        /* The deepest directory on the way that is there, and everything
         * above it, checked before anything is made. */
        memcpy(buf, root, len + 1);
        char *slash = strrchr(buf, '/');
        for (;;) {
                *slash = '\0';
                struct stat st;
                if (!buf[0] || lstat(buf, &st) == 0)
                        break;
                if (errno != ENOENT)
                        return psrun_error_errno(err, errno, "image: store %s: %s", root, buf);
                slash = strrchr(buf, '/');
        }
        int r = check_ancestors(buf[0] ? buf : "/", root, err);
        if (r < 0)
                return r;
        /* The parents the user lacks are made private (as XDG asks of
         * $XDG_DATA_HOME), then the store. */
        memcpy(buf, root, len + 1);
        for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                        return psrun_error_errno(err, errno, "image: store %s: %s", root, buf);
                *p = '/';
        }
        if (mkdir(root, 0700) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "image: store %s", root);
        struct stat st;
        if (lstat(root, &st) < 0)
                return psrun_error_errno(err, errno, "image: store %s", root);
        if (S_ISLNK(st.st_mode))
                return psrun_error_set(err, ELOOP,
                                       "image: store %s is a symlink: name the directory itself",
                                       root);
        if (!S_ISDIR(st.st_mode))
                return psrun_error_set(err, ENOTDIR, "image: store %s is not a directory", root);
        if (st.st_uid != geteuid())
                return psrun_error_set(err, EPERM,
                                       "image: store %s belongs to uid %u, not to this user (uid "
                                       "%u): a user's store is that user's alone",
                                       root, (unsigned) st.st_uid, (unsigned) geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return psrun_error_set(err, EPERM,
                                       "image: store %s is writable by group or others (mode "
                                       "%04o): chmod 700 it",
                                       root, (unsigned) (st.st_mode & 07777));
        return 0;
}

int image_rootless_init(struct image_rootless *rl, psrun_error *err)
{
        *rl = (struct image_rootless){.uid = geteuid(), .gid = getegid()};
        struct subid_range u, g;
        int r = rootless_subids(&u, &g, err);
        if (r < 0)
                return r;
        if (r == 0) {
                snprintf(rl->owners, sizeof(rl->owners), "one id %u", (unsigned) rl->uid);
                return 0;
        }
        rl->subids = true;
        rl->count = u.count < g.count ? (uint32_t) u.count : (uint32_t) g.count;
        /* The range at 0..count-1, as the sandbox maps it; the user's own
         * id after it, for the store's directories (tmp/, layers/). */
        snprintf(rl->uid_map, sizeof(rl->uid_map), "0 %llu %u\n%u %u 1\n",
                 (unsigned long long) u.start, rl->count, rl->count, (unsigned) rl->uid);
        snprintf(rl->gid_map, sizeof(rl->gid_map), "0 %llu %u\n%u %u 1\n",
                 (unsigned long long) g.start, rl->count, rl->count, (unsigned) rl->gid);
        snprintf(rl->owners, sizeof(rl->owners), "subordinate ids %llu %llu",
                 (unsigned long long) u.start, (unsigned long long) g.start);
        return 0;
}

void image_rootless_limits(const struct image_rootless *rl, struct unpack_limits *lim)
{
        lim->unprivileged = true;
        lim->uid_shift = lim->gid_shift = 0;
        /* In the namespace the image's ids are the namespace's own. */
        lim->id_count = rl->subids ? rl->count : 0;
        lim->keep_owner = !rl->subids;
}

static int send_all(int fd, const void *p, size_t n)
{
        return write_all(fd, p, n);
}

/* Exactly n bytes; the peer gone first is -EPIPE. */
static int recv_all(int fd, void *p, size_t n)
{
        for (size_t got = 0; got < n;) {
                ssize_t k = read(fd, (char *) p + got, n - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EPIPE;
                got += (size_t) k;
        }
        return 0;
}

/* The forked helper: a user namespace of its own, then fn once its maps
 * are written (by the parent's newuidmap, or, with one id, by itself); its
 * result and error back on the socket. */
static _Noreturn void helper(int sock, const struct image_rootless *rl, image_store_fn fn,
                             void *arg)
{
        psrun_error e = {0};
        int r = unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
        if (r >= 0 && !rl->subids) {
                /* One id: the user as the namespace's 0, written by the
                 * user itself (the kernel wants setgroups denied first). */
                char map[32];
                snprintf(map, sizeof(map), "0 %u 1\n", (unsigned) rl->uid);
                r = write_proc_file(getpid(), "setgroups", "deny");
                if (r >= 0)
                        r = write_proc_file(getpid(), "uid_map", map);
                snprintf(map, sizeof(map), "0 %u 1\n", (unsigned) rl->gid);
                if (r >= 0)
                        r = write_proc_file(getpid(), "gid_map", map);
        }
        char c = r < 0 ? 'x' : 'u';
        if (send_all(sock, &c, 1) < 0 || r < 0)
                _exit(1);
        if (recv_all(sock, &c, 1) < 0 || c != 'g')
                _exit(1);
        r = fn(arg, &e);
        if (r < 0 && !e.msg[0])
                psrun_error_errno(&e, r, "image");
        if (send_all(sock, &r, sizeof(r)) < 0 || send_all(sock, &e, sizeof(e)) < 0)
                _exit(1);
        _exit(0);
}

int image_rootless_run(void *ctx, image_store_fn fn, void *arg, psrun_error *err)
{
        const struct image_rootless *rl = ctx;
        return rl->subids ? image_rootless_run_ns(rl, fn, arg, err) : fn(arg, err);
}

int image_rootless_run_ns(const struct image_rootless *rl, image_store_fn fn, void *arg,
                          psrun_error *err)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return psrun_error_errno(err, errno, "image: socketpair");
        /* fork, not clone: glibc leaves malloc usable in the child of a
         * multi-threaded embedder, and fn allocates. */
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(sv[0]);
                close(sv[1]);
                return psrun_error_errno(err, e, "image: fork");
        }
        if (pid == 0) {
                close(sv[0]);
                helper(sv[1], rl, fn, arg);
        }
        close(sv[1]);
        char c = 0;
        int r = recv_all(sv[0], &c, 1);
        if (r < 0 || c != 'u')
                r = psrun_error_errno(err, c == 'x' ? EPERM : EPIPE,
                                      "image: a user namespace for the store's layers");
        if (r >= 0 && rl->subids)
                r = idmap_apply_maps(pid, rl->uid_map, rl->gid_map, err);
        if (r >= 0) {
                c = 'g';
                int rr = 0;
                psrun_error e = {0};
                if (send_all(sv[0], &c, 1) < 0 || recv_all(sv[0], &rr, sizeof(rr)) < 0 ||
                    recv_all(sv[0], &e, sizeof(e)) < 0) {
                        r = psrun_error_set(err, EPIPE,
                                            "image: the store's user-namespace helper died");
                } else {
                        r = rr;
                        if (r < 0) {
                                e.msg[sizeof(e.msg) - 1] = '\0';
                                *err = e;
                        }
                }
        }
        close(sv[0]);
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return r;
}
