/* SPDX-License-Identifier: MIT */
/*
 * Landlock: the default plan built in the test process (the "parent"), applied
 * in a forked child with no_new_privs, as psrun's child does. The child
 * reports each failed expectation as a line on a pipe.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/landlock.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "policy/landlock.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#define ACCESS_FS_TRUNCATE  (1ULL << 14)
#define ACCESS_FS_IOCTL_DEV (1ULL << 15)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define SCOPE_SIGNAL        (1ULL << 1)

#define READ_EXECUTE                                                                               \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

static char tmpdir[64];
static int report_fd = -1;

static void require_landlock(void)
{
        int abi = landlock_abi();
        if (abi <= 0)
                cr_skip_test("kernel without Landlock (CONFIG_SECURITY_LANDLOCK off, or "
                             "\"landlock\" missing from lsm=): nothing to test");
}

static void path_in(char *buf, size_t len, const char *rel)
{
        snprintf(buf, len, "%s/%s", tmpdir, rel);
}

static void write_file(const char *rel, const char *data)
{
        char p[128];
        path_in(p, sizeof(p), rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "create %s: %s", p, strerror(errno));
        cr_assert_eq(write(fd, data, strlen(data)), (ssize_t) strlen(data));
        close(fd);
}

static void setup(void)
{
        char p[128];
        test_tmp_template(tmpdir, sizeof(tmpdir), "psrun-landlock");
        cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
        static const char *const dirs[] = {"w", "r"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                path_in(p, sizeof(p), dirs[i]);
                cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s: %s", p, strerror(errno));
        }
        write_file("r/existing", "hello");
        write_file("w/existing", "hello");
        write_file("plainfile", "not a directory");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 ? -1 : 0;
}

static void teardown(void)
{
        if (tmpdir[0])
                nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(landlock, .init = setup, .fini = teardown);

/* ------------------------------------------------------------------------ */
/* Child-side expectations. */

static void child_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void child_fail(int line, const char *fmt, ...)
{
        char buf[320];
        va_list ap;
        int n = snprintf(buf, sizeof(buf), "line %d: ", line);
        va_start(ap, fmt);
        n += vsnprintf(buf + n, sizeof(buf) - (size_t) n - 1, fmt, ap);
        va_end(ap);
        if ((size_t) n > sizeof(buf) - 2)
                n = (int) sizeof(buf) - 2;
        buf[n++] = '\n';
        if (write(report_fd, buf, (size_t) n) < 0)
                _exit(99);
}

/* `ret` < 0 means failure with errno; want 0 means success expected. */
#define CHILD_EXPECT_ERRNO(ret, want, what)                                                        \
        do {                                                                                       \
                int got_ = (ret) < 0 ? errno : 0;                                                  \
                if (got_ != (want))                                                                \
                        child_fail(__LINE__, "%s: got %s, want %s", (what),                        \
                                   got_ ? strerror(got_) : "success",                              \
                                   (want) ? strerror(want) : "success");                           \
        } while (0)

static int open_in(const char *rel, int flags)
{
        char p[128];
        path_in(p, sizeof(p), rel);
        int fd = open(p, flags | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        return fd;
}

static int mkdir_in(const char *rel)
{
        char p[128];
        path_in(p, sizeof(p), rel);
        return mkdir(p, 0755);
}

static int unlink_in(const char *rel)
{
        char p[128];
        path_in(p, sizeof(p), rel);
        return unlink(p);
}

static int truncate_in(const char *rel)
{
        char p[128];
        path_in(p, sizeof(p), rel);
        return truncate(p, 0);
}

static int run_true(void)
{
        int st;
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                char *const argv[] = {"true", NULL};
                execv("/bin/true", argv);
                _exit(127);
        }
        if (waitpid(pid, &st, 0) != pid)
                return -1;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                errno = WIFEXITED(st) && WEXITSTATUS(st) == 127 ? EACCES : EPROTO;
                return -1;
        }
        return 0;
}

/* Forks; the child sets no_new_privs (unless told not to), applies `plan`,
 * checks the result against `want_apply`, then runs `body`. */
