/* SPDX-License-Identifier: MIT */
/*
 * probe: a small static program the tests run inside the sandbox to observe
 * it from within. Each subcommand prints one line and exits 0 when the
 * operation succeeded, 1 when it failed (printing the errno name).
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/vm_sockets.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int report_errno(int e)
{
        printf("%s\n", strerrorname_np(e) ? strerrorname_np(e) : "EUNKNOWN");
        return 1;
}

static int do_status(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        if (!f)
                return report_errno(errno);
        char line[256];
        while (fgets(line, sizeof(line), f))
                if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10) ||
                    !strncmp(line, "Seccomp:", 8) || !strncmp(line, "Uid", 3) ||
                    !strncmp(line, "Gid", 3) || !strncmp(line, "Groups", 6))
                        fputs(line, stdout);
        fclose(f);
        return 0;
}

static int do_write(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return report_errno(errno);
        if (write(fd, "x", 1) != 1)
                return report_errno(errno);
        close(fd);
        printf("ok\n");
        return 0;
}

static int do_fill(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return report_errno(errno);
        static char buf[1 << 16];
        memset(buf, 'x', sizeof(buf));
        unsigned long long total = 0;
        for (;;) {
                ssize_t n = write(fd, buf, sizeof(buf));
                if (n < 0) {
                        int e = errno;
                        printf("%s %llu\n", strerrorname_np(e), total);
                        return 1;
                }
                total += (unsigned long long) n;
        }
}

static int do_exists(const char *path)
{
        if (access(path, F_OK) == 0) {
                printf("present\n");
                return 0;
        }
        return report_errno(errno);
}

static int do_read(const char *path)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return report_errno(errno);
        char buf[4096];
        unsigned long long total = 0;
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0 && total < (1 << 20))
                total += (unsigned long long) n;
        if (n < 0)
                return report_errno(errno);
        printf("%llu\n", total);
        return 0;
}

static int do_ifaces(void)
{
        struct if_nameindex *ifs = if_nameindex();
        if (!ifs)
                return report_errno(errno);
        for (struct if_nameindex *i = ifs; i->if_index; i++)
                printf("%s%s", i == ifs ? "" : " ", i->if_name);
        printf("\n");
        return 0;
}

static int do_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        if (!d)
                return report_errno(errno);
        struct dirent *de;
        int self = dirfd(d);
        bool first = true;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && atoi(de->d_name) != self) {
                        printf("%s%s", first ? "" : " ", de->d_name);
                        first = false;
                }
        printf("\n");
        closedir(d);
        return 0;
}

static void on_segv(int sig __attribute__((unused)))
{
        static const char msg[] = "NOABI\n";
        (void) !write(1, msg, sizeof(msg) - 1);
        _exit(3);
}

static long raw_int80_getpid(void)
{
        long ret;
        /* i386 ABI: eax = 20 (getpid) */
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory", "r8", "r9", "r10", "r11");
        return ret;
}

/* One call by name: 1 for an unknown name, else 0 with its result in *r
 * (errno set when it failed). int80 is do_syscall's own. */
static int named_call(const char *name, long *ret)
{
        long r;
        if (!strcmp(name, "unshare-user"))
                r = unshare(CLONE_NEWUSER);
        else if (!strcmp(name, "unshare-net"))
                r = unshare(CLONE_NEWNET);
        else if (!strcmp(name, "mount"))
                r = mount("none", "/tmp", "tmpfs", 0, NULL);
        else if (!strcmp(name, "bpf")) {
                union bpf_attr attr = {0};
                r = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
        } else if (!strcmp(name, "keyctl"))
                r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0);
        else if (!strcmp(name, "ptrace"))
                r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        else if (!strcmp(name, "perf_event_open"))
                r = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
        else if (!strcmp(name, "io_uring_setup"))
                r = syscall(SYS_io_uring_setup, 1, NULL);
        else if (!strcmp(name, "userfaultfd"))
                r = syscall(SYS_userfaultfd, 0);
        else if (!strcmp(name, "init_module"))
                r = syscall(SYS_init_module, NULL, 0, "");
        else if (!strcmp(name, "setns"))
                r = setns(0, 0);
        else if (!strcmp(name, "chroot"))
                r = chroot("/");
        else if (!strcmp(name, "getpid"))
                r = getpid() > 0 ? 0 : -1;
        else if (!strcmp(name, "getppid"))
                r = syscall(SYS_getppid) >= 0 ? 0 : -1;
        else
                return 1;
        *ret = r;
        return 0;
}

