/* SPDX-License-Identifier: MIT */
/*
 * The OCI container state directory: ids, the root, one directory per
 * container, its lock, state.json and the create/start FIFO. The layout and
 * the protocols are described in oci-state.h.
 */
#include "runtime/oci-state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "policy/policy.h"

#define STATE_FILE     "state.json"
#define STATE_TMP_FILE "state.json.tmp"
#define LOCK_FILE      "lock"
/* Far above any real state (annotations included), far below trouble. */
#define STATE_MAX_SIZE (4 << 20)
/* Subdirectories delete descends into; psrun itself creates none. */
#define REMOVE_MAX_DEPTH 8
#define SHOWN_MAX        128

struct oci_root {
        int fd;
        char *path;
};

struct oci_container {
        struct oci_root *root; /* borrowed */
        char *id;
        int dir_fd;
        int lock_fd;
        int lock_op; /* 0, LOCK_SH or LOCK_EX */
        bool deleted;
};

static bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static const char *shown(const char *s, char *buf)
{
        return policy_escape(s, buf, SHOWN_MAX);
}

/* ---- ids ---- */

static bool id_char_ok(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '+' || c == '-';
}

int oci_id_validate(const char *id, psrun_error *err)
{
        char buf[SHOWN_MAX];
        size_t len;

        if (!id || !*id)
                return psrun_error_set(err, EINVAL, "container id must not be empty");
        len = strlen(id);
        /* The id names a directory: longer than NAME_MAX could never be created. */
        if (len > OCI_ID_MAX)
                return psrun_error_set(err, EINVAL,
                                       "container id \"%s\": is %zu bytes long, at most %d allowed",
                                       shown(id, buf), len, OCI_ID_MAX);
        for (size_t i = 0; i < len; i++)
                if (!id_char_ok(id[i]))
                        return psrun_error_set(err, EINVAL,
                                               "container id \"%s\": must contain only letters, "
                                               "digits, '_', '.', '+' and '-'",
                                               shown(id, buf));
        if (streq(id, ".") || streq(id, ".."))
                return psrun_error_set(err, EINVAL,
                                       "container id \"%s\": must not be \".\" or \"..\"", id);
        return 0;
}

static int not_exist(psrun_error *err, const char *id)
{
        return psrun_error_set(err, ENOENT, "container \"%s\" does not exist", id);
}

/* ---- status ---- */

static const char *const status_names[_OCI_STATUS_MAX] = {
        [OCI_STATUS_CREATING] = "creating", [OCI_STATUS_CREATED] = "created",
        [OCI_STATUS_RUNNING] = "running",   [OCI_STATUS_PAUSED] = "paused",
        [OCI_STATUS_STOPPED] = "stopped",
};

const char *oci_status_to_string(enum oci_status s)
{
        return (unsigned) s < _OCI_STATUS_MAX ? status_names[s] : NULL;
}

int oci_status_from_string(const char *s)
{
        for (int i = 0; s && i < _OCI_STATUS_MAX; i++)
                if (streq(status_names[i], s))
                        return i;
        return -EINVAL;
}

/* ---- the record ---- */

void oci_state_free(struct oci_state *s)
{
        if (!s)
                return;
        free(s->oci_version);
        free(s->id);
        free(s->bundle);
        free(s->rootfs);
        free(s->created);
        free(s->owner);
        for (size_t i = 0; i < s->n_annotations; i++) {
                free(s->annotations[i].key);
                free(s->annotations[i].value);
        }
        free(s->annotations);
        strv_free(s->cgroup_paths);
        *s = (struct oci_state){0};
}

