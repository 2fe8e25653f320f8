/* SPDX-License-Identifier: MIT */
#pragma once

/* What the OCI operations (oci-create.c, oci-ops.c) share. */

#include "runtime/oci/config.h"
#include "runtime/oci/state.h"

/* Opens the container, takes the lock, reads its state and checks that its
 * init still lives (a dead one makes the state stopped, written back when
 * the lock is exclusive). */
int oci_open_locked(struct oci_root *root, const char *id, enum oci_lock_mode mode,
                    struct oci_container **ret, struct oci_state *st, psrun_error *err);

/* A pidfd for the container's init that is sure to be that process (not a
 * reused pid): -ESRCH when it is gone. */
int oci_pin_init(const struct oci_state *st, int *ret_pidfd, psrun_error *err);

/* What create keeps in the container's directory: the config.json it was
 * created from, read by the later operations (start's and delete's hooks,
 * exec's process and seccomp). */
#define OCI_CONFIG_COPY "config.json"
int oci_load_container_config(struct oci_container *c, struct oci_config *config, psrun_error *err);
int oci_state_json(const struct oci_state *st, char **ret, size_t *len);
/* ns_pidfd: run them in the namespaces of that process (createContainer,
 * startContainer); -1: in ours. */
int oci_run_hooks(const struct oci_config *config, enum oci_hook_kind kind,
                  const struct oci_state *st, int ns_pidfd, psrun_error *err);
