/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Backends (STYLE.md §9): who runs the sandbox a policy describes.
 *
 *   native  psrun itself: one clone3(), the child's steps, the kernel's
 *           layers (runtime/run.c)
 *   gvisor  the same sandbox as an OCI bundle for runsc, gVisor's user-space
 *           kernel, inside psrun's cgroups (runtime/gvisor/run.c)
 *
 * run_sandbox() (runtime/run.h) validates the policy, checks for root and
 * calls the policy's backend; the sessions' supervisor has a table of its
 * own (runtime/session/supervisor.c). A backend that cannot run here says so
 * in err (-EOPNOTSUPP, -ENOENT) and never hands over to another one.
 */

#include "common/error.h"
#include "policy/policy.h"
#include "runtime/result.h"

struct run_options;

struct backend_ops {
        const char *name; /* the policy's `backend` value */
        /* One command, start to result; pol is valid, the caller is root. */
        int (*run)(const struct policy *pol, char *const argv[], const struct run_options *o,
                   struct run_result *res, psrun_error *err);
};

extern const struct backend_ops backend_native;
extern const struct backend_ops backend_gvisor;

/* NULL for a value outside the enum. */
const struct backend_ops *backend_of(enum policy_backend backend);
