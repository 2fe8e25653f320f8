/* SPDX-License-Identifier: MIT */
/*
 * runtime/child.c's exec steps under a filter that allows only
 * CHILD_AFTER_FILTER_SYSCALLS, loaded where a config's filter is: early (no
 * noNewPrivileges), with a listener (before the exec FIFO), last. Any other
 * syscall a step makes after it traps: the SIGSYS handler records its number
 * and the process exits, so a step that would have taken a refusal in its
 * stride (as close_range's fallback did) is caught too, and so is one whose
 * declaration in the table is wrong. The steps run in a child of the test,
 * the real rows in the real order, as uid 1000 in /tmp with an exec FIFO
 * whose byte is already there.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "policy/caps.h"
#include "policy/seccomp.h"
#include "runtime/child-internal.h"
#include "runtime/plan.h"

TestSuite(child_after_filter, .timeout = 30);

enum outcome {
        OUTCOME_NONE = 0,
        OUTCOME_DONE,   /* every row ran, then execve was let through */
        OUTCOME_TRAP,   /* a syscall outside the set: `nr` */
        OUTCOME_FAILED, /* row `row` returned -`err` */
        OUTCOME_EXECVE, /* execve was refused: `err` */
};

struct report {
        volatile int outcome;
        volatile int nr, row, err;
};

static struct report *report; /* shared with the child */

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
        (void) sig;
        (void) uc;
        report->nr = si->si_syscall;
        report->outcome = OUTCOME_TRAP;
        _exit(3);
}

/* The set as a profile: allowed, every other syscall a trap. */
static void compile_set(struct seccomp_program *prog)
{
        static struct seccomp_rule rules[64];
        size_t n = 0;
        for (const char *const *s = child_after_filter_syscalls; *s; s++) {
                cr_assert_lt(n, ARRAY_SIZE(rules));
                rules[n++] = (struct seccomp_rule){
                        .syscall = *s,
                        .action = {.kind = SECCOMP_ACT_ALLOW_},
                };
        }
        struct seccomp_profile profile = {
                .default_action = {.kind = SECCOMP_ACT_TRAP_},
                .badarch_action = {.kind = SECCOMP_ACT_KILL_PROCESS_},
                .rules = rules,
                .n_rules = n,
        };
        psrun_error err = {0};
        cr_assert_eq(seccomp_compile(&profile, prog, &err), 0, "%s", err.msg);
}

enum where { EARLY, LISTENER, LAST };

static _Noreturn void run_rows(struct plan *p, int sync_fd)
{
        char exec_path[PATH_MAX];
        struct child_ctx c = {
                .plan = p,
                .sync_fd = sync_fd,
                .rootfs_fd = -1,
                .console_slave = -1,
                .exec_path = exec_path,
                .listener = -1,
        };
        if (step_self_exe(&c) < 0)
                _exit(2);
        for (size_t i = 0; i < child_exec_steps_len; i++) {
                const struct child_exec_step *s = &child_exec_steps[i];
                int r = s->run(&c);
                if (r < 0) {
                        report->row = (int) i;
                        report->err = -r;
                        report->outcome = OUTCOME_FAILED;
                        _exit(4);
                }
                if (s->run == step_signals) {
                        /* After the reset of the dispositions: the trap's
                         * handler. */
                        struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
                        if (sigaction(SIGSYS, &sa, NULL) < 0)
                                _exit(2);
                }
        }
        /* execve, let through: a missing program is ENOENT, not the trap. */
        char *const argv[] = {"psrun-no-such-program", NULL};
        (void) execve("/psrun-no-such-program", argv, argv + 1);
        if (errno != ENOENT) {
                report->err = errno;
                report->outcome = OUTCOME_EXECVE;
                _exit(5);
        }
        report->outcome = OUTCOME_DONE;
        _exit(0);
}