int oci_format_created(const struct timespec *ts, char *buf, size_t size)
{
        char frac[16] = "";
        struct tm tm;
        int n;

        if (!gmtime_r(&ts->tv_sec, &tm))
                return -EOVERFLOW;
        /* Go's RFC3339Nano: the fraction without trailing zeros, none for 0. */
        if (ts->tv_nsec > 0 && ts->tv_nsec < 1000000000) {
                size_t len = (size_t) snprintf(frac, sizeof(frac), ".%09ld", ts->tv_nsec);
                while (frac[len - 1] == '0')
                        frac[--len] = '\0';
        }
        n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int oci_state_init(struct oci_state *s, const char *id, const char *bundle, psrun_error *err)
{
        struct timespec now;
        char created[64];

        *s = (struct oci_state){.status = OCI_STATUS_CREATING};
        clock_gettime(CLOCK_REALTIME, &now);
        if (oci_format_created(&now, created, sizeof(created)) < 0)
                return psrun_error_set(err, EOVERFLOW, "state: the clock is out of range");
        s->oci_version = strdup(OCI_STATE_SPEC_VERSION);
        s->id = strdup(id);
        s->bundle = strdup(bundle);
        s->created = strdup(created);
        if (!s->oci_version || !s->id || !s->bundle || !s->created) {
                oci_state_free(s);
                return psrun_error_errno(err, ENOMEM, "state");
        }
        return 0;
}

int oci_state_add_annotation(struct oci_state *s, const char *key, const char *value,
                             psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct oci_annotation *grown;

        for (size_t i = 0; i < s->n_annotations; i++)
                if (streq(s->annotations[i].key, key))
                        return psrun_error_set(err, EEXIST, "annotation \"%s\" given twice",
                                               shown(key, buf));
        grown = reallocarray(s->annotations, s->n_annotations + 1, sizeof(*grown));
        if (!grown)
                return psrun_error_errno(err, ENOMEM, "annotations");
        s->annotations = grown;
        _cleanup_free_ char *k = strdup(key);
        _cleanup_free_ char *v = strdup(value);
        if (!k || !v)
                return psrun_error_errno(err, ENOMEM, "annotations");
        s->annotations[s->n_annotations++] = (struct oci_annotation){TAKE_PTR(k), TAKE_PTR(v)};
        return 0;
}

int oci_state_add_cgroup_path(struct oci_state *s, const char *controller_path, psrun_error *err)
{
        size_t n = 0;
        char **grown;

        while (s->cgroup_paths && s->cgroup_paths[n])
                n++;
        grown = reallocarray(s->cgroup_paths, n + 2, sizeof(*grown));
        if (!grown)
                return psrun_error_errno(err, ENOMEM, "cgroup paths");
        s->cgroup_paths = grown;
        grown[n] = strdup(controller_path);
        grown[n + 1] = NULL;
        return grown[n] ? 0 : psrun_error_errno(err, ENOMEM, "cgroup paths");
}

int oci_proc_stat(pid_t pid, char *state, uint64_t *start_time)
{
        char path[64], buf[4096];
        char *p, *end;
        ssize_t n;

        if (pid <= 0)
                return -EINVAL;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
        do
                n = read(fd, buf, sizeof(buf) - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == ESRCH ? -ENOENT : -errno;
        buf[n] = '\0';
        /* comm (field 2) may hold spaces and ')': the fields follow the last ')'. */
        p = strrchr(buf, ')');
        if (!p || p[1] != ' ' || !p[2])
                return -EPROTO;
        p += 2;
        if (state)
                *state = *p;
        for (int field = 3; field < 22; field++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EPROTO;
                p++;
        }
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
                return -EPROTO;
        if (start_time)
                *start_time = v;
        return 0;
}

int oci_state_set_pid(struct oci_state *s, pid_t pid, psrun_error *err)
{
        uint64_t start;
        int r = oci_proc_stat(pid, NULL, &start);

        if (r < 0)
                return psrun_error_errno(err, r, "state: read /proc/%d/stat", (int) pid);
        s->pid = pid;
        s->pid_start_time = start;
        return 0;
}

int oci_state_refresh(struct oci_state *s)
{
        uint64_t start;
        char st;
        bool gone;
        int r;

        if (s->status != OCI_STATUS_CREATED && s->status != OCI_STATUS_RUNNING &&
            s->status != OCI_STATUS_PAUSED)
                return 0;
        if (s->pid <= 0) {
                gone = true;
        } else if (kill(s->pid, 0) < 0 && errno == ESRCH) {
                gone = true;
        } else {
                r = oci_proc_stat(s->pid, &st, &start);
                if (r == -ENOENT)
                        gone = true;
                else if (r < 0)
                        return 0; /* /proc can't tell; kill() said the pid exists */
                else
                        gone = st == 'Z' || st == 'X' ||
                               (s->pid_start_time && start != s->pid_start_time);
        }
        if (!gone)
                return 0;
        s->status = OCI_STATUS_STOPPED;
        s->pid = 0;
        s->pid_start_time = 0;
        return 1;
}

/* ---- JSON out ---- */

/* Length of the valid UTF-8 sequence at p (its code point in *cp), 0 when
 * invalid: overlong forms, surrogates and values past U+10FFFF included. */
static int utf8_decode(const unsigned char *p, uint32_t *cp)
{
        static const uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
        uint32_t c;
        int n;

        if (p[0] < 0x80) {
                *cp = p[0];
                return 1;
        }
        if ((p[0] & 0xe0) == 0xc0)
                n = 2;
        else if ((p[0] & 0xf0) == 0xe0)
                n = 3;
        else if ((p[0] & 0xf8) == 0xf0)
                n = 4;
        else
                return 0;
        c = p[0] & (0x7f >> n);
        /* A NUL ends the string early: it is no continuation byte. */
        for (int i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                c = c << 6 | (p[i] & 0x3f);
        }
        if (c < min_for_length[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *cp = c;
        return n;
}

static bool utf8_valid(const char *s)
{
        uint32_t cp;

        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                int n = utf8_decode(p, &cp);
                if (!n)
                        return false;
                p += n;
        }
        return true;
}

/*
 * A JSON string literal that libyaml reads back byte for byte when s is valid
 * UTF-8 (state_check makes sure of that for state.json). Besides what JSON
 * needs escaped, it escapes what YAML's reader refuses raw (DEL, C1 controls,
 * U+FFFE, U+FFFF), what a YAML quoted scalar would fold as a line break
 * (U+0085, U+2028, U+2029), and the BOM. That also keeps C1 controls such as
 * U+009B (CSI) from reaching a terminal showing `psrun state`. Bytes that
 * are not UTF-8 become \u00XX, as json_write_string does: valid JSON, lossy.
 */
static void write_json_string(FILE *f, const char *s)
{
        uint32_t cp;

        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                int n = utf8_decode(p, &cp);
                if (!n) {
                        n = 1;
                        cp = *p;
                        fprintf(f, "\\u%04x", (unsigned) cp);
                } else if (cp == '"' || cp == '\\') {
                        fprintf(f, "\\%c", (char) cp);
                } else if (cp == '\n') {
                        fputs("\\n", f);
                } else if (cp == '\t') {
                        fputs("\\t", f);
                } else if (cp == '\r') {
                        fputs("\\r", f);
                } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
                           cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff) {
                        fprintf(f, "\\u%04x", (unsigned) cp);
                } else {
                        fwrite(p, 1, (size_t) n, f);
                }
                p += n;
        }
        fputc('"', f);
}

static void write_key(FILE *f, const char *key, const char *value)
{
        fprintf(f, ",\n  \"%s\": ", key);
        write_json_string(f, value);
}

/* The public view (for_file: plus psrun's fields, NULLs omitted), in runc's
 * key order and indentation. */
static void write_state(FILE *f, const struct oci_state *s, bool for_file)
{
        const char *status = oci_status_to_string(s->status);

        fputs("{\n  \"ociVersion\": ", f);
        write_json_string(f, s->oci_version ? s->oci_version : "");
        write_key(f, "id", s->id ? s->id : "");
        fprintf(f, ",\n  \"pid\": %d", s->pid);
        write_key(f, "status", status ? status : "unknown");
        write_key(f, "bundle", s->bundle ? s->bundle : "");
        if (s->rootfs || !for_file)
                write_key(f, "rootfs", s->rootfs ? s->rootfs : "");
        write_key(f, "created", s->created ? s->created : "");
        if (s->owner || !for_file)
                write_key(f, "owner", s->owner ? s->owner : "");
        /* runc: `json:"annotations,omitempty"` */
        if (s->n_annotations > 0) {
                fputs(",\n  \"annotations\": {", f);
                for (size_t i = 0; i < s->n_annotations; i++) {
                        fputs(i ? ",\n    " : "\n    ", f);
                        write_json_string(f, s->annotations[i].key);
                        fputs(": ", f);
                        write_json_string(f, s->annotations[i].value);
                }
                fputs("\n  }", f);
        }
        if (for_file) {
                fprintf(f, ",\n  \"psrun\": {\n    \"pidStartTime\": %llu,\n    \"detached\": %s",
                        (unsigned long long) s->pid_start_time, s->detached ? "true" : "false");
                fputs(",\n    \"cgroupPaths\": [", f);
                for (size_t i = 0; s->cgroup_paths && s->cgroup_paths[i]; i++) {
                        fputs(i ? ", " : "", f);
                        write_json_string(f, s->cgroup_paths[i]);
                }
                fputs("]\n  }", f);
        }
        fputs("\n}\n", f);
}

int oci_state_print_json(const struct oci_state *s, FILE *f)
{
        write_state(f, s, false);
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

static int check_string(const char *what, const char *v, bool required, psrun_error *err)
{
        if (!v)
                return required ? psrun_error_set(err, EINVAL, "state: %s is missing", what) : 0;
        if (!utf8_valid(v))
                return psrun_error_set(err, EINVAL, "state: %s is not valid UTF-8", what);
        return 0;
}

/* What a state must be to be written; reading it back must give it exactly. */
static int state_check(const struct oci_state *s, psrun_error *err)
{
        const struct {
                const char *what, *value;
                bool required;
        } strings[] = {
                {"ociVersion", s->oci_version, true}, {"id", s->id, true},
                {"bundle", s->bundle, true},          {"rootfs", s->rootfs, false},
                {"created", s->created, true},        {"owner", s->owner, false},
        };
        char buf[SHOWN_MAX], what[SHOWN_MAX + 32];
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(strings); i++) {
                r = check_string(strings[i].what, strings[i].value, strings[i].required, err);
                if (r < 0)
                        return r;
        }
        if (!oci_status_to_string(s->status))
                return psrun_error_set(err, EINVAL, "state: status %d is out of range",
                                       (int) s->status);
        if (s->pid < 0)
                return psrun_error_set(err, EINVAL, "state: pid %d is negative", s->pid);
        for (size_t i = 0; i < s->n_annotations; i++) {
                const struct oci_annotation *a = &s->annotations[i];
                if (!a->key || !*a->key)
                        return psrun_error_set(err, EINVAL,
                                               "state: annotation keys must not be "
                                               "empty");
                snprintf(what, sizeof(what), "annotations key \"%s\"", shown(a->key, buf));
                r = check_string(what, a->key, true, err);
                if (r < 0)
                        return r;
                snprintf(what, sizeof(what), "annotations[\"%s\"]", buf);
                r = check_string(what, a->value, true, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; s->cgroup_paths && s->cgroup_paths[i]; i++) {
                snprintf(what, sizeof(what), "cgroup path %zu", i);
                r = check_string(what, s->cgroup_paths[i], true, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- JSON in ---- */

struct parse_ctx {
        const char *name;
        yaml_document_t *doc;
        psrun_error *err;
};

static int parse_fail(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int parse_fail(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                      const char *fmt, ...)
{
        char what[PSRUN_ERROR_MSG_MAX / 2];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return psrun_error_set(ctx->err, EBADMSG, "%s:%zu:%zu: %s%s%.*s", ctx->name,
                               node->start_mark.line + 1, node->start_mark.column + 1,
                               path ? path : "", path ? ": " : "", PSRUN_ERROR_MSG_MAX / 2, what);
}

static const char *scalar_text(const yaml_node_t *node)
{
        return (const char *) node->data.scalar.value;
}

static int node_string(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, char **ret)
{
        if (node->type != YAML_SCALAR_NODE ||
            (node->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE &&
             node->data.scalar.style != YAML_SINGLE_QUOTED_SCALAR_STYLE))
                return parse_fail(ctx, node, path, "expected a string");
        if (strlen(scalar_text(node)) != node->data.scalar.length)
                return parse_fail(ctx, node, path, "contains a NUL character");
        char *copy = strdup(scalar_text(node));
        if (!copy)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name);
        free(*ret);
        *ret = copy;
        return 0;
}

static int node_uint(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, uint64_t max,
                     uint64_t *ret)
{
        const char *s = scalar_text(node);
        unsigned long long v;
        char *end;

        if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
            s[0] < '0' || s[0] > '9')
                return parse_fail(ctx, node, path, "expected a non-negative integer");
        errno = 0;
        v = strtoull(s, &end, 10);
        if (*end)
                return parse_fail(ctx, node, path, "expected a non-negative integer");
        if (errno == ERANGE || v > max)
                return parse_fail(ctx, node, path, "out of range");
        *ret = v;
        return 0;
}

typedef int (*field_parse_fn)(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                              struct oci_state *s, void *field);

struct state_key {
        const char *name;
        field_parse_fn parse;
        size_t offset;
        bool required;
};

static int parse_string(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                        struct oci_state *s, void *field)
{
        return node_string(ctx, node, path, field);
}

static int parse_status(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                        struct oci_state *s, void *field)
{
        _cleanup_free_ char *text = NULL;
        char buf[SHOWN_MAX];
        int r = node_string(ctx, node, path, &text);

        if (r < 0)
                return r;
        r = oci_status_from_string(text);
        if (r < 0)
                return parse_fail(ctx, node, path,
                                  "\"%s\" is not one of creating, created, running, paused, "
                                  "stopped",
                                  shown(text, buf));
        *(enum oci_status *) field = (enum oci_status) r;
        return 0;
}

static int parse_pid(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                     struct oci_state *s, void *field)
{
        uint64_t v;
        int r = node_uint(ctx, node, path, INT_MAX, &v);

        if (r < 0)
                return r;
        *(int *) field = (int) v;
        return 0;
}

static int parse_u64(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                     struct oci_state *s, void *field)
{
        return node_uint(ctx, node, path, UINT64_MAX, field);
}

static int parse_bool(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                      struct oci_state *s, void *field)
{
        if (node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (streq(scalar_text(node), "true") || streq(scalar_text(node), "false"))) {
                *(bool *) field = streq(scalar_text(node), "true");
                return 0;
        }
        return parse_fail(ctx, node, path, "expected true or false");
}

static int parse_annotations(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                             struct oci_state *s, void *field)
{
        if (node->type != YAML_MAPPING_NODE)
                return parse_fail(ctx, node, path, "expected an object");
        for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
             pair < node->data.mapping.pairs.top; pair++) {
                yaml_node_t *k = yaml_document_get_node(ctx->doc, pair->key);
                yaml_node_t *v = yaml_document_get_node(ctx->doc, pair->value);
                _cleanup_free_ char *key = NULL;
                _cleanup_free_ char *value = NULL;
                char buf[SHOWN_MAX];
                int r = node_string(ctx, k, path, &key);

                if (r < 0)
                        return r;
                r = node_string(ctx, v, path, &value);
                if (r < 0)
                        return r;
                if (!*key)
                        return parse_fail(ctx, k, path, "empty key");
                r = oci_state_add_annotation(s, key, value, NULL);
                if (r == -EEXIST)
                        return parse_fail(ctx, k, path, "duplicate key \"%s\"", shown(key, buf));
                if (r < 0)
                        return psrun_error_errno(ctx->err, r, "%s", ctx->name);
        }
        return 0;
}

static int parse_cgroup_paths(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                              struct oci_state *s, void *field)
{
        if (node->type != YAML_SEQUENCE_NODE)
                return parse_fail(ctx, node, path, "expected a list");
        for (yaml_node_item_t *item = node->data.sequence.items.start;
             item < node->data.sequence.items.top; item++) {
                _cleanup_free_ char *text = NULL;
                int r = node_string(ctx, yaml_document_get_node(ctx->doc, *item), path, &text);

                if (r < 0)
                        return r;
                r = oci_state_add_cgroup_path(s, text, NULL);
                if (r < 0)
                        return psrun_error_errno(ctx->err, r, "%s", ctx->name);
        }
        return 0;
}

static int parse_private(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                         struct oci_state *s, void *field);

#define KEY(name, fn, member, required)                                                            \
        {                                                                                          \
                name, fn, offsetof(struct oci_state, member), required                             \
        }

static const struct state_key state_keys[] = {
        KEY("ociVersion", parse_string, oci_version, true),
        KEY("id", parse_string, id, true),
        KEY("pid", parse_pid, pid, true),
        KEY("status", parse_status, status, true),
        KEY("bundle", parse_string, bundle, true),
        KEY("rootfs", parse_string, rootfs, false),
        KEY("created", parse_string, created, true),
        KEY("owner", parse_string, owner, false),
        KEY("annotations", parse_annotations, annotations, false),
        /* psrun's own object; its parser fills the fields itself. */
        KEY("psrun", parse_private, pid_start_time, false),
};

static const struct state_key private_keys[] = {
        KEY("pidStartTime", parse_u64, pid_start_time, false),
        KEY("detached", parse_bool, detached, false),
        KEY("cgroupPaths", parse_cgroup_paths, cgroup_paths, false),
};

/* Unknown keys are skipped: a newer psrun may have added some. */
static int parse_object(struct parse_ctx *ctx, yaml_node_t *node, const char *prefix,
                        const struct state_key *keys, size_t n_keys, struct oci_state *s)
{
        bool seen[16] = {false};
        char path[64];
        int r;

        if (node->type != YAML_MAPPING_NODE)
                return parse_fail(ctx, node, prefix, "expected an object");
        for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
             pair < node->data.mapping.pairs.top; pair++) {
                yaml_node_t *k = yaml_document_get_node(ctx->doc, pair->key);
                const struct state_key *key = NULL;

                if (k->type != YAML_SCALAR_NODE)
                        return parse_fail(ctx, k, prefix, "expected a string as key");
                for (size_t i = 0; i < n_keys && !key; i++)
                        if (streq(keys[i].name, scalar_text(k)))
                                key = &keys[i];
                if (!key)
                        continue;
                snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
                         key->name);
                if (seen[key - keys])
                        return parse_fail(ctx, k, NULL, "duplicate key \"%s\"", path);
                seen[key - keys] = true;
                r = key->parse(ctx, yaml_document_get_node(ctx->doc, pair->value), path, s,
                               (char *) s + key->offset);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n_keys; i++)
                if (keys[i].required && !seen[i])
                        return parse_fail(ctx, node, prefix, "missing \"%s\"", keys[i].name);
        return 0;
}

static int parse_private(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                         struct oci_state *s, void *field)
{
        return parse_object(ctx, node, path, private_keys, ARRAY_SIZE(private_keys), s);
}

static int syntax_error(struct parse_ctx *ctx, const yaml_parser_t *parser, const char *buf,
                        size_t len)
{
        yaml_node_t at = {.start_mark = parser->problem_mark};

        if (parser->error == YAML_MEMORY_ERROR)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name);
        /* Reader errors (bad UTF-8, control characters) only know the offset. */
        if (parser->error == YAML_READER_ERROR) {
                at.start_mark = (yaml_mark_t){0};
                for (size_t i = 0; i < parser->problem_offset && i < len; i++) {
                        at.start_mark.column++;
                        if (buf[i] == '\n') {
                                at.start_mark.line++;
                                at.start_mark.column = 0;
                        }
                }
        }
        return parse_fail(ctx, &at, NULL, "corrupt: %s",
                          parser->problem ? parser->problem : "unreadable");
}

