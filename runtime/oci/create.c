/* SPDX-License-Identifier: MIT */
/*
 * OCI create, start and exec: the operations that start processes.
 *
 * create leaves no psrun process behind: init is our child until we exit,
 * then the nearest subreaper's (the containerd shim reaps it, as with runc,
 * whatever wrapper scripts are in between); it sets itself up completely (namespaces, root, mounts,
 * identity, capabilities) and then blocks reading the exec FIFO, which it
 * holds open for reading and writing. start opens the FIFO for writing
 * without blocking (ENXIO: init is gone), writes one byte, and init execs.
 */
#include "runtime/oci/container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fault.h"
#include "common/fdpass.h"
#include "common/fileio.h"
#include "common/number.h"
#include "runtime/launch.h"
#include "runtime/oci/console.h"
#include "runtime/oci/hooks.h"
#include "runtime/oci/plan.h"
#include "runtime/oci/rootless.h"

int oci_require_root(const char *what, psrun_error *err)
{
        if (geteuid() == 0)
                return 0;
        return psrun_error_set(err, EPERM,
                               "%s: psrun needs root here (--rootless false): run it as root, or "
                               "with --rootless true or auto (docs/rootless.md)",
                               what);
}

int oci_write_pid_file(const char *path, pid_t pid, psrun_error *err)
{
        _cleanup_free_ char *tmp = NULL;
        if (asprintf(&tmp, "%s.psrun-tmp", path) < 0)
                return psrun_error_errno(err, ENOMEM, "pid file");
        _cleanup_close_ int fd =
                open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return psrun_error_errno(err, errno, "pid file: %s", tmp);
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%d", (int) pid);
        if (write(fd, buf, (size_t) len) != len || rename(tmp, path) < 0) {
                int r = -errno;
                unlink(tmp);
                return psrun_error_errno(err, r ? r : -EIO, "pid file: %s", path);
        }
        return 0;
}

/* The config's text, as read once by create: parsed from these bytes and
 * kept with the container, so a bundle edited later changes nothing. */
static int read_config(const char *path, char **ret, size_t *len, psrun_error *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return psrun_error_errno(err, errno, "%s", path);
        int r = read_all(fd, OCI_CONFIG_MAX_SIZE, ret, len);
        if (r == -EFBIG)
                return psrun_error_set(err, EFBIG, "%s: larger than %u MiB", path,
                                       OCI_CONFIG_MAX_SIZE >> 20);
        return r < 0 ? psrun_error_errno(err, r, "%s: read", path) : 0;
}

