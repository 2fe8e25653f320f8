/* SPDX-License-Identifier: MIT */
/*
 * The OCI state directory: ids, the root, create/open/list/delete, locking
 * across processes, atomic state.json, corrupt files, liveness and pid reuse,
 * the create/start FIFO handshake, and hostile strings in the JSON.
 * Every test gets its own temporary directory; the suite's fini removes it
 * even after a failed assertion.
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
#include "runtime/oci-state.h"

/* ---- fixture ---- */

static char tmp_dir[] = "/tmp/psrun-oci-state-XXXXXX";
static char root_path[PATH_MAX];

static void setup(void)
{
        cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
        snprintf(root_path, sizeof(root_path), "%s/root", tmp_dir);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        if (flag == FTW_DP)
                chmod(path, 0700);
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static void teardown(void)
{
        /* Parents first get their permissions back, so nothing stays behind. */
        chmod(tmp_dir, 0700);
        nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(oci_state, .init = setup, .fini = teardown, .timeout = 30);

static struct oci_root *open_root(void)
{
        struct oci_root *root = NULL;
        psrun_error err = {0};
        int r = oci_root_open(root_path, &root, &err);

        cr_assert_eq(r, 0, "oci_root_open: %s", err.msg);
        return root;
}

static void make_state(struct oci_state *s, const char *id)
{
        psrun_error err = {0};

        cr_assert_eq(oci_state_init(s, id, "/bundles/b", &err), 0, "%s", err.msg);
}

static struct oci_container *create(struct oci_root *root, const char *id)
{
        _cleanup_(oci_state_free) struct oci_state s = {0};
        struct oci_container *c = NULL;
        psrun_error err = {0};

        make_state(&s, id);
        cr_assert_eq(oci_container_create(root, id, &s, &c, &err), 0, "create %s: %s", id, err.msg);
        return c;
}

static struct oci_container *open_container(struct oci_root *root, const char *id)
{
        struct oci_container *c = NULL;
        psrun_error err = {0};

        cr_assert_eq(oci_container_open(root, id, &c, &err), 0, "open %s: %s", id, err.msg);
        return c;
}

/* The names in a directory other than . and .., sorted, joined by ' '. */
static void dir_names(int dir_fd, char *buf, size_t size)
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

static void assert_root_holds(struct oci_root *root, const char *expected)
{
        char names[1024];

        dir_names(oci_root_fd(root), names, sizeof(names));
        cr_assert_str_eq(names, expected);
}

static void write_at(int dir_fd, const char *name, const char *text, size_t len)
{
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
        cr_assert_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
}

static char *read_at(int dir_fd, const char *name)
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

static bool exists_at(int dir_fd, const char *name)
{
        struct stat st;

        return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool str_eq_null(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

static void assert_state_eq(const struct oci_state *a, const struct oci_state *b)
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

/* ---- ids, statuses, timestamps ---- */

Test(oci_state, status_names_round_trip)
{
        for (int i = 0; i < _OCI_STATUS_MAX; i++) {
                const char *name = oci_status_to_string(i);
                cr_assert_not_null(name);
                cr_assert_eq(oci_status_from_string(name), i, "%s", name);
        }
        cr_assert_str_eq(oci_status_to_string(OCI_STATUS_CREATING), "creating");
        cr_assert_str_eq(oci_status_to_string(OCI_STATUS_STOPPED), "stopped");
        cr_assert_null(oci_status_to_string(_OCI_STATUS_MAX));
        cr_assert_null(oci_status_to_string((enum oci_status) - 1));
        cr_assert_eq(oci_status_from_string("Running"), -EINVAL);
        cr_assert_eq(oci_status_from_string(""), -EINVAL);
        cr_assert_eq(oci_status_from_string(NULL), -EINVAL);
}

Test(oci_state, id_validation_table)
{
        char max_id[OCI_ID_MAX + 1], long_id[OCI_ID_MAX + 2], huge_id[1026];

        memset(max_id, 'a', sizeof(max_id) - 1);
        max_id[sizeof(max_id) - 1] = '\0';
        memset(long_id, 'b', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = '\0';
        memset(huge_id, 'c', sizeof(huge_id) - 1);
        huge_id[sizeof(huge_id) - 1] = '\0';

        const char *good[] = {
                "a",         "web-1",
                "A.b_c+d-e", "...",
                ".hidden",   "a..b",
                "0",         "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                max_id,
        };
        const struct {
                const char *id;
                const char *message;
        } bad[] = {
                {"", "container id must not be empty"},
                {NULL, "container id must not be empty"},
                {".", "container id \".\": must not be \".\" or \"..\""},
                {"..", "container id \"..\": must not be \".\" or \"..\""},
                {"/", "container id \"/\": must contain only letters, digits, '_', '.', '+' and "
                      "'-'"},
                {"a/b", "container id \"a/b\": must contain only letters, digits, '_', '.', '+' "
                        "and '-'"},
                {"../x", "must contain only"},
                {"a b", "must contain only"},
                {"a:b", "must contain only"},
                {"a~b", "must contain only"},
                {"caf\xc3\xa9", "must contain only"},
                {"a\nb", "container id \"a\\nb\": must contain only"},
                {"a\x01", "must contain only"},
                {long_id, "is 256 bytes long, at most 255 allowed"},
                {huge_id, "is 1025 bytes long, at most 255 allowed"},
        };
        psrun_error err = {0};

        for (size_t i = 0; i < ARRAY_SIZE(good); i++)
                cr_expect_eq(oci_id_validate(good[i], &err), 0, "%s: %s", good[i], err.msg);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_expect_eq(oci_id_validate(bad[i].id, &err), -EINVAL, "case %zu", i);
                cr_expect(strstr(err.msg, bad[i].message), "case %zu: %s", i, err.msg);
                cr_expect_null(strchr(err.msg, '\n'), "case %zu: not one line", i);
        }
        cr_expect_eq(oci_id_validate("..", NULL), -EINVAL);
}

Test(oci_state, created_timestamp_like_runc)
{
        const struct {
                struct timespec ts;
                const char *text;
        } cases[] = {
                {{0, 0}, "1970-01-01T00:00:00Z"},
                {{1714566896, 123456789}, "2024-05-01T12:34:56.123456789Z"},
                {{1714566896, 120000000}, "2024-05-01T12:34:56.12Z"},
                {{1714566896, 1}, "2024-05-01T12:34:56.000000001Z"},
        };
        char buf[64];

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                cr_assert_eq(oci_format_created(&cases[i].ts, buf, sizeof(buf)), 0);
                cr_expect_str_eq(buf, cases[i].text);
        }
        cr_expect_eq(oci_format_created(&cases[1].ts, buf, 10), -ENAMETOOLONG);

        struct oci_state s = {0};
        make_state(&s, "t");
        cr_expect_eq(strlen(s.created) >= 20 && s.created[strlen(s.created) - 1] == 'Z', 1, "%s",
                     s.created);
        cr_expect_str_eq(s.oci_version, OCI_STATE_SPEC_VERSION);
        cr_expect_eq(s.status, OCI_STATUS_CREATING);
        oci_state_free(&s);
        oci_state_free(&s);
        oci_state_free(NULL);
}

/* ---- the root ---- */

Test(oci_state, root_created_0700_with_parents)
{
        struct stat st;

        umask(077);
        snprintf(root_path, sizeof(root_path), "%s/a/b/root", tmp_dir);
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        cr_assert_eq(stat(root_path, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
        cr_expect_eq(st.st_uid, geteuid());
        cr_expect_str_eq(oci_root_path(root), root_path);

        /* A umask that would leave no bits at all still gives 0700. */
        umask(0777);
        snprintf(root_path, sizeof(root_path), "%s/other", tmp_dir);
        _cleanup_(oci_root_closep) struct oci_root *other = open_root();
        umask(022);
        cr_assert_eq(stat(root_path, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);

        /* Opening an existing root works, with a trailing slash too. */
        strcat(root_path, "/");
        _cleanup_(oci_root_closep) struct oci_root *again = open_root();
}

Test(oci_state, root_relative_path_becomes_absolute)
{
        char cwd[PATH_MAX], expected[PATH_MAX + 16];

        cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
        cr_assert_eq(chdir(tmp_dir), 0);
        snprintf(root_path, sizeof(root_path), "rel");
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        snprintf(expected, sizeof(expected), "%s/rel", tmp_dir);
        cr_expect_str_eq(oci_root_path(root), expected);
        cr_assert_eq(chdir(cwd), 0);
}

Test(oci_state, root_refuses_symlink_file_and_open_modes)
{
        struct oci_root *root = NULL;
        psrun_error err = {0};
        char target[PATH_MAX + 16], path[PATH_MAX + 16];

        snprintf(target, sizeof(target), "%s/real", tmp_dir);
        cr_assert_eq(mkdir(target, 0700), 0);
        cr_assert_eq(symlink(target, root_path), 0);
        cr_expect_eq(oci_root_open(root_path, &root, &err), -ELOOP);
        cr_expect(strstr(err.msg, "is a symbolic link; refusing it"), "%s", err.msg);
        cr_expect_null(root);

        snprintf(path, sizeof(path), "%s/file", tmp_dir);
        write_at(AT_FDCWD, path, "x", 1);
        cr_expect_eq(oci_root_open(path, &root, &err), -ENOTDIR, "%s", err.msg);
        cr_expect(strstr(err.msg, "root \""), "%s", err.msg);

        cr_assert_eq(chmod(target, 0777), 0);
        cr_expect_eq(oci_root_open(target, &root, &err), -EPERM);
        cr_expect(strstr(err.msg, "writable by group or others (mode 0777)"), "%s", err.msg);

        cr_expect_eq(oci_root_open("", &root, &err), -EINVAL);
        cr_expect_eq(oci_root_open("/", &root, &err), -EINVAL);
        cr_expect(strstr(err.msg, "must name a directory"), "%s", err.msg);
        cr_expect_null(root);
}

Test(oci_state, root_refuses_foreign_owner)
{
        struct oci_root *root = NULL;
        psrun_error err = {0};

        if (geteuid() != 0) {
                teardown(); /* a skipped test gets no fini */
                cr_skip_test("needs root to chown a directory to someone else");
        }
        cr_assert_eq(mkdir(root_path, 0700), 0);
        cr_assert_eq(chown(root_path, 65534, 65534), 0);
        cr_expect_eq(oci_root_open(root_path, &root, &err), -EPERM);
        cr_expect(strstr(err.msg, "owned by uid 65534, not by us (uid 0); refusing it"), "%s",
                  err.msg);
}

/* ---- containers ---- */

Test(oci_state, create_open_list_delete)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_strv_free_ char **ids = NULL;
        _cleanup_(oci_state_free) struct oci_state s = {0};
        psrun_error err = {0};
        struct stat st;

        const char *names[] = {"web", "db-1", "a.b"};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                oci_container_close(create(root, names[i]));
        assert_root_holds(root, "a.b db-1 web");
        cr_assert_eq(oci_container_list(root, &ids, &err), 3, "%s", err.msg);
        cr_expect_str_eq(ids[0], "a.b");
        cr_expect_str_eq(ids[1], "db-1");
        cr_expect_str_eq(ids[2], "web");
        cr_expect_null(ids[3]);

        _cleanup_(oci_container_closep) struct oci_container *c = open_container(root, "db-1");
        cr_expect_str_eq(oci_container_id(c), "db-1");
        cr_assert_eq(fstat(oci_container_dir_fd(c), &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700);
        cr_assert_eq(fstatat(oci_container_dir_fd(c), "state.json", &st, 0), 0);
        cr_expect_eq(st.st_mode & 07777, 0600);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), 0, "%s", err.msg);
        cr_assert_eq(oci_state_read(c, &s, &err), 0, "%s", err.msg);
        cr_expect_str_eq(s.id, "db-1");
        cr_expect_str_eq(s.bundle, "/bundles/b");
        cr_expect_eq(s.status, OCI_STATUS_CREATING);
        oci_container_unlock(c);

        cr_assert_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        assert_root_holds(root, "a.b web");
        strv_free(TAKE_PTR(ids));
        cr_assert_eq(oci_container_list(root, &ids, &err), 2);
        cr_expect_str_eq(ids[0], "a.b");
        cr_expect_str_eq(ids[1], "web");

        /* The handle of a deleted container answers "does not exist". */
        cr_expect_eq(oci_state_read(c, &s, &err), -ENOENT);
        cr_expect_str_eq(err.msg, "container \"db-1\" does not exist");
        cr_expect_eq(oci_container_delete(c, &err), -ENOENT);
        cr_expect_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), -ENOENT);

        /* The id is free again. */
        oci_container_close(create(root, "db-1"));
        assert_root_holds(root, "a.b db-1 web");
}

Test(oci_state, duplicate_and_missing_ids)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_state_free) struct oci_state s = {0};
        struct oci_container *c = NULL;
        psrun_error err = {0};

        oci_container_close(create(root, "x"));
        make_state(&s, "x");
        cr_expect_eq(oci_container_create(root, "x", &s, &c, &err), -EEXIST);
        cr_expect_str_eq(err.msg, "container \"x\" already exists");
        cr_expect_null(c);

        cr_expect_eq(oci_container_open(root, "nope", &c, &err), -ENOENT);
        cr_expect_str_eq(err.msg, "container \"nope\" does not exist");
        cr_expect_eq(oci_container_open(root, "../root", &c, &err), -EINVAL);
        cr_expect(strstr(err.msg, "must contain only"), "%s", err.msg);
        cr_expect_null(c);
        assert_root_holds(root, "x");
}

