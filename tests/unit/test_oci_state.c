/* SPDX-License-Identifier: MIT */
/*
 * The OCI state directory: ids, statuses and timestamps, the root,
 * create/open/list/delete, and locking across processes. The state record
 * (state.json, liveness, the FIFO handshake) is in test_oci_state_record.c.
 */
#include "oci_state_test.h"

TestSuite(oci_state, .init = setup, .fini = teardown, .timeout = 30);

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
                else if (r != -EEXIST || strcmp(err.msg, expected) != 0) {
                        fprintf(stderr, "racer: create %s: %d %s\n", id, r, err.msg);
                        return 255;
                }
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
        char names[4096];
        dir_names(oci_root_fd(root), names, sizeof(names));
        psrun_error lerr = {0};
        int listed = oci_container_list(root, &ids, &lerr);
        char *listed_names = NULL;
        size_t ln = 0;
        FILE *lf = open_memstream(&listed_names, &ln);
        for (int i = 0; listed > 0 && i < listed; i++)
                fprintf(lf, "%s ", ids[i]);
        fclose(lf);
        cr_expect_eq(listed, RACE_ROUNDS, "listed %d (%s): %s; the root holds: %s", listed,
                     lerr.msg, listed_names, names);
        free(listed_names);
        /* No temporary directory of a loser is left. */
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

/* Field 22 of /proc/PID/stat: when the process started. */
static unsigned long long start_time_of(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        cr_assert_not_null(p);
        unsigned long long v = 0;
        int field = 2;
        for (p++; *p && field < 22; p++)
                if (*p == ' ')
                        field++;
        cr_assert_eq(sscanf(p, "%llu", &v), 1);
        return v;
}

/* A create's temporary directory is named after its creator (pid
 * namespace, pid, start time): one whose creator is gone is a dead
 * create's even while it is fresh, so that delete --force and gc right
 * after a killed create leave nothing; a live creator's is kept. */
Test(oci_state, sweep_removes_a_fresh_temp_dir_of_a_dead_creator)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        int rfd = oci_root_fd(root);
        psrun_error err = {0};
        struct stat ns;
        cr_assert_eq(stat("/proc/self/ns/pid", &ns), 0);
        pid_t child = fork();
        cr_assert_geq(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        unsigned long long child_start = start_time_of(child);
        kill(child, SIGKILL);
        cr_assert_eq(waitpid(child, NULL, 0), child);
        char dead[128], live[128];
        snprintf(dead, sizeof(dead), ".new~%llx-%d-%llu-0badc0de", (unsigned long long) ns.st_ino,
                 (int) child, child_start);
        snprintf(live, sizeof(live), ".new~%llx-%d-%llu-0badc0de", (unsigned long long) ns.st_ino,
                 (int) getpid(), start_time_of(getpid()));
        cr_assert_eq(mkdirat(rfd, dead, 0700), 0);
        cr_assert_eq(mkdirat(rfd, live, 0700), 0);
        cr_assert_eq(oci_root_sweep(root, &err), 1, "%s", err.msg);
        cr_expect_neq(faccessat(rfd, dead, F_OK, 0), 0, "the dead creator's directory stayed");
        cr_expect_eq(faccessat(rfd, live, F_OK, 0), 0, "a live creator's directory went");
        /* Whatever its timestamp says: one ahead of time() (fine-grained
         * timestamps run ahead of the clock time() reads; concurrent creates
         * of one id lost their directories to each other's sweeps) or old. */
        const struct timespec ahead[2] = {{.tv_sec = time(NULL) + 1}, {.tv_sec = time(NULL) + 1}},
                              old[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
        cr_assert_eq(utimensat(rfd, live, ahead, 0), 0);
        cr_assert_eq(oci_root_sweep(root, &err), 0, "%s", err.msg);
        cr_assert_eq(utimensat(rfd, live, old, 0), 0);
        cr_assert_eq(oci_root_sweep(root, &err), 0, "%s", err.msg);
        cr_expect_eq(faccessat(rfd, live, F_OK, 0), 0, "a live creator's directory went");
        /* A create makes its directory under such a name. */
        oci_container_close(create(root, "named"));
        cr_assert_eq(unlinkat(rfd, live, AT_REMOVEDIR), 0);
}

/* Issue 10: a create killed between making its ".new~..." directory and
 * renaming it left a directory that list does not show and delete refuses
 * as an invalid id; a delete killed after removing state.json left one
 * too. The sweep (create, delete and gc run it) removes exactly those:
 * never a fresh temporary directory, a locked one, or an empty one. */
Test(oci_state, sweep_removes_what_killed_commands_left)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        int rfd = oci_root_fd(root);
        struct timespec old[2] = {{.tv_sec = time(NULL) - 60}, {.tv_sec = time(NULL) - 60}};
        psrun_error err = {0};

        oci_container_close(create(root, "live"));
        /* Dead creates: one with its lock, one killed before making it. */
        cr_assert_eq(mkdirat(rfd, ".new~dead1", 0700), 0);
        int d = openat(rfd, ".new~dead1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_at(d, "lock", "", 0);
        write_at(d, "state.json", "{}", 2);
        close(d);
        cr_assert_eq(utimensat(rfd, ".new~dead1", old, 0), 0);
        cr_assert_eq(mkdirat(rfd, ".new~dead2", 0700), 0);
        cr_assert_eq(utimensat(rfd, ".new~dead2", old, 0), 0);
        /* A create in progress: fresh, or old but holding its lock. */
        cr_assert_eq(mkdirat(rfd, ".new~fresh", 0700), 0);
        cr_assert_eq(mkdirat(rfd, ".new~held", 0700), 0);
        d = openat(rfd, ".new~held", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_at(d, "lock", "", 0);
        int held = openat(d, "lock", O_RDONLY | O_CLOEXEC);
        close(d);
        cr_assert_eq(flock(held, LOCK_EX), 0);
        cr_assert_eq(utimensat(rfd, ".new~held", old, 0), 0);
        /* A delete killed after state.json went; an empty directory. */
        cr_assert_eq(mkdirat(rfd, "halfgone", 0700), 0);
        d = openat(rfd, "halfgone", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_at(d, "lock", "", 0);
        close(d);
        cr_assert_eq(mkdirat(rfd, "empty", 0700), 0);

        cr_assert_eq(oci_root_sweep(root, &err), 3, "%s", err.msg);
        assert_root_holds(root, ".new~fresh .new~held empty live");
        close(held);
        cr_assert_eq(oci_root_sweep(root, &err), 1, "%s", err.msg);
        assert_root_holds(root, ".new~fresh empty live");
}
