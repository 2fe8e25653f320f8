/* SPDX-License-Identifier: MIT */
/*
 * From config.json text to the field tables, in two passes:
 *
 *  1. libyaml's event stream is checked to be JSON: no anchors, aliases, tags,
 *     block style or unquoted words; nesting and size bounded. This runs
 *     before any tree is built, so hostile input costs one bounded scan.
 *  2. The document tree (yaml_parser_load) is walked through the tables of
 *     oci-config.c and oci-config-linux.c, and freed through the same tables.
 *
 * The walk recurses only along the tables, whose depth is fixed; values of
 * fields psrun does not know are never visited.
 */
#include "runtime/oci/config-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/names.h"
#include "policy/policy.h"
#include "runtime/oci/config.h"

#define SHOWN_MAX  OCI_SHOWN_MAX
#define NAME_SHOWN OCI_NAME_SHOWN

/* ---- messages ---- */

static size_t mark_line(const yaml_mark_t *mark)
{
        return mark ? mark->line + 1 : 1;
}

static size_t mark_column(const yaml_mark_t *mark)
{
        return mark ? mark->column + 1 : 1;
}

int oci_fail(struct oci_walk *w, const yaml_mark_t *mark, const char *path, int errnum,
             const char *fmt, ...)
{
        char what[PSRUN_ERROR_MSG_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return psrun_error_set(w->err, errnum, "%.*s:%zu:%zu: %s%s%s", NAME_SHOWN, w->name,
                               mark_line(mark), mark_column(mark), path ? path : "",
                               path ? ": " : "", what);
}

int oci_fail_prefix(struct oci_walk *w, const yaml_mark_t *mark, const char *path)
{
        return psrun_error_prefix(w->err, "%.*s:%zu:%zu%s%s", NAME_SHOWN, w->name, mark_line(mark),
                                  mark_column(mark), path ? ": " : "", path ? path : "");
}

static const char *shown(const char *s, char *buf)
{
        return policy_escape(s, buf, SHOWN_MAX);
}

/* ---- pass 1: is it JSON? ---- */

struct json_check {
        struct oci_walk *w;
        size_t depth; /* levels[1..depth] are open collections */
        size_t nodes;
        size_t documents;
        struct {
                bool mapping;
                bool expect_key;
        } levels[OCI_CONFIG_MAX_DEPTH + 1];
};

/* JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s)
{
        size_t n;

        s += *s == '-';
        if (*s == '0')
                s++;
        else if (*s >= '1' && *s <= '9')
                s += strspn(s, "0123456789");
        else
                return false;
        if (*s == '.') {
                n = strspn(s + 1, "0123456789");
                if (n == 0)
                        return false;
                s += 1 + n;
        }
        if (*s == 'e' || *s == 'E') {
                s++;
                s += *s == '+' || *s == '-';
                n = strspn(s, "0123456789");
                if (n == 0)
                        return false;
                s += n;
        }
        return *s == '\0';
}

static bool is_json_literal(const char *s)
{
        return streq(s, "null") || streq(s, "true") || streq(s, "false") || is_json_number(s);
}

/* Counts a value and, inside an object, checks that a key is a string. */
static int json_value(struct json_check *c, const yaml_mark_t *mark, bool is_string)
{
        char limit[32];

        if (++c->nodes > OCI_CONFIG_MAX_NODES) {
                format_uint64(OCI_CONFIG_MAX_NODES, limit, sizeof(limit));
                return oci_fail(c->w, mark, NULL, E2BIG, "too many values (more than %s)", limit);
        }
        if (c->depth == 0 || !c->levels[c->depth].mapping)
                return 0;
        if (c->levels[c->depth].expect_key && !is_string)
                return oci_fail(c->w, mark, NULL, EINVAL, "not JSON: object keys must be strings");
        c->levels[c->depth].expect_key = !c->levels[c->depth].expect_key;
        return 0;
}

static int json_node_props(struct json_check *c, const yaml_mark_t *mark, const yaml_char_t *anchor,
                           const yaml_char_t *tag)
{
        char buf[SHOWN_MAX];

        if (anchor)
                return oci_fail(c->w, mark, NULL, EINVAL, "not JSON: YAML anchor \"&%s\"",
                                shown((const char *) anchor, buf));
        if (tag)
                return oci_fail(c->w, mark, NULL, EINVAL, "not JSON: YAML tag \"%s\"",
                                shown((const char *) tag, buf));
        return 0;
}

static int json_scalar(struct json_check *c, const yaml_event_t *e)
{
        const char *value = (const char *) e->data.scalar.value;
        bool quoted = e->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        char buf[SHOWN_MAX];
        int r = json_node_props(c, &e->start_mark, e->data.scalar.anchor, e->data.scalar.tag);

        if (r < 0)
                return r;
        if (!quoted && e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return oci_fail(c->w, &e->start_mark, NULL, EINVAL,
                                "not JSON: strings must be in double quotes");
        if (!quoted && e->data.scalar.length == 0)
                return oci_fail(c->w, &e->start_mark, NULL, EINVAL, "not JSON: a value is missing");
        if (!quoted && !is_json_literal(value))
                return oci_fail(c->w, &e->start_mark, NULL, EINVAL,
                                "not JSON: \"%s\" is not a number, true, false or null (strings "
                                "must be in double quotes)",
                                shown(value, buf));
        return json_value(c, &e->start_mark, quoted);
}

static int json_open(struct json_check *c, const yaml_event_t *e, bool mapping)
{
        bool flow = mapping ? e->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                            : e->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
        int r = mapping ? json_node_props(c, &e->start_mark, e->data.mapping_start.anchor,
                                          e->data.mapping_start.tag)
                        : json_node_props(c, &e->start_mark, e->data.sequence_start.anchor,
                                          e->data.sequence_start.tag);

        if (r < 0)
                return r;
        if (!flow)
                return oci_fail(c->w, &e->start_mark, NULL, EINVAL, "not JSON: YAML block-style %s",
                                mapping ? "mapping" : "list");
        r = json_value(c, &e->start_mark, false);
        if (r < 0)
                return r;
        if (c->depth == OCI_CONFIG_MAX_DEPTH)
                return oci_fail(c->w, &e->start_mark, NULL, EINVAL,
                                "nested too deeply (more than %d levels)", OCI_CONFIG_MAX_DEPTH);
        c->depth++;
        c->levels[c->depth].mapping = mapping;
        c->levels[c->depth].expect_key = mapping;
        return 0;
}

static int json_event(struct json_check *c, const yaml_event_t *e)
{
        char buf[SHOWN_MAX];

        switch (e->type) {
        case YAML_DOCUMENT_START_EVENT:
                if (++c->documents > 1)
                        return oci_fail(c->w, &e->start_mark, NULL, EINVAL,
                                        "more than one JSON document");
                if (!e->data.document_start.implicit)
                        return oci_fail(c->w, &e->start_mark, NULL, EINVAL,
                                        "not JSON: YAML document start (\"---\" or a directive)");
                return 0;
        case YAML_DOCUMENT_END_EVENT:
                if (!e->data.document_end.implicit)
                        return oci_fail(c->w, &e->start_mark, NULL, EINVAL,
                                        "not JSON: YAML document end (\"...\")");
                return 0;
        case YAML_ALIAS_EVENT:
                return oci_fail(c->w, &e->start_mark, NULL, EINVAL, "not JSON: YAML alias \"*%s\"",
                                shown((const char *) e->data.alias.anchor, buf));
        case YAML_SCALAR_EVENT:
                return json_scalar(c, e);
        case YAML_SEQUENCE_START_EVENT:
                return json_open(c, e, false);
        case YAML_MAPPING_START_EVENT:
                return json_open(c, e, true);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                c->depth--;
                return 0;
        default:
                return 0;
        }
}

/* Where a byte offset is, for errors that only know the offset. */
static yaml_mark_t mark_at(const char *buf, size_t len, size_t offset)
{
        yaml_mark_t mark = {.index = offset};

        for (size_t i = 0; i < offset && i < len; i++) {
                mark.column++;
                if (buf[i] == '\n') {
                        mark.line++;
                        mark.column = 0;
                }
        }
        return mark;
}

static int syntax_error(struct oci_walk *w, const yaml_parser_t *parser, const char *buf,
                        size_t len)
{
        yaml_mark_t mark = parser->problem_mark;

        if (parser->error == YAML_MEMORY_ERROR)
                return psrun_error_errno(w->err, ENOMEM, "%.*s", NAME_SHOWN, w->name);
        if (parser->error == YAML_READER_ERROR)
                mark = mark_at(buf, len, parser->problem_offset);
        return oci_fail(w, &mark, NULL, EINVAL, "JSON syntax error: %s",
                        parser->problem ? parser->problem : "unknown");
}

static int check_json(struct oci_walk *w, const char *buf, size_t len)
{
        _cleanup_(yaml_parser_delete) yaml_parser_t parser = {0};
        struct json_check c = {.w = w};
        const char *nul = memchr(buf, '\0', len);
        bool done = false;

        /* libyaml would call it a control character; say what it is. */
        if (nul) {
                yaml_mark_t mark = mark_at(buf, len, (size_t) (nul - buf));
                return oci_fail(w, &mark, NULL, EINVAL, "not JSON: NUL byte in the text");
        }
        if (!yaml_parser_initialize(&parser))
                return psrun_error_errno(w->err, ENOMEM, "%.*s", NAME_SHOWN, w->name);
        yaml_parser_set_input_string(&parser, (const unsigned char *) buf, len);
        while (!done) {
                _cleanup_(yaml_event_delete) yaml_event_t event = {0};
                int r;

                if (!yaml_parser_parse(&parser, &event))
                        return syntax_error(w, &parser, buf, len);
                done = event.type == YAML_STREAM_END_EVENT;
                r = json_event(&c, &event);
                if (r < 0)
                        return r;
        }
        if (c.documents == 0)
                return oci_fail(w, NULL, NULL, EINVAL, "empty, expected a JSON object");
        return 0;
}

/* ---- pass 2: nodes ---- */

enum json_kind {
        JSON_NULL,
        JSON_BOOL,
        JSON_NUMBER,
        JSON_STRING,
        JSON_OBJECT,
        JSON_ARRAY,
};

static const char *const json_kind_names[] = {
        [JSON_NULL] = "null",       [JSON_BOOL] = "a boolean",   [JSON_NUMBER] = "a number",
        [JSON_STRING] = "a string", [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
};

/* Pass 1 left only JSON: a plain scalar is null, true, false or a number. */
static enum json_kind json_kind(const yaml_node_t *node)
{
        const char *s;

        if (node->type == YAML_MAPPING_NODE)
                return JSON_OBJECT;
        if (node->type == YAML_SEQUENCE_NODE)
                return JSON_ARRAY;
        if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return JSON_STRING;
        s = (const char *) node->data.scalar.value;
        if (streq(s, "null"))
                return JSON_NULL;
        if (streq(s, "true") || streq(s, "false"))
                return JSON_BOOL;
        return JSON_NUMBER;
}

static const char *kind_name(const yaml_node_t *node)
{
        return json_kind_names[json_kind(node)];
}

static int expected(struct oci_walk *w, const yaml_node_t *node, const char *path, const char *what)
{
        return oci_fail(w, &node->start_mark, path, EINVAL, "expected %s, got %s", what,
                        kind_name(node));
}

static int node_string(struct oci_walk *w, const yaml_node_t *node, const char *path,
                       const char **ret)
{
        const char *s = (const char *) node->data.scalar.value;

        if (json_kind(node) != JSON_STRING)
                return expected(w, node, path, "a string");
        if (strlen(s) != node->data.scalar.length)
                return oci_fail(w, &node->start_mark, path, EINVAL,
                                "must not contain NUL characters");
        *ret = s;
        return 0;
}

static size_t sequence_length(const yaml_node_t *node)
{
        return (size_t) (node->data.sequence.items.top - node->data.sequence.items.start);
}

static size_t mapping_length(const yaml_node_t *node)
{
        return (size_t) (node->data.mapping.pairs.top - node->data.mapping.pairs.start);
}

yaml_node_t *oci_item(struct oci_walk *w, yaml_node_t *sequence, size_t i)
{
        if (!sequence || sequence->type != YAML_SEQUENCE_NODE || i >= sequence_length(sequence))
                return NULL;
        return yaml_document_get_node(w->doc, sequence->data.sequence.items.start[i]);
}

/* The key text of pair i when it is a string without NULs, else NULL. */
static const char *pair_key(struct oci_walk *w, yaml_node_t *mapping, size_t i,
                            yaml_node_t **ret_node)
{
        yaml_node_t *key = yaml_document_get_node(w->doc, mapping->data.mapping.pairs.start[i].key);

        *ret_node = key;
        if (!key || json_kind(key) != JSON_STRING ||
            strlen((const char *) key->data.scalar.value) != key->data.scalar.length)
                return NULL;
        return (const char *) key->data.scalar.value;
}

static yaml_node_t *pair_value(struct oci_walk *w, yaml_node_t *mapping, size_t i)
{
        return yaml_document_get_node(w->doc, mapping->data.mapping.pairs.start[i].value);
}

yaml_node_t *oci_child(struct oci_walk *w, yaml_node_t *mapping, const char *key)
{
        yaml_node_t *key_node, *value = NULL;

        if (!mapping || mapping->type != YAML_MAPPING_NODE)
                return NULL;
        for (size_t i = 0; i < mapping_length(mapping); i++) {
                const char *name = pair_key(w, mapping, i, &key_node);
                if (name && streq(name, key))
                        value = pair_value(w, mapping, i);
        }
        return value && json_kind(value) != JSON_NULL ? value : NULL;
}

const yaml_mark_t *oci_mark_of(struct oci_walk *w, yaml_node_t *mapping, const char *key)
{
        yaml_node_t *value = oci_child(w, mapping, key);

        return value ? &value->start_mark : &mapping->start_mark;
}

void oci_join_path(char *buf, const char *path, const char *name)
{
        snprintf(buf, OCI_PATH_MAX, "%s%s%s", path, *path ? "." : "", name);
}

static void index_path(char *buf, const char *path, size_t i)
{
        snprintf(buf, OCI_PATH_MAX, "%s[%zu]", path, i);
}

/* ---- the walker ---- */

#define FIELD(base, f, type) ((type *) (void *) ((char *) (base) + (f)->offset))
#define COUNT(base, f)       ((size_t *) (void *) ((char *) (base) + (f)->count_offset))

static int parse_value(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                       const char *path, void *base);

static int parse_string(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                        const char *path, void *base)
{
        char **field = FIELD(base, f, char *);
        const char *s;
        int r = node_string(w, node, path, &s);

        if (r < 0)
                return r;
        if (f->check && f->check(s, w->err) < 0)
                return oci_fail_prefix(w, &node->start_mark, path);
        free(*field);
        *field = strdup(s);
        return *field ? 0 : psrun_error_errno(w->err, ENOMEM, "%s", path);
}

static int parse_bool(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                      const char *path, void *base)
{
        bool v;

        if (json_kind(node) != JSON_BOOL)
                return expected(w, node, path, "a boolean");
        v = streq((const char *) node->data.scalar.value, "true");
        if (f->kind == OCI_F_OPT_BOOL)
                *FIELD(base, f, struct oci_opt_bool) =
                        (struct oci_opt_bool){.set = true, .value = v};
        else
                *FIELD(base, f, bool) = v;
        return 0;
}

static void store_int(const struct oci_field *f, void *base, bool negative, uint64_t magnitude)
{
        int64_t v = negative ? (int64_t) (0 - magnitude) : (int64_t) magnitude;

        switch (f->store) {
        case OCI_I_U16:
                *FIELD(base, f, uint16_t) = (uint16_t) magnitude;
                break;
        case OCI_I_U32:
                *FIELD(base, f, uint32_t) = (uint32_t) magnitude;
                break;
        case OCI_I_U64:
                *FIELD(base, f, uint64_t) = magnitude;
                break;
        case OCI_I_I64:
                *FIELD(base, f, int64_t) = v;
                break;
        case OCI_I_OPT_I64:
                *FIELD(base, f, struct oci_opt_i64) = (struct oci_opt_i64){.set = true, .value = v};
                break;
        case OCI_I_OPT_U64:
                *FIELD(base, f, struct oci_opt_u64) =
                        (struct oci_opt_u64){.set = true, .value = magnitude};
                break;
        }
}

static int parse_int(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                     const char *path, void *base)
{
        const char *s = (const char *) node->data.scalar.value;
        const char *digits = s + (s[0] == '-');
        bool negative = s[0] == '-', in_range = true;
        uint64_t magnitude = 0;
        char buf[SHOWN_MAX];

        if (json_kind(node) != JSON_NUMBER)
                return expected(w, node, path, "an integer");
        if (strpbrk(s, ".eE"))
                return oci_fail(w, &node->start_mark, path, EINVAL, "expected an integer, got %s",
                                shown(s, buf));
        for (const char *d = digits; *d && in_range; d++) {
                unsigned digit = (unsigned) (*d - '0');
                in_range = magnitude <= (UINT64_MAX - digit) / 10;
                magnitude = magnitude * 10 + digit;
        }
        if (negative && magnitude > 0)
                /* -magnitude >= min, written so that INT64_MIN does not overflow. */
                in_range = in_range && f->min < 0 && magnitude <= (uint64_t) - (f->min + 1) + 1;
        else
                in_range = in_range && magnitude <= f->max &&
                           (f->min <= 0 || magnitude >= (uint64_t) f->min);
        if (!in_range)
                return oci_fail(w, &node->start_mark, path, ERANGE,
                                "%s is out of range (%" PRId64 "..%" PRIu64 ")", shown(s, buf),
                                f->min, f->max);
        store_int(f, base, negative, magnitude);
        return 0;
}

static void join_names(const struct oci_field *f, char *buf, size_t size)
{
        size_t o = 0;
        const char *name;

        buf[0] = '\0';
        for (int i = 0; (name = f->name_at(i)) && o < size; i++)
                o += (size_t) snprintf(buf + o, size - o, "%s%s", i ? ", " : "", name);
}

static int parse_enum(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                      const char *path, void *base)
{
        char names[400], buf[SHOWN_MAX];
        const char *s;
        int r = node_string(w, node, path, &s);

        if (r < 0)
                return r;
        r = f->from_string(s);
        if (r < 0) {
                join_names(f, names, sizeof(names));
                return oci_fail(w, &node->start_mark, path, EINVAL, "\"%s\" is not one of %s",
                                shown(s, buf), names);
        }
        *FIELD(base, f, int) = r;
        return 0;
}

static int parse_strv(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                      const char *path, void *base)
{
        char item_path[OCI_PATH_MAX];
        char ***field = FIELD(base, f, char **);
        size_t n;

        if (node->type != YAML_SEQUENCE_NODE)
                return expected(w, node, path, "an array of strings");
        n = sequence_length(node);
        strv_free(*field);
        *field = calloc(n + 1, sizeof(char *));
        if (!*field)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        *COUNT(base, f) = n;
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = oci_item(w, node, i);
                const char *s;
                int r;

                index_path(item_path, path, i);
                r = node_string(w, item, item_path, &s);
                if (r < 0)
                        return r;
                if (f->check && f->check(s, w->err) < 0)
                        return oci_fail_prefix(w, &item->start_mark, item_path);
                (*field)[i] = strdup(s);
                if (!(*field)[i])
                        return psrun_error_errno(w->err, ENOMEM, "%s", item_path);
        }
        return 0;
}

static int parse_bits(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                      const char *path, void *base)
{
        char item_path[OCI_PATH_MAX], buf[SHOWN_MAX];
        uint64_t mask = 0;

        if (node->type != YAML_SEQUENCE_NODE)
                return expected(w, node, path, "an array of strings");
        for (size_t i = 0; i < sequence_length(node); i++) {
                yaml_node_t *item = oci_item(w, node, i);
                uint64_t bit = 0;
                const char *s;
                int r;

                index_path(item_path, path, i);
                r = node_string(w, item, item_path, &s);
                if (r < 0)
                        return r;
                if (f->bit(s, &bit) < 0)
                        return oci_fail(w, &item->start_mark, item_path, EINVAL,
                                        "unknown %s \"%s\"", f->what, shown(s, buf));
                mask |= bit;
        }
        *FIELD(base, f, uint64_t) = mask;
        return 0;
}

struct key_index {
        const char *key;
        size_t index;
};

static int compare_key_index(const void *a, const void *b)
{
        const struct key_index *x = a, *y = b;
        int c = strcmp(x->key, y->key);

        if (c)
                return c;
        return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorting instead of comparing every pair: a hostile map may have 10^5 keys. */
static int check_unique_keys(struct oci_walk *w, yaml_node_t *node, const char *path,
                             const struct oci_kv *kv, size_t n)
{
        _cleanup_free_ struct key_index *sorted = calloc(n ? n : 1, sizeof(*sorted));
        char entry_path[OCI_PATH_MAX], buf[SHOWN_MAX];
        yaml_node_t *key_node;

        if (!sorted)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        for (size_t i = 0; i < n; i++)
                sorted[i] = (struct key_index){.key = kv[i].key, .index = i};
        qsort(sorted, n, sizeof(*sorted), compare_key_index);
        for (size_t i = 1; i < n; i++) {
                if (!streq(sorted[i - 1].key, sorted[i].key))
                        continue;
                pair_key(w, node, sorted[i].index, &key_node);
                snprintf(entry_path, sizeof(entry_path), "%s[\"%s\"]", path,
                         shown(sorted[i].key, buf));
                return oci_fail(w, &key_node->start_mark, entry_path, EINVAL, "duplicate key");
        }
        return 0;
}

static int parse_map(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                     const char *path, void *base)
{
        char entry_path[OCI_PATH_MAX], buf[SHOWN_MAX];
        struct oci_kv **field = FIELD(base, f, struct oci_kv *);
        size_t n;

        if (node->type != YAML_MAPPING_NODE)
                return expected(w, node, path, "an object of strings");
        n = mapping_length(node);
        *field = calloc(n ? n : 1, sizeof(struct oci_kv));
        if (!*field)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        *COUNT(base, f) = n;
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *key_node;
                const char *key = pair_key(w, node, i, &key_node), *value;
                int r;

                if (!key)
                        return oci_fail(w, &key_node->start_mark, path, EINVAL,
                                        "keys must not contain NUL characters");
                if (!*key)
                        return oci_fail(w, &key_node->start_mark, path, EINVAL,
                                        "keys must not be empty");
                snprintf(entry_path, sizeof(entry_path), "%s[\"%s\"]", path, shown(key, buf));
                r = node_string(w, pair_value(w, node, i), entry_path, &value);
                if (r < 0)
                        return r;
                (*field)[i].key = strdup(key);
                (*field)[i].value = strdup(value);
                if (!(*field)[i].key || !(*field)[i].value)
                        return psrun_error_errno(w->err, ENOMEM, "%s", path);
        }
        return check_unique_keys(w, node, path, *field, n);
}

static int parse_list(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                      const char *path, void *base)
{
        char item_path[OCI_PATH_MAX];
        char **field = FIELD(base, f, char *);
        size_t n;

        if (node->type != YAML_SEQUENCE_NODE)
                return expected(w, node, path, "an array");
        n = sequence_length(node);
        /* Owned by base from here on, so a failing item is freed with it. */
        *field = calloc(n ? n : 1, f->item_size);
        if (!*field)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        *COUNT(base, f) = n;
        for (size_t i = 0; i < n; i++) {
                int r;

                index_path(item_path, path, i);
                r = parse_value(w, f->item, oci_item(w, node, i), item_path,
                                *field + i * f->item_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_pointer(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                         const char *path, void *base)
{
        void **field = FIELD(base, f, void *);

        if (node->type != YAML_MAPPING_NODE)
                return expected(w, node, path, "an object");
        *field = calloc(1, f->type->size);
        if (!*field)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        return oci_parse_object(w, f->type, node, path, *field);
}

static int parse_embedded(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                          const char *path, void *base)
{
        return oci_parse_object(w, f->type, node, path, FIELD(base, f, char));
}

static int parse_present(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                         const char *path, void *base)
{
        if (node->type != YAML_MAPPING_NODE)
                return expected(w, node, path, "an object");
        *FIELD(base, f, bool) = true;
        return 0;
}

typedef int (*parse_fn)(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                        const char *path, void *base);

static const parse_fn parsers[] = {
        [OCI_F_STRING] = parse_string,   [OCI_F_BOOL] = parse_bool, [OCI_F_OPT_BOOL] = parse_bool,
        [OCI_F_INT] = parse_int,         [OCI_F_ENUM] = parse_enum, [OCI_F_STRV] = parse_strv,
        [OCI_F_BITS] = parse_bits,       [OCI_F_MAP] = parse_map,   [OCI_F_OBJECT] = parse_pointer,
        [OCI_F_STRUCT] = parse_embedded, [OCI_F_LIST] = parse_list, [OCI_F_PRESENT] = parse_present,
};

/* A value that is there (null only where a list holds it: an error). */
static int parse_value(struct oci_walk *w, const struct oci_field *f, yaml_node_t *node,
                       const char *path, void *base)
{
        return parsers[f->kind](w, f, node, path, base);
}

static const struct oci_field *find_field(const struct oci_type *type, const char *name)
{
        for (size_t i = 0; i < type->n_fields; i++)
                if (streq(type->fields[i].name, name))
                        return &type->fields[i];
        return NULL;
}

int oci_parse_object(struct oci_walk *w, const struct oci_type *type, yaml_node_t *node,
                     const char *path, void *obj)
{
        char child[OCI_PATH_MAX];
        uint64_t seen = 0, present = 0;
        int r;

        if (node->type != YAML_MAPPING_NODE)
                return expected(w, node, path, "an object");
        for (size_t i = 0; i < mapping_length(node); i++) {
                yaml_node_t *key_node, *value;
                const char *key = pair_key(w, node, i, &key_node);
                const struct oci_field *f = key ? find_field(type, key) : NULL;
                uint64_t bit;

                /* The spec: unknown properties MUST be ignored. */
                if (!f)
                        continue;
                bit = 1ULL << (f - type->fields);
                oci_join_path(child, path, f->name);
                if (seen & bit)
                        return oci_fail(w, &key_node->start_mark, child, EINVAL, "duplicate key");
                seen |= bit;
                value = pair_value(w, node, i);
                /* null is how JSON writers spell "not set". */
                if (json_kind(value) == JSON_NULL)
                        continue;
                r = parse_value(w, f, value, child, obj);
                if (r < 0)
                        return r;
                present |= bit;
        }
        for (size_t i = 0; i < type->n_fields; i++) {
                if (!type->fields[i].required || (present & (1ULL << i)))
                        continue;
                oci_join_path(child, path, type->fields[i].name);
                return oci_fail(w, &node->start_mark, child, EINVAL, "missing (required)");
        }
        return type->finish ? type->finish(w, node, path, obj) : 0;
}

static void free_field(const struct oci_field *f, void *base)
{
        switch (f->kind) {
        case OCI_F_STRING:
                free(*FIELD(base, f, char *));
                break;
        case OCI_F_STRV:
                strv_free(*FIELD(base, f, char **));
                break;
        case OCI_F_MAP: {
                struct oci_kv *kv = *FIELD(base, f, struct oci_kv *);
                for (size_t i = 0; kv && i < *COUNT(base, f); i++) {
                        free(kv[i].key);
                        free(kv[i].value);
                }
                free(kv);
                break;
        }
        case OCI_F_OBJECT: {
                void *obj = *FIELD(base, f, void *);
                if (obj)
                        oci_free_object(f->type, obj);
                free(obj);
                break;
        }
        case OCI_F_STRUCT:
                oci_free_object(f->type, FIELD(base, f, char));
                break;
        case OCI_F_LIST: {
                char *items = *FIELD(base, f, char *);
                for (size_t i = 0; items && i < *COUNT(base, f); i++)
                        free_field(f->item, items + i * f->item_size);
                free(items);
                break;
        }
        default:
                break;
        }
}

void oci_free_object(const struct oci_type *type, void *obj)
{
        if (type->release)
                type->release(obj);
        for (size_t i = 0; i < type->n_fields; i++)
                free_field(&type->fields[i], obj);
}

static int load_document(struct oci_walk *w, const char *buf, size_t len)
{
        _cleanup_(yaml_parser_delete) yaml_parser_t parser = {0};

        if (!yaml_parser_initialize(&parser))
                return psrun_error_errno(w->err, ENOMEM, "%.*s", NAME_SHOWN, w->name);
        yaml_parser_set_input_string(&parser, (const unsigned char *) buf, len);
        if (!yaml_parser_load(&parser, w->doc))
                return syntax_error(w, &parser, buf, len);
        return 0;
}

static bool is_json_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* JSON allows tabs around the top-level value; YAML takes them for
 * indentation there and fails (inside flow collections they are fine). A copy
 * with those tabs turned into spaces keeps every position the same. *ret
 * stays NULL when there is nothing to change. */
static int untab_edges(const char *buf, size_t len, char **ret)
{
        size_t head = 0, tail = len;
        bool tabs = false;

        *ret = NULL;
        for (; head < len && is_json_space(buf[head]); head++)
                tabs = tabs || buf[head] == '\t';
        for (; tail > head && is_json_space(buf[tail - 1]); tail--)
                tabs = tabs || buf[tail - 1] == '\t';
        if (!tabs)
                return 0;
        *ret = malloc(len ? len : 1);
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, buf, len);
        for (size_t i = 0; i < len; i++)
                if ((i < head || i >= tail) && (*ret)[i] == '\t')
                        (*ret)[i] = ' ';
        return 0;
}

int oci_load_root(struct oci_walk *w, const char *buf, size_t len, yaml_node_t **root)
{
        _cleanup_free_ char *copy = NULL;
        int r;

        if (len > OCI_CONFIG_MAX_SIZE)
                return psrun_error_set(w->err, EFBIG, "%.*s: larger than %u MiB", NAME_SHOWN,
                                       w->name, OCI_CONFIG_MAX_SIZE >> 20);
        if (!buf)
                buf = "";
        r = untab_edges(buf, len, &copy);
        if (r < 0)
                return psrun_error_errno(w->err, r, "%.*s", NAME_SHOWN, w->name);
        if (copy)
                buf = copy;
        r = check_json(w, buf, len);
        if (r < 0)
                return r;
        r = load_document(w, buf, len);
        if (r < 0)
                return r;
        /* check_json() saw exactly one document. */
        *root = yaml_document_get_root_node(w->doc);
        if (!*root || (*root)->type != YAML_MAPPING_NODE)
                return *root ? expected(w, *root, NULL, "a JSON object at the top level")
                             : oci_fail(w, NULL, NULL, EINVAL, "empty, expected a JSON object");
        return 0;
}
