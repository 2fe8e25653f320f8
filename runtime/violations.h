/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the security layers refused during one run or exec, for its result
 * (docs/security.md, "Violations"). The list is fixed-size: it travels in
 * a session's reply. Modes (the policy key `violations`):
 *   summary  one entry per distinct (layer, what), with how often it
 *            happened and the first process it happened to;
 *   full     one entry per (layer, what, process), and `what` also names
 *            the argument that made a syscall a refusal ("socket(AF_PACKET)");
 *   off      nothing is watched or reported.
 * Either way the first VIOLATIONS_MAX distinct entries are kept; the
 * refusals of the others are counted in `more`.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "netns/stats.h"
#include "policy/policy.h"

#define VIOLATIONS_MAX     32
#define VIOLATION_WHAT_MAX 256
#define VIOLATION_WHY_MAX  160

/* The seccomp entry of a command that stacked a filter of its own on
 * psrun's: what that filter refuses outranks psrun's notification, so
 * psrun's refusals behind it are not listed. Its count: the installs. */
#define VIOLATION_OWN_FILTER                                                                       \
        "the command installed its own seccomp filter: refusals behind it are not reported"

enum violation_layer {
        VIOLATION_SECCOMP,
        VIOLATION_LANDLOCK,
        VIOLATION_APPARMOR,
        VIOLATION_NETWORK,
        VIOLATION_LIMITS,
        _VIOLATION_LAYER_MAX,
};

struct violation {
        uint32_t layer;
        int32_t pid; /* in the sandbox's pid namespace; 0: no process's, or not known */
        uint64_t count;
        char what[VIOLATION_WHAT_MAX];
};

struct violations {
        uint32_t mode; /* enum policy_violations */
        uint32_t n;
        uint64_t more; /* refusals of entries past the first VIOLATIONS_MAX */
        struct violation list[VIOLATIONS_MAX];
        /* A layer in force whose refusals psrun cannot see here: why ("" if
         * it can, or the layer is not in force). */
        char unavailable[_VIOLATION_LAYER_MAX][VIOLATION_WHY_MAX];
};

const char *violation_layer_to_string(enum violation_layer layer);
int violation_layer_from_string(const char *s);

void violations_init(struct violations *v, enum policy_violations mode);
static inline bool violations_on(const struct violations *v)
{
        return v->mode != POLICY_VIOLATIONS_OFF;
}

/* Counts n refusals of `what` (cut to VIOLATION_WHAT_MAX) to process pid
 * (0: none). Returns the entry, or NULL when off or when the list is full
 * (counted in `more`); a summary entry made with pid 0 may be given its
 * first process afterwards. */
struct violation *violations_add(struct violations *v, enum violation_layer layer, const char *what,
                                 int pid, uint64_t n);
void violations_set_unavailable(struct violations *v, enum violation_layer layer, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4)));

/* The limits the run hit, from what it read anyway: the cgroup's counters,
 * the timeout, a full /workspace. */
struct cgroup_stats;
struct violation_limits {
        const struct cgroup_stats *stats;
        uint64_t memory_limit, pids_limit, disk_limit, timeout_ms; /* the policy's */
        bool timed_out, disk_full;
};
void violations_add_limits(struct violations *v, const struct violation_limits *l);
/* The names and addresses the network refused (netns/stats.h). */
void violations_add_network(struct violations *v, const struct netns_stats *n);

/* ,"violations":[...],"violations_more":N[,"violations_unavailable":{...}]
 * Nothing when off. */
void violations_write_json(const struct violations *v, FILE *f);