static int parse_document(struct parse_ctx *ctx, const char *buf, size_t len, struct oci_state *s)
{
        _cleanup_(yaml_parser_delete) yaml_parser_t parser = {0};
        _cleanup_(yaml_document_delete) yaml_document_t extra = {0};
        yaml_node_t *root, *extra_root;
        char bad[SHOWN_MAX];
        int r;

        if (!yaml_parser_initialize(&parser))
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name);
        yaml_parser_set_input_string(&parser, (const unsigned char *) buf, len);
        if (!yaml_parser_load(&parser, ctx->doc))
                return syntax_error(ctx, &parser, buf, len);
        root = yaml_document_get_root_node(ctx->doc);
        if (!root)
                return psrun_error_set(ctx->err, EBADMSG, "%s: corrupt: empty", ctx->name);
        if (!yaml_parser_load(&parser, &extra))
                return syntax_error(ctx, &parser, buf, len);
        extra_root = yaml_document_get_root_node(&extra);
        if (extra_root)
                return parse_fail(ctx, extra_root, NULL, "corrupt: more than one document");
        r = parse_object(ctx, root, NULL, state_keys, ARRAY_SIZE(state_keys), s);
        if (r < 0)
                return r;
        if (oci_id_validate(s->id, NULL) < 0)
                return psrun_error_set(ctx->err, EBADMSG, "%s: id \"%s\" is not a valid id",
                                       ctx->name, shown(s->id, bad));
        return 0;
}

