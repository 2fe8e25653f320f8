/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * config.json -> plan. In OCI mode psrun does what the config says and adds
 * nothing of its own: no Landlock, no default seccomp, no init process (the
 * user's process is pid 1, as Docker and Kubernetes expect). Whatever the
 * host cannot do as asked is an error naming the field, decided here in the
 * parent rather than discovered halfway through the child.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"
#include "runtime/oci/config.h"
#include "runtime/plan.h"

struct oci_plan_options {
        const char *id;         /* the container's */
        const char *bundle;     /* absolute */
        bool no_new_keyring;    /* --no-new-keyring: keep the caller's session keyring */
        bool detached;          /* the container outlives psrun: no parent-death signal */
        bool no_pivot;          /* --no-pivot */
        unsigned preserve_fds;  /* --preserve-fds */
        bool socket_activation; /* LISTEN_FDS (oci_create_options) */
        unsigned listen_fds;
        /* Rootless (runtime/oci/rootless.h): the identity of a user without
         * privileges, the host's device nodes bound rather than made. */
        bool rootless;
};

/* The container's init: namespaces, root filesystem and process. */
int plan_from_oci(const struct oci_config *config, const struct oci_plan_options *opts,
                  struct plan *plan, psrun_error *err);

/* A process for `psrun exec` into the running container whose init is
 * `pid` (pidfd `pidfd`, not owned), under the container's config (seccomp,
 * for instance, is the container's). */
int plan_for_exec(const struct oci_config *config, const struct oci_process *process, pid_t pid,
                  int pidfd, const struct oci_plan_options *opts, struct plan *plan,
                  psrun_error *err);

/* res with runc's default device rules after its own (the default devices
 * and ptys), when it has device rules at all; *owned is the new rule array
 * to free (NULL when none). res NULL: nothing. */
int oci_resources_with_default_devices(const struct oci_resources *res, struct oci_resources *out,
                                       struct oci_device_rule **owned);

/* The CLONE_NEW* flags of pid's namespaces that are not ours (pid
 * namespaces aside): what setns() takes to enter them. */
uint64_t oci_namespaces_to_join(pid_t pid);

/* The container's user namespace, where an idmapped mount with no mappings
 * of its own takes them from (runc's rule): a new one (the uid_map and
 * gid_map lines written for it, psrun's default range included) or one
 * joined by path; neither: no user namespace. */
struct oci_userns {
        bool new_userns;
        const char *uid_map, *gid_map; /* new_userns */
        const char *path;              /* joined, or NULL */
        bool rootless;                 /* no device node can be made: the host's are bound */
};

/* The mount steps for the container's root (runtime/oci/rootfs.c). */
int oci_rootfs_plan(const struct oci_config *config, const char *bundle,
                    const struct oci_userns *userns, struct rootfs_plan *plan, psrun_error *err);

/* Once the container's cgroup exists, before the clone: the binds of its own
 * cgroup directories that a cgroup mount without a cgroup namespace gets
 * (paths: cgroup_paths()'s lines, NULL when there is no cgroup: then they
 * become empty directories). */
int oci_rootfs_own_cgroup(struct rootfs_plan *plan, char *const *paths, psrun_error *err);
