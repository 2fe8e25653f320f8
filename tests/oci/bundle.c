/* SPDX-License-Identifier: MIT */
/* Bundles, configs and a psrun runner for the OCI tier. */
#include "oci/oci_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bundle B;

static const char *const applets[] = {
        "sh",    "echo",     "cat",    "sleep", "id",   "ls",   "ps",   "true",     "false",
        "mkdir", "touch",    "kill",   "grep",  "head", "tail", "wc",   "tty",      "env",
        "pwd",   "hostname", "ulimit", "dd",    "rm",   "stat", "test", "readlink", "mount",
        "seq",   "nproc",    "uname",  "tr",    "cut",  "awk",
};

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        fputs(text, f);
        cr_assert_eq(fclose(f), 0);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
        int in = open(from, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(in, 0, "%s: %s", from, strerror(errno));
        int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        cr_assert_geq(out, 0, "%s: %s", to, strerror(errno));
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                cr_assert_eq(write(out, buf, (size_t) n), n);
        close(in);
        close(out);
}

void bundle_setup(void)
{
        test_require_root();
        cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
        char tmpl[64];
        test_tmp_template(tmpl, sizeof(tmpl), "psrun-oci");
        cr_assert_not_null(mkdtemp(tmpl));
        chmod(tmpl, 0755);
        snprintf(B.dir, sizeof(B.dir), "%s", tmpl);
        snprintf(B.root, sizeof(B.root), "%s/state", B.dir);
        snprintf(B.cgroup, sizeof(B.cgroup), "psrun-oci-test-%d", (int) getpid());

        char path[512];
        static const char *const dirs[] = {"rootfs",     "rootfs/bin", "rootfs/proc",
                                           "rootfs/dev", "rootfs/sys", "rootfs/tmp",
                                           "rootfs/etc", "rootfs/root"};
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", B.dir, dirs[i]);
                cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
        }
        snprintf(path, sizeof(path), "%s/rootfs/tmp", B.dir);
        chmod(path, 01777);
        snprintf(path, sizeof(path), "%s/rootfs/bin/busybox", B.dir);
        copy_file(access("/bin/busybox", X_OK) == 0 ? "/bin/busybox" : "/usr/bin/busybox", path,
                  0755);
        for (size_t i = 0; i < sizeof(applets) / sizeof(applets[0]); i++) {
                snprintf(path, sizeof(path), "%s/rootfs/bin/%s", B.dir, applets[i]);
                cr_assert_eq(symlink("busybox", path), 0);
        }
        snprintf(path, sizeof(path), "%s/rootfs/etc/passwd", B.dir);
        write_file(path, "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/tmp:/bin/sh\n");
        snprintf(path, sizeof(path), "%s/rootfs/etc/group", B.dir);
        write_file(path, "root:x:0:\nuser:x:1000:\n");
}

/* Never crosses into a mount: a test that failed half-way may leave one. */
static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        if (type == FTW_DP)
                rmdir(path);
        else
                unlink(path);
        return 0; /* best effort: teardown goes on */
}

static void remove_tree(const char *path)
{
        nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* rmdir the test's cgroup parent (and what is below) in every hierarchy. */
static void remove_cgroups(void)
{
        FILE *f = fopen("/proc/self/cgroup", "re");
        if (!f)
                return;
        char line[1024];
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                const char *ctrl = c1 + 1;
                const char *own = c2 + 1;
                char dir[1024];
                if (!*ctrl)
                        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/unified%s/%s", own, B.cgroup);
                else if (strncmp(ctrl, "name=", 5) == 0)
                        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s/%s", ctrl + 5, own,
                                 B.cgroup);
                else
                        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s/%s", ctrl, own, B.cgroup);
                char cmd[1200];
                /* Depth first: the containers' leaves, then the parent. */
                snprintf(cmd, sizeof(cmd),
                         "[ -d '%s' ] && find '%s' -depth -type d -exec rmdir {} + 2>/dev/null",
                         dir, dir);
                if (system(cmd) != 0) { /* best effort: teardown goes on */
                }
        }
        fclose(f);
        /* On a pure cgroup2 host the only line is "0::/path". */
        char dir[1024];
        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s", B.cgroup);
        (void) rmdir(dir);
}

