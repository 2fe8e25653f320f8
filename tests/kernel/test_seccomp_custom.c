/* SPDX-License-Identifier: MIT */
/*
 * Seccomp: custom profiles (the generic fields the OCI runtime reuses), their
 * actions and argument comparisons in the kernel and in the BPF interpreter,
 * the compiler's refusals, and the name tables. The default profile is in
 * test_seccomp.c; the shared helpers in seccomp_test.h.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp_test.h"

/* ------------------------------------------------------------------------ */
/* Custom profiles: the generic fields the OCI runtime reuses. */

static int compile_expect(const struct seccomp_profile *p, struct seccomp_program *prog,
                          psrun_error *err)
{
        *err = (psrun_error){0};
        int r = seccomp_compile(p, prog, err);
        if (r < 0)
                cr_assert_eq(r, -err->code, "return value and error code disagree");
        return r;
}

static const struct seccomp_arg_cmp dup3_high_no_flags[] = {
        {.index = 1, .op = SECCOMP_CMP_GE_, .value = 100},
        {.index = 2, .op = SECCOMP_CMP_EQ_, .value = 0},
};
static const struct seccomp_arg_cmp getpgid_nonzero[] = {{.index = 0, .op = SECCOMP_CMP_NE_}};
static const struct seccomp_arg_cmp prio_max_gt5[] = {
        {.index = 0, .op = SECCOMP_CMP_GT_, .value = 5}};
static const struct seccomp_arg_cmp prio_min_lt1[] = {
        {.index = 0, .op = SECCOMP_CMP_LT_, .value = 1}};
static const struct seccomp_arg_cmp getsid_le1[] = {
        {.index = 0, .op = SECCOMP_CMP_LE_, .value = 1}};
static const struct seccomp_arg_cmp umask_group_bits[] = {
        {.index = 0, .op = SECCOMP_CMP_MASKED_EQ_, .value = 0070, .value_two = 0070}};

/* clang-format off */
#define ERRNO_ACTION(e) {.kind = SECCOMP_ACT_ERRNO_, .errno_ret = (e)}
/* clang-format on */

static const struct seccomp_rule custom_rules[] = {
        {.syscall = "getppid", .action = ERRNO_ACTION(EACCES)},
        {.syscall = "dup3",
         .action = ERRNO_ACTION(EMLINK),
         .args = dup3_high_no_flags,
         .n_args = 2},
        {.syscall = "getpgid", .action = ERRNO_ACTION(E2BIG), .args = getpgid_nonzero, .n_args = 1},
        {.syscall = "sched_get_priority_max",
         .action = ERRNO_ACTION(ERANGE),
         .args = prio_max_gt5,
         .n_args = 1},
        {.syscall = "sched_get_priority_min",
         .action = ERRNO_ACTION(EDOM),
         .args = prio_min_lt1,
         .n_args = 1},
        {.syscall = "getsid", .action = ERRNO_ACTION(EXDEV), .args = getsid_le1, .n_args = 1},
        {.syscall = "umask",
         .action = ERRNO_ACTION(ENOTBLK),
         .args = umask_group_bits,
         .n_args = 1},
        /* Same as the default action: skipped, not an error. */
        {.syscall = "getuid", .action = {.kind = SECCOMP_ACT_ALLOW_}},
        /* Unknown everywhere: skipped. */
        {.syscall = "psrun_no_such_syscall", .action = ERRNO_ACTION(EIO)},
        /* Exists only on other architectures: skipped. */
        {.syscall = "socketcall", .action = ERRNO_ACTION(EIO)},
};

/* Raw syscalls: glibc's getpid/getppid/getuid wrappers cannot fail and so
 * return the filter's -errno as a value without setting errno. */
