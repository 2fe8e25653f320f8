/* SPDX-License-Identifier: MIT */
/*
 * Seccomp: the default profile, compiled with seccomp_compile() and loaded
 * with seccomp_program_load() in a forked child. Each check runs in its own
 * grandchild, which reports its errno as its exit status, so one check cannot
 * disturb the next (unshare, personality).
 *
 * Two views of the same filter: the compiled BPF run through a small classic
 * BPF interpreter (exhaustive argument sweeps, foreign architectures this
 * kernel may not offer), and the real kernel. Custom profiles are in
 * test_seccomp_custom.c; the shared helpers in seccomp_test.h.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "seccomp_test.h"

/* Each call is harmless even if the filter wrongly let it through: bad
 * arguments make the kernel refuse it with an errno other than EPERM. */
static int call_unshare_user(void)
{
        return ERRNO_OF(unshare(CLONE_NEWUSER));
}
static int call_unshare_net(void)
{
        return ERRNO_OF(unshare(CLONE_NEWNET));
}
static int call_mount(void)
{
        return ERRNO_OF(syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
}
static int call_umount2(void)
{
        return ERRNO_OF(umount2("/psrun-test-no-such-mount", 0));
}
static int call_bpf(void)
{
        return ERRNO_OF(syscall(SYS_bpf, -1, NULL, 0));
}
static int call_keyctl(void)
{
        return ERRNO_OF(syscall(SYS_keyctl, -1L, 0L, 0L, 0L, 0L));
}
static int call_add_key(void)
{
        return ERRNO_OF(syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
}
static int call_perf_event_open(void)
{
        return ERRNO_OF(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}
static int call_userfaultfd(void)
{
        return ERRNO_OF(syscall(SYS_userfaultfd, -1));
}
static int call_io_uring_setup(void)
{
        return ERRNO_OF(syscall(SYS_io_uring_setup, 0, NULL));
}
static int call_ptrace(void)
{
        /* An unknown request on pid 0: ESRCH without a filter. */
        return ERRNO_OF(syscall(SYS_ptrace, -1L, 0L, 0L, 0L));
}
static int call_process_vm_readv(void)
{
        return ERRNO_OF(syscall(SYS_process_vm_readv, 0, NULL, 0, NULL, 0, 0));
}
static int call_kexec_load(void)
{
        return ERRNO_OF(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0xdead0000UL));
}
static int call_init_module(void)
{
        return ERRNO_OF(syscall(SYS_init_module, NULL, 0UL, ""));
}
static int call_setns(void)
{
        return ERRNO_OF(setns(-1, 0));
}
static int call_pivot_root(void)
{
        return ERRNO_OF(syscall(SYS_pivot_root, NULL, NULL));
}
static int call_open_tree(void)
{
        return ERRNO_OF(syscall(SYS_open_tree, -1, NULL, 0));
}
static int call_fsopen(void)
{
        return ERRNO_OF(syscall(SYS_fsopen, NULL, 0));
}
static int call_chroot(void)
{
        return ERRNO_OF(chroot("/psrun-test-no-such-dir"));
}
static int call_open_by_handle_at(void)
{
        return ERRNO_OF(syscall(SYS_open_by_handle_at, -1, NULL, 0));
}
static int call_clone_newns(void)
{
        long r =
                syscall(SYS_clone, (unsigned long) (CLONE_NEWNS | SIGCHLD), NULL, NULL, NULL, NULL);
        if (r == 0)
                _exit(0);
        if (r > 0)
                return waitpid((pid_t) r, NULL, 0) == r ? 0 : ECHILD;
        return errno;
}
static int call_clone_newuser_hi(void)
{
        /* Flags above bit 31 must not hide a namespace flag. */
        long r = syscall(SYS_clone, (1UL << 32) | CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
        if (r == 0)
                _exit(0);
        if (r > 0)
                return waitpid((pid_t) r, NULL, 0) == r ? 0 : ECHILD;
        return errno;
}
static int call_socket_packet(void)
{
        int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        return fd < 0 ? errno : 0;
}
static int call_socket_vsock(void)
{
        int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
        return fd < 0 ? errno : 0;
}
static int call_personality_read_implies_exec(void)
{
        return ERRNO_OF(personality(READ_IMPLIES_EXEC));
}
static int call_personality_no_randomize(void)
{
        return ERRNO_OF(personality(ADDR_NO_RANDOMIZE));
}

static const struct check denied_checks[] = {
        {"unshare(CLONE_NEWUSER)", call_unshare_user, EPERM},
        {"unshare(CLONE_NEWNET)", call_unshare_net, EPERM},
        {"mount", call_mount, EPERM},
        {"umount2", call_umount2, EPERM},
        {"bpf", call_bpf, EPERM},
        {"keyctl", call_keyctl, EPERM},
        {"add_key", call_add_key, EPERM},
        {"perf_event_open", call_perf_event_open, EPERM},
        {"userfaultfd", call_userfaultfd, EPERM},
        {"io_uring_setup", call_io_uring_setup, EPERM},
        {"ptrace", call_ptrace, EPERM},
        {"process_vm_readv", call_process_vm_readv, EPERM},
        {"kexec_load", call_kexec_load, EPERM},
        {"init_module", call_init_module, EPERM},
        {"setns", call_setns, EPERM},
        {"pivot_root", call_pivot_root, EPERM},
        {"open_tree", call_open_tree, EPERM},
        {"fsopen", call_fsopen, EPERM},
        {"chroot", call_chroot, EPERM},
        {"open_by_handle_at", call_open_by_handle_at, EPERM},
        {"clone(CLONE_NEWNS)", call_clone_newns, EPERM},
        {"clone(1<<32 | CLONE_NEWUSER)", call_clone_newuser_hi, EPERM},
        {"socket(AF_PACKET)", call_socket_packet, EPERM},
        {"socket(AF_VSOCK)", call_socket_vsock, EPERM},
        {"personality(READ_IMPLIES_EXEC)", call_personality_read_implies_exec, EPERM},
        {"personality(ADDR_NO_RANDOMIZE)", call_personality_no_randomize, EPERM},
};

static int call_fork(void)
{
        int st;
        pid_t p = fork();
        if (p < 0)
                return errno;
        if (p == 0)
                _exit(42);
        if (waitpid(p, &st, 0) != p)
                return ECHILD;
        return WIFEXITED(st) && WEXITSTATUS(st) == 42 ? 0 : EPROTO;
}
static void *thread_main(void *arg)
{
        return arg;
}
static int call_pthread_create(void)
{
        pthread_t t;
        void *ret = NULL;
        int r = pthread_create(&t, NULL, thread_main, (void *) 0x1234);
        if (r != 0)
                return r;
        if (pthread_join(t, &ret) != 0 || ret != (void *) 0x1234)
                return EPROTO;
        return 0;
}
static int call_clone3(void)
{
        struct clone_args args = {.exit_signal = SIGCHLD};
        long r = syscall(SYS_clone3, &args, sizeof(args));
        if (r == 0)
                _exit(0);
        if (r > 0)
                return waitpid((pid_t) r, NULL, 0) == r ? 0 : ECHILD;
        return errno;
}
static int call_unshare_files(void)
{
        /* Not a namespace: allowed. */
        return ERRNO_OF(unshare(CLONE_FILES));
}
static int call_socket_inet(void)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        return fd < 0 ? errno : 0;
}
static int call_socket_inet6(void)
{
        int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        return fd < 0 && errno != EAFNOSUPPORT ? errno : 0;
}
static int call_socketpair_unix(void)
{
        int sv[2];
        return ERRNO_OF(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
}
static int call_socket_netlink(void)
{
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
        return fd < 0 ? errno : 0;
}
static int call_personality_query(void)
{
        return ERRNO_OF(personality(0xffffffff));
}
static int call_personality_linux(void)
{
        return ERRNO_OF(personality(PER_LINUX));
}

/* A pty pair; returns the slave fd or -errno. */
static int open_pty_slave(void)
{
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
                return -errno;
        const char *name = ptsname(master);
        if (!name)
                return -errno;
        int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        return slave < 0 ? -errno : slave;
}
static int call_tcgets(void)
{
        struct termios t;
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TCGETS, &t));
}
static int call_tiocgwinsz(void)
{
        struct winsize w;
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TIOCGWINSZ, &w));
}
static int call_tiocsti(void)
{
        char c = 'x';
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TIOCSTI, &c));
}
static int call_tiocsti_hi(void)
{
        /* The kernel truncates the request to 32 bits; the filter must too. */
        char c = 'x';
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(syscall(SYS_ioctl, fd, (1UL << 32) | TIOCSTI, &c));
}
static int call_tioclinux(void)
{
        char sub = 12; /* TIOCL_GETKMSGREDIRECT: harmless if it got through */
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TIOCLINUX, &sub));
}
static int call_tiocexcl(void)
{
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TIOCEXCL));
}
static int call_tiocsetd(void)
{
        int ldisc = 0; /* N_TTY: harmless if it got through */
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TIOCSETD, &ldisc));
}
static int call_tcxonc(void)
{
        int fd = open_pty_slave();
        return fd < 0 ? -fd : ERRNO_OF(ioctl(fd, TCXONC, TCOON));
}
static int call_tcsetsw(void)
{
        struct termios t;
        int fd = open_pty_slave();
        if (fd < 0)
                return -fd;
        return ioctl(fd, TCGETS, &t) < 0 ? errno : ERRNO_OF(ioctl(fd, TCSETSW, &t));
}
static int call_tiocgptn(void)
{
        unsigned n;
        int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? errno : ERRNO_OF(ioctl(fd, TIOCGPTN, &n));
}
#if defined(__x86_64__)
static int call_i386_getpid(void)
{
        long ret;
        /* int $0x80 from 64-bit code enters through the i386 syscall table
         * (AUDIT_ARCH_I386); 20 is getpid there. */
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
        return ret < 0 ? (int) -ret : 0;
}
#endif
static int call_execve_true(void)
{
        char *const argv[] = {"true", NULL};
        char *const envp[] = {NULL};
        execve("/bin/true", argv, envp);
        return errno;
}

