/* SPDX-License-Identifier: MIT */
/*
 * The supervisor is a process of its own (runtime/session/image.c), not a
 * fork of its creator: it holds none of the creator's memory, environment
 * or fds, gets its policy exactly, and runs from libpsrun.so itself (or a
 * sealed copy of it when the file is not safe to run as root).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>

#include "session/common.h"

static long status_kib(int pid, const char *field)
{
        char path[64], line[256];
        snprintf(path, sizeof(path), "/proc/%d/status", pid);
        FILE *f = fopen(path, "re");
        long v = -1;
        size_t n = strlen(field);
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, field, n) == 0 && line[n] == ':')
                        v = strtol(line + n + 1, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

static bool environ_has(int pid, const char *entry)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/environ", pid);
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        size_t want = strlen(entry);
        for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
                if (strncmp(buf + i, entry, want) == 0)
                        return true;
        return false;
}

/* Whether any fd of pid is the file (device and inode) that fd is. */
static bool holds_file_of(int pid, int fd)
{
        struct stat want;
        cr_assert_eq(fstat(fd, &want), 0);
        char dir[64];
        snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
        DIR *d = opendir(dir);
        cr_assert_not_null(d);
        bool found = false;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char path[128];
                struct stat st;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (stat(path, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
                        found = true;
        }
        closedir(d);
        return found;
}

Test(image, the_supervisor_keeps_nothing_of_its_creator, .timeout = 60)
{
        /* 64 MiB touched, a secret in the environment, fds open without
         * close-on-exec: a fork would keep all three. */
        size_t ballast_size = 64U << 20;
        char *ballast = malloc(ballast_size);
        cr_assert_not_null(ballast);
        memset(ballast, 0x5a, ballast_size);
        setenv("SECRET_API_TOKEN", "hunter2", 1);
        setenv("PSRUN_TEST_PASSED_THROUGH", "yes", 1);
        char file[64];
        test_tmp_template(file, sizeof(file), "psrun-image-fd");
        int file_fd = mkstemp(file);
        cr_assert_geq(file_fd, 0);
        (void) fcntl(file_fd, F_SETFD, 0);
        int p[2];
        cr_assert_eq(pipe(p), 0);

        struct sess t;
        sess_start(&t, NULL);
        long rss = status_kib(t.supervisor, "VmRSS");
        cr_expect(rss > 0 && rss < 32 * 1024, "the supervisor's RSS is %ld KiB", rss);
        cr_expect(!environ_has(t.supervisor, "SECRET_API_TOKEN="),
                  "the creator's environment reached the supervisor");
        cr_expect(environ_has(t.supervisor, "PSRUN_TEST_PASSED_THROUGH=yes"));
        cr_expect(!holds_file_of(t.supervisor, file_fd), "the supervisor holds the creator's file");
        cr_expect(!holds_file_of(t.supervisor, p[0]) && !holds_file_of(t.supervisor, p[1]),
                  "the supervisor holds the creator's pipe");
        /* The same from the CLI, where the secret is in psrun's initial
         * environment, which /proc shows of a fork of it. */
        struct test_run run;
        test_run_psrun(&run, (const char *const[]){"session", "create", "--name", "cli", NULL});
        cr_assert_eq(run.status, 0, "%s", run.err);
        test_run_free(&run);
        int cli_supervisor = sess_supervisor_pid(&t, "cli");
        cr_assert_gt(cli_supervisor, 0);
        cr_expect(!environ_has(cli_supervisor, "SECRET_API_TOKEN="),
                  "psrun's environment reached the supervisor");
        cr_expect(environ_has(cli_supervisor, "PSRUN_TEST_PASSED_THROUGH=yes"));
        test_run_psrun(&run, (const char *const[]){"session", "destroy", "cli", NULL});
        cr_expect_eq(run.status, 0, "%s", run.err);
        test_run_free(&run);
        /* Its execs are clones of it, not of us: small too. */
        psrun_exec_result res = sess_sh(&t, "grep VmRSS /proc/self/status; echo ok", NULL);
        cr_expect(strstr(res.stdout_data, "ok"), "%s", res.stdout_data);
        psrun_exec_result_free(&res);
        sess_end(&t);
        close(p[0]);
        close(p[1]);
        close(file_fd);
        unlink(file);
        unsetenv("SECRET_API_TOKEN");
        unsetenv("PSRUN_TEST_PASSED_THROUGH");
        free(ballast);
}

/* The policy crosses an exec as JSON: what YAML and JSON escape
 * differently comes through byte for byte, and a variable the policy
 * takes from the creator (`NAME: ~`) is the creator's, whatever its bytes. */
Test(image, the_policy_arrives_exactly, .timeout = 30)
{
        setenv("PSRUN_IMAGE_INHERITED", "from the creator \xff\x01 end", 1);
        struct sess t;
        sess_start(&t, (const char *const[]){"env",
                                             "{W: \"a\\x85b\\u2028c\\ufeffd\\x01e\\u00e9f\", "
                                             "PSRUN_IMAGE_INHERITED: ~}",
                                             "cpu_limit", "0.333333333", NULL});
        psrun_exec_result res =
                sess_sh(&t, "printf '%s\\n' \"$W\" \"$PSRUN_IMAGE_INHERITED\"", NULL);
        static const char want[] = "a\xc2\x85"
                                   "b\xe2\x80\xa8"
                                   "c\xef\xbb\xbf"
                                   "d\x01"
                                   "e\xc3\xa9"
                                   "f\nfrom the creator \xff\x01 end\n";
        cr_expect_eq(res.stdout_len, sizeof(want) - 1, "%zu bytes: %s", res.stdout_len,
                     res.stdout_data);
        cr_expect(memcmp(res.stdout_data, want, sizeof(want) - 1) == 0, "%s", res.stdout_data);
        psrun_exec_result_free(&res);
        sess_end(&t);
        unsetenv("PSRUN_IMAGE_INHERITED");
}

/* What runs as the supervisor: libpsrun.so itself when only root can
 * change it, a sealed memfd copy when others could (here: a copy of the
 * library of mode 0644 is not executable, one of 0775 is writable by its
 * group). Driven through the public API of the loaded copy. */
static void run_from_library_copy(mode_t mode, bool expect_copy)
{
        test_require_root();
        char lib[PATH_MAX], dir[64];
        snprintf(lib, sizeof(lib), "%s/libpsrun.so",
                 getenv("PSRUN_BUILD") ? getenv("PSRUN_BUILD") : "build");
        test_tmp_template(dir, sizeof(dir), "psrun-image-lib");
        cr_assert_not_null(mkdtemp(dir));
        cr_assert_eq(chmod(dir, 0755), 0);
        char copy[PATH_MAX];
        snprintf(copy, sizeof(copy), "%s/libpsrun-copy.so", dir);
        int in = open(lib, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(in, 0, "%s: %s", lib, strerror(errno));
        int out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        cr_assert_geq(out, 0);
        char buf[1 << 16];
        ssize_t n;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                cr_assert_eq(write(out, buf, (size_t) n), n);
        close(in);
        close(out);
        cr_assert_eq(chmod(copy, mode), 0);

        void *h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
        cr_assert_not_null(h, "%s", dlerror());
        psrun_policy *(*policy_new)(void) =
                (psrun_policy * (*) (void) ) dlsym(h, "psrun_policy_new");
        int (*create)(const psrun_policy *, const psrun_session_options *, psrun_session **,
                      psrun_error *) =
                (int (*)(const psrun_policy *, const psrun_session_options *, psrun_session **,
                         psrun_error *)) dlsym(h, "psrun_session_create");
        int (*exec_shell)(psrun_session *, const char *, const psrun_exec_options *,
                          psrun_exec_result *, psrun_error *) =
                (int (*)(psrun_session *, const char *, const psrun_exec_options *,
                         psrun_exec_result *, psrun_error *)) dlsym(h, "psrun_exec_shell");
        void (*policy_free)(psrun_policy *) =
                (void (*)(psrun_policy *)) dlsym(h, "psrun_policy_free");
        void (*result_free)(psrun_exec_result *) =
                (void (*)(psrun_exec_result *)) dlsym(h, "psrun_exec_result_free");
        int (*destroy)(psrun_session *, psrun_error *) =
                (int (*)(psrun_session *, psrun_error *)) dlsym(h, "psrun_session_destroy");
        cr_assert(policy_new && policy_free && create && exec_shell && result_free && destroy);

        struct sess t = {0};
        test_tmp_template(t.root, sizeof(t.root), "psrun-sess");
        cr_assert_not_null(mkdtemp(t.root));
        setenv("PSRUN_SESSION_ROOT", t.root, 1);
        psrun_error err = {0};
        psrun_session_options o = {.name = "t"};
        psrun_policy *p = policy_new();
        cr_assert_eq(create(p, &o, &t.s, &err), 0, "create: %s", err.msg);
        t.supervisor = sess_supervisor_pid(&t, "t");
        char exe_link[64], exe[PATH_MAX] = "";
        snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", t.supervisor);
        cr_assert_gt(readlink(exe_link, exe, sizeof(exe) - 1), 0);
        if (expect_copy)
                cr_expect(strncmp(exe, "/memfd:psrun-session", 20) == 0, "runs %s", exe);
        else
                cr_expect_str_eq(exe, copy);
        psrun_exec_result res;
        cr_assert_eq(exec_shell(t.s, "echo from the copy", NULL, &res, &err), 0, "%s", err.msg);
        cr_expect_str_eq(res.stdout_data, "from the copy\n");
        result_free(&res);
        cr_expect_eq(destroy(t.s, &err), 0, "%s", err.msg);
        policy_free(p);
        t.s = NULL;
        sess_end(&t);
        unlink(copy);
        rmdir(dir);
        /* The copy stays loaded (its handle is never closed): Criterion runs
         * each test in a process of its own. */
}

Test(image, libpsrun_so_runs_as_it_is_when_only_root_can_change_it, .timeout = 60)
{
        run_from_library_copy(0755, false);
}

Test(image, a_library_others_could_change_runs_from_a_sealed_copy, .timeout = 60)
{
        run_from_library_copy(0644, true);
}

Test(image, a_group_writable_library_runs_from_a_sealed_copy, .timeout = 60)
{
        run_from_library_copy(0775, true);
}

/* The supervisor dies right after its exec: create fails in one line and
 * leaves nothing behind. */
Test(image, a_supervisor_dying_at_its_start_leaves_nothing, .timeout = 30)
{
        test_require_root();
        struct sess t = {0};
        test_tmp_template(t.root, sizeof(t.root), "psrun-sess");
        cr_assert_not_null(mkdtemp(t.root));
        setenv("PSRUN_SESSION_ROOT", t.root, 1);
        setenv("PSRUN_TEST_KILL_AT", "session:image", 1);
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        psrun_session_options o = {.name = "t"};
        int r = psrun_session_create(p, &o, &t.s, &err);
        unsetenv("PSRUN_TEST_KILL_AT");
        psrun_policy_free(p);
        cr_expect_eq(r, -EIO, "%d: %s", r, err.msg);
        cr_expect(strstr(err.msg, "died while starting"), "%s", err.msg);
        cr_expect(!strchr(err.msg, '\n'), "%s", err.msg);
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t.root);
        struct stat st;
        cr_expect(stat(dir, &st) < 0 && errno == ENOENT, "state dir %s left", dir);
        cr_expect_eq(rmdir(t.root), 0, "%s: %s", t.root, strerror(errno));
}
