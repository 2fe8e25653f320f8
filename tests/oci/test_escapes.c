/* SPDX-License-Identifier: MIT */
/*
 * Hostile bundles and images (issue 9): the known runtime CVE classes, each
 * with the layer that stops it named. The container runs as real root with
 * no user namespace, as Docker's do: here each of these is a path to host
 * root.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci_test.h"

#define FD_LAST 10

TestSuite(oci_escape, .init = bundle_setup, .fini = bundle_teardown, .timeout = 90);

/* A file on the host next to the bundle (outside its rootfs), and the
 * script that climbs from the working directory to the host's root and
 * reads it by its path from there. */
static void make_marker(char *script, size_t len)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/host-marker", B.dir);
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs("HOST-SECRET\n", f);
        fclose(f);
        snprintf(script, len, "cd ../../../../../../../../../..; cat .%s; pwd", path);
}

/* CVE-2024-21626: process.cwd /proc/self/fd/N, for every N psrun's child
 * might hold (state directory, state root, cgroup directories, FIFO: before
 * the fix 3, 5, 7 and 9 were host directories). FD_LAST bounds the time.
 * Layer: the working directory is resolved inside the root without magic
 * links and verified to be inside it (runtime/child.c step_chdir). */
Test(oci_escape, cwd_proc_self_fd_is_refused_for_init)
{
        char script[700], args[800], cwd[64];
        make_marker(script, sizeof(script));
        snprintf(args, sizeof(args), "[\"sh\",\"-c\",\"%s\"]", script);
        int escaped = 0, started = 0;
        for (int n = 3; n <= FD_LAST; n++) {
                char id[16];
                snprintf(id, sizeof(id), "c%d", n);
                snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d", n);
                bundle_config(id, &(struct cfg){.args = args, .cwd = cwd});
                struct out o;
                int r = psrun(&o, NULL, "run", "--bundle", B.dir, id, NULL);
                if (contains(o.out, "HOST-SECRET")) {
                        escaped++;
                        cr_log_error("cwd %s reached the host: %s", cwd, o.out);
                }
                if (r == 0)
                        started++;
                else
                        cr_expect(contains(o.err, cwd), "the error names the path: %s", o.err);
                psrun(&o, NULL, "delete", "--force", id, NULL);
        }
        /* Other spellings of the same: another magic link, `..` after the
         * fd, and an image's symbolic link to it. */
        char planted[600];
        snprintf(planted, sizeof(planted), "%s/rootfs/tmp/planted", B.dir);
        cr_assert_eq(symlink("/proc/self/fd/4", planted), 0);
        static const char *const forms[] = {
                "/proc/thread-self/fd/4", "/proc/self/fd/4/..", "/proc/1/cwd",
                "/proc/self/root/..",     "/dev/fd/4",          "/tmp/planted"};
        for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                bundle_config("f1", &(struct cfg){.args = args, .cwd = forms[i]});
                struct out o;
                int r = psrun(&o, NULL, "run", "--bundle", B.dir, "f1", NULL);
                if (contains(o.out, "HOST-SECRET")) {
                        escaped++;
                        cr_log_error("cwd %s reached the host: %s", forms[i], o.out);
                }
                if (r == 0)
                        started++;
                psrun(&o, NULL, "delete", "--force", "f1", NULL);
        }
        cr_expect_eq(escaped, 0, "%d working directories were host directories", escaped);
        cr_expect_eq(started, 0, "%d containers started in /proc/self/fd/N", started);
}

/* The same through `psrun exec --cwd`. */
Test(oci_escape, cwd_proc_self_fd_is_refused_for_exec)
{
        char script[700];
        make_marker(script, sizeof(script));
        oci_up("c1", NULL);
        int escaped = 0, started = 0;
        for (int n = 3; n <= FD_LAST; n++) {
                char cwd[64];
                snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d", n);
                struct out o;
                int r = psrun(&o, NULL, "exec", "--cwd", cwd, "c1", "sh", "-c", script, NULL);
                if (contains(o.out, "HOST-SECRET")) {
                        escaped++;
                        cr_log_error("exec --cwd %s reached the host: %s", cwd, o.out);
                }
                if (r == 0)
                        started++;
        }
        /* A link the container itself plants, to a magic link: resolved in
         * the root without magic links, so refused, however it is swapped. */
        char planted[600];
        snprintf(planted, sizeof(planted), "%s/rootfs/tmp/planted", B.dir);
        cr_assert_eq(symlink("/proc/self/fd/4", planted), 0);
        struct out o;
        int r = psrun(&o, NULL, "exec", "--cwd", "/tmp/planted", "c1", "sh", "-c", script, NULL);
        if (contains(o.out, "HOST-SECRET"))
                escaped++;
        if (r == 0)
                started++;
        cr_expect_eq(escaped, 0, "%d working directories were host directories", escaped);
        cr_expect_eq(started, 0, "%d processes started in /proc/self/fd/N", started);
}

