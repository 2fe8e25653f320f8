/* SPDX-License-Identifier: MIT */
/*
 * The seccomp listener of the violations report (policy/seccomp-notify.c):
 * the notify form of the default program refuses exactly what the program
 * refuses and costs allowed calls nothing; refusals are answered with the
 * errno the filter gave; with the listener gone, refused calls stay
 * refused (the kernel answers ENOSYS); a second listener falls back to the
 * plain program.
 */
#include <poll.h>
#include <stddef.h>
#include <sys/ptrace.h>

#include "kernel/seccomp_test.h"
#include "policy/seccomp-notify.h"

static void default_and_notify(struct seccomp_program *plain, struct seccomp_program *notify)
{
        cr_assert_eq(seccomp_default_program(plain), 0);
        cr_assert_gt(seccomp_program_notify(plain, notify), 0);
}

/* ---- the program, instruction by instruction ---- */

/* The instructions one run executes, as (code, k, branch taken) without
 * their jump offsets (a `ja`'s k is one), and its verdict: two programs whose traces agree
 * cost a call the same. */
struct trace {
        uint32_t ret;
        size_t n;
        struct {
                uint16_t code;
                uint32_t k;
                bool taken;
        } step[BPF_MAXINSNS];
};

static void run_traced(const struct seccomp_program *prog, const struct seccomp_data *d,
                       struct trace *t)
{
        uint32_t a = 0;
        t->n = 0;
        for (size_t pc = 0; pc < prog->len; pc++) {
                const struct sock_filter *f = &prog->insns[pc];
                bool taken = false;
                size_t skip = 0;
                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        a = bpf_load(d, f->k);
                        break;
                case BPF_ALU | BPF_AND | BPF_K:
                        a &= f->k;
                        break;
                case BPF_JMP | BPF_JA:
                        skip = f->k;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        taken = a == f->k;
                        skip = taken ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGT | BPF_K:
                        taken = a > f->k;
                        skip = taken ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGE | BPF_K:
                        taken = a >= f->k;
                        skip = taken ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JSET | BPF_K:
                        taken = (a & f->k) != 0;
                        skip = taken ? f->jt : f->jf;
                        break;
                case BPF_RET | BPF_K:
                        break;
                default:
                        cr_assert_fail("BPF opcode 0x%04x at %zu not traced", f->code, pc);
                }
                t->step[t->n].code = f->code;
                t->step[t->n].k = f->code == (BPF_JMP | BPF_JA) ? 0 : f->k;
                t->step[t->n].taken = taken;
                t->n++;
                if (f->code == (BPF_RET | BPF_K)) {
                        t->ret = f->k;
                        return;
                }
                pc += skip;
        }
        cr_assert_fail("BPF program ran off its end");
}

/* The plain program's verdict as the notify program gives it. */
static uint32_t as_notify(uint32_t ret)
{
        return ret == RET_ERRNO(EPERM) ? SECCOMP_RET_USER_NOTIF : ret;
}

static bool same_path(const struct trace *p, const struct trace *q)
{
        if (p->n != q->n)
                return false;
        for (size_t i = 0; i + 1 < p->n; i++)
                if (p->step[i].code != q->step[i].code || p->step[i].k != q->step[i].k ||
                    p->step[i].taken != q->step[i].taken)
                        return false;
        return p->step[p->n - 1].code == q->step[q->n - 1].code && as_notify(p->ret) == q->ret;
}

static bool is_install_nr(uint32_t arch, int nr)
{
        return arch == seccomp_arch_native() && (nr == SYS_seccomp || nr == SYS_prctl);
}

