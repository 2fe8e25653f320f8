/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the policy parser, both as a document and as -o. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *json_of(const struct policy *p)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f || policy_write_json(p, f) < 0)
                abort();
        fclose(f);
        return buf;
}

/* A valid policy printed as JSON reads back as the same policy. */
static void check_round_trip(const struct policy *p)
{
        struct policy q;
        psrun_error err = {0};
        char *first = json_of(p);
        if (policy_init(&q) < 0)
                abort();
        if (policy_load_buffer(&q, "round-trip.json", first, strlen(first), &err) < 0)
                abort();
        char *second = json_of(&q);
        if (strcmp(first, second) != 0)
                abort();
        free(first);
        free(second);
        policy_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct policy p;
        psrun_error err = {0};
        if (policy_init(&p) < 0)
                return 0;
        if (policy_load_buffer(&p, "fuzz.yaml", (const char *) data, size, &err) == 0 &&
            policy_validate(&p, &err) == 0)
                check_round_trip(&p);

        /* The same bytes as one `-o key=value`. */
        char *opt = malloc(size + 1);
        if (opt) {
                memcpy(opt, data, size);
                opt[size] = '\0';
                (void) policy_set_option(&p, opt, &err);
                free(opt);
        }
        /* Every error is one line. */
        if (strchr(err.msg, '\n'))
                abort();
        policy_free(&p);
        return 0;
}
