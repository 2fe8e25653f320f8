/* SPDX-License-Identifier: MIT */
/*
 * The sessions' state root (runtime/session/proto.h): which directory, and
 * the one place that checks it before anything in it is trusted. Root's is
 * /run/psrun-sessions; a user's $XDG_RUNTIME_DIR/psrun/sessions
 * (docs/rootless.md), never a shared /tmp path another user could make
 * first. A root that is a symbolic link, not the caller's, or writable by
 * its group or the world is refused: whoever could write it could plant a
 * control socket the caller would talk to, or swap a session's directory.
 */
#include "runtime/session/proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"

/* lstat of path: 1 a directory the caller owns that nobody else may write,
 * 0 absent, else the error naming path and why. */
static int check_dir(const char *path, psrun_error *err)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : psrun_error_errno(err, errno, "session: %s", path);
        const char *why = NULL;
        if (S_ISLNK(st.st_mode))
                why = "is a symbolic link";
        else if (!S_ISDIR(st.st_mode))
                why = "is not a directory";
        else if (st.st_uid != geteuid())
                why = "is owned by another user";
        else if (st.st_mode & 0022)
                why = "is writable by its group or others";
        if (why)
                return psrun_error_set(err, EPERM,
                                       "session: state directory %s %s (it must be a directory "
                                       "of uid %u that nobody else can write)",
                                       path, why, (unsigned) geteuid());
        return 1;
}

/* path checked, made (mode) when absent and create is set. */
static int ensure_dir(const char *path, mode_t mode, bool create, psrun_error *err)
{
        int r = check_dir(path, err);
        if (r != 0 || !create)
                return r;
        if (mkdir(path, mode) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "session: create %s", path);
        /* Checked again: what is there now, ours or one planted meanwhile. */
        r = check_dir(path, err);
        return r == 0 ? psrun_error_set(err, ENOENT, "session: %s vanished", path) : r;
}

/* The parents of a root psrun makes itself (/run/psrun-sessions for
 * root): made 0755 where missing, never checked (they are the system's). */
static int make_parents(const char *path)
{
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
        return 0;
}

/* A user's root: $XDG_RUNTIME_DIR (the user's, as pam_systemd makes it),
 * then psrun/ and psrun/sessions/ in it, 0700, each checked. */
static int user_root(bool create, char **ret, psrun_error *err)
{
        const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
        if (!xdg || xdg[0] != '/')
                return psrun_error_set(err, ENOENT,
                                       "session: XDG_RUNTIME_DIR is not set (or not absolute): "
                                       "without root the sessions' state lives in "
                                       "$XDG_RUNTIME_DIR/psrun/sessions; log in with a "
                                       "session that sets it, or set %s",
                                       SESSION_ROOT_ENV);
        int r = check_dir(xdg, err);
        if (r == 0)
                return psrun_error_set(err, ENOENT, "session: XDG_RUNTIME_DIR %s does not exist",
                                       xdg);
        if (r < 0)
                return r;
        _cleanup_free_ char *psrun = NULL, *root = NULL;
        if (asprintf(&psrun, "%s/psrun", xdg) < 0 || asprintf(&root, "%s/sessions", psrun) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        r = ensure_dir(psrun, 0700, create, err);
        if (r > 0)
                r = ensure_dir(root, 0700, create, err);
        if (r >= 0)
                *ret = TAKE_PTR(root);
        return r;
}

int session_root_open(const char *given, bool create, char **ret, psrun_error *err)
{
        *ret = NULL;
        const char *path = given && given[0] ? given : secure_getenv(SESSION_ROOT_ENV);
        if (!path || !path[0]) {
                if (geteuid() != 0)
                        return user_root(create, ret, err);
                path = SESSION_ROOT_DEFAULT;
        }
        if (create) {
                int r = make_parents(path);
                if (r < 0)
                        return psrun_error_errno(err, r, "session: create %s", path);
        }
        int r = ensure_dir(path, 0700, create, err);
        if (r < 0)
                return r;
        if (!(*ret = strdup(path)))
                return psrun_error_errno(err, ENOMEM, "session");
        return r;
}