Test(seccomp_notify, refusals_and_installs_become_notifications_and_nothing_else_changes)
{
        struct seccomp_program plain = {0}, notify = {0};
        default_and_notify(&plain, &notify);
        cr_expect_eq(notify.flags, plain.flags | SECCOMP_FILTER_FLAG_NEW_LISTENER);
        /* Every number, native and both foreign ABIs, with arguments the
         * conditional rules and the install checks look at: but for
         * seccomp and prctl, the same instructions in the same order to
         * the same verdict, EPERM being NOTIF: allowed calls cost nothing
         * more. */
        static const uint64_t args[] = {0,
                                        1 /* SECCOMP_SET_MODE_FILTER */,
                                        2 /* SECCOMP_MODE_FILTER */,
                                        22 /* PR_SET_SECCOMP */,
                                        0x10000000 /* CLONE_NEWUSER */,
                                        17 /* AF_PACKET */,
                                        0x5412 /* TIOCSTI */,
                                        0x400000,
                                        ~0ULL};
        static const uint32_t arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386};
        static struct trace p, q;
        size_t refusals = 0;
        for (size_t a = 0; a < ARRAY_SIZE(arches); a++)
                for (int nr = 0; nr < 1024; nr++)
                        for (unsigned argi = 0; argi < 2; argi++)
                                for (size_t v = 0; v < ARRAY_SIZE(args); v++) {
                                        int n = nr < 512 ? nr : (0x40000000 | (nr - 512));
                                        if (is_install_nr(arches[a], n))
                                                continue;
                                        struct seccomp_data d = {.nr = n, .arch = arches[a]};
                                        d.args[argi] = args[v];
                                        run_traced(&plain, &d, &p);
                                        run_traced(&notify, &d, &q);
                                        cr_assert(same_path(&p, &q),
                                                  "arch %x nr %d arg%u=%llx: %zu steps to 0x%08x, "
                                                  "plain %zu to 0x%08x",
                                                  arches[a], n, argi, (unsigned long long) args[v],
                                                  q.n, q.ret, p.n, p.ret);
                                        refusals += p.ret == RET_ERRNO(EPERM);
                                }
        cr_expect_gt(refusals, 0);
        /* The installs: a notification, for both ways of making one; the
         * other uses of both calls still allowed, a few instructions on. */
        static const struct {
                int nr;
                uint64_t a0, a1;
                uint32_t want;
        } calls[] = {
                {SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, SECCOMP_RET_USER_NOTIF},
                {SYS_seccomp, SECCOMP_SET_MODE_FILTER | (1ULL << 32), 0, SECCOMP_RET_USER_NOTIF},
                {SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, RET_ALLOW},
                {SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, RET_ALLOW},
                {SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, SECCOMP_RET_USER_NOTIF},
                {SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT, RET_ALLOW},
                {SYS_prctl, PR_GET_SECCOMP, 0, RET_ALLOW},
                {SYS_prctl, PR_SET_NAME, SECCOMP_MODE_FILTER, RET_ALLOW},
                {SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, RET_ALLOW},
        };
        for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
                struct seccomp_data d = {.nr = calls[i].nr, .arch = seccomp_arch_native()};
                d.args[0] = calls[i].a0;
                d.args[1] = calls[i].a1;
                run_traced(&plain, &d, &p);
                run_traced(&notify, &d, &q);
                cr_expect_eq(p.ret, RET_ALLOW, "call %zu: the default profile allows it", i);
                cr_expect_eq(q.ret, calls[i].want, "call %zu: 0x%08x", i, q.ret);
                cr_expect_leq(q.n, p.n + 5, "call %zu: %zu instructions, plain %zu", i, q.n, p.n);
        }
        /* Foreign ABIs' installs are refused by the default profile: they
         * are reported as refusals. */
        cr_expect_eq(sim(&notify, AUDIT_ARCH_I386, 354 /* seccomp */, 0, 1),
                     as_notify(sim(&plain, AUDIT_ARCH_I386, 354, 0, 1)));
        /* clone3's ENOSYS (glibc's fallback to clone) is no refusal to
         * report. */
        cr_expect_eq(sim_native(&notify, "clone3", 0, 0), RET_ERRNO(ENOSYS));
        seccomp_program_free(&plain);
        seccomp_program_free(&notify);
}

static struct seccomp_refusal call_of(uint32_t arch, int nr, uint64_t a0, uint64_t a1)
{
        return (struct seccomp_refusal){.arch = arch, .nr = nr, .args = {a0, a1}};
}

Test(seccomp_notify, the_watch_tells_an_install_from_a_refusal)
{
        struct seccomp_program plain = {0}, notify = {0};
        default_and_notify(&plain, &notify);
        uint32_t native = seccomp_arch_native();
        struct seccomp_refusal install = call_of(native, SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0),
                               by_prctl = call_of(native, SYS_prctl, PR_SET_SECCOMP,
                                                  SECCOMP_MODE_FILTER),
                               wide = call_of(native, SYS_prctl, PR_SET_SECCOMP,
                                              SECCOMP_MODE_FILTER | (1ULL << 32)),
                               refused = call_of(native, SYS_keyctl, 0, 0),
                               i386 = call_of(AUDIT_ARCH_I386, 354, SECCOMP_SET_MODE_FILTER, 0);
        cr_expect(seccomp_program_allows(&plain, &install));
        cr_expect(seccomp_program_allows(&plain, &by_prctl));
        cr_expect_not(seccomp_program_allows(&plain, &refused));
        cr_expect_not(seccomp_program_allows(&plain, &i386));
        cr_expect_not(seccomp_program_allows(NULL, &install));
        cr_expect(seccomp_refusal_installs_filter(&install));
        cr_expect(seccomp_refusal_installs_filter(&by_prctl));
        cr_expect(seccomp_refusal_installs_filter(&i386));
        /* The kernel reads prctl's mode whole: that call fails, it
         * installs nothing. */
        cr_expect_not(seccomp_refusal_installs_filter(&wide));
        cr_expect_not(seccomp_refusal_installs_filter(&refused));
        struct seccomp_refusal strict = call_of(native, SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0);
        cr_expect_not(seccomp_refusal_installs_filter(&strict));
        seccomp_program_free(&plain);
        seccomp_program_free(&notify);
}

