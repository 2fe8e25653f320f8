/* SPDX-License-Identifier: MIT */
/*
 * Seccomp: compile a struct seccomp_profile with libseccomp in the parent,
 * export the classic BPF, and load it in the child with one raw seccomp(2).
 *
 * libseccomp is only ever called here, before clone3(): it allocates, and its
 * seccomp_load() would also set no_new_privs behind the caller's back. The
 * child gets a plain array of sock_filter instructions.
 */
#include "policy/seccomp.h"

#include <ctype.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"

/* The kernel truncates an errno action's data to MAX_ERRNO; refuse instead of
 * silently changing what the profile asked for. */
#define SECCOMP_ERRNO_MAX   4095
#define SECCOMP_ACTION_DATA 0xffffU

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1U << 5)
#endif

/* libseccomp knows fewer than 32 architectures; native is always one of them. */
#define SECCOMP_ARCH_MAX 32

struct action_info {
        const char *name;
        uint32_t scmp;     /* libseccomp action, data bits zero */
        uint32_t data_max; /* 0: the action takes no data */
        bool supported;
};

static const struct action_info action_table[] = {
        [SECCOMP_ACT_ALLOW_] = {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, 0, true},
        [SECCOMP_ACT_ERRNO_] = {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), SECCOMP_ERRNO_MAX, true},
        [SECCOMP_ACT_KILL_PROCESS_] = {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, 0, true},
        [SECCOMP_ACT_KILL_THREAD_] = {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, 0, true},
        [SECCOMP_ACT_TRAP_] = {"SCMP_ACT_TRAP", SCMP_ACT_TRAP, 0, true},
        [SECCOMP_ACT_LOG_] = {"SCMP_ACT_LOG", SCMP_ACT_LOG, 0, true},
        [SECCOMP_ACT_TRACE_] = {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), SECCOMP_ACTION_DATA, true},
        /* Only with a listener, for an agent to answer (profile->notify). */
        [SECCOMP_ACT_NOTIFY_] = {"SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, 0, true},
};