static int do_syscall(const char *name)
{
        long r;
        if (!strcmp(name, "int80")) {
                /* Kernels without IA32 emulation fault on int $0x80. */
                signal(SIGSEGV, on_segv);
                long v = raw_int80_getpid();
                if (v < 0)
                        return report_errno((int) -v);
                printf("ok\n");
                return 0;
        }
        if (named_call(name, &r)) {
                fprintf(stderr, "probe: unknown syscall %s\n", name);
                return 2;
        }
        if (r < 0)
                return report_errno(errno);
        printf("ok\n");
        return 0;
}

#if defined(__x86_64__)
#define PROBE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define PROBE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* ownfilter HOW NAME: stacks a filter of its own that refuses syscall
 * NAME with EPERM (by seccomp(2) or prctl(2), as HOW says), then makes
 * the call; prints how each went ("ok EPERM"). The filter checks the
 * architecture first, as any filter must. */
static int do_own_filter(const char *how, const char *name)
{
        static const struct {
                const char *name;
                long nr;
        } calls[] = {
                {"keyctl", SYS_keyctl},
                {"ptrace", SYS_ptrace},
                {"bpf", SYS_bpf},
                {"getppid", SYS_getppid},
        };
        long nr = -1;
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
                if (!strcmp(calls[i].name, name))
                        nr = calls[i].nr;
        if (nr < 0) {
                fprintf(stderr, "probe: unknown syscall %s\n", name);
                return 2;
        }
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROBE_AUDIT_ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) nr, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
        long r;
        if (!strcmp(how, "seccomp"))
                r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
        else if (!strcmp(how, "prctl"))
                r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
        else {
                fprintf(stderr, "probe: ownfilter seccomp|prctl NAME\n");
                return 2;
        }
        const char *installed = r < 0 ? strerrorname_np(errno) : "ok";
        long c;
        (void) named_call(name, &c);
        printf("%s %s\n", installed, c < 0 ? strerrorname_np(errno) : "ok");
        return r < 0;
}

/* refuse N NAME: the call N times; prints how many failed and the last
 * errno ("5000 EPERM"). */
static int do_refuse(const char *count, const char *name)
{
        long n = atol(count), failed = 0, r = 0;
        int last = 0;
        for (long i = 0; i < n; i++) {
                if (named_call(name, &r)) {
                        fprintf(stderr, "probe: unknown syscall %s\n", name);
                        return 2;
                }
                if (r < 0) {
                        failed++;
                        last = errno;
                }
        }
        printf("%ld %s\n", failed, last ? strerrorname_np(last) : "none");
        return failed ? 1 : 0;
}

/* refusetime N NAME: the call N times; prints the ns per call (for the
 * benchmarks: what a refusal costs the caller). */
static int do_refuse_time(const char *count, const char *name)
{
        long n = atol(count), r = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < n; i++)
                if (named_call(name, &r)) {
                        fprintf(stderr, "probe: unknown syscall %s\n", name);
                        return 2;
                }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ns = (double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec);
        printf("%.1f\n", n > 0 ? ns / (double) n : 0.0);
        return 0;
}

/* getppid N: an allowed syscall N times (a syscall-heavy workload that
 * the filter lets through); prints the ns per call. */
static int do_getppid(const char *count)
{
        long n = atol(count);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < n; i++)
                (void) syscall(SYS_getppid);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ns = (double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec);
        printf("%.1f\n", n > 0 ? ns / (double) n : 0.0);
        return 0;
}

static int do_signal(const char *pid, const char *sig)
{
        if (kill(atoi(pid), atoi(sig)) < 0)
                return report_errno(errno);
        printf("ok\n");
        return 0;
}

static int do_open_rw(const char *path)
{
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return report_errno(errno);
        close(fd);
        printf("ok\n");
        return 0;
}