/* ---- custom profiles ---- */

static const char *const few_allowed[] = {"read", "write", "exit_group", "getpid", "keyctl"};

static void compile_custom(bool with_seccomp, const struct seccomp_arg_cmp *seccomp_args,
                           size_t n_seccomp_args, bool i386, struct seccomp_program *out)
{
        static struct seccomp_rule rules[16];
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(few_allowed); i++)
                rules[n++] = (struct seccomp_rule){.syscall = few_allowed[i],
                                                   .action = {SECCOMP_ACT_ALLOW_, 0}};
        if (with_seccomp) {
                rules[n++] = (struct seccomp_rule){.syscall = "seccomp",
                                                   .action = {SECCOMP_ACT_ALLOW_, 0},
                                                   .args = seccomp_args,
                                                   .n_args = n_seccomp_args};
                rules[n++] = (struct seccomp_rule){.syscall = "prctl",
                                                   .action = {SECCOMP_ACT_ALLOW_, 0}};
        }
        static const char *const arches[] = {"SCMP_ARCH_X86"};
        struct seccomp_profile prof = {
                .default_action = {SECCOMP_ACT_ERRNO_, EPERM},
                .badarch_action = {SECCOMP_ACT_KILL_PROCESS_, 0},
                .architectures = i386 ? arches : NULL,
                .n_architectures = i386 ? 1 : 0,
                .rules = rules,
                .n_rules = n,
        };
        psrun_error err = {0};
        cr_assert_eq(seccomp_compile(&prof, out, &err), 0, "%s", err.msg);
}

Test(seccomp_notify, a_profile_that_allows_seccomp_reports_installs_in_each_abi_it_allows)
{
        /* What a program with a sandbox of its own (Chrome, Node) needs. */
        if (seccomp_arch_native() != SCMP_ARCH_X86_64)
                cr_skip_test("the i386 numbers are x86_64's foreign ABI");
        struct seccomp_program plain = {0}, notify = {0};
        compile_custom(true, NULL, 0, true, &plain);
        cr_assert_gt(seccomp_program_notify(&plain, &notify), 0);
        static const struct {
                uint32_t arch;
                int nr;
                uint64_t a0, a1;
                uint32_t want;
        } calls[] = {
                {AUDIT_ARCH_X86_64, SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
                 SECCOMP_RET_USER_NOTIF},
                {AUDIT_ARCH_X86_64, SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                 SECCOMP_RET_USER_NOTIF},
                {AUDIT_ARCH_X86_64, SYS_prctl, PR_SET_DUMPABLE, 0, RET_ALLOW},
                {AUDIT_ARCH_I386, 354 /* seccomp */, SECCOMP_SET_MODE_FILTER, 0,
                 SECCOMP_RET_USER_NOTIF},
                {AUDIT_ARCH_I386, 172 /* prctl */, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                 SECCOMP_RET_USER_NOTIF},
                {AUDIT_ARCH_I386, 172, PR_SET_DUMPABLE, 0, RET_ALLOW},
                {AUDIT_ARCH_I386, 20 /* getpid */, 0, 0, RET_ALLOW},
                {AUDIT_ARCH_X86_64, SYS_keyctl, 0, 0, RET_ALLOW},
                {AUDIT_ARCH_X86_64, SYS_ptrace, 0, 0, SECCOMP_RET_USER_NOTIF},
        };
        for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
                struct seccomp_data d = {.nr = calls[i].nr, .arch = calls[i].arch};
                d.args[0] = calls[i].a0;
                d.args[1] = calls[i].a1;
                cr_expect_eq(bpf_run(&notify, &d), calls[i].want, "call %zu: 0x%08x", i,
                             bpf_run(&notify, &d));
                struct seccomp_refusal r =
                        call_of(calls[i].arch, calls[i].nr, calls[i].a0, calls[i].a1);
                cr_expect_eq(seccomp_program_allows(&plain, &r),
                             calls[i].want != SECCOMP_RET_USER_NOTIF ||
                                     seccomp_refusal_installs_filter(&r),
                             "call %zu", i);
        }
        seccomp_program_free(&plain);
        seccomp_program_free(&notify);
}

