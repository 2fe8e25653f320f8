/* SPDX-License-Identifier: MIT */
/*
 * The OCI state record: status names, the record's fields, state.json as
 * written (escaped so it always reads back) and as read (strict, table
 * driven), and the public view printed by `state`.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "common/cleanup.h"
#include "runtime/oci/state-internal.h"

/* ---- status ---- */

static const char *const status_names[_OCI_STATUS_MAX] = {
        [OCI_STATUS_CREATING] = "creating", [OCI_STATUS_CREATED] = "created",
        [OCI_STATUS_RUNNING] = "running",   [OCI_STATUS_PAUSED] = "paused",
        [OCI_STATUS_STOPPED] = "stopped",
};

const char *oci_status_to_string(enum oci_status s)
{
        return enum_to_string(status_names, _OCI_STATUS_MAX, (int) s);
}

int oci_status_from_string(const char *s)
{
        return enum_from_string(status_names, _OCI_STATUS_MAX, s);
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

/* Appends without looking for duplicates: the array doubles at every power
 * of two (its capacity is implicit in the count), so n appends cost O(n). */
int oci_state_append_annotation(struct oci_state *s, const char *key, const char *value,
                                psrun_error *err)
{
        size_t n = s->n_annotations;

        if (n == 0 || (n & (n - 1)) == 0) {
                struct oci_annotation *grown =
                        reallocarray(s->annotations, n ? 2 * n : 1, sizeof(*grown));
                if (!grown)
                        return psrun_error_errno(err, ENOMEM, "annotations");
                s->annotations = grown;
        }
        _cleanup_free_ char *k = strdup(key);
        _cleanup_free_ char *v = strdup(value);
        if (!k || !v)
                return psrun_error_errno(err, ENOMEM, "annotations");
        s->annotations[s->n_annotations++] = (struct oci_annotation){TAKE_PTR(k), TAKE_PTR(v)};
        return 0;
}

int oci_state_add_annotation(struct oci_state *s, const char *key, const char *value,
                             psrun_error *err)
{
        char buf[SHOWN_MAX];

        for (size_t i = 0; i < s->n_annotations; i++)
                if (streq(s->annotations[i].key, key))
                        return psrun_error_set(err, EEXIST, "annotation \"%s\" given twice",
                                               shown(key, buf));
        return oci_state_append_annotation(s, key, value, err);
}

static int compare_annotation_index(const void *a, const void *b, void *arg)
{
        const struct oci_annotation *v = arg;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        int c = strcmp(v[x].key, v[y].key);

        if (c)
                return c;
        return x < y ? -1 : x > y;
}

ssize_t oci_state_find_duplicate_annotation(const struct oci_state *s)
{
        size_t n = s->n_annotations;

        if (n < 2)
                return -1;
        _cleanup_free_ size_t *order = calloc(n, sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        /* Sorting, not comparing every pair: 10^5 annotations took 13 s. */
        qsort_r(order, n, sizeof(*order), compare_annotation_index, s->annotations);
        for (size_t i = 1; i < n; i++)
                if (streq(s->annotations[order[i - 1]].key, s->annotations[order[i]].key))
                        return (ssize_t) order[i];
        return -1;
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
                if (s->no_new_keyring)
                        fputs(",\n    \"noNewKeyring\": true", f);
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
int oci_state_check(const struct oci_state *s, psrun_error *err)
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
        char buf[SHOWN_MAX];

        if (node->type != YAML_MAPPING_NODE)
                return parse_fail(ctx, node, path, "expected an object");
        for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
             pair < node->data.mapping.pairs.top; pair++) {
                yaml_node_t *k = yaml_document_get_node(ctx->doc, pair->key);
                yaml_node_t *v = yaml_document_get_node(ctx->doc, pair->value);
                _cleanup_free_ char *key = NULL;
                _cleanup_free_ char *value = NULL;
                int r = node_string(ctx, k, path, &key);

                if (r < 0)
                        return r;
                r = node_string(ctx, v, path, &value);
                if (r < 0)
                        return r;
                if (!*key)
                        return parse_fail(ctx, k, path, "empty key");
                r = oci_state_append_annotation(s, key, value, NULL);
                if (r < 0)
                        return psrun_error_errno(ctx->err, r, "%s", ctx->name);
        }
        ssize_t dup = oci_state_find_duplicate_annotation(s);
        if (dup == -ENOMEM)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name);
        if (dup >= 0) {
                yaml_node_t *k =
                        yaml_document_get_node(ctx->doc, node->data.mapping.pairs.start[dup].key);
                return parse_fail(ctx, k, path, "duplicate key \"%s\"",
                                  shown(s->annotations[dup].key, buf));
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
        KEY("noNewKeyring", parse_bool, no_new_keyring, false),
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

int oci_state_serialize(const struct oci_state *s, char **ret, size_t *ret_len)
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
