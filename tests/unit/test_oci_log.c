/* SPDX-License-Identifier: MIT */
/*
 * The runtime log (--log, --log-format, --debug): every JSON line is parsed
 * back with a strict parser of flat string objects, below.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "cli/oci-log.h"

static char tmp_dir[PATH_MAX];
static char log_path[PATH_MAX];

static void setup(void)
{
        test_tmp_template(tmp_dir, sizeof(tmp_dir), "psrun-oci-log");
        cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
        snprintf(log_path, sizeof(log_path), "%s/log.json", tmp_dir);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static void teardown(void)
{
        oci_log_close();
        nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(oci_log, .init = setup, .fini = teardown, .timeout = 30);

/* ---- a strict parser of {"k":"v",...} lines ---- */

struct kv {
        char key[16];
        char *value; /* decoded, malloc'd */
};

struct object {
        struct kv kv[8];
        int n;
};

static void object_free(struct object *o)
{
        for (int i = 0; i < o->n; i++)
                free(o->kv[i].value);
        o->n = 0;
}

static bool valid_utf8(const unsigned char *s, size_t len)
{
        for (size_t i = 0; i < len;) {
                unsigned char c = s[i];
                size_t n = c < 0x80                ? 1
                           : c >= 0xc2 && c < 0xe0 ? 2
                           : c >= 0xe0 && c < 0xf0 ? 3
                           : c >= 0xf0 && c < 0xf5 ? 4
                                                   : 0;
                if (n == 0 || i + n > len)
                        return false;
                for (size_t k = 1; k < n; k++)
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                i += n;
        }
        return true;
}

static void put_utf8(FILE *f, unsigned cp)
{
        if (cp < 0x80) {
                fputc((int) cp, f);
        } else if (cp < 0x800) {
                fputc(0xc0 | (int) (cp >> 6), f);
                fputc(0x80 | (int) (cp & 0x3f), f);
        } else {
                fputc(0xe0 | (int) (cp >> 12), f);
                fputc(0x80 | (int) ((cp >> 6) & 0x3f), f);
                fputc(0x80 | (int) (cp & 0x3f), f);
        }
}

/* Parses a JSON string at *p; returns the decoded bytes or NULL. */
static char *parse_string(const char **p)
{
        const char *s = *p;
        if (*s++ != '"')
                return NULL;
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        for (;;) {
                unsigned char c = (unsigned char) *s;
                if (c == '"')
                        break;
                if (c < 0x20) { /* raw control character (or the end) */
                        fclose(f);
                        free(out);
                        return NULL;
                }
                if (c != '\\') {
                        fputc(c, f);
                        s++;
                        continue;
                }
                s++;
                const char *simple = strchr("\"\\/bfnrt", *s);
                if (*s && simple) {
                        fputc("\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"], f);
                        s++;
                } else if (*s == 'u') {
                        unsigned cp = 0;
                        for (int i = 1; i <= 4; i++) {
                                char h = s[i];
                                int v = h >= '0' && h <= '9'   ? h - '0'
                                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                               : -1;
                                if (v < 0) {
                                        fclose(f);
                                        free(out);
                                        return NULL;
                                }
                                cp = cp * 16 + (unsigned) v;
                        }
                        if (cp >= 0xd800 && cp < 0xe000) { /* no surrogates expected */
                                fclose(f);
                                free(out);
                                return NULL;
                        }
                        put_utf8(f, cp);
                        s += 5;
                } else {
                        fclose(f);
                        free(out);
                        return NULL;
                }
        }
        fclose(f);
        *p = s + 1;
        if (!valid_utf8((const unsigned char *) out, size)) {
                free(out);
                return NULL;
        }
        return out;
}

/* The whole line must be one object of string values. */
static bool parse_object(const char *line, struct object *o)
{
        const char *p = line;
        o->n = 0;
        if (!valid_utf8((const unsigned char *) line, strlen(line)))
                return false;
        if (*p++ != '{')
                return false;
        for (;;) {
                if (o->n == 8)
                        return false;
                char *key = parse_string(&p);
                if (!key || strlen(key) >= sizeof(o->kv[0].key)) {
                        free(key);
                        return false;
                }
                snprintf(o->kv[o->n].key, sizeof(o->kv[0].key), "%s", key);
                free(key);
                if (*p++ != ':')
                        return false;
                o->kv[o->n].value = parse_string(&p);
                if (!o->kv[o->n].value)
                        return false;
                o->n++;
                if (*p == ',') {
                        p++;
                        continue;
                }
                if (*p++ != '}')
                        return false;
                return *p == '\0';
        }
}