/* Whether anything named psrun-planted-* exists in the bundle's directory
 * (the state root is inside it) or anywhere in the cgroup file systems. */
static bool planted_on_host(char *found, size_t len)
{
        char cmd[800];
        snprintf(cmd, sizeof(cmd),
                 "find '%s' /sys/fs/cgroup -name 'psrun-planted-*' -print 2>/dev/null | head -3",
                 B.dir);
        FILE *f = popen(cmd, "r");
        cr_assert_not_null(f);
        size_t n = fread(found, 1, len - 1, f);
        found[n] = '\0';
        pclose(f);
        return n > 0;
}

/* The same class one step earlier: what the container's root gets made of
 * (the working directory and every mount point are created if missing)
 * must not be created through /proc/self/fd/N either, where N is a host
 * directory psrun holds (before the fix the state root, the container's
 * state directory and a cgroup directory got a new entry, also when create
 * then failed). An image's WORKDIR or VOLUME is enough. Layer: every step's
 * target is resolved inside the root without magic links
 * (rootfs/mounts-apply.c). */
Test(oci_escape, root_paths_below_proc_self_fd_create_nothing_on_the_host)
{
        char host_file[512];
        snprintf(host_file, sizeof(host_file), "%s/host-file", B.dir);
        FILE *hf = fopen(host_file, "we");
        cr_assert_not_null(hf);
        fclose(hf);
        int planted = 0;
        for (int n = 3; n <= FD_LAST; n++) {
                char cwd[64], dir_mount[256], file_mount[768];
                snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d/psrun-planted-cwd", n);
                snprintf(dir_mount, sizeof(dir_mount),
                         ",{\"destination\":\"/proc/self/fd/%d/psrun-planted-dir/d\","
                         "\"type\":\"tmpfs\",\"source\":\"tmpfs\"}",
                         n);
                snprintf(file_mount, sizeof(file_mount),
                         ",{\"destination\":\"/proc/self/fd/%d/psrun-planted-file\","
                         "\"type\":\"bind\",\"source\":\"%s\",\"options\":[\"bind\"]}",
                         n, host_file);
                const struct cfg cfgs[] = {
                        {.cwd = cwd},
                        {.mounts_extra = dir_mount},
                        {.mounts_extra = file_mount},
                };
                for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
                        char id[16], found[512];
                        snprintf(id, sizeof(id), "c%d-%zu", n, i);
                        bundle_config(id, &cfgs[i]);
                        struct out o;
                        int r = psrun(&o, NULL, "create", "--bundle", B.dir, id, NULL);
                        cr_expect_neq(r, 0, "%s: created with a root path through fd %d", id, n);
                        if (planted_on_host(found, sizeof(found))) {
                                planted++;
                                cr_log_error("%s: made on the host through fd %d: %s", id, n,
                                             found);
                                char rm[700];
                                snprintf(rm, sizeof(rm),
                                         "find '%s' /sys/fs/cgroup -depth -name 'psrun-planted-*' "
                                         "-exec rm -rf {} + 2>/dev/null",
                                         B.dir);
                                if (system(rm) != 0) { /* best effort: the next check says */
                                }
                        }
                        psrun(&o, NULL, "delete", "--force", id, NULL);
                }
        }
        cr_expect_eq(planted, 0, "%d root paths were made in host directories", planted);
}

/* The psrun processes of `psrun exec` ARGS... (forked, stdin and output to
 * /dev/null) frozen with SIGSTOP as they appear, while they still run
 * psrun's code (comm "psrun"), until `want` are, 0.3 s after the first or
 * 3 s in all. Returns
 * psrun's pid; stopped[] gets the frozen ones. */