static int call_getppid(void)
{
        return ERRNO_OF(syscall(SYS_getppid));
}
static int call_dup3_100(void)
{
        return ERRNO_OF(dup3(0, 100, 0));
}
static int call_dup3_100_cloexec(void)
{
        return ERRNO_OF(dup3(0, 100, O_CLOEXEC));
}
static int call_dup3_99(void)
{
        return ERRNO_OF(dup3(0, 99, 0));
}
static int call_getpgid_0(void)
{
        return ERRNO_OF(getpgid(0));
}
static int call_getpgid_self(void)
{
        return ERRNO_OF(getpgid(getpid()));
}
static int call_prio_max_6(void)
{
        return ERRNO_OF(sched_get_priority_max(6));
}
static int call_prio_max_fifo(void)
{
        return ERRNO_OF(sched_get_priority_max(SCHED_FIFO));
}
static int call_prio_min_other(void)
{
        return ERRNO_OF(sched_get_priority_min(SCHED_OTHER));
}
static int call_prio_min_fifo(void)
{
        return ERRNO_OF(sched_get_priority_min(SCHED_FIFO));
}
static int call_getsid_0(void)
{
        return ERRNO_OF(getsid(0));
}
static int call_getsid_self(void)
{
        return ERRNO_OF(getsid(getpid()));
}
static int call_umask_077(void)
{
        return ERRNO_OF(syscall(SYS_umask, 0077));
}
static int call_umask_007(void)
{
        return ERRNO_OF(syscall(SYS_umask, 0007));
}
static int call_getuid(void)
{
        return ERRNO_OF(syscall(SYS_getuid));
}

Test(seccomp, custom_profile_actions_and_comparisons)
{
        struct seccomp_profile p = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = ERRNO_ACTION(EPERM),
                .rules = custom_rules,
                .n_rules = ARRAY_SIZE(custom_rules),
        };
        static const struct check checks[] = {
                {"getppid -> EACCES", call_getppid, EACCES},
                {"dup3(0, 100, 0): GE and EQ both match", call_dup3_100, EMLINK},
                {"dup3(0, 100, O_CLOEXEC): EQ fails", call_dup3_100_cloexec, 0},
                {"dup3(0, 99, 0): GE fails", call_dup3_99, 0},
                {"getpgid(0): NE fails", call_getpgid_0, 0},
                {"getpgid(self): NE matches", call_getpgid_self, E2BIG},
                {"sched_get_priority_max(6): GT matches", call_prio_max_6, ERANGE},
                {"sched_get_priority_max(FIFO): GT fails", call_prio_max_fifo, 0},
                {"sched_get_priority_min(OTHER): LT matches", call_prio_min_other, EDOM},
                {"sched_get_priority_min(FIFO): LT fails", call_prio_min_fifo, 0},
                {"getsid(0): LE matches", call_getsid_0, EXDEV},
                {"getsid(self): LE fails", call_getsid_self, 0},
                {"umask(077): MASKED_EQ matches", call_umask_077, ENOTBLK},
                {"umask(007): MASKED_EQ fails", call_umask_007, 0},
                {"getuid: allowed", call_getuid, 0},
        };
        struct seccomp_program prog = {0};
        psrun_error err;
        cr_assert_eq(compile_expect(&p, &prog, &err), 0, "%s", err.msg);
        run_checks(&prog, checks, ARRAY_SIZE(checks), false);
        seccomp_program_free(&prog);
}

/* Loads a one-rule profile (default ALLOW) in a child, calls getppid and
 * returns the child's wait status. */
static int status_after_getppid(enum seccomp_action_kind kind, uint32_t data)
{
        const struct seccomp_rule rule = {.syscall = "getppid", .action = {kind, data}};
        struct seccomp_profile p = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = ERRNO_ACTION(EPERM),
                .rules = &rule,
                .n_rules = 1,
        };
        struct seccomp_program prog = {0};
        psrun_error err;
        cr_assert_eq(compile_expect(&p, &prog, &err), 0, "%s", err.msg);

        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_program_load(&prog) < 0)
                        _exit(100);
                long r = syscall(SYS_getppid);
                _exit(r < 0 ? (errno & 0x7f) : 0);
        }
        seccomp_program_free(&prog);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        return st;
}

