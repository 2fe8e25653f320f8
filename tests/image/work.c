/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_test.h"
#include "lib/testlib.h"

void work_make(struct work *w)
{
        test_require_root();
        test_tmp_template(w->dir, sizeof(w->dir), "psrun-unpack");
        cr_assert(mkdtemp(w->dir));
        snprintf(w->layer, sizeof(w->layer), "%s/layer", w->dir);
        snprintf(w->outside, sizeof(w->outside), "%s/outside", w->dir);
        cr_assert_eq(mkdir(w->layer, 0700), 0);
        cr_assert_eq(mkdir(w->outside, 0700), 0);
        w->layer_fd = open(w->layer, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(w->layer_fd, 0);
}

static int rm_one(const char *path, const struct stat *s, int flag, struct FTW *f)
{
        return remove(path);
}

void work_remove(struct work *w)
{
        if (w->layer_fd >= 0)
                close(w->layer_fd);
        w->layer_fd = -1;
        nftw(w->dir, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

static size_t count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        cr_assert(d, "%s", dir);
        size_t n = 0;
        for (struct dirent *de; (de = readdir(d));)
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

void work_assert_untouched(const struct work *w)
{
        cr_assert_eq(count_entries(w->outside), 0, "something was made outside the layer");
        cr_assert_eq(count_entries(w->dir), 2, "something was made beside the layer");
}

int work_unpack(struct work *w, const struct tarbuf *b, bool gzip, const struct unpack_limits *lim,
                struct unpack_stats *st, psrun_error *err)
{
        struct unpack_limits none = {0};
        int fd = tb_to_fd(b, gzip);
        int k = unpack_layer(fd, NULL, w->layer_fd, lim ? lim : &none, st, err);
        close(fd);
        cr_assert_null(strchr(err->msg, '\n'), "a multi-line message: %s", err->msg);
        return k;
}

const char *in_layer(const struct work *w, const char *rel)
{
        static char buf[2][4200];
        static int turn;
        turn ^= 1;
        snprintf(buf[turn], sizeof(buf[turn]), "%s/%s", w->layer, rel);
        return buf[turn];
}
