/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * AppArmor: a second, path-based wall around the sandbox where the host has
 * AppArmor. The parent makes sure the profile is in the kernel (it loads
 * psrun's generated "psrun-default" with apparmor_parser when needed) and
 * fills a plan; the child only writes "exec <profile>" to its attr file, so
 * the profile takes effect at its execve().
 */

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#define APPARMOR_DEFAULT_PROFILE "psrun-default"

/* Where the text of the last psrun-default loaded into the running kernel is
 * kept, so an unchanged profile is not compiled and loaded again. */
#define APPARMOR_STATE_DIR "/run/psrun/apparmor"

struct apparmor_plan {
        bool active;          /* false: the layer is not used */
        char attr_path[64];   /* /proc/self/attr/apparmor/exec or /proc/self/attr/exec */
        char attr_value[320]; /* "exec <profile>" */
        size_t attr_len;
};

/* 1 when the host has AppArmor enabled (module parameter and securityfs),
 * else 0. */
int apparmor_enabled(void);

/* Build the plan for enum policy_layer `mode` and `profile` (NULL: psrun's
 * generated psrun-default, loaded or reloaded when its text changed; a named
 * profile must already be loaded).
 * Returns 0 (plan->active tells whether the layer is used), -EOPNOTSUPP when
 * the host cannot provide AppArmor (err holds a one-line note; the caller goes
 * on for AUTO and fails closed for REQUIRED), or another -errno. */
int apparmor_plan_init(struct apparmor_plan *plan, int mode, const char *profile, psrun_error *err);

/* For the child, async-signal-safe: request the profile for the next execve.
 * Returns 0 or -errno. */
int apparmor_plan_apply(const struct apparmor_plan *plan);

/* The text of psrun-default as it would be loaded on this host (static). */
const char *apparmor_default_profile_text(void);
