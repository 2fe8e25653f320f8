/* SPDX-License-Identifier: MIT */
#include "common/log.h"

#include <errno.h>
#include <stdio.h>

void log_emitv(log_fn fn, void *userdata, enum log_level level, const char *fmt, va_list ap)
{
        char msg[4096];

        if (!fn)
                return;
        int saved_errno = errno;
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        fn(userdata, level, msg);
        errno = saved_errno;
}

void log_emit(log_fn fn, void *userdata, enum log_level level, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        log_emitv(fn, userdata, level, fmt, ap);
        va_end(ap);
}
