/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * psrun as a user with no privileges (docs/rootless.md): the identity a
 * sandbox gets (the user's subordinate ids through newuidmap/newgidmap, or
 * the user's one id), and what holds its limits when no cgroup can
 * (rlimits, or a refusal). Root's runs never come here.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "policy/policy.h"

struct plan;
struct cgroup;

/* One line of /etc/subuid or /etc/subgid: `count` ids from `start`. */
struct subid_range {
        uint64_t start, count;
};

/* Pure: the first line of text ("NAME:START:COUNT" or "UID:START:COUNT")
 * for the user called name (may be NULL) or with id uid, with a count of at
 * least 1. 1: found, 0: none, -EINVAL: a malformed line for that user. */
int subid_find(const char *text, const char *name, uid_t uid, struct subid_range *out);

/* True when psrun runs without root (its effective uid is not 0). */
bool rootless_active(void);

/* The user's first ranges in /etc/subuid and /etc/subgid, each capped at
 * 65536 ids: 1 when both are there and newuidmap/newgidmap are installed
 * (so they can be mapped), 0 when not, -errno on a malformed file. */
int rootless_subids(struct subid_range *uids, struct subid_range *gids, psrun_error *err);

/* The identity of a rootless sandbox, into the plan: the id maps (the
 * user's first subordinate range when rootless_subids has one, else the
 * user's own id, as the plan's uid inside: the policy's `user` or the
 * image's User), the ids the child takes for its set-up, and the layer's
 * description for the result. */
int rootless_plan_identity(const struct policy *pol, struct plan *p, psrun_error *err);

/* The cgroup of a rootless run: in cgroup_parent (the caller's, or the
 * delegated subtree found from /proc/self/cgroup) when one is writable;
 * else *cg is NULL and the policy's memory, cpu and pids limits either fail
 * closed (`limits: strict`, when the policy asked for them) or become
 * rlimits of the plan. Every limit's enforcement goes into the plan. */
int rootless_plan_limits(const struct policy *pol, struct plan *p, const char *cgroup_parent,
                         struct cgroup **cg, psrun_error *err);

/* Whether newuidmap and newgidmap are installed (in the system's
 * directories, where the uidmap package puts them; never from $PATH). */
bool idmap_have_helpers(void);

/* Pure: the maps of a router and of its sandbox from the sandbox's map as
 * rootless_plan_identity made it (one line "inside outside count"), for
 * the user or group me: the router maps me as its 0 and, with subordinate
 * ids, the range as its 1..count; the sandbox's map is then relative to
 * the router's ids (inside onto 1.., or the one id onto 0). 0, or -EINVAL
 * for anything else (more lines, no ids, one id that is a range). */
int rootless_nest_maps(const char *sandbox_map, unsigned me, bool subids, char *router,
                       size_t router_size, char *inner, size_t inner_size);

/* A rootless sandbox with a veth (network full or restricted): its network
 * goes through a router namespace of the user's (runtime/router.h). Fails
 * with one line for what cannot hold without root (no pasta on $PATH, no
 * access to /dev/net/tun, a resolver on the host's loopback); else nests
 * the plan's maps below the router's. No-op without a veth. */
int rootless_plan_network(struct plan *p, psrun_error *err);

/* Writes the plan's id maps of pid with newuidmap and newgidmap (found in
 * the system's directories, not in $PATH); their first line of complaint is
 * the error (runtime/idmap.c). */
int idmap_apply_helpers(pid_t pid, const struct plan *p, psrun_error *err);
/* The same for any maps: uid_map and gid_map lines ("inside outside
 * count\n"...). */
int idmap_apply_maps(pid_t pid, const char *uid_map, const char *gid_map, psrun_error *err);
