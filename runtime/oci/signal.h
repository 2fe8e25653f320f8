/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Signal names for `psrun kill ID [SIGNAL]`, spelled as runc and kill(1)
 * accept them. Pure: no syscalls.
 */

#include <stddef.h>

#include "common/error.h"

/* "9", "KILL", "SIGKILL", "kill", "sigkill" (names are case-insensitive, the
 * "SIG" prefix optional), "RTMIN", "RTMIN+3", "SIGRTMAX-2" -> *sig.
 * Numbers must be 1..SIGRTMAX: 0 only probes for existence, which is not
 * what `kill` is for. Anything else: -EINVAL and
 *   signal: unknown signal "FOO"
 * *sig is only written on success. */
int oci_signal_from_string(const char *s, int *sig, psrun_error *err);

/* "SIGKILL" (the first name of the table for numbers with aliases: SIGABRT,
 * not SIGIOT), "SIGRTMIN+3" for real-time signals, NULL for anything else. */
const char *oci_signal_to_string(int sig);

/* The i-th name of the table, aliases included ("SIGIOT"), NULL past the
 * last. Real-time signals are not in the table. */
const char *oci_signal_name_at(size_t i);
