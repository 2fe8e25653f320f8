/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Seccomp profiles are described as data (struct seccomp_profile) and compiled
 * in the parent, with libseccomp, to a classic BPF program. The child only
 * loads the finished program: no allocation after clone3().
 */

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

enum seccomp_action_kind {
        SECCOMP_ACT_ALLOW_,
        SECCOMP_ACT_ERRNO_, /* fail with `errno_ret` */
        SECCOMP_ACT_KILL_PROCESS_,
        SECCOMP_ACT_KILL_THREAD_,
        SECCOMP_ACT_TRAP_,
        SECCOMP_ACT_LOG_,
        SECCOMP_ACT_TRACE_,  /* OCI; errno_ret is the trace value */
        SECCOMP_ACT_NOTIFY_, /* OCI; unsupported for now */
};

struct seccomp_action {
        enum seccomp_action_kind kind;
        uint32_t errno_ret;
};

enum seccomp_cmp_op {
        SECCOMP_CMP_NE_,
        SECCOMP_CMP_LT_,
        SECCOMP_CMP_LE_,
        SECCOMP_CMP_EQ_,
        SECCOMP_CMP_GE_,
        SECCOMP_CMP_GT_,
        SECCOMP_CMP_MASKED_EQ_
};

struct seccomp_arg_cmp {
        unsigned index; /* 0..5 */
        enum seccomp_cmp_op op;
        uint64_t value;
        uint64_t value_two; /* the mask's comparand for MASKED_EQ */
};

struct seccomp_rule {
        const char *syscall; /* name; unknown on this arch -> skipped */
        struct seccomp_action action;
        const struct seccomp_arg_cmp *args; /* all must match (AND) */
        size_t n_args;
};

struct seccomp_profile {
        struct seccomp_action default_action;
        struct seccomp_action badarch_action;
        const char *const *architectures; /* NULL: native only */
        size_t n_architectures;
        const struct seccomp_rule *rules;
        size_t n_rules;
        unsigned flags; /* SECCOMP_FILTER_FLAG_* to pass at load time */
        bool notify;    /* SCMP_ACT_NOTIFY allowed: loaded with a listener for an agent */
};

struct seccomp_program {
        struct sock_filter *insns;
        size_t len;
        unsigned flags; /* for seccomp(SECCOMP_SET_MODE_FILTER, flags, ...) */
};

/* The default sandbox profile: an allowlist, see policy/seccomp-default.c. */
const struct seccomp_profile *seccomp_default_profile(void);

/* Compile `profile` to BPF. */
/* The default profile compiled at build time (tools/gen-seccomp-bpf.c):
 * a copy of it, without libseccomp's cost. Returns 0 or -ENOMEM. */
int seccomp_default_program(struct seccomp_program *out);
extern const struct sock_filter seccomp_default_bpf[];
extern const size_t seccomp_default_bpf_len;
extern const unsigned seccomp_default_bpf_flags;

int seccomp_compile(const struct seccomp_profile *profile, struct seccomp_program *out,
                    psrun_error *err);
void seccomp_program_free(struct seccomp_program *prog);

/* Async-signal-safe: sets no_new_privs is NOT done here (the caller decides),
 * only loads the program. Returns 0 or -errno. */
int seccomp_program_load(const struct seccomp_program *prog);
/* The same with a user-notification listener (SECCOMP_FILTER_FLAG_NEW_LISTENER;
 * TSYNC dropped, meaningless for the single thread this runs in and refused
 * by the kernel with a listener): *listener is its fd. */
int seccomp_program_load_with_listener(const struct seccomp_program *prog, int *listener);

/* Why the default profile denies `syscall` by name (one line), or NULL when the
 * default profile has no explicit entry for it. For messages and docs. */
const char *seccomp_default_denied_reason(const char *syscall);

/* The terminal ioctls (type 'T') the default profile allows; every other
 * request of that type is refused, requests of other types are allowed. */
const uint32_t *seccomp_default_terminal_ioctls(size_t *n);

/* OCI/libseccomp spellings ("SCMP_ACT_ERRNO", "SCMP_CMP_MASKED_EQ",
 * "SECCOMP_FILTER_FLAG_LOG") <-> the enums above, for the config.json reader.
 * from_string returns the value (flags: the bit) or -EINVAL for unknown names;
 * "SCMP_ACT_KILL" is accepted as the older name of KILL_THREAD. */
const char *seccomp_action_kind_to_string(enum seccomp_action_kind kind);
int seccomp_action_kind_from_string(const char *name);
const char *seccomp_cmp_op_to_string(enum seccomp_cmp_op op);
int seccomp_cmp_op_from_string(const char *name);
const char *seccomp_filter_flag_to_string(unsigned flag);
int seccomp_filter_flag_from_string(const char *name);
