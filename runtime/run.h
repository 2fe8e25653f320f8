/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One sandboxed command, start to end: policy -> plan -> clone3 -> supervise
 * -> result. Library code: it never prints; notes go to the log callback.
 * The entry of the API and the CLI; the backends (runtime/backend.h) run it.
 */

#include "common/error.h"
#include "policy/policy.h"
#include "runtime/backend.h"
#include "runtime/plan.h"
#include "runtime/result.h"

/* Run argv in a new sandbox and wait for it. `result` is always filled; on a
 * failure of psrun itself it says setup_error and the call returns -errno with
 * `err` set, else 0. */
int run_sandbox(const struct policy *policy, char *const argv[], const struct run_options *opts,
                struct run_result *result, psrun_error *err);
