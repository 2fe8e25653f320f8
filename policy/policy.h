/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The sandbox policy: one vocabulary for the YAML file, `-o key=value`, the C
 * API and (later) MCP and Python. Parsing is pure: text in, a validated
 * struct out, no syscalls besides reading the named file.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

enum policy_network {
        POLICY_NETWORK_NONE,
        POLICY_NETWORK_RESTRICTED,
        POLICY_NETWORK_FULL,
        _POLICY_NETWORK_MAX,
};

enum policy_backend {
        POLICY_BACKEND_NATIVE,
        POLICY_BACKEND_GVISOR,
        _POLICY_BACKEND_MAX,
};

/* Whether an optional kernel security layer must be present. */
enum policy_layer {
        POLICY_LAYER_AUTO,     /* use it when the host has it, else note and go on */
        POLICY_LAYER_REQUIRED, /* refuse to start without it */
        POLICY_LAYER_OFF,      /* don't use it */
        _POLICY_LAYER_MAX,
};

struct policy_env {
        char *name;
        char *value; /* NULL: take the value from psrun's own environment */
};

struct policy_mount {
        char *source; /* host path, absolute */
        char *target; /* sandbox path, absolute and normalized */
        bool readonly;
};

struct policy {
        enum policy_network network;
        char **allow_domains; /* NULL-terminated, may be NULL */
        size_t n_allow_domains;

        uint64_t memory_limit; /* bytes */
        double cpu_limit;      /* CPUs, > 0 */
        uint64_t pids_limit;   /* processes of the command, psrun's init not counted */
        uint64_t disk_limit;   /* bytes: size of /workspace */
        uint64_t timeout_ms;   /* wall clock */
        /* Sessions (docs/sessions.md); 0: none. */
        uint64_t idle_timeout_ms; /* destroy a session idle this long */
        uint64_t lifetime_ms;     /* destroy a session this long after its creation */
        uint64_t output_limit;    /* bytes of each stream an exec's result keeps */

        struct policy_env *env; /* in order; a later entry overrides an earlier one */
        size_t n_env;

        char *workdir; /* absolute path inside the sandbox */
        bool readonly_rootfs;
        uint32_t uid, gid; /* inside the sandbox */
        enum policy_backend backend;

        struct policy_mount *mounts;
        size_t n_mounts;

        char *hostname;
        enum policy_layer landlock;
        enum policy_layer apparmor;
        char *apparmor_profile; /* NULL: psrun's generated "psrun-default" */
};

/* Defaults as in DESIGN.md. */
#define POLICY_DEFAULT_MEMORY_LIMIT    (512ULL << 20)
#define POLICY_DEFAULT_CPU_LIMIT       1.0
#define POLICY_DEFAULT_PIDS_LIMIT      256
#define POLICY_DEFAULT_DISK_LIMIT      (1ULL << 30)
#define POLICY_DEFAULT_TIMEOUT_MS      (300ULL * 1000)
#define POLICY_DEFAULT_IDLE_TIMEOUT_MS (30ULL * 60 * 1000)
#define POLICY_DEFAULT_LIFETIME_MS     0
#define POLICY_DEFAULT_OUTPUT_LIMIT    (1ULL << 20)
#define POLICY_DEFAULT_UID             1000
#define POLICY_DEFAULT_GID             1000
#define POLICY_DEFAULT_WORKDIR         "/workspace"
#define POLICY_DEFAULT_HOSTNAME        "sandbox"

/* Fill with defaults. Allocates (workdir, hostname): returns -ENOMEM or 0. */
int policy_init(struct policy *p);
void policy_free(struct policy *p);

/* Parse a YAML (or JSON) document and apply its keys over *p. `name` is used
 * in messages ("policy.yaml:3:5: ..."). On error *p is left unchanged. */
int policy_load_buffer(struct policy *p, const char *name, const char *buf, size_t len,
                       psrun_error *err);
int policy_load_file(struct policy *p, const char *path, psrun_error *err);

/* Apply one "key=value" (value parsed as a YAML flow node, so `-o
 * 'env={A: b}'` and `-o allow_domains=[a.com,b.org]` work). On error *p is
 * left unchanged. */
int policy_set_option(struct policy *p, const char *key_eq_value, psrun_error *err);

/* The policy as one JSON object in this same vocabulary (sizes as "512M",
 * the timeout as "300000ms", env as a mapping): loading it back over the
 * defaults gives the same policy. Returns 0 or -EIO. */
int policy_write_json(const struct policy *p, FILE *f);

/* Cross-field checks run after all sources are applied. */
int policy_validate(const struct policy *p, psrun_error *err);

/* Enum <-> string tables; from_string returns -EINVAL for unknown names. */
const char *policy_network_to_string(enum policy_network v);
int policy_network_from_string(const char *s);
const char *policy_backend_to_string(enum policy_backend v);
int policy_backend_from_string(const char *s);
const char *policy_layer_to_string(enum policy_layer v);
int policy_layer_from_string(const char *s);

