/* SPDX-License-Identifier: MIT */
/*
 * The OCI runtime's log: logrus-shaped lines (see oci-log.h), each built in
 * memory and written with one write(2).
 */
#include "cli/oci-log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"

static struct {
        int fd; /* -1: stderr */
        enum oci_log_format format;
        bool debug;
} log_sink = {.fd = -1, .format = OCI_LOG_TEXT};

/* logrus's names, which containerd matches ("error"). */
static const char *const level_names[] = {
        [OCI_LOG_DEBUG] = "debug",
        [OCI_LOG_INFO] = "info",
        [OCI_LOG_WARNING] = "warning",
        [OCI_LOG_ERROR] = "error",
};

static const char *const format_names[] = {
        [OCI_LOG_TEXT] = "text",
        [OCI_LOG_JSON] = "json",
};

int oci_log_format_from_string(const char *s)
{
        for (size_t i = 0; s && i < ARRAY_SIZE(format_names); i++)
                if (strcmp(s, format_names[i]) == 0)
                        return (int) i;
        return -EINVAL;
}

int oci_log_open(const char *path, enum oci_log_format format, bool debug, psrun_error *err)
{
        int fd = -1;

        if ((size_t) format >= ARRAY_SIZE(format_names))
                return psrun_error_set(err, EINVAL, "log: unknown format %d", (int) format);
        if (path) {
                /* 0644 as runc: containerd reads the log as another user. */
                fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
                if (fd < 0)
                        return psrun_error_errno(err, errno, "log %s", path);
        }
        oci_log_close();
        log_sink.fd = fd;
        log_sink.format = format;
        log_sink.debug = debug;
        return 0;
}

void oci_log_close(void)
{
        if (log_sink.fd >= 0)
                close(log_sink.fd);
        log_sink.fd = -1;
        log_sink.format = OCI_LOG_TEXT;
        log_sink.debug = false;
}

/* RFC 3339, UTC, nanoseconds: "2026-11-29T12:00:00.123456789Z". */
static void format_time(char *buf, size_t size)
{
        struct timespec ts;
        struct tm tm;

        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + n, size - n, ".%09ldZ", ts.tv_nsec);
}

/* logrus quotes a text value unless every character is one of these. */
static bool text_needs_quoting(const char *s)
{
        if (!*s)
                return true;
        for (const char *p = s; *p; p++) {
                char c = *p;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      strchr("-._/@^+", c)))
                        return true;
        }
        return false;
}

static void log_line(enum oci_log_level level, const char *msg)
{
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        char when[64];

        format_time(when, sizeof(when));
        FILE *f = open_memstream(&line, &size);
        if (!f)
                return;
        if (log_sink.format == OCI_LOG_JSON) {
                /* Keys in logrus's order (sorted). */
                fprintf(f, "{\"level\":\"%s\",\"msg\":", level_names[level]);
                json_write_string(f, msg);
                fprintf(f, ",\"time\":\"%s\"}\n", when);
        } else {
                fprintf(f, "time=\"%s\" level=%s msg=", when, level_names[level]);
                if (text_needs_quoting(msg))
                        json_write_string(f, msg);
                else
                        fputs(msg, f);
                fputc('\n', f);
        }
        if (fclose(f) != 0)
                return;
        (void) write_all(log_sink.fd >= 0 ? log_sink.fd : STDERR_FILENO, line, size);
}

void oci_log(enum oci_log_level level, const char *fmt, ...)
{
        int saved_errno = errno;
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        if ((size_t) level >= ARRAY_SIZE(level_names))
                level = OCI_LOG_ERROR;
        if (level == OCI_LOG_DEBUG && !log_sink.debug)
                return;
        va_start(ap, fmt);
        int r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0) {
                msg = NULL;
                log_line(level, fmt); /* out of memory: the format says something */
        } else {
                log_line(level, msg);
        }
        errno = saved_errno;
}

_Static_assert((int) OCI_LOG_DEBUG == (int) LOG_LEVEL_DEBUG &&
                       (int) OCI_LOG_INFO == (int) LOG_LEVEL_INFO &&
                       (int) OCI_LOG_WARNING == (int) LOG_LEVEL_WARNING &&
                       (int) OCI_LOG_ERROR == (int) LOG_LEVEL_ERROR,
               "one order of levels");

void oci_log_sink(void *userdata, enum log_level level, const char *msg)
{
        oci_log((enum oci_log_level) level, "%s", msg);
}