static const struct {
        const char *name;
        enum scmp_compare scmp;
} cmp_table[] = {
        [SECCOMP_CMP_NE_] = {"SCMP_CMP_NE", SCMP_CMP_NE},
        [SECCOMP_CMP_LT_] = {"SCMP_CMP_LT", SCMP_CMP_LT},
        [SECCOMP_CMP_LE_] = {"SCMP_CMP_LE", SCMP_CMP_LE},
        [SECCOMP_CMP_EQ_] = {"SCMP_CMP_EQ", SCMP_CMP_EQ},
        [SECCOMP_CMP_GE_] = {"SCMP_CMP_GE", SCMP_CMP_GE},
        [SECCOMP_CMP_GT_] = {"SCMP_CMP_GT", SCMP_CMP_GT},
        [SECCOMP_CMP_MASKED_EQ_] = {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

static const struct {
        const char *name;
        unsigned flag;
        bool supported;
} flag_table[] = {
        {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC, true},
        {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG, true},
        {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW, true},
        /* The remaining flags only make sense with a user-notification
         * listener, which NOTIFY does not support yet. */
        {"SECCOMP_FILTER_FLAG_NEW_LISTENER", SECCOMP_FILTER_FLAG_NEW_LISTENER, false},
        {"SECCOMP_FILTER_FLAG_TSYNC_ESRCH", SECCOMP_FILTER_FLAG_TSYNC_ESRCH, false},
        {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, false},
};

const char *seccomp_action_kind_to_string(enum seccomp_action_kind kind)
{
        if ((size_t) kind >= ARRAY_SIZE(action_table))
                return NULL;
        return action_table[kind].name;
}

int seccomp_action_kind_from_string(const char *name)
{
        if (!name)
                return -EINVAL;
        /* The OCI spec still lists the pre-2.4 name for "kill the thread". */
        if (strcmp(name, "SCMP_ACT_KILL") == 0)
                return SECCOMP_ACT_KILL_THREAD_;
        for (size_t i = 0; i < ARRAY_SIZE(action_table); i++)
                if (strcmp(name, action_table[i].name) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *seccomp_cmp_op_to_string(enum seccomp_cmp_op op)
{
        if ((size_t) op >= ARRAY_SIZE(cmp_table))
                return NULL;
        return cmp_table[op].name;
}

int seccomp_cmp_op_from_string(const char *name)
{
        if (!name)
                return -EINVAL;
        for (size_t i = 0; i < ARRAY_SIZE(cmp_table); i++)
                if (strcmp(name, cmp_table[i].name) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *seccomp_filter_flag_to_string(unsigned flag)
{
        for (size_t i = 0; i < ARRAY_SIZE(flag_table); i++)
                if (flag_table[i].flag == flag)
                        return flag_table[i].name;
        return NULL;
}

int seccomp_filter_flag_from_string(const char *name)
{
        if (!name)
                return -EINVAL;
        for (size_t i = 0; i < ARRAY_SIZE(flag_table); i++)
                if (strcmp(name, flag_table[i].name) == 0)
                        return (int) flag_table[i].flag;
        return -EINVAL;
}

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

static int action_to_scmp(const struct seccomp_action *action, bool notify, const char *what,
                          uint32_t *ret, psrun_error *err)
{
        if ((size_t) action->kind >= ARRAY_SIZE(action_table))
                return psrun_error_set(err, EINVAL, "seccomp: %s: unknown action %d", what,
                                       (int) action->kind);
        const struct action_info *info = &action_table[action->kind];
        if (action->kind == SECCOMP_ACT_NOTIFY_ && !notify)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "seccomp: %s: %s needs a listener (an OCI config's "
                                       "linux.seccomp.listenerPath)",
                                       what, info->name);
        if (!info->supported)
                return psrun_error_set(err, EOPNOTSUPP, "seccomp: %s: %s is not supported", what,
                                       info->name);
        if (info->data_max == 0) {
                *ret = info->scmp;
                return 0;
        }
        if (action->errno_ret > info->data_max)
                return psrun_error_set(err, EINVAL,
                                       "seccomp: %s: %s value %u out of range (max %u)", what,
                                       info->name, action->errno_ret, info->data_max);
        *ret = info->scmp | action->errno_ret;
        return 0;
}

/* "x86_64", or the OCI spelling "SCMP_ARCH_X86_64": libseccomp's names are the
 * OCI ones without the prefix, in lower case. */
static uint32_t arch_from_name(const char *name)
{
        static const char oci_prefix[] = "SCMP_ARCH_";
        char lower[32];

        if (strncmp(name, oci_prefix, sizeof(oci_prefix) - 1) == 0)
                name += sizeof(oci_prefix) - 1;
        size_t len = strlen(name);
        if (len == 0 || len >= sizeof(lower))
                return 0;
        for (size_t i = 0; i <= len; i++)
                lower[i] = (char) tolower((unsigned char) name[i]);
        return seccomp_arch_resolve_name(lower);
}

static int check_flags(unsigned flags, psrun_error *err)
{
        unsigned known = 0;

        for (size_t i = 0; i < ARRAY_SIZE(flag_table); i++) {
                known |= flag_table[i].flag;
                if ((flags & flag_table[i].flag) && !flag_table[i].supported)
                        return psrun_error_set(err, EOPNOTSUPP, "seccomp: flag %s is not supported",
                                               flag_table[i].name);
        }
        if (flags & ~known)
                return psrun_error_set(err, EINVAL, "seccomp: unknown filter flags 0x%x",
                                       flags & ~known);
        return 0;
}

/* Whether `name` is a real syscall on at least one architecture of the
 * filter. libseccomp hands out negative "pseudo" numbers for syscalls that
 * exist only elsewhere (socketcall on x86_64); a rule for those is dead code. */
static bool syscall_known(const char *name, int native_nr, const uint32_t *arches, size_t n_arches)
{
        if (native_nr >= 0)
                return true;
        if (native_nr == __NR_SCMP_ERROR)
                return false;
        for (size_t i = 0; i < n_arches; i++)
                if (seccomp_syscall_resolve_name_arch(arches[i], name) >= 0)
                        return true;
        return false;
}

static int add_rule(scmp_filter_ctx ctx, const struct seccomp_rule *rule, size_t idx,
                    uint32_t default_action, bool notify, const uint32_t *arches, size_t n_arches,
                    psrun_error *err)
{
        struct scmp_arg_cmp cmps[6];
        uint32_t action;
        char what[96];
        int r;

        if (!rule->syscall || !*rule->syscall)
                return psrun_error_set(err, EINVAL, "seccomp: rule %zu: no syscall name", idx);
        snprintf(what, sizeof(what), "rule %zu (%s)", idx, rule->syscall);

        r = action_to_scmp(&rule->action, notify, what, &action, err);
        if (r < 0)
                return r;
        if (rule->n_args > ARRAY_SIZE(cmps))
                return psrun_error_set(err, EINVAL,
                                       "seccomp: %s: %zu argument comparisons (max %zu)", what,
                                       rule->n_args, ARRAY_SIZE(cmps));
        if (rule->n_args > 0 && !rule->args)
                return psrun_error_set(err, EINVAL, "seccomp: %s: missing argument comparisons",
                                       what);
        for (size_t i = 0; i < rule->n_args; i++) {
                const struct seccomp_arg_cmp *a = &rule->args[i];
                if (a->index > 5)
                        return psrun_error_set(err, EINVAL,
                                               "seccomp: %s: argument index %u (max 5)", what,
                                               a->index);
                if ((size_t) a->op >= ARRAY_SIZE(cmp_table))
                        return psrun_error_set(err, EINVAL, "seccomp: %s: unknown operator %d",
                                               what, (int) a->op);
                cmps[i] = (struct scmp_arg_cmp){
                        .arg = a->index,
                        .op = cmp_table[a->op].scmp,
                        .datum_a = a->value,
                        .datum_b = a->value_two,
                };
        }

        /* A rule whose action is the default action changes nothing (libseccomp
         * refuses it with EACCES). The default profile lists its denials that
         * way on purpose: as documentation, and so they still hold if the
         * default action is ever relaxed. */
        if (action == default_action)
                return 0;

        /* Profiles name syscalls of every architecture (Docker's and the OCI
         * examples do); one unknown here is not an error. */
        int nr = seccomp_syscall_resolve_name(rule->syscall);
        if (!syscall_known(rule->syscall, nr, arches, n_arches))
                return 0;

        /* Two comparisons of one argument cannot both be one rule's
         * (libseccomp refuses it): such a rule is one rule per comparison,
         * any of which matches, as runc and crun read it. runtime-tools'
         * generator wrote personality's three allowed values so. */
        bool repeated = false;
        for (size_t i = 0; i < rule->n_args; i++)
                for (size_t k = 0; k < i; k++)
                        repeated = repeated || cmps[i].arg == cmps[k].arg;
        if (repeated) {
                for (size_t i = 0; i < rule->n_args; i++) {
                        r = seccomp_rule_add_array(ctx, action, nr, 1, &cmps[i]);
                        if (r < 0)
                                return psrun_error_errno(
                                        err, r, "seccomp: %s: libseccomp rejected the rule", what);
                }
                return 0;
        }
        r = seccomp_rule_add_array(ctx, action, nr, (unsigned) rule->n_args, cmps);
        if (r < 0)
                return psrun_error_errno(err, r, "seccomp: %s: libseccomp rejected the rule", what);
        return 0;
}

static int add_architectures(scmp_filter_ctx ctx, const struct seccomp_profile *profile,
                             uint32_t *arches, size_t *n_arches, psrun_error *err)
{
        arches[0] = seccomp_arch_native();
        *n_arches = 1;

        if (profile->n_architectures > 0 && !profile->architectures)
                return psrun_error_set(err, EINVAL, "seccomp: architectures list missing");
        /* The native architecture always stays in the filter (seccomp_init
         * put it there): without it every syscall psrun's own child makes
         * would take the bad-architecture action. */
        for (size_t i = 0; i < profile->n_architectures; i++) {
                const char *name = profile->architectures[i];
                uint32_t token = name ? arch_from_name(name) : 0;
                if (token == 0)
                        return psrun_error_set(err, EINVAL, "seccomp: unknown architecture '%s'",
                                               name ? name : "(null)");
                int r = seccomp_arch_add(ctx, token);
                if (r == -EEXIST)
                        continue;
                if (r < 0)
                        return psrun_error_errno(err, r, "seccomp: add architecture '%s'", name);
                if (*n_arches >= SECCOMP_ARCH_MAX)
                        return psrun_error_set(err, E2BIG, "seccomp: too many architectures");
                arches[(*n_arches)++] = token;
        }
        return 0;
}

static int export_program(scmp_filter_ctx ctx, struct seccomp_program *out, psrun_error *err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ struct sock_filter *insns = NULL;
        struct stat st;

        fd = memfd_create("psrun-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "seccomp: memfd_create");
        int r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return psrun_error_errno(err, r, "seccomp: export BPF");
        if (fstat(fd, &st) < 0)
                return psrun_error_errno(err, errno, "seccomp: fstat exported BPF");

        size_t size = (size_t) st.st_size;
        if (size == 0 || size % sizeof(struct sock_filter) != 0)
                return psrun_error_set(err, EPROTO, "seccomp: exported BPF has odd size %zu", size);
        size_t len = size / sizeof(struct sock_filter);
        /* The kernel refuses longer classic BPF programs; say so here, where
         * the profile can still be named, rather than as EINVAL in the child. */
        if (len > BPF_MAXINSNS)
                return psrun_error_set(err, E2BIG,
                                       "seccomp: filter has %zu instructions (kernel max %d)", len,
                                       BPF_MAXINSNS);

        insns = malloc(size);
        if (!insns)
                return psrun_error_errno(err, ENOMEM, "seccomp: allocate %zu bytes", size);
        size_t done = 0;
        while (done < size) {
                ssize_t n = pread(fd, (char *) insns + done, size - done, (off_t) done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return psrun_error_errno(err, errno, "seccomp: read exported BPF");
                if (n == 0)
                        return psrun_error_set(err, EPROTO, "seccomp: exported BPF truncated");
                done += (size_t) n;
        }

        out->insns = TAKE_PTR(insns);
        out->len = len;
        return 0;
}

int seccomp_compile(const struct seccomp_profile *profile, struct seccomp_program *out,
                    psrun_error *err)
{
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        uint32_t arches[SECCOMP_ARCH_MAX];
        size_t n_arches = 0;
        uint32_t default_action, badarch_action;
        int r;

        if (!profile || !out)
                return psrun_error_set(err, EINVAL, "seccomp: no profile");
        *out = (struct seccomp_program){0};

        r = action_to_scmp(&profile->default_action, profile->notify, "default action",
                           &default_action, err);
        if (r < 0)
                return r;
        r = action_to_scmp(&profile->badarch_action, profile->notify, "bad-architecture action",
                           &badarch_action, err);
        if (r < 0)
                return r;
        /* An allowing bad-arch action would let every syscall made through a
         * foreign ABI (int $0x80, x32) past the filter unchecked. A zeroed
         * profile struct means ALLOW, so this also catches a forgotten field. */
        if (badarch_action == SCMP_ACT_ALLOW || badarch_action == SCMP_ACT_LOG)
                return psrun_error_set(err, EINVAL,
                                       "seccomp: bad-architecture action must deny, not %s",
                                       action_table[profile->badarch_action.kind].name);
        /* With a listener, NEW_LISTENER is psrun's to add at load time. */
        r = check_flags(
                profile->flags &
                        ~(profile->notify ? (unsigned) SECCOMP_FILTER_FLAG_NEW_LISTENER : 0U),
                err);
        if (r < 0)
                return r;
        if (profile->n_rules > 0 && !profile->rules)
                return psrun_error_set(err, EINVAL, "seccomp: rules missing");

        ctx = seccomp_init(default_action);
        if (!ctx)
                return psrun_error_set(err, EINVAL,
                                       "seccomp: libseccomp refused the default action");
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, badarch_action);
        if (r < 0)
                return psrun_error_errno(err, r, "seccomp: set bad-architecture action");
        /* A binary search over syscall numbers instead of one comparison per
         * allowed syscall: the default profile allows ~300. Only speed is at
         * stake, so an older libseccomp without it is fine. */
        (void) seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

        r = add_architectures(ctx, profile, arches, &n_arches, err);
        if (r < 0)
                return r;

        for (size_t i = 0; i < profile->n_rules; i++) {
                r = add_rule(ctx, &profile->rules[i], i, default_action, profile->notify, arches,
                             n_arches, err);
                if (r < 0)
                        return r;
        }

        r = export_program(ctx, out, err);
        if (r < 0)
                return r;
        out->flags = profile->flags & ~(unsigned) SECCOMP_FILTER_FLAG_NEW_LISTENER;
        return 0;
}

void seccomp_program_free(struct seccomp_program *prog)
{
        if (!prog)
                return;
        free(prog->insns);
        *prog = (struct seccomp_program){0};
}

int seccomp_program_load(const struct seccomp_program *prog)
{
        /* Runs between clone3() and execve(): raw syscall only, no libseccomp,
         * nothing that allocates. */
        if (!prog || !prog->insns || prog->len == 0 || prog->len > BPF_MAXINSNS)
                return -EINVAL;

        struct sock_fprog fprog = {
                .len = (unsigned short) prog->len,
                .filter = prog->insns,
        };
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, prog->flags, &fprog);
        if (r < 0)
                return -errno;
        /* With TSYNC a positive return is the id of a thread that could not be
         * synchronised; nothing was installed. */
        if (r > 0)
                return -EBUSY;
        return 0;
}

int seccomp_program_load_with_listener(const struct seccomp_program *prog, int *listener)
{
        *listener = -1;
        if (!prog || !prog->insns || prog->len == 0 || prog->len > BPF_MAXINSNS)
                return -EINVAL;
        struct sock_fprog fprog = {.len = (unsigned short) prog->len, .filter = prog->insns};
        unsigned flags = (prog->flags & ~(unsigned) SECCOMP_FILTER_FLAG_TSYNC) |
                         SECCOMP_FILTER_FLAG_NEW_LISTENER;
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
        if (r < 0)
                return -errno;
        *listener = (int) r;
        return 0;
}
