/* SPDX-License-Identifier: MIT */
/*
 * The seccomp listener of the violations report (policy/seccomp-notify.c):
 * the notify form of the default program refuses exactly what the program
 * refuses and costs allowed calls nothing; refusals are answered with the
 * errno the filter gave; with the listener gone, refused calls stay
 * refused (the kernel answers ENOSYS); a second listener falls back to the
 * plain program.
 */
#include <stddef.h>
#include <sys/ptrace.h>

#include "kernel/seccomp_test.h"
#include "policy/seccomp-notify.h"

static void default_and_notify(struct seccomp_program *plain, struct seccomp_program *notify)
{
        cr_assert_eq(seccomp_default_program(plain), 0);
        cr_assert_gt(seccomp_program_notify(plain, notify), 0);
}

Test(seccomp_notify, refusals_become_notifications_and_nothing_else_changes)
{
        struct seccomp_program plain = {0}, notify = {0};
        default_and_notify(&plain, &notify);
        /* The same program but for the refusing returns: an allowed call
         * runs the same instructions to the same ALLOW. */
        cr_assert_eq(notify.len, plain.len);
        cr_expect_eq(notify.flags, plain.flags | SECCOMP_FILTER_FLAG_NEW_LISTENER);
        size_t changed = 0;
        for (size_t i = 0; i < plain.len; i++) {
                const struct sock_filter *a = &plain.insns[i], *b = &notify.insns[i];
                cr_assert_eq(a->code, b->code, "instruction %zu", i);
                cr_assert_eq(a->jt, b->jt, "instruction %zu", i);
                cr_assert_eq(a->jf, b->jf, "instruction %zu", i);
                if (a->k == b->k)
                        continue;
                changed++;
                cr_expect_eq(a->code, BPF_RET | BPF_K);
                cr_expect_eq(a->k, RET_ERRNO(EPERM));
                cr_expect_eq(b->k, SECCOMP_RET_USER_NOTIF);
        }
        cr_expect_gt(changed, 0);
        /* Every number, native and both foreign ABIs, with arguments the
         * conditional rules look at: the verdicts agree, EPERM being
         * NOTIF. */
        static const uint64_t args[] = {0,
                                        0x10000000 /* CLONE_NEWUSER */,
                                        17 /* AF_PACKET */,
                                        0x5412 /* TIOCSTI */,
                                        0x400000,
                                        ~0ULL};
        static const uint32_t arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386};
        for (size_t a = 0; a < ARRAY_SIZE(arches); a++)
                for (int nr = 0; nr < 1024; nr++)
                        for (unsigned argi = 0; argi < 2; argi++)
                                for (size_t v = 0; v < ARRAY_SIZE(args); v++) {
                                        int n = nr < 512 ? nr : (0x40000000 | (nr - 512));
                                        uint32_t p = sim(&plain, arches[a], n, argi, args[v]);
                                        uint32_t q = sim(&notify, arches[a], n, argi, args[v]);
                                        uint32_t want =
                                                p == RET_ERRNO(EPERM) ? SECCOMP_RET_USER_NOTIF : p;
                                        cr_assert_eq(q, want,
                                                     "arch %x nr %d arg%u=%llx: 0x%08x, want "
                                                     "0x%08x",
                                                     arches[a], n, argi,
                                                     (unsigned long long) args[v], q, want);
                                }
        /* clone3's ENOSYS (glibc's fallback to clone) is no refusal to
         * report. */
        cr_expect_eq(sim_native(&notify, "clone3", 0, 0), RET_ERRNO(ENOSYS));
        seccomp_program_free(&plain);
        seccomp_program_free(&notify);
}

Test(seccomp_notify, a_program_refusing_nothing_has_no_listener)
{
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct seccomp_program p = {.insns = &allow, .len = 1}, out = {0};
        cr_expect_eq(seccomp_program_notify(&p, &out), 0);
        cr_expect_eq(out.len, 0);
        cr_expect_null(out.insns);
}

/* ---- live: a child under the notify filter, this process answering ---- */

static void send_fd(int sock, int fd)
{
        char byte = 0;
        struct iovec iov = {&byte, 1};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
        if (fd >= 0) {
                m.msg_control = u.buf;
                m.msg_controllen = sizeof(u.buf);
                struct cmsghdr *c = CMSG_FIRSTHDR(&m);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        (void) sendmsg(sock, &m, 0);
}

static int recv_fd(int sock)
{
        char byte;
        struct iovec iov = {&byte, 1};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr m = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = u.buf,
                           .msg_controllen = sizeof(u.buf)};
        if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
                return -2;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        if (!c || c->cmsg_type != SCM_RIGHTS)
                return -1;
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        return fd;
}

