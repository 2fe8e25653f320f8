/* SPDX-License-Identifier: MIT */
/* The state root's one check (runtime/session/root.c), for root's own
 * roots: a symbolic link, another user's directory or one its group may
 * write is refused by create, open and list alike, naming it, and nothing
 * is made in it or where it points. */
#include "session/common.h"

#include <fcntl.h>

TestSuite(state_root, .init = test_require_root);

/* Create, open and list with root as the state root each fail with one
 * line holding want; nothing is left in dir (where root leads). */
static void expect_refused(const char *root, const char *dir, const char *want)
{
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        psrun_session_options o = {.name = "t", .state_dir = root};
        psrun_session *s = NULL;
        cr_expect_eq(psrun_session_create(p, &o, &s, &err), -EPERM, "create: %s", err.msg);
        psrun_policy_free(p);
        cr_expect(strstr(err.msg, want) && !strchr(err.msg, '\n'), "create: %s", err.msg);
        err = (psrun_error){0};
        cr_expect_eq(psrun_session_open("t", root, &s, &err), -EPERM, "open: %s", err.msg);
        cr_expect(strstr(err.msg, want), "open: %s", err.msg);
        psrun_session_info *list = NULL;
        size_t n = 9;
        err = (psrun_error){0};
        cr_expect_eq(psrun_session_list(root, &list, &n, &err), -EPERM, "list: %s", err.msg);
        cr_expect(strstr(err.msg, want), "list: %s", err.msg);
        cr_expect_eq(n, 0);
        char t[256];
        snprintf(t, sizeof(t), "%s/t", dir);
        struct stat st;
        cr_expect_neq(lstat(t, &st), 0, "%s was made", t);
}

static void fresh(char *dir, size_t size)
{
        test_tmp_template(dir, size, "psrun-sroot");
        cr_assert_not_null(mkdtemp(dir));
}

Test(state_root, a_symbolic_link_is_refused)
{
        /* To a directory root would accept: the link itself is the fault. */
        char dir[64], link[80];
        fresh(dir, sizeof(dir));
        snprintf(link, sizeof(link), "%s.link", dir);
        cr_assert_eq(symlink(dir, link), 0);
        expect_refused(link, dir, "is a symbolic link");
        unlink(link);
        rmdir(dir);
}

Test(state_root, another_users_directory_is_refused)
{
        char dir[64];
        fresh(dir, sizeof(dir));
        cr_assert_eq(chown(dir, 4242, 4242), 0);
        expect_refused(dir, dir, "is owned by another user");
        rmdir(dir);
}

Test(state_root, a_group_writable_directory_is_refused)
{
        char dir[64];
        fresh(dir, sizeof(dir));
        cr_assert_eq(chmod(dir, 0775), 0);
        expect_refused(dir, dir, "is writable by its group or others");
        rmdir(dir);
}

Test(state_root, a_missing_root_is_made_0700_and_then_used)
{
        char dir[64], root[96];
        fresh(dir, sizeof(dir));
        snprintf(root, sizeof(root), "%s/a/b", dir);
        psrun_session_info *list = NULL;
        size_t n = 9;
        psrun_error err = {0};
        /* Absent: no sessions, nothing made. */
        cr_expect_eq(psrun_session_list(root, &list, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0);
        struct stat st;
        cr_expect_neq(stat(root, &st), 0);
        psrun_policy *p = psrun_policy_new();
        psrun_session_options o = {.name = "t", .state_dir = root};
        psrun_session *s = NULL;
        cr_assert_eq(psrun_session_create(p, &o, &s, &err), 0, "%s", err.msg);
        psrun_policy_free(p);
        cr_expect_eq(stat(root, &st), 0);
        cr_expect_eq(st.st_mode & 0777, 0700, "%o", st.st_mode & 0777);
        cr_expect_eq(psrun_session_destroy(s, &err), 0, "%s", err.msg);
        char a[80];
        snprintf(a, sizeof(a), "%s/a", dir);
        rmdir(root);
        rmdir(a);
        rmdir(dir);
}
