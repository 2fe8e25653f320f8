/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared test helpers. Tests find the build through $PSRUN_BUILD (default
 * "build"): $PSRUN_BUILD/psrun and $PSRUN_BUILD/tests/helper/<name>.
 */

#include <stdbool.h>
#include <stddef.h>

/* Fill buf with a mkdtemp()/mkstemp() template "/tmp/<prefix>-" plus the six
 * placeholder characters those functions replace. */
void test_tmp_template(char *buf, size_t size, const char *prefix);

/* Skip the current Criterion test, printing why, unless running as root. */
void test_require_root(void);
/* The escape tier's second, rootless runner (tests/rootless/run.sh): true
 * when PSRUN_TEST_ROOTLESS=1 and not root. */
bool test_rootless(void);
/* A suite that runs as root, and rootless as that second runner. */
void test_require_root_or_rootless(void);
/* In such a suite, a test that needs root: skipped rootless, saying why. */
void test_skip_rootless(const char *why);

/* Path of the psrun binary / a static helper (static storage). */
const char *test_psrun_path(void);
const char *test_helper_path(const char *name);

struct test_run {
        int status;   /* exit code of psrun (or 128+signal) */
        int pid;      /* psrun's pid */
        char *out;    /* captured stdout, NUL-terminated */
        char *err;    /* captured stderr */
        char *result; /* --result-fd JSON, NUL-terminated ("" if none) */
};

/* Run psrun with argv (NULL-terminated, without argv[0]), stdin from
 * /dev/null, capturing stdout, stderr and the result JSON (psrun is given
 * --result-fd). Aborts the test on harness failure. Afterwards it checks that
 * psrun left no cgroup behind (which also means no process: a cgroup with
 * processes can't be removed). */
void test_run_psrun(struct test_run *r, const char *const *argv);
/* The same, calling before_exec in the child right before it runs psrun
 * (to put psrun itself under some condition). */
void test_run_psrun_with(struct test_run *r, const char *const *argv, void (*before_exec)(void));
void test_run_free(struct test_run *r);

/* Extract a JSON field's raw text ("42", "\"oom\"", "null") from a flat JSON
 * object; returns a malloc'd string or NULL. */
char *test_json_field(const char *json, const char *key);

/* Leftover checks: true when no cgroup named psrun-<owner>-* (owner 0: any
 * psrun-*) exists below this process's own cgroups (all hierarchies). */
bool test_no_cgroup_leftovers_of(int owner, char *why, size_t why_len);
bool test_no_cgroup_leftovers(char *why, size_t why_len);
