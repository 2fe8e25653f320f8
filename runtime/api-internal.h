/* SPDX-License-Identifier: MIT */
#pragma once

/* What the public handles wrap, shared by runtime/api.c and the session
 * API (runtime/session/api.c). */

#include <psrun.h>

#include "policy/policy.h"
#include "runtime/result.h"

struct psrun_policy {
        struct policy p;
};

/* The internal result as the public one (with its violations, allocated:
 * psrun_result_free), and the public one back, for the JSON writers. */
void result_to_public(const struct run_result *in, psrun_result *out);
void violations_from_public(const psrun_result *in, struct violations *out);
/* The whole public result back (violations included), for the JSON
 * writers: psrun run's and a session exec's are one writer. */
void result_from_public(const psrun_result *in, struct run_result *out);