static const struct check allowed_checks[] = {
        {"fork()", call_fork, 0},
        {"pthread_create()", call_pthread_create, 0},
        {"clone3 -> ENOSYS", call_clone3, ENOSYS},
        {"unshare(CLONE_FILES)", call_unshare_files, 0},
        {"socket(AF_INET)", call_socket_inet, 0},
        {"socket(AF_INET6)", call_socket_inet6, 0},
        {"socket(AF_NETLINK)", call_socket_netlink, 0},
        {"socketpair(AF_UNIX)", call_socketpair_unix, 0},
        {"personality(0xffffffff)", call_personality_query, 0},
        {"personality(PER_LINUX)", call_personality_linux, 0},
        {"ioctl(TCGETS)", call_tcgets, 0},
        {"ioctl(TIOCGWINSZ)", call_tiocgwinsz, 0},
        {"ioctl(TCSETSW)", call_tcsetsw, 0},
        {"ioctl(TIOCGPTN)", call_tiocgptn, 0},
        {"execve(/bin/true)", call_execve_true, 0},
};

static const struct check terminal_checks[] = {
        {"ioctl(TIOCSTI)", call_tiocsti, EPERM},
        {"ioctl(1<<32 | TIOCSTI)", call_tiocsti_hi, EPERM},
        {"ioctl(TIOCLINUX)", call_tioclinux, EPERM},
        {"ioctl(TIOCEXCL)", call_tiocexcl, EPERM},
        {"ioctl(TIOCSETD)", call_tiocsetd, EPERM},
        {"ioctl(TCXONC)", call_tcxonc, EPERM},
};

