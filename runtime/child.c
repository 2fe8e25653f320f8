/* SPDX-License-Identifier: MIT */
/*
 * Everything between clone3() and execve(): the step tables, and the
 * processes that run them (init, the command, a session's exec made ahead);
 * the steps themselves are in child-setup.c and child-exec.c. Rules, for
 * all three files (DESIGN.md):
 *  - async-signal-safe only: no malloc, stdio, locks or logging — psrun may be
 *    embedded in a multi-threaded process, whose other threads' locks are
 *    frozen in this copy of its memory;
 *  - the plan is read, never changed; every string was made by the parent;
 *  - a failing step sends {step, errno, index} on the sync socket and exits;
 *  - seccomp is the last layer before execve(): it would block the setup.
 */
#include "runtime/child-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"

static const char *const step_names[_CHILD_STEP_MAX] = {
        [CHILD_STEP_SYNC] = "sync",
        [CHILD_STEP_JOIN] = "namespaces: join",
        [CHILD_STEP_PRIVATE_MOUNTS] = "namespaces: a private copy of the session's mounts",
        [CHILD_STEP_HOSTNAME] = "hostname",
        [CHILD_STEP_DOMAINNAME] = "domainname",
        [CHILD_STEP_LOOPBACK] = "network: bring up lo",
        [CHILD_STEP_ROOT_PRIVATE] = "rootfs: make mounts private",
        [CHILD_STEP_ROOT_TMPFS] = "rootfs: mount the new root",
        [CHILD_STEP_ROOT_BUNDLE] = "rootfs: bind the bundle's root",
        [CHILD_STEP_IMAGE_ROOT] = "rootfs: image root: overlay in the user namespace",
        [CHILD_STEP_PIVOT] = "rootfs: pivot_root",
        [CHILD_STEP_ROOT_PROPAGATION] = "rootfs: rootfsPropagation",
        [CHILD_STEP_MOUNT] = "rootfs",
        [CHILD_STEP_CONSOLE] = "console",
        [CHILD_STEP_RLIMIT] = "rlimit",
        [CHILD_STEP_TIMENS] = "time namespace",
        [CHILD_STEP_PERSONALITY] = "personality",
        [CHILD_STEP_ROOT_ID] = "identity: become root of the user namespace",
        [CHILD_STEP_USER_QUOTAS] = "user namespace quotas",
        [CHILD_STEP_INIT] = "init",
        [CHILD_STEP_FORK] = "init: fork",
        [CHILD_STEP_SIGNALS] = "signals",
        [CHILD_STEP_BOUNDING] = "capabilities: bounding set",
        [CHILD_STEP_GROUPS] = "identity: setgroups",
        [CHILD_STEP_SETGID] = "identity: setgid",
        [CHILD_STEP_SETUID] = "identity: setuid",
        [CHILD_STEP_CAPS] = "capabilities",
        [CHILD_STEP_CHDIR] = "chdir",
        [CHILD_STEP_NO_NEW_PRIVS] = "no_new_privs",
        [CHILD_STEP_APPARMOR] = "apparmor",
        [CHILD_STEP_LANDLOCK] = "landlock",
        [CHILD_STEP_LOOKUP] = "exec",
        [CHILD_STEP_CLOSE_FDS] = "close inherited fds",
        [CHILD_STEP_WAIT_START] = "wait for start",
        [CHILD_STEP_SECCOMP] = "seccomp",
        [CHILD_STEP_EXEC] = "exec",
        [CHILD_STEP_CGROUP] = "cgroup: join the exec's cgroups",
        [CHILD_STEP_OOM_SCORE] = "oom_score_adj",
        [CHILD_STEP_REQUEST] = "the exec's request",
        [CHILD_STEP_SCHEDULER] = "process.scheduler",
        [CHILD_STEP_IOPRIO] = "process.ioPriority",
        [CHILD_STEP_CPU_AFFINITY] = "process.execCPUAffinity.final",
        [CHILD_STEP_KEYRING] = "session keyring",
        [CHILD_STEP_EXEC_PIDNS] = "namespaces: the exec's own pid namespace",
};

