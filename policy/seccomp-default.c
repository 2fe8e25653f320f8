/* SPDX-License-Identifier: MIT */
/*
 * The default sandbox profile: an allowlist. Everything not named here fails
 * with EPERM, including syscalls newer than this table.
 *
 * Modelled on what the usual container default allows an unprivileged
 * container without capabilities, written out as psrun's own tables:
 *  - allowed_syscalls: allowed whatever the arguments;
 *  - conditional rules: allowed only for some argument values (clone,
 *    unshare, socket, socketpair, personality, ioctl), plus clone3 -> ENOSYS;
 *  - denied_syscalls: denied, each with its reason. They equal the default
 *    action, so they add no instructions; they document the decision and keep
 *    holding if the default action is ever relaxed.
 * Names are resolved for the architecture at compile time; names that do not
 * exist there (32-bit or other-arch syscalls) are skipped, which is why one
 * list can carry them all.
 */
#include "policy/seccomp.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>

#include "common/cleanup.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const char *const allowed_syscalls[] = {
        "_llseek",
        "_newselect",
        "accept",
        "accept4",
        "access",
        "alarm",
        "arch_prctl",
        "arm_fadvise64_64",
        "arm_sync_file_range",
        "bind",
        "breakpoint",
        "brk",
        "cacheflush",
        "cachestat",
        "capget",
        /* capset can only lower what the process has; it has nothing. */
        "capset",
        "chdir",
        "chmod",
        "chown",
        "chown32",
        "clock_getres",
        "clock_getres_time64",
        "clock_gettime",
        "clock_gettime64",
        "clock_nanosleep",
        "clock_nanosleep_time64",
        "close",
        "close_range",
        "connect",
        "copy_file_range",
        "creat",
        "dup",
        "dup2",
        "dup3",
        "epoll_create",
        "epoll_create1",
        "epoll_ctl",
        "epoll_ctl_old",
        "epoll_pwait",
        "epoll_pwait2",
        "epoll_wait",
        "epoll_wait_old",
        "eventfd",
        "eventfd2",
        "execve",
        "execveat",
        "exit",
        "exit_group",
        "faccessat",
        "faccessat2",
        "fadvise64",
        "fadvise64_64",
        "fallocate",
        "fchdir",
        "fchmod",
        "fchmodat",
        "fchmodat2",
        "fchown",
        "fchown32",
        "fchownat",
        "fcntl",
        "fcntl64",
        "fdatasync",
        "fgetxattr",
        "flistxattr",
        "flock",
        "fork",
        "fremovexattr",
        "fsetxattr",
        "fstat",
        "fstat64",
        "fstatat64",
        "fstatfs",
        "fstatfs64",
        "fsync",
        "ftruncate",
        "ftruncate64",
        "futex",
        "futex_requeue",
        "futex_time64",
        "futex_wait",
        "futex_waitv",
        "futex_wake",
        "futimesat",
        "get_mempolicy",
        "get_robust_list",
        "get_thread_area",
        "getcpu",
        "getcwd",
        "getdents",
        "getdents64",
        "getegid",
        "getegid32",
        "geteuid",
        "geteuid32",
        "getgid",
        "getgid32",
        "getgroups",
        "getgroups32",
        "getitimer",
        "getpeername",
        "getpgid",
        "getpgrp",
        "getpid",
        "getppid",
        "getpriority",
        "getrandom",
        "getresgid",
        "getresgid32",
        "getresuid",
        "getresuid32",
        "getrlimit",
        "getrusage",
        "getsid",
        "getsockname",
        "getsockopt",
        "gettid",
        "gettimeofday",
        "getuid",
        "getuid32",
        "getxattr",
        "inotify_add_watch",
        "inotify_init",
        "inotify_init1",
        "inotify_rm_watch",
        "io_cancel",
        "io_destroy",
        "io_getevents",
        "io_pgetevents",
        "io_pgetevents_time64",
        "io_setup",
        "io_submit",
        "ioprio_get",
        "ioprio_set",
        /* The pid namespace bounds whom kill can reach; Landlock's signal
         * scope keeps psrun's init out of reach too. */
        "kill",
        /* Restricting itself further is always fine. */
        "landlock_add_rule",
        "landlock_create_ruleset",
        "landlock_restrict_self",
        "lchown",
        "lchown32",
        "lgetxattr",
        "link",
        "linkat",
        "listen",
        "listxattr",
        "llistxattr",
        "lremovexattr",
        "lseek",
        "lsetxattr",
        "lstat",
        "lstat64",
        "madvise",
        "map_shadow_stack",
        "membarrier",
        "memfd_create",
        "mincore",
        "mkdir",
        "mkdirat",
        "mknod",
        "mknodat",
        "mlock",
        "mlock2",
        "mlockall",
        "mmap",
        "mmap2",
        "mprotect",
        "mq_getsetattr",
        "mq_notify",
        "mq_open",
        "mq_timedreceive",
        "mq_timedreceive_time64",
        "mq_timedsend",
        "mq_timedsend_time64",
        "mq_unlink",
        "mremap",
        "mseal",
        "msgctl",
        "msgget",
        "msgrcv",
        "msgsnd",
        "msync",
        "munlock",
        "munlockall",
        "munmap",
        "nanosleep",
        "newfstatat",
        "open",
        "openat",
        "openat2",
        "pause",
        "pidfd_open",
        "pidfd_send_signal",
        "pipe",
        "pipe2",
        "pkey_alloc",
        "pkey_free",
        "pkey_mprotect",
        "poll",
        "ppoll",
        "ppoll_time64",
        "prctl",
        "pread64",
        "preadv",
        "preadv2",
        "prlimit64",
        "process_mrelease",
        "pselect6",
        "pselect6_time64",
        "pwrite64",
        "pwritev",
        "pwritev2",
        "read",
        "readahead",
        "readlink",
        "readlinkat",
        "readv",
        "recv",
        "recvfrom",
        "recvmmsg",
        "recvmmsg_time64",
        "recvmsg",
        "remap_file_pages",
        "removexattr",
        "rename",
        "renameat",
        "renameat2",
        "restart_syscall",
        "rmdir",
        "rseq",
        "rt_sigaction",
        "rt_sigpending",
        "rt_sigprocmask",
        "rt_sigqueueinfo",
        "rt_sigreturn",
        "rt_sigsuspend",
        "rt_sigtimedwait",
        "rt_sigtimedwait_time64",
        "rt_tgsigqueueinfo",
        "sched_get_priority_max",
        "sched_get_priority_min",
        "sched_getaffinity",
        "sched_getattr",
        "sched_getparam",
        "sched_getscheduler",
        "sched_rr_get_interval",
        "sched_rr_get_interval_time64",
        "sched_setaffinity",
        "sched_setattr",
        "sched_setparam",
        "sched_setscheduler",
        "sched_yield",
        /* Stacking another filter can only take more away. */
        "seccomp",
        "select",
        "semctl",
        "semget",
        "semop",
        "semtimedop",
        "semtimedop_time64",
        "send",
        "sendfile",
        "sendfile64",
        "sendmmsg",
        "sendmsg",
        "sendto",
        "set_robust_list",
        "set_thread_area",
        "set_tid_address",
        "set_tls",
        /* Without capabilities these can only move between ids the process
         * already holds. */
        "setfsgid",
        "setfsgid32",
        "setfsuid",
        "setfsuid32",
        "setgid",
        "setgid32",
        "setgroups",
        "setgroups32",
        "setitimer",
        "setpgid",
        "setpriority",
        "setregid",
        "setregid32",
        "setresgid",
        "setresgid32",
        "setresuid",
        "setresuid32",
        "setreuid",
        "setreuid32",
        "setrlimit",
        "setsid",
        "setsockopt",
        "setuid",
        "setuid32",
        "setxattr",
        "shmat",
        "shmctl",
        "shmdt",
        "shmget",
        "shutdown",
        "sigaltstack",
        "signalfd",
        "signalfd4",
        "sigreturn",
        "splice",
        "stat",
        "stat64",
        "statfs",
        "statfs64",
        "statx",
        "symlink",
        "symlinkat",
        "sync",
        "sync_file_range",
        "sync_file_range2",
        "syncfs",
        "sysinfo",
        "tee",
        "tgkill",
        "time",
        "timer_create",
        "timer_delete",
        "timer_getoverrun",
        "timer_gettime",
        "timer_gettime64",
        "timer_settime",
        "timer_settime64",
        "timerfd_create",
        "timerfd_gettime",
        "timerfd_gettime64",
        "timerfd_settime",
        "timerfd_settime64",
        "times",
        "tkill",
        "truncate",
        "truncate64",
        "ugetrlimit",
        "umask",
        "uname",
        "unlink",
        "unlinkat",
        "utime",
        "utimensat",
        "utimensat_time64",
        "utimes",
        "vfork",
        "vmsplice",
        "wait4",
        "waitid",
        "waitpid",
        "write",
        "writev",
};

