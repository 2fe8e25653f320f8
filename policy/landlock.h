/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Landlock: the parent creates the ruleset fd (handled access rights depend on
 * the kernel's ABI); the child, once its root is in place, adds one
 * path-beneath rule per entry and restricts itself. Paths are opened in the
 * child because they only exist in the sandbox's mount namespace.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Landlock ABI version of the running kernel, 0 when Landlock is absent or
 * disabled. */
int landlock_abi(void);

struct landlock_path_rule {
        const char *path; /* inside the sandbox */
        uint64_t access;  /* LANDLOCK_ACCESS_FS_* allowed beneath path */
};

/* landlock_restrict_self() flags of ABI 7: denials are logged to the
 * kernel's audit log (when audit is on) from the command the domain's
 * creator executes, not from the creator itself nor from domains the
 * command makes of its own. */
#define LANDLOCK_LOG_SAME_EXEC_OFF  (1U << 0)
#define LANDLOCK_LOG_NEW_EXEC_ON    (1U << 1)
#define LANDLOCK_LOG_SUBDOMAINS_OFF (1U << 2)
#define LANDLOCK_LOG_ABI            7

struct landlock_plan {
        int ruleset_fd; /* -1: Landlock not used */
        int abi;
        uint32_t restrict_flags;          /* LANDLOCK_LOG_*: 0 unless psrun reads the audit log */
        struct landlock_path_rule *rules; /* owned */
        size_t n_rules;
};

/* Build the default sandbox plan: read+execute everywhere, write beneath
 * each of `writable` (NULL-terminated; /workspace, /tmp, /dev, rw mounts).
 * Returns -EOPNOTSUPP when the kernel has no Landlock. */
int landlock_plan_default(struct landlock_plan *plan, const char *const *writable,
                          psrun_error *err);
void landlock_plan_free(struct landlock_plan *plan);

/* Async-signal-safe, for the child: add the rules and restrict_self. Returns
 * 0 or -errno; *failed_rule is the index of a rule that failed, or -1.
 * The caller sets no_new_privs first: landlock_restrict_self() refuses (EPERM)
 * without it unless the caller has CAP_SYS_ADMIN in its user namespace, and
 * the sandbox must not rely on capabilities it is about to drop. A rule whose
 * path does not exist is skipped; a rule on a non-directory keeps only the
 * rights that apply to files. Apply after the last mount: a Landlock domain
 * forbids changing the mount topology. */
int landlock_plan_apply(const struct landlock_plan *plan, int *failed_rule);

/* The filesystem rights ABI `abi` knows (LANDLOCK_ACCESS_FS_*): the set the
 * default plan handles. Network rights are never included. */
uint64_t landlock_fs_access_for_abi(int abi);
/* The LANDLOCK_SCOPE_* flags the default plan sets for ABI `abi` (6+: signals
 * and abstract unix sockets). */
uint64_t landlock_scope_for_abi(int abi);
