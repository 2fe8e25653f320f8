/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the DNS parser (netns/dns-packet.c). Its input comes
 * from the sandbox (queries) and from the network (answers): any bytes must
 * be an error or a parse, never a crash, a read out of bounds or a hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netns/dns-packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct dns_query q;
        uint8_t out[512];
        if (dns_parse_query(data, size, &q) == 0) {
                /* Whatever parsed can be answered and reparsed. */
                struct dns_addr a = {.family = 2, .addr = {192, 0, 2, 1}};
                int n = dns_build_reply(&q, 0, &a, 1, 30, out, sizeof(out));
                struct dns_answer ans;
                if (n > 0 && q.qclass == 1 &&
                    dns_parse_answer(out, (size_t) n, q.name, q.qtype, &ans) < 0)
                        abort();
                (void) dns_build_query(q.id, q.name, q.qtype, out, sizeof(out));
                (void) dns_name_matches(q.name, "*.example.com");
        }
        struct dns_answer a;
        (void) dns_parse_answer(data, size, "example.com", 1, &a);
        (void) dns_parse_answer(data, size, "", 28, &a);
        return 0;
}