struct denied_syscall {
        const char *name;
        const char *why;
};

/*
 * Most of these would fail anyway for a process without capabilities.
 * Denying them here as well means a missing or buggy capability check in the
 * kernel is not reachable from the sandbox.
 */
#define WHY_MOUNT    "the mount table is fixed by psrun; new mounts could expose or cover host files"
#define WHY_NEWMOUNT "new mount API: " WHY_MOUNT
#define WHY_KEYS     "the kernel keyring is not namespaced: keys could cross sandbox boundaries"
#define WHY_MODULE   "loads or removes code in the host kernel"
#define WHY_OLDMOD   "obsolete kernel module interface"
#define WHY_URING                                                                                  \
        "a second syscall path that seccomp cannot inspect; a frequent source of kernel bugs"
#define WHY_PEEK    "reads or changes another process's memory or files; no debugging of neighbours"
#define WHY_CLOCK   "the system clock is shared with the host"
#define WHY_NUMA    "NUMA placement can move memory and pin host nodes; not needed in a sandbox"
#define WHY_HANDLE  "file handles bypass path checks and can open any inode of a mount"
#define WHY_KEXEC   "replaces the running host kernel"
#define WHY_SWAP    "host-wide swap configuration"
#define WHY_QUOTA   "filesystem quotas are host-wide"
#define WHY_PORTS   "direct hardware I/O port access"
#define WHY_VM86    "virtual 8086 mode, 32-bit x86 only"
#define WHY_UTS     "the host and domain name are set by psrun from the policy"
#define WHY_STATMNT "mount enumeration by id: a young interface the sandbox does not need"