static void run_under_the_set(enum where where)
{
        test_require_root();
        report = mmap(NULL, sizeof(*report), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                      0);
        cr_assert_neq(report, MAP_FAILED);
        memset(report, 0, sizeof(*report));

        struct plan p;
        plan_init(&p);
        compile_set(&p.seccomp);
        p.no_new_privs = where != EARLY;
        p.seccomp_early = where == EARLY;
        p.seccomp_listener = where == LISTENER;
        p.report_exec = where == LAST;
        p.report_workspace = where == LAST;
        p.uid = 1000;
        p.gid = 1000;
        p.chown_stdio = true;
        p.caps.last_cap = caps_last_cap();
        p.caps.bounding = 1ULL << CAP_KILL;
        static char *argv[] = {"true", NULL};
        static char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        p.argv = argv;
        p.envp = envp;
        p.path_env = "/usr/bin:/bin";
        p.workdir = "/tmp";

        /* OCI create's exec FIFO, its byte already written: `psrun start`
         * came. (psrun run has none, and reports its exec instead.) */
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-after-filter");
        cr_assert_not_null(mkdtemp(dir));
        char fifo[128];
        snprintf(fifo, sizeof(fifo), "%s/exec.fifo", dir);
        if (where != LAST) {
                cr_assert_eq(mkfifo(fifo, 0600), 0);
                p.exec_fifo_fd = open(fifo, O_RDWR | O_CLOEXEC);
                cr_assert_geq(p.exec_fifo_fd, 0);
                cr_assert_eq(write(p.exec_fifo_fd, "0", 1), 1);
        }

        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(sv[0]);
                run_rows(&p, sv[1]);
        }
        close(sv[1]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        close(sv[0]);
        unlink(fifo);
        rmdir(dir);

        const char *what = where == EARLY ? "early" : where == LISTENER ? "listener" : "last";
        switch (report->outcome) {
        case OUTCOME_DONE:
                cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status 0x%x", what,
                          status);
                break;
        case OUTCOME_TRAP: {
                char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, report->nr);
                cr_expect_fail("%s filter: a step called %s (%d), which is not in "
                               "CHILD_AFTER_FILTER_SYSCALLS",
                               what, name ? name : "?", report->nr);
                free(name);
                break;
        }
        case OUTCOME_FAILED:
                cr_expect_fail("%s filter: %s failed: %s", what,
                               child_step_name(child_exec_steps[report->row].id),
                               strerror(report->err));
                break;
        case OUTCOME_EXECVE:
                cr_expect_fail("%s filter: execve: %s", what, strerror(report->err));
                break;
        default:
                cr_expect_fail("%s filter: the child ended with status 0x%x and no report", what,
                               status);
        }
        munmap(report, sizeof(*report));
        seccomp_program_free(&p.seccomp);
        safe_close(p.exec_fifo_fd);
}

Test(child_after_filter, the_steps_after_an_early_filter_need_only_the_set)
{
        run_under_the_set(EARLY);
}

Test(child_after_filter, the_steps_after_a_listener_s_filter_need_only_the_set)
{
        run_under_the_set(LISTENER);
}

Test(child_after_filter, the_steps_after_the_last_filter_need_only_the_set)
{
        run_under_the_set(LAST);
}

/* runtime-tools' generator wrote personality's allowed values as one rule
 * with three conditions on argument 0 (tests/oci/data/seccomp): any of them
 * matches, as runc reads it; the rest are refused. */
Test(child_after_filter, a_rule_with_conditions_on_one_argument_allows_each)
{
        static const struct seccomp_arg_cmp values[] = {
                {.index = 0, .op = SECCOMP_CMP_EQ_, .value = 0},
                {.index = 0, .op = SECCOMP_CMP_EQ_, .value = 8},
                {.index = 0, .op = SECCOMP_CMP_EQ_, .value = 0xffffffff},
        };
        static const struct seccomp_rule rule = {
                .syscall = "personality",
                .action = {.kind = SECCOMP_ACT_ERRNO_, .errno_ret = EXDEV},
                .args = values,
                .n_args = 3,
        };
        /* Inverted so the test survives: allow all, the rule's values EXDEV. */
        struct seccomp_profile profile = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = {.kind = SECCOMP_ACT_KILL_PROCESS_},
                .rules = &rule,
                .n_rules = 1,
        };
        struct seccomp_program prog = {0};
        psrun_error err = {0};
        cr_assert_eq(seccomp_compile(&profile, &prog, &err), 0, "%s", err.msg);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_program_load(&prog) < 0)
                        _exit(2);
                int bits = 0;
                static const unsigned long tried[] = {0, 8, 0xffffffff, 0x0020000};
                for (int i = 0; i < 4; i++)
                        if (personality(tried[i]) < 0 && errno == EXDEV)
                                bits |= 1 << i;
                _exit(bits);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status));
        cr_expect_eq(WEXITSTATUS(status), 7, "refused: 0x%x (expected the first three)",
                     WEXITSTATUS(status));
        seccomp_program_free(&prog);
}
