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

#include "common/cidr.h"
#include "common/error.h"
#include "common/units.h"

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

/* What the result reports of the refusals of the security layers
 * (docs/security.md, "Violations"): nothing, one entry per distinct refusal,
 * or one per refusal and process with the argument that made it one. */
enum policy_violations {
        POLICY_VIOLATIONS_OFF,
        POLICY_VIOLATIONS_SUMMARY,
        POLICY_VIOLATIONS_FULL,
        _POLICY_VIOLATIONS_MAX,
};

/* What a run does with memory_limit, cpu_limit and pids_limit where no
 * cgroup can hold them (rootless without a delegated cgroup v2 subtree,
 * docs/rootless.md): refuse to start, or apply what rlimits can and say
 * per limit in the result's layers what holds. */
enum policy_limits {
        POLICY_LIMITS_STRICT,
        POLICY_LIMITS_BEST_EFFORT,
        _POLICY_LIMITS_MAX,
};

/* The gVisor platform runsc runs the sandbox on (backend: gvisor). */
enum policy_gvisor_platform {
        POLICY_GVISOR_PLATFORM_AUTO, /* the first that works here (runtime/gvisor-platform.c) */
        POLICY_GVISOR_PLATFORM_SYSTRAP,
        POLICY_GVISOR_PLATFORM_KVM,
        POLICY_GVISOR_PLATFORM_PTRACE,
        _POLICY_GVISOR_PLATFORM_MAX,
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

#define POLICY_MAX_PORTS 64
/* pip_index_url, npm_registry */
#define POLICY_URL_MAX 1024

struct policy {
        enum policy_network network;
        char **allow_domains; /* NULL-terminated, may be NULL; presets expanded */
        size_t n_allow_domains;
        /* network: full and restricted (docs/network.md) */
        uint16_t allow_ports[POLICY_MAX_PORTS]; /* restricted: ports of pinned names */
        size_t n_allow_ports;
        char **allow_cidrs; /* restricted: "CIDR" or "CIDR:port", NULL-terminated */
        size_t n_allow_cidrs;
        char **allow_private; /* "CIDR": private ranges made reachable */
        size_t n_allow_private;
        char **dns_upstream; /* IP addresses; none: the host's resolv.conf */
        size_t n_dns_upstream;
        uint64_t dns_min_ttl_ms, dns_max_ttl_ms; /* clamp of a pin's lifetime */
        char *network_pool; /* "CIDR" sandboxes take /30s from; NULL: pick a free one */
        char *network_log;  /* host path of the JSON-lines log; NULL: none */
        /* restricted: TCP to 443 and 80 must ask, by SNI or Host, for a
         * name the address was pinned for (netns/name-relay.c) */
        bool name_check;
        /* Sessions' package installs (docs/sessions.md, policy/policy-install.c):
         * the network an install exec gets, its allowlist (a later source
         * replaces it; default @pypi and @npm), the indexes pip and npm use
         * (NULL: their own defaults), and the actions that need approval. */
        enum policy_network install_network;
        char **install_allow_domains; /* NULL-terminated; presets expanded */
        size_t n_install_allow_domains;
        bool install_allow_domains_given;
        char *pip_index_url;
        char *npm_registry;
        uint32_t approve; /* POLICY_ACTION_* bits */

        uint64_t memory_limit; /* bytes */
        double cpu_limit;      /* CPUs, > 0 */
        uint64_t pids_limit;   /* processes of the command, psrun's init not counted */
        uint64_t disk_limit;   /* bytes: size of /workspace */
        uint64_t timeout_ms;   /* wall clock */
        /* Sessions (docs/sessions.md); 0: none. */
        uint64_t idle_timeout_ms;  /* destroy a session idle this long */
        uint64_t lifetime_ms;      /* destroy a session this long after its creation */
        uint64_t output_limit;     /* bytes of each stream an exec's result keeps */
        uint64_t background_limit; /* background processes running at once */

        struct policy_env *env; /* in order; a later entry overrides an earlier one */
        size_t n_env;

        char *workdir; /* absolute path inside the sandbox */
        bool readonly_rootfs;
        uint32_t uid, gid; /* inside the sandbox */
        enum policy_backend backend;
        enum policy_gvisor_platform gvisor_platform;

        struct policy_mount *mounts;
        size_t n_mounts;

        char *hostname;
        enum policy_layer landlock;
        enum policy_layer apparmor;
        char *apparmor_profile; /* NULL: psrun's generated "psrun-default" */
        enum policy_violations violations;
        enum policy_limits limits;