static int save_config(struct oci_container *c, const char *buf, size_t len, psrun_error *err)
{
        int dir = oci_container_dir_fd(c);
        _cleanup_close_ int fd =
                openat(dir, OCI_CONFIG_COPY ".tmp",
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        int r = fd < 0 ? -errno : write_all(fd, buf, len);
        if (r >= 0 && renameat(dir, OCI_CONFIG_COPY ".tmp", dir, OCI_CONFIG_COPY) < 0)
                r = -errno;
        return r < 0 ? psrun_error_errno(err, r, "state: keep config.json") : 0;
}

/* Undo a create that failed after the container's directory was made
 * (frees cg). */
static void create_rollback(struct oci_container *c, struct cgroup *cg, struct launch *l)
{
        if (l->pidfd >= 0) {
                (void) syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
                struct pollfd p = {l->pidfd, POLLIN, 0};
                (void) poll(&p, 1, 2000);
        }
        if (cg)
                (void) cgroup_remove(cg, NULL);
        if (c)
                (void) oci_container_delete(c, NULL);
}

/* A CHILD_MSG_SECCOMP's listener to the config's seccomp agent, then closed:
 * psrun keeps no copy. */
static int hand_listener(const struct oci_config *config, const struct oci_state *st, pid_t pid,
                         int listener, psrun_error *err)
{
        const struct oci_seccomp *sc = config->linux_ ? config->linux_->seccomp : NULL;
        int r = sc && sc->listener_path
                        ? oci_seccomp_agent_send(sc, st, pid, listener, err)
                        : psrun_error_set(err, EPROTO, "seccomp: a listener nobody asked for");
        close(listener);
        return r;
}

static int wait_ready(struct launch *l, const struct plan *plan, const struct oci_config *config,
                      const struct oci_state *st, psrun_error *err)
{
        struct child_msg m;
        int listener = -1;
        int r = launch_read_msg_fd(l, &m, &listener);
        bool handed = false;
        if (r == 0 && m.kind == CHILD_MSG_SECCOMP && listener >= 0) {
                /* The agent gets it while the container is still creating;
                 * READY follows. */
                r = hand_listener(config, st, l->pid, TAKE_FD(listener), err);
                if (r < 0)
                        return r;
                handed = true;
                r = launch_read_msg(l, &m);
        }
        safe_close(listener);
        /* An agent asked for and given nothing: its notifications would
         * all fail (ENOSYS), so the container does not start. */
        if (r == 0 && m.kind == CHILD_MSG_READY && plan->seccomp_listener && !handed)
                return psrun_error_set(err, EPROTO,
                                       "linux.seccomp.listenerPath: the container's init handed "
                                       "over no seccomp listener");
        if (r == 0 && m.kind == CHILD_MSG_READY)
                return 0;
        if (r == 0 && m.kind == CHILD_MSG_ERROR) {
                char msg[PSRUN_ERROR_MSG_MAX];
                launch_describe_error(plan, &m, msg, sizeof(msg));
                return psrun_error_set(err, m.err ? m.err : EIO, "%s", msg);
        }
        char how[64];
        if (launch_child_died(l, how, sizeof(how)))
                return psrun_error_set(err, ECHILD, "the container's init %s during set-up", how);
        return psrun_error_set(err, ECHILD, "container init exited during setup");
}

/*
 * A pid namespace is entered for the children to come (setns on a pid
 * namespace only changes pid_for_children): we do that just around the
 * clone, and go back to our own right after, so that nothing else we start
 * (a hook, a sanitizer's helper) lands in the container.
 */
static int enter_pid_namespace(int ns_fd, int *ret_own, const char *what, psrun_error *err)
{
        *ret_own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
        if (*ret_own < 0)
                return psrun_error_errno(err, errno, "%s: /proc/self/ns/pid", what);
        if (setns(ns_fd, CLONE_NEWPID) < 0)
                return psrun_error_errno(err, errno, "%s", what);
        return 0;
}

static void leave_pid_namespace(int *own)
{
        if (*own >= 0)
                (void) setns(*own, CLONE_NEWPID);
        *own = safe_close(*own);
}

static int joined_pid_namespace(const struct plan *plan)
{
        for (size_t i = 0; i < plan->n_joins; i++)
                if (plan->joins[i].type == CLONE_NEWPID)
                        return plan->joins[i].fd;
        return -1;
}

/* Namespaces joined by path that a new user namespace could not enter:
 * net, ipc, uts and cgroup namespaces belong to the user namespace they were
 * made in, and the container's new one has no rights there. As crun does,
 * psrun's thread enters them before clone3, so the child starts in them
 * (and leaves them out of its own joins), then returns to its own. */
struct parent_joins {
        int type[4];
        int own[4];
        size_t n;
};

static int enter_joins_for_new_userns(struct plan *plan, struct parent_joins *pj, psrun_error *err)
{
        static const struct {
                int type;
                const char *name;
        } kinds[] = {{CLONE_NEWNET, "net"},
                     {CLONE_NEWIPC, "ipc"},
                     {CLONE_NEWUTS, "uts"},
                     {CLONE_NEWCGROUP, "cgroup"}};
        *pj = (struct parent_joins){.n = 0};
        if (!(plan->clone_flags & CLONE_NEWUSER))
                return 0;
        for (size_t i = 0; i < plan->n_joins; i++) {
                struct plan_join *j = &plan->joins[i];
                const char *name = NULL;
                for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
                        if (kinds[k].type == j->type)
                                name = kinds[k].name;
                if (!name)
                        continue;
                char own[64];
                snprintf(own, sizeof(own), "/proc/thread-self/ns/%s", name);
                int fd = open(own, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return psrun_error_errno(err, errno, "linux.namespaces: %s", own);
                pj->type[pj->n] = j->type;
                pj->own[pj->n++] = fd;
                if (setns(j->fd, j->type) < 0)
                        return psrun_error_errno(err, errno, "linux.namespaces: %s", name);
                j->fd = safe_close(j->fd);
        }
        /* The child joins the rest. */
        size_t kept = 0;
        for (size_t i = 0; i < plan->n_joins; i++)
                if (plan->joins[i].fd >= 0)
                        plan->joins[kept++] = plan->joins[i];
        plan->n_joins = kept;
        return 0;
}

static void leave_parent_joins(struct parent_joins *pj)
{
        for (size_t i = pj->n; i-- > 0;) {
                (void) setns(pj->own[i], pj->type[i]);
                pj->own[i] = safe_close(pj->own[i]);
        }
        pj->n = 0;
}

static int write_oom_score_adj(pid_t pid, const struct oci_process *proc, psrun_error *err)
{
        if (!proc->oom_score_adj.set)
                return 0;
        char path[64], value[32];
        snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int) pid);
        int len = snprintf(value, sizeof(value), "%lld", (long long) proc->oom_score_adj.value);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, value, (size_t) len) != len) {
                int r = errno;
                if (r == EACCES || r == EPERM)
                        return psrun_error_set(err, r,
                                               "process.oomScoreAdj: lowering it to %s needs "
                                               "CAP_SYS_RESOURCE",
                                               value);
                return psrun_error_errno(err, r, "process.oomScoreAdj: write %s", path);
        }
        return 0;
}

