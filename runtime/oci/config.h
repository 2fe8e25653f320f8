/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * config.json of an OCI bundle (runtime-spec v1.x, config.md and
 * config-linux.md), parsed into plain C data that the struct owns.
 *
 * Parsing is pure: bytes in, a validated struct out, no syscalls besides
 * reading the file. Fields psrun does not know are ignored, as the spec
 * requires; a known field of the wrong type or with an invalid value is a
 * one-line error naming where it is and its JSON path:
 *   "config.json:12:20: linux.resources.memory.limit: expected an integer, got a string"
 * The text must be JSON: YAML-only syntax (anchors, aliases, tags, block
 * style, unquoted strings) is refused, since another runtime would refuse it.
 *
 * Conventions below: an optional scalar the spec gives no default is a
 * struct oci_opt_*; an optional object is a pointer, NULL when absent; a list
 * is a pointer and a count (NULL and 0 when absent); string lists are also
 * NULL-terminated, ready for execve().
 */

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "policy/seccomp.h"
#include "runtime/cgroup/resources.h"
#include "runtime/plan.h"
#include "runtime/pty.h"

/* Largest config.json accepted (file or buffer). */
#define OCI_CONFIG_MAX_SIZE (16U << 20)
/* Deepest nesting of objects and arrays accepted anywhere in the text. */
#define OCI_CONFIG_MAX_DEPTH 64
/* Most values (scalars, objects, arrays) in one document. */
#define OCI_CONFIG_MAX_NODES (1U << 18)

struct oci_id_mapping {
        uint32_t container_id;
        uint32_t host_id;
        uint32_t size; /* >= 1; neither range wraps past 2^32 */
};

/* ---- process ---- */

struct oci_user {
        uint32_t uid;
        uint32_t gid;
        struct oci_opt_u64 umask; /* 0..0xffffffff */
        uint32_t *additional_gids;
        size_t n_additional_gids;
};

/* Capability sets as masks, bit n = capability n (libcap's numbering). A
 * capability the running kernel does not know stays in the mask: whether that
 * is an error is the plan's decision, not the parser's. */
struct oci_capabilities {
        uint64_t bounding;
        uint64_t effective;
        uint64_t inheritable;
        uint64_t permitted;
        uint64_t ambient;
};

struct oci_rlimit {
        int type; /* RLIMIT_*; unique within process.rlimits */
        uint64_t soft;
        uint64_t hard; /* >= soft */
};

/* process.scheduler (sched_setattr(2)); the policies in the kernel's order. */
enum oci_sched_policy {
        OCI_SCHED_OTHER,
        OCI_SCHED_FIFO,
        OCI_SCHED_RR,
        OCI_SCHED_BATCH,
        OCI_SCHED_ISO,
        OCI_SCHED_IDLE,
        OCI_SCHED_DEADLINE,
};

struct oci_intel_rdt {
        char *clos_id;
        char *l3_cache_schema;
        char *mem_bw_schema;
};

struct oci_scheduler {
        int policy; /* enum oci_sched_policy */
        struct oci_opt_i64 nice;
        struct oci_opt_i64 priority;
        uint64_t flags;                     /* SCHED_FLAG_* */
        uint64_t runtime, deadline, period; /* ns, SCHED_DEADLINE only */
};

/* process.ioPriority (ioprio_set(2)); the classes in the kernel's numbers. */
enum oci_ioprio_class {
        OCI_IOPRIO_CLASS_RT = 1,
        OCI_IOPRIO_CLASS_BE = 2,
        OCI_IOPRIO_CLASS_IDLE = 3,
};

struct oci_io_priority {
        int klass;        /* enum oci_ioprio_class */
        int64_t priority; /* 0..7 */
};

/* process.execCPUAffinity: CPU lists ("0-3,7"), NULL or "": unchanged. */
struct oci_cpu_affinity {
        char *initial; /* the runtime's process, before it joins the container */
        char *final;   /* the process, before execve */
};

/* A CPU list into set: 0, -EINVAL (not a list, or empty) or -ERANGE. */
int oci_cpu_list_parse(const char *s, cpu_set_t *set);

