/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI runtime's state directory: one directory per container under the
 * root (`--root`, default /run/psrun), holding
 *
 *   lock        empty; flock()ed shared to read, exclusive to change anything
 *   state.json  the state record, replaced atomically (write .tmp, fsync, rename)
 *   exec.fifo   the create/start handshake (below), while created-not-started
 *
 * A container directory appears in the root only complete: create builds it
 * under a temporary name that no valid id can take (it contains '~') and
 * renames it into place with RENAME_NOREPLACE, so two creates of one id race
 * safely and a reader never sees a directory without lock and state.json.
 *
 * Ids are directory names, so they are at most NAME_MAX (255) bytes.
 *
 * The create/start handshake (no psrun process sleeps between create and
 * start; the containerd shim reaps init itself):
 *
 *   create  oci_container_make_fifo(c, OCI_EXEC_FIFO), then opens it with
 *           O_PATH (oci_container_open_fifo) and hands that fd to the child.
 *           The child (pid 1, fully set up: mounts, pivot_root, caps, ...)
 *           opens "/proc/self/fd/<n>" O_WRONLY, which blocks until a reader
 *           appears. create writes state "created" and exits.
 *           The child must not hold the container's lock fd while it waits:
 *           flock locks belong to the open file description, so an inherited
 *           lock fd would keep the container locked until start. The child
 *           closes every fd it did not plan before it blocks.
 *   start   opens the FIFO O_RDONLY|O_NONBLOCK (never blocks, even if init
 *           died), polls it together with init's pidfd, and reads the one byte
 *           init writes after its open returns; init then execve()s the user
 *           process. A dead init shows as the pidfd becoming readable (or as
 *           POLLHUP without data once init had opened the FIFO). start then
 *           removes the FIFO and writes state "running".
 *   delete  removes the FIFO along with the rest of the directory.
 *
 * Library code: nothing here prints (except oci_state_print_json, to the
 * FILE it is given) or exits.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "common/error.h"
#include "common/log.h"

#define OCI_ROOT_DEFAULT "/run/psrun"
/* The runtime-spec version the state record complies with (its ociVersion). */
#define OCI_STATE_SPEC_VERSION "1.2.0"
#define OCI_ID_MAX             255
#define OCI_EXEC_FIFO          "exec.fifo"
/* How long oci_container_lock waits for another psrun before EBUSY. */
#define OCI_LOCK_TIMEOUT_MS 5000

/* ---- ids ---- */

/* Non-empty, at most OCI_ID_MAX bytes, only [A-Za-z0-9_.+-], not "." or "..". */
int oci_id_validate(const char *id, psrun_error *err);

/* ---- the state record ---- */

enum oci_status {
        OCI_STATUS_CREATING,
        OCI_STATUS_CREATED,
        OCI_STATUS_RUNNING,
        OCI_STATUS_PAUSED,
        OCI_STATUS_STOPPED,
        _OCI_STATUS_MAX,
};

const char *oci_status_to_string(enum oci_status s); /* NULL when out of range */
int oci_status_from_string(const char *s);           /* the status, or -EINVAL */

struct oci_annotation {
        char *key;
        char *value;
};

struct oci_state {
        /* The public view (runtime-spec "state"), printed by oci_state_print_json. */
        char *oci_version; /* OCI_STATE_SPEC_VERSION */
        char *id;
        enum oci_status status;
        int pid;       /* host pid of init; 0 before it exists and once stopped */
        char *bundle;  /* absolute path of the bundle */
        char *rootfs;  /* absolute path of the root filesystem; may be NULL */
        char *created; /* RFC 3339, UTC, as runc prints it */
        char *owner;   /* user name of the creator; may be NULL ("") */
        struct oci_annotation *annotations; /* in config.json order, keys unique */
        size_t n_annotations;

        /* psrun's own fields: kept in state.json, never printed. */
        uint64_t pid_start_time; /* /proc/<pid>/stat field 22: tells pid reuse apart */
        char **cgroup_paths;     /* NULL-terminated "controller:path" list; may be NULL */
        bool detached;
        bool no_new_keyring; /* create --no-new-keyring: its execs keep the caller's too */
};

/* Zeroes *s and fills the required fields: ociVersion, id, bundle, status
 * creating, created = now. Strings are copied. */
