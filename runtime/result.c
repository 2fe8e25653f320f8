/* SPDX-License-Identifier: MIT */
#include "runtime/result.h"

#include <errno.h>
#include <string.h>

#include "common/json.h"

static const char *const reason_names[_RUN_REASON_MAX] = {
        [RUN_REASON_EXITED] = "exited",       [RUN_REASON_SIGNALED] = "signaled",
        [RUN_REASON_TIMEOUT] = "timeout",     [RUN_REASON_OOM] = "oom",
        [RUN_REASON_PIDS] = "pids",           [RUN_REASON_SETUP_ERROR] = "setup_error",
        [RUN_REASON_DISK_FULL] = "disk_full",
};

const char *run_reason_to_string(enum run_reason r)
{
        return (unsigned) r < _RUN_REASON_MAX ? reason_names[r] : NULL;
}

int run_reason_from_string(const char *s)
{
        for (int i = 0; s && i < _RUN_REASON_MAX; i++)
                if (strcmp(reason_names[i], s) == 0)
                        return i;
        return -EINVAL;
}

void run_result_write_json(const struct run_result *r, FILE *f)
{
        fprintf(f, "{\"exit_code\":%d,\"signal\":", r->exit_code);
        if (r->signal)
                fprintf(f, "%d", r->signal);
        else
                fputs("null", f);
        fputs(",\"reason\":", f);
        json_write_string(f, run_reason_to_string(r->reason));
        fprintf(f, ",\"wall_ms\":%llu,\"cpu_ms\":%llu,\"peak_memory_bytes\":%llu",
                (unsigned long long) r->wall_ms, (unsigned long long) r->cpu_ms,
                (unsigned long long) r->peak_memory_bytes);
        if (r->reason == RUN_REASON_SETUP_ERROR) {
                fputs(",\"error\":", f);
                json_write_string(f, r->error);
        }
        fputs("}\n", f);
        fflush(f);
}