struct oci_process {
        bool terminal;
        struct oci_console_size *console_size;
        struct oci_user user;
        char **args; /* >= 1 entry, args[0] not empty */
        size_t n_args;
        char **env; /* "NAME=value", NAME not empty */
        size_t n_env;
        char *cwd; /* absolute */
        struct oci_capabilities *capabilities;
        struct oci_rlimit *rlimits;
        size_t n_rlimits;
        bool no_new_privileges;
        char *apparmor_profile;
        struct oci_opt_i64 oom_score_adj; /* -1000..1000 */
        char *selinux_label;
        struct oci_scheduler *scheduler;
        struct oci_io_priority *io_priority;
        struct oci_cpu_affinity *exec_cpu_affinity; /* execs only (the spec) */
};

/* ---- root, mounts ---- */

struct oci_root {
        char *path; /* required; relative paths are relative to the bundle */
        bool readonly;
};

enum oci_bind {
        OCI_BIND_NONE,
        OCI_BIND,           /* "bind", or type "bind" without a bind option */
        OCI_BIND_RECURSIVE, /* "rbind" */
};

struct oci_mount {
        char *destination; /* absolute */
        char *type;        /* NULL: not given */
        char *source;      /* NULL: not given */
        char **options;    /* as written */
        size_t n_options;
        struct oci_id_mapping *uid_mappings; /* for "idmap"/"ridmap" */
        size_t n_uid_mappings;
        struct oci_id_mapping *gid_mappings;
        size_t n_gid_mappings;

        /* What the options mean, through one table (later options win, as
         * with mount(8)): */
        unsigned long flags;       /* MS_* to set, without MS_BIND/MS_REC/propagation */
        unsigned long clear_flags; /* MS_* an option turned off ("rw", "suid", "atime") */
        enum oci_bind bind;
        unsigned long propagation; /* 0, or MS_PRIVATE/SHARED/SLAVE/UNBINDABLE, maybe | MS_REC */
        uint64_t attr_set;         /* MOUNT_ATTR_* for mount_setattr(AT_RECURSIVE): "rro", ... */
        uint64_t attr_clr;
        bool idmap;           /* "idmap" or "ridmap" */
        bool idmap_recursive; /* "ridmap" */
        bool tmpcopyup;
        char *data; /* the options not in the table, joined with ','; NULL: none */
};

/* ---- hooks ---- */

enum oci_hook_kind {
        OCI_HOOK_PRESTART,
        OCI_HOOK_CREATE_RUNTIME,
        OCI_HOOK_CREATE_CONTAINER,
        OCI_HOOK_START_CONTAINER,
        OCI_HOOK_POSTSTART,
        OCI_HOOK_POSTSTOP,
        _OCI_HOOK_MAX,
};

struct oci_hook {
        char *path; /* absolute */
        char **args;
        size_t n_args;
        char **env;
        size_t n_env;
        struct oci_opt_i64 timeout; /* seconds, >= 1 */
};

struct oci_hook_list {
        struct oci_hook *hooks;
        size_t n;
};

struct oci_hooks {
        struct oci_hook_list lists[_OCI_HOOK_MAX];
};

/* ---- linux ---- */

struct oci_namespace {
        int type;   /* one CLONE_NEW* flag; unique within linux.namespaces */
        char *path; /* NULL: create a new namespace; else absolute, to join */
};

struct oci_device {
        char *path;           /* absolute */
        int type;             /* S_IFCHR ("c" and "u"), S_IFBLK ("b") or S_IFIFO ("p") */
        int64_t major, minor; /* 0..0xffffffff; 0 for "p" */
        struct oci_opt_u64 file_mode, uid, gid;
};

/* The OCI shape of one linux.seccomp.syscalls entry. */
struct oci_seccomp_syscall {
        char **names; /* >= 1 */
        size_t n_names;
        int action; /* enum seccomp_action_kind */
        struct oci_opt_u64 errno_ret;
        struct seccomp_arg_cmp *args; /* value/value_two as OCI's value/valueTwo */
        size_t n_args;
};