int oci_state_init(struct oci_state *s, const char *id, const char *bundle, psrun_error *err);

/* Frees every member and zeroes *s; usable as _cleanup_(oci_state_free). */
void oci_state_free(struct oci_state *s);

/* Appends key=value (copied); -EEXIST if the key is already there. */
int oci_state_add_annotation(struct oci_state *s, const char *key, const char *value,
                             psrun_error *err);
/* The same without the check, in amortized constant time: for many keys
 * known to be unique (a parsed config's), or checked after with
 * oci_state_find_duplicate_annotation (O(n log n)): the index of a key seen
 * before, -1 when all are unique, or -ENOMEM. */
int oci_state_append_annotation(struct oci_state *s, const char *key, const char *value,
                                psrun_error *err);
ssize_t oci_state_find_duplicate_annotation(const struct oci_state *s);

/* Most bytes of annotation keys and values psrun keeps in a container's
 * state: escaped, they stay well below what it reads back (4 MiB). */
#define OCI_ANNOTATIONS_MAX_SIZE (512U << 10)
int oci_state_add_cgroup_path(struct oci_state *s, const char *controller_path, psrun_error *err);

/* Sets pid and pid_start_time (read from /proc/<pid>/stat). */
int oci_state_set_pid(struct oci_state *s, pid_t pid, psrun_error *err);

/* Go's time.RFC3339Nano in UTC, as runc prints "created":
 * "2024-05-01T12:34:56.123456789Z", trailing zeros of the fraction dropped. */
int oci_format_created(const struct timespec *ts, char *buf, size_t size);

/* Field 3 (state letter) and field 22 (start time in clock ticks since boot)
 * of /proc/<pid>/stat. -ENOENT when there is no such process. Either output
 * may be NULL. */
int oci_proc_stat(pid_t pid, char *state, uint64_t *start_time);

/* A created/running/paused container whose init is gone (ESRCH), a zombie,
 * or a different process under the same pid (start time differs) becomes
 * stopped, with pid and pid_start_time cleared so nothing ever signals a
 * reused pid. Returns 1 when it changed the status, else 0. When /proc cannot
 * tell (e.g. not mounted) and kill(pid, 0) says the pid exists, it keeps the
 * status. */
int oci_state_refresh(struct oci_state *s);

/* The public view as runc prints `runc state`: indented by two spaces, keys
 * in runc's order (ociVersion, id, pid, status, bundle, rootfs, created,
 * owner, annotations), annotations omitted when there are none (runc's
 * omitempty) and kept in their order, followed by a newline. The output is
 * always valid UTF-8 JSON: control characters (C1 included, so none reaches a
 * terminal raw), U+2028/U+2029 and noncharacters are written as \u escapes, and
 * bytes that are not UTF-8 come out as \u00XX (lossy, as json_write_string). */
int oci_state_print_json(const struct oci_state *s, FILE *f);

/* Parses a state.json document (JSON, read with libyaml) into *s, which is
 * freed first; on failure *s is left zeroed. name is for messages. Unknown
 * keys are ignored, so an older psrun can read a newer psrun's state. Pure:
 * no syscalls. */
int oci_state_parse(struct oci_state *s, const char *name, const char *buf, size_t len,
                    psrun_error *err);

/* ---- the root ---- */

struct oci_root;

/* Opens the root (NULL: OCI_ROOT_DEFAULT), creating it and its missing
 * parents with mode 0700. Refuses a root that is a symbolic link, not a
 * directory, not owned by the effective uid, or writable by group or others. */
int oci_root_open(const char *path, struct oci_root **ret, psrun_error *err);
void oci_root_close(struct oci_root *root);
int oci_root_fd(const struct oci_root *root);
/* What the operations on this root have to say besides errors (debug notes,
 * a failing poststart or poststop hook) goes to fn: the same callback as
 * psrun run's (common/log.h). Without one nothing is logged. */