Test(oci_state, existing_directory_makes_create_fail)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_state_free) struct oci_state s = {0};
        struct oci_container *c = NULL;
        psrun_error err = {0};

        /* Even an empty directory (which a plain rename would replace) is taken. */
        make_state(&s, "late");
        oci_container_close(create(root, "first"));
        cr_assert_eq(mkdirat(oci_root_fd(root), "late", 0700), 0);
        cr_expect_eq(oci_container_create(root, "late", &s, &c, &err), -EEXIST);
        cr_expect_str_eq(err.msg, "container \"late\" already exists");
        assert_root_holds(root, "first late");
}

#define RACERS      8
#define RACE_ROUNDS 20

/* Exit code: how many of the ids this process created; 255 on a wrong error. */
static int race_creates(int start_fd)
{
        struct oci_root *root = NULL;
        int won = 0;
        char ch;

        if (read(start_fd, &ch, 1) != 0 || oci_root_open(root_path, &root, NULL) < 0)
                return 255;
        for (int i = 0; i < RACE_ROUNDS; i++) {
                struct oci_state s = {0};
                struct oci_container *c = NULL;
                psrun_error err = {0};
                char id[16], expected[64];

                snprintf(id, sizeof(id), "race%d", i);
                snprintf(expected, sizeof(expected), "container \"%s\" already exists", id);
                if (oci_state_init(&s, id, "/b", NULL) < 0)
                        return 255;
                int r = oci_container_create(root, id, &s, &c, &err);
                oci_state_free(&s);
                if (r == 0)
                        won++;
                else if (r != -EEXIST || strcmp(err.msg, expected) != 0)
                        return 255;
                oci_container_close(c);
        }
        return won;
}

