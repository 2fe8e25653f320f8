/* SPDX-License-Identifier: MIT */
/* OCI kill, delete, state, pause/resume, update, ps and stats. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/oci/container.h"
#include "runtime/oci/rootless.h"

static int open_cgroup(const struct oci_state *st, struct cgroup **cg, psrun_error *err)
{
        *cg = NULL;
        if (!st->cgroup_paths || !st->cgroup_paths[0])
                return psrun_error_set(err, EOPNOTSUPP,
                                       "container \"%s\" has no cgroup (rootless, or "
                                       "--cgroup-manager disabled)",
                                       st->id);
        return cgroup_open(st->cgroup_paths, cg, err);
}

int oci_get_state(struct oci_root *root, const char *id, struct oci_state *st, psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        int r = oci_open_locked(root, id, OCI_LOCK_SHARED, &c, st, err);
        if (r < 0)
                return r;
        /* Paused is what the freezer says, whoever froze it. */
        if (st->status == OCI_STATUS_RUNNING || st->status == OCI_STATUS_PAUSED) {
                struct cgroup *cg = NULL;
                if (st->cgroup_paths && st->cgroup_paths[0] &&
                    cgroup_open(st->cgroup_paths, &cg, NULL) >= 0) {
                        int frozen = cgroup_is_frozen(cg);
                        if (frozen >= 0)
                                st->status = frozen ? OCI_STATUS_PAUSED : OCI_STATUS_RUNNING;
                        cgroup_close(cg);
                }
        }
        return 0;
}

static bool has_cgroup(const struct oci_state *st)
{
        return st->cgroup_paths && st->cgroup_paths[0];
}

/* A container without a cgroup (rootless, --cgroup-manager disabled): its
 * processes are those of its pid namespace. SIGKILL goes to its init only:
 * the kernel kills every other process of the namespace with it, also
 * those forked meanwhile. A container that shares psrun's pid namespace is
 * refused (oci_pidns_pids). */
