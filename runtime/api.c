/* SPDX-License-Identifier: MIT */
/* The public C API (include/psrun.h): a thin, stable layer over the runtime. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "policy/policy.h"
#include "runtime/api-internal.h"
#include "runtime/run.h"

/* The one version string: the Makefile's VERSION. */
#ifndef PSRUN_VERSION
#error "PSRUN_VERSION is defined by the Makefile (VERSION)"
#endif

PSRUN_PUBLIC psrun_policy *psrun_policy_new(void)
{
        psrun_policy *pol = calloc(1, sizeof(*pol));
        if (!pol || policy_init(&pol->p) < 0) {
                free(pol);
                return NULL;
        }
        return pol;
}

PSRUN_PUBLIC void psrun_policy_free(psrun_policy *pol)
{
        if (!pol)
                return;
        policy_free(&pol->p);
        free(pol);
}

PSRUN_PUBLIC int psrun_policy_load_file(psrun_policy *pol, const char *path, psrun_error *err)
{
        if (!pol || !path)
                return psrun_error_set(err, EINVAL, "policy: no policy or path given");
        return policy_load_file(&pol->p, path, err);
}

PSRUN_PUBLIC int psrun_policy_load_string(psrun_policy *pol, const char *text, psrun_error *err)
{
        if (!pol || !text)
                return psrun_error_set(err, EINVAL, "policy: no policy or text given");
        return policy_load_buffer(&pol->p, "policy", text, strlen(text), err);
}

PSRUN_PUBLIC int psrun_policy_set(psrun_policy *pol, const char *key, const char *value,
                                  psrun_error *err)
{
        if (!pol || !key || !value)
                return psrun_error_set(err, EINVAL, "policy: no policy, key or value given");
        _cleanup_free_ char *kv = NULL;
        if (asprintf(&kv, "%s=%s", key, value) < 0)
                return psrun_error_errno(err, ENOMEM, "policy");
        return policy_set_key(&pol->p, kv, err);
}

/* One allocation: the entries, the unavailable layers, then their
 * strings; `violations` points to its start (with zero entries too). */
static void violations_to_public(const struct violations *v, psrun_result *out)
{
        out->violations_mode = policy_violations_to_string((enum policy_violations) v->mode);
        if (!out->violations_mode || v->mode == POLICY_VIOLATIONS_OFF)
                return;
        size_t n = v->n > VIOLATIONS_MAX ? VIOLATIONS_MAX : v->n, n_un = 0, strings = 0;
        for (size_t i = 0; i < n; i++)
                strings += strnlen(v->list[i].what, VIOLATION_WHAT_MAX) + 1;
        for (int l = 0; l < _VIOLATION_LAYER_MAX; l++)
                if (v->unavailable[l][0]) {
                        n_un++;
                        strings += strnlen(v->unavailable[l], VIOLATION_WHY_MAX) + 1;
                }
        size_t head = n * sizeof(psrun_violation) + n_un * sizeof(psrun_violation_unavailable);
        char *block = calloc(1, head + strings + 1);
        if (!block)
                return; /* out of memory: the result says nothing was listed */
        psrun_violation *list = (psrun_violation *) (void *) block;
        psrun_violation_unavailable *un =
                (psrun_violation_unavailable *) (void *) (block + n * sizeof(psrun_violation));
        char *p = block + head;
        for (size_t i = 0; i < n; i++) {
                size_t len = strnlen(v->list[i].what, VIOLATION_WHAT_MAX);
                memcpy(p, v->list[i].what, len);
                list[i] = (psrun_violation){
                        .layer = violation_layer_to_string((enum violation_layer) v->list[i].layer),
                        .what = p,
                        .count = v->list[i].count,
                        .pid = v->list[i].pid,
                };
                if (!list[i].layer)
                        list[i].layer = "?";
                p += len + 1;
        }
        size_t k = 0;
        for (int l = 0; l < _VIOLATION_LAYER_MAX; l++) {
                if (!v->unavailable[l][0])
                        continue;
                size_t len = strnlen(v->unavailable[l], VIOLATION_WHY_MAX);
                memcpy(p, v->unavailable[l], len);
                un[k++] = (psrun_violation_unavailable){
                        .layer = violation_layer_to_string((enum violation_layer) l),
                        .why = p,
                };
                p += len + 1;
        }
        out->violations = list;
        out->n_violations = n;
        out->violations_more = v->more;
        out->violations_unavailable = n_un ? un : NULL;
        out->n_violations_unavailable = n_un;
}