static const struct check foreign_abi_checks[] = {
        {"x32 getpid", call_x32_getpid, EPERM},
};

/* ------------------------------------------------------------------------ */
/* The default profile as data and as BPF. */

Test(seccomp, default_profile_compiles)
{
        struct seccomp_program prog = {0};
        compile_default(&prog);
        cr_assert_not_null(prog.insns);
        cr_assert_gt(prog.len, 10);
        cr_assert_leq(prog.len, BPF_MAXINSNS);
        cr_log_info("default profile: %zu BPF instructions", prog.len);
        seccomp_program_free(&prog);
        cr_assert_null(prog.insns);
        cr_assert_eq(prog.len, 0);
}

/* Syscalls newer than the libseccomp this was tested with: unknown names are
 * skipped on purpose. Anything else unknown is a typo that would silently
 * turn an allow into a deny (or a documented deny into nothing). */
static const char *const newer_than_libseccomp[] = {"mseal", "statmount", "listmount"};

Test(seccomp, default_table_names_are_real_syscalls)
{
        const struct seccomp_profile *p = seccomp_default_profile();
        cr_assert_gt(p->n_rules, 200);
        for (size_t i = 0; i < p->n_rules; i++) {
                const char *name = p->rules[i].syscall;
                if (seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR)
                        continue;
                bool expected = false;
                for (size_t k = 0; k < ARRAY_SIZE(newer_than_libseccomp); k++)
                        expected |= strcmp(name, newer_than_libseccomp[k]) == 0;
                cr_expect(expected, "'%s' is not a syscall libseccomp knows on any arch", name);
        }
}

