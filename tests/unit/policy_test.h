/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared by the policy parser tests (test_policy.c, test_policy_sources.c):
 * loading and -o helpers, deep policy equality, a policy that differs from
 * the defaults in every field, and the exact-error assertions.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <string.h>

#include "policy/policy.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* ---- helpers ---- */

static inline void init(struct policy *p)
{
        cr_assert_eq(policy_init(p), 0);
}

static inline int load(struct policy *p, const char *yaml, psrun_error *err)
{
        return policy_load_buffer(p, "policy.yaml", yaml, strlen(yaml), err);
}

/* Loads yaml over the defaults and asserts success. */
static inline void load_ok(struct policy *p, const char *yaml)
{
        psrun_error err = {0};

        init(p);
        int r = load(p, yaml, &err);
        cr_assert_eq(r, 0, "load failed (%d): %s\n--- yaml:\n%s", r, err.msg, yaml);
}

static inline void set_ok(struct policy *p, const char *opt)
{
        psrun_error err = {0};
        int r = policy_set_option(p, opt, &err);

        cr_assert_eq(r, 0, "-o %s failed (%d): %s", opt, r, err.msg);
}

static inline bool str_eq_null(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* Deep equality, field by field: what "unchanged" means. */
static inline void assert_policy_eq(const struct policy *a, const struct policy *b)
{
        cr_assert_eq(a->network, b->network);
        cr_assert_eq(a->n_allow_domains, b->n_allow_domains);
        for (size_t i = 0; i < a->n_allow_domains; i++)
                cr_assert_str_eq(a->allow_domains[i], b->allow_domains[i]);
        cr_assert_eq(a->memory_limit, b->memory_limit);
        cr_assert_float_eq(a->cpu_limit, b->cpu_limit, 1e-12);
        cr_assert_eq(a->pids_limit, b->pids_limit);
        cr_assert_eq(a->disk_limit, b->disk_limit);
        cr_assert_eq(a->timeout_ms, b->timeout_ms);
        cr_assert_eq(a->n_env, b->n_env);
        for (size_t i = 0; i < a->n_env; i++) {
                cr_assert_str_eq(a->env[i].name, b->env[i].name);
                cr_assert(str_eq_null(a->env[i].value, b->env[i].value));
        }
        cr_assert_str_eq(a->workdir, b->workdir);
        cr_assert_eq(a->readonly_rootfs, b->readonly_rootfs);
        cr_assert_eq(a->uid, b->uid);
        cr_assert_eq(a->gid, b->gid);
        cr_assert_eq(a->backend, b->backend);
        cr_assert_eq(a->gvisor_platform, b->gvisor_platform);
        cr_assert_eq(a->n_mounts, b->n_mounts);
        for (size_t i = 0; i < a->n_mounts; i++) {
                cr_assert_str_eq(a->mounts[i].source, b->mounts[i].source);
                cr_assert_str_eq(a->mounts[i].target, b->mounts[i].target);
                cr_assert_eq(a->mounts[i].readonly, b->mounts[i].readonly);
        }
        cr_assert_str_eq(a->hostname, b->hostname);
        cr_assert_eq(a->landlock, b->landlock);
        cr_assert_eq(a->apparmor, b->apparmor);
        cr_assert(str_eq_null(a->apparmor_profile, b->apparmor_profile));
        cr_assert_eq(a->pty_limit, b->pty_limit);
        cr_assert_eq(a->inotify_limit, b->inotify_limit);
        cr_assert_eq(a->inotify_watch_limit, b->inotify_watch_limit);
        cr_assert_eq(a->fanotify_limit, b->fanotify_limit);
        cr_assert_eq(a->fanotify_mark_limit, b->fanotify_mark_limit);
        cr_assert_eq(a->namespace_limit, b->namespace_limit);
        cr_assert_eq(a->sigpending_limit, b->sigpending_limit);
        cr_assert_eq(a->msgqueue_limit, b->msgqueue_limit);
}

/* A policy that differs from the defaults in every field, so that a failed
 * load can be checked against something non-trivial. */
static const char busy_yaml[] = "network: restricted\n"
                                "allow_domains: [pypi.org]\n"
                                "memory_limit: 1G\n"
                                "cpu_limit: 2\n"
                                "pids_limit: 100\n"
                                "disk_limit: 2G\n"
                                "timeout: 60\n"
                                "env: {A: a, B: ~}\n"
                                "workdir: /work\n"
                                "readonly_rootfs: false\n"
                                "user: 0\n"
                                "backend: gvisor\n"
                                "gvisor_platform: ptrace\n"
                                "mounts: [/src:/src]\n"
                                "hostname: busy\n"
                                "landlock: required\n"
                                "apparmor: off\n"
                                "apparmor_profile: custom\n"
                                "pty_limit: 8\n"
                                "inotify_limit: 3\n"
                                "namespace_limit: 2\n";

static inline void assert_one_line(const psrun_error *err)
{
        cr_assert_null(strchr(err->msg, '\n'), "message is not one line: %s", err->msg);
        cr_assert_gt(strlen(err->msg), 0);
}

/* Loading yaml over a busy policy fails with errnum and exactly msg, and
 * leaves the policy untouched. */
static inline void expect_error(const char *yaml, int errnum, const char *msg)
{
        struct policy p, before;
        psrun_error err = {0};

        load_ok(&p, busy_yaml);
        load_ok(&before, busy_yaml);
        int r = load(&p, yaml, &err);
        cr_assert_eq(r, -errnum, "want %d, got %d (%s)\n--- yaml:\n%s", -errnum, r, err.msg, yaml);
        cr_assert_eq(err.code, errnum);
        cr_assert_str_eq(err.msg, msg, "\n got: %s\nwant: %s\n--- yaml:\n%s", err.msg, msg, yaml);
        assert_one_line(&err);
        assert_policy_eq(&p, &before);
        policy_free(&p);
        policy_free(&before);
}

/* Same for -o. */
static inline void expect_option_error(const char *opt, int errnum, const char *msg)
{
        struct policy p, before;
        psrun_error err = {0};

        load_ok(&p, busy_yaml);
        load_ok(&before, busy_yaml);
        int r = policy_set_option(&p, opt, &err);
        cr_assert_eq(r, -errnum, "-o %s: want %d, got %d (%s)", opt, -errnum, r, err.msg);
        cr_assert_eq(err.code, errnum);
        cr_assert_str_eq(err.msg, msg, "-o %s\n got: %s\nwant: %s", opt, err.msg, msg);
        assert_one_line(&err);
        assert_policy_eq(&p, &before);
        policy_free(&p);
        policy_free(&before);
}