static int check_cgroup_manager(const struct oci_create_options *o, psrun_error *err)
{
        if (o->systemd_cgroup)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "--systemd-cgroup: psrun manages container cgroups through "
                                       "cgroupfs only; use --cgroup-manager cgroupfs (Docker: "
                                       "native.cgroupdriver=cgroupfs)");
        return 0;
}

static int record_planned_cgroups(struct oci_container *c, struct oci_state *st,
                                  const struct oci_linux *lx, const char *id, psrun_error *err)
{
        _cleanup_strv_free_ char **paths = NULL;
        int r = cgroup_plan_at(lx ? lx->cgroups_path : NULL, id, &paths, err);
        for (size_t i = 0; r >= 0 && paths[i]; i++)
                r = oci_state_add_cgroup_path(st, paths[i], err);
        if (r >= 0)
                r = oci_state_write(c, st, err);
        return r;
}

/* Annotations are kept in state.json: refuse before anything exists what
 * would make a state too large to read back (and so a container that no
 * command could delete). */
static int check_annotations_size(const struct oci_config *config, psrun_error *err)
{
        size_t total = 0;
        for (size_t i = 0; i < config->n_annotations; i++)
                total += strlen(config->annotations[i].key) + strlen(config->annotations[i].value);
        if (total > OCI_ANNOTATIONS_MAX_SIZE)
                return psrun_error_set(err, EFBIG,
                                       "annotations: %zu bytes of keys and values, more than the "
                                       "%u KiB psrun keeps",
                                       total, OCI_ANNOTATIONS_MAX_SIZE >> 10);
        return 0;
}

/* Rootless, the container's cgroup could not be made (error r): where the
 * user may not write it, the container goes without one, its planned paths
 * out of the state, and what its limits become is decided and logged
 * (runtime/oci/rootless.h). Any other failure stays one. */
static int rootless_without_cgroup(struct oci_root *root, struct oci_container *c,
                                   struct oci_state *st, const struct oci_config *config,
                                   struct plan *plan, int r, psrun_error *err)
{
        if (r != -EACCES && r != -EPERM && r != -EROFS)
                return r;
        oci_root_log(root, LOG_LEVEL_DEBUG, "create %s: no cgroup (%s)", st->id, err->msg);
        psrun_error_clear(err);
        strv_free(st->cgroup_paths);
        st->cgroup_paths = NULL;
        char said[320];
        r = oci_rootless_limits(config, plan, said, sizeof(said), err);
        if (r >= 0)
                r = oci_state_write(c, st, err);
        if (r >= 0 && said[0])
                oci_root_log(root, LOG_LEVEL_WARNING, "create %s: %s", st->id, said);
        return r;
}