        /* Kernel quotas that the sandbox's user namespace would otherwise
         * share with host root, its creator (docs/security.md). */
        uint64_t pty_limit;           /* devpts instance max= */
        uint64_t inotify_limit;       /* user.max_inotify_instances */
        uint64_t inotify_watch_limit; /* user.max_inotify_watches */
        uint64_t fanotify_limit;      /* user.max_fanotify_groups */
        uint64_t fanotify_mark_limit; /* user.max_fanotify_marks */
        uint64_t namespace_limit;     /* user.max_*_namespaces, each */
        uint64_t sigpending_limit;    /* RLIMIT_SIGPENDING */
        uint64_t msgqueue_limit;      /* RLIMIT_MSGQUEUE, bytes */

        /* The root (docs/images.md, policy/policy-image.c): an OCI image
         * reference (NULL: the host's /usr), the store it is kept in
         * (NULL: POLICY_DEFAULT_IMAGE_STORE), the registries' mirrors and
         * plain-HTTP hosts (added to the registries file), the bound of a
         * layer's unpacked bytes, and the toolchains a root must have. */
        char *image;
        char *image_store;
        char **registry_mirrors; /* "MIRROR" or "REGISTRY=MIRROR", NULL-terminated */
        size_t n_registry_mirrors;
        char **insecure_registries; /* "HOST[:PORT]" */
        size_t n_insecure_registries;
        uint64_t image_max_size;
        char **tools; /* names of policy_tool_find's table */
        size_t n_tools;
};

/* Defaults as in DESIGN.md. */
#define POLICY_DEFAULT_MEMORY_LIMIT     (512ULL << 20)
#define POLICY_DEFAULT_CPU_LIMIT        1.0
#define POLICY_DEFAULT_PIDS_LIMIT       256
#define POLICY_DEFAULT_DISK_LIMIT       (1ULL << 30)
#define POLICY_DEFAULT_TIMEOUT_MS       (300ULL * 1000)
#define POLICY_DEFAULT_IDLE_TIMEOUT_MS  (30ULL * 60 * 1000)
#define POLICY_DEFAULT_LIFETIME_MS      0
#define POLICY_DEFAULT_OUTPUT_LIMIT     (1ULL << 20)
#define POLICY_DEFAULT_BACKGROUND_LIMIT 8
#define POLICY_DEFAULT_UID              1000
#define POLICY_DEFAULT_GID              1000
#define POLICY_DEFAULT_WORKDIR          "/workspace"
#define POLICY_DEFAULT_HOSTNAME         "sandbox"
#define POLICY_DEFAULT_DNS_MIN_TTL      (30ULL * 1000)
#define POLICY_DEFAULT_DNS_MAX_TTL      (3600ULL * 1000)
#define POLICY_DNS_TTL_MAX              (7ULL * 24 * 3600 * 1000)

/* Kernel quotas: well below the host's defaults (128 inotify instances and
 * fanotify groups, 4096 ptys, tens of thousands of queued signals, 800 KiB
 * of POSIX message queues: 128 KiB holds one queue of the default size). */
#define POLICY_DEFAULT_PTY_LIMIT           64
#define POLICY_DEFAULT_INOTIFY_LIMIT       16
#define POLICY_DEFAULT_INOTIFY_WATCH_LIMIT 8192
#define POLICY_DEFAULT_FANOTIFY_LIMIT      8
#define POLICY_DEFAULT_FANOTIFY_MARK_LIMIT 8192
#define POLICY_DEFAULT_NAMESPACE_LIMIT     0
#define POLICY_DEFAULT_SIGPENDING_LIMIT    1024
#define POLICY_DEFAULT_MSGQUEUE_LIMIT      (128ULL << 10)

/* Images: the store under psrun's state root, layers bounded at 8G. */
#define POLICY_DEFAULT_IMAGE_STORE    "/var/lib/psrun/images"
#define POLICY_DEFAULT_IMAGE_MAX_SIZE (8ULL << 30)
#define POLICY_IMAGE_MAX_SIZE_MIN     (1ULL << 20)
#define POLICY_IMAGE_MAX_SIZE_MAX     (1ULL << 50)

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
/* The same for the C API (psrun_policy_set): errors name the key as its
 * caller spelled it (`memory_limit: "4Gi" is not a size`), not `-o key`. */
int policy_set_key(struct policy *p, const char *key_eq_value, psrun_error *err);

/* The policy as one JSON object in this same vocabulary (sizes as "512M",
 * the timeout as "300000ms", env as a mapping): loading it back over the
 * defaults gives the same policy. Returns 0 or -EIO. */
int policy_write_json(const struct policy *p, FILE *f);
/* The JSON values of allow_ports, approve and env as policy_write_json
 * writes them (policy_get_value's too). */
void policy_json_write_ports(FILE *f, const struct policy *p);
void policy_json_write_approve(FILE *f, const struct policy *p);
void policy_json_write_env(FILE *f, const struct policy *p);

/* Cross-field checks run after all sources are applied. */
int policy_validate(const struct policy *p, psrun_error *err);

/* Enum <-> string tables; from_string returns -EINVAL for unknown names. */
const char *policy_network_to_string(enum policy_network v);
int policy_network_from_string(const char *s);
const char *policy_backend_to_string(enum policy_backend v);
int policy_backend_from_string(const char *s);
const char *policy_gvisor_platform_to_string(enum policy_gvisor_platform v);
int policy_gvisor_platform_from_string(const char *s);
const char *policy_layer_to_string(enum policy_layer v);
int policy_layer_from_string(const char *s);
const char *policy_violations_to_string(enum policy_violations v);
int policy_violations_from_string(const char *s);
const char *policy_limits_to_string(enum policy_limits v);
int policy_limits_from_string(const char *s);

/* Closest known policy key to `key` within a small edit distance, or NULL. */
const char *policy_suggest_key(const char *key);
/* The i-th key of the vocabulary (docs/policy.md's order), NULL past the
 * last: for tests and tables that must cover every key. */
const char *policy_key_name_at(size_t i);

/* One key's value as text that policy_set_option() reads back as the same
 * value (policy/policy-get.c): scalars as `-o` takes them ("512M",
 * "300000ms", "full", "true", a path), lists and mappings as JSON (a YAML
 * flow node); a string key without a value ("", an unset
 * pip_index_url) as "". *ret is malloc'd. -EINVAL for an unknown key. */
int policy_get_value(const struct policy *p, const char *key, char **ret, psrun_error *err);

/* `key` set to `value` on a copy of *p, as policy_set_option() sets it,
 * when that leaves the policy no wider than *p in that key
 * (policy/policy-narrow.c): limits, durations and quotas no higher, the
 * network no more open (none < restricted < full), an optional layer no
 * weaker (required < auto < off), readonly_rootfs and name_check not
 * turned off, lists
 * (domains, CIDRs, ports, DNS servers) within the old ones, approve
 * keeping every action it gates, env taking no more from the caller's
 * environment; workdir and hostname are free. *ret is the copy (policy_free).
 * -EPERM, with the key and why in err, for a widening; -EOPNOTSUPP for a
 * key whose values have no such order (mounts, backend, user, URLs, ...);
 * -EINVAL for an unknown key or a bad value (the parser's message). */
int policy_narrowed(const struct policy *p, const char *key, const char *value, struct policy *ret,
                    psrun_error *err);

/* A per-call value of a limit key (an exec's timeout_ms against
 * `timeout`, its output_limit against `output_limit`) narrows the policy,
 * never widens it: 0 when value is at most the policy's, -EPERM when above
 * (`timeout_ms: 20000 is above the policy's timeout 10s`, option naming the
 * caller's field), -EINVAL for a key that is no such limit. The same rule
 * as policy_narrowed's for the key. */
int policy_check_ceiling(const struct policy *p, const char *key, const char *option,
                         uint64_t value, psrun_error *err);

/* ---- Additions: limits, copying and the pure checks behind the parser ---- */

/* Bounds of the numeric keys (inclusive). */
#define POLICY_MEMORY_LIMIT_MIN     (4ULL << 20)
#define POLICY_MEMORY_LIMIT_MAX     (1ULL << 50)
#define POLICY_DISK_LIMIT_MIN       (1ULL << 20)
#define POLICY_DISK_LIMIT_MAX       (1ULL << 50)
#define POLICY_CPU_LIMIT_MAX        1024 /* and > 0 */
#define POLICY_PIDS_LIMIT_MIN       1
#define POLICY_PIDS_LIMIT_MAX       4194304
#define POLICY_TIMEOUT_MS_MIN       1
#define POLICY_TIMEOUT_MS_MAX       (30ULL * 24 * 3600 * 1000)
#define POLICY_OUTPUT_LIMIT_MIN     64
#define POLICY_OUTPUT_LIMIT_MAX     (1ULL << 30)
#define POLICY_BACKGROUND_LIMIT_MAX 32
#define POLICY_ID_MAX               65535 /* uid and gid */
#define POLICY_PTY_LIMIT_MAX        4096
#define POLICY_QUOTA_MAX            (1ULL << 20) /* inotify, fanotify, namespaces, sigpending */
#define POLICY_MSGQUEUE_LIMIT_MAX   (1ULL << 30)

/* Largest policy document accepted (file or buffer). */
#define POLICY_MAX_DOCUMENT_SIZE (1U << 20)
/* Deepest nesting of lists and mappings in a policy document or -o value
 * (as config.json's), and most YAML values (scalars, lists, mappings). */
#define POLICY_MAX_DEPTH 64
#define POLICY_MAX_NODES (1 << 18)
/* Longest path accepted for workdir and mounts. */
#define POLICY_PATH_MAX 4095
/* Most entries in one list (env, allow_domains, mounts). */
#define POLICY_MAX_LIST 4096

/* Deep copy of src into dst (dst is overwritten, not freed). Returns 0 or
 * -ENOMEM, in which case dst is left zeroed. */
int policy_copy(struct policy *dst, const struct policy *src);

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

/* ---- session keys (policy/policy-install.c) ---- */

/* Actions a session may gate on the embedder's approval (`approve`). */
enum policy_action {
        POLICY_ACTION_INSTALL = 1U << 0,
};
/* "install" -> POLICY_ACTION_INSTALL; -EINVAL for an unknown name. */
int policy_action_from_string(const char *s);
/* The i-th action's name, NULL past the last (messages, `psrun policy`). */
const char *policy_action_name_at(size_t i, uint32_t *bit);
/* An index URL: http:// or https://, a host name or address, an optional
 * port and path; no credentials, query, fragment, spaces or quotes. */
int policy_normalize_url(const char *in, char **ret, psrun_error *err);
/* install_allow_domains' default: @pypi and @npm, expanded. */
int policy_install_domains_default(char ***ret, size_t *n);
/* Cross-field checks of the session keys, for policy_validate(). */
int policy_check_install(const struct policy *p, psrun_error *err);

/* ---- network keys (policy/policy-net.c) ---- */

/* "192.0.2.0/24", "2001:db8::/32", a bare address (a host route);
 * with_port also takes "192.0.2.1/32:443" and "[2001:db8::1]:443". Host
 * bits must be zero. Pure. */
int policy_parse_cidr(const char *s, bool with_port, struct cidr *ret, psrun_error *err);
/* The names behind "@pypi" etc., NULL-terminated; NULL for an unknown preset. */
const char *const *policy_domain_preset(const char *name);
/* The preset names, for messages and docs. */
extern const char *const policy_domain_preset_names[];
int policy_normalize_cidr(const char *in, char **ret, psrun_error *err);
int policy_normalize_cidr_port(const char *in, char **ret, psrun_error *err);
int policy_normalize_ip(const char *in, char **ret, psrun_error *err);
/* Cross-field checks of the network keys, for policy_validate(). */
int policy_check_network(const struct policy *p, psrun_error *err);
/* For a sandbox without installs (psrun run): the shared network keys
 * mean nothing with network none, whatever install_network says. */
int policy_check_network_alone(const struct policy *p, psrun_error *err);

/* Copy s into buf for a one-line message: control characters, quotes and
 * backslashes escaped, long values cut with "...". Returns buf. */
const char *policy_escape(const char *s, char *buf, size_t size);

/* The closest of n candidates to word, or NULL: edit distance <= 2, else the
 * one candidate that word (>= 2 characters) begins, else the longest candidate
 * (>= 3 characters) that begins word. Case and '-' vs '_' don't count. */
const char *policy_suggest_from(const char *word, const char *const *candidates, size_t n);

/* ---- image keys (policy/policy-image.c) ---- */

/* A toolchain `tools` may name: present when any of its commands is on the
 * root's PATH. */
struct policy_tool {
        const char *name;
        const char *commands[4]; /* NULL-terminated */
};
const struct policy_tool *policy_tool_find(const char *name);
const struct policy_tool *policy_tool_at(size_t i); /* NULL past the last */
int policy_normalize_tool(const char *in, char **ret, psrun_error *err);
/* `image`: oci:DIR[:TAG], docker-archive:FILE, or a registry reference
 * kept as one word (its grammar is checked by the planner). */
int policy_normalize_image(const char *in, char **ret, psrun_error *err);
int policy_normalize_registry(const char *in, char **ret, psrun_error *err);
/* oci:DIR[:TAG] into its parts (*tag NULL when none); -ENOMEM. */
int policy_image_split_oci(const char *ref, char **dir, char **tag);
int policy_check_image(const struct policy *p, psrun_error *err);