static pid_t exec_frozen(pid_t *stopped, int *n_stopped, int want)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
                execl(test_psrun_path(), test_psrun_path(), "--root", B.root, "exec", "c1", "sleep",
                      "1", (char *) NULL);
                _exit(127);
        }
        *n_stopped = 0;
        char path[128];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) pid, (int) pid);
        struct timespec t0, first = {0}, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                double since = (double) (now.tv_sec - t0.tv_sec) +
                               (double) (now.tv_nsec - t0.tv_nsec) / 1e9;
                double since_first = (double) (now.tv_sec - first.tv_sec) +
                                     (double) (now.tv_nsec - first.tv_nsec) / 1e9;
                if (*n_stopped >= want || since > 3 || (*n_stopped > 0 && since_first > 0.3))
                        break;
                char list[256] = "";
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        break;
                ssize_t n = read(fd, list, sizeof(list) - 1);
                close(fd);
                list[n > 0 ? n : 0] = '\0';
                for (char *save = NULL, *t = strtok_r(list, " ", &save); t;
                     t = strtok_r(NULL, " ", &save)) {
                        pid_t kid = (pid_t) atoi(t);
                        bool known = false;
                        for (int i = 0; i < *n_stopped; i++)
                                known = known || stopped[i] == kid;
                        if (known || kill(kid, SIGSTOP) != 0)
                                continue;
                        char comm[64] = "", cpath[64];
                        snprintf(cpath, sizeof(cpath), "/proc/%d/comm", (int) kid);
                        int cfd = open(cpath, O_RDONLY | O_CLOEXEC);
                        if (cfd >= 0) {
                                ssize_t c = read(cfd, comm, sizeof(comm) - 1);
                                comm[c > 0 ? c : 0] = '\0';
                                close(cfd);
                        }
                        if (strncmp(comm, "psrun", 5) == 0) {
                                if (*n_stopped == 0)
                                        clock_gettime(CLOCK_MONOTONIC, &first);
                                stopped[(*n_stopped)++] = kid;
                        } else
                                kill(kid, SIGCONT); /* already the command */
                }
        }
        return pid;
}

/* CVE-2016-9962: the process `psrun exec` makes joins the container while
 * it still runs psrun's code and holds psrun's fds (the state root, cgroup
 * directories, psrun's own namespaces); a container process with
 * CAP_SYS_PTRACE (not dumpable stops the others) could open
 * /proc/PID/root and /proc/PID/fd/N of it: the host's root while it was
 * still in the host's mount namespace, host directories through its fds.
 * Each psrun process of an exec is frozen before it runs the command (the
 * window made wide), and a second exec looks through every process the
 * container can see. Layer: the exec's child joins the container's
 * namespaces outside its pid namespace, closes every fd the command does not
 * get, and only then makes the command's process, the only one the
 * container sees (runtime/child.c spawn_command), as runc and crun do. */
Test(oci_escape, exec_helper_gives_ptrace_nothing_of_the_host)
{
        char script[700], args[900];
        make_marker(script, sizeof(script));
        /* Through /proc/N/root, and up from every fd that is a directory. */
        snprintf(args, sizeof(args),
                 "for p in /proc/[0-9]*; do cat $p/root%s/host-marker 2>/dev/null; "
                 "for f in $p/fd/*; do for up in .. ../.. ../../..; do "
                 "cat $f/$up/host-marker 2>/dev/null; done; done; done; true",
                 B.dir);
        oci_up("c1", &(struct cfg){.caps = "[\"CAP_SYS_PTRACE\",\"CAP_DAC_OVERRIDE\","
                                           "\"CAP_DAC_READ_SEARCH\",\"CAP_KILL\"]"});
        int leaks = 0, frozen_total = 0;
        for (int attempt = 0; attempt < 3; attempt++) {
                pid_t stopped[4];
                int n_stopped = 0;
                pid_t pid = exec_frozen(stopped, &n_stopped, 2);
                frozen_total += n_stopped;
                struct out o;
                psrun(&o, NULL, "exec", "c1", "sh", "-c", args, NULL);
                if (contains(o.out, "HOST-SECRET")) {
                        leaks++;
                        cr_log_error("a frozen exec showed the host to the container: %s", o.out);
                }
                for (int i = 0; i < n_stopped; i++)
                        kill(stopped[i], SIGCONT);
                int status;
                cr_assert_eq(waitpid(pid, &status, 0), pid);
                cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exec status %d", status);
        }
        if (frozen_total == 0)
                cr_skip_test("no psrun process of an exec could be frozen before its command ran");
        cr_expect_eq(leaks, 0, "%d of 3 frozen execs reached the host", leaks);
}

/* An image whose program is a link to /proc/self/exe (CVE-2019-5736): psrun
 * must never run itself inside the container. Layer: the program is resolved
 * without magic links and must not be psrun's own executable
 * (runtime/child.c refuse_self). */
