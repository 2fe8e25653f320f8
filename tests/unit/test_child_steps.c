/* SPDX-License-Identifier: MIT */
/*
 * runtime/child.c's exec step table: every row has a phase, a normal command
 * runs the rows in the order below, a session's zygote the rows ahead of its
 * request and then those after it, each in the order below, and the order
 * keeps what the comments say it must: seccomp the last layer before the
 * exec report, no_new_privs before Landlock, the bounding set before setuid.
 * A reorder of the table fails here first. And what runs after a config's
 * early seccomp filter calls only CHILD_AFTER_FILTER_SYSCALLS, which every
 * Docker-era profile allows (tests/oci/data/seccomp); the kernel tier runs
 * those steps under a filter of that set alone.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/child-internal.h"
#include "runtime/oci/config.h"

typedef int (*step_fn)(struct child_ctx *c);

struct expected {
        step_fn run;
        const char *name;
        enum child_step id;
};

/* clang-format off */
#define ROW(id, fn) {fn, #fn, id}
#define FN(fn)      {fn, #fn, 0}
/* clang-format on */

/* A normal command's order (and the id each row fails as). */
static const struct expected command_order[] = {
        ROW(CHILD_STEP_CONSOLE, step_console_attach),
        ROW(CHILD_STEP_SIGNALS, step_signals),
        ROW(CHILD_STEP_KEYRING, step_session_keyring),
        ROW(CHILD_STEP_RLIMIT, step_rlimits),
        ROW(CHILD_STEP_TIMENS, step_timens),
        ROW(CHILD_STEP_PERSONALITY, step_personality),
        ROW(CHILD_STEP_SCHEDULER, step_scheduler),
        ROW(CHILD_STEP_IOPRIO, step_io_priority),
        ROW(CHILD_STEP_CPU_AFFINITY, step_cpu_affinity),
        ROW(CHILD_STEP_CLOSE_FDS, step_close_fds),
        ROW(CHILD_STEP_APPARMOR, step_apparmor),
        ROW(CHILD_STEP_SETUID, step_stdio_owner),
        ROW(CHILD_STEP_CHDIR, step_check_workdir),
        ROW(CHILD_STEP_SECCOMP, step_seccomp_early),
        ROW(CHILD_STEP_BOUNDING, step_bounding),
        ROW(CHILD_STEP_GROUPS, step_groups),
        ROW(CHILD_STEP_SETGID, step_setgid),
        ROW(CHILD_STEP_SETUID, step_setuid),
        ROW(CHILD_STEP_CAPS, step_caps),
        ROW(CHILD_STEP_CHDIR, step_chdir),
        ROW(CHILD_STEP_NO_NEW_PRIVS, step_no_new_privs),
        ROW(CHILD_STEP_LANDLOCK, step_landlock),
        ROW(CHILD_STEP_EXEC, step_lookup),
        ROW(CHILD_STEP_SECCOMP, step_seccomp_listener),
        ROW(CHILD_STEP_WAIT_START, step_wait_start),
        ROW(CHILD_STEP_SECCOMP, step_seccomp),
        ROW(CHILD_STEP_SECCOMP, step_report_exec),
};

/* A zygote's, ahead of its request. */
static const struct expected zygote_ahead[] = {
        FN(step_console_attach), FN(step_signals),   FN(step_rlimits),  FN(step_timens),
        FN(step_personality),    FN(step_close_fds), FN(step_apparmor), FN(step_seccomp_early),
        FN(step_bounding),       FN(step_groups),    FN(step_setgid),   FN(step_no_new_privs),
        FN(step_landlock),       FN(step_seccomp),
};

/* A zygote's, once it has its request. */
static const struct expected zygote_after[] = {
        FN(step_stdio_owner), FN(step_check_workdir), FN(step_setuid),     FN(step_caps),
        FN(step_chdir),       FN(step_lookup),        FN(step_wait_start), FN(step_report_exec),
};

