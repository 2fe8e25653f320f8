/* SPDX-License-Identifier: MIT */
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int normalize(int errnum)
{
        if (errnum < 0)
                errnum = -errnum;
        return errnum ? errnum : EINVAL;
}

int psrun_error_errno(psrun_error *err, int errnum, const char *fmt, ...)
{
        errnum = normalize(errnum);
        if (!err)
                return -errnum;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        if (n < 0)
                n = 0;
        if ((size_t) n < sizeof(err->msg))
                snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
        err->code = errnum;
        return -errnum;
}

int psrun_error_set(psrun_error *err, int errnum, const char *fmt, ...)
{
        errnum = normalize(errnum);
        if (!err)
                return -errnum;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        err->code = errnum;
        return -errnum;
}

int psrun_error_prefix(psrun_error *err, const char *fmt, ...)
{
        if (!err)
                return -EINVAL;
        char prefix[PSRUN_ERROR_MSG_MAX];
        char old[PSRUN_ERROR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof(old));
        snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
        return -normalize(err->code);
}

void psrun_error_clear(psrun_error *err)
{
        if (err) {
                err->code = 0;
                err->msg[0] = '\0';
        }
}
