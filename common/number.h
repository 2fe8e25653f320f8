/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Numbers from untrusted text (argv above all): one strict reader, so that
 * "4294967296", "-1", "0x3e8", "1e3" and "65536x" are refused instead of
 * wrapping or stopping half-way (strtoul and sscanf("%u") do both).
 *
 * Accepted: ASCII decimal digits, the whole string, at most 20 of them
 * after leading zeros; a leading '-' only when the range allows negative
 * values. No '+', spaces, hex, octal, exponent or unit.
 */

#include <stdint.h>

#include "common/error.h"

/* Returns 0, -EINVAL (not a decimal number) or -ERANGE (outside [min, max]). */
int number_parse(const char *s, int64_t min, int64_t max, int64_t *ret);
int number_parse_u64(const char *s, uint64_t max, uint64_t *ret);

/* The same, filling err with a one-line message that names the option:
 * "--preserve-fds: `0x3e8` is not a number" or
 * "--preserve-fds: `99999999999` is out of range (0..1024)". The value is
 * cut and escaped in the message. */
int number_parse_option(const char *option, const char *s, int64_t min, int64_t max, int64_t *ret,
                        psrun_error *err);

/* The value as a message may show it: control characters escaped, cut to
 * about 64 characters with "..." after. Returns buf. */
const char *number_shown(const char *s, char *buf, size_t size);