const char *child_step_name(enum child_step step)
{
        return (unsigned) step < _CHILD_STEP_MAX && step_names[step] ? step_names[step] : "setup";
}

static _Noreturn void fail(struct child_ctx *c, enum child_step step, int r, int exit_code)
{
        struct child_msg m = {
                .kind = CHILD_MSG_ERROR,
                .step = step,
                .err = r < 0 ? -r : r,
                .index = c->index,
        };
        send_msg(c->sync_fd, &m);
        _exit(exit_code);
}

struct child_step_def {
        enum child_step id;
        int (*run)(struct child_ctx *c);
};

/* Run by pid 1 of the new namespaces, with the user namespace's full
 * capabilities. */
/* Run first, before the child waits for its id maps: from its birth it may
 * be visible in a container's pid namespace (OCI exec), with psrun's host
 * fds, cwd, executable and command line. */
static const struct child_step_def early_steps[] = {
        {CHILD_STEP_SYNC, step_not_dumpable},
        {CHILD_STEP_EXEC, step_self_exe},
        {CHILD_STEP_SYNC, step_proctitle},
        {CHILD_STEP_OOM_SCORE, step_oom_score},
};

static const struct child_step_def setup_steps[] = {
        {CHILD_STEP_ROOT_BUNDLE, step_open_rootfs},
        /* Private before the sources are cloned: a clone of a shared mount
         * would stay in its peer group, and mounts made below the bind in
         * the sandbox would reach the host. */
        {CHILD_STEP_ROOT_PRIVATE, step_root_private},
        {CHILD_STEP_MOUNT, step_open_sources},
        {CHILD_STEP_IMAGE_ROOT, step_image_layers},
        {CHILD_STEP_ROOT_BUNDLE, step_copy_rootfs},
        {CHILD_STEP_PRIVATE_MOUNTS, step_private_mounts},
        {CHILD_STEP_CGROUP, step_attach_self},
        {CHILD_STEP_CLOSE_FDS, step_keep_planned_fds},
        {CHILD_STEP_JOIN, step_join},
        {CHILD_STEP_JOIN, step_drop_join_fds},
        {CHILD_STEP_JOIN, step_cgroupns},
        {CHILD_STEP_HOSTNAME, step_hostname},
        {CHILD_STEP_DOMAINNAME, step_domainname},
        {CHILD_STEP_LOOPBACK, step_loopback},
        {CHILD_STEP_ROOT_ID, step_root_id},
        {CHILD_STEP_IMAGE_ROOT, step_image_overlay},
        /* Detached, before anything is mounted over the base directory
         * (under which host paths an overlay names may lie), and before the
         * quotas: a detached mount is a mount namespace, and psrun run's
         * namespace_limit leaves the sandbox none to make. */
        {CHILD_STEP_MOUNT, step_mounts_early},
        {CHILD_STEP_USER_QUOTAS, step_user_quotas},
        {CHILD_STEP_ROOT_TMPFS, step_root_tmpfs},
        {CHILD_STEP_ROOT_BUNDLE, step_root_bundle},
        {CHILD_STEP_PIVOT, step_pivot},
        {CHILD_STEP_ROOT_PROPAGATION, step_root_propagation},
        {CHILD_STEP_MOUNT, step_mounts},
        {CHILD_STEP_CONSOLE, step_console},
};

