/* SPDX-License-Identifier: MIT */
/*
 * The host-side file API against what sandboxed code can plant in its own
 * /workspace: nothing may reach or change a host file.
 */
#include <sys/resource.h>
#include <time.h>

#include "session/common.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t ms_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* A host file the hostile cases aim at, and its state before. */
struct target {
        char path[64];
        struct stat st;
};

static void target_make(struct target *h)
{
        test_tmp_template(h->path, sizeof(h->path), "psrun-host-secret");
        int fd = mkstemp(h->path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "HOST-SECRET\n", 12), 12);
        close(fd);
        cr_assert_eq(stat(h->path, &h->st), 0);
}

static void target_check(struct target *h)
{
        struct stat now;
        cr_assert_eq(stat(h->path, &now), 0, "host file %s is gone", h->path);
        cr_expect_eq(now.st_ino, h->st.st_ino);
        cr_expect_eq(now.st_size, h->st.st_size, "host file changed");
        cr_expect_eq(now.st_mtim.tv_sec, h->st.st_mtim.tv_sec);
        cr_expect_eq(now.st_mtim.tv_nsec, h->st.st_mtim.tv_nsec, "host file written");
        unlink(h->path);
}

static void expect_no_host_data(struct sess *t, const char *path)
{
        psrun_file_data d = {0};
        psrun_error err = {0};
        int r = psrun_read_file(t->s, path, 0, 0, &d, &err);
        if (r == 0) {
                cr_expect(!strstr(d.data, "HOST-SECRET") && !strstr(d.data, "root:"),
                          "read %s reached a host file: %.80s", path, d.data);
                free(d.data);
        } else {
                cr_expect(err.msg[0] && !strchr(err.msg, '\n'), "error: %s", err.msg);
        }
}

Test(files, symlinks_planted_inside_stay_inside, .timeout = 30)
{
        struct sess t;
        struct target h;
        target_make(&h);
        sess_start(&t, NULL);
        char line[512];
        snprintf(line, sizeof(line),
                 "ln -s %s /workspace/x && ln -s /etc/shadow /workspace/shadow && "
                 "ln -s /proc/self/root /workspace/r && ln -s / /workspace/up && "
                 "ln -s ../../../../.. /workspace/dots && mkdir /workspace/d && "
                 "ln -s /etc /workspace/d/etc",
                 h.path);
        sess_sh_ok(&t, line);
        char via_root[256], via_dots[256], via_up[256];
        snprintf(via_root, sizeof(via_root), "r%s", h.path);
        snprintf(via_dots, sizeof(via_dots), "dots%s", h.path);
        snprintf(via_up, sizeof(via_up), "up%s", h.path);
        const char *reads[] = {
                "x",           "shadow",       via_root,           via_dots,
                via_up,        "d/etc/passwd", "../../etc/passwd", "/workspace/../etc/passwd",
                "r/etc/passwd"};
        for (size_t i = 0; i < N_OF(reads); i++)
                expect_no_host_data(&t, reads[i]);

        /* Writes through the same links land in the workspace, or nowhere:
         * the final name is replaced, a symlinked parent resolves inside. */
        psrun_error err = {0};
        cr_expect_eq(psrun_write_file(t.s, "x", "new", 3, 0644, &err), 0, "%s", err.msg);
        char name[128];
        snprintf(name, sizeof(name), "up%s", h.path);
        (void) psrun_write_file(t.s, name, "new", 3, 0644, &err);
        snprintf(name, sizeof(name), "dots%s", h.path);
        (void) psrun_write_file(t.s, name, "new", 3, 0644, &err);
        (void) psrun_write_file(t.s, "d/etc/psrun-planted", "new", 3, 0644, &err);
        cr_expect_neq(access("/etc/psrun-planted", F_OK), 0, "wrote into the host's /etc");
        /* x is now a plain file of the sandbox's user. */
        psrun_exec_result res = sess_sh(&t, "stat -c '%F %U %s' /workspace/x", NULL);
        cr_expect_str_eq(res.stdout_data, "regular file sandbox 3\n");
        psrun_exec_result_free(&res);

        /* Removing through links removes the link, never the target. */
        cr_expect_eq(psrun_remove(t.s, "up", &err), 0, "%s", err.msg);
        cr_expect_eq(psrun_remove(t.s, "d", &err), 0, "%s", err.msg);
        cr_expect_eq(access("/etc/passwd", F_OK), 0);
        /* Nothing outside /workspace by name. */
        cr_expect_eq(psrun_read_file(t.s, "/etc/passwd", 0, 0, &(psrun_file_data){0}, &err),
                     -EPERM);
        cr_expect(strstr(err.msg, "outside /workspace"), "%s", err.msg);
        cr_expect_eq(psrun_remove(t.s, "/workspace", &err), -EINVAL);
        sess_end(&t);
        target_check(&h);
}

