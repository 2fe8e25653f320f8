/* SPDX-License-Identifier: MIT */
/* The violations list of a result (runtime/violations.h). */
#include "runtime/violations.h"

#include <stdarg.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "common/names.h"
#include "runtime/cgroup/cgroup.h"

static const char *const layer_names[_VIOLATION_LAYER_MAX] = {
        [VIOLATION_SECCOMP] = "seccomp",   [VIOLATION_LANDLOCK] = "landlock",
        [VIOLATION_APPARMOR] = "apparmor", [VIOLATION_NETWORK] = "network",
        [VIOLATION_LIMITS] = "limits",
};

const char *violation_layer_to_string(enum violation_layer layer)
{
        return enum_to_string(layer_names, ARRAY_SIZE(layer_names), (int) layer);
}

int violation_layer_from_string(const char *s)
{
        return enum_from_string(layer_names, ARRAY_SIZE(layer_names), s);
}

void violations_init(struct violations *v, enum policy_violations mode)
{
        memset(v, 0, sizeof(*v));
        v->mode = (uint32_t) mode;
}

struct violation *violations_add(struct violations *v, enum violation_layer layer, const char *what,
                                 int pid, uint64_t n)
{
        if (!violations_on(v) || n == 0 || (unsigned) layer >= _VIOLATION_LAYER_MAX)
                return NULL;
        char cut[VIOLATION_WHAT_MAX];
        snprintf(cut, sizeof(cut), "%s", what);
        /* summary: one entry per (layer, what), the first process kept;
         * full: one per process as well. */
        bool per_pid = v->mode == POLICY_VIOLATIONS_FULL;
        for (uint32_t i = 0; i < v->n; i++) {
                struct violation *e = &v->list[i];
                if (e->layer == (uint32_t) layer && streq(e->what, cut) &&
                    (!per_pid || e->pid == pid)) {
                        e->count += n;
                        if (!e->pid)
                                e->pid = pid;
                        return e;
                }
        }
        if (v->n == VIOLATIONS_MAX) {
                v->more += n;
                return NULL;
        }
        struct violation *e = &v->list[v->n++];
        e->layer = (uint32_t) layer;
        e->pid = pid;
        e->count = n;
        memcpy(e->what, cut, sizeof(e->what));
        return e;
}

void violations_set_unavailable(struct violations *v, enum violation_layer layer, const char *fmt,
                                ...)
{
        if ((unsigned) layer >= _VIOLATION_LAYER_MAX)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->unavailable[layer], sizeof(v->unavailable[layer]), fmt, ap);
        va_end(ap);
}

void violations_add_limits(struct violations *v, const struct violation_limits *l)
{
        char what[VIOLATION_WHAT_MAX], size[32];
        const struct cgroup_stats *st = l->stats;
        if (st && st->pids_max_hits) {
                snprintf(what, sizeof(what), "pids_limit %llu reached",
                         (unsigned long long) l->pids_limit);
                violations_add(v, VIOLATION_LIMITS, what, 0, st->pids_max_hits);
        }
        format_size(l->memory_limit, size, sizeof(size));
        if (st && st->oom_kills) {
                snprintf(what, sizeof(what), "memory_limit %s: out of memory, process killed",
                         size);
                violations_add(v, VIOLATION_LIMITS, what, 0, st->oom_kills);
        } else if (st && st->memory_failcnt) {
                /* The limit was reached and the kernel reclaimed (v2's
                 * memory.events max, v1's failcnt): slow, not yet fatal. */
                snprintf(what, sizeof(what), "memory_limit %s reached", size);
                violations_add(v, VIOLATION_LIMITS, what, 0, st->memory_failcnt);
        }
        if (l->disk_full) {
                format_size(l->disk_limit, size, sizeof(size));
                snprintf(what, sizeof(what), "disk_limit %s: /workspace is full", size);
                violations_add(v, VIOLATION_LIMITS, what, 0, 1);
        }
        if (l->timed_out) {
                format_duration_ms(l->timeout_ms, size, sizeof(size));
                snprintf(what, sizeof(what), "timeout %s reached", size);
                violations_add(v, VIOLATION_LIMITS, what, 0, 1);
        }
}

void violations_add_network(struct violations *v, const struct netns_stats *n)
{
        if (!n->active)
                return;
        for (size_t i = 0; i < n->n_denied; i++) {
                const struct netns_denied *d = &n->denied[i];
                char what[VIOLATION_WHAT_MAX];
                if (!d->addr[0])
                        snprintf(what, sizeof(what), "%s", d->name);
                else if (strchr(d->addr, ':'))
                        snprintf(what, sizeof(what), "[%s]:%u/%s", d->addr, (unsigned) d->port,
                                 d->proto[0] ? d->proto : "?");
                else
                        snprintf(what, sizeof(what), "%s:%u/%s", d->addr, (unsigned) d->port,
                                 d->proto[0] ? d->proto : "?");
                violations_add(v, VIOLATION_NETWORK, what, 0, d->count);
        }
        if (violations_on(v))
                v->more += n->denied_more;
}

void violations_write_json(const struct violations *v, FILE *f)
{
        if (!violations_on(v))
                return;
        fputs(",\"violations\":[", f);
        for (uint32_t i = 0; i < v->n && i < VIOLATIONS_MAX; i++) {
                const struct violation *e = &v->list[i];
                const char *layer = violation_layer_to_string((enum violation_layer) e->layer);
                fputs(i ? ",{\"layer\":" : "{\"layer\":", f);
                json_write_string(f, layer ? layer : "?");
                fputs(",\"what\":", f);
                json_write_string(f, e->what);
                fprintf(f, ",\"count\":%llu", (unsigned long long) e->count);
                if (e->pid > 0)
                        fprintf(f, ",\"pid\":%d", (int) e->pid);
                fputc('}', f);
        }
        fprintf(f, "],\"violations_more\":%llu", (unsigned long long) v->more);
        bool any = false;
        for (int l = 0; l < _VIOLATION_LAYER_MAX; l++) {
                if (!v->unavailable[l][0])
                        continue;
                fputs(any ? "," : ",\"violations_unavailable\":{", f);
                json_write_string(f, violation_layer_to_string((enum violation_layer) l));
                fputc(':', f);
                json_write_string(f, v->unavailable[l]);
                any = true;
        }
        if (any)
                fputc('}', f);
}
