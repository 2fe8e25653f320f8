/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The router of a rootless sandbox's network (docs/rootless.md): a process
 * of psrun's in a user and network namespace of the user's, holding the
 * sandbox's nft table, its DNS proxy and its veth, linked to the outside by
 * pasta (package passt). A user may program nf_tables only in a network
 * namespace its user namespace owns, and may move a veth end only between
 * namespaces one of its user namespaces owns: so the router clones the
 * sandbox (CLONE_PARENT: it is psrun's child, supervised as any other) into
 * a network namespace the router's user namespace owns, and the sandbox's
 * user namespace, one below the router's, owns none of its network.
 *
 *   router_clone()  the router, its maps, pasta; the sandbox cloned by it
 *                   into its network, up before the sandbox exists
 *   router_wait_linked()  pasta's link up, before the command starts
 *   router_down()   once the sandbox is gone: the proxy's counts, the table
 *   router_close()  the router and pasta gone, on every path
 *
 * launch_clone() uses it when the plan says so (plan->rootless.router), so
 * every holder of a launch (psrun run, a session) gets it the same way.
 */

#include <sys/types.h>

#include "common/error.h"
#include "netns/stats.h"
#include "rootfs/mounts.h"

struct plan;
struct cgroup;
struct router;

/* Starts the router and has it clone the sandbox of plan into cg with
 * sync_child (the child's end of the sync socket) and sources: the
 * sandbox's pid and pidfd in *pid and *pidfd, its maps written. Fails
 * closed with one line (pasta's own first line when pasta fails); nothing
 * is left then. */
int router_clone(const struct plan *plan, struct cgroup *cg, const struct rootfs_sources *sources,
                 int sync_parent, int sync_child, struct router **ret, pid_t *pid, int *pidfd,
                 psrun_error *err);
/* Before the sandbox's command is released (launch_release): waits for
 * pasta's link to be up, so the command starts with its network; pasta
 * failing meanwhile is the error. Once. */
int router_wait_linked(struct router *rt, psrun_error *err);
/* Once every process of the sandbox is gone: stops the proxy (its counts
 * into stats, when not NULL) and deletes the table. Safe to call twice. */
void router_down(struct router *rt, struct netns_stats *stats);
/* router_down if not yet; the router and pasta killed and reaped. Accepts
 * NULL. */
void router_close(struct router *rt);