Test(oci_escape, program_linked_to_proc_self_exe_is_refused)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/rootfs/bin/evil", B.dir);
        cr_assert_eq(symlink("/proc/self/exe", path), 0);
        oci_up("c1", NULL);
        struct out o;
        int r = psrun(&o, NULL, "exec", "c1", "/bin/evil", "version", NULL);
        cr_expect_neq(r, 0, "exec of a link to /proc/self/exe ran: %s", o.out);
        cr_expect(!contains(o.out, "psrun version"), "psrun ran inside the container: %s", o.out);

        /* As the container's own process too. */
        bundle_config("c2", &(struct cfg){.args = "[\"/bin/evil\",\"version\"]"});
        r = psrun(&o, NULL, "run", "--bundle", B.dir, "c2", NULL);
        cr_expect_neq(r, 0, "a container whose program is /proc/self/exe ran: %s", o.out);
        cr_expect(!contains(o.out, "psrun version"), "psrun ran inside the container: %s", o.out);
}

/* While `psrun exec` runs, its executable (what /proc/PID/exe of it and of
 * its child in the container names) is a sealed copy in memory, not the
 * host's binary. Layer: the sealed memfd re-exec (cli). */
Test(oci_escape, exec_runs_from_a_sealed_copy)
{
        oci_up("c1", NULL);
        char root_arg[400];
        snprintf(root_arg, sizeof(root_arg), "%s", B.root);
        /* `cat` runs until the test closes its stdin. */
        int in[2];
        cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(in[0], 0);
                dup2(null, 1);
                dup2(null, 2);
                execl(test_psrun_path(), test_psrun_path(), "--root", root_arg, "exec", "c1", "cat",
                      (char *) NULL);
                _exit(127);
        }
        close(in[0]);
        /* Until it runs the command (or a slow machine gives up). */
        char link[64], target[512] = "";
        snprintf(link, sizeof(link), "/proc/%d/exe", (int) pid);
        for (int i = 0; i < 100; i++) {
                usleep(50 * 1000);
                ssize_t n = readlink(link, target, sizeof(target) - 1);
                target[n > 0 ? n : 0] = '\0';
                if (strncmp(target, "/memfd:", 7) == 0)
                        break;
        }
        int fd = open(link, O_WRONLY | O_CLOEXEC);
        int open_errno = errno;
        ssize_t wrote = fd >= 0 ? write(fd, "x", 1) : -1;
        if (fd >= 0)
                close(fd);
        close(in[1]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(strncmp(target, "/memfd:", 7) == 0, "psrun exec runs from %s", target);
        cr_expect(wrote < 0, "psrun's executable was writable through %s (open: %s)", link,
                  strerror(open_errno));
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exec status %d", status);
}

/* A config with no /dev mount (the image's /dev is used as it is), whose
 * image has /dev/null linked to /proc/sys/kernel/core_pattern; `script` is
 * the process's shell command, `linux_extra` added to linux. */
static void write_planted_dev_null_config(const char *id, const char *script,
                                          const char *linux_extra)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/rootfs/dev/null", B.dir);
        if (symlink("/proc/sys/kernel/core_pattern", path) < 0)
                cr_assert_eq(errno, EEXIST);
        char *json = NULL;
        int n = asprintf(
                &json,
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                "\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\",\"-c\","
                "\"%s\"],\"env\":[\"PATH=/bin\"],\"cwd\":\"/\","
                "\"capabilities\":{\"bounding\":[\"CAP_DAC_OVERRIDE\"],"
                "\"effective\":[\"CAP_DAC_OVERRIDE\"],\"permitted\":[\"CAP_DAC_OVERRIDE\"]}},"
                "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}],"
                "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mount\"},"
                "{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"network\"}],"
                "\"cgroupsPath\":\"%s/%s\","
                "\"maskedPaths\":[\"/proc/keys\",\"/proc/timer_list\"],"
                "\"readonlyPaths\":[\"/proc/sys\"]%s}}\n",
                script, B.cgroup, id, linux_extra);
        cr_assert_gt(n, 0);
        snprintf(path, sizeof(path), "%s/config.json", B.dir);
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs(json, f);
        fclose(f);
        free(json);
}

/* CVE-2025-31133: the masks over /proc/keys and /proc/timer_list must be
 * the null device, not the host's core_pattern through the image's
 * /dev/null. Layer: masks are clones of the host's /dev/null, taken before
 * the pivot and checked to be the device 1:3 (rootfs/mounts-apply.c
 * mask_file). The test only reads. */
