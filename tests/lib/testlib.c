/* SPDX-License-Identifier: MIT */
#include "lib/testlib.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void test_tmp_template(char *buf, size_t size, const char *prefix)
{
        char placeholder[7];
        memset(placeholder, 'X', 6);
        placeholder[6] = '\0';
        snprintf(buf, size, "/tmp/%s-%s", prefix, placeholder);
}

void test_require_root(void)
{
        if (geteuid() != 0)
                cr_skip_test("needs root (namespaces, cgroups): not running as root");
}

bool test_rootless(void)
{
        const char *v = getenv("PSRUN_TEST_ROOTLESS");
        return v && strcmp(v, "1") == 0 && geteuid() != 0;
}

void test_require_root_or_rootless(void)
{
        if (geteuid() != 0 && !test_rootless())
                cr_skip_test("needs root, or PSRUN_TEST_ROOTLESS=1 for the rootless runner: "
                             "not running as root");
}

void test_skip_rootless(const char *why)
{
        if (test_rootless())
                cr_skip_test("rootless: %s", why);
}

static const char *build_dir(void)
{
        const char *b = getenv("PSRUN_BUILD");
        return b && *b ? b : "build";
}

const char *test_psrun_path(void)
{
        static char path[4096];
        snprintf(path, sizeof(path), "%s/psrun", build_dir());
        return path;
}

const char *test_helper_path(const char *name)
{
        static char path[4096];
        char rel[4096];
        snprintf(rel, sizeof(rel), "%s/tests/helper/%s", build_dir(), name);
        if (!realpath(rel, path))
                cr_assert_fail("helper %s not built: %s", rel, strerror(errno));
        return path;
}

struct buf {
        char *data;
        size_t len, cap;
};

static void buf_append(struct buf *b, const char *p, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                b->cap = (b->len + n + 1) * 2;
                b->data = realloc(b->data, b->cap);
                cr_assert_not_null(b->data);
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
}

void test_run_psrun(struct test_run *r, const char *const *argv)
{
        test_run_psrun_with(r, argv, NULL);
}

void test_run_psrun_with(struct test_run *r, const char *const *argv, void (*before_exec)(void))
{
        int out[2], errp[2], res[2];
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(errp, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(res, O_CLOEXEC), 0);

        size_t n = 0;
        while (argv[n])
                n++;
        const char **args = calloc(n + 5, sizeof(char *));
        cr_assert_not_null(args);
        char fdarg[16];
        size_t i = 0;
        args[i++] = test_psrun_path();
        /* argv[0] is the subcommand ("run"); --result-fd goes after it. */
        args[i++] = argv[0];
        bool is_run = strcmp(argv[0], "run") == 0;
        if (is_run) {
                snprintf(fdarg, sizeof(fdarg), "%d", 3);
                args[i++] = "--result-fd";
                args[i++] = fdarg;
        }
        for (size_t k = 1; k < n; k++)
                args[i++] = argv[k];
        args[i] = NULL;

        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDONLY);
                dup2(devnull, 0);
                dup2(out[1], 1);
                dup2(errp[1], 2);
                dup2(res[1], 3);
                if (before_exec)
                        before_exec();
                execv(args[0], (char *const *) args);
                dprintf(2, "exec %s: %s\n", args[0], strerror(errno));
                _exit(127);
        }
        free(args);
        close(out[1]);
        close(errp[1]);
        close(res[1]);

        struct buf bo = {0}, be = {0}, br = {0};
        buf_append(&bo, "", 0);
        buf_append(&be, "", 0);
        buf_append(&br, "", 0);
        struct pollfd pfd[3] = {{out[0], POLLIN, 0}, {errp[0], POLLIN, 0}, {res[0], POLLIN, 0}};
        struct buf *bufs[3] = {&bo, &be, &br};
        int open_fds = 3;
        while (open_fds > 0) {
                if (poll(pfd, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        cr_assert_fail("poll: %s", strerror(errno));
                }
                for (int k = 0; k < 3; k++) {
                        if (pfd[k].fd < 0 || !pfd[k].revents)
                                continue;
                        char chunk[8192];
                        ssize_t got = read(pfd[k].fd, chunk, sizeof(chunk));
                        if (got > 0) {
                                buf_append(bufs[k], chunk, (size_t) got);
                        } else {
                                close(pfd[k].fd);
                                pfd[k].fd = -1;
                                open_fds--;
                        }
                }
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        r->pid = pid;
        char why[4200];
        cr_expect(test_no_cgroup_leftovers_of(pid, why, sizeof(why)), "psrun left: %s", why);
        r->out = bo.data;
        r->err = be.data;
        r->result = br.data;
}

void test_run_free(struct test_run *r)
{
        free(r->out);
        free(r->err);
        free(r->result);
        memset(r, 0, sizeof(*r));
}

char *test_json_field(const char *json, const char *key)
{
        char pat[256];
        snprintf(pat, sizeof(pat), "\"%s\":", key);
        const char *p = strstr(json, pat);
        if (!p)
                return NULL;
        p += strlen(pat);
        while (*p == ' ')
                p++;
        const char *e = p;
        if (*e == '"') {
                e++;
                while (*e && *e != '"') {
                        if (*e == '\\' && e[1])
                                e++;
                        e++;
                }
                if (*e)
                        e++;
        } else {
                while (*e && *e != ',' && *e != '}')
                        e++;
        }
        return strndup(p, (size_t) (e - p));
}

static bool scan_for_psrun(const char *dir, const char *prefix, int depth, char *why,
                           size_t why_len)
{
        DIR *d = opendir(dir);
        if (!d)
                return true;
        bool clean = true;
        struct dirent *de;
        while (clean && (de = readdir(d))) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                char sub[4096];
                snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
                        snprintf(why, why_len, "leftover cgroup %s", sub);
                        clean = false;
                } else if (depth > 0) {
                        clean = scan_for_psrun(sub, prefix, depth - 1, why, why_len);
                }
        }
        closedir(d);
        return clean;
}

bool test_no_cgroup_leftovers(char *why, size_t why_len)
{
        return test_no_cgroup_leftovers_of(0, why, why_len);
}

bool test_no_cgroup_leftovers_of(int owner, char *why, size_t why_len)
{
        char prefix[32] = "psrun-";
        if (owner > 0)
                snprintf(prefix, sizeof(prefix), "psrun-%d-", owner);
        FILE *f = fopen("/proc/self/cgroup", "re");
        if (!f)
                return true;
        char line[4096];
        bool clean = true;
        while (clean && fgets(line, sizeof(line), f)) {
                /* "4:memory:/a/b" or "0::/a/b" */
                char *c1 = strchr(line, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                char *ctrl = c1 + 1;
                char *path = c2 + 1;
                path[strcspn(path, "\n")] = '\0';
                char *comma = strchr(ctrl, ',');
                if (comma)
                        *comma = '\0';
                if (strncmp(ctrl, "name=", 5) == 0)
                        continue;
                char dir[4096];
                struct stat st;
                if (*ctrl == '\0') {
                        const char *base = stat("/sys/fs/cgroup/unified", &st) == 0
                                                   ? "/sys/fs/cgroup/unified"
                                                   : "/sys/fs/cgroup";
                        snprintf(dir, sizeof(dir), "%s%s", base, path);
                } else {
                        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s", ctrl, path);
                }
                clean = scan_for_psrun(dir, prefix, 2, why, why_len);
        }
        fclose(f);
        return clean;
}
