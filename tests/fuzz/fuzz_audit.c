/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the audit record parser (policy/audit.c). Records hold
 * paths and names the sandbox chose: any bytes, as any of the record types
 * psrun reads, must be an error or a parse with terminated, bounded
 * strings, never a crash, a read out of bounds or a hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const int types[] = {AUDIT_TYPE_LANDLOCK_ACCESS, AUDIT_TYPE_LANDLOCK_DOMAIN,
                                    AUDIT_TYPE_AVC, 1300};
        struct audit_record rec;
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
                int r = audit_parse(types[i], (const char *) data, size, &rec);
                if (r < 0 && rec.kind != AUDIT_KIND_OTHER)
                        abort();
                if (strnlen(rec.object, sizeof(rec.object)) == sizeof(rec.object) ||
                    strnlen(rec.blockers, sizeof(rec.blockers)) == sizeof(rec.blockers) ||
                    strnlen(rec.profile, sizeof(rec.profile)) == sizeof(rec.profile))
                        abort();
                if (rec.kind == AUDIT_KIND_LANDLOCK_ACCESS && rec.domain == 0)
                        abort();
        }
        return 0;
}
