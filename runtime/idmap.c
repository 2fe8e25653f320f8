/* SPDX-License-Identifier: MIT */
/* A rootless sandbox's subordinate id maps, written by the setuid helpers
 * newuidmap and newgidmap (package uidmap), which check each range against
 * /etc/subuid and /etc/subgid: psrun passes only the range it read there
 * (runtime/rootless.c). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"

extern char **environ;

static const char *find_helper(const char *name, char *buf, size_t size)
{
        static const char *const dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                snprintf(buf, size, "%s/%s", dirs[i], name);
                if (access(buf, X_OK) == 0)
                        return buf;
        }
        return NULL;
}

bool idmap_have_helpers(void)
{
        char buf[64];
        return find_helper("newuidmap", buf, sizeof(buf)) &&
               find_helper("newgidmap", buf, sizeof(buf));
}

/* helper PID INSIDE OUTSIDE COUNT..., from the map's lines; its stderr's
 * first line into *err when it fails. */
static int run_helper(const char *name, pid_t pid, const char *map, psrun_error *err)
{
        char path[64];
        if (!find_helper(name, path, sizeof(path)))
                return psrun_error_set(err, ENOENT,
                                       "identity: %s not found: install the uidmap package, or "
                                       "remove this user's /etc/subuid range for a one-id "
                                       "sandbox (docs/rootless.md)",
                                       name);
        _cleanup_free_ char *copy = strdup(map);
        if (!copy)
                return psrun_error_errno(err, ENOMEM, "identity");
        char pid_text[16];
        snprintf(pid_text, sizeof(pid_text), "%d", (int) pid);
        char *argv[2 + 3 * 8 + 1] = {(char *) name, pid_text};
        size_t argc = 2;
        char *save = NULL;
        for (char *tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                if (argc == ARRAY_SIZE(argv) - 1)
                        return psrun_error_set(err, E2BIG, "identity: %s: too many ranges", name);
                argv[argc++] = tok;
        }
        argv[argc] = NULL;
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return psrun_error_errno(err, errno, "identity: pipe");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        pid_t h;
        int e = posix_spawn(&h, path, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(pipefd[1]);
        if (e != 0) {
                close(pipefd[0]);
                return psrun_error_errno(err, e, "identity: run %s", path);
        }
        char msg[256] = "";
        (void) read_into(pipefd[0], msg, sizeof(msg));
        close(pipefd[0]);
        int status;
        while (waitpid(h, &status, 0) < 0)
                if (errno != EINTR)
                        return psrun_error_errno(err, errno, "identity: wait for %s", name);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        msg[strcspn(msg, "\n")] = '\0';
        return psrun_error_set(err, EPERM, "identity: %s %s refused: %s (check /etc/%s)", name,
                               pid_text, msg[0] ? msg : "no reason given",
                               strcmp(name, "newuidmap") == 0 ? "subuid" : "subgid");
}

int idmap_apply_maps(pid_t pid, const char *uid_map, const char *gid_map, psrun_error *err)
{
        int r = run_helper("newuidmap", pid, uid_map, err);
        if (r >= 0)
                r = run_helper("newgidmap", pid, gid_map, err);
        return r;
}

int idmap_apply_helpers(pid_t pid, const struct plan *p, psrun_error *err)
{
        return idmap_apply_maps(pid, p->uid_map, p->gid_map, err);
}