Test(files, file_swapped_for_a_symlink_between_calls, .timeout = 30)
{
        struct sess t;
        struct target h;
        target_make(&h);
        sess_start(&t, NULL);
        psrun_error err = {0};
        cr_assert_eq(psrun_write_file(t.s, "f", "mine", 4, 0644, &err), 0, "%s", err.msg);
        char line[256];
        snprintf(line, sizeof(line), "rm /workspace/f && ln -s %s /workspace/f", h.path);
        sess_sh_ok(&t, line);
        expect_no_host_data(&t, "f");
        cr_expect_eq(psrun_write_file(t.s, "f", "again", 5, 0644, &err), 0, "%s", err.msg);
        psrun_file_data d;
        cr_assert_eq(psrun_read_file(t.s, "f", 0, 0, &d, &err), 0, "%s", err.msg);
        cr_expect_str_eq(d.data, "again");
        free(d.data);
        sess_end(&t);
        target_check(&h);
}

Test(files, fifo_does_not_block_and_special_names, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        sess_sh_ok(&t, "mkfifo /workspace/fifo && ln /workspace/fifo /workspace/fifo2");
        psrun_file_data d;
        psrun_error err = {0};
        uint64_t t0 = ms_now();
        cr_expect_eq(psrun_read_file(t.s, "fifo", 0, 0, &d, &err), -EINVAL);
        cr_expect(strstr(err.msg, "not a regular file"), "%s", err.msg);
        cr_expect_lt(ms_now() - t0, 1000);
        cr_expect_eq(psrun_read_file(t.s, "/workspace", 0, 0, &d, &err), -EISDIR);
        psrun_file_entry *e;
        size_t n;
        cr_assert_eq(psrun_list_files(t.s, NULL, 1, &e, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 2);
        cr_expect(n == 2 && strcmp(e[0].type, "fifo") == 0);
        psrun_file_entries_free(e, n);
        /* A hard link to a file outside the workspace cannot be made from
         * inside (another file system): the attempt fails. */
        psrun_exec_result res = sess_sh(&t, "ln /etc/passwd /workspace/h", NULL);
        cr_expect_neq(res.result.exit_code, 0);
        psrun_exec_result_free(&res);

        /* A 4096-byte path: one line of error, nothing created. */
        static char longp[4200];
        for (size_t i = 0; i < 4094; i += 2)
                memcpy(longp + i, "a/", 2);
        memcpy(longp + 4094, "bb", 3);
        cr_assert_eq(strlen(longp), 4096);
        cr_expect_lt(psrun_write_file(t.s, longp, "x", 1, 0644, &err), 0);
        cr_expect(!strchr(err.msg, '\n'), "%s", err.msg);
        cr_expect_lt(psrun_read_file(t.s, longp, 0, 0, &d, &err), 0);
        cr_expect_eq(psrun_write_file(t.s, "", "x", 1, 0644, &err), -EINVAL);
        cr_expect_eq(psrun_write_file(t.s, "dir/..", "x", 1, 0644, &err), -EINVAL);
        sess_end(&t);
}

Test(files, binary_round_trip_and_ranges, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        static char all[256 * 64];
        for (size_t i = 0; i < sizeof(all); i++)
                all[i] = (char) (i % 256);
        psrun_error err = {0};
        cr_assert_eq(psrun_write_file(t.s, "deep/er/bin", all, sizeof(all), 0600, &err), 0, "%s",
                     err.msg);
        psrun_file_data d;
        cr_assert_eq(psrun_read_file(t.s, "/workspace/deep/er/bin", 0, 0, &d, &err), 0, "%s",
                     err.msg);
        cr_expect_eq(d.len, sizeof(all));
        cr_expect_eq(d.size, sizeof(all));
        cr_expect(!d.truncated);
        cr_expect(memcmp(d.data, all, sizeof(all)) == 0);
        free(d.data);
        cr_assert_eq(psrun_read_file(t.s, "deep/er/bin", 256, 10, &d, &err), 0, "%s", err.msg);
        cr_expect_eq(d.len, 10);
        cr_expect(d.truncated);
        cr_expect(memcmp(d.data, all, 10) == 0);
        free(d.data);
        /* The sandbox sees the same bytes, owned by its user, and its
         * captured stdout is binary-safe. */
        psrun_exec_result res = sess_sh(&t,
                                        "stat -c '%U %a' /workspace/deep/er/bin "
                                        "/workspace/deep; cat /workspace/deep/er/bin >&2",
                                        NULL);
        cr_expect_str_eq(res.stdout_data, "sandbox 600\nsandbox 755\n");
        cr_expect_eq(res.stderr_len, sizeof(all));
        cr_expect(memcmp(res.stderr_data, all, sizeof(all)) == 0);
        psrun_exec_result_free(&res);
        sess_end(&t);
}

/* A write cancelled before its answer (the cancel already set: the
 * client hangs up at once) stops the writer: no temporary file stays, the
 * old file is intact, and the next write goes through. */
Test(files, cancelled_write_leaves_the_old_file, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        psrun_error err = {0};
        cr_assert_eq(psrun_write_file(t.s, "f", "old", 3, 0644, &err), 0, "%s", err.msg);
        size_t size = 64U << 20;
        char *big = malloc(size);
        cr_assert_not_null(big);
        memset(big, 'n', size);
        int cancel = 1;
        psrun_write_options o = {.cancel = &cancel};
        cr_expect_eq(psrun_write_file_opts(t.s, "f", big, size, 0644, &o, &err), -ECANCELED);
        cr_expect_str_eq(err.msg, "write_file: cancelled");
        free(big);
        /* The writer goes on a moment after the call returns; it is done
         * once the next write is answered (one writer, in order). */
        cr_assert_eq(psrun_write_file(t.s, "g", "next", 4, 0644, &err), 0, "%s", err.msg);
        psrun_file_entry *e;
        size_t n;
        cr_assert_eq(psrun_list_files(t.s, NULL, 0, &e, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 2, "entries: %zu (a temp file left?)", n);
        psrun_file_entries_free(e, n);
        psrun_file_data d;
        cr_assert_eq(psrun_read_file(t.s, "f", 0, 0, &d, &err), 0, "%s", err.msg);
        cr_expect_eq(d.len, 3);
        cr_expect_str_eq(d.data, "old");
        free(d.data);
        sess_end(&t);
}

Test(files, hundred_mib_and_a_full_workspace, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"disk_limit", "128M", NULL});
        size_t size = 100U << 20;
        char *big = malloc(size);
        cr_assert_not_null(big);
        for (size_t i = 0; i < size; i++)
                big[i] = (char) (i * 2654435761U >> 13);
        psrun_error err = {0};
        uint64_t t0 = ms_now();
        cr_assert_eq(psrun_write_file(t.s, "big", big, size, 0644, &err), 0, "%s", err.msg);
        psrun_file_data d;
        cr_assert_eq(psrun_read_file(t.s, "big", 0, size, &d, &err), 0, "%s", err.msg);
        uint64_t took = ms_now() - t0;
        cr_expect_eq(d.len, size);
        cr_expect(memcmp(d.data, big, size) == 0);
        free(d.data);
        cr_log_info("100 MiB written and read back in %llu ms", (unsigned long long) took);
        /* 100 MiB more does not fit in 128M: ENOSPC, no temp file left,
         * the old file intact. */
        cr_expect_eq(psrun_write_file(t.s, "big2", big, size, 0644, &err), -ENOSPC);
        cr_expect(strstr(err.msg, "full") && strstr(err.msg, "disk_limit"), "%s", err.msg);
        psrun_file_entry *e;
        size_t n;
        cr_assert_eq(psrun_list_files(t.s, NULL, 0, &e, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 1, "entries: %zu (a temp file left?)", n);
        cr_expect(n >= 1 && e[0].size == size);
        psrun_file_entries_free(e, n);
        free(big);
        sess_end(&t);
}

static long peak_rss_kib(void)
{
        struct rusage ru;
        cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
        return ru.ru_maxrss;
}

/* The sandbox chooses the size of what the caller reads: a sparse file of
 * 2 GiB costs it no disk. "All of it" is refused past PSRUN_READ_ALL_MAX,
 * with the size, and the file can be read in parts at any offset, however
 * large; the caller's memory grows by what it asked for only. */
Test(files, a_huge_sparse_file_costs_the_caller_only_what_it_asks, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        sess_sh_ok(&t, "truncate -s 3G /workspace/sparse && printf END >> /workspace/sparse");
        long before = peak_rss_kib();
        psrun_file_data d = {0};
        psrun_error err = {0};
        cr_expect_eq(psrun_read_file(t.s, "sparse", 0, 0, &d, &err), -EFBIG);
        cr_expect(strstr(err.msg, "path: `sparse` has 3221225475 bytes") &&
                          strstr(err.msg, "read it in parts"),
                  "%s", err.msg);
        cr_expect_null(strchr(err.msg, '\n'));
        cr_expect_null(d.data);
        uint64_t size = (3ULL << 30) + 3;
        cr_assert_eq(psrun_read_file(t.s, "sparse", size - 8, 1 << 20, &d, &err), 0, "%s", err.msg);
        cr_expect_eq(d.len, 8);
        cr_expect_eq(d.size, size);
        cr_expect_eq(d.truncated, 0);
        cr_expect(memcmp(d.data, "\0\0\0\0\0END", 8) == 0);
        free(d.data);
        cr_assert_eq(psrun_read_file(t.s, "sparse", 1ULL << 31, 4096, &d, &err), 0, "%s", err.msg);
        cr_expect_eq(d.len, 4096);
        cr_expect_eq(d.truncated, 1);
        free(d.data);
        long grew = peak_rss_kib() - before;
        cr_expect_lt(grew, 8 * 1024, "the caller's peak RSS grew by %ld KiB", grew);
        sess_end(&t);
}

/* A deep tree of long names: 48 levels of 255-byte directory names, 1,400
 * files at the bottom, each name ~12 KiB as a path below /workspace (17 MiB
 * of names in all). The listing stops at PSRUN_LIST_MAX_BYTES of names,
 * says it was truncated, and the caller's memory stays bounded;
 * psrun_list_files, which cannot say truncated, fails naming the bound. */
Test(files, a_listing_of_a_deep_tree_of_long_names_is_bounded_in_bytes, .timeout = 120)
{
        if (access("/usr/bin/python3", X_OK) != 0)
                cr_skip_test("no /usr/bin/python3 on this host: the tree is made by python3 in "
                             "the sandbox (its paths are longer than PATH_MAX)");
        struct sess t;
        sess_start(&t, (const char *const[]){"disk_limit", "256M", NULL});
        /* One component at a time: the paths are longer than PATH_MAX. */
        sess_sh_ok(&t, "python3 -c 'import os\n"
                       "os.chdir(\"/workspace\")\n"
                       "for _ in range(48): os.mkdir(\"d\" * 255); os.chdir(\"d\" * 255)\n"
                       "for i in range(1400): open(\"f\" * 250 + str(i), \"w\").close()'");
        long before = peak_rss_kib();
        psrun_listing l;
        psrun_error err = {0};
        cr_assert_eq(psrun_list_dir(t.s, NULL, &(psrun_list_options){.recursive = 1}, &l, &err), 0,
                     "%s", err.msg);
        cr_expect_eq(l.truncated, 1, "%zu entries, not truncated", l.n);
        size_t bytes = 0;
        for (size_t i = 0; i < l.n; i++)
                bytes += strlen(l.entries[i].name) + 1;
        cr_expect_leq(bytes, PSRUN_LIST_MAX_BYTES);
        cr_expect_gt(bytes, PSRUN_LIST_MAX_BYTES - 64 * 1024, "only %zu bytes of names", bytes);
        for (size_t i = 1; i < l.n; i++)
                cr_expect_lt(strcmp(l.entries[i - 1].name, l.entries[i].name), 0, "unsorted");
        psrun_listing_free(&l);
        long grew = peak_rss_kib() - before;
        cr_expect_lt(grew, 48 * 1024, "the caller's peak RSS grew by %ld KiB", grew);

        /* A bound of the caller's own. */
        cr_assert_eq(psrun_list_dir(t.s, NULL,
                                    &(psrun_list_options){.recursive = 1, .max_entries = 10}, &l,
                                    &err),
                     0, "%s", err.msg);
        cr_expect_eq(l.n, 10);
        cr_expect_eq(l.truncated, 1);
        psrun_listing_free(&l);
        cr_assert_eq(psrun_list_dir(t.s, NULL, NULL, &l, &err), 0, "%s", err.msg);
        cr_expect_eq(l.n, 1, "one entry at the top");
        cr_expect_eq(l.truncated, 0);
        psrun_listing_free(&l);
        cr_expect_eq(psrun_list_dir(t.s, NULL,
                                    &(psrun_list_options){.max_bytes = PSRUN_LIST_MAX_BYTES + 1},
                                    &l, &err),
                     -EINVAL);
        cr_expect(strstr(err.msg, "max_bytes: "), "%s", err.msg);

        psrun_file_entry *e = NULL;
        size_t n = 0;
        cr_expect_eq(psrun_list_files(t.s, NULL, 1, &e, &n, &err), -E2BIG);
        cr_expect(strstr(err.msg, "dir: more than 100000 entries or 16 MiB of names"), "%s",
                  err.msg);
        cr_expect_null(e);
        sess_end(&t);
}

/* The session's memory usage now, from its cgroup as its info file names
 * it: v1's memory hierarchy, else the cgroup2 one (a pure v2 host). */
static bool session_memory_usage(const struct sess *t, uint64_t *usage)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/t/info", t->root);
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        char line[512], v1[400] = "", v2[400] = "";
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (strncmp(line, "cgroup memory:", 14) == 0)
                        snprintf(v1, sizeof(v1), "%s", line + 14);
                else if (strncmp(line, "cgroup 0::", 10) == 0)
                        snprintf(v2, sizeof(v2), "%s", line + 10);
        }
        fclose(f);
        if (v1[0])
                snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1);
        else
                snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", v2);
        f = fopen(path, "re");
        if (!f)
                return false;
        unsigned long long u = 0;
        bool ok = fscanf(f, "%llu", &u) == 1;
        fclose(f);
        *usage = u;
        return ok;
}

