/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The JSON documents of images (manifests, indexes, configs, index.json,
 * auth.json, the registries file, token answers), read through libyaml's
 * document loader as runtime/oci reads config.json: libpsrun links libyaml
 * already, and its loader keeps its own stacks on the heap, so a deeply
 * nested document costs memory the size cap bounds, not C stack. JSON's
 * shape is checked on every node read: objects and arrays in flow style,
 * strings double-quoted, numbers plain JSON numbers, no duplicate keys.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "common/error.h"

struct jdoc {
        yaml_document_t doc;
        bool loaded;
        const char *name; /* for messages: "manifest sha256:...", "auth.json" */
};

typedef yaml_node_t jnode;

/* Deeper documents are refused before they are parsed. */
#define JDOC_MAX_DEPTH 64

/* Parses buf (len bytes) as one JSON document whose root is an object. */
int jdoc_parse(struct jdoc *d, const char *buf, size_t len, const char *name, psrun_error *err);
void jdoc_free(struct jdoc *d);
jnode *jdoc_root(struct jdoc *d);

/* The member `key` of object `obj`: 0 with *ret NULL when absent, -EINVAL
 * when obj is not an object or has the key twice. */
int jdoc_get(struct jdoc *d, jnode *obj, const char *key, jnode **ret, psrun_error *err);
/* Typed members: absent is 0 with *ret NULL (strings) / unchanged (numbers),
 * a wrong type is -EINVAL naming the key. */
int jdoc_get_string(struct jdoc *d, jnode *obj, const char *key, const char **ret,
                    psrun_error *err);
int jdoc_get_int64(struct jdoc *d, jnode *obj, const char *key, int64_t *ret, bool *present,
                   psrun_error *err);
/* The string of a node, NULL when it is not a JSON string. */
const char *jdoc_string(jnode *n);
bool jdoc_is_object(jnode *n);
bool jdoc_is_array(jnode *n);
size_t jdoc_array_len(jnode *n);
jnode *jdoc_array_item(struct jdoc *d, jnode *arr, size_t i);
/* Iterating an object's members in order: the i-th key (a JSON string, or
 * NULL) and value. */
size_t jdoc_object_len(jnode *n);
const char *jdoc_object_key(struct jdoc *d, jnode *obj, size_t i);
jnode *jdoc_object_value(struct jdoc *d, jnode *obj, size_t i);