Test(seccomp, custom_kill_process_is_sigsys)
{
        int st = status_after_getppid(SECCOMP_ACT_KILL_PROCESS_, 0);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "status 0x%x, want SIGSYS", st);
}

Test(seccomp, custom_kill_thread_is_sigsys)
{
        int st = status_after_getppid(SECCOMP_ACT_KILL_THREAD_, 0);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "status 0x%x, want SIGSYS", st);
}

Test(seccomp, custom_log_and_trace)
{
        int st = status_after_getppid(SECCOMP_ACT_LOG_, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "LOG must allow: status 0x%x", st);
        /* TRACE without a tracer: the syscall fails with ENOSYS. */
        st = status_after_getppid(SECCOMP_ACT_TRACE_, 7);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == ENOSYS, "TRACE: status 0x%x", st);
}

static volatile sig_atomic_t trapped_nr = -1;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
        (void) sig;
        (void) uc;
        trapped_nr = si->si_code == SYS_SECCOMP ? si->si_syscall : -2;
}

Test(seccomp, custom_trap_delivers_sigsys_with_syscall)
{
        const struct seccomp_rule rule = {.syscall = "getppid",
                                          .action = {.kind = SECCOMP_ACT_TRAP_}};
        struct seccomp_profile p = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = ERRNO_ACTION(EPERM),
                .rules = &rule,
                .n_rules = 1,
        };
        struct seccomp_program prog = {0};
        psrun_error err;
        cr_assert_eq(compile_expect(&p, &prog, &err), 0, "%s", err.msg);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
                if (sigaction(SIGSYS, &sa, NULL) < 0 ||
                    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_program_load(&prog) < 0)
                        _exit(100);
                syscall(SYS_getppid);
                _exit(trapped_nr == SYS_getppid ? 0 : 1);
        }
        seccomp_program_free(&prog);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
}

Test(seccomp, custom_badarch_action_applies_to_x32)
{
        static const struct check checks[] = {
                {"x32 getpid -> bad-arch ENOEXEC", call_x32_getpid, ENOEXEC},
                {"native getppid", call_getppid, 0},
        };
        struct seccomp_profile p = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = ERRNO_ACTION(ENOEXEC),
        };
        struct seccomp_program prog = {0};
        psrun_error err;
        cr_assert_eq(compile_expect(&p, &prog, &err), 0, "%s", err.msg);
#if defined(__x86_64__)
        cr_expect_eq(sim(&prog, AUDIT_ARCH_I386, 20, 0, 0), RET_ERRNO(ENOEXEC));
        cr_expect_eq(sim(&prog, AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, 0, 0),
                     RET_ERRNO(ENOEXEC));
        run_checks(&prog, checks, ARRAY_SIZE(checks), false);
#endif
        seccomp_program_free(&prog);
}

Test(seccomp, custom_multiple_architectures)
{
#if defined(__x86_64__)
        static const char *const arches[] = {"x86", "SCMP_ARCH_X32", "x86_64"};
        const struct seccomp_rule rule = {.syscall = "getpid", .action = ERRNO_ACTION(EACCES)};
        struct seccomp_profile p = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = ERRNO_ACTION(EPERM),
                .architectures = arches,
                .n_architectures = ARRAY_SIZE(arches),
                .rules = &rule,
                .n_rules = 1,
        };
        struct seccomp_program prog = {0};
        psrun_error err;
        cr_assert_eq(compile_expect(&p, &prog, &err), 0, "%s", err.msg);
        /* The rule is translated to each ABI's number for getpid. */
        cr_expect_eq(sim(&prog, AUDIT_ARCH_X86_64, SYS_getpid, 0, 0), RET_ERRNO(EACCES));
        cr_expect_eq(sim(&prog, AUDIT_ARCH_I386, 20, 0, 0), RET_ERRNO(EACCES));
        cr_expect_eq(sim(&prog, AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, 0, 0),
                     RET_ERRNO(EACCES));
        cr_expect_eq(sim(&prog, AUDIT_ARCH_I386, 64 /* getppid */, 0, 0), RET_ALLOW);
        cr_expect_eq(sim(&prog, AUDIT_ARCH_AARCH64, 172, 0, 0), RET_ERRNO(EPERM));
        seccomp_program_free(&prog);
