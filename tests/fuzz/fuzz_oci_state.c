/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the OCI state.json reader (state files are psrun's own,
 * but a corrupted or planted one must only ever be an error). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/oci/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct oci_state s = {0};
        psrun_error err = {0};
        if (oci_state_parse(&s, "state.json", (const char *) data, size, &err) < 0 &&
            strchr(err.msg, '\n'))
                abort();
        oci_state_free(&s);
        return 0;
}