Test(oci_state, concurrent_creates_of_one_id_have_one_winner)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_strv_free_ char **ids = NULL;
        pid_t pids[RACERS];
        int start[2], won = 0, status;

        cr_assert_eq(pipe2(start, O_CLOEXEC), 0);
        for (int i = 0; i < RACERS; i++) {
                pids[i] = fork();
                cr_assert_geq(pids[i], 0);
                if (pids[i] == 0) {
                        close(start[1]);
                        _exit(race_creates(start[0]));
                }
        }
        close(start[1]); /* EOF starts them all at once */
        for (int i = 0; i < RACERS; i++) {
                cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 255, "racer %d: %d", i,
                          status);
                won += WEXITSTATUS(status);
        }
        close(start[0]);
        cr_expect_eq(won, RACE_ROUNDS);
        cr_expect_eq(oci_container_list(root, &ids, NULL), RACE_ROUNDS);
        /* No temporary directory of a loser is left. */
        char names[4096];
        dir_names(oci_root_fd(root), names, sizeof(names));
        cr_expect_null(strchr(names, '~'), "%s", names);
}

Test(oci_state, bad_create_leaves_nothing)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_state_free) struct oci_state s = {0};
        struct oci_container *c = NULL;
        psrun_error err = {0};

        make_state(&s, "a");
        cr_expect_eq(oci_container_create(root, "..", &s, &c, &err), -EINVAL);
        cr_expect_eq(oci_container_create(root, "b", &s, &c, &err), -EINVAL);
        cr_expect(strstr(err.msg, "the state is for id \"a\" instead"), "%s", err.msg);
        free(TAKE_PTR(s.bundle));
        cr_expect_eq(oci_container_create(root, "a", &s, &c, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"a\": state: bundle is missing");
        s.bundle = strdup("/b\xff");
        cr_expect_eq(oci_container_create(root, "a", &s, &c, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"a\": state: bundle is not valid UTF-8");
        cr_expect_eq(oci_container_create(root, "a", NULL, &c, &err), -EINVAL);
        cr_expect_null(c);
        assert_root_holds(root, "");
}

Test(oci_state, delete_removes_everything_but_follows_nothing)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "d");
        char outside[PATH_MAX + 16];
        psrun_error err = {0};
        int dir_fd = oci_container_dir_fd(c);

        /* A file outside that symlinks inside point at must survive. */
        snprintf(outside, sizeof(outside), "%s/outside", tmp_dir);
        cr_assert_eq(mkdir(outside, 0700), 0);
        int ofd = open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_at(ofd, "precious", "keep", 4);
        cr_assert_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), 0, "%s", err.msg);
        cr_assert_eq(symlinkat(outside, dir_fd, "link-to-dir"), 0);
        cr_assert_eq(mkdirat(dir_fd, "sub", 0700), 0);
        int sub = openat(dir_fd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_at(sub, "f", "x", 1);
        cr_assert_eq(symlinkat(outside, sub, "escape"), 0);
        close(sub);
        write_at(dir_fd, "state.json.tmp", "{", 1);

        cr_assert_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        assert_root_holds(root, "");
        cr_expect(exists_at(ofd, "precious"));
        cr_expect_str_eq(read_at(ofd, "precious"), "keep");
        close(ofd);
}