/* The layers that confine the command in the kernel. */
static const step_fn layers[] = {
        step_seccomp_early, step_no_new_privs,     step_apparmor,
        step_landlock,      step_seccomp_listener, step_seccomp,
};

#define MAX_STEPS 64

struct path {
        const char *what;
        step_fn run[MAX_STEPS];
        size_t n;
};

static const char *name_of(step_fn fn)
{
        for (size_t i = 0; i < ARRAY_SIZE(command_order); i++)
                if (command_order[i].run == fn)
                        return command_order[i].name;
        return "(a step not in the expected order)";
}

static void add_phase(struct path *p, enum child_phase phase)
{
        for (size_t i = 0; i < child_exec_steps_len; i++) {
                if (child_exec_steps[i].zygote != phase)
                        continue;
                cr_assert_lt(p->n, MAX_STEPS);
                p->run[p->n++] = child_exec_steps[i].run;
        }
}

static struct path command_path(void)
{
        struct path p = {.what = "a command"};
        cr_assert_leq(child_exec_steps_len, MAX_STEPS);
        for (size_t i = 0; i < child_exec_steps_len; i++)
                p.run[p.n++] = child_exec_steps[i].run;
        return p;
}

static struct path zygote_phase(enum child_phase phase)
{
        struct path p = {.what = "a zygote's phase"};
        add_phase(&p, phase);
        return p;
}

static struct path zygote_path(void)
{
        struct path p = {.what = "a zygote"};
        add_phase(&p, CHILD_PHASE_AHEAD);
        add_phase(&p, CHILD_PHASE_AFTER_REQUEST);
        return p;
}

static void assert_order(const struct path *p, const struct expected *want, size_t n)
{
        for (size_t i = 0; i < n && i < p->n; i++)
                cr_assert_eq(p->run[i], want[i].run, "%s, step %zu: %s, expected %s", p->what, i,
                             name_of(p->run[i]), want[i].name);
        cr_assert_eq(p->n, n, "%s: %zu steps, expected %zu", p->what, p->n, n);
}

/* Where fn runs in the path; it runs exactly once. */
static size_t position(const struct path *p, step_fn fn)
{
        size_t at = SIZE_MAX;
        for (size_t i = 0; i < p->n; i++) {
                if (p->run[i] != fn)
                        continue;
                cr_assert_eq(at, SIZE_MAX, "%s runs %s twice", p->what, name_of(fn));
                at = i;
        }
        cr_assert_neq(at, SIZE_MAX, "%s never runs %s", p->what, name_of(fn));
        return at;
}

static bool is_layer(step_fn fn)
{
        for (size_t i = 0; i < ARRAY_SIZE(layers); i++)
                if (layers[i] == fn)
                        return true;
        return false;
}

static void assert_before(const struct path *p, step_fn first, step_fn then)
{
        cr_assert_lt(position(p, first), position(p, then), "%s runs %s after %s", p->what,
                     name_of(first), name_of(then));
}

Test(child_steps, every_row_has_a_phase_a_step_and_a_name)
{
        cr_assert_gt(child_exec_steps_len, 0);
        for (size_t i = 0; i < child_exec_steps_len; i++) {
                const struct child_exec_step *s = &child_exec_steps[i];
                cr_assert(s->zygote == CHILD_PHASE_AHEAD ||
                                  s->zygote == CHILD_PHASE_AFTER_REQUEST ||
                                  s->zygote == CHILD_PHASE_NOT_IN_SESSION,
                          "row %zu (%s): phase %d", i, name_of(s->run), (int) s->zygote);
                cr_assert_not_null(s->run, "row %zu", i);
                cr_assert_str_neq(child_step_name(s->id), "setup", "row %zu (%s): id %d", i,
                                  name_of(s->run), (int) s->id);
                for (size_t k = 0; k < i; k++)
                        cr_assert_neq(child_exec_steps[k].run, s->run, "rows %zu and %zu: %s", k, i,
                                      name_of(s->run));
        }
}