void oci_root_set_log(struct oci_root *root, log_fn fn, void *userdata);
void oci_root_log(const struct oci_root *root, enum log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
const char *oci_root_path(const struct oci_root *root); /* absolute */

/* The ids of every container in the root, sorted, as a NULL-terminated list
 * (free with strv_free). Entries that are not complete container directories
 * (a create or delete in progress, foreign files) are skipped. Returns the
 * count. */
int oci_container_list(struct oci_root *root, char ***ret_ids, psrun_error *err);

/* Removes what killed commands left in the root: temporary ".new~..."
 * directories of creates (lock free, or without a lock and older than a
 * few seconds) and
 * container directories a delete emptied of state.json but not of its
 * lock. Never a directory whose lock someone holds. Returns how many went. */
int oci_root_sweep(struct oci_root *root, psrun_error *err);

/* ---- one container ---- */

/* A handle holds the container directory's fd and its lock fd. It borrows
 * root, which must outlive it. Don't share a handle across fork(): flock
 * locks belong to the open file, so parent and child would hold one lock. */
struct oci_container;

enum oci_lock_mode {
        OCI_LOCK_SHARED,    /* reading state */
        OCI_LOCK_EXCLUSIVE, /* changing state, deleting */
};

/* Creates the directory of a new container with state.json = *initial
 * (whose id must be id) and returns it locked exclusively. Fails with
 * -EEXIST "container "x" already exists"; on any failure leaves nothing. */
int oci_container_create(struct oci_root *root, const char *id, const struct oci_state *initial,
                         struct oci_container **ret, psrun_error *err);

/* Opens an existing container, unlocked. -ENOENT "container "x" does not exist". */
int oci_container_open(struct oci_root *root, const char *id, struct oci_container **ret,
                       psrun_error *err);

/* Releases the lock (if held) and frees; NULL is fine. */
void oci_container_close(struct oci_container *c);

const char *oci_container_id(const struct oci_container *c);
int oci_container_dir_fd(const struct oci_container *c);

/* Takes the lock, retrying for up to OCI_LOCK_TIMEOUT_MS (timeout_ms in the
 * _timeout variant; 0: try once) before -EBUSY. -ENOENT if the container
 * was deleted while we waited. Asking again for the mode already held is a
 * no-op; switching modes needs an unlock first. */
int oci_container_lock(struct oci_container *c, enum oci_lock_mode mode, psrun_error *err);
int oci_container_lock_timeout(struct oci_container *c, enum oci_lock_mode mode, int timeout_ms,
                               psrun_error *err);
void oci_container_unlock(struct oci_container *c);

/* Replaces state.json atomically. Needs the exclusive lock (else -ENOLCK).
 * Every string must be valid UTF-8 (-EINVAL naming the field otherwise): the
 * file must read back byte for byte. */
int oci_state_write(struct oci_container *c, const struct oci_state *s, psrun_error *err);

/* Reads state.json into *s (freed first). Without a lock the read still sees
 * one complete version; take the shared lock to read-modify-write safely.
 * The status is as stored: call oci_state_refresh for liveness. */
int oci_state_read(struct oci_container *c, struct oci_state *s, psrun_error *err);

/* Removes the container directory and everything in it, never following
 * symbolic links or crossing mount points. Takes the exclusive lock if not
 * held (-ENOLCK if only the shared one is). state.json goes last but for the
 * lock, so a failed delete leaves a container that can be deleted again.
 * The handle must still be closed. */
int oci_container_delete(struct oci_container *c, psrun_error *err);

/* The handshake FIFO (see the top of this file), mode 0600. name is a plain
 * file name. When init runs as another host uid (a user namespace), the
 * runtime chowns the FIFO to it (fchownat on oci_container_dir_fd with
 * AT_SYMLINK_NOFOLLOW): reopening through /proc/self/fd checks the inode's
 * permissions, not the 0700 directory's. */
int oci_container_make_fifo(struct oci_container *c, const char *name, psrun_error *err);
/* Opens the FIFO with flags | O_CLOEXEC | O_NOFOLLOW, checking it is one. */
int oci_container_open_fifo(struct oci_container *c, const char *name, int flags, psrun_error *err);
/* "<root>/<id>/<name>" for a process that opens it by path (before
 * pivot_root). -ENAMETOOLONG if it does not fit in size. */
int oci_container_fifo_path(const struct oci_container *c, const char *name, char *buf,
                            size_t size);

static inline void oci_root_closep(struct oci_root **root)
{
        oci_root_close(*root);
}

static inline void oci_container_closep(struct oci_container **c)
{
        oci_container_close(*c);
}