Test(oci_state, delete_needs_exclusive_lock)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "d");
        psrun_error err = {0};

        oci_container_unlock(c);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), 0);
        cr_expect_eq(oci_container_delete(c, &err), -ENOLCK);
        cr_expect(strstr(err.msg, "exclusive"), "%s", err.msg);
        assert_root_holds(root, "d");
        oci_container_unlock(c);
        /* Unlocked: delete takes the lock itself. */
        cr_expect_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        assert_root_holds(root, "");
}

Test(oci_state, list_skips_what_is_not_a_container)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_strv_free_ char **ids = NULL;
        psrun_error err = {0};
        int fd = oci_root_fd(root);

        oci_container_close(create(root, "real"));
        cr_assert_eq(mkdirat(fd, ".new~0123456789abcdef", 0700), 0); /* a create in progress */
        cr_assert_eq(mkdirat(fd, "empty", 0700), 0);                 /* no state.json */
        write_at(fd, "file", "x", 1);
        cr_assert_eq(symlinkat("real", fd, "alias"), 0);
        cr_assert_eq(oci_container_list(root, &ids, &err), 1, "%s", err.msg);
        cr_expect_str_eq(ids[0], "real");
        cr_expect_null(ids[1]);
}

/* ---- state.json ---- */

static void fill_everything(struct oci_state *s, const char *id)
{
        psrun_error err = {0};

        make_state(s, id);
        s->status = OCI_STATUS_RUNNING;
        s->pid = 4242;
        s->pid_start_time = 18446744073709551615ULL;
        s->rootfs = strdup("/bundles/b/rootfs");
        s->owner = strdup("root");
        s->detached = true;
        cr_assert_eq(oci_state_add_annotation(s, "org.example/a", "1", &err), 0);
        cr_assert_eq(oci_state_add_annotation(s, "b", "", &err), 0);
        cr_assert_eq(oci_state_add_cgroup_path(s, "memory:/psrun/x", &err), 0);
        cr_assert_eq(oci_state_add_cgroup_path(s, ":/psrun/x", &err), 0);
}

Test(oci_state, write_read_round_trip_and_no_tmp_left)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "rt");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        psrun_error err = {0};

        fill_everything(&s, "rt");
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_expect_not(exists_at(oci_container_dir_fd(c), "state.json.tmp"));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        assert_state_eq(&s, &back);

        /* NULL rootfs, owner and no lists come back as NULL. */
        oci_state_free(&s);
        make_state(&s, "rt");
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        assert_state_eq(&s, &back);
        cr_expect_null(back.rootfs);
        cr_expect_null(back.annotations);
        cr_expect_null(back.cgroup_paths);
}

Test(oci_state, write_needs_exclusive_lock)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "w");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        psrun_error err = {0};

        make_state(&s, "w");
        oci_container_unlock(c);
        cr_expect_eq(oci_state_write(c, &s, &err), -ENOLCK);
        cr_expect_str_eq(err.msg, "container \"w\": state written without the exclusive lock");
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), 0);
        cr_expect_eq(oci_state_write(c, &s, &err), -ENOLCK);
        cr_expect_eq(oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err), -EINVAL);
        cr_expect(strstr(err.msg, "already locked shared"), "%s", err.msg);
        oci_container_unlock(c);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err), 0);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err), 0); /* no-op */
        cr_expect_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
}

Test(oci_state, crash_before_rename_keeps_old_state)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "crash");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        psrun_error err = {0};
        int dir_fd = oci_container_dir_fd(c);

        make_state(&s, "crash");
        s.status = OCI_STATUS_CREATED;
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);

        /* A writer died after writing half of its .tmp: readers see the old state. */
        const char *half = "{\n  \"ociVersion\": \"1.2.0\",\n  \"id\": \"cr";
        write_at(dir_fd, "state.json.tmp", half, strlen(half));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.status, OCI_STATUS_CREATED);

        /* The next writer replaces the leftover and leaves no .tmp behind. */
        s.status = OCI_STATUS_RUNNING;
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_expect_not(exists_at(dir_fd, "state.json.tmp"));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.status, OCI_STATUS_RUNNING);

        /* A failed write (invalid UTF-8) leaves the state as it was, no .tmp. */
        s.status = OCI_STATUS_STOPPED;
        s.owner = strdup("\xc0\xaf");
        cr_expect_eq(oci_state_write(c, &s, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"crash\": state: owner is not valid UTF-8");
        cr_expect_not(exists_at(dir_fd, "state.json.tmp"));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.status, OCI_STATUS_RUNNING);
}

Test(oci_state, corrupt_state_json)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "bad");
        _cleanup_(oci_state_free) struct oci_state good = {0};
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_free_ char *text = NULL;
        psrun_error err = {0};
        int dir_fd = oci_container_dir_fd(c);

        fill_everything(&good, "bad");
        cr_assert_eq(oci_state_write(c, &good, &err), 0, "%s", err.msg);
        text = strdup(read_at(dir_fd, "state.json"));