void result_to_public(const struct run_result *in, psrun_result *out)
{
        memset(out, 0, sizeof(*out));
        out->exit_code = in->exit_code;
        out->signal = in->signal;
        out->reason = run_reason_to_string(in->reason);
        out->wall_ms = in->wall_ms;
        out->cpu_ms = in->cpu_ms;
        out->peak_memory_bytes = in->peak_memory_bytes;
        memcpy(out->error, in->error, sizeof(out->error));
        violations_to_public(&in->violations, out);
        int b = policy_backend_from_string(in->backend);
        out->backend = b < 0 ? NULL : policy_backend_to_string((enum policy_backend) b);
}

void violations_from_public(const psrun_result *in, struct violations *out)
{
        int mode = in->violations_mode ? policy_violations_from_string(in->violations_mode) : -1;
        violations_init(out, mode < 0 ? POLICY_VIOLATIONS_OFF : (enum policy_violations) mode);
        if (!violations_on(out))
                return;
        /* As listed: the entries are distinct already. */
        for (size_t i = 0; i < in->n_violations && i < VIOLATIONS_MAX && in->violations; i++) {
                const psrun_violation *e = &in->violations[i];
                int layer = violation_layer_from_string(e->layer);
                struct violation *v = &out->list[out->n++];
                v->layer = layer < 0 ? 0 : (uint32_t) layer;
                v->pid = e->pid;
                v->count = e->count;
                snprintf(v->what, sizeof(v->what), "%s", e->what ? e->what : "");
        }
        out->more = in->violations_more;
        for (size_t i = 0; i < in->n_violations_unavailable && in->violations_unavailable; i++) {
                const psrun_violation_unavailable *u = &in->violations_unavailable[i];
                int layer = violation_layer_from_string(u->layer);
                if (layer >= 0)
                        violations_set_unavailable(out, (enum violation_layer) layer, "%s",
                                                   u->why ? u->why : "");
        }
}

PSRUN_PUBLIC void psrun_result_free(psrun_result *result)
{
        if (!result)
                return;
        free(result->violations);
        result->violations = NULL;
        result->n_violations = 0;
        result->violations_unavailable = NULL;
        result->n_violations_unavailable = 0;
}

/* The public callback takes no level: debug lines are not passed on. */
static void public_log(void *userdata, enum log_level level, const char *msg)
{
        const psrun_run_options *options = userdata;
        if (level != LOG_LEVEL_DEBUG)
                options->log(options->log_userdata, msg);
}

PSRUN_PUBLIC int psrun_run(const psrun_policy *pol, char *const argv[],
                           const psrun_run_options *options, psrun_result *result, psrun_error *err)
{
        struct run_result res;
        struct run_options o = {0};
        if (options) {
                o.cgroup_parent = options->cgroup_parent;
                o.forward_signals = options->forward_signals != 0;
                o.log = options->log ? public_log : NULL;
                o.log_userdata = (void *) options;
        }
        int r;
        if (!pol || !argv || !result) {
                memset(&res, 0, sizeof(res));
                r = psrun_error_set(err, EINVAL, "run: no policy, command or result given");
                res.reason = RUN_REASON_SETUP_ERROR;
                res.exit_code = 125;
                snprintf(res.error, sizeof(res.error), "%s", err ? err->msg : "invalid argument");
        } else {
                r = run_sandbox(&pol->p, argv, &o, &res, err);
        }
        if (result)
                result_to_public(&res, result);
        return r;
}

void result_from_public(const psrun_result *in, struct run_result *out)
{
        *out = (struct run_result){
                .exit_code = in->exit_code,
                .signal = in->signal,
                .wall_ms = in->wall_ms,
                .cpu_ms = in->cpu_ms,
                .peak_memory_bytes = in->peak_memory_bytes,
        };
        int reason = run_reason_from_string(in->reason);
        out->reason = reason < 0 ? RUN_REASON_SETUP_ERROR : (enum run_reason) reason;
        memcpy(out->error, in->error, sizeof(out->error));
        violations_from_public(in, &out->violations);
        if (in->backend)
                snprintf(out->backend, sizeof(out->backend), "%s", in->backend);
}

PSRUN_PUBLIC int psrun_result_write_json(const psrun_result *result, int fd)
{
        if (!result)
                return -EINVAL;
        struct run_result r;
        result_from_public(result, &r);
        FILE *f = fdopen_copy(fd, "w");
        if (!f)
                return -errno;
        run_result_write_json(&r, f);
        return fclose(f) == 0 ? 0 : -errno;
}

PSRUN_PUBLIC const char *psrun_version(void)
{
        return PSRUN_VERSION;
}