int oci_create(struct oci_root *root, const struct oci_create_options *o, pid_t *ret_pid,
               int *ret_pidfd, psrun_error *err)
{
        _cleanup_(oci_config_free) struct oci_config config = {0};
        _cleanup_(oci_state_free) struct oci_state st = {0};
        _cleanup_(plan_free) struct plan plan;
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_free_ char *bundle = NULL;
        struct cgroup *cg = NULL;
        struct launch l = LAUNCH_INIT;
        int r;

        plan_init(&plan);
        r = oci_id_validate(o->id, err);
        if (r < 0)
                return r;
        r = o->rootless ? 0 : oci_require_root("create", err);
        if (r < 0)
                return r;
        r = check_cgroup_manager(o, err);
        if (r < 0)
                return r;
        bundle = realpath(o->bundle ? o->bundle : ".", NULL);
        if (!bundle)
                return psrun_error_errno(err, errno, "bundle: %s", o->bundle ? o->bundle : ".");
        _cleanup_free_ char *config_path = NULL, *config_text = NULL;
        size_t config_len = 0;
        /* A relative --config names a file in the bundle, as crun reads it. */
        if (o->config_path && o->config_path[0] == '/')
                config_path = strdup(o->config_path);
        else if (o->config_path) {
                if (asprintf(&config_path, "%s/%s", bundle, o->config_path) < 0)
                        config_path = NULL;
        } else if (asprintf(&config_path, "%s/config.json", bundle) < 0)
                config_path = NULL;
        if (!config_path)
                return psrun_error_errno(err, ENOMEM, "config.json");
        r = read_config(config_path, &config_text, &config_len, err);
        if (r >= 0)
                r = oci_config_parse_named(config_path, config_text, config_len, &config, err);
        if (r < 0)
                return r;
        struct oci_plan_options po = {
                .id = o->id,
                .bundle = bundle,
                .no_new_keyring = o->no_new_keyring,
                .detached = o->detached,
                .no_pivot = o->no_pivot,
                .preserve_fds = o->preserve_fds,
                .socket_activation = o->socket_activation,
                .listen_fds = o->listen_fds,
                .rootless = o->rootless,
        };
        r = plan_from_oci(&config, &po, &plan, err);
        if (r < 0)
                return r;
        /* Limits asked for but no cgroup to hold them: refused, not dropped. */
        if (o->no_cgroups && config.linux_ && config.linux_->resources)
                return psrun_error_set(err, EINVAL,
                                       "linux.resources: given, but --cgroup-manager disabled "
                                       "makes no cgroup to apply them in");
        oci_root_log(root, LOG_LEVEL_DEBUG,
                     "create %s: config %s, root %s, %zu mount steps, namespaces %#llx", o->id,
                     config_path, plan.rootfs_dir, plan.rootfs.n_steps,
                     (unsigned long long) plan.clone_flags);
        if (config.process->terminal && !o->console_socket)
                return psrun_error_set(err, EINVAL,
                                       "process.terminal: a terminal needs --console-socket");
        if (!config.process->terminal && o->console_socket)
                return psrun_error_set(err, EINVAL,
                                       "--console-socket: given, but process.terminal is false");

        r = check_annotations_size(&config, err);
        if (r >= 0)
                r = oci_state_init(&st, o->id, bundle, err);
        /* The parser checked that the keys are unique. */
        for (size_t i = 0; r >= 0 && i < config.n_annotations; i++)
                r = oci_state_append_annotation(&st, config.annotations[i].key,
                                                config.annotations[i].value, err);
        if (r >= 0 && !(st.rootfs = strdup(plan.rootfs_dir)))
                r = psrun_error_errno(err, ENOMEM, "state");
        st.detached = o->detached;
        st.no_new_keyring = o->no_new_keyring;
        if (r >= 0)
                r = oci_container_create(root, o->id, &st, &c, err);
        if (r < 0)
                return r;
        fault_point("create:state");

        /* From here on, a failure removes what was made. */
        r = save_config(c, config_text, config_len, err);
        /* The cgroups go into the state before they exist: a create killed
         * from here on leaves a state from which delete --force and gc
         * find everything. */
        if (r >= 0 && !o->no_cgroups)
                r = record_planned_cgroups(c, &st, config.linux_, o->id, err);
        if (r >= 0)
                fault_point("create:planned");
        if (r >= 0 && !o->no_cgroups) {
                const struct oci_linux *lx = config.linux_;
                const struct oci_resources *given = lx ? lx->resources : NULL;
                struct oci_resources res;
                _cleanup_free_ struct oci_device_rule *rules = NULL;
                if (oci_resources_with_default_devices(given, &res, &rules) < 0)
                        r = psrun_error_errno(err, ENOMEM, "linux.resources");
                else
                        r = cgroup_create_at(lx ? lx->cgroups_path : NULL, o->id,
                                             given ? &res : NULL, &cg, err);
                if (r < 0 && o->rootless)
                        r = rootless_without_cgroup(root, c, &st, &config, &plan, r, err);
        }
        if (r >= 0)
                fault_point("create:cgroups");
        char **paths = NULL;
        if (r >= 0 && cg)
                r = cgroup_paths(cg, &paths, err);
        if (r >= 0)
                r = oci_rootfs_own_cgroup(&plan.rootfs, paths, err);
        strv_free(paths);
        if (r >= 0)
                r = oci_container_make_fifo(c, OCI_EXEC_FIFO, err);
        if (r >= 0) {
                r = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_RDWR, err);
                if (r >= 0)
                        plan.exec_fifo_fd = r;
        }
        if (r >= 0 && o->console_socket)
                r = oci_console_connect(o->console_socket, &plan.console_fd, err);
        int own_pidns = -1;
        if (r >= 0 && joined_pid_namespace(&plan) >= 0)
                r = enter_pid_namespace(joined_pid_namespace(&plan), &own_pidns,
                                        "linux.namespaces: pid", err);
        struct parent_joins pj = {.n = 0};
        if (r >= 0)
                r = enter_joins_for_new_userns(&plan, &pj, err);
        if (r >= 0)
                r = launch_clone(&plan, cg, &l, err);
        leave_parent_joins(&pj);
        leave_pid_namespace(&own_pidns);
        if (r >= 0)
                fault_point("create:cloned");
        if (r >= 0)
                r = launch_confine(&l, &plan, cg, err);
        if (r >= 0)
                r = write_oom_score_adj(l.pid, config.process, err);
        if (r >= 0)
                r = oci_state_set_pid(&st, l.pid, err);
        if (r >= 0)
                r = oci_state_write(c, &st, err);
        if (r >= 0)
                fault_point("create:pid");
        /* runtime.md: prestart (deprecated) and createRuntime hooks run once
         * the namespaces exist, before the root is finished. Docker's
         * network setup is a prestart hook. */
        if (r >= 0)
                r = oci_run_hooks(&config, OCI_HOOK_PRESTART, &st, -1, err);
        if (r >= 0)
                r = oci_run_hooks(&config, OCI_HOOK_CREATE_RUNTIME, &st, -1, err);
        if (r >= 0)
                r = launch_release(&l, err);
        if (r >= 0)
                fault_point("create:released");
        if (r >= 0)
                r = wait_ready(&l, &plan, &config, &st, err);
        if (r >= 0)
                fault_point("create:ready");
        if (r >= 0)
                r = oci_run_hooks(&config, OCI_HOOK_CREATE_CONTAINER, &st, l.pidfd, err);
        if (r >= 0) {
                st.status = OCI_STATUS_CREATED;
                oci_root_log(root, LOG_LEVEL_DEBUG, "create %s: init %d is waiting for start",
                             o->id, (int) l.pid);
                r = oci_state_write(c, &st, err);
        }
        if (r >= 0 && o->pid_file)
                r = oci_write_pid_file(o->pid_file, l.pid, err);
        if (r < 0) {
                create_rollback(c, cg, &l);
                launch_close(&l);
                return r;
        }
        cgroup_close(cg);
        if (ret_pid)
                *ret_pid = l.pid;
        if (ret_pidfd)
                *ret_pidfd = TAKE_FD(l.pidfd);
        launch_close(&l);
        return 0;
}