Test(child_steps, a_command_runs_every_row_in_order)
{
        struct path p = command_path();
        assert_order(&p, command_order, ARRAY_SIZE(command_order));
        for (size_t i = 0; i < child_exec_steps_len; i++)
                cr_assert_eq(child_exec_steps[i].id, command_order[i].id, "%s: id %d, expected %d",
                             command_order[i].name, (int) child_exec_steps[i].id,
                             (int) command_order[i].id);
}

Test(child_steps, a_zygote_runs_the_same_steps_ahead_of_its_request)
{
        struct path p = zygote_phase(CHILD_PHASE_AHEAD);
        assert_order(&p, zygote_ahead, ARRAY_SIZE(zygote_ahead));
}

Test(child_steps, a_zygote_runs_the_same_steps_after_its_request)
{
        struct path p = zygote_phase(CHILD_PHASE_AFTER_REQUEST);
        assert_order(&p, zygote_after, ARRAY_SIZE(zygote_after));
}

Test(child_steps, seccomp_is_the_last_layer_and_the_exec_report_the_last_step)
{
        struct path paths[] = {command_path(), zygote_path()};
        for (size_t k = 0; k < ARRAY_SIZE(paths); k++) {
                const struct path *p = &paths[k];
                size_t seccomp = position(p, step_seccomp);
                size_t report = position(p, step_report_exec);
                cr_assert_eq(report, p->n - 1, "%s: %s is not the last step", p->what,
                             name_of(step_report_exec));
                cr_assert_lt(seccomp, report, "%s", p->what);
                for (size_t i = seccomp + 1; i < p->n; i++)
                        cr_assert(!is_layer(p->run[i]), "%s runs %s after %s", p->what,
                                  name_of(p->run[i]), name_of(step_seccomp));
        }
        /* A command's report follows seccomp at once. */
        struct path p = command_path();
        cr_assert_eq(position(&p, step_seccomp) + 1, position(&p, step_report_exec));
}

Test(child_steps, what_the_comments_say_must_come_first_does)
{
        struct path paths[] = {command_path(), zygote_path()};
        for (size_t k = 0; k < ARRAY_SIZE(paths); k++) {
                const struct path *p = &paths[k];
                assert_before(p, step_no_new_privs, step_landlock);
                assert_before(p, step_apparmor, step_landlock);
                assert_before(p, step_bounding, step_setuid);
                assert_before(p, step_close_fds, step_seccomp_early);
        }
        /* A command drops its capabilities before no_new_privs and
         * Landlock; a zygote keeps them until its request (neither layer
         * needs one). */
        struct path p = command_path();
        assert_before(&p, step_caps, step_no_new_privs);
        assert_before(&p, step_caps, step_landlock);
}

/* ---- after a config's filter ---- */

static bool in_after_filter_set(const char *name)
{
        for (const char *const *n = child_after_filter_syscalls; *n; n++)
                if (strcmp(*n, name) == 0)
                        return true;
        return false;
}

Test(child_steps, what_runs_after_an_early_filter_calls_only_the_documented_set)
{
        struct path p = command_path();
        size_t early = position(&p, step_seccomp_early);
        for (size_t i = 0; i < child_exec_steps_len; i++) {
                const struct child_exec_step *s = &child_exec_steps[i];
                if (i < early) {
                        cr_expect_null(s->after_filter,
                                       "%s runs before the filter: it declares nothing",
                                       name_of(s->run));
                        continue;
                }
                cr_assert_not_null(s->after_filter,
                                   "%s runs after a config's early filter and does not say "
                                   "what it calls",
                                   name_of(s->run));
                for (const char *const *n = s->after_filter; *n; n++)
                        cr_expect(in_after_filter_set(*n),
                                  "%s calls %s after a config's filter, which is not in "
                                  "CHILD_AFTER_FILTER_SYSCALLS",
                                  name_of(s->run), *n);
        }
        /* What needs more runs before the filter. */
        assert_before(&p, step_apparmor, step_seccomp_early);      /* openat2, fstatfs */
        assert_before(&p, step_stdio_owner, step_seccomp_early);   /* fstat, fchown */
        assert_before(&p, step_check_workdir, step_seccomp_early); /* openat2 */
        assert_before(&p, step_cpu_affinity, step_seccomp_early);  /* sched_setaffinity */
        assert_before(&p, step_close_fds, step_seccomp_early);     /* close_range */
        assert_before(&p, step_seccomp_early, step_setuid);        /* needs CAP_SYS_ADMIN */
        assert_before(&p, step_check_workdir, step_chdir);
}

