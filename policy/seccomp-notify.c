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
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

int seccomp_program_notify(const struct seccomp_program *prog, struct seccomp_program *out)
{
        *out = (struct seccomp_program){0};
        if (!prog || prog->len == 0)
                return 0;
        /* Only returns with the constant: libseccomp ends every path with a
         * `ret K`; a `ret A` (never emitted by it) would be left alone, so a
         * refusal through it would stay an unreported EPERM, not an allow. */
        const uint32_t refuse = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
        size_t changed = 0;
        for (size_t i = 0; i < prog->len; i++)
                if (prog->insns[i].code == (BPF_RET | BPF_K) && prog->insns[i].k == refuse)
                        changed++;
        if (changed == 0)
                return 0;
        struct sock_filter *insns = malloc(prog->len * sizeof(*insns));
        if (!insns)
                return -ENOMEM;
        memcpy(insns, prog->insns, prog->len * sizeof(*insns));
        for (size_t i = 0; i < prog->len; i++)
                if (insns[i].code == (BPF_RET | BPF_K) && insns[i].k == refuse)
                        insns[i].k = SECCOMP_RET_USER_NOTIF;
        out->insns = insns;
        out->len = prog->len;
        out->flags = prog->flags | SECCOMP_FILTER_FLAG_NEW_LISTENER;
        return (int) changed;
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
        };
        memcpy(out->args, n.data.args, sizeof(out->args));
        return 0;
}

int seccomp_notify_answer(int listener, uint64_t id, int err)
{
        struct seccomp_notif_resp resp = {.id = id, .val = 0, .error = -err, .flags = 0};
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

void seccomp_refusal_describe(const struct seccomp_refusal *r, bool detail, char *buf, size_t len)
{
        /* x32 calls come with the native audit arch and the x32 bit. */
        uint32_t arch = r->arch;
        const char *abi = NULL;
        if (arch == SCMP_ARCH_X86_64 && (r->nr & X32_SYSCALL_BIT)) {
                arch = SCMP_ARCH_X32;
                abi = "x32";
        } else if (arch != seccomp_arch_native()) {
                abi = arch == SCMP_ARCH_X86 ? "i386" : "foreign ABI";
        }
        _cleanup_free_ char *name = seccomp_syscall_resolve_num_arch(arch, r->nr);
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