int oci_start(struct oci_root *root, const char *id, psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_(oci_state_free) struct oci_state st = {0};
        _cleanup_(oci_config_free) struct oci_config config = {0};
        int r = oci_open_locked(root, id, OCI_LOCK_EXCLUSIVE, &c, &st, err);
        if (r < 0)
                return r;
        if (st.status != OCI_STATUS_CREATED)
                return psrun_error_set(err, EINVAL,
                                       "container \"%s\" is %s, not created: it "
                                       "cannot be started",
                                       id, oci_status_to_string(st.status));
        r = oci_load_container_config(c, &config, err);
        if (r < 0)
                return r;
        {
                _cleanup_close_ int pidfd = -1;
                r = oci_pin_init(&st, &pidfd, err);
                if (r >= 0)
                        r = oci_run_hooks(&config, OCI_HOOK_START_CONTAINER, &st, pidfd, err);
                if (r < 0)
                        return r;
        }
        _cleanup_close_ int fd =
                oci_container_open_fifo(c, OCI_EXEC_FIFO, O_WRONLY | O_NONBLOCK, err);
        if (fd == -ENXIO)
                return psrun_error_set(err, ESRCH,
                                       "container \"%s\": its init is not running any more", id);
        if (fd < 0)
                return fd;
        char byte = 0;
        if (write(fd, &byte, 1) != 1)
                return psrun_error_errno(err, errno, "start: exec.fifo");
        (void) unlinkat(oci_container_dir_fd(c), OCI_EXEC_FIFO, 0);
        st.status = OCI_STATUS_RUNNING;
        oci_root_log(root, LOG_LEVEL_DEBUG, "start %s: init %d released", id, st.pid);
        r = oci_state_write(c, &st, err);
        if (r < 0)
                return r;
        /* runtime.md: a failing poststart hook is a warning, not an error. */
        psrun_error herr = {0};
        if (oci_run_hooks(&config, OCI_HOOK_POSTSTART, &st, -1, &herr) < 0)
                oci_root_log(root, LOG_LEVEL_WARNING, "%s", herr.msg);
        return 0;
}

