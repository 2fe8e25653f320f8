/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the policy parser, both as a document and as -o. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct policy p;
        psrun_error err = {0};
        if (policy_init(&p) < 0)
                return 0;
        if (policy_load_buffer(&p, "fuzz.yaml", (const char *) data, size, &err) == 0)
                (void) policy_validate(&p, &err);

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
