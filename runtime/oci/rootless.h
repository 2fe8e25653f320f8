/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI runtime without root (docs/rootless.md, "OCI mode"): whether psrun
 * runs rootless (`--rootless true|false|auto`, as runc and crun take it),
 * where a user's state lives, the identity of a user's container (its own
 * ids, or its subordinate ranges through newuidmap/newgidmap), what holds
 * its limits when no cgroup can, and how its processes are found without a
 * cgroup (its pid namespace).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"
#include "runtime/oci/config.h"

struct plan;

enum oci_rootless_mode {
        OCI_ROOTLESS_AUTO,
        OCI_ROOTLESS_TRUE,
        OCI_ROOTLESS_FALSE,
};

/* "true", "false", "auto" (NULL: auto); -EINVAL for anything else. */
int oci_rootless_mode_from_string(const char *s);

/* Whether psrun works rootless: true and false as said; auto when its
 * effective uid is not 0, or when it is not in the initial user namespace
 * (root of a user namespace, with every capability there, as under
 * rootless podman: the host's cgroups and device nodes are out of reach).
 * Root of the initial namespace with a reduced bounding set (a container's
 * root without CAP_SYS_RESOURCE) stays rootful. */
bool oci_rootless_active(enum oci_rootless_mode mode);

/* The annotation that lets a rootless container without a cgroup run with
 * the limits rlimits can give: "best_effort"; "strict" (the default)
 * refuses limits no cgroup holds. */
#define OCI_ROOTLESS_LIMITS_ANNOTATION "run.psrun.limits"

/* A rootless user's state root: $XDG_RUNTIME_DIR/psrun/oci. Each level is
 * checked: not a symbolic link, owned by the user, not writable by group or
 * others (so never a shared /tmp path); the two psrun levels are made 0700
 * when create is set. Without create a missing level is *ret NULL and 0
 * (gc makes nothing). No XDG_RUNTIME_DIR: an error saying to set it or
 * pass --root. */
int oci_rootless_root(bool create, char **ret, psrun_error *err);

/* The identity of a container psrun creates as a user without privileges
 * (effective uid not 0): the config must ask for a user namespace; a new
 * one's mappings are written by psrun when they are only the user's own uid
 * and gid (setgroups then denied), else by newuidmap and newgidmap, which
 * check every range against /etc/subuid and /etc/subgid. Into the plan:
 * who writes the maps, the ids the child sets itself up as, and that bind
 * sources are cloned in the child. */
int oci_rootless_plan_identity(const struct oci_config *config, struct plan *p, psrun_error *err);

/* A rootless container with no cgroup: its own pid namespace is required
 * (delete and kill --all kill it through its init); limits in
 * linux.resources (memory, cpu, pids, blockIO, hugepages, unified, network)
 * are refused, unless the config's annotation
 * OCI_ROOTLESS_LIMITS_ANNOTATION is "best_effort": then memory.limit becomes
 * RLIMIT_AS and pids.limit RLIMIT_NPROC of the plan, and the rest is not
 * enforced. Device rules need no cgroup: a user namespace makes no device
 * node, and the container has only the nodes bound for it. *said: one line
 * of what holds which limit, for the log (empty when nothing was asked). */
int oci_rootless_limits(const struct oci_config *config, struct plan *p, char *said, size_t size,
                        psrun_error *err);

/* The host pids of the processes in the pid namespace of init_pid (its own
 * included), sorted; those whose namespace cannot be read are left out.
 * -ESRCH when init_pid is gone; -EOPNOTSUPP when its pid namespace is ours
 * (its processes cannot be told from the host's). */
int oci_pidns_pids(pid_t init_pid, pid_t **ret, size_t *n, psrun_error *err);