static const struct denied_syscall denied_syscalls[] = {
        {"_sysctl", "obsolete binary sysctl interface"},
        {"acct", "process accounting writes host-wide records"},
        {"add_key", WHY_KEYS},
        {"adjtimex", WHY_CLOCK},
        {"bpf", "loads programs into the kernel: a large, often-exploited attack surface"},
        {"chroot", "the root is set by psrun; a nested chroot is a classic escape ingredient"},
        {"clock_adjtime", WHY_CLOCK},
        {"clock_adjtime64", WHY_CLOCK},
        {"clock_settime", WHY_CLOCK},
        {"clock_settime64", WHY_CLOCK},
        {"create_module", WHY_OLDMOD},
        {"delete_module", WHY_MODULE},
        {"fanotify_init", "filesystem-wide monitoring and permission events beyond the sandbox"},
        {"finit_module", WHY_MODULE},
        {"fsconfig", WHY_NEWMOUNT},
        {"fsmount", WHY_NEWMOUNT},
        {"fsopen", WHY_NEWMOUNT},
        {"fspick", WHY_NEWMOUNT},
        {"get_kernel_syms", WHY_OLDMOD},
        {"init_module", WHY_MODULE},
        {"io_uring_enter", WHY_URING},
        {"io_uring_register", WHY_URING},
        {"io_uring_setup", WHY_URING},
        {"ioperm", WHY_PORTS},
        {"iopl", WHY_PORTS},
        {"kcmp", "compares kernel objects of other processes: an information leak"},
        {"kexec_file_load", WHY_KEXEC},
        {"kexec_load", WHY_KEXEC},
        {"keyctl", WHY_KEYS},
        {"listmount", WHY_STATMNT},
        {"lookup_dcookie", "kernel profiling interface"},
        {"mbind", WHY_NUMA},
        {"migrate_pages", WHY_NUMA},
        {"modify_ldt", "16-bit segment descriptors: legacy, with a history of kernel bugs"},
        {"mount", WHY_MOUNT},
        {"mount_setattr", WHY_NEWMOUNT},
        {"move_mount", WHY_NEWMOUNT},
        {"move_pages", WHY_NUMA},
        {"name_to_handle_at", WHY_HANDLE},
        {"nfsservctl", "removed NFS server interface"},
        {"open_by_handle_at", WHY_HANDLE},
        {"open_tree", WHY_NEWMOUNT},
        {"perf_event_open", "kernel profiling: large attack surface and side channels"},
        {"pidfd_getfd", WHY_PEEK},
        {"pivot_root", WHY_MOUNT},
        {"process_madvise", WHY_PEEK},
        {"process_vm_readv", WHY_PEEK},
        {"process_vm_writev", WHY_PEEK},
        {"ptrace", WHY_PEEK},
        {"query_module", WHY_OLDMOD},
        {"quotactl", WHY_QUOTA},
        {"quotactl_fd", WHY_QUOTA},
        {"reboot", "restarts the host, or kills the sandbox's pid namespace from inside"},
        {"request_key", WHY_KEYS},
        {"set_mempolicy", WHY_NUMA},
        {"set_mempolicy_home_node", WHY_NUMA},
        {"setdomainname", WHY_UTS},
        {"sethostname", WHY_UTS},
        {"setns", "joins other namespaces; a sandbox gets its namespaces once, at creation"},
        {"settimeofday", WHY_CLOCK},
        {"statmount", WHY_STATMNT},
        {"stime", WHY_CLOCK},
        {"swapoff", WHY_SWAP},
        {"swapon", WHY_SWAP},
        {"syslog", "reads the host kernel log: addresses and other tenants' messages"},
        {"sysfs", "obsolete filesystem type query"},
        {"umount", WHY_MOUNT},
        {"umount2", WHY_MOUNT},
        {"userfaultfd", "stalls kernel page-fault handling at will: a standard exploit primitive"},
        {"uselib", "obsolete a.out library loader"},
        {"ustat", "obsolete; reveals host device numbers"},
        {"vhangup", "hangs up the controlling terminal, which may be the host's"},
        {"vm86", WHY_VM86},
        {"vm86old", WHY_VM86},
};