/*
 * Run by the process that becomes the command: one table, with the phase in
 * which a session's zygote (plan->zygote) runs each row (child-internal.h).
 * Order matters: the bounding set needs CAP_SETPCAP, so it goes before
 * setuid; Landlock needs no_new_privs once capabilities are gone; seccomp is
 * the last layer because it would block the syscalls of the steps before it.
 *
 * A config's filter may come earlier: without no_new_privs at
 * step_seccomp_early, before the identity changes (loading it needs
 * CAP_SYS_ADMIN); with a listener at step_seccomp_listener, before the exec
 * FIFO. Every row from step_seccomp_early's on says what it then calls, all
 * of it in CHILD_AFTER_FILTER_SYSCALLS (tests/unit/test_child_steps.c and
 * tests/kernel/test_child_after_filter.c hold it to that); whatever needs
 * more (openat2, fstatfs, close_range, sched_setaffinity) runs before it:
 * AppArmor, the stdio's owner, the final CPU affinity, the working
 * directory's magic-link check.
 *
 * A zygote runs the rows ahead of its request first: everything that does
 * not need the request, the security layers included: no_new_privs,
 * AppArmor, Landlock and seccomp (loading a filter costs the kernel a JIT
 * compilation, 0.3-0.4 ms here). What follows them is in the session's
 * allowlist (the default profile: dup3, fstat, fchown, openat2, setresuid,
 * capset, prctl, chdir, getcwd, newfstatat, faccessat, sendmsg, execve),
 * and a refusal would be a setup error, never a layer left out. It waits as
 * uid 0 of the sandbox, which the sandbox's own uid cannot signal.
 */
#define SYSCALLS(...) ((const char *const[]){__VA_ARGS__ NULL})

const struct child_exec_step child_exec_steps[] = {
        {CHILD_STEP_CONSOLE, step_console_attach, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_SIGNALS, step_signals, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_KEYRING, step_session_keyring, CHILD_PHASE_NOT_IN_SESSION, NULL},
        {CHILD_STEP_RLIMIT, step_rlimits, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_TIMENS, step_timens, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_PERSONALITY, step_personality, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_SCHEDULER, step_scheduler, CHILD_PHASE_NOT_IN_SESSION, NULL},
        {CHILD_STEP_IOPRIO, step_io_priority, CHILD_PHASE_NOT_IN_SESSION, NULL},
        {CHILD_STEP_CPU_AFFINITY, step_cpu_affinity, CHILD_PHASE_NOT_IN_SESSION, NULL},
        {CHILD_STEP_CLOSE_FDS, step_close_fds, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_APPARMOR, step_apparmor, CHILD_PHASE_AHEAD, NULL},
        {CHILD_STEP_SETUID, step_stdio_owner, CHILD_PHASE_AFTER_REQUEST, NULL},
        {CHILD_STEP_CHDIR, step_check_workdir, CHILD_PHASE_AFTER_REQUEST, NULL},
        {CHILD_STEP_SECCOMP, step_seccomp_early, CHILD_PHASE_AHEAD,
         SYSCALLS("sendmsg", "close", ) /* after the load: the listener to the parent */},
        {CHILD_STEP_BOUNDING, step_bounding, CHILD_PHASE_AHEAD, SYSCALLS("prctl", )},
        {CHILD_STEP_GROUPS, step_groups, CHILD_PHASE_AHEAD, SYSCALLS("setgroups", )},
        {CHILD_STEP_SETGID, step_setgid, CHILD_PHASE_AHEAD, SYSCALLS("setresgid", )},
        {CHILD_STEP_SETUID, step_setuid, CHILD_PHASE_AFTER_REQUEST, SYSCALLS("setresuid", )},
        {CHILD_STEP_CAPS, step_caps, CHILD_PHASE_AFTER_REQUEST, SYSCALLS("capset", "prctl", )},
        {CHILD_STEP_CHDIR, step_chdir, CHILD_PHASE_AFTER_REQUEST, SYSCALLS("chdir", "getcwd", )},
        {CHILD_STEP_NO_NEW_PRIVS, step_no_new_privs, CHILD_PHASE_AHEAD, SYSCALLS("prctl", )},
        /* Refused with an early filter (step_landlock). */
        {CHILD_STEP_LANDLOCK, step_landlock, CHILD_PHASE_AHEAD, SYSCALLS()},
        {CHILD_STEP_EXEC, step_lookup, CHILD_PHASE_AFTER_REQUEST,
         SYSCALLS("newfstatat", "faccessat", )},
        {CHILD_STEP_SECCOMP, step_seccomp_listener, CHILD_PHASE_NOT_IN_SESSION,
         SYSCALLS("sendmsg", "close", )},
        {CHILD_STEP_WAIT_START, step_wait_start, CHILD_PHASE_AFTER_REQUEST,
         SYSCALLS("sendto", "fcntl", "close", "openat", "getdents64", "read", "exit_group", )},
        /* Nothing once a config's filter is loaded. */
        {CHILD_STEP_SECCOMP, step_seccomp, CHILD_PHASE_AHEAD, SYSCALLS()},
        {CHILD_STEP_SECCOMP, step_report_exec, CHILD_PHASE_AFTER_REQUEST,
         SYSCALLS("openat", "sendmsg", "close", )},
};

