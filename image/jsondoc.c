/* SPDX-License-Identifier: MIT */

#include "image/jsondoc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/number.h"

int jdoc_parse(struct jdoc *d, const char *buf, size_t len, const char *name, psrun_error *err)
{
        *d = (struct jdoc){.name = name};
        size_t i = 0;
        while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
                i++;
        if (i == len || buf[i] != '{')
                return psrun_error_set(err, EINVAL, "image: %s: not a JSON object", name);
        if (memchr(buf, '\0', len))
                return psrun_error_set(err, EINVAL, "image: %s: a NUL byte in JSON", name);
        /* nesting bounded before libyaml sees it: its loader's cost grows
         * faster than linearly with depth */
        int depth = 0;
        bool in_string = false;
        for (size_t k = i; k < len; k++) {
                char c = buf[k];
                if (in_string) {
                        if (c == '\\')
                                k++;
                        else if (c == '"')
                                in_string = false;
                } else if (c == '"') {
                        in_string = true;
                } else if (c == '{' || c == '[') {
                        if (++depth > JDOC_MAX_DEPTH)
                                return psrun_error_set(err, EINVAL,
                                                       "image: %s: JSON nested deeper than %d",
                                                       name, JDOC_MAX_DEPTH);
                } else if (c == '}' || c == ']') {
                        depth--;
                }
        }
        yaml_parser_t parser;
        if (!yaml_parser_initialize(&parser))
                return psrun_error_errno(err, ENOMEM, "image: %s", name);
        yaml_parser_set_input_string(&parser, (const unsigned char *) buf, len);
        int ok = yaml_parser_load(&parser, &d->doc);
        if (!ok) {
                int r = psrun_error_set(err, EINVAL, "image: %s: not valid JSON (%s at byte %zu)",
                                        name, parser.problem ? parser.problem : "syntax error",
                                        parser.problem_offset);
                yaml_parser_delete(&parser);
                return r;
        }
        yaml_parser_delete(&parser);
        d->loaded = true;
        jnode *root = yaml_document_get_root_node(&d->doc);
        if (!root || root->type != YAML_MAPPING_NODE ||
            root->data.mapping.style != YAML_FLOW_MAPPING_STYLE) {
                jdoc_free(d);
                return psrun_error_set(err, EINVAL, "image: %s: not a JSON object", name);
        }
        return 0;
}

void jdoc_free(struct jdoc *d)
{
        if (d->loaded)
                yaml_document_delete(&d->doc);
        d->loaded = false;
}

jnode *jdoc_root(struct jdoc *d)
{
        return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

const char *jdoc_string(jnode *n)
{
        if (!n || n->type != YAML_SCALAR_NODE ||
            n->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE)
                return NULL;
        /* a NUL written as \u0000 would cut the string short: not a string
         * psrun takes */
        if (strlen((const char *) n->data.scalar.value) != n->data.scalar.length)
                return NULL;
        return (const char *) n->data.scalar.value;
}

bool jdoc_is_object(jnode *n)
{
        return n && n->type == YAML_MAPPING_NODE &&
               n->data.mapping.style == YAML_FLOW_MAPPING_STYLE;
}

bool jdoc_is_array(jnode *n)
{
        return n && n->type == YAML_SEQUENCE_NODE &&
               n->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE;
}

size_t jdoc_array_len(jnode *n)
{
        return jdoc_is_array(n)
                       ? (size_t) (n->data.sequence.items.top - n->data.sequence.items.start)
                       : 0;
}

jnode *jdoc_array_item(struct jdoc *d, jnode *arr, size_t i)
{
        if (i >= jdoc_array_len(arr))
                return NULL;
        return yaml_document_get_node(&d->doc, arr->data.sequence.items.start[i]);
}

size_t jdoc_object_len(jnode *n)
{
        return jdoc_is_object(n)
                       ? (size_t) (n->data.mapping.pairs.top - n->data.mapping.pairs.start)
                       : 0;
}

const char *jdoc_object_key(struct jdoc *d, jnode *obj, size_t i)
{
        if (i >= jdoc_object_len(obj))
                return NULL;
        return jdoc_string(yaml_document_get_node(&d->doc, obj->data.mapping.pairs.start[i].key));
}

jnode *jdoc_object_value(struct jdoc *d, jnode *obj, size_t i)
{
        if (i >= jdoc_object_len(obj))
                return NULL;
        return yaml_document_get_node(&d->doc, obj->data.mapping.pairs.start[i].value);
}

int jdoc_get(struct jdoc *d, jnode *obj, const char *key, jnode **ret, psrun_error *err)
{
        *ret = NULL;
        if (!jdoc_is_object(obj))
                return psrun_error_set(err, EINVAL, "image: %s: expected an object holding `%s`",
                                       d->name, key);
        size_t n = jdoc_object_len(obj);
        for (size_t i = 0; i < n; i++) {
                const char *k = jdoc_object_key(d, obj, i);
                if (!k)
                        return psrun_error_set(err, EINVAL,
                                               "image: %s: an object key is not a "
                                               "JSON string",
                                               d->name);
                if (strcmp(k, key) != 0)
                        continue;
                if (*ret)
                        return psrun_error_set(err, EINVAL, "image: %s: key `%s` appears twice",
                                               d->name, key);
                *ret = jdoc_object_value(d, obj, i);
        }
        return 0;
}

int jdoc_get_string(struct jdoc *d, jnode *obj, const char *key, const char **ret, psrun_error *err)
{
        jnode *n;
        *ret = NULL;
        int r = jdoc_get(d, obj, key, &n, err);
        if (r < 0 || !n)
                return r;
        if (!(*ret = jdoc_string(n)))
                return psrun_error_set(err, EINVAL, "image: %s: `%s` is not a string", d->name,
                                       key);
        return 0;
}

int jdoc_get_int64(struct jdoc *d, jnode *obj, const char *key, int64_t *ret, bool *present,
                   psrun_error *err)
{
        jnode *n;
        if (present)
                *present = false;
        int r = jdoc_get(d, obj, key, &n, err);
        if (r < 0 || !n)
                return r;
        if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
            number_parse((const char *) n->data.scalar.value, INT64_MIN + 1, INT64_MAX, ret) < 0)
                return psrun_error_set(err, EINVAL, "image: %s: `%s` is not an integer", d->name,
                                       key);
        if (present)
                *present = true;
        return 0;
}