#define HEAD "{\"ociVersion\": \"1.2.0\", \"id\": \"bad\", "
#define TAIL "\"bundle\": \"/b\", \"created\": \"2024-01-01T00:00:00Z\"}"
        const struct {
                const char *text;
                size_t len; /* 0: strlen */
                const char *message;
        } cases[] = {
                {text, strlen(text) / 2, "container \"bad\": state.json:"},
                {"", 0, "container \"bad\": state.json: corrupt: empty"},
                {"   \n", 0, "state.json: corrupt: empty"},
                {"{\"id\": \"bad\"", 0,
                 "state.json:2:1: corrupt: did not find expected ',' or '}'"},
                {"[]", 0, "state.json:1:1: expected an object"},
                {"not json", 0, "state.json:1:1: expected an object"},
                {"{}\n---\n{}", 0, "more than one document"},
                {HEAD "\"pid\": 1, \"status\": \"running\"}", 0, "missing \"bundle\""},
                {HEAD "\"pid\": -1, \"status\": \"running\", " TAIL, 0,
                 "pid: expected a non-negative integer"},
                {HEAD "\"pid\": \"7\", \"status\": \"running\", " TAIL, 0,
                 "pid: expected a non-negative integer"},
                {HEAD "\"pid\": 99999999999, \"status\": \"running\", " TAIL, 0,
                 "pid: out of range"},
                {HEAD "\"pid\": 1, \"status\": \"bogus\", " TAIL, 0,
                 "status: \"bogus\" is not one of creating, created, running, paused, stopped"},
                {HEAD "\"pid\": 1, \"status\": running, " TAIL, 0, "status: expected a string"},
                {HEAD "\"pid\": 1, \"pid\": 2, \"status\": \"running\", " TAIL, 0,
                 "duplicate key \"pid\""},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"owner\": \"a\\u0000b\", " TAIL, 0,
                 "owner: contains a NUL character"},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"annotations\": [], " TAIL, 0,
                 "annotations: expected an object"},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"annotations\": {\"k\": \"1\", "
                      "\"k\": \"2\"}, " TAIL,
                 0, "annotations: duplicate key \"k\""},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"psrun\": {\"detached\": 1}, " TAIL, 0,
                 "psrun.detached: expected true or false"},
                {HEAD
                 "\"pid\": 1, \"status\": \"running\", \"psrun\": {\"cgroupPaths\": \"x\"}, " TAIL,
                 0, "psrun.cgroupPaths: expected a list"},
                {"{\"ociVersion\": \"1.2.0\", \"id\": \"other\", \"pid\": 1, \"status\": "
                 "\"running\", " TAIL,
                 0, "container \"bad\": state.json is for id \"other\" instead"},
                {"{\"ociVersion\": \"1.2.0\", \"id\": \"a/b\", \"pid\": 1, \"status\": "
                 "\"running\", " TAIL,
                 0, "state.json: id \"a/b\" is not a valid id"},
                {"{\"id\": \"b\xff\"}", 0, "state.json:1:10: corrupt: invalid"},
        };
#undef HEAD
#undef TAIL
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
                write_at(dir_fd, "state.json", cases[i].text, len);
                cr_expect_eq(oci_state_read(c, &s, &err), -EBADMSG, "case %zu: %s", i, err.msg);
                cr_expect(strstr(err.msg, cases[i].message), "case %zu: %s", i, err.msg);
                cr_expect_null(strchr(err.msg, '\n'), "case %zu: not one line", i);
                cr_expect_null(s.id, "case %zu: state left filled", i);
        }

        /* Unknown keys are skipped; a compact (runc-like) file reads too. */
        const char *compact = "{\"ociVersion\":\"1.2.0\",\"id\":\"bad\",\"pid\":12,\"status\":"
                              "\"paused\",\"bundle\":\"/b\",\"created\":\"x\",\"future\":{\"a\":"
                              "[1,2]},\"psrun\":{\"more\":true}}";
        write_at(dir_fd, "state.json", compact, strlen(compact));
        cr_assert_eq(oci_state_read(c, &s, &err), 0, "%s", err.msg);
        cr_expect_eq(s.pid, 12);
        cr_expect_eq(s.status, OCI_STATUS_PAUSED);

        /* Not a regular file: a FIFO in its place must not hang the reader. */
        cr_assert_eq(unlinkat(dir_fd, "state.json", 0), 0);
        cr_assert_eq(mkfifoat(dir_fd, "state.json", 0600), 0);
        cr_expect_eq(oci_state_read(c, &s, &err), -EBADMSG);
        cr_expect(strstr(err.msg, "not a regular file"), "%s", err.msg);
}

Test(oci_state, parse_is_pure_and_bounded)
{
        _cleanup_(oci_state_free) struct oci_state s = {0};
        psrun_error err = {0};
        size_t big = (4 << 20) + 1;
        _cleanup_free_ char *huge = malloc(big);

        memset(huge, ' ', big);
        cr_expect_eq(oci_state_parse(&s, "x.json", huge, big, &err), -EFBIG);
        cr_expect_str_eq(err.msg, "x.json: larger than 4 MiB");
        cr_expect_eq(oci_state_parse(&s, NULL, NULL, 0, NULL), -EBADMSG);
        /* Aliases can't loop the walk: they only reach nodes the table knows. */
        const char *alias = "{ociVersion: &v \"1\", id: \"a\", pid: 1, status: \"created\", "
                            "bundle: *v, created: *v, annotations: &m {\"k\": *v}}";
        cr_assert_eq(oci_state_parse(&s, NULL, alias, strlen(alias), &err), 0, "%s", err.msg);
        cr_expect_str_eq(s.bundle, "1");
        cr_expect_str_eq(s.annotations[0].value, "1");
}

/* ---- hostile strings ---- */

static bool valid_utf8(const unsigned char *p)
{
        while (*p) {
                int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;
                if (*p >= 0xf8 || (*p >= 0x80 && *p < 0xc2))
                        return false;
                for (int i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                p += n;
        }
        return true;
}

Test(oci_state, hostile_annotations_round_trip_exactly)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "h");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        _cleanup_(oci_state_free) struct oci_state printed = {0};
        psrun_error err = {0};
        const char *hostile[][2] = {
                {"quote\"key", "a \"quoted\" value"},
                {"back\\slash", "C:\\path\\"},
                {"nl", "line1\nline2\r\n\ttab"},
                {"ctl", "\x01\x02\x1b[31mred\x1b[0m\x1f\x7f"},
                {"c1", "\xc2\x80 \xc2\x85 \xc2\x9f"}, /* U+0080, NEL, U+009F */
                {"seps", "a\xe2\x80\xa8"
                         "b\xe2\x80\xa9"
                         "c"},                                        /* U+2028, U+2029 */
                {"nonchars", "\xef\xbb\xbf\xef\xbf\xbe\xef\xbf\xbf"}, /* BOM, U+FFFE, U+FFFF */
                {"emoji \xf0\x9f\x90\xb3", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"},
                {"yaml", "&anchor *alias !tag {a: b} [1] # not a comment : -"},
                {"json", "\"}, \"pid\": 1, \"x\": {\""},
                {"spaces", "  leading and trailing  "},
        };

        make_state(&s, "h");
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++)
                cr_assert_eq(oci_state_add_annotation(&s, hostile[i][0], hostile[i][1], &err), 0,
                             "%s", err.msg);
        cr_expect_eq(oci_state_add_annotation(&s, "nl", "again", &err), -EEXIST);
        cr_expect_str_eq(err.msg, "annotation \"nl\" given twice");
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        assert_state_eq(&s, &back);

        /* The file holds no raw control characters: one JSON token per line. */
        const unsigned char *file =
                (const unsigned char *) read_at(oci_container_dir_fd(c), "state.json");
        for (const unsigned char *p = file; *p; p++)
                cr_expect(*p >= 0x20 || *p == '\n', "raw byte 0x%02x in state.json", *p);
        cr_expect(valid_utf8(file));
        cr_expect(strstr((const char *) file, "\\u2028"), "%s", file);

        /* The public view parses back to the same annotations. */
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        cr_assert_eq(oci_state_print_json(&s, f), 0);
        fclose(f);
        _cleanup_free_ char *owned = out;
        cr_expect(valid_utf8((const unsigned char *) out));
        cr_assert_eq(oci_state_parse(&printed, "print", out, len, &err), 0, "%s\n%s", err.msg, out);
        cr_assert_eq(printed.n_annotations, ARRAY_SIZE(hostile));
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
                cr_expect_str_eq(printed.annotations[i].key, hostile[i][0]);
                cr_expect_str_eq(printed.annotations[i].value, hostile[i][1], "%s", hostile[i][0]);
        }
        /* No C1 control (U+009B is a terminal's CSI) reaches the output raw. */
        cr_expect_null(strstr(out, "\xc2\x80"));
        cr_expect_null(strstr(out, "\xc2\x9f"));
}

