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

#define WORKSPACE "/workspace"

struct ws {
        int fd; /* O_PATH of the workspace's root */
        uid_t uid;
        gid_t gid;
        uint64_t disk_limit;
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
