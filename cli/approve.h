/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * An approver that is a command (`psrun mcp --approve-cmd`, `psrun session
 * install --approve-cmd`): it gets the action as one JSON line on stdin and
 * approves by exiting 0. Its stdout is read (the first line is the reason
 * a refusal gives), never passed on: it could not corrupt a protocol on
 * psrun's stdout. Its stderr is psrun's. Bounded: past timeout_ms it is
 * killed with its process group, and that is a refusal.
 */

#include <stdint.h>

#include <psrun.h>

#define APPROVE_TIMEOUT_DEFAULT_MS (120ULL * 1000)

struct approve_cmd {
        const char *cmd; /* run with /bin/sh -c */
        uint64_t timeout_ms;
};

/* A psrun_approve_fn; userdata is a struct approve_cmd. */
int approve_by_command(void *userdata, psrun_approval *approval);