struct oci_seccomp {
        int default_action; /* enum seccomp_action_kind */
        struct oci_opt_u64 default_errno_ret;
        char **architectures; /* "SCMP_ARCH_X86_64", ... */
        size_t n_architectures;
        uint64_t flags; /* SECCOMP_FILTER_FLAG_* */
        char *listener_path;
        char *listener_metadata;
        struct oci_seccomp_syscall *syscalls;
        size_t n_syscalls;

        /* The same, ready for seccomp_compile(): one rule per syscall name,
         * in document order; it points into the fields above. */
        struct seccomp_profile profile;
};

struct oci_personality {
        int domain;   /* PER_LINUX or PER_LINUX32 */
        char **flags; /* stored; the spec defines none yet */
        size_t n_flags;
};

struct oci_time_offset {
        int64_t secs;
        uint32_t nanosecs; /* < 1000000000 */
};

struct oci_time_offsets {
        struct oci_time_offset *monotonic;
        struct oci_time_offset *boottime;
};

struct oci_linux {
        struct oci_namespace *namespaces;
        size_t n_namespaces;
        struct oci_id_mapping *uid_mappings;
        size_t n_uid_mappings;
        struct oci_id_mapping *gid_mappings;
        size_t n_gid_mappings;
        struct oci_kv *sysctl;
        size_t n_sysctl;
        struct oci_resources *resources;
        char *cgroups_path;
        struct oci_device *devices;
        size_t n_devices;
        struct oci_seccomp *seccomp;
        char **masked_paths; /* absolute */
        size_t n_masked_paths;
        char **readonly_paths; /* absolute */
        size_t n_readonly_paths;
        int rootfs_propagation; /* 0 (not given) or MS_SHARED/SLAVE/PRIVATE/UNBINDABLE [| MS_REC] */
        char *mount_label;
        struct oci_intel_rdt *intel_rdt; /* parsed to be refused: no resctrl support */
        struct oci_personality *personality;
        struct oci_time_offsets *time_offsets;
        /* intelRdt is accepted and ignored. */
};

struct oci_config {
        char *oci_version; /* "1.x..." */
        struct oci_root root;
        struct oci_process *process; /* NULL: not given (create may omit it) */
        char *hostname;
        char *domainname;
        struct oci_mount *mounts;
        size_t n_mounts;
        struct oci_hooks hooks;
        struct oci_kv *annotations;
        size_t n_annotations;
        struct oci_linux *linux_; /* `linux` is a predefined macro in GNU C */
};

/* Parse config.json text (len bytes, no terminator needed). On success *out
 * owns everything; on failure *out is zeroed and err holds one line. */
int oci_config_parse(const char *buf, size_t len, struct oci_config *out, psrun_error *err);
/* The same, messages naming the document `name`. */
int oci_config_parse_named(const char *name, const char *buf, size_t len, struct oci_config *out,
                           psrun_error *err);
/* The same from a file; messages name the file as `path` spells it. */
int oci_config_load_file(const char *path, struct oci_config *out, psrun_error *err);
/* Frees what *config owns and zeroes it. NULL-safe, idempotent. */
void oci_config_free(struct oci_config *config);

/* A lone `process` object (`psrun exec --process FILE`), and a lone
 * LinuxResources object (`psrun update --resources FILE`), parsed and checked
 * like the same object inside config.json; paths in messages start at it
 * ("args: must not be empty"). name is for messages. */
int oci_process_parse(const char *name, const char *buf, size_t len, struct oci_process *out,
                      psrun_error *err);
int oci_process_load_file(const char *path, struct oci_process *out, psrun_error *err);
void oci_process_free(struct oci_process *process);
int oci_resources_parse(const char *name, const char *buf, size_t len, struct oci_resources *out,
                        psrun_error *err);
void oci_resources_free(struct oci_resources *resources);

/* Names of the tables, for messages, `features` and round-trip tests.
 * to_string returns NULL for an unknown value; from_string -EINVAL. */
const char *oci_hook_kind_to_string(enum oci_hook_kind kind);
/* Namespace and rlimit names: runtime/plan.h. */
/* The i-th mount option psrun understands, NULL past the last. */
const char *oci_mount_option_name(size_t i);
