/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One error convention for all of psrun: fallible functions return 0 (or a
 * count) on success and -errno on failure, and fill a psrun_error that callers
 * may prefix with context on the way up ("rootfs: mount /proc: ...").
 * The struct is fixed-size, so filling it never allocates.
 */

#include <stdarg.h>
#include <stddef.h>

#include <psrun.h> /* struct psrun_error is public */

#define PSRUN_ERROR_MSG_MAX ((int) sizeof(((psrun_error *) 0)->msg))

/* Sets msg from the format, appends ": strerror(errnum)", returns -errnum.
 * errnum may be given positive or negative. */
int psrun_error_errno(psrun_error *err, int errnum, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Sets msg from the format alone (no strerror suffix), code = errnum,
 * returns -errnum. For errors whose text already says everything, such as
 * "policy.yaml:3:1: unknown key `foo`". */
int psrun_error_set(psrun_error *err, int errnum, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Prepends "<context>: " to an existing message. Returns -err->code. */
int psrun_error_prefix(psrun_error *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

void psrun_error_clear(psrun_error *err);
