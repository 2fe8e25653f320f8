/* SPDX-License-Identifier: MIT */
/*
 * The seccomp listener: the filter's refusals as notifications, each
 * answered with the errno the filter gave before (policy/seccomp-notify.h).
 */
#include "policy/seccomp-notify.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif

#define X32_SYSCALL_BIT 0x40000000

/* ---- running a program ---- */

/* What one run of a program on a call did: its verdict, and whether that
 * verdict depends on the call's architecture and number alone, reached
 * by a `jeq #nr` on the number (at `last_jump`, taken) straight to the
 * return. */
struct bpf_run {
        uint32_t ret;
        bool by_number; /* only loads of arch and nr, jumps on constants */
        bool last_jeq_nr;
        size_t last_jump;
};

static int bpf_load_word(const struct seccomp_data *d, uint32_t off, uint32_t *v)
{
        if (off % 4 || off > sizeof(*d) - sizeof(*v))
                return -EINVAL;
        memcpy(v, (const char *) d + off, sizeof(*v));
        return 0;
}

/* Classic BPF as the kernel runs a seccomp filter, for what libseccomp
 * emits; anything else is -EINVAL. Jumps only go forward, so the run
 * ends within len steps. */
static int bpf_run(const struct seccomp_program *prog, const struct seccomp_data *d,
                   struct bpf_run *out)
{
        uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
        bool a_is_nr = false;
        *out = (struct bpf_run){.by_number = true};
        for (size_t pc = 0; pc < prog->len; pc++) {
                const struct sock_filter *f = &prog->insns[pc];
                size_t skip = 0;
                bool jump = false, taken = false;
                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        if (bpf_load_word(d, f->k, &a) < 0)
                                return -EINVAL;
                        a_is_nr = f->k == offsetof(struct seccomp_data, nr);
                        if (!a_is_nr && f->k != offsetof(struct seccomp_data, arch))
                                out->by_number = false;
                        break;
                case BPF_LD | BPF_MEM:
                        a = mem[f->k % BPF_MEMWORDS];
                        a_is_nr = out->by_number = false;
                        break;
                case BPF_LDX | BPF_MEM:
                        x = mem[f->k % BPF_MEMWORDS];
                        break;
                case BPF_ST:
                        mem[f->k % BPF_MEMWORDS] = a;
                        break;
                case BPF_STX:
                        mem[f->k % BPF_MEMWORDS] = x;
                        break;
                case BPF_ALU | BPF_AND | BPF_K:
                        a &= f->k;
                        a_is_nr = out->by_number = false;
                        break;
                case BPF_ALU | BPF_OR | BPF_K:
                        a |= f->k;
                        a_is_nr = out->by_number = false;
                        break;
                case BPF_MISC | BPF_TAX:
                        x = a;
                        break;
                case BPF_MISC | BPF_TXA:
                        a = x;
                        a_is_nr = out->by_number = false;
                        break;
                case BPF_JMP | BPF_JA:
                        skip = f->k;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        jump = true;
                        taken = a == f->k;
                        break;
                case BPF_JMP | BPF_JGT | BPF_K:
                        jump = true;
                        taken = a > f->k;
                        break;
                case BPF_JMP | BPF_JGE | BPF_K:
                        jump = true;
                        taken = a >= f->k;
                        break;
                case BPF_JMP | BPF_JSET | BPF_K:
                        jump = true;
                        taken = (a & f->k) != 0;
                        break;
                case BPF_RET | BPF_K:
                        out->ret = f->k;
                        return 0;
                case BPF_RET | BPF_A:
                        out->ret = a;
                        out->by_number = false;
                        return 0;
                default:
                        return -EINVAL;
                }
                if (jump) {
                        skip = taken ? f->jt : f->jf;
                        out->last_jump = pc;
                        out->last_jeq_nr =
                                taken && a_is_nr && f->code == (BPF_JMP | BPF_JEQ | BPF_K);
                }
                if (skip >= prog->len - pc)
                        return -EINVAL;
                pc += skip;
        }
        return -EINVAL;
}

static struct seccomp_data data_of(const struct seccomp_refusal *r)
{
        struct seccomp_data d = {.nr = r->nr, .arch = r->arch, .instruction_pointer = r->ip};
        memcpy(d.args, r->args, sizeof(d.args));
        return d;
}