static int do_socket(const char *family)
{
        int fam = !strcmp(family, "packet")  ? AF_PACKET
                  : !strcmp(family, "vsock") ? AF_VSOCK
                  : !strcmp(family, "inet")  ? AF_INET
                                             : AF_UNIX;
        int fd = socket(fam, !strcmp(family, "packet") ? SOCK_RAW : SOCK_STREAM, 0);
        if (fd < 0)
                return report_errno(errno);
        close(fd);
        printf("ok\n");
        return 0;
}

static int do_mknod(const char *path)
{
        if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0)
                return report_errno(errno);
        printf("ok\n");
        return 0;
}

/* tty: the terminal ioctls a hostile program would use on an inherited
 * terminal (stdin), each printed as NAME=OK or NAME=ERRNO; then `stty -echo`
 * style damage that psrun must undo: echo off, window size 7x9. */
static int do_tty(void)
{
        struct termios t;
        struct winsize ws;
        int ldisc = 27; /* N_NULL */
        const struct {
                const char *name;
                int ok;
        } results[] = {
                {"tcgets", ioctl(0, TCGETS, &t) == 0 ? 0 : errno},
                {"winsz", ioctl(0, TIOCGWINSZ, &ws) == 0 ? 0 : errno},
                {"excl", ioctl(0, TIOCEXCL) == 0 ? 0 : errno},
                {"setd", ioctl(0, TIOCSETD, &ldisc) == 0 ? 0 : errno},
                {"sti", ioctl(0, TIOCSTI, "x") == 0 ? 0 : errno},
                /* The kernel reads the low 32 bits of the request. */
                {"sti64", syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, "x") == 0 ? 0 : errno},
                {"xonc", ioctl(0, TCXONC, TCOOFF) == 0 ? 0 : errno},
                {"cons", ioctl(0, TIOCCONS) == 0 ? 0 : errno},
                {"nxcl", ioctl(0, TIOCNXCL) == 0 ? 0 : errno},
        };
        for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++)
                printf("%s=%s ", results[i].name,
                       results[i].ok ? strerrorname_np(results[i].ok) : "OK");
        t.c_lflag &= ~(tcflag_t) ECHO;
        ws.ws_row = 7;
        ws.ws_col = 9;
        printf("tcsets=%s swinsz=%s\n", ioctl(0, TCSETS, &t) == 0 ? "OK" : strerrorname_np(errno),
               ioctl(0, TIOCSWINSZ, &ws) == 0 ? "OK" : strerrorname_np(errno));
        return 0;
}

/* Take one more of a per-user kernel resource; 0 or -errno. */
static int take_one(const char *kind)
{
        if (!strcmp(kind, "inotify")) {
                int fd = (int) syscall(SYS_inotify_init1, 0);
                return fd < 0 ? -errno : 0;
        }
        if (!strcmp(kind, "pty")) {
                int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY);
                return fd < 0 ? -errno : 0;
        }
        if (!strcmp(kind, "mqueue")) {
                /* A POSIX message queue of the default size (about 80 KiB
                 * of RLIMIT_MSGQUEUE), raw: no librt in a static probe. */
                static int n;
                char name[32];
                snprintf(name, sizeof(name), "probe-%d", n++);
                long fd = syscall(SYS_mq_open, name, O_CREAT | O_RDWR, 0600, NULL);
                return fd < 0 ? -errno : 0;
        }
        if (!strcmp(kind, "sigqueue")) {
                siginfo_t si = {.si_code = SI_QUEUE, .si_pid = getpid(), .si_uid = getuid()};
                si.si_signo = SIGRTMIN;
                long r = syscall(SYS_rt_sigqueueinfo, getpid(), SIGRTMIN, &si);
                return r < 0 ? -errno : 0;
        }
        return -EINVAL;
}

/* hold KIND [SECONDS]: take KIND (inotify, pty, sigqueue, mqueue) until the kernel
 * refuses, print "COUNT ERRNO", then keep everything for SECONDS (or until
 * stdin closes). */
static int do_hold(const char *kind, const char *secs)
{
        struct rlimit nofile = {65536, 65536};
        (void) setrlimit(RLIMIT_NOFILE, &nofile);
        sigset_t rt;
        sigemptyset(&rt);
        sigaddset(&rt, SIGRTMIN);
        sigprocmask(SIG_BLOCK, &rt, NULL);
        long n = 0;
        int r;
        while ((r = take_one(kind)) == 0 && n < 1000000)
                n++;
        if (r == -EINVAL)
                return report_errno(EINVAL);
        printf("%ld %s\n", n, r < 0 ? strerrorname_np(-r) : "none");
        fflush(stdout);
        char c;
        alarm((unsigned) (secs ? atoi(secs) : 10));
        (void) !read(0, &c, 1);
        return 0;
}

