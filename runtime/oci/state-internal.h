/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by runtime/oci/state.c (the directory, locks, FIFO) and
 * runtime/oci/state-record.c (the record and its JSON). */

#include <stdio.h>
#include <string.h>

#include "common/names.h"
#include "policy/policy.h"
#include "runtime/oci/state.h"

#define STATE_FILE     "state.json"
#define STATE_TMP_FILE "state.json.tmp"
#define LOCK_FILE      "lock"
/* Far above any real state (annotations included), far below trouble. */
#define STATE_MAX_SIZE (4 << 20)
/* Subdirectories delete descends into; psrun itself creates none. */
#define REMOVE_MAX_DEPTH 8
#define SHOWN_MAX        128

/* s escaped and cut for a one-line message; buf holds SHOWN_MAX bytes. */
static inline const char *shown(const char *s, char *buf)
{
        return policy_escape(s, buf, SHOWN_MAX);
}

/* Refuse a record that could not be read back (missing or invalid fields). */
int oci_state_check(const struct oci_state *s, psrun_error *err);

/* The record as state.json stores it (private fields included). */
int oci_state_serialize(const struct oci_state *s, char **ret, size_t *ret_len);
