/* SPDX-License-Identifier: MIT */
#pragma once

/* What the public handles wrap, shared by runtime/api.c and the session
 * API (runtime/session-api.c). */

#include "policy/policy.h"

struct psrun_policy {
        struct policy p;
};