/* ---- helpers ---- */

static char *read_file(const char *path)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
        char *buf = NULL;
        size_t size = 0;
        FILE *mem = open_memstream(&buf, &size);
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                fwrite(chunk, 1, n, mem);
        fclose(mem);
        return buf;
}

/* Splits text into lines (in place); each must end with '\n'. */
static int split_lines(char *text, char **lines, int max)
{
        int n = 0;
        char *p = text;
        while (*p) {
                char *nl = strchr(p, '\n');
                cr_assert_not_null(nl, "last line not terminated: %s", p);
                *nl = '\0';
                cr_assert_lt(n, max);
                lines[n++] = p;
                p = nl + 1;
        }
        return n;
}

static void check_time(const char *t)
{
        /* "2026-11-29T12:00:00.123456789Z" */
        cr_assert_eq(strlen(t), 30, "time %s", t);
        const char *shape = "dddd-dd-ddTdd:dd:dd.dddddddddZ";
        for (int i = 0; i < 30; i++) {
                if (shape[i] == 'd')
                        cr_assert(t[i] >= '0' && t[i] <= '9', "time %s", t);
                else
                        cr_assert_eq(t[i], shape[i], "time %s", t);
        }
        struct tm tm = {0};
        cr_assert_not_null(strptime(t, "%Y-%m-%dT%H:%M:%S", &tm));
        time_t when = timegm(&tm);
        cr_assert_lt(labs((long) (when - time(NULL))), 5, "time %s is not now (UTC)", t);
}

/* Parses a JSON log line and checks its shape; returns the msg. */
static char *check_json_line(const char *line, const char *level)
{
        struct object o;
        cr_assert(parse_object(line, &o), "not a flat JSON object: %s", line);
        cr_assert_eq(o.n, 3, "%s", line);
        cr_assert_str_eq(o.kv[0].key, "level");
        cr_assert_str_eq(o.kv[1].key, "msg");
        cr_assert_str_eq(o.kv[2].key, "time");
        cr_assert_str_eq(o.kv[0].value, level, "%s", line);
        check_time(o.kv[2].value);
        char *msg = strdup(o.kv[1].value);
        object_free(&o);
        return msg;
}

static void open_log(enum oci_log_format format, bool debug)
{
        psrun_error err = {0};
        cr_assert_eq(oci_log_open(log_path, format, debug, &err), 0, "%s", err.msg);
}

/* ---- tests ---- */

Test(oci_log, format_names)
{
        cr_assert_eq(oci_log_format_from_string("text"), OCI_LOG_TEXT);
        cr_assert_eq(oci_log_format_from_string("json"), OCI_LOG_JSON);
        const char *bad[] = {"JSON", "Text", "", "xml", "json ", NULL};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                cr_assert_eq(oci_log_format_from_string(bad[i]), -EINVAL, "%s",
                             bad[i] ? bad[i] : "(null)");

        psrun_error err = {0};
        cr_assert_eq(oci_log_open(log_path, (enum oci_log_format) 7, false, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "log: unknown format 7");
}

Test(oci_log, json_lines_escaped)
{
        const struct {
                enum oci_log_level level;
                const char *name;
                const char *msg;
        } cases[] = {
                {OCI_LOG_ERROR, "error", "container_linux.go: starting container process"},
                {OCI_LOG_WARNING, "warning", "quote \" backslash \\ slash /"},
                {OCI_LOG_INFO, "info", "two\nlines\r\ttab"},
                {OCI_LOG_ERROR, "error", "ctl \x01\x1f del \x7f esc \x1b[31m"},
                {OCI_LOG_ERROR, "error", "utf-8 caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"},
                {OCI_LOG_ERROR, "error", ""},
        };

        open_log(OCI_LOG_JSON, false);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                oci_log(cases[i].level, "%s", cases[i].msg);
        oci_log(OCI_LOG_ERROR, "bad \xff\xc3( \xed\xa0\x80 end");
        oci_log_close();

        _cleanup_free_ char *text = read_file(log_path);
        char *lines[16];
        int n = split_lines(text, lines, 16);
        cr_assert_eq(n, (int) ARRAY_SIZE(cases) + 1);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                _cleanup_free_ char *msg = check_json_line(lines[i], cases[i].name);
                cr_assert_str_eq(msg, cases[i].msg, "case %zu: %s", i, lines[i]);
        }
        /* Not UTF-8: still valid JSON (each bad byte as \u00XX). */
        _cleanup_free_ char *msg = check_json_line(lines[n - 1], "error");
        cr_assert(strncmp(msg, "bad ", 4) == 0 && strstr(msg, " end"), "%s", msg);
        cr_assert_eq(strncmp(lines[0], "{\"level\":\"error\",\"msg\":\"container_linux.go", 41), 0);
}

