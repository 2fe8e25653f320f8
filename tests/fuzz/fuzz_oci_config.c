/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the OCI config.json parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/oci/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct oci_config cfg;
        psrun_error err = {0};
        if (oci_config_parse((const char *) data, size, &cfg, &err) == 0)
                oci_config_free(&cfg);
        else if (strchr(err.msg, '\n'))
                abort();
        return 0;
}