static int do_forkbomb(void)
{
        /* Fork until refused; every child sleeps. Exits 1 once fork fails. */
        for (;;) {
                pid_t p = fork();
                if (p < 0) {
                        printf("%s\n", strerrorname_np(errno));
                        return 1;
                }
                if (p == 0) {
                        for (;;)
                                pause();
                }
        }
}

static int do_hog(const char *mb)
{
        size_t size = (size_t) atol(mb) << 20;
        char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return report_errno(errno);
        for (size_t i = 0; i < size; i += 4096)
                p[i] = 1;
        printf("touched %s MiB\n", mb);
        return 0;
}

static int do_daemon(void)
{
        /* Leave a detached process behind, as a careless or hostile program
         * would; it must not outlive the sandbox. */
        pid_t p = fork();
        if (p == 0) {
                setsid();
                if (fork() == 0) {
                        for (;;)
                                pause();
                }
                _exit(0);
        }
        waitpid(p, NULL, 0);
        printf("ok\n");
        return 0;
}

int main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IONBF, 0);
        if (argc < 2) {
                fprintf(stderr, "usage: probe CMD [ARG]\n");
                return 2;
        }
        const char *cmd = argv[1], *arg = argc > 2 ? argv[2] : "";
        if (!strcmp(cmd, "status"))
                return do_status();
        if (!strcmp(cmd, "write"))
                return do_write(arg);
        if (!strcmp(cmd, "fill"))
                return do_fill(arg);
        if (!strcmp(cmd, "exists"))
                return do_exists(arg);
        if (!strcmp(cmd, "read"))
                return do_read(arg);
        if (!strcmp(cmd, "ifaces"))
                return do_ifaces();
        if (!strcmp(cmd, "fds"))
                return do_fds();
        if (!strcmp(cmd, "syscall"))
                return do_syscall(arg);
        if (!strcmp(cmd, "refuse"))
                return do_refuse(arg, argc > 3 ? argv[3] : "");
        if (!strcmp(cmd, "ownfilter"))
                return do_own_filter(arg, argc > 3 ? argv[3] : "");
        if (!strcmp(cmd, "refusetime"))
                return do_refuse_time(arg, argc > 3 ? argv[3] : "");
        if (!strcmp(cmd, "getppid"))
                return do_getppid(arg);
        if (!strcmp(cmd, "tty"))
                return do_tty();
        if (!strcmp(cmd, "hold"))
                return do_hold(arg, argc > 3 ? argv[3] : NULL);
        if (!strcmp(cmd, "forkbomb"))
                return do_forkbomb();
        if (!strcmp(cmd, "hog"))
                return do_hog(arg);
        if (!strcmp(cmd, "daemon"))
                return do_daemon();
        if (!strcmp(cmd, "signal"))
                return do_signal(arg, argc > 3 ? argv[3] : "0");
        if (!strcmp(cmd, "openrw"))
                return do_open_rw(arg);
        if (!strcmp(cmd, "socket"))
                return do_socket(arg);
        if (!strcmp(cmd, "mknod"))
                return do_mknod(arg);
        if (!strcmp(cmd, "spin"))
                for (;;)
                        ;
        if (!strcmp(cmd, "sleep")) {
                sleep((unsigned) atoi(arg));
                return 0;
        }
        if (!strcmp(cmd, "env")) {
                for (char **e = environ; *e; e++)
                        printf("%s\n", *e);
                return 0;
        }
        if (!strcmp(cmd, "cwd")) {
                char buf[4096];
                if (!getcwd(buf, sizeof(buf)))
                        return report_errno(errno);
                printf("%s\n", buf);
                return 0;
        }
        if (!strcmp(cmd, "exit"))
                return atoi(arg);
        if (!strcmp(cmd, "kill"))
                return raise(atoi(arg)), 0;
        fprintf(stderr, "probe: unknown command %s\n", cmd);
        return 2;
}