void bundle_teardown(void)
{
        if (!B.dir[0])
                return;
        /* Whatever a failing test left running goes. */
        struct out o;
        psrun(&o, NULL, "list", "-q", NULL);
        for (char *save = NULL, *id = strtok_r(o.out, "\n", &save); id;
             id = strtok_r(NULL, "\n", &save)) {
                struct out d;
                psrun(&d, NULL, "delete", "--force", id, NULL);
        }
        reap_children();
        remove_cgroups();
        remove_tree(B.dir);
        B.dir[0] = '\0';
}

void reap_children(void)
{
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
}

bool contains(const char *s, const char *needle)
{
        return s && strstr(s, needle) != NULL;
}

void bundle_config(const char *id, const struct cfg *c)
{
        static const struct cfg none = {0};
        if (!c)
                c = &none;
        const char *caps = c->caps ? c->caps
                                   : "[\"CAP_CHOWN\",\"CAP_DAC_OVERRIDE\",\"CAP_FOWNER\","
                                     "\"CAP_KILL\",\"CAP_SETGID\",\"CAP_SETUID\","
                                     "\"CAP_NET_BIND_SERVICE\"]";
        const char *ns = c->namespaces ? c->namespaces
                                       : "[{\"type\":\"pid\"},{\"type\":\"network\"},"
                                         "{\"type\":\"ipc\"},{\"type\":\"uts\"},"
                                         "{\"type\":\"mount\"},{\"type\":\"cgroup\"}]";
        const char *masks =
                c->no_masks ? ""
                            : ",\"maskedPaths\":[\"/proc/kcore\",\"/proc/keys\",\"/sys/firmware\"],"
                              "\"readonlyPaths\":[\"/proc/sys\",\"/proc/sysrq-trigger\"]";
        char *json = NULL;
        int n = asprintf(
                &json,
                "{\"ociVersion\":\"1.0.2\",\n"
                " \"root\":{\"path\":\"rootfs\",\"readonly\":%s},\n"
                " \"process\":{\"terminal\":%s,\"user\":%s,\"args\":%s,\n"
                "  \"env\":%s,\"cwd\":\"%s\",\n"
                "  \"capabilities\":{\"bounding\":%s,\"effective\":%s,\"permitted\":%s},\n"
                "  \"noNewPrivileges\":%s%s},\n"
                " \"hostname\":\"oci-test\",\n"
                " \"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},\n"
                "  {\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
                "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},\n"
                "  {\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
                "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\","
                "\"mode=0620\"]},\n"
                "  {\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\","
                "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},\n"
                "  {\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
                "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]}%s],\n"
                " \"hooks\":{%s},\n"
                " \"linux\":{\"namespaces\":%s,\"cgroupsPath\":\"%s/%s\"%s%s}}\n",
                c->readonly ? "true" : "false", c->terminal ? "true" : "false",
                c->user ? c->user : "{\"uid\":0,\"gid\":0}",
                c->args ? c->args : "[\"sh\",\"-c\",\"sleep 1000\"]",
                c->env ? c->env : "[\"PATH=/bin\",\"HOME=/root\"]", c->cwd ? c->cwd : "/", caps,
                caps, caps, c->new_privs ? "false" : "true",
                c->process_extra ? c->process_extra : "", c->mounts_extra ? c->mounts_extra : "",
                c->hooks ? c->hooks : "", ns, B.cgroup, id, masks,
                c->linux_extra ? c->linux_extra : "");
        cr_assert_gt(n, 0);
        char path[512];
        snprintf(path, sizeof(path), "%s/config.json", B.dir);
        write_file(path, json);
        free(json);
}

static void drain(int fd, char *buf, size_t cap, size_t *len)
{
        ssize_t n = read(fd, buf + *len, cap - 1 - *len);
        if (n > 0)
                *len += (size_t) n;
        buf[*len] = '\0';
}