/* ------------------------------------------------------------------------ */
/* Conditional rules. */

/* clang-format off */
#define ACTION_ALLOW    {.kind = SECCOMP_ACT_ALLOW_}
#define ACTION_ERRNO(e) {.kind = SECCOMP_ACT_ERRNO_, .errno_ret = (e)}
#define ACTION_DENY     ACTION_ERRNO(EPERM)

/* Compare the low 32 bits of an argument only. For `int` and `unsigned int`
 * parameters the kernel ignores the upper half of the register, so a full
 * 64-bit comparison could be dodged by setting bits the kernel throws away. */
#define LOW32_EQ(idx, v) \
        {.index = (idx), .op = SECCOMP_CMP_MASKED_EQ_, .value = UINT32_MAX, .value_two = (v)}
/* clang-format on */

#define NAMESPACE_FLAGS                                                                            \
        (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
         CLONE_NEWCGROUP | CLONE_NEWTIME)

/* s390 swaps clone's first two arguments. */
#if defined(__s390__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

/*
 * New namespaces would give the sandbox a fresh user namespace with full
 * capabilities inside it: the entry point of most container escapes through
 * kernel bugs. clone's flags are a register and can be checked. For clone,
 * CLONE_NEWTIME (0x80) lies inside the exit-signal byte; masking it only
 * refuses exit signals >= 128, which are invalid anyway.
 */
static const struct seccomp_arg_cmp clone_without_namespaces[] = {
        {.index = CLONE_FLAGS_ARG,
         .op = SECCOMP_CMP_MASKED_EQ_,
         .value = NAMESPACE_FLAGS,
         .value_two = 0},
};
static const struct seccomp_arg_cmp unshare_without_namespaces[] = {
        {.index = 0, .op = SECCOMP_CMP_MASKED_EQ_, .value = NAMESPACE_FLAGS, .value_two = 0},
};

/* Families a program needs to talk to the world and to itself. Everything else
 * (AF_PACKET, AF_VSOCK, AF_ALG, AF_BLUETOOTH, ...) fails with EPERM, the
 * default action: raw link-layer access and rarely-used protocol code are
 * where socket bugs live. */
static const struct seccomp_arg_cmp allowed_socket_families[] = {
        LOW32_EQ(0, AF_UNIX),
        LOW32_EQ(0, AF_INET),
        LOW32_EQ(0, AF_INET6),
        LOW32_EQ(0, AF_NETLINK),
};

/* Execution domains that only change uname(2) output or are the native one;
 * 0xffffffff queries. Flags like ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC would
 * weaken the process's own exploit mitigations. */