Test(seccomp_notify, a_profile_that_refuses_seccomp_or_allows_it_by_argument_is_left_alone)
{
        /* Refused: the refusal is reported already, as any refusal. */
        struct seccomp_program plain = {0}, notify = {0};
        compile_custom(false, NULL, 0, false, &plain);
        cr_assert_gt(seccomp_program_notify(&plain, &notify), 0);
        cr_expect_eq(notify.len, plain.len, "no install check for a refused install");
        cr_expect_eq(sim_native(&notify, "seccomp", 0, SECCOMP_SET_MODE_FILTER),
                     SECCOMP_RET_USER_NOTIF);
        struct seccomp_refusal r =
                call_of(seccomp_arch_native(), SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0);
        cr_expect_not(seccomp_program_allows(&plain, &r), "the watch answers EPERM");
        seccomp_program_free(&plain);
        seccomp_program_free(&notify);
        /* Allowed for some flags only: the verdict depends on arguments
         * the install check does not know; left a plain ALLOW, unreported
         * (docs/security.md says so). */
        static const struct seccomp_arg_cmp flags_zero[] = {
                {.index = 1, .op = SECCOMP_CMP_EQ_, .value = 0}};
        compile_custom(true, flags_zero, 1, false, &plain);
        cr_assert_gt(seccomp_program_notify(&plain, &notify), 0);
        struct seccomp_data d = {.nr = SYS_seccomp,
                                 .arch = seccomp_arch_native(),
                                 .args = {SECCOMP_SET_MODE_FILTER, 0}};
        cr_expect_eq(bpf_run(&plain, &d), RET_ALLOW);
        cr_expect_eq(bpf_run(&notify, &d), RET_ALLOW);
        /* prctl is allowed whatever its arguments: caught. */
        struct seccomp_data pd = {.nr = SYS_prctl,
                                  .arch = seccomp_arch_native(),
                                  .args = {PR_SET_SECCOMP, SECCOMP_MODE_FILTER}};
        cr_expect_eq(bpf_run(&notify, &pd), SECCOMP_RET_USER_NOTIF);
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

/* A filter of the child's own: keyctl refused with EPERM, the rest
 * allowed. */
static long install_keyctl_refuser(void)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = {ARRAY_SIZE(f), f};
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
}

Test(seccomp_notify, an_install_is_seen_and_continues_and_what_it_refuses_is_not)
{
        int sv[2], out[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct seccomp_program plain = {0}, notify = {0};
                int listener = -1;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    seccomp_default_program(&plain) < 0 ||
                    seccomp_program_notify(&plain, &notify) <= 0 ||
                    seccomp_program_load_listener(&notify, &plain, &listener) < 0)
                        _exit(100);
                send_fd(sv[1], listener);
                close(listener);
                int e_install = ERRNO_OF(install_keyctl_refuser());
                int e_keyctl = call_keyctl();
                char buf[64];
                int n = snprintf(buf, sizeof(buf), "%s %s",
                                 e_install ? strerrorname_np(e_install) : "ok",
                                 e_keyctl ? strerrorname_np(e_keyctl) : "ok");
                _exit(write(out[1], buf, (size_t) n) == n ? 0 : 102);
        }
        close(sv[1]);
        close(out[1]);
        int listener = recv_fd(sv[0]);
        cr_assert_geq(listener, 0, "no listener came");
        struct seccomp_program plain = {0};
        cr_assert_eq(seccomp_default_program(&plain), 0);
        struct seccomp_refusal r;
        int e;
        while ((e = seccomp_notify_recv(listener, &r)) == -EINTR)
                ;
        cr_assert_eq(e, 0, "recv: %s", strerror(-e));
        cr_expect_eq(r.nr, SYS_seccomp);
        cr_expect_eq(r.args[0], SECCOMP_SET_MODE_FILTER);
        cr_expect(seccomp_program_allows(&plain, &r), "an allowed call, not a refusal");
        cr_expect(seccomp_refusal_installs_filter(&r));
        cr_assert_eq(seccomp_notify_continue(listener, r.id), 0);
        /* The keyctl refusal both filters make is the child's filter's
         * (ERRNO outranks USER_NOTIF): nothing more comes. The child is
         * reaped first: a kernel before 6.x drops the filter's last user
         * (and says POLLHUP) only when its zombie is released. */
        char got[64];
        read_all_into(out[0], got, sizeof(got));
        reap_ok(pid);
        struct pollfd p = {listener, POLLIN, 0};
        cr_assert_eq(poll(&p, 1, 5000), 1);
        cr_expect_not(p.revents & POLLIN, "a notification came: %x", p.revents);
        cr_expect(p.revents & POLLHUP);
        cr_expect_str_eq(got, "ok EPERM", "the install ran as the profile allows");
        seccomp_program_free(&plain);
        close(listener);
        close(sv[0]);
        close(out[0]);
}