Test(child_steps, the_documented_set_has_none_of_the_newer_syscalls)
{
        /* What the profiles of 2016-2020 lack; in the set, an old profile
         * would refuse it (EPERM) after the filter. */
        static const char *const newer[] = {
                "openat2",       "close_range", "statx",       "faccessat2",
                "clone3",        "pidfd_open",  "pidfd_getfd", "landlock_restrict_self",
                "mount_setattr", "epoll_pwait2"};
        size_t n = 0;
        for (const char *const *s = child_after_filter_syscalls; *s; s++, n++)
                for (size_t i = 0; i < ARRAY_SIZE(newer); i++)
                        cr_expect_str_neq(*s, newer[i], "%s in the set", *s);
        cr_expect_gt(n, 0);
}

/* tests/oci/data/seccomp/NAME, from this file's directory. */
static void profile_path(char *buf, size_t len, const char *name)
{
        char here[PATH_MAX];
        snprintf(here, sizeof(here), "%s", __FILE__);
        snprintf(buf, len, "%s/../oci/data/seccomp/%s", dirname(here), name);
}

/* Whether the profile allows `name` unconditionally. */
static bool profile_allows(const struct oci_seccomp *sc, const char *name)
{
        for (size_t i = 0; i < sc->n_syscalls; i++) {
                const struct oci_seccomp_syscall *s = &sc->syscalls[i];
                if (s->action != SECCOMP_ACT_ALLOW_ || s->n_args != 0)
                        continue;
                for (size_t k = 0; k < s->n_names; k++)
                        if (strcmp(s->names[k], name) == 0)
                                return true;
        }
        return false;
}

Test(child_steps, every_docker_era_profile_allows_the_documented_set)
{
        static const char *const profiles[] = {"docker-1.12.0.json", "moby-19.03.0.json",
                                               "runtime-tools-0.9.0.json"};
        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
                char path[PATH_MAX];
                profile_path(path, sizeof(path), profiles[i]);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
                _cleanup_free_ char *data = NULL;
                size_t len = 0;
                int r = read_all(fd, 1 << 20, &data, &len);
                cr_assert_geq(r, 0, "%s: %s", path, strerror(-r));
                /* The profile as a config's linux.seccomp, through psrun's
                 * own parser. */
                _cleanup_free_ char *json = NULL;
                cr_assert_gt(asprintf(&json,
                                      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                                      "\"linux\":{\"seccomp\":%.*s}}",
                                      (int) len, data),
                             0);
                struct oci_config c;
                psrun_error err = {0};
                cr_assert_eq(oci_config_parse(json, strlen(json), &c, &err), 0, "%s: %s",
                             profiles[i], err.msg);
                const struct oci_seccomp *sc = c.linux_->seccomp;
                cr_assert_not_null(sc);
                cr_expect_eq(sc->default_action, SECCOMP_ACT_ERRNO_, "%s", profiles[i]);
                for (const char *const *n = child_after_filter_syscalls; *n; n++)
                        cr_expect(profile_allows(sc, *n), "%s does not allow %s", profiles[i], *n);
                /* And it is an old one: none of what the set avoids. */
                cr_expect(!profile_allows(sc, "openat2") && !profile_allows(sc, "close_range"),
                          "%s", profiles[i]);
                oci_config_free(&c);
        }
}