/* Bytes written through the file API are the sandbox's: a write beyond
 * memory_limit fails naming it (not the caller's memory, not an OOM kill
 * in the sandbox), leaves no file, and the sandbox still runs. */
Test(files, write_beyond_memory_limit, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"memory_limit", "64M", "disk_limit", "1G", NULL});
        size_t size = 300U << 20;
        char *big = malloc(size);
        cr_assert_not_null(big);
        memset(big, 'm', size);
        psrun_error err = {0};
        int r = psrun_write_file(t.s, "/workspace/x", big, size, 0644, &err);
        free(big);
        cr_expect_eq(r, -EDQUOT, "write of 300 MiB under 64M: %d (%s)", r, err.msg);
        cr_expect(strstr(err.msg, "write_file: /workspace/x: memory_limit 64M reached") != NULL,
                  "%s", err.msg);
        psrun_file_entry *e;
        size_t n;
        cr_assert_eq(psrun_list_files(t.s, NULL, 0, &e, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0, "entries: %zu (%s left?)", n, n ? e[0].name : "");
        psrun_file_entries_free(e, n);
        sess_sh_ok(&t, "true");
        /* What fits is written, and is still the sandbox's to read. */
        cr_assert_eq(psrun_write_file(t.s, "small", "fits\n", 5, 0644, &err), 0, "%s", err.msg);
        sess_sh_ok(&t, "test \"$(cat small)\" = fits");
        sess_end(&t);
}