Test(seccomp, default_table_is_consistent)
{
        const struct seccomp_profile *p = seccomp_default_profile();
        cr_assert_eq(p->default_action.kind, SECCOMP_ACT_ERRNO_);
        cr_assert_eq(p->default_action.errno_ret, EPERM);
        cr_assert_eq(p->badarch_action.kind, SECCOMP_ACT_ERRNO_);
        cr_assert_null(p->architectures);

        for (size_t i = 0; i < p->n_rules; i++) {
                const struct seccomp_rule *a = &p->rules[i];
                bool denied = a->action.kind == SECCOMP_ACT_ERRNO_ && a->action.errno_ret == EPERM;
                /* A denied name has a reason; an allowed one has none. */
                if (denied)
                        cr_expect_not_null(seccomp_default_denied_reason(a->syscall),
                                           "%s denied without a reason", a->syscall);
                else
                        cr_expect_null(seccomp_default_denied_reason(a->syscall),
                                       "%s allowed but listed as denied", a->syscall);
                for (size_t k = i + 1; k < p->n_rules; k++) {
                        const struct seccomp_rule *b = &p->rules[k];
                        if (strcmp(a->syscall, b->syscall) != 0)
                                continue;
                        /* Repeats only as argument-conditional alternatives. */
                        cr_expect(a->n_args > 0 && b->n_args > 0 &&
                                          a->action.kind == b->action.kind,
                                  "%s listed twice (rules %zu and %zu)", a->syscall, i, k);
                }
        }

        static const char *const must_deny[] = {
                "bpf",
                "keyctl",
                "add_key",
                "request_key",
                "perf_event_open",
                "userfaultfd",
                "io_uring_setup",
                "io_uring_enter",
                "io_uring_register",
                "kexec_load",
                "kexec_file_load",
                "init_module",
                "finit_module",
                "delete_module",
                "mount",
                "umount2",
                "pivot_root",
                "mount_setattr",
                "move_mount",
                "open_tree",
                "fsopen",
                "fsconfig",
                "fsmount",
                "fspick",
                "ptrace",
                "process_vm_readv",
                "process_vm_writev",
                "pidfd_getfd",
                "kcmp",
                "open_by_handle_at",
                "name_to_handle_at",
                "swapon",
                "swapoff",
                "reboot",
                "setns",
                "acct",
                "quotactl",
                "quotactl_fd",
                "lookup_dcookie",
                "iopl",
                "ioperm",
                "syslog",
                "vhangup",
                "settimeofday",
                "clock_settime",
                "clock_adjtime",
                "adjtimex",
                "nfsservctl",
                "uselib",
                "ustat",
                "sysfs",
                "_sysctl",
                "vm86",
                "vm86old",
                "create_module",
                "get_kernel_syms",
                "query_module",
                "chroot",
                "fanotify_init",
                "mbind",
                "set_mempolicy",
                "move_pages",
                "migrate_pages",
                "statmount",
                "listmount",
        };
        for (size_t i = 0; i < ARRAY_SIZE(must_deny); i++) {
                const char *why = seccomp_default_denied_reason(must_deny[i]);
                cr_expect(why && *why, "%s has no denial reason", must_deny[i]);
        }
        cr_expect_null(seccomp_default_denied_reason("read"));
        cr_expect_null(seccomp_default_denied_reason(NULL));
}