Test(oci_state, invalid_utf8_is_escaped_in_print_and_refused_in_file)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "u");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        psrun_error err = {0};
        const char *bad[] = {
                "\xff",             /* never valid */
                "\xc0\xaf",         /* overlong '/' */
                "\xed\xa0\x80",     /* a surrogate */
                "\xf4\x90\x80\x80", /* past U+10FFFF */
                "ok\xe2\x82",       /* truncated */
        };

        make_state(&s, "u");
        cr_assert_eq(oci_state_add_annotation(&s, "k", "x", &err), 0);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                free(s.annotations[0].value);
                s.annotations[0].value = strdup(bad[i]);
                cr_expect_eq(oci_state_write(c, &s, &err), -EINVAL, "case %zu", i);
                cr_expect_str_eq(err.msg,
                                 "container \"u\": state: annotations[\"k\"] is not valid UTF-8");

                char *out = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&out, &len);
                cr_assert_eq(oci_state_print_json(&s, f), 0);
                fclose(f);
                cr_expect(valid_utf8((const unsigned char *) out), "case %zu: %s", i, out);
                cr_expect(strstr(out, "\\u00"), "case %zu: %s", i, out);
                cr_expect_eq(oci_state_parse(&back, "print", out, len, &err), 0, "%s", err.msg);
                free(out);
        }
        free(s.annotations[0].value);
        s.annotations[0].value = strdup("fine");
        free(s.annotations[0].key);
        s.annotations[0].key = strdup("\xfe");
        cr_expect_eq(oci_state_write(c, &s, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"u\": state: annotations key \"\xfe\" is not valid "
                                  "UTF-8");
        /* Nothing of that reached the disk. */
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.n_annotations, 0);
}

Test(oci_state, print_json_like_runc_state)
{
        struct oci_state s = {
                .oci_version = "1.2.0",
                .id = "web",
                .status = OCI_STATUS_RUNNING,
                .pid = 4242,
                .bundle = "/b",
                .rootfs = "/b/rootfs",
                .created = "2024-05-01T12:34:56.123456789Z",
                .owner = NULL,
                .pid_start_time = 99,
                .detached = true,
        };
        struct oci_annotation a[] = {{"z", "1"}, {"a", "2"}};
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        cr_assert_eq(oci_state_print_json(&s, f), 0);
        s.annotations = a;
        s.n_annotations = 2;
        s.status = OCI_STATUS_STOPPED;
        s.pid = 0;
        cr_assert_eq(oci_state_print_json(&s, f), 0);
        fclose(f);
        cr_expect_str_eq(out, "{\n"
                              "  \"ociVersion\": \"1.2.0\",\n"
                              "  \"id\": \"web\",\n"
                              "  \"pid\": 4242,\n"
                              "  \"status\": \"running\",\n"
                              "  \"bundle\": \"/b\",\n"
                              "  \"rootfs\": \"/b/rootfs\",\n"
                              "  \"created\": \"2024-05-01T12:34:56.123456789Z\",\n"
                              "  \"owner\": \"\"\n"
                              "}\n"
                              "{\n"
                              "  \"ociVersion\": \"1.2.0\",\n"
                              "  \"id\": \"web\",\n"
                              "  \"pid\": 0,\n"
                              "  \"status\": \"stopped\",\n"
                              "  \"bundle\": \"/b\",\n"
                              "  \"rootfs\": \"/b/rootfs\",\n"
                              "  \"created\": \"2024-05-01T12:34:56.123456789Z\",\n"
                              "  \"owner\": \"\",\n"
                              "  \"annotations\": {\n"
                              "    \"z\": \"1\",\n"
                              "    \"a\": \"2\"\n"
                              "  }\n"
                              "}\n");
        free(out);
}

/* ---- locking across processes ---- */

/* Runs fn in a child with its own handle; returns its exit status. */
static int in_child(int (*fn)(struct oci_container *c, void *arg), void *arg)
{
        pid_t pid = fork();
        int status;

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct oci_root *root = NULL;
                struct oci_container *c = NULL;
                if (oci_root_open(root_path, &root, NULL) < 0 ||
                    oci_container_open(root, "l", &c, NULL) < 0)
                        _exit(100);
                _exit(fn(c, arg));
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

struct try_lock {
        enum oci_lock_mode mode;
        int timeout_ms;
};

/* 0: locked; 1: EBUSY with the right message; 2: anything else. */
static int child_try_lock(struct oci_container *c, void *arg)
{
        const struct try_lock *t = arg;
        psrun_error err = {0};
        int r = oci_container_lock_timeout(c, t->mode, t->timeout_ms, &err);

        if (r == 0)
                return 0;
        if (r == -EBUSY && strstr(err.msg, "container \"l\" is busy: another psrun process holds "
                                           "its lock (waited"))
                return 1;
        return 2;
}

Test(oci_state, exclusive_lock_excludes_other_processes)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "l");
        struct try_lock shared_now = {OCI_LOCK_SHARED, 0};
        struct try_lock exclusive_now = {OCI_LOCK_EXCLUSIVE, 0};
        struct try_lock exclusive_wait = {OCI_LOCK_EXCLUSIVE, 300};
        struct timespec t0, t1;

        /* create returns the container locked exclusively. */
        cr_expect_eq(in_child(child_try_lock, &shared_now), 1);
        cr_expect_eq(in_child(child_try_lock, &exclusive_now), 1);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_expect_eq(in_child(child_try_lock, &exclusive_wait), 1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long waited_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        cr_expect_geq(waited_ms, 290, "gave up after %ld ms", waited_ms);
        cr_expect_lt(waited_ms, 3000, "gave up after %ld ms", waited_ms);

        oci_container_unlock(c);
        cr_expect_eq(in_child(child_try_lock, &exclusive_now), 0);
}

