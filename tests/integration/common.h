/* SPDX-License-Identifier: MIT */
#pragma once

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/testlib.h"

/* Run the static probe inside a default sandbox: psrun run [extra...] --
 * /probe cmd [arg]. extra is NULL-terminated (may be NULL). */
static inline void run_probe(struct test_run *r, const char *const *extra, const char *cmd,
                             const char *arg)
{
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[64];
        size_t n = 0;
        argv[n++] = "run";
        argv[n++] = "-o";
        argv[n++] = mount;
        for (size_t i = 0; extra && extra[i] && n < 56; i++)
                argv[n++] = extra[i];
        argv[n++] = "--";
        argv[n++] = "/probe";
        argv[n++] = cmd;
        if (arg)
                argv[n++] = arg;
        argv[n] = NULL;
        test_run_psrun(r, argv);
}

/* The value of a JSON field as a string (static buffer). */
static inline const char *field(const struct test_run *r, const char *key)
{
        static char buf[512];
        char *v = test_json_field(r->result, key);
        snprintf(buf, sizeof(buf), "%s", v ? v : "(missing)");
        free(v);
        return buf;
}

#define expect_reason(r, reason)                                                                   \
        cr_expect_str_eq(field((r), "reason"), "\"" reason "\"", "result: %s\nstderr: %s",         \
                         (r)->result, (r)->err)