static void run_child(const struct landlock_plan *plan, bool set_nnp, int want_apply,
                      int want_failed_rule, void (*body)(const struct landlock_plan *))
{
        int pfd[2];
        cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(pfd[0]);
                report_fd = pfd[1];
                if (set_nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        child_fail(__LINE__, "no_new_privs: %s", strerror(errno));
                int failed_rule = 42;
                int r = landlock_plan_apply(plan, &failed_rule);
                if (r != want_apply)
                        child_fail(__LINE__, "landlock_plan_apply: %d (%s), want %d", r,
                                   r ? strerror(-r) : "success", want_apply);
                if (failed_rule != want_failed_rule)
                        child_fail(__LINE__, "failed_rule %d, want %d", failed_rule,
                                   want_failed_rule);
                if (r == 0 && body)
                        body(plan);
                _exit(0);
        }
        close(pfd[1]);
        char out[8192];
        size_t len = 0;
        ssize_t got;
        while ((got = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
                len += (size_t) got;
        out[len] = '\0';
        close(pfd[0]);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
        cr_expect_eq(len, 0, "%s", out);
}

static void build_plan(struct landlock_plan *plan, const char *const *rel_writable)
{
        char paths[8][128];
        const char *writable[9] = {NULL};
        size_t n = 0;
        for (; rel_writable && rel_writable[n]; n++) {
                cr_assert_lt(n, 8);
                path_in(paths[n], sizeof(paths[n]), rel_writable[n]);
                writable[n] = paths[n];
        }
        psrun_error err = {0};
        int r = landlock_plan_default(plan, writable, &err);
        cr_assert_eq(r, 0, "landlock_plan_default: %s", err.msg);
}

/* ------------------------------------------------------------------------ */

Test(landlock, abi_is_reported)
{
        require_landlock();
        int abi = landlock_abi();
        cr_assert_gt(abi, 0);
        cr_log_info("Landlock ABI %d", abi);
}

Test(landlock, rights_follow_the_abi)
{
        const uint64_t v1 = (1ULL << 13) - 1; /* EXECUTE .. MAKE_SYM */
        cr_expect_eq(landlock_fs_access_for_abi(0), 0);
        cr_expect_eq(landlock_fs_access_for_abi(1), v1);
        cr_expect_eq(landlock_fs_access_for_abi(2), v1 | LANDLOCK_ACCESS_FS_REFER);
        cr_expect_eq(landlock_fs_access_for_abi(3),
                     v1 | LANDLOCK_ACCESS_FS_REFER | ACCESS_FS_TRUNCATE);
        /* ABI 4 added network rights only; the plan does not handle them. */
        cr_expect_eq(landlock_fs_access_for_abi(4), landlock_fs_access_for_abi(3));
        cr_expect_eq(landlock_fs_access_for_abi(5),
                     landlock_fs_access_for_abi(3) | ACCESS_FS_IOCTL_DEV);
        cr_expect_eq(landlock_fs_access_for_abi(99), landlock_fs_access_for_abi(5));

        cr_expect_eq(landlock_scope_for_abi(5), 0);
        cr_expect_eq(landlock_scope_for_abi(6), SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX);
}

Test(landlock, default_plan_shape)
{
        require_landlock();
        static const char *const writable[] = {"w", "missing", NULL};
        struct landlock_plan plan;
        build_plan(&plan, writable);

        int abi = landlock_abi();
        uint64_t handled = landlock_fs_access_for_abi(abi);
        cr_expect_eq(plan.abi, abi);
        cr_assert_geq(plan.ruleset_fd, 0);
        cr_expect(fcntl(plan.ruleset_fd, F_GETFD) & FD_CLOEXEC, "ruleset fd not O_CLOEXEC");
        cr_assert_eq(plan.n_rules, 3);
        cr_expect_str_eq(plan.rules[0].path, "/");
        cr_expect_eq(plan.rules[0].access, READ_EXECUTE);
        for (size_t i = 1; i < plan.n_rules; i++) {
                cr_expect_eq(plan.rules[i].access, handled, "rule %zu: 0x%llx", i,
                             (unsigned long long) plan.rules[i].access);
                cr_expect(strncmp(plan.rules[i].path, tmpdir, strlen(tmpdir)) == 0);
        }

        landlock_plan_free(&plan);
        cr_expect_eq(plan.ruleset_fd, -1);
        cr_expect_null(plan.rules);
        cr_expect_eq(plan.n_rules, 0);
        landlock_plan_free(&plan); /* idempotent */
        landlock_plan_free(NULL);
}

Test(landlock, default_plan_rejects_relative_paths)
{
        require_landlock();
        static const char *const writable[] = {"/tmp", "workspace", NULL};
        struct landlock_plan plan;
        psrun_error err = {0};
        cr_assert_eq(landlock_plan_default(&plan, writable, &err), -EINVAL);
        cr_expect(strstr(err.msg, "'workspace' is not absolute"), "message: %s", err.msg);
        cr_expect_eq(plan.ruleset_fd, -1);
        cr_expect_null(plan.rules);
}

Test(landlock, apply_rejects_unused_plan)
{
        struct landlock_plan plan = {.ruleset_fd = -1};
        int failed = 7;
        cr_expect_eq(landlock_plan_apply(&plan, &failed), -EINVAL);
        cr_expect_eq(failed, -1);
        cr_expect_eq(landlock_plan_apply(NULL, NULL), -EINVAL);
}

static void writes_confined(const struct landlock_plan *plan)
{
        char buf[8];

        CHILD_EXPECT_ERRNO(open_in("w/new", O_WRONLY | O_CREAT), 0, "create w/new");
        CHILD_EXPECT_ERRNO(open_in("w/existing", O_WRONLY | O_APPEND), 0, "append w/existing");
        CHILD_EXPECT_ERRNO(mkdir_in("w/dir"), 0, "mkdir w/dir");
        CHILD_EXPECT_ERRNO(unlink_in("w/existing"), 0, "unlink w/existing");

        CHILD_EXPECT_ERRNO(open_in("r/new", O_WRONLY | O_CREAT), EACCES, "create r/new");
        CHILD_EXPECT_ERRNO(open_in("r/existing", O_WRONLY), EACCES, "write r/existing");
        CHILD_EXPECT_ERRNO(open_in("r/existing", O_RDWR), EACCES, "open r/existing rw");
        CHILD_EXPECT_ERRNO(mkdir_in("r/dir"), EACCES, "mkdir r/dir");
        CHILD_EXPECT_ERRNO(unlink_in("r/existing"), EACCES, "unlink r/existing");
        CHILD_EXPECT_ERRNO(open_in("new-at-top", O_WRONLY | O_CREAT), EACCES, "create at top");

        char p[128];
        path_in(p, sizeof(p), "r/existing");
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        CHILD_EXPECT_ERRNO(fd, 0, "open r/existing read-only");
        if (fd >= 0) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n != 5 || memcmp(buf, "hello", 5) != 0)
                        child_fail(__LINE__, "read r/existing: %zd bytes", n);
                close(fd);
        }
        CHILD_EXPECT_ERRNO(run_true(), 0, "execute /bin/true");

        /* Truncation became a right of its own in ABI 3. */
        if (plan->abi >= 3)
                CHILD_EXPECT_ERRNO(truncate_in("r/existing"), EACCES, "truncate r/existing");
        /* ABI 6 scopes signals: the test process is outside the domain. */
        if (plan->abi >= 6)
                CHILD_EXPECT_ERRNO(kill(getppid(), 0), EPERM, "signal the parent");
}