/* ---- exec ---- */

/* plan.spawn_command: the child sends the command's pid and pidfd (after
 * the error record of that process, if one of its steps failed) and exits.
 * l is then the command's process, and the child is reaped. */
/* *listener: the command's seccomp listener, when its CHILD_MSG_SECCOMP came
 * before the SPAWNED record (the two processes race), else -1. */
static int take_command(struct launch *l, const struct plan *plan, int *listener, psrun_error *err)
{
        *listener = -1;
        struct child_msg m;
        char error[PSRUN_ERROR_MSG_MAX] = "";
        int failed = 0;
        _cleanup_close_ int pidfd = -1;
        pid_t pid = 0;
        for (;;) {
                struct fdpass_in in;
                ssize_t n = fdpass_recv(l->sync_fd, &m, sizeof(m), &in, 0);
                if (n <= 0)
                        break;
                /* The first fd that came; any other is closed. */
                int fd = in.n_fds ? in.fds[0] : -1;
                fdpass_close(&in, 1);
                if (n == (ssize_t) sizeof(m) && m.kind == CHILD_MSG_SPAWNED && fd >= 0) {
                        pidfd = fd;
                        pid = (pid_t) m.status;
                        break;
                }
                if (n == (ssize_t) sizeof(m) && m.kind == CHILD_MSG_SECCOMP && fd >= 0 &&
                    *listener < 0) {
                        *listener = fd;
                        continue;
                }
                if (fd >= 0)
                        close(fd);
                if (n == (ssize_t) sizeof(m) && m.kind == CHILD_MSG_ERROR && !failed) {
                        launch_describe_error(plan, &m, error, sizeof(error));
                        failed = m.err ? m.err : EIO;
                }
        }
        char how[64] = "";
        if (!failed && pidfd < 0 && !launch_child_died(l, how, sizeof(how)))
                snprintf(how, sizeof(how), "closed the sync socket");
        siginfo_t si;
        (void) waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED);
        safe_close(l->pidfd);
        l->pidfd = TAKE_FD(pidfd);
        l->pid = pid;
        if (failed) {
                /* Its process ended after the record: reap it here. */
                if (l->pidfd >= 0)
                        (void) waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED);
                l->pidfd = safe_close(l->pidfd);
                return psrun_error_set(err, failed, "%s", error);
        }
        if (l->pidfd < 0)
                return psrun_error_set(err, ECHILD,
                                       "exec: the process that joins the container "
                                       "%s before it made the command's",
                                       how);
        return 0;
}

static int wait_exec(struct launch *l, const struct plan *plan, const struct oci_config *config,
                     const struct oci_state *st, int listener, bool detach, int *exit_code,
                     psrun_error *err)
{
        /* The sync socket closes at execve (it is close-on-exec): EOF means
         * the process runs; a record means a step failed. Before either, the
         * command's seccomp listener, if it has one for an agent (unless it
         * came before the command's pid did: then it is `listener`). */
        struct child_msg m;
        int fresh = -1;
        int r = launch_read_msg_fd(l, &m, &fresh);
        if (r == 0 && m.kind == CHILD_MSG_SECCOMP && fresh >= 0 && listener < 0) {
                listener = TAKE_FD(fresh);
                r = launch_read_msg(l, &m);
        }
        safe_close(fresh);
        bool failed = r == 0 && m.kind == CHILD_MSG_ERROR;
        if (listener >= 0 && failed)
                close(listener);
        else if (listener >= 0 && (r = hand_listener(config, st, l->pid, listener, err)) < 0)
                return r;
        else if (listener < 0 && !failed && plan->seccomp_listener)
                return psrun_error_set(err, EPROTO,
                                       "linux.seccomp.listenerPath: the exec's process handed "
                                       "over no seccomp listener");
        if (r == 0 && m.kind == CHILD_MSG_ERROR) {
                char msg[PSRUN_ERROR_MSG_MAX];
                launch_describe_error(plan, &m, msg, sizeof(msg));
                return psrun_error_set(err, m.err ? m.err : EIO, "%s", msg);
        }
        if (detach)
                return 0;

        /* Forward the usual signals while we wait, as psrun run does. */
        static const int forwarded[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                                        SIGUSR1, SIGUSR2, SIGWINCH};
        sigset_t set, old;
        sigemptyset(&set);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&set, forwarded[i]);
        sigprocmask(SIG_BLOCK, &set, &old);
        _cleanup_close_ int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        for (;;) {
                struct pollfd p[2] = {{l->pidfd, POLLIN, 0}, {sfd, POLLIN, 0}};
                if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
                        break;
                struct signalfd_siginfo si;
                while (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                        (void) syscall(SYS_pidfd_send_signal, l->pidfd, (int) si.ssi_signo, NULL,
                                       0);
                if (p[0].revents)
                        break;
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        siginfo_t si = {0};
        if (waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED) < 0)
                return psrun_error_errno(err, errno, "exec: wait");
        *exit_code = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        return 0;
}