static int call_ptrace(void)
{
        return ERRNO_OF(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static int call_bpf(void)
{
        return ERRNO_OF(syscall(SYS_bpf, 0, NULL, 0));
}

static int call_keyctl(void)
{
        return ERRNO_OF(syscall(SYS_keyctl, 0, -3, 0));
}

static int call_unshare_user(void)
{
        return ERRNO_OF(unshare(CLONE_NEWUSER));
}

/* The refused calls the children make, in order, each printed as the
 * errno it got. */
static int refused_calls(char *out, size_t len)
{
        int packet = socket(AF_PACKET, SOCK_RAW, 0);
        int e_packet = packet < 0 ? errno : 0;
        int e_ptrace = call_ptrace(), e_bpf = call_bpf(), e_keyctl = call_keyctl();
        int e_userns = call_unshare_user();
        /* Allowed calls go through untouched. */
        int e_getpid = syscall(SYS_getpid) > 0 ? 0 : errno;
        return snprintf(out, len, "%s %s %s %s %s %s", strerrorname_np(e_ptrace),
                        strerrorname_np(e_bpf), strerrorname_np(e_keyctl),
                        e_packet ? strerrorname_np(e_packet) : "ok", strerrorname_np(e_userns),
                        e_getpid ? strerrorname_np(e_getpid) : "ok");
}

/* Forks the child: no_new_privs, the notify filter, its listener sent
 * back on `sock`; then the refused calls, their errnos written to `out`
 * (a pipe). `before` runs first (a filter of its own, say). */
static pid_t spawn_filtered(int sock, int out, void (*before)(void))
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid != 0)
                return pid;
        struct seccomp_program plain = {0}, notify = {0};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_default_program(&plain) < 0 ||
            seccomp_program_notify(&plain, &notify) <= 0)
                _exit(100);
        if (before)
                before();
        int listener = -1;
        if (seccomp_program_load_listener(&notify, &plain, &listener) < 0)
                _exit(101);
        send_fd(sock, listener);
        if (listener >= 0)
                close(listener);
        char buf[256];
        int n = refused_calls(buf, sizeof(buf));
        if (write(out, buf, (size_t) n) != n)
                _exit(102);
        _exit(0);
}

static void read_all_into(int fd, char *buf, size_t len)
{
        size_t got = 0;
        ssize_t n;
        while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
                got += (size_t) n;
        buf[got] = '\0';
}

static void reap_ok(pid_t pid)
{
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
}

Test(seccomp_notify, refusals_are_answered_with_eperm_and_named)
{
        int sv[2], out[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = spawn_filtered(sv[1], out[1], NULL);
        close(sv[1]);
        close(out[1]);
        int listener = recv_fd(sv[0]);
        cr_assert_geq(listener, 0, "no listener came");
        char names[512] = "", detail[512] = "";
        for (int i = 0; i < 5; i++) {
                struct seccomp_refusal r;
                int e;
                while ((e = seccomp_notify_recv(listener, &r)) == -EINTR)
                        ;
                cr_assert_eq(e, 0, "recv: %s", strerror(-e));
                /* The thread waits for us: its pid is the child's. */
                cr_expect_eq(r.tid, pid);
                cr_expect(seccomp_notify_pending(listener, r.id));
                char what[128];
                seccomp_refusal_describe(&r, false, what, sizeof(what));
                strcat(names, i ? " " : "");
                strcat(names, what);
                seccomp_refusal_describe(&r, true, what, sizeof(what));
                strcat(detail, i ? " " : "");
                strcat(detail, what);
                cr_assert_eq(seccomp_notify_answer(listener, r.id, EPERM), 0);
        }
        char got[256];
        read_all_into(out[0], got, sizeof(got));
        reap_ok(pid);
        cr_expect_str_eq(names, "socket ptrace bpf keyctl unshare");
        cr_expect_str_eq(detail, "socket(AF_PACKET) ptrace bpf keyctl unshare(CLONE_NEWUSER)");
        cr_expect_str_eq(got, "EPERM EPERM EPERM EPERM EPERM ok");
        close(listener);
        close(sv[0]);
        close(out[0]);
}

Test(seccomp_notify, with_the_listener_gone_refused_calls_stay_refused)
{
        /* Fail closed: a supervisor (its own process, holding the only copy
         * of the listener) is killed while the child waits in a refused
         * call. That call, and every later one, is refused with ENOSYS;
         * none runs. */
        int sv[2], out[2], ready[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
        pid_t child = spawn_filtered(sv[1], out[1], NULL);
        close(out[1]);
        pid_t sup = fork();
        cr_assert_geq(sup, 0);
        if (sup == 0) {
                close(ready[0]);
                int listener = recv_fd(sv[0]);
                if (listener < 0)
                        _exit(1);
                close(sv[0]);
                close(sv[1]);
                struct seccomp_refusal r;
                /* Take the first notification and never answer it. */
                if (seccomp_notify_recv(listener, &r) < 0)
                        _exit(2);
                (void) !write(ready[1], "x", 1);
                for (;;)
                        pause();
        }
        close(sv[0]);
        close(sv[1]);
        close(ready[1]);
        char c;
        cr_assert_eq(read(ready[0], &c, 1), 1, "the supervisor never saw a refusal");
        close(ready[0]);
        /* The child is blocked in socket(AF_PACKET) now. */
        cr_assert_eq(kill(sup, SIGKILL), 0);
        int st;
        cr_assert_eq(waitpid(sup, &st, 0), sup);
        char got[256];
        read_all_into(out[0], got, sizeof(got));
        reap_ok(child);
        cr_expect_str_eq(got, "ENOSYS ENOSYS ENOSYS ENOSYS ENOSYS ok");
        close(out[0]);
}

static void install_own_listener(void)
{
        /* A filter with a listener of its own already on the chain, as
         * when psrun runs under another supervisor's notify filter: it
         * sends getppid to its listener, allows the rest. */
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = {ARRAY_SIZE(f), f};
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp) <
            0)
                _exit(110);
}

Test(seccomp_notify, a_second_listener_falls_back_to_the_plain_filter)
{
        int sv[2], out[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = spawn_filtered(sv[1], out[1], install_own_listener);
        close(sv[1]);
        close(out[1]);
        cr_expect_eq(recv_fd(sv[0]), -1, "a listener came although the kernel allows one");
        char got[256];
        read_all_into(out[0], got, sizeof(got));
        reap_ok(pid);
        /* The plain program still refuses, with its own EPERM. */
        cr_expect_str_eq(got, "EPERM EPERM EPERM EPERM EPERM ok");
        close(sv[0]);
        close(out[0]);
}