Test(seccomp, default_bpf_allows_and_denies_by_name)
{
        struct seccomp_program prog = {0};
        const struct seccomp_profile *p = seccomp_default_profile();
        compile_default(&prog);

        for (size_t i = 0; i < p->n_rules; i++) {
                const struct seccomp_rule *r = &p->rules[i];
                if (r->n_args > 0 || seccomp_syscall_resolve_name(r->syscall) < 0)
                        continue;
                uint32_t want = r->action.kind == SECCOMP_ACT_ALLOW_
                                        ? RET_ALLOW
                                        : RET_ERRNO(r->action.errno_ret);
                uint32_t got = sim_native(&prog, r->syscall, 0, 0);
                cr_expect_eq(got, want, "%s: action 0x%08x, want 0x%08x", r->syscall, got, want);
        }
        /* Numbers past the table (future syscalls) take the default action. */
        cr_expect_eq(sim(&prog, seccomp_arch_native(), 1000, 0, 0), RET_ERRNO(EPERM));
        cr_expect_eq(sim(&prog, seccomp_arch_native(), 0xffff, 0, 0), RET_ERRNO(EPERM));
        seccomp_program_free(&prog);
}

Test(seccomp, default_bpf_denies_foreign_abis)
{
#if defined(__x86_64__)
        struct seccomp_program prog = {0};
        compile_default(&prog);
        /* i386: int $0x80 reports AUDIT_ARCH_I386; getpid is 20 there. */
        cr_expect_eq(sim(&prog, AUDIT_ARCH_I386, 20, 0, 0), RET_ERRNO(EPERM));
        cr_expect_eq(sim(&prog, AUDIT_ARCH_I386, 1, 0, 0), RET_ERRNO(EPERM));
        /* x32: AUDIT_ARCH_X86_64 with bit 30 of the number set. */
        for (int nr = 0; nr < 512; nr++)
                cr_expect_eq(sim(&prog, AUDIT_ARCH_X86_64, 0x40000000 | nr, 0, 0), RET_ERRNO(EPERM),
                             "x32 syscall %d not denied", nr);
        cr_expect_eq(sim(&prog, AUDIT_ARCH_X86_64, SYS_getpid, 0, 0), RET_ALLOW);
        seccomp_program_free(&prog);
#else
        cr_skip_test("i386/x32 checks are x86_64-specific");
#endif
}

