/* SPDX-License-Identifier: MIT */
/*
 * psrun_gc: what killed runs, sessions and containers left behind, removed
 * by each part's own gc, one step after another.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netns.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/gc.h"
#include "runtime/rootless.h"

static int gc_sessions(const psrun_gc_options *o, psrun_error *err)
{
        int r = psrun_session_gc(o->session_dir, err);
        /* A user's gc: root's default session root (0700) holds none of
         * this user's sessions, and is not the user's to sweep. */
        if (r == -EACCES && !o->session_dir && geteuid() != 0) {
                psrun_error_clear(err);
                return 0;
        }
        return r;
}

static int gc_cgroups(const psrun_gc_options *o, psrun_error *err)
{
        return cgroup_gc(o->cgroup_parent, err);
}

static int gc_containers(const psrun_gc_options *o, psrun_error *err)
{
        return oci_gc_root(o->oci_root, err);
}

static int gc_networks(const psrun_gc_options *o, psrun_error *err)
{
        /* A rootless run's network leaves no lease, veth or table behind:
         * they live in its router's namespaces, which end with their
         * processes (runtime/router.h). The host's leases are root's. */
        if (rootless_active())
                return 0;
        return netns_gc(err);
}

static int gc_gvisor(const psrun_gc_options *o, psrun_error *err)
{
        /* backend: gvisor needs root (runtime/run.c): a user has no bundle
         * of its own to reap, and root's are not the user's. */
        if (rootless_active())
                return 0;
        return gvisor_gc(err);
}

/* In this order: sessions first, as their cgroups and networks are named
 * in their state (a dead session's are removed by name, with it). */
static const struct gc_step {
        int (*sweep)(const psrun_gc_options *o, psrun_error *err);
        size_t count; /* offsetof(psrun_gc_stats, ...) */
        /* Its state is root's alone (a 0700 directory of root's): a user's
         * gc has nothing of its own there and skips it, touching only
         * that user's things. */
        bool root_only;
} gc_steps[] = {
        {gc_sessions, offsetof(psrun_gc_stats, sessions), false},
        {gc_cgroups, offsetof(psrun_gc_stats, cgroups), false},
        {gc_containers, offsetof(psrun_gc_stats, containers), false},
        {gc_networks, offsetof(psrun_gc_stats, networks), true},
        {gc_gvisor, offsetof(psrun_gc_stats, gvisor), true},
};

PSRUN_PUBLIC int psrun_gc(const psrun_gc_options *options, psrun_gc_stats *stats, psrun_error *err)
{
        const psrun_gc_options none = {0};
        psrun_gc_stats mine;
        if (!options)
                options = &none;
        if (!stats)
                stats = &mine;
        *stats = (psrun_gc_stats){0};
        int total = 0;
        for (size_t i = 0; i < ARRAY_SIZE(gc_steps); i++) {
                if (gc_steps[i].root_only && geteuid() != 0)
                        continue;
                int r = gc_steps[i].sweep(options, err);
                if (r < 0)
                        return r;
                *(unsigned *) ((char *) stats + gc_steps[i].count) = (unsigned) r;
                total += r;
        }
        return total;
}
