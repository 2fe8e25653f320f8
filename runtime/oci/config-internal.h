/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The machinery (oci-config-walk.c) behind oci-config.c and oci-config-linux.c: every JSON object
 * of the spec is a struct oci_type, a table of fields with the offsetof of
 * where each one goes. One walker parses any type from its table, and one
 * destructor frees any type from the same table, so what the walker stored
 * is freed on every path, including halfway through a failing parse.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "common/error.h"
#include "common/names.h"

/* Longest JSON path kept for messages ("linux.resources.blockIO...."). */
#define OCI_PATH_MAX 256
/* Room for a value shown in a message (policy_escape cuts it shorter). */
#define OCI_SHOWN_MAX 128
/* How much of the document's name a message keeps. */
#define OCI_NAME_SHOWN 160

struct oci_walk {
        const char *name; /* "config.json" or the file's path, for messages */
        yaml_document_t *doc;
        psrun_error *err;
};

enum oci_field_kind {
        OCI_F_STRING, /* char * */
        OCI_F_BOOL,   /* bool */
        OCI_F_OPT_BOOL,
        OCI_F_INT,    /* see enum oci_int_store */
        OCI_F_ENUM,   /* int, through from_string */
        OCI_F_STRV,   /* char **, NULL-terminated, count at count_offset */
        OCI_F_BITS,   /* uint64_t: a list of names OR-ed through bit() */
        OCI_F_MAP,    /* struct oci_kv *, count at count_offset */
        OCI_F_OBJECT, /* pointer to a calloc'ed `type`, NULL when absent */
        OCI_F_STRUCT, /* a `type` embedded at offset */
        OCI_F_LIST,   /* array of item_size elements described by `item` */
        /* bool: the key is there, with an object (a field psrun refuses
         * by name rather than ignore as unknown) */
        OCI_F_PRESENT,
};

enum oci_int_store {
        OCI_I_U16,
        OCI_I_U32,
        OCI_I_U64,
        OCI_I_I64,
        OCI_I_OPT_I64, /* struct oci_opt_i64 */
        OCI_I_OPT_U64, /* struct oci_opt_u64 */
};

struct oci_type;

struct oci_field {
        const char *name;
        enum oci_field_kind kind;
        size_t offset;
        size_t count_offset; /* STRV, MAP, LIST: a size_t */
        bool required;       /* absent or null is an error */
        /* INT: how to store it, and the inclusive range (max as unsigned) */
        enum oci_int_store store;
        int64_t min;
        uint64_t max;
        /* STRING and STRV items: fills err (no location) when s is invalid */
        int (*check)(const char *s, psrun_error *err);
        /* ENUM: value of a name or -EINVAL; name of the i-th value for the
         * "one of ..." list, NULL past the last */
        int (*from_string)(const char *s);
        const char *(*name_at)(int i);
        /* BITS: the mask of a name, 0 or -EINVAL; `what` names one in
         * messages ("capability") */
        int (*bit)(const char *name, uint64_t *ret);
        const char *what;
        /* OBJECT, STRUCT */
        const struct oci_type *type;
        /* LIST: each element is `item` at offset 0 of item_size bytes */
        const struct oci_field *item;
        size_t item_size;
};

struct oci_type {
        const struct oci_field *fields;
        size_t n_fields; /* <= 64 */
        size_t size;
        /* Cross-field checks and derived values, once every field is in. */
        int (*finish)(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj);
        /* Frees what finish() derived (the fields are freed from the table). */
        void (*release)(void *obj);
};

/* Field table shorthands; OCI_STRUCT names the struct the table describes. */
#define OCI_AT(member)                .offset = offsetof(OCI_STRUCT, member)
#define OCI_COUNT(member)             .count_offset = offsetof(OCI_STRUCT, member)
#define OCI_RANGE(store_, min_, max_) .store = (store_), .min = (min_), .max = (uint64_t) (max_)
#define OCI_U16                       OCI_RANGE(OCI_I_U16, 0, UINT16_MAX)
#define OCI_U32                       OCI_RANGE(OCI_I_U32, 0, UINT32_MAX)
#define OCI_U64                       OCI_RANGE(OCI_I_U64, 0, UINT64_MAX)
#define OCI_I64                       OCI_RANGE(OCI_I_I64, INT64_MIN, INT64_MAX)
#define OCI_OPT_I64                   OCI_RANGE(OCI_I_OPT_I64, INT64_MIN, INT64_MAX)
#define OCI_OPT_U64                   OCI_RANGE(OCI_I_OPT_U64, 0, UINT64_MAX)
/* A list of `type` objects. */
#define OCI_LIST_OF(type_, elem)                                                                   \
        .item = &(const struct oci_field){.kind = OCI_F_STRUCT, .type = &(type_)},                 \
        .item_size = sizeof(elem)
#define OCI_TYPE(fields_, struct_, ...)                                                            \
        {                                                                                          \
                .fields = (fields_), .n_fields = sizeof(fields_) / sizeof((fields_)[0]),           \
                .size = sizeof(struct_), __VA_ARGS__                                               \
        }

/* Fails with "<name>:<line>:<col>: <path>: <message>" (path may be NULL). */
int oci_fail(struct oci_walk *w, const yaml_mark_t *mark, const char *path, int errnum,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Puts "<name>:<line>:<col>: <path>: " before the message a check left in err. */
int oci_fail_prefix(struct oci_walk *w, const yaml_mark_t *mark, const char *path);

/* The value of `key` in a mapping node, or NULL. */
yaml_node_t *oci_child(struct oci_walk *w, yaml_node_t *mapping, const char *key);
/* Item i of a sequence node, or NULL. */
yaml_node_t *oci_item(struct oci_walk *w, yaml_node_t *sequence, size_t i);
/* Where to point a message about `key` of a mapping: the value's position,
 * or the mapping's when the key is absent. */
const yaml_mark_t *oci_mark_of(struct oci_walk *w, yaml_node_t *mapping, const char *key);

/* Checks that buf is one JSON document (see oci-config-walk.c), loads it into
 * w->doc and returns its top-level object. */
int oci_load_root(struct oci_walk *w, const char *buf, size_t len, yaml_node_t **root);

/* buf = path + "." + name (just name when path is ""), cut to OCI_PATH_MAX. */
void oci_join_path(char *buf, const char *path, const char *name);

/* Parses a mapping node into obj (zeroed by the caller) through `type`. */
int oci_parse_object(struct oci_walk *w, const struct oci_type *type, yaml_node_t *node,
                     const char *path, void *obj);
/* Frees what the walker stored in obj; obj itself is the caller's. */
void oci_free_object(const struct oci_type *type, void *obj);

/* Checks for STRING fields. */
int oci_check_absolute(const char *s, psrun_error *err);
int oci_check_not_empty(const char *s, psrun_error *err);

/* The mount option table (oci-config.c) seen from rootfsPropagation: the
 * propagation flags of a name, or -EINVAL. */
int oci_propagation_from_string(const char *name);
const char *oci_propagation_name_at(int i);

/* Types of oci-config-linux.c used by oci-config.c. */
extern const struct oci_type oci_linux_type;
extern const struct oci_type oci_id_mapping_type;
extern const struct oci_type oci_resources_type;
extern const struct oci_type oci_scheduler_type;
extern const struct oci_type oci_io_priority_type;
extern const struct oci_type oci_cpu_affinity_type;