#define AFTER_FILTER_NAME(name) #name,
const char *const child_after_filter_syscalls[] = {CHILD_AFTER_FILTER_SYSCALLS(AFTER_FILTER_NAME)
                                                           NULL};

const size_t child_exec_steps_len = ARRAY_SIZE(child_exec_steps);

static int exit_code_for(enum child_step step, int r)
{
        if (step != CHILD_STEP_EXEC)
                return CHILD_EXIT_SETUP;
        return r == -ENOENT ? CHILD_EXIT_NOTFOUND : CHILD_EXIT_NOEXEC;
}

static void run_step(struct child_ctx *c, enum child_step id, int (*run)(struct child_ctx *c))
{
        c->index = 0;
        int r = run(c);
        if (r < 0)
                fail(c, id, r, exit_code_for(id, r));
}

static void run_steps(struct child_ctx *c, const struct child_step_def *steps, size_t n)
{
        for (size_t i = 0; i < n; i++)
                run_step(c, steps[i].id, steps[i].run);
}

/* A normal command: every row of the exec table, in table order. */
static void run_exec_steps(struct child_ctx *c)
{
        for (size_t i = 0; i < ARRAY_SIZE(child_exec_steps); i++)
                run_step(c, child_exec_steps[i].id, child_exec_steps[i].run);
}

/* A zygote: the rows of one phase, in table order. */
static void run_exec_phase(struct child_ctx *c, enum child_phase phase)
{
        for (size_t i = 0; i < ARRAY_SIZE(child_exec_steps); i++)
                if (child_exec_steps[i].zygote == phase)
                        run_step(c, child_exec_steps[i].id, child_exec_steps[i].run);
}

/* plan->zygote: its request, read into memory of its own (this process's
 * copy; no allocation), and its plan from there on a copy with the
 * request's argv, envp, workdir and PATH. */
static char request_buf[CHILD_REQUEST_MAX] __attribute__((aligned(16)));
static struct plan request_plan;

static int await_request(struct child_ctx *c)
{
        struct fdpass_in in;
        ssize_t n = fdpass_recv(c->sync_fd, request_buf, sizeof(request_buf), &in, 0);
        if (n <= 0)
                _exit(CHILD_EXIT_SETUP); /* the supervisor gave this one up */
        fdpass_close(&in, 3);
        const int *fds = in.fds;
        /* The supervisor made it; checked all the same: every offset
         * inside the message, every string ends before its end. */
        struct child_request h;
        size_t len = (size_t) n;
        if (in.n_fds != 3 || in.truncated || len < sizeof(h) || request_buf[len - 1] != '\0')
                return -EPROTO;
        memcpy(&h, request_buf, sizeof(h));
        size_t slots = (size_t) h.argc + 1 + h.envc + 1;
        if (h.len != len || h.argc == 0 || h.argc > len || h.envc > len ||
            sizeof(h) + slots * sizeof(uintptr_t) > len)
                return -EPROTO;
        uintptr_t *slot = (uintptr_t *) (void *) (request_buf + sizeof(h));
        size_t strings = sizeof(h) + slots * sizeof(uintptr_t);
        for (size_t i = 0; i < slots; i++) {
                bool end = i == h.argc || i == slots - 1;
                if (end != (slot[i] == (uintptr_t) CHILD_REQUEST_NONE) ||
                    (!end && (slot[i] < strings || slot[i] >= len)))
                        return -EPROTO;
                slot[i] = end ? 0 : (uintptr_t) (request_buf + slot[i]);
        }
        if ((h.cwd != CHILD_REQUEST_NONE && (h.cwd < strings || h.cwd >= len)) ||
            (h.path != CHILD_REQUEST_NONE && (h.path < strings || h.path >= len)))
                return -EPROTO;
        request_plan = *c->plan;
        request_plan.argv = (char **) slot;
        request_plan.envp = (char **) slot + h.argc + 1;
        if (h.cwd != CHILD_REQUEST_NONE)
                request_plan.workdir = request_buf + h.cwd;
        request_plan.path_env = h.path != CHILD_REQUEST_NONE ? request_buf + h.path : NULL;
        c->plan = &request_plan;
        /* The client's stdio, as a clone of an idle supervisor has
         * /dev/null. */
        for (int i = 0; i < 3; i++) {
                if (dup3(fds[i], i, 0) < 0)
                        return -errno;
        }
        for (int i = 0; i < 3; i++)
                if (fds[i] > 2)
                        close(fds[i]);
        return 0;
}

