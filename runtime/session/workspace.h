/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A session's /workspace seen from the host: its root as an O_PATH fd,
 * paths resolved below it with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS), files made as the sandbox's user. Shared by the
 * client's reads, listings and removals (files.c) and the supervisor's
 * file writer (supervisor-files.c), which writes in the session's cgroup.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "psrun.h"

#define WORKSPACE "/workspace"

struct ws {
        int fd; /* O_PATH of the workspace's root */
        uid_t uid;
        gid_t gid;
        uint64_t disk_limit;
        /* A rootless session's: every file operation is its supervisor's
         * (READ, LIST, REMOVE, WRITE: the file writer, in the sandbox's
         * user namespace), none the caller's. */
        bool remote;
};

/* fsuid/fsgid of the sandbox's user for this thread, and back. */
struct ws_fsids {
        int uid, gid;
};
struct ws_fsids ws_become_user(const struct ws *w);
void ws_restore_ids(struct ws_fsids old);

/* "x/y", "/workspace/x/y" -> "x/y"; "/workspace" -> "."; anything else
 * absolute is refused (field names it in the message). */
int ws_relative(const char *field, const char *path, const char **rel, psrun_error *err);
/* openat2 of rel in the workspace: the fd or -errno. */
int ws_resolve(const struct ws *w, const char *rel, uint64_t flags, mode_t mode);
/* The parent directory of rel (created as the caller's fsids if create)
 * as an O_PATH fd in *dir_fd, and its last component in name, which must
 * name something (not "." or ".."). */
int ws_open_parent(const struct ws *w, const char *field, const char *path, const char *rel,
                   bool create, int *dir_fd, char name[NAME_MAX + 1], psrun_error *err);

/* The operations on a workspace, the client's for root's sessions and the
 * file writer's (supervisor-files.c) for a rootless one's; path is what
 * the caller named (for the messages), rel it below the workspace. */
/* A regular file opened for reading (O_PATH, fstat, then that inode). */
int ws_open_regular(const struct ws *w, const char *path, const char *rel, int *ret,
                    psrun_error *err);
int ws_list(const struct ws *w, const char *shown, const char *rel, bool recursive,
            size_t max_entries, size_t max_bytes, psrun_listing *out, psrun_error *err);
int ws_remove(const struct ws *w, const char *path, const char *rel, psrun_error *err);
/* A listing into a memfd (at offset 0) and back, n entries, no more than
 * the bounds. */
int ws_listing_write(const psrun_listing *l, int *ret, psrun_error *err);
int ws_listing_read(int fd, uint64_t n, bool truncated, size_t max_entries, size_t max_bytes,
                    psrun_listing *out, psrun_error *err);