static uint64_t xorshift(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static bool terminal_ioctl_allowed(uint32_t low)
{
        size_t n;
        const uint32_t *allowed = seccomp_default_terminal_ioctls(&n);
        for (size_t i = 0; i < n; i++)
                if (allowed[i] == low)
                        return true;
        return false;
}

static void expect_ioctl(const struct seccomp_program *prog, uint32_t low)
{
        static const uint64_t highs[] = {0, 1, 0x80000000, 0xffffffff};
        /* Type 'T' (bits 8-15): only the allowlist; every other type: all. */
        bool denied = ((low >> 8) & 0xff) == 0x54 && !terminal_ioctl_allowed(low);
        for (size_t h = 0; h < ARRAY_SIZE(highs); h++) {
                uint64_t req = highs[h] << 32 | low;
                uint32_t got = sim_native(prog, "ioctl", 1, req);
                cr_assert_eq(got, denied ? RET_ERRNO(EPERM) : RET_ALLOW,
                             "ioctl request 0x%016llx: action 0x%08x", (unsigned long long) req,
                             got);
        }
}

Test(seccomp, default_bpf_ioctl_masks_low_32_bits)
{
        struct seccomp_program prog = {0};
        compile_default(&prog);
        for (uint32_t v = 0; v < 0x20000; v++)
                expect_ioctl(&prog, v);
        cr_assert(terminal_ioctl_allowed(TCGETS) && terminal_ioctl_allowed(TIOCGWINSZ) &&
                  terminal_ioctl_allowed(FIONBIO) && !terminal_ioctl_allowed(TIOCSTI) &&
                  !terminal_ioctl_allowed(TIOCSETD) && !terminal_ioctl_allowed(TIOCEXCL));
        static const uint32_t denied[] = {TIOCSTI, TIOCLINUX, TIOCSETD, TIOCEXCL};
        for (size_t d = 0; d < ARRAY_SIZE(denied); d++)
                for (unsigned i = 0; i < 32; i++)
                        for (unsigned k = i; k < 32; k++)
                                expect_ioctl(&prog, denied[d] ^ (1U << i) ^ (k == i ? 0 : 1U << k));
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        for (int i = 0; i < 200000; i++)
                expect_ioctl(&prog, (uint32_t) xorshift(&seed));
        seccomp_program_free(&prog);
}

Test(seccomp, default_bpf_namespace_flags)
{
        static const unsigned long ns_flags[] = {CLONE_NEWNS,     CLONE_NEWUTS, CLONE_NEWIPC,
                                                 CLONE_NEWUSER,   CLONE_NEWPID, CLONE_NEWNET,
                                                 CLONE_NEWCGROUP, CLONE_NEWTIME};
        static const unsigned long benign[] = {
                SIGCHLD,
                CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                        CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
                CLONE_VM | CLONE_VFORK | SIGCHLD,
        };
        struct seccomp_program prog = {0};
        compile_default(&prog);
        for (size_t b = 0; b < ARRAY_SIZE(benign); b++) {
                for (uint64_t hi = 0; hi < 2; hi++) {
                        uint64_t flags = hi << 32 | benign[b];
                        cr_expect_eq(sim_native(&prog, "clone", 0, flags), RET_ALLOW,
                                     "clone 0x%llx", (unsigned long long) flags);
                        for (size_t n = 0; n < ARRAY_SIZE(ns_flags); n++)
                                cr_expect_eq(sim_native(&prog, "clone", 0, flags | ns_flags[n]),
                                             RET_ERRNO(EPERM), "clone 0x%llx",
                                             (unsigned long long) (flags | ns_flags[n]));
                }
        }
        for (size_t n = 0; n < ARRAY_SIZE(ns_flags); n++)
                cr_expect_eq(sim_native(&prog, "unshare", 0, ns_flags[n]), RET_ERRNO(EPERM),
                             "unshare 0x%lx", ns_flags[n]);
        cr_expect_eq(sim_native(&prog, "unshare", 0, CLONE_FILES | CLONE_FS), RET_ALLOW);
        cr_expect_eq(sim_native(&prog, "clone3", 0, 0), RET_ERRNO(ENOSYS));
        cr_expect_eq(sim_native(&prog, "setns", 0, 0), RET_ERRNO(EPERM));
        seccomp_program_free(&prog);
}

Test(seccomp, default_bpf_socket_families_and_personality)
{
        static const uint64_t highs[] = {0, 1, 0xffffffff};
        struct seccomp_program prog = {0};
        compile_default(&prog);
        for (uint32_t af = 0; af < 64; af++) {
                bool ok = af == AF_UNIX || af == AF_INET || af == AF_INET6 || af == AF_NETLINK;
                for (size_t h = 0; h < ARRAY_SIZE(highs); h++) {
                        uint64_t arg = highs[h] << 32 | af;
                        uint32_t want = ok ? RET_ALLOW : RET_ERRNO(EPERM);
                        cr_expect_eq(sim_native(&prog, "socket", 0, arg), want, "socket %u", af);
                        cr_expect_eq(sim_native(&prog, "socketpair", 0, arg), want, "socketpair %u",
                                     af);
                }
        }
        static const struct {
                uint32_t persona;
                bool ok;
        } personas[] = {
                {PER_LINUX, true},
                {PER_LINUX32, true},
                {UNAME26, true},
                {PER_LINUX32 | UNAME26, true},
                {0xffffffff, true},
                {READ_IMPLIES_EXEC, false},
                {ADDR_NO_RANDOMIZE, false},
                {PER_LINUX | ADDR_NO_RANDOMIZE, false},
                {PER_BSD, false},
                {MMAP_PAGE_ZERO, false},
        };
        for (size_t i = 0; i < ARRAY_SIZE(personas); i++)
                cr_expect_eq(sim_native(&prog, "personality", 0, personas[i].persona),
                             personas[i].ok ? RET_ALLOW : RET_ERRNO(EPERM), "personality 0x%x",
                             personas[i].persona);
        seccomp_program_free(&prog);
}

/* ------------------------------------------------------------------------ */
/* The default profile in the kernel. */

Test(seccomp, default_denies_dangerous_syscalls)
{
        run_checks_default(denied_checks, ARRAY_SIZE(denied_checks));
}

Test(seccomp, default_denied_checks_are_meaningful)
{
        /* Without the filter, root gets some other answer for each of them:
         * so the EPERM above comes from the filter. */
        test_require_root();
        run_checks(NULL, denied_checks, ARRAY_SIZE(denied_checks), true);
        run_checks(NULL, terminal_checks, ARRAY_SIZE(terminal_checks), true);
        run_checks(NULL, foreign_abi_checks, ARRAY_SIZE(foreign_abi_checks), true);
}

Test(seccomp, default_allows_ordinary_programs)
{
        run_checks_default(allowed_checks, ARRAY_SIZE(allowed_checks));
}

Test(seccomp, default_denies_terminal_injection)
{
        run_checks_default(terminal_checks, ARRAY_SIZE(terminal_checks));
}

Test(seccomp, default_denies_foreign_abis)
{
        run_checks_default(foreign_abi_checks, ARRAY_SIZE(foreign_abi_checks));
}

#if defined(__x86_64__)
static void exit_on_fault(int sig)
{
        _exit(128 + sig);
}

Test(seccomp, default_denies_i386_int80)
{
        /* Some kernels (ia32_emulation=0, some hypervisors) fault int $0x80
         * before seccomp sees it; the BPF test above covers the filter then. */
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                /* A plain exit instead of a (sanitizer's) crash report. */
                struct sigaction sa = {.sa_handler = exit_on_fault};
                long ret;
                sigaction(SIGSEGV, &sa, NULL);
                __asm__ volatile("int $0x80"
                                 : "=a"(ret)
                                 : "a"(20L)
                                 : "memory", "r8", "r9", "r10", "r11");
                _exit(ret == getpid() ? 0 : 1);
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGSEGV)
                cr_skip_test("int $0x80 faults on this kernel (no i386 syscall entry: "
                             "ia32_emulation off, or not offered by the hypervisor)");
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unfiltered i386 getpid: status 0x%x", st);

        static const struct check i386[] = {{"i386 getpid", call_i386_getpid, EPERM}};
        run_checks_default(i386, ARRAY_SIZE(i386));
}
#endif