static _Noreturn void become_command(struct child_ctx *c)
{
        umask(c->plan->umask);
        if (c->plan->zygote) {
                run_exec_phase(c, CHILD_PHASE_AHEAD);
                int r = await_request(c);
                if (r < 0)
                        fail(c, CHILD_STEP_REQUEST, r, CHILD_EXIT_SETUP);
                run_exec_phase(c, CHILD_PHASE_AFTER_REQUEST);
        } else {
                run_exec_steps(c);
        }
        execve(c->exec_path, c->plan->argv, c->plan->envp);
        int r = -errno;
        fail(c, CHILD_STEP_EXEC, r, exit_code_for(CHILD_STEP_EXEC, r));
}

static void drop_caps_but_kill(void)
{
        /* pid 1 keeps CAP_KILL alone: it forwards signals to the command,
         * which runs under another uid. Nothing else, not even in its
         * bounding set. */
        for (int cap = 0; cap <= 63; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
                        break;
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {
                {.effective = 1U << CAP_KILL, .permitted = 1U << CAP_KILL}};
        (void) syscall(SYS_capset, &hdr, data);
}

#if !defined(__SANITIZE_ADDRESS__)
/* The command's process starts on this stack, sharing init's memory until
 * it execs (CLONE_VM | CLONE_VFORK): no copy of init's pages, no page
 * faults. init is suspended meanwhile, so nothing else uses it. */
static char command_stack[64 * 1024] __attribute__((aligned(64)));

static int command_main(void *arg)
{
        become_command(arg);
}

static int spawned_main(void *arg)
{
        struct child_ctx *c = arg;
        /* Its parent is psrun's (CLONE_PARENT), whose death it follows. */
        if (c->plan->pdeathsig)
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        become_command(c);
}
#endif

static int send_spawned(int sync_fd, pid_t pid, int pidfd)
{
        struct child_msg m = {.kind = CHILD_MSG_SPAWNED, .status = pid};
        ssize_t n = fdpass_send(sync_fd, &m, sizeof(m), &pidfd, 1, 0);
        return n == (ssize_t) sizeof(m) ? 0 : n < 0 ? (int) n : -EIO;
}

/* plan->spawn_command (OCI exec): this process was made outside the
 * container's pid namespace, where no process of the container can see it,
 * and has joined the others with only the fds the command gets. Only now is
 * the process the container sees made, as runc's and crun's exec do: psrun's
 * child (CLONE_PARENT), so that psrun waits for it, signals it and writes
 * its pid; it shares our memory until it execs (CLONE_VM | CLONE_VFORK), as
 * init's command does. Its error record, if a step fails, comes before our
 * message. */
static _Noreturn void spawn_command(struct child_ctx *c)
{
        int pidfd = -1;
        unsigned long flags = CLONE_VFORK | CLONE_PARENT | CLONE_PIDFD | SIGCHLD;
#if defined(__SANITIZE_ADDRESS__)
        /* A copy of our memory in sanitizer builds (see run_init). */
        pid_t pid = (pid_t) syscall(SYS_clone, flags, 0, &pidfd, NULL, 0);
        if (pid == 0) {
                if (c->plan->pdeathsig)
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                become_command(c);
        }
#else
        pid_t pid = clone(spawned_main, command_stack + sizeof(command_stack),
                          (int) (flags | CLONE_VM), c, &pidfd);
#endif
        if (pid < 0)
                fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        _exit(send_spawned(c->sync_fd, pid, pidfd) < 0 ? CHILD_EXIT_SETUP : 0);
}

/* Block until the other end of the pipe writes its byte; EOF (it died
 * first): exit. */
static void wait_go(int go[2])
{
        char b;
        ssize_t n;
        close(go[1]);
        do
                n = read(go[0], &b, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(CHILD_EXIT_SETUP);
        close(go[0]);
}

/*
 * plan->exec_pidns: a rootless session's exec with no cgroup to hold its
 * tree. We joined the sandbox's namespaces from the supervisor's pid
 * namespace (a user may not enter another pid namespace but from inside
 * its user namespace, and then only for its children):
 *
 *   us    send the supervisor the pid and pidfd of our child (SPAWNED, the
 *         first message after the release), exit;
 *   exec  our child (CLONE_PARENT: the supervisor's), in the sandbox's pid
 *         namespace: makes a pid namespace of its own below it, whose pid 1
 *         it forks, forwards the supervisor's signals to that and exits
 *         when it does; what the supervisor waits for, signals and kills;
 *   init  pid 1 of that namespace, dying with the exec (PDEATHSIG, armed
 *         before it goes on): runs run_init for the command, which reports
 *         the command's status (CHILD_MSG_EXIT). Its death kills every
 *         process left in the namespace, a setsid()'d, double-forked one
 *         too: the exec's whole tree.
 *
 * Returns only in init. Each waits on a pipe until its parent has done
 * what must come first.
 */
static void spawn_pidns_init(struct child_ctx *c, const sigset_t *waitset)
{
        int go[2];
        if (pipe2(go, O_CLOEXEC) < 0)
                fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        int pidfd = -1;
        /* Copies of our memory (no CLONE_VM): they outlive us. */
        pid_t pid = (pid_t) syscall(SYS_clone, CLONE_PARENT | CLONE_PIDFD, 0, &pidfd, NULL, 0);
        if (pid < 0)
                fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        if (pid > 0) {
                close(go[0]);
                int r = send_spawned(c->sync_fd, pid, pidfd);
                if (r >= 0 && write(go[1], "g", 1) != 1)
                        r = -errno;
                _exit(r < 0 ? CHILD_EXIT_SETUP : 0);
        }
        /* The exec: gone with the supervisor, as we would have been. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(CHILD_EXIT_SETUP);
        wait_go(go);
        if (unshare(CLONE_NEWPID) < 0)
                fail(c, CHILD_STEP_EXEC_PIDNS, -errno, CHILD_EXIT_SETUP);
        /* Blocked before the fork: no SIGCHLD is lost, and init inherits
         * the mask run_init expects. */
        if (sigprocmask(SIG_BLOCK, waitset, NULL) < 0 || pipe2(go, O_CLOEXEC) < 0)
                fail(c, CHILD_STEP_INIT, -errno, CHILD_EXIT_SETUP);
        pid_t init = (pid_t) syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
        if (init < 0)
                fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        if (init == 0) {
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                        _exit(CHILD_EXIT_SETUP);
                wait_go(go); /* EOF: the exec died before our PDEATHSIG held */
                return;
        }
        close(go[0]);
        if (write(go[1], "g", 1) != 1)
                _exit(CHILD_EXIT_SETUP);
        close(go[1]);
        /* Nothing of the sandbox may reach or inspect us (we are in its
         * pid namespace): as init. */
        drop_caps_but_kill();
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        (void) syscall(SYS_close_range, 0, ~0U, 0);
        for (;;) {
                siginfo_t si;
                int sig = sigwaitinfo(waitset, &si);
                if (sig < 0)
                        continue;
                if (sig != SIGCHLD) {
                        (void) kill(init, sig);
                        continue;
                }
                int status;
                if (waitpid(init, &status, WNOHANG) == init)
                        _exit(0);
        }
}

/* A rootless session's init: its namespaces, the user namespace first
 * (joined first, it gives the rights to join the others), for the execs
 * (CHILD_MSG_NAMESPACE). One missing is the supervisor's error to report. */
static void send_namespaces(int sync_fd)
{
        static const struct {
                int type;
                const char *path;
        } ns[] = {
                {CLONE_NEWUSER, "/proc/self/ns/user"},     {CLONE_NEWNS, "/proc/self/ns/mnt"},
                {CLONE_NEWPID, "/proc/self/ns/pid"},       {CLONE_NEWNET, "/proc/self/ns/net"},
                {CLONE_NEWUTS, "/proc/self/ns/uts"},       {CLONE_NEWIPC, "/proc/self/ns/ipc"},
                {CLONE_NEWCGROUP, "/proc/self/ns/cgroup"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
                int nsfd = open(ns[i].path, O_RDONLY | O_CLOEXEC);
                if (nsfd < 0)
                        continue;
                struct child_msg m = {.kind = CHILD_MSG_NAMESPACE, .status = ns[i].type};
                (void) fdpass_send(sync_fd, &m, sizeof(m), &nsfd, 1, 0);
                close(nsfd);
        }
}

/* pid 1 of the sandbox: reaps orphans, forwards signals, reports how the
 * command ended. When it exits the kernel kills everything left in the pid
 * namespace, so no background process outlives the command. */
static _Noreturn void run_init(struct child_ctx *c, const sigset_t *waitset)
{
        pid_t main_pid = 0; /* a session's init has no command */
        if (!c->plan->init_only) {
#if defined(__SANITIZE_ADDRESS__)
                /* ASan cannot follow the switch to command_stack: in sanitizer
                 * builds the command gets a copy of init's memory instead (a
                 * raw clone, not fork(), which would take glibc's locks). */
                main_pid = (pid_t) syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
                if (main_pid == 0)
                        become_command(c);
#else
                main_pid = clone(command_main, command_stack + sizeof(command_stack),
                                 CLONE_VM | CLONE_VFORK | SIGCHLD, c);
#endif
                if (main_pid < 0)
                        fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        }

        /* Nothing of the command may reach or inspect pid 1: no capabilities
         * but CAP_KILL, not dumpable (so not ptrace-able, /proc/1/mem
         * closed), no fds. */
        drop_caps_but_kill();
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        int fd = c->sync_fd;
        if (fd > 0)
                (void) syscall(SYS_close_range, 0, (unsigned) fd - 1, 0);
        (void) syscall(SYS_close_range, (unsigned) fd + 1, ~0U, 0);
        if (c->plan->init_only) {
                /* The session's supervisor waits for this before it accepts
                 * execs; after it, nothing more is ever sent. With it, our
                 * root (O_PATH), opened before any of the sandbox's code
                 * ran: the supervisor finds /workspace and the tools from
                 * it, where a rootless one may not open /proc/PID/root of
                 * a process that is not dumpable. */
                if (c->plan->rootless.active)
                        send_namespaces(fd);
                int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                struct child_msg m = {.kind = CHILD_MSG_READY};
                (void) fdpass_send(fd, &m, sizeof(m), &root, root >= 0 ? 1 : 0, 0);
                if (root >= 0)
                        close(root);
        }

        for (;;) {
                siginfo_t si;
                int sig = sigwaitinfo(waitset, &si);
                if (sig < 0)
                        continue;
                if (sig != SIGCHLD) {
                        /* Never kill(0 or -1, ...): a session's init has no
                         * command to forward to. */
                        if (main_pid > 0)
                                (void) kill(main_pid, sig);
                        continue;
                }
                for (;;) {
                        int status;
                        pid_t w = waitpid(-1, &status, WNOHANG);
                        if (w <= 0)
                                break;
                        if (w == main_pid) {
                                struct child_msg m = {.kind = CHILD_MSG_EXIT, .status = status};
                                send_msg(fd, &m);
                                _exit(0);
                        }
                }
        }
}

/* Block until the parent sends `expect`; EOF means it died or gave up. */
static void wait_parent(struct child_ctx *c, char expect)
{
        char got = 0;
        ssize_t n;
        do
                n = read(c->sync_fd, &got, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1 || got != expect)
                _exit(CHILD_EXIT_SETUP);
}

/* Both entries. The context is on this stack, bounded: the child must not
 * allocate (rootfs_plan_add() refuses steps past ROOTFS_MAX_STEPS). */
static _Noreturn void child_run(const struct plan *plan, int sync_fd,
                                const struct rootfs_sources *sources,
                                const struct child_attach *attach)
{
        int host_fds[ROOTFS_MAX_STEPS];
        int lower_fds[ROOTFS_MAX_LOWERS];
        char exec_path[PATH_MAX];
        struct child_ctx c = {
                .plan = plan,
                .sync_fd = sync_fd,
                .host_fds = host_fds,
                .lower_fds = lower_fds,
                .sources = sources,
                .rootfs_fd = -1,
                .console_slave = -1,
                .exec_path = exec_path,
                .listener = -1,
                .attach = attach,
                .cgroup_quota_fd = -1,
        };

        /* If psrun dies, so does the sandbox: pid 1's death takes down the
         * whole pid namespace. (Not for a detached OCI container, which
         * outlives `psrun create` by design.) */
        if (plan->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                fail(&c, CHILD_STEP_SYNC, -errno, CHILD_EXIT_SETUP);
        run_steps(&c, early_steps, ARRAY_SIZE(early_steps));
        /* Wait for the parent to write the id maps. EOF means it died
         * before the death signal was armed. A zygote joins namespaces that
         * exist: there are no maps to wait for. */
        if (!attach)
                wait_parent(&c, CHILD_SYNC_MAPPED);
        /* Maps written by the user stayed dumpable for them (step_not_dumpable). */
        if (plan_maps_by_user(plan) && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                fail(&c, CHILD_STEP_SYNC, -errno, CHILD_EXIT_SETUP);

        umask(0);
        run_steps(&c, setup_steps, ARRAY_SIZE(setup_steps));
        /* A zygote has put itself in its cgroups (step_attach_self) before
         * anything of the command can run. */
        if (attach)
                become_command(&c);

        /* Meanwhile the parent put us in our cgroups: only once we are there
         * may the command start, so everything it does is limited. */
        wait_parent(&c, CHILD_SYNC_CONFINED);
        run_step(&c, CHILD_STEP_JOIN, step_cgroupns_confined);
        run_step(&c, CHILD_STEP_USER_QUOTAS, step_cgroup_quota_confined);

        if (plan->spawn_command)
                spawn_command(&c);

        sigset_t waitset;
        sigemptyset(&waitset);
        static const int forwarded[] = {SIGCHLD, SIGINT,  SIGTERM, SIGHUP,
                                        SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&waitset, forwarded[i]);
        if (plan->exec_pidns)
                spawn_pidns_init(&c, &waitset); /* the exec's own pid 1 from here */
        else if (!plan->use_init)
                become_command(&c);
        /* Blocked before the fork, so no SIGCHLD is lost. */
        if (sigprocmask(SIG_BLOCK, &waitset, NULL) < 0)
                fail(&c, CHILD_STEP_INIT, -errno, CHILD_EXIT_SETUP);
        if (setsid() < 0)
                fail(&c, CHILD_STEP_INIT, -errno, CHILD_EXIT_SETUP);
        run_init(&c, &waitset);
}

_Noreturn void child_main(const struct plan *plan, int sync_fd,
                          const struct rootfs_sources *sources)
{
        child_run(plan, sync_fd, sources, NULL);
}

_Noreturn void child_main_zygote(const struct plan *plan, int sync_fd,
                                 const struct child_attach *attach)
{
        child_run(plan, sync_fd, NULL, attach);
}
