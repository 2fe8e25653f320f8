/* SPDX-License-Identifier: MIT */
#include "runtime/result.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "common/json.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/plan.h"

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

/* "network": {"allowed_queries": N, "denied_queries": N, "denied": [{"name":
 * "evil.test", "count": 2}, {"addr": "192.0.2.9", "port": 443, "proto":
 * "tcp", "count": 1}], "denied_more": N} */
void run_result_write_network(const struct netns_stats *n, FILE *f)
{
        fprintf(f, ",\"network\":{\"allowed_queries\":%llu,\"denied_queries\":%llu,\"denied\":[",
                (unsigned long long) n->allowed_queries, (unsigned long long) n->denied_queries);
        for (size_t i = 0; i < n->n_denied; i++) {
                const struct netns_denied *d = &n->denied[i];
                fputs(i ? ",{" : "{", f);
                if (d->addr[0]) {
                        fputs("\"addr\":", f);
                        json_write_string(f, d->addr);
                        fprintf(f, ",\"port\":%u,\"proto\":", (unsigned) d->port);
                        json_write_string(f, d->proto);
                } else {
                        fputs("\"name\":", f);
                        json_write_string(f, d->name);
                }
                fprintf(f, ",\"count\":%llu}", (unsigned long long) d->count);
        }
        fprintf(f, "],\"denied_more\":%llu}", (unsigned long long) n->denied_more);
}

/* "rootless":true, the identity, and per limit what holds it. */
static void write_rootless_layers(const struct run_result *r, FILE *f)
{
        const struct {
                const char *name, *value;
        } limits[] = {
                {"memory", r->rootless.memory},   {"cpu", r->rootless.cpu},
                {"pids", r->rootless.pids},       {"disk", r->rootless.disk},
                {"timeout", r->rootless.timeout},
        };
        fputs(",\"rootless\":true,\"identity\":", f);
        json_write_string(f, r->rootless.identity);
        if (r->rootless.image_owners[0]) {
                fputs(",\"image_owners\":", f);
                json_write_string(f, r->rootless.image_owners);
        }
        if (r->rootless.network[0]) {
                fputs(",\"network\":", f);
                json_write_string(f, r->rootless.network);
        }
        fputs(",\"limits\":{", f);
        for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
                fprintf(f, "%s\"%s\":", i ? "," : "", limits[i].name);
                json_write_string(f, limits[i].value[0] ? limits[i].value : "not enforced");
        }
        fputs("}", f);
}

void run_result_write_json(const struct run_result *r, FILE *f)
{
        fputc('{', f);
        run_result_write_fields(r, f);
        fputs("}\n", f);
        fflush(f);
}

void run_result_write_fields(const struct run_result *r, FILE *f)
{
        fprintf(f, "\"exit_code\":%d,\"signal\":", r->exit_code);
        if (r->signal)
                fprintf(f, "%d", r->signal);
        else
                fputs("null", f);
        fputs(",\"reason\":", f);
        json_write_string(f, run_reason_to_string(r->reason));
        fprintf(f, ",\"wall_ms\":%llu,\"cpu_ms\":%llu,\"peak_memory_bytes\":%llu",
                (unsigned long long) r->wall_ms, (unsigned long long) r->cpu_ms,
                (unsigned long long) r->peak_memory_bytes);
        if (r->backend[0]) {
                fputs(",\"backend\":", f);
                json_write_string(f, r->backend);
        }
        if (r->layers.seccomp[0]) {
                fputs(",\"layers\":{\"seccomp\":", f);
                json_write_string(f, r->layers.seccomp);
                fputs(",\"landlock\":", f);
                json_write_string(f, r->layers.landlock);
                fputs(",\"apparmor\":", f);
                json_write_string(f, r->layers.apparmor);
                if (r->rootless.active)
                        write_rootless_layers(r, f);
                fputs("}", f);
        }
        if (r->reason == RUN_REASON_SETUP_ERROR) {
                fputs(",\"error\":", f);
                json_write_string(f, r->error);
        }
        if (r->network.active)
                run_result_write_network(&r->network, f);
        violations_write_json(&r->violations, f);
}

int run_result_setup_error(struct run_result *r, const psrun_error *err, int ret)
{
        r->reason = RUN_REASON_SETUP_ERROR;
        r->exit_code = 125;
        snprintf(r->error, sizeof(r->error), "%s", err->msg);
        return ret;
}

void run_result_set_status(struct run_result *r, int status, const struct cgroup_stats *st)
{
        if (WIFSIGNALED(status)) {
                r->signal = WTERMSIG(status);
                r->exit_code = 128 + r->signal;
                r->reason = RUN_REASON_SIGNALED;
        } else {
                r->exit_code = WEXITSTATUS(status);
                r->reason = RUN_REASON_EXITED;
        }
        r->cpu_ms = st->cpu_usec / 1000;
        r->peak_memory_bytes = st->memory_peak_bytes;
}

void run_result_set_limit_reason(struct run_result *r, const struct cgroup_stats *st,
                                 bool timed_out, bool disk_full)
{
        if (r->exit_code == 0 && !timed_out)
                return;
        if (st->oom_kills > 0)
                r->reason = RUN_REASON_OOM;
        else if (timed_out)
                r->reason = RUN_REASON_TIMEOUT;
        else if (st->pids_max_hits > 0)
                r->reason = RUN_REASON_PIDS;
        else if (disk_full)
                r->reason = RUN_REASON_DISK_FULL;
}

/* A layer the policy made "auto" and the host lacks is "unavailable"; one
 * it turned off is "off". */
void run_result_set_layers(struct run_result *res, const struct plan *plan)
{
        snprintf(res->layers.seccomp, sizeof(res->layers.seccomp), "%s",
                 plan->seccomp.len ? "on" : "off");
        if (plan->landlock.ruleset_fd >= 0)
                snprintf(res->layers.landlock, sizeof(res->layers.landlock), "abi %d",
                         plan->landlock.abi);
        else
                snprintf(res->layers.landlock, sizeof(res->layers.landlock), "%s",
                         plan->landlock_off ? "off" : "unavailable");
        snprintf(res->layers.apparmor, sizeof(res->layers.apparmor), "%s",
                 plan->apparmor.active ? "on"
                 : plan->apparmor_off  ? "off"
                                       : "unavailable");
        const struct plan_rootless *rl = &plan->rootless;
        res->rootless.active = rl->active;
        if (!rl->active)
                return;
        snprintf(res->rootless.identity, sizeof(res->rootless.identity), "%s",
                 rl->subids ? "subordinate ids" : "one id");
        snprintf(res->rootless.network, sizeof(res->rootless.network), "%s",
                 rl->router && rl->link ? rl->link : "");
        const struct {
                char *out;
                const char *value;
        } limits[] = {
                {res->rootless.memory, rl->memory},   {res->rootless.cpu, rl->cpu},
                {res->rootless.pids, rl->pids},       {res->rootless.disk, rl->disk},
                {res->rootless.timeout, rl->timeout},
        };
        for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
                snprintf(limits[i].out, 16, "%s", limits[i].value ? limits[i].value : "");
        snprintf(res->rootless.image_owners, sizeof(res->rootless.image_owners), "%s",
                 rl->image_owners ? rl->image_owners : "");
}