/* "512M", "1.5G", "4096", "1k" (binary units, case-insensitive, optional
 * trailing "B"/"iB"). Returns 0 or -EINVAL / -ERANGE. */
int parse_size(const char *s, uint64_t *ret);
/* "300", "2.5", "300s", "5m", "1h", "500ms" -> milliseconds. */
int parse_duration_ms(const char *s, uint64_t *ret);

/* Closest known policy key to `key` within a small edit distance, or NULL. */
const char *policy_suggest_key(const char *key);

/* ---- Additions: limits, copying and the pure checks behind the parser ---- */

/* Bounds of the numeric keys (inclusive). */
#define POLICY_MEMORY_LIMIT_MIN (4ULL << 20)
#define POLICY_MEMORY_LIMIT_MAX (1ULL << 50)
#define POLICY_DISK_LIMIT_MIN   (1ULL << 20)
#define POLICY_DISK_LIMIT_MAX   (1ULL << 50)
#define POLICY_CPU_LIMIT_MAX    1024 /* and > 0 */
#define POLICY_PIDS_LIMIT_MIN   1
#define POLICY_PIDS_LIMIT_MAX   4194304
#define POLICY_TIMEOUT_MS_MIN   1
#define POLICY_TIMEOUT_MS_MAX   (30ULL * 24 * 3600 * 1000)
#define POLICY_OUTPUT_LIMIT_MIN 64
#define POLICY_OUTPUT_LIMIT_MAX (1ULL << 30)
#define POLICY_ID_MAX           65535 /* uid and gid */

/* Largest policy document accepted (file or buffer). */
#define POLICY_MAX_DOCUMENT_SIZE (1U << 20)
/* Longest path accepted for workdir and mounts. */
#define POLICY_PATH_MAX 4095
/* Most entries in one list (env, allow_domains, mounts). */
#define POLICY_MAX_LIST 4096

/* Deep copy of src into dst (dst is overwritten, not freed). Returns 0 or
 * -ENOMEM, in which case dst is left zeroed. */
int policy_copy(struct policy *dst, const struct policy *src);

/* "2", "0.5", ".5" -> CPUs. Decimal only, independent of the locale.
 * Returns 0 or -EINVAL / -ERANGE. */
int parse_cpus(const char *s, double *ret);
/* Decimal digits only. Returns 0 or -EINVAL / -ERANGE. */
int parse_uint64(const char *s, uint64_t *ret);
/* The inverse, for messages: 4194304 -> "4M", 1000 -> "1000"; 300000 -> "5m",
 * 1500 -> "1500ms". Output is cut to size. */
void format_size(uint64_t bytes, char *buf, size_t size);
void format_duration_ms(uint64_t ms, char *buf, size_t size);
void format_uint64(uint64_t v, char *buf, size_t size);

/*
 * The checks shared by the YAML/-o parser and policy_validate(). Each fills
 * err with what is wrong (no location: the caller prefixes where it found the
 * value) and returns 0 or -errno.
 */

/* Absolute, no "..", no control characters, <= POLICY_PATH_MAX; "//" and "."
 * collapse. *ret is the normalized copy. */
int policy_normalize_path(const char *path, char **ret, psrun_error *err);
/* A mount source: absolute (normalized as above) or relative, kept as given
 * and resolved against psrun's working directory when the sandbox starts. */
int policy_normalize_source(const char *path, char **ret, psrun_error *err);
/* A normalized mount target that psrun does not own: not "/", not /proc,
 * /dev or /.oldroot or below them. */
int policy_check_mount_target(const char *target, psrun_error *err);
/* "example.com" or "*.example.com"; *ret is the lowercased copy without a
 * trailing dot. */
int policy_normalize_domain(const char *name, char **ret, psrun_error *err);
int policy_check_hostname(const char *name, psrun_error *err);
int policy_check_env_name(const char *name, psrun_error *err);
int policy_check_apparmor_profile(const char *name, psrun_error *err);
/* "UID[:GID]" (0..65535; GID defaults to UID), "root" or "sandbox". */
int policy_parse_user(const char *s, uint32_t *uid, uint32_t *gid, psrun_error *err);

/* Copy s into buf for a one-line message: control characters, quotes and
 * backslashes escaped, long values cut with "...". Returns buf. */
const char *policy_escape(const char *s, char *buf, size_t size);

/* The closest of n candidates to word, or NULL: edit distance <= 2, else the
 * one candidate that word (>= 2 characters) begins, else the longest candidate
 * (>= 3 characters) that begins word. Case and '-' vs '_' don't count. */
const char *policy_suggest_from(const char *word, const char *const *candidates, size_t n);