static int signal_pidns(const struct oci_state *st, int sig, psrun_error *err)
{
        _cleanup_close_ int pidfd = -1;
        if (oci_pin_init(st, &pidfd, NULL) < 0)
                return -ENOENT; /* init gone: so is its pid namespace */
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = oci_pidns_pids(st->pid, &pids, &n, err);
        if (r == -ESRCH)
                return -ENOENT;
        if (r < 0)
                return psrun_error_prefix(err, "kill --all: container \"%s\"", st->id);
        if (sig == SIGKILL) {
                if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
                        return psrun_error_errno(err, errno, "kill: container \"%s\"", st->id);
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                if (kill(pids[i], sig) < 0 && errno != ESRCH)
                        return psrun_error_errno(err, errno, "kill %d", (int) pids[i]);
        return 0;
}

static int signal_all(const struct oci_state *st, int sig, psrun_error *err)
{
        if (!has_cgroup(st))
                return signal_pidns(st, sig, err);
        struct cgroup *cg = NULL;
        int r = open_cgroup(st, &cg, err);
        if (r < 0)
                return r;
        if (sig == SIGKILL) {
                r = cgroup_kill(cg, err);
                cgroup_close(cg);
                return r;
        }
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        r = cgroup_pids(cg, &pids, &n, err);
        cgroup_close(cg);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (kill(pids[i], sig) < 0 && errno != ESRCH)
                        r = psrun_error_errno(err, errno, "kill %d", (int) pids[i]);
        return r;
}

int oci_kill(struct oci_root *root, const char *id, int sig, bool all, psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_(oci_state_free) struct oci_state st = {0};
        int r = oci_open_locked(root, id, OCI_LOCK_SHARED, &c, &st, err);
        if (r < 0)
                return r;
        /* As runc: `kill --all` signals whatever is left in the cgroup, also
         * once init has exited (containerd's shim sends it right after the
         * exit, to kill init's orphans); a cgroup already gone has nothing
         * left. The message says "container not running" because
         * containerd's shim matches those words to mean "already finished". */
        if (all && st.status == OCI_STATUS_STOPPED) {
                r = signal_all(&st, sig, err);
                return r == -ENOENT || r == -EOPNOTSUPP ? 0 : r;
        }
        if (st.status == OCI_STATUS_STOPPED)
                return psrun_error_set(err, ESRCH, "container \"%s\": container not running", id);
        if (all)
                return signal_all(&st, sig, err);
        _cleanup_close_ int pidfd = -1;
        r = oci_pin_init(&st, &pidfd, err);
        if (r < 0)
                return r;
        if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
                return psrun_error_errno(err, errno, "kill: container \"%s\"", id);
        return 0;
}

/* Kill what is left and wait until init is gone (bounded). */
static int stop_container(const struct oci_state *st, psrun_error *err)
{
        struct cgroup *cg = NULL;
        if (st->cgroup_paths && st->cgroup_paths[0] &&
            cgroup_open(st->cgroup_paths, &cg, NULL) >= 0) {
                (void) cgroup_freeze(cg, false, NULL); /* a frozen task dies only when thawed */
                (void) cgroup_kill(cg, NULL);
                cgroup_close(cg);
        }
        _cleanup_close_ int pidfd = -1;
        if (oci_pin_init(st, &pidfd, NULL) < 0)
                return 0;
        (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        struct pollfd p = {pidfd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
                return psrun_error_set(err, ETIMEDOUT, "container \"%s\": init did not die",
                                       st->id);
        return 0;
}

static int delete_locked(struct oci_root *root, struct oci_container *c, struct oci_state *st,
                         bool force, psrun_error *err);

int oci_delete(struct oci_root *root, const char *id, bool force, psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_(oci_state_free) struct oci_state st = {0};
        /* What killed creates and deletes left behind goes first. */
        (void) oci_root_sweep(root, NULL);
        int r = oci_open_locked(root, id, OCI_LOCK_EXCLUSIVE, &c, &st, err);
        /* --force on what is gone already is done (the shim's cleanup
         * deletes twice), as runc does. */
        if (r == -ENOENT && force) {
                psrun_error_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        return delete_locked(root, c, &st, force, err);
}

/* How long gc waits for the lock of a container still "creating". */
#define GC_LOCK_WAIT_MS 2000

int oci_gc(struct oci_root *root, psrun_error *err)
{
        _cleanup_strv_free_ char **ids = NULL;
        int removed = oci_root_sweep(root, NULL);
        int r = oci_container_list(root, &ids, err);
        if (r < 0)
                return r;
        for (size_t i = 0; ids[i]; i++) {
                _cleanup_(oci_container_closep) struct oci_container *c = NULL;
                _cleanup_(oci_state_free) struct oci_state st = {0};
                /* A create holds the lock from start to end: a lock that
                 * comes free on a container still "creating" means its
                 * creator died. (Its init may hold the lock a moment longer,
                 * until it sees its parent gone: hence the wait.) Any other
                 * state is its owner's to delete. The state is read without
                 * the lock first (it is replaced atomically), so that live
                 * containers cost no wait. */
                if (oci_container_open(root, ids[i], &c, NULL) < 0 ||
                    oci_state_read(c, &st, NULL) < 0 || st.status != OCI_STATUS_CREATING)
                        continue;
                oci_state_free(&st);
                if (oci_container_lock_timeout(c, OCI_LOCK_EXCLUSIVE, GC_LOCK_WAIT_MS, NULL) < 0 ||
                    oci_state_read(c, &st, NULL) < 0 || st.status != OCI_STATUS_CREATING)
                        continue;
                psrun_error e = {0};
                r = delete_locked(root, c, &st, true, &e);
                if (r < 0) {
                        if (err)
                                *err = e;
                        return r;
                }
                oci_root_log(root, LOG_LEVEL_DEBUG, "gc: removed container %s, whose create died",
                             ids[i]);
                removed++;
        }
        return removed;
}

static int delete_locked(struct oci_root *root, struct oci_container *c, struct oci_state *st,
                         bool force, psrun_error *err)
{
        const char *id = st->id;
        int r;
        bool live = st->status == OCI_STATUS_RUNNING || st->status == OCI_STATUS_PAUSED;
        if (live && !force)
                return psrun_error_set(err, EBUSY,
                                       "container \"%s\" is %s: stop it first, or delete --force",
                                       id, oci_status_to_string(st->status));
        /* A created container never ran anything of the user's: it goes
         * without --force, as with runc. */
        if (st->status != OCI_STATUS_STOPPED) {
                r = stop_container(st, err);
                if (r < 0)
                        return r;
        }
        struct cgroup *cg = NULL;
        if (st->cgroup_paths && st->cgroup_paths[0] &&
            cgroup_open(st->cgroup_paths, &cg, NULL) >= 0) {
                r = cgroup_remove(cg, err);
                if (r < 0)
                        return r;
        }
        /* The config goes with the directory: read it first. */
        _cleanup_(oci_config_free) struct oci_config config = {0};
        psrun_error herr = {0};
        bool have_config = oci_load_container_config(c, &config, &herr) >= 0;
        oci_root_log(root, LOG_LEVEL_DEBUG, "delete %s: cgroup removed, removing the state", id);
        r = oci_container_delete(c, err);
        if (r < 0)
                return r;
        /* runtime.md: poststop hooks run after delete; failing is a warning. */
        st->status = OCI_STATUS_STOPPED;
        st->pid = 0;
        if (have_config && oci_run_hooks(&config, OCI_HOOK_POSTSTOP, st, -1, &herr) < 0)
                oci_root_log(root, LOG_LEVEL_WARNING, "%s", herr.msg);
        return 0;
}

int oci_pause(struct oci_root *root, const char *id, bool pause, psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_(oci_state_free) struct oci_state st = {0};
        int r = oci_open_locked(root, id, OCI_LOCK_EXCLUSIVE, &c, &st, err);
        if (r < 0)
                return r;
        enum oci_status want = pause ? OCI_STATUS_RUNNING : OCI_STATUS_PAUSED;
        if (st.status != want && st.status != OCI_STATUS_RUNNING && st.status != OCI_STATUS_PAUSED)
                return psrun_error_set(err, EINVAL, "container \"%s\" is %s: cannot %s it", id,
                                       oci_status_to_string(st.status), pause ? "pause" : "resume");
        struct cgroup *cg = NULL;
        r = open_cgroup(&st, &cg, err);
        if (r < 0)
                return r;
        r = cgroup_freeze(cg, pause, err);
        cgroup_close(cg);
        if (r < 0)
                return r;
        st.status = pause ? OCI_STATUS_PAUSED : OCI_STATUS_RUNNING;
        return oci_state_write(c, &st, err);
}

/* The cgroup of a container that has not stopped (else -ESRCH). */
static int open_live_cgroup(struct oci_root *root, const char *id, struct cgroup **cg,
                            psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        _cleanup_(oci_state_free) struct oci_state st = {0};
        *cg = NULL;
        int r = oci_open_locked(root, id, OCI_LOCK_SHARED, &c, &st, err);
        if (r < 0)
                return r;
        if (st.status == OCI_STATUS_STOPPED)
                return psrun_error_set(err, ESRCH, "container \"%s\" is not running", id);
        return open_cgroup(&st, cg, err);
}

int oci_update(struct oci_root *root, const char *id, const struct oci_resources *res,
               psrun_error *err)
{
        struct cgroup *cg = NULL;
        int r = open_live_cgroup(root, id, &cg, err);
        if (r < 0)
                return r;
        r = cgroup_apply_resources(cg, res, err);
        cgroup_close(cg);
        return r;
}

/* The processes of a container without a cgroup: its pid namespace's. */
static int pids_without_cgroup(const struct oci_state *st, pid_t **ret, size_t *n, psrun_error *err)
{
        _cleanup_close_ int pidfd = -1;
        if (oci_pin_init(st, &pidfd, NULL) < 0)
                return 0;
        int r = oci_pidns_pids(st->pid, ret, n, err);
        if (r == -ESRCH)
                return 0;
        return r < 0 ? psrun_error_prefix(err, "ps: container \"%s\"", st->id) : 0;
}

int oci_pids(struct oci_root *root, const char *id, pid_t **ret, size_t *n, psrun_error *err)
{
        struct cgroup *cg = NULL;
        *ret = NULL;
        *n = 0;
        {
                _cleanup_(oci_container_closep) struct oci_container *c = NULL;
                _cleanup_(oci_state_free) struct oci_state st = {0};
                int r = oci_open_locked(root, id, OCI_LOCK_SHARED, &c, &st, err);
                if (r < 0)
                        return r;
                if (st.status == OCI_STATUS_STOPPED)
                        return 0; /* a stopped container has no processes */
                if (!has_cgroup(&st))
                        return pids_without_cgroup(&st, ret, n, err);
        }
        int r = open_live_cgroup(root, id, &cg, err);
        if (r == -ESRCH) {
                psrun_error_clear(err); /* a stopped container has no processes */
                return 0;
        }
        if (r < 0)
                return r;
        r = cgroup_pids(cg, ret, n, err);
        cgroup_close(cg);
        return r;
}

int oci_stats(struct oci_root *root, const char *id, struct cgroup_stats *stats, psrun_error *err)
{
        struct cgroup *cg = NULL;
        int r = open_live_cgroup(root, id, &cg, err);
        if (r < 0)
                return r;
        r = cgroup_read_stats(cg, stats, err);
        cgroup_close(cg);
        return r;
}
