/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared by the OCI state directory tests (test_oci_state*.c): the fixture
 * (every test gets its own temporary directory; the suites' fini removes it
 * even after a failed assertion) and the helpers. Each file declares its own
 * suite with .init = setup, .fini = teardown.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/oci/state.h"

#include "lib/testlib.h"

/* ---- fixture ---- */

static char tmp_dir[PATH_MAX];
static char root_path[PATH_MAX];

static inline void setup(void)
{
        test_tmp_template(tmp_dir, sizeof(tmp_dir), "psrun-oci-state");
        cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
        snprintf(root_path, sizeof(root_path), "%s/root", tmp_dir);
}

static inline int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        if (flag == FTW_DP)
                chmod(path, 0700);
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static inline void teardown(void)
{
        /* Parents first get their permissions back, so nothing stays behind. */
        chmod(tmp_dir, 0700);
        nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline struct oci_root *open_root(void)
{
        struct oci_root *root = NULL;
        psrun_error err = {0};
        int r = oci_root_open(root_path, &root, &err);

        cr_assert_eq(r, 0, "oci_root_open: %s", err.msg);
        return root;
}

static inline void make_state(struct oci_state *s, const char *id)
{
        psrun_error err = {0};

        cr_assert_eq(oci_state_init(s, id, "/bundles/b", &err), 0, "%s", err.msg);
}

static inline struct oci_container *create(struct oci_root *root, const char *id)
{
        _cleanup_(oci_state_free) struct oci_state s = {0};
        struct oci_container *c = NULL;
        psrun_error err = {0};

        make_state(&s, id);
        cr_assert_eq(oci_container_create(root, id, &s, &c, &err), 0, "create %s: %s", id, err.msg);
        return c;
}

static inline struct oci_container *open_container(struct oci_root *root, const char *id)
{
        struct oci_container *c = NULL;
        psrun_error err = {0};

        cr_assert_eq(oci_container_open(root, id, &c, &err), 0, "open %s: %s", id, err.msg);
        return c;
}

/* The names in a directory other than . and .., sorted, joined by ' '. */
static inline void dir_names(int dir_fd, char *buf, size_t size)
{
        _cleanup_strv_free_ char **names = calloc(64, sizeof(char *));
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        size_t n = 0, o = 0;
        struct dirent *de;

        cr_assert_not_null(d);
        while ((de = readdir(d)) && n < 63)
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        names[n++] = strdup(de->d_name);
        closedir(d);
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++)
                        if (strcmp(names[i], names[j]) > 0) {
                                char *t = names[i];
                                names[i] = names[j];
                                names[j] = t;
                        }
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++)
                o += (size_t) snprintf(buf + o, size - o, "%s%s", i ? " " : "", names[i]);
}

static inline void assert_root_holds(struct oci_root *root, const char *expected)
{
        char names[1024];

        dir_names(oci_root_fd(root), names, sizeof(names));
        cr_assert_str_eq(names, expected);
}

static inline void write_at(int dir_fd, const char *name, const char *text, size_t len)
{
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
        cr_assert_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
}

static inline char *read_at(int dir_fd, const char *name)
{
        static char buf[65536];
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
        n = read(fd, buf, sizeof(buf) - 1);
        cr_assert_geq(n, 0);
        buf[n] = '\0';
        close(fd);
        return buf;
}

static inline bool exists_at(int dir_fd, const char *name)
{
        struct stat st;

        return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static inline bool str_eq_null(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

static inline void assert_state_eq(const struct oci_state *a, const struct oci_state *b)
{
        cr_assert(str_eq_null(a->oci_version, b->oci_version));
        cr_assert(str_eq_null(a->id, b->id));
        cr_assert_eq(a->status, b->status);
        cr_assert_eq(a->pid, b->pid);
        cr_assert_eq(a->pid_start_time, b->pid_start_time);
        cr_assert(str_eq_null(a->bundle, b->bundle));
        cr_assert(str_eq_null(a->rootfs, b->rootfs), "rootfs %s vs %s", a->rootfs, b->rootfs);
        cr_assert(str_eq_null(a->created, b->created));
        cr_assert(str_eq_null(a->owner, b->owner));
        cr_assert_eq(a->detached, b->detached);
        cr_assert_eq(a->no_new_keyring, b->no_new_keyring);
        cr_assert_eq(a->n_annotations, b->n_annotations);
        for (size_t i = 0; i < a->n_annotations; i++) {
                cr_assert_str_eq(a->annotations[i].key, b->annotations[i].key);
                cr_assert_str_eq(a->annotations[i].value, b->annotations[i].value,
                                 "annotation %zu differs", i);
        }
        for (size_t i = 0;; i++) {
                const char *x = a->cgroup_paths ? a->cgroup_paths[i] : NULL;
                const char *y = b->cgroup_paths ? b->cgroup_paths[i] : NULL;
                cr_assert(str_eq_null(x, y), "cgroup path %zu: %s vs %s", i, x, y);
                if (!x)
                        break;
        }
}
