/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the seccomp tests (test_seccomp.c: the default profile;
 * test_seccomp_custom.c: custom profiles and the compiler's API): a classic
 * BPF interpreter to run the compiled filter on made-up seccomp_data, and a
 * checker that runs calls in children under the real filter.
 */
#pragma once

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

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "policy/seccomp.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a SECCOMP_RET_TRAP signal */
#endif

#define RET_ALLOW     SECCOMP_RET_ALLOW
#define RET_ERRNO(e)  (SECCOMP_RET_ERRNO | (uint32_t) (e))
#define ERRNO_OF(exp) ((exp) < 0 ? errno : 0)

/* ------------------------------------------------------------------------ */
/* A classic BPF interpreter, enough for what libseccomp emits. */

static inline uint32_t bpf_load(const struct seccomp_data *d, uint32_t off)
{
        uint32_t v;
        cr_assert(off + sizeof(v) <= sizeof(*d) && off % 4 == 0, "bad load offset %u", off);
        memcpy(&v, (const char *) d + off, sizeof(v));
        return v;
}

static inline uint32_t bpf_run(const struct seccomp_program *prog, const struct seccomp_data *d)
{
        uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

        for (size_t pc = 0; pc < prog->len; pc++) {
                const struct sock_filter *f = &prog->insns[pc];
                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        a = bpf_load(d, f->k);
                        break;
                case BPF_LD | BPF_MEM:
                        a = mem[f->k % BPF_MEMWORDS];
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
                        break;
                case BPF_ALU | BPF_OR | BPF_K:
                        a |= f->k;
                        break;
                case BPF_MISC | BPF_TAX:
                        x = a;
                        break;
                case BPF_MISC | BPF_TXA:
                        a = x;
                        break;
                case BPF_JMP | BPF_JA:
                        pc += f->k;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        pc += a == f->k ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGT | BPF_K:
                        pc += a > f->k ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGE | BPF_K:
                        pc += a >= f->k ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JSET | BPF_K:
                        pc += (a & f->k) ? f->jt : f->jf;
                        break;
                case BPF_RET | BPF_K:
                        return f->k;
                case BPF_RET | BPF_A:
                        return a;
                default:
                        cr_assert_fail("BPF opcode 0x%04x at %zu not simulated", f->code, pc);
                }
        }
        cr_assert_fail("BPF program ran off its end");
        return 0;
}

static inline uint32_t sim(const struct seccomp_program *prog, uint32_t arch, int nr, unsigned argi,
                           uint64_t argv)
{
        struct seccomp_data d = {.nr = nr, .arch = arch};
        d.args[argi] = argv;
        return bpf_run(prog, &d);
}

static inline uint32_t sim_native(const struct seccomp_program *prog, const char *name,
                                  unsigned argi, uint64_t argv)
{
        int nr = seccomp_syscall_resolve_name(name);
        cr_assert_geq(nr, 0, "%s unknown on this architecture", name);
        return sim(prog, seccomp_arch_native(), nr, argi, argv);
}

static inline void compile_default(struct seccomp_program *prog)
{
        psrun_error err = {0};
        int r = seccomp_compile(seccomp_default_profile(), prog, &err);
        cr_assert_eq(r, 0, "default profile: %s", err.msg);
}

/* ------------------------------------------------------------------------ */
/* Running checks in a child under a filter. */

struct check {
        const char *what;
        int (*call)(void); /* 0 on success, else the errno */
        int want;          /* 0: must succeed; else this errno */
};

/*
 * Forks a child that sets no_new_privs, loads `prog` (if any) and runs each
 * check in a grandchild. Mismatches come back as lines on a pipe.
 * `control`: no filter is loaded and a check fails when it returns the errno
 * the filter is expected to produce, proving the filtered run meaningful.
 */
static inline void run_checks(const struct seccomp_program *prog, const struct check *checks,
                              size_t n, bool control)
{
        int pfd[2];
        cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);

        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                char line[256];
                close(pfd[0]);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(100);
                if (prog && seccomp_program_load(prog) < 0)
                        _exit(101);
                for (size_t i = 0; i < n; i++) {
                        int st;
                        pid_t c = fork();
                        if (c < 0)
                                _exit(102);
                        if (c == 0)
                                _exit(checks[i].call());
                        if (waitpid(c, &st, 0) != c)
                                _exit(103);
                        int got = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                        int want = checks[i].want;
                        bool ok = control ? got == 0 || got != want : got == want;
                        if (ok)
                                continue;
                        if (got < 0)
                                snprintf(line, sizeof(line), "%s: killed by signal %d\n",
                                         checks[i].what, WTERMSIG(st));
                        else if (control)
                                snprintf(
                                        line, sizeof(line),
                                        "%s: %s without the filter too; the check proves nothing\n",
                                        checks[i].what, strerror(got));
                        else
                                snprintf(line, sizeof(line), "%s: got %s, want %s\n",
                                         checks[i].what, got ? strerror(got) : "success",
                                         want ? strerror(want) : "success");
                        if (write(pfd[1], line, strlen(line)) < 0)
                                _exit(104);
                }
                _exit(0);
        }
        close(pfd[1]);

        char out[8192] = "";
        size_t len = 0;
        ssize_t got;
        while ((got = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
                len += (size_t) got;
        out[len] = '\0';
        close(pfd[0]);

        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "checker child failed: status 0x%x", st);

        cr_expect_eq(len, 0, "%s", out);
}

static inline void run_checks_default(const struct check *checks, size_t n)
{
        struct seccomp_program prog = {0};
        compile_default(&prog);
        run_checks(&prog, checks, n, false);
        seccomp_program_free(&prog);
}

/* x32: the native number with bit 30 set; the default profile denies it. */
static inline int call_x32_getpid(void)
{
        return ERRNO_OF(syscall(0x40000000 | SYS_getpid));
}
