/* SPDX-License-Identifier: MIT */
/* What a sandbox's network refused, counted for its result (netns/stats.h). */
#include "netns/stats.h"

#include <stdio.h>
#include <string.h>

void netns_stats_deny(struct netns_stats *s, const char *name, const char *addr, uint16_t port,
                      const char *proto)
{
        for (size_t i = 0; i < s->n_denied; i++) {
                struct netns_denied *d = &s->denied[i];
                bool same = addr ? (strcmp(d->addr, addr) == 0 && d->port == port &&
                                    strcmp(d->proto, proto ? proto : "") == 0)
                                 : (!d->addr[0] && strcmp(d->name, name) == 0);
                if (same) {
                        d->count++;
                        return;
                }
        }
        if (s->n_denied == NETNS_MAX_DENIED) {
                s->denied_more++;
                return;
        }
        struct netns_denied *d = &s->denied[s->n_denied++];
        memset(d, 0, sizeof(*d));
        if (addr) {
                snprintf(d->addr, sizeof(d->addr), "%s", addr);
                d->port = port;
                snprintf(d->proto, sizeof(d->proto), "%s", proto ? proto : "");
        } else {
                snprintf(d->name, sizeof(d->name), "%s", name);
        }
        d->count = 1;
}

void netns_stats_limit(struct netns_stats *s, const char *what, uint64_t n)
{
        if (n == 0)
                return;
        for (size_t i = 0; i < s->n_denied; i++)
                if (!s->denied[i].addr[0] && strcmp(s->denied[i].name, what) == 0) {
                        s->denied[i].count += n;
                        return;
                }
        /* Always listed: the last refusal of the list makes room. */
        if (s->n_denied == NETNS_MAX_DENIED) {
                size_t last = NETNS_MAX_DENIED;
                while (last > 0 && netns_denied_is_limit(&s->denied[last - 1]))
                        last--;
                if (last == 0)
                        return; /* cannot happen: three limits, 32 entries */
                s->denied_more += s->denied[last - 1].count;
                memmove(&s->denied[last - 1], &s->denied[last],
                        (s->n_denied - last) * sizeof(s->denied[0]));
                s->n_denied--;
        }
        struct netns_denied *d = &s->denied[s->n_denied++];
        memset(d, 0, sizeof(*d));
        snprintf(d->name, sizeof(d->name), "%s", what);
        d->count = n;
}

bool netns_denied_is_limit(const struct netns_denied *d)
{
        return !d->addr[0] && (strcmp(d->name, NETNS_LIMITED_DNS) == 0 ||
                               strcmp(d->name, NETNS_LIMITED_LOG) == 0 ||
                               strcmp(d->name, NETNS_LIMITED_CHECKS) == 0);
}
