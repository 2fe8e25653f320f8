/* SPDX-License-Identifier: MIT */
/*
 * What the OCI operations (create.c, ops.c) share: opening a container
 * under its lock, pinning its init, the config.json kept with it, and
 * running its hooks.
 */
#include "runtime/oci/container.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/oci/hooks.h"
#include "runtime/oci/plan.h"

int oci_open_locked(struct oci_root *root, const char *id, enum oci_lock_mode mode,
                    struct oci_container **ret, struct oci_state *st, psrun_error *err)
{
        _cleanup_(oci_container_closep) struct oci_container *c = NULL;
        int r = oci_id_validate(id, err);
        if (r >= 0)
                r = oci_container_open(root, id, &c, err);
        if (r >= 0)
                r = oci_container_lock(c, mode, err);
        if (r >= 0)
                r = oci_state_read(c, st, err);
        if (r < 0)
                return r;
        if (oci_state_refresh(st) > 0 && mode == OCI_LOCK_EXCLUSIVE)
                (void) oci_state_write(c, st, NULL);
        *ret = TAKE_PTR(c);
        return 0;
}

int oci_pin_init(const struct oci_state *st, int *ret_pidfd, psrun_error *err)
{
        if (st->pid <= 0)
                return psrun_error_set(err, ESRCH, "container \"%s\" is not running", st->id);
        int fd = (int) syscall(SYS_pidfd_open, st->pid, 0);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": init", st->id);
        /* The pidfd names whatever has the pid now: check it is still the
         * process the state recorded, started at the same tick. */
        uint64_t start = 0;
        if (oci_proc_stat(st->pid, NULL, &start) < 0 || start != st->pid_start_time) {
                close(fd);
                return psrun_error_set(err, ESRCH, "container \"%s\" is not running", st->id);
        }
        *ret_pidfd = fd;
        return 0;
}

int oci_state_json(const struct oci_state *st, char **ret, size_t *len)
{
        FILE *f = open_memstream(ret, len);
        if (!f)
                return -ENOMEM;
        int r = oci_state_print_json(st, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(*ret);
                *ret = NULL;
        }
        return r;
}

int oci_run_hooks(const struct oci_config *config, enum oci_hook_kind kind,
                  const struct oci_state *st, int ns_pidfd, psrun_error *err)
{
        const struct oci_hook_list *list = &config->hooks.lists[kind];
        if (list->n == 0)
                return 0;
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        int r = oci_state_json(st, &json, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "hooks: state");
        unsigned flags = ns_pidfd >= 0 ? (unsigned) oci_namespaces_to_join(st->pid) : 0;
        return oci_hooks_run_in(kind, list, json, len, flags ? ns_pidfd : -1, flags, err);
}

int oci_load_container_config(struct oci_container *c, struct oci_config *config, psrun_error *err)
{
        _cleanup_close_ int fd =
                openat(oci_container_dir_fd(c), OCI_CONFIG_COPY, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": its config.json",
                                         oci_container_id(c));
        int r = read_all(fd, OCI_CONFIG_MAX_SIZE, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "container \"%s\": read its config.json",
                                         oci_container_id(c));
        return oci_config_parse_named(OCI_CONFIG_COPY, buf, len, config, err);
}
