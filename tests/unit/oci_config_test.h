/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared by the config.json parser tests (test_oci_config*.c): the fixture
 * directory, a valid document start, and the assertion helpers. Fixtures are
 * in tests/unit/data/oci/ (tests run from the repo root). Each failing parse
 * must leave the output zeroed; SANITIZE=1 builds catch what it would leak.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "common/cleanup.h"
#include "policy/seccomp.h"
#include "runtime/oci/config.h"

#define FIXTURES "tests/unit/data/oci/"
/* A valid start: tests add their fields on line 2 and close the object. */
#define HEAD         "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},\n"
#define PROCESS_HEAD HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "

#define CAP(n) (1ULL << (n))

static inline bool all_zero(const void *p, size_t n)
{
        const unsigned char *c = p;

        for (size_t i = 0; i < n; i++)
                if (c[i])
                        return false;
        return true;
}

/* LeakSanitizer reports at exit but does not fail a Criterion test: in
 * SANITIZE=1 builds each test checks for leaks itself. */
static inline void assert_no_leaks(void)
{
#ifdef __SANITIZE_ADDRESS__
        cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (report above)");
#endif
}

static inline void assert_one_line(const psrun_error *err)
{
        cr_assert_gt(strlen(err->msg), 0, "empty message");
        for (const char *c = err->msg; *c; c++)
                cr_assert_geq((unsigned char) *c, 0x20, "control character in: %s", err->msg);
}

static inline void load_fixture(const char *name, struct oci_config *c)
{
        char path[256];
        psrun_error err = {0};

        snprintf(path, sizeof(path), FIXTURES "%s", name);
        int r = oci_config_load_file(path, c, &err);
        cr_assert_eq(r, 0, "%s: %d: %s", path, r, err.msg);
}

static inline int parse(const char *json, struct oci_config *c, psrun_error *err)
{
        return oci_config_parse(json, strlen(json), c, err);
}

static inline void parse_ok(const char *json, struct oci_config *c)
{
        psrun_error err = {0};
        int r = parse(json, c, &err);

        cr_assert_eq(r, 0, "parse failed (%d): %s\n--- json:\n%.300s", r, err.msg, json);
}

/* Fails with errnum and exactly msg; the output stays zeroed. */
static inline void expect_error_len(const char *json, size_t len, int errnum, const char *msg)
{
        struct oci_config c;
        psrun_error err = {0};

        memset(&c, 0xa5, sizeof(c));
        int r = oci_config_parse(json, len, &c, &err);
        cr_expect_eq(r, -errnum, "want %d, got %d (%s)\n--- json:\n%.300s", -errnum, r, err.msg,
                     json);
        cr_expect_eq(err.code, errnum, "code %d for: %s", err.code, err.msg);
        cr_expect_str_eq(err.msg, msg, "\n got: %s\nwant: %s\n--- json:\n%.300s", err.msg, msg,
                         json);
        assert_one_line(&err);
        cr_expect(all_zero(&c, sizeof(c)), "output not zeroed after: %s", err.msg);
        oci_config_free(&c);
}

static inline void expect_error(const char *json, int errnum, const char *msg)
{
        expect_error_len(json, strlen(json), errnum, msg);
}

static inline const struct oci_mount *find_mount(const struct oci_config *c,
                                                 const char *destination)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i].destination, destination) == 0)
                        return &c->mounts[i];
        cr_assert_fail("no mount at %s", destination);
        return NULL;
}

static inline uint64_t namespaces_mask(const struct oci_config *c)
{
        uint64_t mask = 0;

        for (size_t i = 0; i < c->linux_->n_namespaces; i++)
                mask |= (unsigned) c->linux_->namespaces[i].type;
        return mask;
}

static inline uint64_t cap_mask(const char *const *names)
{
        uint64_t mask = 0;
        /* Numbers from linux/capability.h, spelled out so the test does not
         * share the parser's source of truth. */
        static const struct {
                const char *name;
                int bit;
        } caps[] = {
                {"CAP_CHOWN", 0},
                {"CAP_DAC_OVERRIDE", 1},
                {"CAP_FOWNER", 3},
                {"CAP_FSETID", 4},
                {"CAP_KILL", 5},
                {"CAP_SETGID", 6},
                {"CAP_SETUID", 7},
                {"CAP_SETPCAP", 8},
                {"CAP_NET_BIND_SERVICE", 10},
                {"CAP_NET_ADMIN", 12},
                {"CAP_NET_RAW", 13},
                {"CAP_SYS_CHROOT", 18},
                {"CAP_SYS_ADMIN", 21},
                {"CAP_MKNOD", 27},
                {"CAP_AUDIT_WRITE", 29},
                {"CAP_SETFCAP", 31},
                {"CAP_CHECKPOINT_RESTORE", 40},
        };

        for (const char *const *n = names; *n; n++) {
                size_t i = 0;
                while (i < sizeof(caps) / sizeof(caps[0]) && strcmp(caps[i].name, *n) != 0)
                        i++;
                cr_assert_lt(i, sizeof(caps) / sizeof(caps[0]), "test table lacks %s", *n);
                mask |= CAP(caps[i].bit);
        }
        return mask;
}

/* Table-driven rejections: each case fails with errnum and exactly msg. */
struct error_case {
        const char *json;
        int errnum;
        const char *msg;
};

static inline void expect_errors(const struct error_case *cases, size_t n)
{
        for (size_t i = 0; i < n; i++)
                expect_error(cases[i].json, cases[i].errnum, cases[i].msg);
}

#define CASES(...)                                                                                 \
        do {                                                                                       \
                static const struct error_case cases_[] = {__VA_ARGS__};                           \
                expect_errors(cases_, sizeof(cases_) / sizeof(cases_[0]));                         \
        } while (0)