Test(oci_log, debug_filtered)
{
        open_log(OCI_LOG_JSON, false);
        oci_log(OCI_LOG_DEBUG, "hidden %d", 1);
        oci_log(OCI_LOG_INFO, "shown %d", 2);
        open_log(OCI_LOG_JSON, true);
        oci_log(OCI_LOG_DEBUG, "shown %d", 3);
        oci_log_close();

        _cleanup_free_ char *text = read_file(log_path);
        char *lines[8];
        cr_assert_eq(split_lines(text, lines, 8), 2);
        _cleanup_free_ char *m0 = check_json_line(lines[0], "info");
        _cleanup_free_ char *m1 = check_json_line(lines[1], "debug");
        cr_assert_str_eq(m0, "shown 2");
        cr_assert_str_eq(m1, "shown 3");
}

Test(oci_log, append_mode_and_file_mode)
{
        umask(022);
        int fd = open(log_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        cr_assert_eq(write(fd, "existing\n", 9), 9);
        close(fd);

        open_log(OCI_LOG_JSON, false);
        oci_log(OCI_LOG_ERROR, "one");
        oci_log_close();
        open_log(OCI_LOG_JSON, false);
        oci_log(OCI_LOG_ERROR, "two");
        oci_log_close();

        _cleanup_free_ char *text = read_file(log_path);
        char *lines[8];
        cr_assert_eq(split_lines(text, lines, 8), 3);
        cr_assert_str_eq(lines[0], "existing");
        _cleanup_free_ char *m1 = check_json_line(lines[1], "error");
        _cleanup_free_ char *m2 = check_json_line(lines[2], "error");
        cr_assert_str_eq(m1, "one");
        cr_assert_str_eq(m2, "two");

        char fresh[PATH_MAX];
        snprintf(fresh, sizeof(fresh), "%s/fresh.log", tmp_dir);
        psrun_error err = {0};
        cr_assert_eq(oci_log_open(fresh, OCI_LOG_TEXT, false, &err), 0, "%s", err.msg);
        struct stat st;
        cr_assert_eq(stat(fresh, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
}

Test(oci_log, text_format)
{
        open_log(OCI_LOG_TEXT, false);
        oci_log(OCI_LOG_ERROR, "cannot start: \"x\"\nsecond");
        oci_log(OCI_LOG_WARNING, "plain-word_1.2/x@y^z+w");
        oci_log(OCI_LOG_INFO, "%s", "");
        oci_log_close();

        _cleanup_free_ char *text = read_file(log_path);
        char *lines[8];
        cr_assert_eq(split_lines(text, lines, 8), 3);
        const char *want[] = {
                "\" level=error msg=\"cannot start: \\\"x\\\"\\nsecond\"",
                "\" level=warning msg=plain-word_1.2/x@y^z+w",
                "\" level=info msg=\"\"",
        };
        for (int i = 0; i < 3; i++) {
                cr_assert_eq(strncmp(lines[i], "time=\"", 6), 0, "%s", lines[i]);
                char when[31];
                snprintf(when, sizeof(when), "%s", lines[i] + 6);
                check_time(when);
                cr_assert_str_eq(lines[i] + 36, want[i], "%s", lines[i]);
        }
}

Test(oci_log, stderr_when_no_path)
{
        char err_path[PATH_MAX];
        snprintf(err_path, sizeof(err_path), "%s/stderr", tmp_dir);
        int fd = open(err_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        int saved = dup(2);
        cr_assert_eq(dup2(fd, 2), 2);
        close(fd);

        oci_log(OCI_LOG_ERROR, "by default %s", "text");
        oci_log(OCI_LOG_DEBUG, "no debug by default");
        psrun_error err = {0};
        cr_assert_eq(oci_log_open(NULL, OCI_LOG_JSON, true, &err), 0);
        oci_log(OCI_LOG_DEBUG, "json on stderr");
        oci_log_close();

        dup2(saved, 2);
        close(saved);
        _cleanup_free_ char *text = read_file(err_path);
        char *lines[8];
        cr_assert_eq(split_lines(text, lines, 8), 2, "%s", text);
        cr_assert(strstr(lines[0], "\" level=error msg=\"by default text\""), "%s", lines[0]);
        _cleanup_free_ char *msg = check_json_line(lines[1], "debug");
        cr_assert_str_eq(msg, "json on stderr");
}

Test(oci_log, open_error_names_the_path)
{
        char path[PATH_MAX], want[PSRUN_ERROR_MSG_MAX];
        psrun_error err = {0};

        snprintf(path, sizeof(path), "%s/missing/log.json", tmp_dir);
        cr_assert_eq(oci_log_open(path, OCI_LOG_JSON, false, &err), -ENOENT);
        snprintf(want, sizeof(want), "log %s: No such file or directory", path);
        cr_assert_str_eq(err.msg, want);
}

Test(oci_log, keeps_errno)
{
        open_log(OCI_LOG_JSON, false);
        errno = EXDEV;
        oci_log(OCI_LOG_ERROR, "x");
        cr_assert_eq(errno, EXDEV);
        errno = EXDEV;
        oci_log(OCI_LOG_DEBUG, "filtered");
        cr_assert_eq(errno, EXDEV);
}

Test(oci_log, long_message_is_one_line)
{
        const size_t len = 100 << 10;
        _cleanup_free_ char *big = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
                big[i] = i % 1000 == 999 ? '\n' : 'a' + (char) (i % 26);
        big[len] = '\0';

        open_log(OCI_LOG_JSON, false);
        oci_log(OCI_LOG_ERROR, "%s", big);
        oci_log_close();
        _cleanup_free_ char *text = read_file(log_path);
        char *lines[4];
        cr_assert_eq(split_lines(text, lines, 4), 1);
        _cleanup_free_ char *msg = check_json_line(lines[0], "error");
        cr_assert_str_eq(msg, big);
}

/* Several processes on one log: lines never interleave. */
Test(oci_log, concurrent_writers)
{
        enum { WRITERS = 4, LINES = 300 };
        char payload[3000];
        pid_t pids[WRITERS];

        open_log(OCI_LOG_JSON, false);
        for (int w = 0; w < WRITERS; w++) {
                pids[w] = fork();
                cr_assert_geq(pids[w], 0);
                if (pids[w] == 0) {
                        memset(payload, 'a' + w, sizeof(payload) - 1);
                        payload[sizeof(payload) - 1] = '\0';
                        for (int i = 0; i < LINES; i++)
                                oci_log(OCI_LOG_ERROR, "%d %d %s", w, i, payload);
                        _exit(0);
                }
        }
        for (int w = 0; w < WRITERS; w++) {
                int status;
                cr_assert_eq(waitpid(pids[w], &status, 0), pids[w]);
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        oci_log_close();

        _cleanup_free_ char *text = read_file(log_path);
        static char *lines[WRITERS * LINES + 1];
        cr_assert_eq(split_lines(text, lines, WRITERS * LINES + 1), WRITERS * LINES);
        int seen[WRITERS] = {0};
        for (int i = 0; i < WRITERS * LINES; i++) {
                _cleanup_free_ char *msg = check_json_line(lines[i], "error");
                int w = -1, k = -1;
                cr_assert_eq(sscanf(msg, "%d %d", &w, &k), 2);
                cr_assert(w >= 0 && w < WRITERS);
                cr_assert_eq(k, seen[w]++, "writer %d out of order", w);
                cr_assert_eq(strspn(strrchr(msg, ' ') + 1, (char[]){(char) ('a' + w), 0}), 2999);
        }
}