#else
        cr_skip_test("multi-architecture check is written for x86_64");
#endif
}

Test(seccomp, compile_rejects_bad_profiles)
{
        static const struct seccomp_arg_cmp bad_index[] = {{.index = 6, .op = SECCOMP_CMP_EQ_}};
        static const struct seccomp_arg_cmp bad_op[] = {{.index = 0, .op = 99}};
        static const struct seccomp_arg_cmp seven[7] = {{0}};
        static const char *const vax[] = {"vax"};
        struct seccomp_program prog = {0};
        psrun_error err;
        const struct {
                const char *what;
                struct seccomp_profile p;
                struct seccomp_rule rule;
                int want;
                const char *msg;
        } cases[] = {
                /* Without a listener (an OCI config's listenerPath) for an
                 * agent to answer, a notification could only fail. */
                {"notify default",
                 {.default_action = {.kind = SECCOMP_ACT_NOTIFY_}},
                 {.syscall = "getpid"},
                 -EOPNOTSUPP,
                 "SCMP_ACT_NOTIFY needs a listener"},
                {"notify rule",
                 {},
                 {.syscall = "getpid", .action = {.kind = SECCOMP_ACT_NOTIFY_}},
                 -EOPNOTSUPP,
                 "SCMP_ACT_NOTIFY needs a listener"},
                {"badarch allow (zeroed struct)",
                 {.badarch_action = {.kind = SECCOMP_ACT_ALLOW_}},
                 {.syscall = "getpid"},
                 -EINVAL,
                 "bad-architecture action must deny"},
                {"badarch log",
                 {.badarch_action = {.kind = SECCOMP_ACT_LOG_}},
                 {.syscall = "getpid"},
                 -EINVAL,
                 "must deny"},
                {"errno out of range",
                 {},
                 {.syscall = "getpid", .action = ERRNO_ACTION(5000)},
                 -EINVAL,
                 "out of range"},
                {"unknown action",
                 {},
                 {.syscall = "getpid", .action = {.kind = 42}},
                 -EINVAL,
                 "unknown action"},
                {"arg index 6",
                 {},
                 {.syscall = "getpid", .args = bad_index, .n_args = 1},
                 -EINVAL,
                 "argument index 6"},
                {"bad operator",
                 {},
                 {.syscall = "getpid", .args = bad_op, .n_args = 1},
                 -EINVAL,
                 "unknown operator"},
                {"seven comparisons",
                 {},
                 {.syscall = "getpid", .args = seven, .n_args = 7},
                 -EINVAL,
                 "max 6"},
                {"no syscall name", {}, {.syscall = NULL}, -EINVAL, "no syscall name"},
                {"unknown arch",
                 {.architectures = vax, .n_architectures = 1},
                 {.syscall = "getpid"},
                 -EINVAL,
                 "unknown architecture 'vax'"},
                {"listener flag",
                 {.flags = SECCOMP_FILTER_FLAG_NEW_LISTENER},
                 {.syscall = "getpid"},
                 -EOPNOTSUPP,
                 "NEW_LISTENER"},
                {"unknown flag",
                 {.flags = 1U << 20},
                 {.syscall = "getpid"},
                 -EINVAL,
                 "unknown filter flags"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct seccomp_profile p = cases[i].p;
                if (!p.badarch_action.kind && strncmp(cases[i].what, "badarch", 7) != 0)
                        p.badarch_action = (struct seccomp_action) ERRNO_ACTION(EPERM);
                if (!p.default_action.kind && strcmp(cases[i].what, "notify default") != 0)
                        p.default_action = (struct seccomp_action) ERRNO_ACTION(EPERM);
                p.rules = &cases[i].rule;
                p.n_rules = 1;
                int r = compile_expect(&p, &prog, &err);
                cr_expect_eq(r, cases[i].want, "%s: got %d (%s)", cases[i].what, r, err.msg);
                cr_expect(strstr(err.msg, cases[i].msg), "%s: message '%s' lacks '%s'",
                          cases[i].what, err.msg, cases[i].msg);
                cr_expect_null(prog.insns, "%s: program left behind", cases[i].what);
        }
}

Test(seccomp, compile_accepts_supported_flags)
{
        const struct seccomp_rule rule = {.syscall = "getpid", .action = ERRNO_ACTION(EACCES)};
        struct seccomp_profile p = {
                .default_action = {.kind = SECCOMP_ACT_ALLOW_},
                .badarch_action = {.kind = SECCOMP_ACT_KILL_PROCESS_},
                .rules = &rule,
                .n_rules = 1,
                .flags = SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW,
        };
        struct seccomp_program prog = {0};
        psrun_error err;
        cr_assert_eq(compile_expect(&p, &prog, &err), 0, "%s", err.msg);
        cr_expect_eq(prog.flags, SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW);
        /* The kernel takes the flags: the child exits 0. */
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(100);
                int r = seccomp_program_load(&prog);
                _exit(r < 0 ? -r : (syscall(SYS_getpid) < 0 && errno == EACCES ? 0 : 1));
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
        seccomp_program_free(&prog);
}

Test(seccomp, load_rejects_empty_program)
{
        struct seccomp_program empty = {0};
        cr_expect_eq(seccomp_program_load(NULL), -EINVAL);
        cr_expect_eq(seccomp_program_load(&empty), -EINVAL);
        seccomp_program_free(NULL);
        seccomp_program_free(&empty);
}

Test(seccomp, name_tables_round_trip)
{
        for (int k = SECCOMP_ACT_ALLOW_; k <= SECCOMP_ACT_NOTIFY_; k++) {
                const char *s = seccomp_action_kind_to_string(k);
                cr_assert_not_null(s, "action %d has no name", k);
                cr_expect_eq(seccomp_action_kind_from_string(s), k, "%s", s);
        }
        cr_expect_eq(seccomp_action_kind_from_string("SCMP_ACT_KILL"), SECCOMP_ACT_KILL_THREAD_);
        cr_expect_eq(seccomp_action_kind_from_string("SCMP_ACT_NOPE"), -EINVAL);
        cr_expect_eq(seccomp_action_kind_from_string(NULL), -EINVAL);
        cr_expect_null(seccomp_action_kind_to_string(99));

        for (int op = SECCOMP_CMP_NE_; op <= SECCOMP_CMP_MASKED_EQ_; op++) {
                const char *s = seccomp_cmp_op_to_string(op);
                cr_assert_not_null(s, "operator %d has no name", op);
                cr_expect_eq(seccomp_cmp_op_from_string(s), op, "%s", s);
        }
        cr_expect_eq(seccomp_cmp_op_from_string("SCMP_CMP_NOPE"), -EINVAL);
        cr_expect_null(seccomp_cmp_op_to_string(99));

        static const unsigned flags[] = {SECCOMP_FILTER_FLAG_TSYNC, SECCOMP_FILTER_FLAG_LOG,
                                         SECCOMP_FILTER_FLAG_SPEC_ALLOW,
                                         SECCOMP_FILTER_FLAG_NEW_LISTENER};
        for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
                const char *s = seccomp_filter_flag_to_string(flags[i]);
                cr_assert_not_null(s, "flag 0x%x has no name", flags[i]);
                cr_expect_eq(seccomp_filter_flag_from_string(s), (int) flags[i], "%s", s);
        }
        cr_expect_eq(seccomp_filter_flag_from_string("SECCOMP_FILTER_FLAG_NOPE"), -EINVAL);
}