bool seccomp_program_allows(const struct seccomp_program *prog, const struct seccomp_refusal *r)
{
        struct seccomp_data d = data_of(r);
        struct bpf_run run;
        return prog && prog->len && bpf_run(prog, &d, &run) == 0 && run.ret == SECCOMP_RET_ALLOW;
}

/* ---- a filter of the command's own ---- */

/* The calls that stack a filter, and the arguments that make them do it:
 * seccomp(SECCOMP_SET_MODE_FILTER, ...), prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER, ...). Strict mode is left alone: it kills, it
 * hides no EPERM. */
struct install_call {
        const char *syscall;
        size_t n_args;
        struct {
                unsigned index;
                uint32_t value;
                /* The kernel compares all 64 bits (an unsigned long), not
                 * only the int the filter checks. */
                bool wide;
        } args[2];
};

static const struct install_call install_calls[] = {
        {"seccomp", 1, {{0, SECCOMP_SET_MODE_FILTER, false}}},
        {"prctl", 2, {{0, PR_SET_SECCOMP, false}, {1, SECCOMP_MODE_FILTER, true}}},
};

/* The ABIs a profile may allow alongside the native one, as libseccomp
 * names them: x32 calls come with the native audit arch. */
static const uint32_t foreign_abis[][2] = {
        /* {libseccomp token, the arch a notification gives} */
        {SCMP_ARCH_X86, AUDIT_ARCH_I386},
        {SCMP_ARCH_X32, AUDIT_ARCH_X86_64},
        {SCMP_ARCH_ARM, AUDIT_ARCH_ARM},
};

/* The filter checks the low word: the kernel reads these arguments as
 * int or unsigned int, or (wide) fails the call when the high word is
 * set, which the watch sees (seccomp_refusal_installs_filter()). */
static uint32_t arg_low_offset(unsigned index)
{
        uint32_t off = (uint32_t) (offsetof(struct seccomp_data, args) + 8 * index);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        off += 4;
#endif
        return off;
}

/* Inserts `block` (n instructions) right after instruction j, a `jeq`
 * whose true branch now enters the block and whose false branch keeps
 * its target; every jump before it across the insertion is lengthened.
 * -ERANGE when a conditional jump would need more than its 8 bits. */
static int insert_after(struct seccomp_program *p, size_t j, const struct sock_filter *block,
                        size_t n)
{
        if (p->len + n > BPF_MAXINSNS)
                return -E2BIG;
        struct sock_filter *insns = malloc((p->len + n) * sizeof(*insns));
        if (!insns)
                return -ENOMEM;
        memcpy(insns, p->insns, (j + 1) * sizeof(*insns));
        memcpy(insns + j + 1, block, n * sizeof(*insns));
        memcpy(insns + j + 1 + n, p->insns + j + 1, (p->len - j - 1) * sizeof(*insns));
        for (size_t i = 0; i < j; i++) {
                struct sock_filter *f = &insns[i];
                if (BPF_CLASS(f->code) != BPF_JMP)
                        continue;
                if (f->code == (BPF_JMP | BPF_JA)) {
                        if (i + 1 + f->k > j)
                                f->k += (uint32_t) n;
                        continue;
                }
                unsigned jt = f->jt, jf = f->jf;
                if (i + 1 + jt > j)
                        jt += (unsigned) n;
                if (i + 1 + jf > j)
                        jf += (unsigned) n;
                if (jt > 255 || jf > 255) {
                        free(insns);
                        return -ERANGE;
                }
                f->jt = (uint8_t) jt;
                f->jf = (uint8_t) jf;
        }
        unsigned jf = insns[j].jf + (unsigned) n;
        if (jf > 255) {
                free(insns);
                return -ERANGE;
        }
        insns[j].jt = 0;
        insns[j].jf = (uint8_t) jf;
        free(p->insns);
        p->insns = insns;
        p->len += n;
        return 0;
}

/* Where the program allows `c` (arch, number) whatever its arguments, by
 * a `jeq` on the number straight to `ret ALLOW`: that `jeq` now leads to
 * a check of c's arguments, USER_NOTIF for an install, ALLOW for the rest.
 * Returns 1 when it did, 0 when the program has no such path (the call
 * is refused, so already reported, or allowed only for some arguments),
 * or -errno. */