Test(oci_state, shared_locks_coexist)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "l");
        struct try_lock shared_now = {OCI_LOCK_SHARED, 0};
        struct try_lock exclusive_now = {OCI_LOCK_EXCLUSIVE, 0};
        psrun_error err = {0};

        oci_container_unlock(c);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), 0, "%s", err.msg);
        cr_expect_eq(in_child(child_try_lock, &shared_now), 0);
        cr_expect_eq(in_child(child_try_lock, &exclusive_now), 1);
}

static int child_wait_for_lock(struct oci_container *c, void *arg)
{
        int ready_fd = *(int *) arg;
        psrun_error err = {0};

        /* Tell the parent we are about to wait, then wait up to 5 s. */
        if (write(ready_fd, "r", 1) != 1)
                return 3;
        return oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err) == 0 ? 0 : 2;
}

Test(oci_state, waiting_locker_gets_the_lock_when_released)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "l");
        int fds[2], status;
        char ch;

        cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct oci_root *r = NULL;
                struct oci_container *mine = NULL;
                if (oci_root_open(root_path, &r, NULL) < 0 ||
                    oci_container_open(r, "l", &mine, NULL) < 0)
                        _exit(100);
                _exit(child_wait_for_lock(mine, &fds[1]));
        }
        cr_assert_eq(read(fds[0], &ch, 1), 1);
        usleep(200 * 1000);
        cr_expect_eq(waitpid(pid, &status, WNOHANG), 0, "the child did not wait");
        oci_container_unlock(c);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
        close(fds[0]);
        close(fds[1]);
}

Test(oci_state, locker_learns_of_delete_that_ran_while_it_waited)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "gone");
        _cleanup_(oci_container_closep) struct oci_container *other = NULL;
        psrun_error err = {0};

        oci_container_unlock(c);
        other = open_container(root, "gone");
        cr_assert_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        cr_expect_eq(oci_container_lock(other, OCI_LOCK_SHARED, &err), -ENOENT);
        cr_expect_str_eq(err.msg, "container \"gone\" does not exist");

        /* A new container under the same id is not the one the handle held. */
        oci_container_close(create(root, "gone"));
        cr_expect_eq(oci_container_lock(other, OCI_LOCK_EXCLUSIVE, &err), -ENOENT);
        assert_root_holds(root, "gone");
}

Test(oci_state, locker_notices_a_moved_directory)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "m");
        psrun_error err = {0};

        oci_container_unlock(c);
        cr_assert_eq(renameat(oci_root_fd(root), "m", oci_root_fd(root), "moved"), 0);
        cr_expect_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), -ENOENT);
        cr_expect_str_eq(err.msg, "container \"m\" does not exist");
}

Test(oci_state, delete_refuses_to_empty_a_mount_point)
{
        psrun_error err = {0};
        char sub[PATH_MAX + 16];

        /* Each Criterion test is its own process: the mount stays in its
         * namespace. Unshare first: fds opened before would see the old one. */
        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                teardown(); /* a skipped test gets no fini */
                cr_skip_test("needs root to mount in a private mount namespace");
        }
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "mnt");
        int dir_fd = oci_container_dir_fd(c);

        cr_assert_eq(mkdirat(dir_fd, "sub", 0700), 0);
        snprintf(sub, sizeof(sub), "%s/mnt/sub", root_path);
        cr_assert_eq(mount("tmpfs", sub, "tmpfs", 0, "size=64k"), 0, "%s", strerror(errno));
        int fd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_at(fd, "theirs", "x", 1);

        cr_expect_eq(oci_container_delete(c, &err), -EBUSY);
        cr_expect_str_eq(err.msg, "container \"mnt\": delete: remove \"sub\": is a mount point");
        cr_expect(exists_at(fd, "theirs"));
        /* Still a container: delete can be tried again. */
        cr_expect(exists_at(dir_fd, "state.json"));
        cr_assert_eq(umount2(sub, MNT_DETACH), 0);
        cr_expect_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        assert_root_holds(root, "");
        close(fd);
}

/* ---- liveness ---- */

static struct oci_state running_state(pid_t pid, uint64_t start_time)
{
        struct oci_state s = {
                .status = OCI_STATUS_RUNNING, .pid = pid, .pid_start_time = start_time};
        return s;
}

Test(oci_state, proc_stat_reads_start_time)
{
        uint64_t a = 0, b = 0;
        char st = 0;

        cr_assert_eq(oci_proc_stat(getpid(), &st, &a), 0);
        cr_expect_eq(st, 'R');
        cr_expect_gt(a, 0);
        cr_assert_eq(oci_proc_stat(getpid(), NULL, &b), 0);
        cr_expect_eq(a, b);
        cr_expect_eq(oci_proc_stat(0, NULL, NULL), -EINVAL);
        cr_expect_eq(oci_proc_stat(INT_MAX, NULL, NULL), -ENOENT);
}