/* The container's process with exec's flags on top. Shallow: it points into
 * config and o, and owns only the env vector (*env_owned). */
/* exec --user UID[:GID]: each a strict decimal id. (uid_t) -1 means "leave
 * unchanged" to setresuid, so it is refused rather than taken as an id. */
static int parse_user(const char *user, uint32_t *uid, uint32_t *gid, psrun_error *err)
{
        char uid_text[32];
        const char *colon = strchr(user, ':');
        const char *uid_part = user;
        int64_t v;
        if (colon) {
                /* A uid part too long for the buffer is refused whole, colon
                 * and all: no id has that many digits. */
                size_t len = (size_t) (colon - user);
                if (len < sizeof(uid_text)) {
                        memcpy(uid_text, user, len);
                        uid_text[len] = '\0';
                        uid_part = uid_text;
                }
        }
        int r = number_parse_option("exec: --user: uid", uid_part, 0, UINT32_MAX - 1, &v, err);
        if (r < 0)
                return r;
        *uid = (uint32_t) v;
        *gid = 0;
        if (!colon)
                return 0;
        r = number_parse_option("exec: --user: gid", colon + 1, 0, UINT32_MAX - 1, &v, err);
        if (r < 0)
                return r;
        *gid = (uint32_t) v;
        return 0;
}

static int exec_process(const struct oci_config *config, const struct oci_exec_options *o,
                        struct oci_process *p, struct oci_capabilities *caps, char ***env_owned,
                        psrun_error *err)
{
        if (!config->process)
                return psrun_error_set(err, EINVAL, "exec: the container's config has no process");
        if (!o->args || !o->args[0] || !o->args[0][0])
                return psrun_error_set(err, EINVAL, "exec: no command given");
        *p = *config->process;
        p->args = o->args;
        for (p->n_args = 0; o->args[p->n_args]; p->n_args++)
                ;
        p->terminal = o->tty;
        p->console_size = NULL;
        if (o->cwd)
                p->cwd = (char *) o->cwd;
        if (o->no_new_privs)
                p->no_new_privileges = true;
        if (o->user) {
                uint32_t uid, gid;
                int r = parse_user(o->user, &uid, &gid, err);
                if (r < 0)
                        return r;
                p->user.uid = uid;
                p->user.gid = gid;
                p->user.additional_gids = NULL;
                p->user.n_additional_gids = 0;
        }
        if (o->n_caps) {
                *caps = p->capabilities ? *p->capabilities : (struct oci_capabilities){0};
                for (size_t i = 0; i < o->n_caps; i++) {
                        cap_value_t cap;
                        if (cap_from_name(o->caps[i], &cap) < 0)
                                return psrun_error_set(err, EINVAL,
                                                       "exec: --cap: unknown capability `%s`",
                                                       o->caps[i]);
                        uint64_t bit = 1ULL << cap;
                        caps->bounding |= bit;
                        caps->effective |= bit;
                        caps->permitted |= bit;
                }
                p->capabilities = caps;
        }
        /* env: the container's, a given NAME replacing the container's. */
        size_t n = 0;
        char **env = calloc(p->n_env + o->n_env + 1, sizeof(char *));
        if (!env)
                return psrun_error_errno(err, ENOMEM, "exec");
        for (size_t i = 0; i < p->n_env; i++)
                env[n++] = p->env[i];
        for (size_t i = 0; i < o->n_env; i++) {
                const char *eq = strchr(o->env[i], '=');
                if (!eq || eq == o->env[i]) {
                        free(env);
                        return psrun_error_set(err, EINVAL, "exec: --env: `%s` is not NAME=value",
                                               o->env[i]);
                }
                size_t len = (size_t) (eq - o->env[i]) + 1, k = 0;
                while (k < n && strncmp(env[k], o->env[i], len) != 0)
                        k++;
                env[k] = (char *) o->env[i];
                if (k == n)
                        n++;
        }
        p->env = env;
        p->n_env = n;
        *env_owned = env;
        return 0;
}