Test(files, written_pages_charged_to_the_session, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"memory_limit", "256M", NULL});
        size_t size = 32U << 20;
        char *data = malloc(size);
        cr_assert_not_null(data);
        memset(data, 'c', size);
        psrun_error err = {0};
        /* The writer's first start (its cgroup, its own pages) is not
         * what is measured. */
        cr_assert_eq(psrun_write_file(t.s, "warm", "w", 1, 0644, &err), 0, "%s", err.msg);
        uint64_t before, after;
        cr_assert(session_memory_usage(&t, &before), "the session's memory usage");
        cr_assert_eq(psrun_write_file(t.s, "data", data, size, 0644, &err), 0, "%s", err.msg);
        free(data);
        cr_assert(session_memory_usage(&t, &after));
        cr_log_info("session memory usage %llu -> %llu", (unsigned long long) before,
                    (unsigned long long) after);
        cr_expect(after >= before + size - (size >> 4),
                  "32 MiB written, the session's usage rose by %lld bytes only",
                  (long long) (after - before));
        /* Removed, the pages are uncharged again. */
        cr_assert_eq(psrun_remove(t.s, "data", &err), 0, "%s", err.msg);
        cr_assert(session_memory_usage(&t, &after));
        cr_expect(after < before + (size >> 2), "after the remove: %llu",
                  (unsigned long long) after);
        sess_end(&t);
}

Test(files, write_beyond_disk_limit, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"disk_limit", "8M", NULL});
        size_t size = 12U << 20;
        char *data = malloc(size);
        cr_assert_not_null(data);
        memset(data, 'd', size);
        psrun_error err = {0};
        int r = psrun_write_file(t.s, "sub/x", data, size, 0644, &err);
        free(data);
        cr_expect_eq(r, -ENOSPC, "%d (%s)", r, err.msg);
        cr_expect(strstr(err.msg, "/workspace/sub/x") && strstr(err.msg, "disk_limit 8M reached"),
                  "%s", err.msg);
        sess_sh_ok(&t, "test -d sub && test -z \"$(ls -A sub)\"");
        sess_end(&t);
}