static const struct seccomp_arg_cmp allowed_personalities[] = {
        LOW32_EQ(0, PER_LINUX),   LOW32_EQ(0, PER_LINUX32),
        LOW32_EQ(0, UNAME26),     LOW32_EQ(0, PER_LINUX32 | UNAME26),
        LOW32_EQ(0, 0xffffffffU),
};

static const struct seccomp_rule fixed_conditional_rules[] = {
        {.syscall = "clone", .action = ACTION_ALLOW, .args = clone_without_namespaces, .n_args = 1},
        {.syscall = "unshare",
         .action = ACTION_ALLOW,
         .args = unshare_without_namespaces,
         .n_args = 1},
        /* clone3 passes its flags in memory, which seccomp cannot read. ENOSYS
         * makes glibc (and other libcs) fall back to clone, checked above. */
        {.syscall = "clone3", .action = ACTION_ERRNO(ENOSYS)},
};

static const char *const family_checked_syscalls[] = {"socket", "socketpair"};

/*
 * Terminal ioctls (type 'T', 0x54xx): an allowlist. stdin of `psrun run` may
 * be the host's terminal, shared with the user's shell; the sandbox is in a
 * session of its own, so the kernel's controlling-terminal checks refuse it
 * little. Allowed: what programs need on an inherited terminal and on ptys
 * of their own (termios get/set, window size, process groups, flush and
 * drain, pty allocation, generic fd requests that share the type); psrun
 * restores the terminal's termios when the command ends (a window size the
 * sandbox set lasts until the terminal's next resize).
 * Everything else of the type is refused, among it TIOCSTI (input
 * injection), TIOCSETD (line discipline: a failed restore leaves the
 * terminal dead), TIOCEXCL (exclusive mode: the user's next password
 * prompt cannot open /dev/tty), TCXONC (output stopped), TIOCCONS,
 * TIOCLINUX, the modem and break requests, TIOCVHANGUP and the serial
 * settings. Other types are allowed: the fds a sandbox can open are its own.
 */
#define TERMINAL_IOCTL_TYPE 0x54U

/* termios2 requests, whose struct <sys/ioctl.h> does not define (44 bytes:
 * the size is part of the request). */
#define TERMIOS2_SIZE 0x2cU
#define TERMIOS2_REQ(dir, nr)                                                                      \
        ((uint32_t) _IOC((dir), TERMINAL_IOCTL_TYPE, (nr), 0) | TERMIOS2_SIZE << _IOC_SIZESHIFT)
#define TCGETS2_  TERMIOS2_REQ(_IOC_READ, 0x2a)
#define TCSETS2_  TERMIOS2_REQ(_IOC_WRITE, 0x2b)
#define TCSETSW2_ TERMIOS2_REQ(_IOC_WRITE, 0x2c)
#define TCSETSF2_ TERMIOS2_REQ(_IOC_WRITE, 0x2d)

static const uint32_t terminal_ioctls_allowed[] = {
        TCGETS,     TCSETS,      TCSETSW,  TCSETSF,        TCGETA,    TCSETA,    TCSETAW,
        TCSETAF,    TCSBRK,      TCFLSH,   TIOCSCTTY,      TIOCGPGRP, TIOCSPGRP, TIOCOUTQ,
        TIOCGWINSZ, TIOCSWINSZ,  FIONREAD, TIOCNOTTY,      TIOCGSID,  TIOCGETD,  TIOCPKT,
        FIONBIO,    FIOASYNC,    FIONCLEX, FIOCLEX,        FIOQSIZE,  TCGETS2_,  TCSETS2_,
        TCSETSW2_,  TCSETSF2_,   TIOCGPTN, TIOCSPTLCK,     TIOCGDEV,  TIOCGPKT,  TIOCGPTLCK,
        TIOCGEXCL,  TIOCGPTPEER, TIOCSIG,  TIOCGLCKTRMIOS,
};

const uint32_t *seccomp_default_terminal_ioctls(size_t *n)
{
        *n = ARRAY_SIZE(terminal_ioctls_allowed);
        return terminal_ioctls_allowed;
}

/* One rule per bit of the type byte (a request whose type differs from 'T'
 * in that bit), then one per allowed request. */
#define IOCTL_RULES_MAX (8 + ARRAY_SIZE(terminal_ioctls_allowed))