int oci_exec(struct oci_root *root, const struct oci_exec_options *o, int *exit_code,
             psrun_error *err)
{
        _cleanup_free_ char **env_owned = NULL;
        struct oci_process built;
        struct oci_capabilities built_caps;
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_(oci_state_free) struct oci_state st = {0};
        _cleanup_(oci_config_free) struct oci_config config = {0};
        _cleanup_(plan_free) struct plan plan;
        _cleanup_close_ int pidfd = -1;
        struct cgroup *cg = NULL;
        struct launch l = LAUNCH_INIT;

        plan_init(&plan);
        int r = oci_open_locked(root, o->id, OCI_LOCK_SHARED, &c, &st, err);
        if (r < 0)
                return r;
        if (st.status != OCI_STATUS_RUNNING && st.status != OCI_STATUS_CREATED)
                return psrun_error_set(err, EINVAL, "container \"%s\" is %s: cannot exec in it",
                                       o->id, oci_status_to_string(st.status));
        r = oci_pin_init(&st, &pidfd, err);
        if (r < 0)
                return r;
        r = oci_load_container_config(c, &config, err);
        if (r < 0)
                return r;
        const struct oci_process *proc = o->process;
        if (!proc) {
                r = exec_process(&config, o, &built, &built_caps, &env_owned, err);
                if (r < 0)
                        return r;
                proc = &built;
        }
        if (proc->terminal && !o->console_socket)
                return psrun_error_set(err, EINVAL, "exec: a terminal needs --console-socket");
        struct oci_plan_options po = {
                .id = o->id,
                .bundle = st.bundle,
                .no_new_keyring = st.no_new_keyring,
                .detached = o->detach,
                .preserve_fds = o->preserve_fds,
        };
        r = plan_for_exec(&config, proc, st.pid, pidfd, &po, &plan, err);
        if (r < 0)
                return r;
        if (proc->terminal &&
            (r = oci_console_connect(o->console_socket, &plan.console_fd, err)) < 0)
                return r;
        if (st.cgroup_paths && st.cgroup_paths[0] &&
            (r = cgroup_open(st.cgroup_paths, &cg, err)) < 0)
                return r;
        /* The child is made in our pid namespace, out of the container's
         * sight, and makes the command's process in the container's once it
         * has joined the rest (plan.spawn_command). */
        oci_container_close(TAKE_PTR(c)); /* no lock fd in the process */
        r = launch_clone(&plan, cg, &l, err);
        /* execCPUAffinity.initial: ours to give the child, once, before it
         * joins anything (the command's process gets .final itself). */
        if (r >= 0 && plan.has_cpus_initial &&
            sched_setaffinity(l.pid, sizeof(plan.cpus_initial), &plan.cpus_initial) < 0)
                r = psrun_error_errno(err, errno, "process.execCPUAffinity.initial");
        if (r >= 0)
                r = launch_confine(&l, &plan, cg, err);
        if (r >= 0)
                r = launch_release(&l, err);
        int listener = -1;
        if (r >= 0)
                r = take_command(&l, &plan, &listener, err);
        if (r >= 0 && o->pid_file)
                r = oci_write_pid_file(o->pid_file, l.pid, err);
        if (r >= 0)
                r = wait_exec(&l, &plan, &config, &st, TAKE_FD(listener), o->detach, exit_code,
                              err);
        safe_close(listener);
        if (r < 0 && l.pidfd >= 0) {
                /* Reaped here: a zombie left to whoever inherits it stays in
                 * the container's cgroup, and `delete` waits for it. */
                (void) syscall(SYS_pidfd_send_signal, l.pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                (void) waitid((idtype_t) P_PIDFD, (id_t) l.pidfd, &si, WEXITED);
        }
        cgroup_close(cg);
        launch_close(&l);
        return r;
}
