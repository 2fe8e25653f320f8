/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI runtime's log, as runc's --log, --log-format and --debug: the sink
 * of the psrun CLI's messages when it is driven by containerd or Docker.
 * They read the log file and show the msg of its last "error" line to the
 * user ("OCI runtime create failed: <msg>").
 *
 * One line per call, written with a single write(2) on an O_APPEND fd, so
 * lines of concurrent psrun processes never interleave:
 *
 *   json  {"level":"error","msg":"...","time":"2026-11-29T12:00:00.123456789Z"}
 *         (logrus's JSONFormatter: keys sorted; msg escaped as by
 *         json_write_string, so every line is valid UTF-8 JSON)
 *   text  time="2026-11-29T12:00:00.123456789Z" level=error msg="..."
 *         (logrus's TextFormatter without colors; msg quoted, escaped as in
 *         JSON, unless it is only letters, digits and -._/@^+)
 *
 * time is RFC 3339 in UTC with nine digits of nanoseconds. Levels are
 * "debug", "info", "warning", "error"; debug lines are written only with
 * debug. Without oci_log_open the log is stderr, text, no debug. As runc,
 * a log file given is the only sink: nothing also goes to stderr.
 *
 * Process-wide state, set up once by the CLI before any thread exists.
 * oci_log() keeps errno.
 */

#include <stdbool.h>

#include "common/error.h"
#include "common/log.h"

enum oci_log_format {
        OCI_LOG_TEXT,
        OCI_LOG_JSON,
};

enum oci_log_level {
        OCI_LOG_DEBUG,
        OCI_LOG_INFO,
        OCI_LOG_WARNING,
        OCI_LOG_ERROR,
};

/* Logs to path (NULL: stderr), opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC,
 * mode 0644 as runc. Replaces (and closes) a log opened before. */
int oci_log_open(const char *path, enum oci_log_format format, bool debug, psrun_error *err);

/* "text" or "json": the format; anything else -EINVAL. */
int oci_log_format_from_string(const char *s);

void oci_log(enum oci_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The callback the CLI gives the library (oci_root_set_log): each message
 * becomes one line of this log. userdata is unused. */
void oci_log_sink(void *userdata, enum log_level level, const char *msg);

/* Closes a log file and goes back to stderr, text, no debug. */
void oci_log_close(void);