Test(oci_escape, masked_paths_ignore_a_planted_dev_null)
{
        write_planted_dev_null_config(
                "c1", "stat -c %t:%T /proc/keys /proc/timer_list; wc -c < /proc/keys", "");
        struct out o;
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "1:3\n1:3\n0\n"), "the masks are not the null device: %s", o.out);
}

/* The same with the image's /dev/null a FIFO (a bind by path would hang a
 * reader, or put the FIFO over the mask) and a regular file with content.
 * Layer: rootfs/mounts-apply.c mask_file. */
Test(oci_escape, masked_paths_ignore_other_planted_dev_nulls)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/rootfs/dev/null", B.dir);
        for (int kind = 0; kind < 2; kind++) {
                unlink(path);
                if (kind == 0) {
                        cr_assert_eq(mkfifo(path, 0666), 0);
                } else {
                        FILE *f = fopen(path, "we");
                        cr_assert_not_null(f);
                        fputs("PLANTED\n", f);
                        fclose(f);
                }
                write_planted_dev_null_config(
                        "c1", "stat -c %t:%T /proc/keys /proc/timer_list; wc -c < /proc/keys", "");
                struct out o;
                int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
                cr_expect_eq(r, 0, "%s", o.err);
                cr_expect(contains(o.out, "1:3\n1:3\n0\n"),
                          "%s: the masks are not the null device: %s", kind ? "a file" : "a FIFO",
                          o.out);
                psrun(&o, NULL, "delete", "--force", "c1", NULL);
        }
}

/* The same image with /dev/null in linux.devices: the node psrun makes
 * replaces the planted link instead of keeping it. Layer: rootfs/
 * mounts-apply.c make_node. */
Test(oci_escape, device_node_replaces_a_planted_link)
{
        write_planted_dev_null_config("c1", "stat -c %F:%t:%T /dev/null",
                                      ",\"devices\":[{\"path\":\"/dev/null\",\"type\":\"c\","
                                      "\"major\":1,\"minor\":3,\"fileMode\":438}]");
        struct out o;
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "character special file:1:3\n"), "/dev/null is %s", o.out);
}

/* /proc/1/cmdline of a created container (init waiting for start) is not
 * psrun's host command line. Layer: runtime/child.c step_proctitle. */
Test(oci_escape, init_cmdline_is_neutral)
{
        struct out o;
        bundle_config("c1", NULL);
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(
                psrun(&o, NULL, "exec", "c1", "sh", "-c", "tr '\\000' '|' < /proc/1/cmdline", NULL),
                0, "%s", o.err);
        cr_expect_str_eq(o.out, "init|", "%s", o.out);
}

/* With a cgroup namespace, the container's cgroups are its namespace's
 * root in every hierarchy, and a cgroup mount shows the container's own
 * limits, not its parent's. Layer: the cgroups are entered before the
 * namespace is made (runtime/launch.c, on v1 by an unshare in the child). */
Test(oci_escape, cgroup_namespace_root_is_the_containers_cgroup)
{
        struct out o;
        bundle_config(
                "c1",
                &(struct cfg){.args = "[\"sh\",\"-c\",\"cat /proc/self/cgroup; cat "
                                      "/sys/fs/cgroup/memory/memory.limit_in_bytes "
                                      "/sys/fs/cgroup/memory.max 2>/dev/null; true\"]",
                              .mounts_extra =
                                      ",{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\","
                                      "\"source\":\"cgroup\",\"options\":[\"ro\",\"nosuid\","
                                      "\"noexec\",\"nodev\"]}",
                              .linux_extra = ",\"resources\":{\"memory\":{\"limit\":50331648}}"});
        cr_assert_eq(psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "\n50331648\n"),
                  "the container's memory limit is not its "
                  "cgroup mount's: %s",
                  o.out);
        int lines = 0, bad = 0;
        for (char *save = NULL, *l = strtok_r(o.out, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
                if (!strchr(l, ':'))
                        continue;
                lines++;
                const char *colon = strrchr(l, ':');
                if (!colon || strcmp(colon, ":/") != 0) {
                        bad++;
                        cr_log_error("not the namespace's root: %s", l);
                }
        }
        cr_expect_gt(lines, 0);
        cr_expect_eq(bad, 0, "%d hierarchies show a path outside the container's cgroup", bad);
}