Test(oci_state, refresh_live_dead_zombie_and_reused_pids)
{
        struct oci_state s;
        uint64_t self_start;
        psrun_error err = {0};
        int status;

        cr_assert_eq(oci_proc_stat(getpid(), NULL, &self_start), 0);

        /* Our own pid with its real start time: still running. */
        s = running_state(getpid(), self_start);
        cr_expect_eq(oci_state_refresh(&s), 0);
        cr_expect_eq(s.status, OCI_STATUS_RUNNING);
        cr_expect_eq(s.pid, getpid());

        /* The same pid with another start time is another process. */
        s = running_state(getpid(), self_start + 1);
        cr_expect_eq(oci_state_refresh(&s), 1);
        cr_expect_eq(s.status, OCI_STATUS_STOPPED);
        cr_expect_eq(s.pid, 0);
        cr_expect_eq(s.pid_start_time, 0);

        /* A sleeping child, then the same child killed and reaped. */
        pid_t child = fork();
        cr_assert_geq(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        s = (struct oci_state){.status = OCI_STATUS_CREATED};
        cr_assert_eq(oci_state_set_pid(&s, child, &err), 0, "%s", err.msg);
        cr_expect_gt(s.pid_start_time, 0);
        cr_expect_eq(oci_state_refresh(&s), 0);
        cr_expect_eq(s.status, OCI_STATUS_CREATED);
        s.status = OCI_STATUS_PAUSED;
        cr_expect_eq(oci_state_refresh(&s), 0);

        /* Killed but not reaped: a zombie is stopped. */
        kill(child, SIGKILL);
        for (int i = 0; i < 200; i++) {
                char st = 0;
                if (oci_proc_stat(child, &st, NULL) == 0 && st == 'Z')
                        break;
                usleep(10 * 1000);
        }
        struct oci_state zombie = s;
        cr_expect_eq(oci_state_refresh(&zombie), 1);
        cr_expect_eq(zombie.status, OCI_STATUS_STOPPED);

        cr_assert_eq(waitpid(child, &status, 0), child);
        cr_expect_eq(oci_state_refresh(&s), 1);
        cr_expect_eq(s.status, OCI_STATUS_STOPPED);
        cr_expect_eq(oci_state_set_pid(&s, child, &err), -ENOENT);

        /* Statuses without a live process are left alone; no pid is stopped. */
        s = running_state(child, 0);
        s.status = OCI_STATUS_CREATING;
        cr_expect_eq(oci_state_refresh(&s), 0);
        cr_expect_eq(s.status, OCI_STATUS_CREATING);
        s.status = OCI_STATUS_STOPPED;
        cr_expect_eq(oci_state_refresh(&s), 0);
        s = running_state(0, 0);
        cr_expect_eq(oci_state_refresh(&s), 1);
}

/* ---- the create/start handshake ---- */

Test(oci_state, fifo_handshake_between_processes)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "hs");
        char path[PATH_MAX], expected[PATH_MAX + 32], byte = 0;
        psrun_error err = {0};
        struct stat st;
        int status;

        cr_assert_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), 0, "%s", err.msg);
        cr_assert_eq(fstatat(oci_container_dir_fd(c), OCI_EXEC_FIFO, &st, AT_SYMLINK_NOFOLLOW), 0);
        cr_expect(S_ISFIFO(st.st_mode));
        cr_expect_eq(st.st_mode & 07777, 0600);
        cr_expect_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), -EEXIST);
        cr_expect_str_eq(err.msg, "container \"hs\": exec.fifo already exists");
        cr_assert_eq(oci_container_fifo_path(c, OCI_EXEC_FIFO, path, sizeof(path)), 0);
        snprintf(expected, sizeof(expected), "%s/hs/exec.fifo", root_path);
        cr_expect_str_eq(path, expected);
        char small[8];
        cr_expect_eq(oci_container_fifo_path(c, OCI_EXEC_FIFO, small, sizeof(small)),
                     -ENAMETOOLONG);

        /* create ends here: the "init" blocks opening the FIFO for writing. */
        oci_container_unlock(c);
        pid_t init = fork();
        cr_assert_geq(init, 0);
        if (init == 0) {
                int fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, "0", 1) != 1)
                        _exit(100);
                close(fd);
                _exit(42); /* stands for execve() of the user process */
        }
        usleep(200 * 1000);
        char st_letter = 0;
        cr_expect_eq(waitpid(init, &status, WNOHANG), 0, "init did not block");
        cr_expect_eq(oci_proc_stat(init, &st_letter, NULL), 0);
        cr_expect_eq(st_letter, 'S');

        /* start: a non-blocking open, a poll, the byte, and init goes on. */
        int fd = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_RDONLY | O_NONBLOCK, &err);
        cr_assert_geq(fd, 0, "%s", err.msg);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        cr_assert_eq(poll(&pfd, 1, 5000), 1);
        cr_assert_eq(read(fd, &byte, 1), 1);
        cr_expect_eq(byte, '0');
        close(fd);
        cr_assert_eq(waitpid(init, &status, 0), init);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 42, "status %d", status);

        /* A second start finds no writer: EOF, not a hang. */
        fd = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_RDONLY | O_NONBLOCK, &err);
        cr_assert_geq(fd, 0, "%s", err.msg);
        cr_expect_eq(read(fd, &byte, 1), 0);
        close(fd);

        cr_assert_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        assert_root_holds(root, "");
}

Test(oci_state, fifo_names_and_types_checked)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "f");
        psrun_error err = {0};
        char path[PATH_MAX];
        const char *bad[] = {"", ".", "..", "a/b", "../x", "state.json", "lock", "state.json.tmp"};

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_expect_eq(oci_container_make_fifo(c, bad[i], &err), -EINVAL, "%s", bad[i]);
                cr_expect(strstr(err.msg, "is not a FIFO name"), "%s", err.msg);
                cr_expect_eq(oci_container_open_fifo(c, bad[i], O_PATH, &err), -EINVAL);
                cr_expect_eq(oci_container_fifo_path(c, bad[i], path, sizeof(path)), -EINVAL);
        }
        cr_expect_eq(oci_container_open_fifo(c, OCI_EXEC_FIFO, O_PATH, &err), -ENOENT);
        cr_expect_str_eq(err.msg, "container \"f\": exec.fifo does not exist");
        write_at(oci_container_dir_fd(c), "plain", "x", 1);
        cr_expect_eq(oci_container_open_fifo(c, "plain", O_RDONLY, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"f\": plain is not a FIFO");
        cr_assert_eq(symlinkat("/dev/null", oci_container_dir_fd(c), "sym"), 0);
        cr_expect_lt(oci_container_open_fifo(c, "sym", O_RDONLY, &err), 0);

        /* An O_PATH fd is what create hands to the child. */
        cr_assert_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), 0, "%s", err.msg);
        int fd = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_PATH, &err);
        cr_assert_geq(fd, 0, "%s", err.msg);
        cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
}
