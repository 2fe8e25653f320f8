/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the SNI and Host readers (netns/name-check.c). Their
 * input is what a sandbox sends on a connection: any bytes, in any
 * segments, must be a name, a refusal or a wait for more, never a crash, a
 * read out of bounds or a hang; and a name found is always a valid one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netns/name-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const struct name_found *f)
{
        if (name_check_hostname(f->name) != NULL)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        /* The first byte splits the rest into segments of that many bytes
         * (plus one): the parsers must decide the same whatever arrives
         * when. */
        size_t step = (size_t) data[0] + 1;
        data++;
        size--;
        struct name_tls t = {0};
        struct name_found f;
        int whole_tls = name_check_tls(&t, data, size, &f);
        if (whole_tls == NAME_FOUND)
                check_name(&f);
        memset(&t, 0, sizeof(t));
        int r = NAME_MORE;
        size_t n = 0;
        while (r == NAME_MORE && n < size) {
                n = n + step < size ? n + step : size;
                r = name_check_tls(&t, data, n, &f);
        }
        if (r != whole_tls)
                abort();

        struct name_http h = {0};
        size_t off = 0, used;
        while (off < size) {
                r = name_check_http(&h, data + off, size - off, &used, &f);
                if (r == NAME_REFUSED || (r == NAME_MORE && used == 0))
                        break;
                if (r == NAME_FOUND)
                        check_name(&f);
                if (used == 0 || used > size - off)
                        abort();
                off += used;
        }
        return 0;
}