static int run_under_default(const char *const argv[])
{
        struct seccomp_program prog = {0};
        compile_default(&prog);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDWR);
                if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0)
                        _exit(120);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_program_load(&prog) < 0)
                        _exit(121);
                execv(argv[0], (char *const *) argv);
                _exit(122);
        }
        seccomp_program_free(&prog);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st), "%s killed by signal %d", argv[0], WTERMSIG(st));
        return WEXITSTATUS(st);
}

Test(seccomp, default_runs_a_shell_script)
{
        static const char script[] = "set -e\n"
                                     "x=$(echo hello | tr h H)\n"
                                     "test \"$x\" = Hello\n"
                                     "d=$(mktemp -d)\n"
                                     "echo data > \"$d/f\"; cat \"$d/f\" >/dev/null; ln -s f "
                                     "\"$d/l\"; mv \"$d/l\" \"$d/m\"\n"
                                     "rm -r \"$d\"\n"
                                     "sleep 0.01 & wait\n"
                                     "ls / >/dev/null; id >/dev/null; uname -a >/dev/null\n";
        const char *const argv[] = {"/bin/sh", "-c", script, NULL};
        cr_expect_eq(run_under_default(argv), 0, "shell script failed under the default profile");
}

Test(seccomp, default_runs_python)
{
        if (access("/usr/bin/python3", X_OK) != 0)
                cr_skip_test("python3 not installed");
        static const char code[] =
                "import os, socket, subprocess, tempfile, threading, select, time\n"
                "t = threading.Thread(target=time.sleep, args=(0.01,)); t.start(); t.join()\n"
                "a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'\n"
                "s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM); s.close()\n"
                "assert subprocess.run(['/bin/true']).returncode == 0\n"
                "with tempfile.TemporaryDirectory() as d:\n"
                "    open(os.path.join(d, 'f'), 'w').write('x')\n"
                "r, w = os.pipe(); select.select([r], [], [], 0)\n";
        const char *const argv[] = {"/usr/bin/python3", "-I", "-c", code, NULL};
        cr_expect_eq(run_under_default(argv), 0, "python3 failed under the default profile");
}