#define N_RULES                                                                                    \
        (ARRAY_SIZE(allowed_syscalls) + ARRAY_SIZE(denied_syscalls) +                              \
         ARRAY_SIZE(fixed_conditional_rules) + ARRAY_SIZE(allowed_personalities) +                 \
         ARRAY_SIZE(family_checked_syscalls) * ARRAY_SIZE(allowed_socket_families) +               \
         IOCTL_RULES_MAX)

static struct seccomp_rule default_rules[N_RULES];
static struct seccomp_arg_cmp ioctl_allowed[IOCTL_RULES_MAX];

static struct seccomp_profile default_profile = {
        .default_action = ACTION_DENY,
        /* Not KILL_PROCESS: an ERRNO lets a program that probes a foreign ABI
         * carry on, and lets the tests observe the denial. */
        .badarch_action = ACTION_DENY,
        .architectures = NULL, /* native only: i386 and x32 take badarch_action */
        .rules = default_rules,
        .n_rules = 0,
        .flags = 0,
};

/*
 * ioctl is allowed when the low 32 bits of the request (what the kernel
 * reads) have another type than 'T', or are an allowed terminal request.
 * libseccomp 2.5 can neither negate a masked comparison nor AND two
 * comparisons of one argument, and an unconditional ALLOW for a syscall
 * overrides any conditional rule for it; but rules for one syscall are OR'ed.
 * "type != 'T'" is the union of "bit j of the type differs from 'T''s"
 * over the 8 bits; each allowed request is one 32-bit masked equality.
 */
static size_t ioctl_rules(struct seccomp_arg_cmp *out)
{
        size_t n = 0;
        for (unsigned j = 0; j < 8; j++) {
                uint32_t bit = 1U << (8 + j);
                out[n++] = (struct seccomp_arg_cmp){
                        .index = 1,
                        .op = SECCOMP_CMP_MASKED_EQ_,
                        .value = bit,
                        .value_two = (TERMINAL_IOCTL_TYPE << 8 & bit) ^ bit,
                };
        }
        for (size_t i = 0; i < ARRAY_SIZE(terminal_ioctls_allowed); i++)
                out[n++] = (struct seccomp_arg_cmp){
                        .index = 1,
                        .op = SECCOMP_CMP_MASKED_EQ_,
                        .value = UINT32_MAX,
                        .value_two = terminal_ioctls_allowed[i],
                };
        return n;
}

static size_t add_rule(size_t n, const char *syscall, struct seccomp_action action,
                       const struct seccomp_arg_cmp *args, size_t n_args)
{
        default_rules[n] = (struct seccomp_rule){
                .syscall = syscall,
                .action = action,
                .args = args,
                .n_args = n_args,
        };
        return n + 1;
}

static void build_default_profile(void)
{
        const struct seccomp_action allow = ACTION_ALLOW, deny = ACTION_DENY;
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_SIZE(allowed_syscalls); i++)
                n = add_rule(n, allowed_syscalls[i], allow, NULL, 0);
        for (size_t i = 0; i < ARRAY_SIZE(fixed_conditional_rules); i++)
                default_rules[n++] = fixed_conditional_rules[i];
        for (size_t s = 0; s < ARRAY_SIZE(family_checked_syscalls); s++)
                for (size_t f = 0; f < ARRAY_SIZE(allowed_socket_families); f++)
                        n = add_rule(n, family_checked_syscalls[s], allow,
                                     &allowed_socket_families[f], 1);
        for (size_t i = 0; i < ARRAY_SIZE(allowed_personalities); i++)
                n = add_rule(n, "personality", allow, &allowed_personalities[i], 1);

        size_t n_ioctl = ioctl_rules(ioctl_allowed);
        for (size_t i = 0; i < n_ioctl; i++)
                n = add_rule(n, "ioctl", allow, &ioctl_allowed[i], 1);

        for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls); i++)
                n = add_rule(n, denied_syscalls[i].name, deny, NULL, 0);

        default_profile.n_rules = n;
}

const struct seccomp_profile *seccomp_default_profile(void)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        pthread_once(&once, build_default_profile);
        return &default_profile;
}

const char *seccomp_default_denied_reason(const char *syscall)
{
        if (!syscall)
                return NULL;
        for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls); i++)
                if (strcmp(syscall, denied_syscalls[i].name) == 0)
                        return denied_syscalls[i].why;
        return NULL;
}