static int notify_install(struct seccomp_program *p, const struct install_call *c, uint32_t token,
                          uint32_t arch)
{
        int nr = seccomp_syscall_resolve_name_arch(token, c->syscall);
        if (nr < 0)
                return 0;
        struct seccomp_data d = {.nr = nr, .arch = arch};
        for (size_t i = 0; i < c->n_args; i++)
                d.args[c->args[i].index] = c->args[i].value;
        struct bpf_run run;
        if (bpf_run(p, &d, &run) < 0 || run.ret != SECCOMP_RET_ALLOW || !run.by_number ||
            !run.last_jeq_nr || p->insns[run.last_jump].k != (uint32_t) nr)
                return 0;
        /* ld arg; jeq value (else to ALLOW) ... ; ret USER_NOTIF; ret ALLOW */
        struct sock_filter block[2 * ARRAY_SIZE(c->args) + 2];
        size_t n = 0, last = 2 * c->n_args + 1;
        for (size_t i = 0; i < c->n_args; i++) {
                block[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                           arg_low_offset(c->args[i].index));
                block[n] = (struct sock_filter) BPF_JUMP(
                        BPF_JMP | BPF_JEQ | BPF_K, c->args[i].value, 0, (uint8_t) (last - n - 1));
                n++;
        }
        block[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
        block[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        int r = insert_after(p, run.last_jump, block, n);
        return r < 0 ? r : 1;
}

int seccomp_program_notify(const struct seccomp_program *prog, struct seccomp_program *out)
{
        *out = (struct seccomp_program){0};
        if (!prog || prog->len == 0)
                return 0;
        /* Only returns with the constant: libseccomp ends every path with a
         * `ret K`; a `ret A` (never emitted by it) would be left alone, so a
         * refusal through it would stay an unreported EPERM, not an allow. */
        const uint32_t refuse = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
        struct seccomp_program p = {.len = prog->len, .flags = prog->flags};
        p.insns = malloc(prog->len * sizeof(*p.insns));
        if (!p.insns)
                return -ENOMEM;
        memcpy(p.insns, prog->insns, prog->len * sizeof(*p.insns));
        int changed = 0;
        for (size_t i = 0; i < p.len; i++)
                if (p.insns[i].code == (BPF_RET | BPF_K) && p.insns[i].k == refuse) {
                        p.insns[i].k = SECCOMP_RET_USER_NOTIF;
                        changed++;
                }
        /* A filter the command stacks on psrun's hides psrun's refusals
         * behind its own: the kernel takes the most restrictive action of
         * all filters, and ERRNO outranks USER_NOTIF. Where the profile
         * allows installing one, the install becomes a notification too,
         * which the watch lets continue and reports. */
        uint32_t native = seccomp_arch_native();
        for (size_t i = 0; i < ARRAY_SIZE(install_calls); i++) {
                for (size_t k = 0; k <= ARRAY_SIZE(foreign_abis); k++) {
                        uint32_t token = k ? foreign_abis[k - 1][0] : native,
                                 arch = k ? foreign_abis[k - 1][1] : native;
                        if (k && token == native)
                                continue;
                        int r = notify_install(&p, &install_calls[i], token, arch);
                        /* Without room for the check the install stays a
                         * plain ALLOW: unreported, as before
                         * (docs/security.md). */
                        if (r == -ENOMEM) {
                                seccomp_program_free(&p);
                                return r;
                        }
                        if (r > 0)
                                changed += r;
                }
        }
        if (changed == 0) {
                seccomp_program_free(&p);
                return 0;
        }
        p.flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
        *out = p;
        return changed;
}

int seccomp_program_load_listener(const struct seccomp_program *notify,
                                  const struct seccomp_program *plain, int *listener)
{
        /* Between clone3() and execve(): raw syscalls only. */
        *listener = -1;
        if (!notify || !notify->insns || notify->len == 0 || notify->len > BPF_MAXINSNS)
                return -EINVAL;
        struct sock_fprog fprog = {.len = (unsigned short) notify->len, .filter = notify->insns};
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, notify->flags, &fprog);
        if (r >= 0) {
                *listener = (int) r;
                return 0;
        }
        if (errno != EBUSY)
                return -errno;
        return seccomp_program_load(plain);
}

int seccomp_notify_recv(int listener, struct seccomp_refusal *out)
{
        /* The kernel refuses a buffer that is not zeroed. */
        struct seccomp_notif n;
        memset(&n, 0, sizeof(n));
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
                return -errno;
        *out = (struct seccomp_refusal){
                .id = n.id,
                .tid = (pid_t) n.pid,
                .nr = n.data.nr,
                .arch = n.data.arch,
                .ip = n.data.instruction_pointer,
        };
        memcpy(out->args, n.data.args, sizeof(out->args));
        return 0;
}

int seccomp_notify_answer(int listener, uint64_t id, int err)
{
        struct seccomp_notif_resp resp = {.id = id, .val = 0, .error = -err, .flags = 0};
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? -errno : 0;
}

int seccomp_notify_continue(int listener, uint64_t id)
{
        /* The kernel warns that CONTINUE is no way to make a security
         * decision: memory the call points to may change before it runs.
         * None is made here: the watch continues only calls the policy's
         * own program allows (seccomp_program_allows(), on the registers,
         * which cannot change), so the call does what it would have done
         * without the report. */
        struct seccomp_notif_resp resp = {
                .id = id, .val = 0, .error = 0, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? -errno : 0;
}

bool seccomp_notify_pending(int listener, uint64_t id)
{
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* ---- names ---- */

struct flag_name {
        uint64_t value;
        const char *name;
};

static const struct flag_name namespace_flags[] = {
        {CLONE_NEWNS, "CLONE_NEWNS"},         {CLONE_NEWUTS, "CLONE_NEWUTS"},
        {CLONE_NEWIPC, "CLONE_NEWIPC"},       {CLONE_NEWUSER, "CLONE_NEWUSER"},
        {CLONE_NEWPID, "CLONE_NEWPID"},       {CLONE_NEWNET, "CLONE_NEWNET"},
        {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {CLONE_NEWTIME, "CLONE_NEWTIME"},
};

static const struct flag_name socket_families[] = {
        {AF_PACKET, "AF_PACKET"},
        {AF_VSOCK, "AF_VSOCK"},
        {AF_BLUETOOTH, "AF_BLUETOOTH"},
        {AF_CAN, "AF_CAN"},
        {AF_KEY, "AF_KEY"},
        {AF_ALG, "AF_ALG"},
        {AF_XDP, "AF_XDP"},
        {AF_TIPC, "AF_TIPC"},
        {AF_RDS, "AF_RDS"},
        {AF_NFC, "AF_NFC"},
        {AF_X25, "AF_X25"},
        {AF_AX25, "AF_AX25"},
        {AF_APPLETALK, "AF_APPLETALK"},
        {AF_IPX, "AF_IPX"},
        {AF_LLC, "AF_LLC"},
        {AF_PPPOX, "AF_PPPOX"},
        {AF_ATMPVC, "AF_ATMPVC"},
        {AF_ATMSVC, "AF_ATMSVC"},
        {AF_SMC, "AF_SMC"},
        {AF_IB, "AF_IB"},
        {AF_MPLS, "AF_MPLS"},
};

/* The terminal requests the default profile refuses, by name
 * (policy/seccomp-default.c allows the others of type 'T'). */
static const struct flag_name terminal_requests[] = {
        {TIOCSTI, "TIOCSTI"},         {TIOCLINUX, "TIOCLINUX"},
        {TIOCSETD, "TIOCSETD"},       {TIOCEXCL, "TIOCEXCL"},
        {TIOCNXCL, "TIOCNXCL"},       {TCXONC, "TCXONC"},
        {TIOCCONS, "TIOCCONS"},       {TIOCVHANGUP, "TIOCVHANGUP"},
        {TIOCSSERIAL, "TIOCSSERIAL"}, {TIOCMSET, "TIOCMSET"},
        {TIOCMBIS, "TIOCMBIS"},       {TIOCMBIC, "TIOCMBIC"},
        {TIOCSBRK, "TIOCSBRK"},       {TIOCCBRK, "TIOCCBRK"},
        {TCSBRKP, "TCSBRKP"},         {TIOCSERCONFIG, "TIOCSERCONFIG"},
};

static const char *name_of(const struct flag_name *t, size_t n, uint64_t v)
{
        for (size_t i = 0; i < n; i++)
                if (t[i].value == v)
                        return t[i].name;
        return NULL;
}

static void append(char *buf, size_t len, size_t *off, const char *s)
{
        if (*off >= len)
                return;
        int n = snprintf(buf + *off, len - *off, "%s%s", *off ? "|" : "", s);
        if (n > 0)
                *off += (size_t) n;
}

/* "CLONE_NEWUSER|CLONE_NEWNET" for the namespace bits of `flags`. */
static void namespace_names(uint64_t flags, char *buf, size_t len)
{
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(namespace_flags); i++)
                if (flags & namespace_flags[i].value)
                        append(buf, len, &off, namespace_flags[i].name);
        if (!off)
                snprintf(buf, len, "0x%llx", (unsigned long long) flags);
}

static void describe_argument(const char *name, const struct seccomp_refusal *r, char *arg,
                              size_t len)
{
        /* The kernel reads these as 32-bit parameters (as the filter compares
         * them); clone's and unshare's flags are longs. */
        uint32_t a0 = (uint32_t) r->args[0], a1 = (uint32_t) r->args[1];
        const char *n;
        arg[0] = '\0';
        if (!strcmp(name, "socket") || !strcmp(name, "socketpair")) {
                n = name_of(socket_families, ARRAY_SIZE(socket_families), a0);
                if (n)
                        snprintf(arg, len, "%s", n);
                else
                        snprintf(arg, len, "family %u", a0);
        } else if (!strcmp(name, "ioctl")) {
                n = name_of(terminal_requests, ARRAY_SIZE(terminal_requests), a1);
                if (n)
                        snprintf(arg, len, "%s", n);
                else
                        snprintf(arg, len, "0x%x", a1);
        } else if (!strcmp(name, "clone") || !strcmp(name, "unshare")) {
                namespace_names(r->args[0], arg, len);
        } else if (!strcmp(name, "personality")) {
                snprintf(arg, len, "0x%x", a0);
        }
}

/* The call's name in its ABI (NULL: unknown there; free it), and the ABI
 * when it is not the native one. */
static char *refusal_name(const struct seccomp_refusal *r, const char **abi)
{
        /* x32 calls come with the native audit arch and the x32 bit. */
        uint32_t arch = r->arch;
        *abi = NULL;
        if (arch == SCMP_ARCH_X86_64 && (r->nr & X32_SYSCALL_BIT)) {
                arch = SCMP_ARCH_X32;
                *abi = "x32";
        } else if (arch != seccomp_arch_native()) {
                *abi = arch == SCMP_ARCH_X86 ? "i386" : "foreign ABI";
        }
        return seccomp_syscall_resolve_num_arch(arch, r->nr);
}

bool seccomp_refusal_installs_filter(const struct seccomp_refusal *r)
{
        const char *abi;
        _cleanup_free_ char *name = refusal_name(r, &abi);
        if (!name)
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(install_calls); i++) {
                const struct install_call *c = &install_calls[i];
                if (strcmp(name, c->syscall) != 0)
                        continue;
                bool all = true;
                for (size_t a = 0; a < c->n_args; a++) {
                        uint64_t v = r->args[c->args[a].index];
                        bool whole = c->args[a].wide && !abi;
                        if ((whole ? v : (uint32_t) v) != c->args[a].value)
                                all = false;
                }
                return all;
        }
        return false;
}

void seccomp_refusal_describe(const struct seccomp_refusal *r, bool detail, char *buf, size_t len)
{
        const char *abi;
        _cleanup_free_ char *name = refusal_name(r, &abi);
        char fallback[32];
        if (!name)
                snprintf(fallback, sizeof(fallback), "syscall %d", r->nr);
        const char *shown = name ? name : fallback;
        char arg[96] = "";
        if (detail && !abi && name)
                describe_argument(name, r, arg, sizeof(arg));
        if (abi)
                snprintf(buf, len, "%s (%s)", shown, abi);
        else if (arg[0])
                snprintf(buf, len, "%s(%s)", shown, arg);
        else
                snprintf(buf, len, "%s", shown);
}