int psrun(struct out *o, const char *stdin_data, ...)
{
        const char *argv[64];
        size_t n = 0;
        argv[n++] = test_psrun_path();
        argv[n++] = "--root";
        argv[n++] = B.root;
        va_list ap;
        va_start(ap, stdin_data);
        for (const char *a; (a = va_arg(ap, const char *)) && n < 62;)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;

        int out[2], err[2], in[2];
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(err, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(in[0], 0);
                dup2(out[1], 1);
                dup2(err[1], 2);
                execv(argv[0], (char **) argv);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        close(err[1]);
        /* Non-blocking: a container's init may hold the write ends. */
        fcntl(out[0], F_SETFL, O_NONBLOCK);
        fcntl(err[0], F_SETFL, O_NONBLOCK);
        if (stdin_data)
                (void) !write(in[1], stdin_data, strlen(stdin_data));
        close(in[1]);
        size_t lo = 0, le = 0;
        o->out[0] = o->err[0] = '\0';
        /* A detached container keeps the pipes open: stop at psrun's exit. */
        for (;;) {
                struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
                int r = poll(p, 2, 100);
                if (r > 0) {
                        if (p[0].revents & POLLIN)
                                drain(out[0], o->out, sizeof(o->out), &lo);
                        if (p[1].revents & POLLIN)
                                drain(err[0], o->err, sizeof(o->err), &le);
                        if ((p[0].revents & POLLHUP) && (p[1].revents & POLLHUP) &&
                            !(p[0].revents & POLLIN) && !(p[1].revents & POLLIN))
                                break;
                        continue;
                }
                int status;
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        drain(out[0], o->out, sizeof(o->out), &lo);
                        drain(err[0], o->err, sizeof(o->err), &le);
                        o->status =
                                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                        close(out[0]);
                        close(err[0]);
                        return o->status;
                }
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        close(out[0]);
        close(err[0]);
        o->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return o->status;
}

void oci_up(const char *id, const struct cfg *c)
{
        struct out o;
        bundle_config(id, c);
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, id, NULL), 0, "create: %s",
                     o.err);
        cr_assert_eq(psrun(&o, NULL, "start", id, NULL), 0, "start: %s", o.err);
}

static char *json_string_field(const char *json, const char *key, char *buf, size_t len)
{
        char pat[64];
        snprintf(pat, sizeof(pat), "\"%s\": ", key);
        const char *p = strstr(json, pat);
        buf[0] = '\0';
        if (!p)
                return buf;
        p += strlen(pat);
        if (*p == '"')
                p++;
        size_t i = 0;
        while (*p && *p != '"' && *p != ',' && *p != '\n' && i + 1 < len)
                buf[i++] = *p++;
        buf[i] = '\0';
        return buf;
}

const char *oci_status(const char *id)
{
        static char buf[64];
        struct out o;
        if (psrun(&o, NULL, "state", id, NULL) != 0)
                return "";
        return json_string_field(o.out, "status", buf, sizeof(buf));
}

int oci_pid(const char *id)
{
        char buf[64];
        struct out o;
        if (psrun(&o, NULL, "state", id, NULL) != 0)
                return -1;
        return atoi(json_string_field(o.out, "pid", buf, sizeof(buf)));
}

bool wait_status(const char *id, const char *status, int timeout_ms)
{
        for (int waited = 0; waited <= timeout_ms; waited += 20) {
                reap_children();
                if (strcmp(oci_status(id), status) == 0)
                        return true;
                usleep(20000);
        }
        return false;
}

bool read_text(const char *path, char *buf, size_t len)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        size_t n = fread(buf, 1, len - 1, f);
        fclose(f);
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                n--;
        buf[n] = '\0';
        return true;
}

bool oci_cgroup_dir(const char *id, const char *controller, char *buf, size_t len)
{
        int pid = oci_pid(id);
        if (pid <= 0)
                return false;
        char path[64], line[1024];
        snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        bool found = false;
        while (!found && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                bool unified = !c1[1];
                if (unified && strcmp(controller, "unified") == 0) {
                        struct stat st;
                        snprintf(buf, len, "/sys/fs/cgroup/unified%s", c2 + 1);
                        if (stat(buf, &st) != 0)
                                snprintf(buf, len, "/sys/fs/cgroup%s", c2 + 1);
                        found = true;
                } else if (!unified) {
                        for (char *save = NULL, *t = strtok_r(c1 + 1, ",", &save); t;
                             t = strtok_r(NULL, ",", &save))
                                if (strcmp(t, controller) == 0) {
                                        snprintf(buf, len, "/sys/fs/cgroup/%s%s", controller,
                                                 c2 + 1);
                                        found = true;
                                }
                }
        }
        fclose(f);
        return found;
}