int oci_state_parse(struct oci_state *s, const char *name, const char *buf, size_t len,
                    psrun_error *err)
{
        _cleanup_(yaml_document_delete) yaml_document_t doc = {0};
        psrun_error ignored;
        struct parse_ctx ctx = {.name = name ? name : STATE_FILE, .doc = &doc};
        int r;

        ctx.err = err ? err : &ignored;
        oci_state_free(s);
        if (len > STATE_MAX_SIZE)
                return psrun_error_set(ctx.err, EFBIG, "%s: larger than %d MiB", ctx.name,
                                       STATE_MAX_SIZE >> 20);
        r = parse_document(&ctx, buf ? buf : "", buf ? len : 0, s);
        if (r < 0)
                oci_state_free(s);
        return r;
}

/* ---- the root ---- */

/* mkdirat + openat; a directory we make gets exactly 0700 whatever the
 * umask. Returns the fd, or -errno. */
static int mkdir_open_at(int dir_fd, const char *name, int open_flags, bool *ret_created)
{
        int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | open_flags;
        bool created = mkdirat(dir_fd, name, 0700) == 0;

        if (!created && errno != EEXIST)
                return -errno;
        _cleanup_close_ int fd = openat(dir_fd, name, flags);
        /* A umask without u+r leaves a directory we can't open unprivileged. */
        if (fd < 0 && errno == EACCES && created &&
            fchmodat(dir_fd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
                fd = openat(dir_fd, name, flags);
        if (fd < 0)
                return -errno;
        if (created && fchmod(fd, 0700) < 0)
                return -errno;
        if (ret_created)
                *ret_created = created;
        return TAKE_FD(fd);
}

/* mkdir -p of an absolute directory path, following symlinks on the way (the
 * admin's /var/run -> /run is fine): returns its fd. */
static int open_parents(const char *path, psrun_error *err)
{
        char buf[SHOWN_MAX];
        _cleanup_close_ int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;

        if (fd < 0)
                return psrun_error_errno(err, errno, "root: open /");
        if (!copy)
                return psrun_error_errno(err, ENOMEM, "root");
        for (char *comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
                int next = mkdir_open_at(fd, comp, 0, NULL);
                if (next < 0)
                        return psrun_error_errno(err, next, "root \"%s\": create or open \"%s\"",
                                                 shown(path, buf), comp);
                close(fd);
                fd = next;
        }
        return TAKE_FD(fd);
}

static int root_check(int fd, const char *path, bool created, psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct stat st;

        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "root \"%s\"", shown(path, buf));
        /* Whoever owns or can write the root can swap container directories. */
        if (st.st_uid != geteuid())
                return psrun_error_set(err, EPERM,
                                       "root \"%s\": owned by uid %u, not by us (uid %u); "
                                       "refusing it",
                                       shown(path, buf), (unsigned) st.st_uid,
                                       (unsigned) geteuid());
        if (!created && (st.st_mode & 022))
                return psrun_error_set(err, EPERM,
                                       "root \"%s\": writable by group or others (mode %04o); "
                                       "refusing it",
                                       shown(path, buf), (unsigned) (st.st_mode & 07777));
        return 0;
}

int oci_root_open(const char *path, struct oci_root **ret, psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct stat st;
        bool created;

        if (!path)
                path = OCI_ROOT_DEFAULT;
        if (!*path)
                return psrun_error_set(err, EINVAL, "root: the path must not be empty");
        _cleanup_free_ char *abs = NULL;
        if (path[0] == '/') {
                abs = strdup(path);
        } else {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);
                if (!cwd)
                        return psrun_error_errno(err, errno, "root: getcwd");
                if (asprintf(&abs, "%s/%s", cwd, path) < 0)
                        abs = NULL;
        }
        if (!abs)
                return psrun_error_errno(err, ENOMEM, "root");
        for (size_t len = strlen(abs); len > 1 && abs[len - 1] == '/'; len--)
                abs[len - 1] = '\0';
        char *slash = strrchr(abs, '/');
        const char *base = slash + 1;
        if (!*base || streq(base, ".") || streq(base, ".."))
                return psrun_error_set(err, EINVAL,
                                       "root \"%s\": must name a directory (not /, . or ..)",
                                       shown(path, buf));

        *slash = '\0';
        _cleanup_close_ int parent_fd = open_parents(abs, err);
        *slash = '/';
        if (parent_fd < 0)
                return parent_fd;
        _cleanup_close_ int fd = mkdir_open_at(parent_fd, base, O_NOFOLLOW, &created);
        if (fd < 0) {
                if (fstatat(parent_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                        return psrun_error_set(err, ELOOP,
                                               "root \"%s\": is a symbolic link; refusing it",
                                               shown(abs, buf));
                return psrun_error_errno(err, fd, "root \"%s\"", shown(abs, buf));
        }
        int r = root_check(fd, abs, created, err);
        if (r < 0)
                return r;

        struct oci_root *root = calloc(1, sizeof(*root));
        if (!root)
                return psrun_error_errno(err, ENOMEM, "root");
        root->fd = TAKE_FD(fd);
        root->path = TAKE_PTR(abs);
        *ret = root;
        return 0;
}

void oci_root_close(struct oci_root *root)
{
        if (!root)
                return;
        closep(&root->fd);
        free(root->path);
        free(root);
}

int oci_root_fd(const struct oci_root *root)
{
        return root->fd;
}

const char *oci_root_path(const struct oci_root *root)
{
        return root->path;
}

static int cmp_strings(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A complete container directory: a real directory holding state.json. */
static bool is_container_dir(int root_fd, const char *name)
{
        struct stat st;
        _cleanup_close_ int fd =
                openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        return fd >= 0 && fstatat(fd, STATE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode);
}

int oci_container_list(struct oci_root *root, char ***ret_ids, psrun_error *err)
{
        _cleanup_strv_free_ char **ids = NULL;
        _cleanup_(closedirp) DIR *dir = NULL;
        size_t n = 0;
        struct dirent *de;
        int fd = openat(root->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return psrun_error_errno(err, errno, "list containers");
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return psrun_error_errno(err, errno, "list containers");
        }
        ids = calloc(1, sizeof(*ids));
        if (!ids)
                return psrun_error_errno(err, ENOMEM, "list containers");
        for (errno = 0; (de = readdir(dir)); errno = 0) {
                /* Temporary and half-deleted directories are not valid ids. */
                if (oci_id_validate(de->d_name, NULL) < 0 ||
                    !is_container_dir(root->fd, de->d_name))
                        continue;
                char **grown = reallocarray(ids, n + 2, sizeof(*ids));
                if (!grown)
                        return psrun_error_errno(err, ENOMEM, "list containers");
                ids = grown;
                ids[n + 1] = NULL;
                ids[n] = strdup(de->d_name);
                if (!ids[n])
                        return psrun_error_errno(err, ENOMEM, "list containers");
                n++;
        }
        if (errno)
                return psrun_error_errno(err, errno, "list containers");
        qsort(ids, n, sizeof(*ids), cmp_strings);
        *ret_ids = TAKE_PTR(ids);
        return (int) n;
}

/* ---- removing a directory's contents ---- */

static int remove_entries(int dir_fd, const char *const *keep, int depth, psrun_error *err);

static int remove_entry(int dir_fd, const char *name, int depth, psrun_error *err)
{
        char buf[SHOWN_MAX];
        struct statx stx;
        struct stat parent, st;
        int r;

        if (statx(dir_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) < 0)
                return errno == ENOENT
                               ? 0
                               : psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        /* unlinkat() never follows a symlink: it removes the link itself. */
        if (!S_ISDIR(stx.stx_mode)) {
                if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                        return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
                return 0;
        }
        /* Never empty a file system mounted here: it is not ours to delete. */
        if (stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)
                return psrun_error_set(err, EBUSY, "remove \"%s\": is a mount point",
                                       shown(name, buf));
        if (depth <= 0)
                return psrun_error_set(err, ELOOP, "remove \"%s\": nested too deeply",
                                       shown(name, buf));
        _cleanup_close_ int fd =
                openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        if (fstat(dir_fd, &parent) < 0 || fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        if (st.st_dev != parent.st_dev)
                return psrun_error_set(err, EBUSY, "remove \"%s\": is a mount point",
                                       shown(name, buf));
        r = remove_entries(fd, NULL, depth - 1, err);
        if (r < 0)
                return r;
        if (unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "remove \"%s\"", shown(name, buf));
        return 0;
}

static bool name_in(const char *name, const char *const *list)
{
        for (; list && *list; list++)
                if (streq(name, *list))
                        return true;
        return false;
}

/* Removes everything in dir_fd but the names in keep. */
static int remove_entries(int dir_fd, const char *const *keep, int depth, psrun_error *err)
{
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (fd < 0)
                return psrun_error_errno(err, errno, "open directory");
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return psrun_error_errno(err, errno, "open directory");
        }
        for (errno = 0; (de = readdir(dir)); errno = 0) {
                if (streq(de->d_name, ".") || streq(de->d_name, "..") || name_in(de->d_name, keep))
                        continue;
                r = remove_entry(dir_fd, de->d_name, depth, err);
                if (r < 0)
                        return r;
        }
        return errno ? psrun_error_errno(err, errno, "read directory") : 0;
}

/* ---- one container ---- */

static void container_free(struct oci_container *c)
{
        if (!c)
                return;
        closep(&c->lock_fd);
        closep(&c->dir_fd);
        free(c->id);
        free(c);
}

static void container_freep(struct oci_container **c)
{
        container_free(*c);
}

static struct oci_container *container_new(struct oci_root *root, const char *id)
{
        struct oci_container *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        *c = (struct oci_container){.root = root, .id = strdup(id), .dir_fd = -1, .lock_fd = -1};
        if (!c->id) {
                free(c);
                return NULL;
        }
        return c;
}

void oci_container_close(struct oci_container *c)
{
        container_free(c);
}

const char *oci_container_id(const struct oci_container *c)
{
        return c->id;
}

int oci_container_dir_fd(const struct oci_container *c)
{
        return c->dir_fd;
}

int oci_container_open(struct oci_root *root, const char *id, struct oci_container **ret,
                       psrun_error *err)
{
        _cleanup_(container_freep) struct oci_container *c = NULL;
        int r = oci_id_validate(id, err);

        if (r < 0)
                return r;
        c = container_new(root, id);
        if (!c)
                return psrun_error_errno(err, ENOMEM, "container \"%s\"", id);
        c->dir_fd = openat(root->fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->dir_fd < 0 && errno == ENOENT)
                return not_exist(err, id);
        if (c->dir_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open its directory", id);
        /* No lock file: a create or delete is half done; neither is a container. */
        c->lock_fd = openat(c->dir_fd, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (c->lock_fd < 0 && errno == ENOENT)
                return not_exist(err, id);
        if (c->lock_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open its lock", id);
        *ret = TAKE_PTR(c);
        return 0;
}

/* After we got the lock: is this still the directory named id? A delete
 * that ran while we waited unlinked the lock file and the directory. */
static int check_linked(struct oci_container *c, psrun_error *err)
{
        struct stat lock_st, dir_st, named;

        if (fstat(c->lock_fd, &lock_st) < 0 || fstat(c->dir_fd, &dir_st) < 0)
                return psrun_error_errno(err, errno, "container \"%s\"", c->id);
        if (lock_st.st_nlink == 0)
                return not_exist(err, c->id);
        if (fstatat(c->root->fd, c->id, &named, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? not_exist(err, c->id)
                                       : psrun_error_errno(err, errno, "container \"%s\"", c->id);
        if (named.st_dev != dir_st.st_dev || named.st_ino != dir_st.st_ino)
                return not_exist(err, c->id);
        return 0;
}

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int oci_container_lock_timeout(struct oci_container *c, enum oci_lock_mode mode, int timeout_ms,
                               psrun_error *err)
{
        int op = mode == OCI_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH;
        int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        int delay_ms = 1;
        int r;

        if (c->deleted)
                return not_exist(err, c->id);
        if (c->lock_op == op)
                return 0;
        if (c->lock_op)
                return psrun_error_set(err, EINVAL, "container \"%s\": already locked %s", c->id,
                                       c->lock_op == LOCK_EX ? "exclusively" : "shared");
        /* Polling with LOCK_NB bounds the wait; a blocking flock() could hang
         * forever behind a stuck psrun. */
        while (flock(c->lock_fd, op | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return psrun_error_errno(err, errno, "container \"%s\": lock", c->id);
                int64_t left = deadline - now_ms();
                if (left <= 0)
                        return psrun_error_set(err, EBUSY,
                                               "container \"%s\" is busy: another psrun process "
                                               "holds its lock (waited %g s)",
                                               c->id, timeout_ms > 0 ? timeout_ms / 1000.0 : 0.0);
                struct timespec ts = {.tv_nsec = (left < delay_ms ? left : delay_ms) * 1000000L};
                nanosleep(&ts, NULL);
                delay_ms = delay_ms < 32 ? delay_ms * 2 : 50;
        }
        c->lock_op = op;
        r = check_linked(c, err);
        if (r < 0) {
                c->deleted = r == -ENOENT;
                oci_container_unlock(c);
        }
        return r;
}

int oci_container_lock(struct oci_container *c, enum oci_lock_mode mode, psrun_error *err)
{
        return oci_container_lock_timeout(c, mode, OCI_LOCK_TIMEOUT_MS, err);
}

void oci_container_unlock(struct oci_container *c)
{
        if (c->lock_op && c->lock_fd >= 0)
                flock(c->lock_fd, LOCK_UN);
        c->lock_op = 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, buf, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                buf += n;
                len -= (size_t) n;
        }
        return 0;
}

static int serialize(const struct oci_state *s, char **ret, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return -ENOMEM;
        write_state(f, s, true);
        if (fclose(f) != 0 || !buf) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

/* state.json is replaced, never rewritten: readers see the old or the new
 * file whole, and a crash before the rename leaves the old one. */
static int state_write_at(int dir_fd, const char *id, const struct oci_state *s, psrun_error *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = state_check(s, err);

        if (r < 0)
                return psrun_error_prefix(err, "container \"%s\"", id);
        if (!streq(s->id, id))
                return psrun_error_set(err, EINVAL,
                                       "container \"%s\": the state is for id \"%s\" instead", id,
                                       s->id);
        r = serialize(s, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "container \"%s\": state", id);
        /* A leftover from a crash: we hold the exclusive lock, nobody else writes. */
        if (unlinkat(dir_fd, STATE_TMP_FILE, 0) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": remove %s", id,
                                         STATE_TMP_FILE);
        _cleanup_close_ int fd = openat(dir_fd, STATE_TMP_FILE,
                                        O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": create %s", id,
                                         STATE_TMP_FILE);
        r = write_all(fd, buf, len);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && renameat(dir_fd, STATE_TMP_FILE, dir_fd, STATE_FILE) < 0)
                r = -errno;
        if (r < 0) {
                unlinkat(dir_fd, STATE_TMP_FILE, 0);
                return psrun_error_errno(err, r, "container \"%s\": write %s", id, STATE_FILE);
        }
        /* Make the rename durable; the new state is in place either way. */
        (void) fsync(dir_fd);
        return 0;
}

int oci_state_write(struct oci_container *c, const struct oci_state *s, psrun_error *err)
{
        if (c->deleted)
                return not_exist(err, c->id);
        if (c->lock_op != LOCK_EX)
                return psrun_error_set(err, ENOLCK,
                                       "container \"%s\": state written without the exclusive "
                                       "lock",
                                       c->id);
        return state_write_at(c->dir_fd, c->id, s, err);
}

int oci_state_read(struct oci_container *c, struct oci_state *s, psrun_error *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        struct stat st;
        int r;

        oci_state_free(s);
        if (c->deleted)
                return not_exist(err, c->id);
        /* O_NONBLOCK: a FIFO planted in its place must not hang us. */
        _cleanup_close_ int fd =
                openat(c->dir_fd, STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT)
                return not_exist(err, c->id);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open %s", c->id,
                                         STATE_FILE);
        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "container \"%s\": %s", c->id, STATE_FILE);
        if (!S_ISREG(st.st_mode))
                return psrun_error_set(err, EBADMSG, "container \"%s\": %s is not a regular file",
                                       c->id, STATE_FILE);
        r = read_all(fd, STATE_MAX_SIZE, &buf, &len);
        if (r == -EFBIG)
                return psrun_error_set(err, EFBIG, "container \"%s\": %s: larger than %d MiB",
                                       c->id, STATE_FILE, STATE_MAX_SIZE >> 20);
        if (r < 0)
                return psrun_error_errno(err, r, "container \"%s\": read %s", c->id, STATE_FILE);
        r = oci_state_parse(s, STATE_FILE, buf, len, err);
        if (r < 0)
                return psrun_error_prefix(err, "container \"%s\"", c->id);
        if (!streq(s->id, c->id)) {
                char bad[SHOWN_MAX];
                r = psrun_error_set(err, EBADMSG, "container \"%s\": %s is for id \"%s\" instead",
                                    c->id, STATE_FILE, shown(s->id, bad));
                oci_state_free(s);
                return r;
        }
        return 0;
}

/* A name that no valid id can take ('~'), so it never collides with one. */
static int make_temp_dir(int root_fd, char *name, size_t size, psrun_error *err)
{
        for (int attempt = 0; attempt < 16; attempt++) {
                unsigned long long rnd;
                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = (unsigned long long) now_ms() * 2654435761u ^ (unsigned) getpid() ^
                              (unsigned) attempt;
                snprintf(name, size, ".new~%016llx", rnd);
                if (mkdirat(root_fd, name, 0700) == 0)
                        return 0;
                if (errno != EEXIST)
                        return psrun_error_errno(err, errno, "create a directory in the root");
        }
        return psrun_error_set(err, EEXIST, "create a directory in the root: all names taken");
}

static int remove_temp_dir(int root_fd, const char *name)
{
        _cleanup_close_ int fd =
                openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd >= 0)
                remove_entries(fd, NULL, REMOVE_MAX_DEPTH, NULL);
        return unlinkat(root_fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* Fills the temporary directory, then renames it to id. */
static int build_and_publish(struct oci_container *c, const char *tmp,
                             const struct oci_state *initial, psrun_error *err)
{
        int root_fd = c->root->fd;
        int r;

        c->dir_fd = openat(root_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->dir_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open its directory", c->id);
        c->lock_fd = openat(c->dir_fd, LOCK_FILE,
                            O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (c->lock_fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": create its lock", c->id);
        /* Nobody knows the directory yet: this cannot wait. */
        if (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0)
                return psrun_error_errno(err, errno, "container \"%s\": lock", c->id);
        c->lock_op = LOCK_EX;
        r = state_write_at(c->dir_fd, c->id, initial, err);
        if (r < 0)
                return r;
        if (renameat2(root_fd, tmp, root_fd, c->id, RENAME_NOREPLACE) < 0) {
                if (errno == EEXIST)
                        return psrun_error_set(err, EEXIST, "container \"%s\" already exists",
                                               c->id);
                if (errno == EINVAL)
                        return psrun_error_errno(err, errno,
                                                 "container \"%s\": the root's file system "
                                                 "lacks rename with RENAME_NOREPLACE",
                                                 c->id);
                return psrun_error_errno(err, errno, "container \"%s\": rename into place", c->id);
        }
        (void) fsync(root_fd);
        return 0;
}

int oci_container_create(struct oci_root *root, const char *id, const struct oci_state *initial,
                         struct oci_container **ret, psrun_error *err)
{
        struct oci_container *c;
        char tmp[32];
        int r = oci_id_validate(id, err);

        if (r < 0)
                return r;
        if (!initial)
                return psrun_error_set(err, EINVAL, "container \"%s\": no state given", id);
        c = container_new(root, id);
        if (!c)
                return psrun_error_errno(err, ENOMEM, "container \"%s\"", id);
        r = make_temp_dir(root->fd, tmp, sizeof(tmp), err);
        if (r < 0) {
                container_free(c);
                return psrun_error_prefix(err, "container \"%s\"", id);
        }
        r = build_and_publish(c, tmp, initial, err);
        if (r < 0) {
                container_free(c);
                remove_temp_dir(root->fd, tmp);
                return r;
        }
        *ret = c;
        return 0;
}

int oci_container_delete(struct oci_container *c, psrun_error *err)
{
        static const char *const keep[] = {STATE_FILE, LOCK_FILE, NULL};
        int r;

        if (c->deleted)
                return not_exist(err, c->id);
        if (c->lock_op == LOCK_SH)
                return psrun_error_set(err, ENOLCK,
                                       "container \"%s\": delete needs the exclusive lock, not "
                                       "the shared one",
                                       c->id);
        r = c->lock_op ? check_linked(c, err) : oci_container_lock(c, OCI_LOCK_EXCLUSIVE, err);
        if (r < 0)
                return r;
        r = remove_entries(c->dir_fd, keep, REMOVE_MAX_DEPTH, err);
        if (r < 0)
                return psrun_error_prefix(err, "container \"%s\": delete", c->id);
        /* Without state.json the container is gone; a failure before this
         * point leaves it whole enough to delete again. */
        if (unlinkat(c->dir_fd, STATE_FILE, 0) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": delete %s", c->id,
                                         STATE_FILE);
        c->deleted = true;
        if (unlinkat(c->dir_fd, LOCK_FILE, 0) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "container \"%s\": delete %s", c->id,
                                         LOCK_FILE);
        if (unlinkat(c->root->fd, c->id, AT_REMOVEDIR) < 0)
                return psrun_error_errno(err, errno, "container \"%s\": remove its directory",
                                         c->id);
        (void) fsync(c->root->fd);
        oci_container_unlock(c);
        return 0;
}

/* ---- the handshake FIFO ---- */

static int check_fifo_name(const struct oci_container *c, const char *name, psrun_error *err)
{
        char buf[SHOWN_MAX];

        if (!name || !*name || strchr(name, '/') || streq(name, ".") || streq(name, "..") ||
            strlen(name) > NAME_MAX || streq(name, STATE_FILE) || streq(name, STATE_TMP_FILE) ||
            streq(name, LOCK_FILE))
                return psrun_error_set(err, EINVAL, "container \"%s\": \"%s\" is not a FIFO name",
                                       c->id, shown(name ? name : "", buf));
        return 0;
}

int oci_container_make_fifo(struct oci_container *c, const char *name, psrun_error *err)
{
        int r = check_fifo_name(c, name, err);

        if (r < 0)
                return r;
        if (c->deleted)
                return not_exist(err, c->id);
        if (mkfifoat(c->dir_fd, name, 0600) < 0) {
                if (errno == EEXIST)
                        return psrun_error_set(err, EEXIST, "container \"%s\": %s already exists",
                                               c->id, name);
                return psrun_error_errno(err, errno, "container \"%s\": create %s", c->id, name);
        }
        /* The umask may have taken bits; the directory is ours and 0700, so
         * the name still refers to the FIFO we just made. */
        if (fchmodat(c->dir_fd, name, 0600, 0) < 0) {
                r = psrun_error_errno(err, errno, "container \"%s\": chmod %s", c->id, name);
                unlinkat(c->dir_fd, name, 0);
                return r;
        }
        return 0;
}

int oci_container_open_fifo(struct oci_container *c, const char *name, int flags, psrun_error *err)
{
        struct stat st;
        int r = check_fifo_name(c, name, err);

        if (r < 0)
                return r;
        _cleanup_close_ int fd = openat(c->dir_fd, name, flags | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT)
                return psrun_error_set(err, ENOENT, "container \"%s\": %s does not exist", c->id,
                                       name);
        if (fd < 0)
                return psrun_error_errno(err, errno, "container \"%s\": open %s", c->id, name);
        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "container \"%s\": %s", c->id, name);
        if (!S_ISFIFO(st.st_mode))
                return psrun_error_set(err, EINVAL, "container \"%s\": %s is not a FIFO", c->id,
                                       name);
        return TAKE_FD(fd);
}

int oci_container_fifo_path(const struct oci_container *c, const char *name, char *buf, size_t size)
{
        int n;

        if (check_fifo_name(c, name, NULL) < 0)
                return -EINVAL;
        n = snprintf(buf, size, "%s/%s/%s", c->root->path, c->id, name);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}
