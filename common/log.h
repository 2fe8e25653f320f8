/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The library's one log path. Library code never prints: what it has to say
 * besides an error (a skipped optional layer, a failing poststart hook, debug
 * notes of the OCI operations) goes to a callback its caller installs, or
 * nowhere. The CLI installs the writers (cli/: stderr notes for psrun run,
 * the runc-style JSON/text log for the OCI commands).
 */

#include <stdarg.h>

enum log_level {
        LOG_LEVEL_DEBUG,
        LOG_LEVEL_INFO,
        LOG_LEVEL_WARNING,
        LOG_LEVEL_ERROR,
};

typedef void (*log_fn)(void *userdata, enum log_level level, const char *msg);

/* Formats and hands one message to fn (nothing when fn is NULL). Keeps
 * errno. Messages longer than 4 KiB are cut. */
void log_emit(log_fn fn, void *userdata, enum log_level level, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void log_emitv(log_fn fn, void *userdata, enum log_level level, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