Test(landlock, writes_only_beneath_writable_paths)
{
        require_landlock();
        static const char *const writable[] = {"w", "missing", "missing/deeper", NULL};
        struct landlock_plan plan;
        build_plan(&plan, writable);
        run_child(&plan, true, 0, -1, writes_confined);
        landlock_plan_free(&plan);

        /* The domain ended with the child: the test process is unconfined. */
        cr_expect_geq(open_in("r/after", O_WRONLY | O_CREAT), 0);
}

static void file_rule_confined(const struct landlock_plan *plan)
{
        (void) plan;
        CHILD_EXPECT_ERRNO(open_in("r/existing", O_WRONLY | O_APPEND), 0,
                           "append to the writable file");
        CHILD_EXPECT_ERRNO(open_in("r/other", O_WRONLY | O_CREAT), EACCES, "create a sibling");
        CHILD_EXPECT_ERRNO(unlink_in("r/existing"), EACCES, "unlink the writable file");
}

Test(landlock, writable_regular_file_keeps_file_rights)
{
        require_landlock();
        static const char *const writable[] = {"r/existing", NULL};
        struct landlock_plan plan;
        build_plan(&plan, writable);
        run_child(&plan, true, 0, -1, file_rule_confined);
        landlock_plan_free(&plan);
}

Test(landlock, failing_rule_is_reported)
{
        require_landlock();
        /* A path through a regular file: ENOTDIR, not a skippable ENOENT. */
        static const char *const writable[] = {"w", "plainfile/x", NULL};
        struct landlock_plan plan;
        build_plan(&plan, writable);
        run_child(&plan, true, -ENOTDIR, 2, NULL);
        landlock_plan_free(&plan);
}

Test(landlock, restrict_needs_no_new_privs_without_capabilities)
{
        require_landlock();
        test_require_root();
        struct landlock_plan plan;
        build_plan(&plan, NULL);
        /* The child becomes nobody (all capabilities gone) and does not set
         * no_new_privs: the kernel must refuse to restrict it. */
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(100);
                int failed = 0;
                int r = landlock_plan_apply(&plan, &failed);
                _exit(r == -EPERM && failed == -1 ? 0 : 1);
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
        landlock_plan_free(&plan);
}
