/* SPDX-License-Identifier: MIT */
/* The DNS proxy's log (network_log: one JSON line a verdict) and its counts
 * (the result's network object, and the windows a session's supervisor
 * watches): what netns/dns-proxy.c and its name check decided, told. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>

#include "common/cleanup.h"
#include "netns/dns-proxy-internal.h"

/* ---- the log and the counts ---- */

static void log_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20 || c >= 0x7f)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

void dnsp_log_query(struct dns_proxy *p, const struct dns_query *q, const char *action,
                    const char *reason, const struct dns_addr *addrs, size_t n_addrs)
{
        if (!p->log)
                return;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* One line at a time: the name check's thread logs too. */
        flockfile(p->log);
        fprintf(p->log, "{\"time\":%lld.%03ld,\"event\":\"dns\",\"name\":", (long long) ts.tv_sec,
                ts.tv_nsec / 1000000);
        log_string(p->log, q->name);
        fprintf(p->log, ",\"qtype\":%u,\"action\":\"%s\",\"reason\":\"%s\"", q->qtype, action,
                reason);
        if (n_addrs) {
                fputs(",\"addrs\":[", p->log);
                for (size_t i = 0; i < n_addrs; i++) {
                        char a[INET6_ADDRSTRLEN];
                        inet_ntop(addrs[i].family, addrs[i].addr, a, sizeof(a));
                        fprintf(p->log, "%s\"%s\"", i ? "," : "", a);
                }
                fputc(']', p->log);
        }
        fputs("}\n", p->log);
        fflush(p->log);
        funlockfile(p->log);
}

/* What the kernel dropped at fd's full queue so far (sk_drops: a UDP
 * socket's datagrams, a netlink socket's messages). */
static uint32_t socket_drops(int fd)
{
        uint32_t mem[SK_MEMINFO_VARS] = {0};
        socklen_t len = sizeof(mem);
        if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
            len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
                return 0;
        return mem[SK_MEMINFO_DROPS];
}

/* What a limit held back: to the proxy's stats and each open window. */
void dnsp_count_limited(struct dns_proxy *p, const char *what, uint64_t n)
{
        if (n == 0)
                return;
        pthread_mutex_lock(&p->lock);
        netns_stats_limit(&p->stats, what, n);
        for (size_t i = 0; i < DNS_PROXY_MAX_WATCHERS; i++)
                if (p->watchers[i])
                        netns_stats_limit(p->watchers[i], what, n);
        pthread_mutex_unlock(&p->lock);
}

/* What the table's limits dropped since last counted (its counters), and
 * what overflowed the sockets' queues while the proxy's buckets held their
 * reads back. */
void dnsp_sync_limited(struct dns_proxy *p)
{
        uint32_t udp = socket_drops(p->udp_fd);
        uint32_t nflog = p->nflog ? socket_drops(nflog_fd(p->nflog)) : 0;
        dnsp_count_limited(p, NETNS_LIMITED_DNS, (uint32_t) (udp - p->udp_drops));
        dnsp_count_limited(p, NETNS_LIMITED_LOG, (uint32_t) (nflog - p->nflog_drops));
        p->udp_drops = udp;
        p->nflog_drops = nflog;
        struct netns_limited now = {0};
        pthread_mutex_lock(&p->nft_lock);
        int r = nft_read_limited(p->nft, p->plan->table, &now);
        pthread_mutex_unlock(&p->nft_lock);
        if (r < 0)
                return;
        if (now.dns_dropped > p->limited_seen.dns_dropped)
                dnsp_count_limited(p, NETNS_LIMITED_DNS,
                                   now.dns_dropped - p->limited_seen.dns_dropped);
        if (now.unlogged > p->limited_seen.unlogged)
                dnsp_count_limited(p, NETNS_LIMITED_LOG, now.unlogged - p->limited_seen.unlogged);
        if (now.checks_dropped > p->limited_seen.checks_dropped)
                dnsp_count_limited(p, NETNS_LIMITED_CHECKS,
                                   now.checks_dropped - p->limited_seen.checks_dropped);
        p->limited_seen = now;
}

/* Every count goes to the proxy's own stats and to each open window. */
void dnsp_count_query(struct dns_proxy *p, bool allowed)
{
        pthread_mutex_lock(&p->lock);
        struct netns_stats *all[1 + DNS_PROXY_MAX_WATCHERS] = {&p->stats};
        memcpy(all + 1, p->watchers, sizeof(p->watchers));
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                if (all[i]) {
                        if (allowed)
                                all[i]->allowed_queries++;
                        else
                                all[i]->denied_queries++;
                }
        pthread_mutex_unlock(&p->lock);
}

void dnsp_count_denial(struct dns_proxy *p, const char *name, const char *addr, uint16_t port,
                       const char *proto)
{
        pthread_mutex_lock(&p->lock);
        netns_stats_deny(&p->stats, name, addr, port, proto);
        for (size_t i = 0; i < DNS_PROXY_MAX_WATCHERS; i++)
                if (p->watchers[i])
                        netns_stats_deny(p->watchers[i], name, addr, port, proto);
        pthread_mutex_unlock(&p->lock);
}

/* What the name check decided about a connection (netns/name-relay.c):
 * a refusal is counted as one of a name, "tls sni other.test to
 * 198.51.100.7:443" (or, with no name read, the reason in its place);
 * every verdict is logged. */
void dnsp_name_verdict(void *userdata, const struct name_relay_verdict *v)
{
        struct dns_proxy *p = userdata;
        if (v->reason) {
                /* Within a refusal's name (netns_denied.name): a long name is
                 * cut, the destination never. */
                char what[sizeof(((struct netns_denied *) 0)->name)];
                int room = (int) sizeof(what) - 40;
                if (v->name[0])
                        snprintf(what, sizeof(what), "%s %s %.*s to %s:%u", v->proto,
                                 strcmp(v->proto, "tls") == 0 ? "sni" : "host", room, v->name,
                                 v->addr, (unsigned) v->port);
                else
                        snprintf(what, sizeof(what), "%s %s to %s:%u", v->proto, v->reason, v->addr,
                                 (unsigned) v->port);
                dnsp_count_denial(p, what, NULL, 0, NULL);
        }
        if (!p->log)
                return;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        flockfile(p->log);
        fprintf(p->log, "{\"time\":%lld.%03ld,\"event\":\"name\",\"proto\":\"%s\",\"name\":",
                (long long) ts.tv_sec, ts.tv_nsec / 1000000, v->proto);
        log_string(p->log, v->name);
        fprintf(p->log, ",\"addr\":\"%s\",\"port\":%u,\"action\":\"%s\",\"reason\":", v->addr,
                (unsigned) v->port, v->reason ? "reject" : "allow");
        log_string(p->log, v->reason ? v->reason : "allowed");
        fputs("}\n", p->log);
        fflush(p->log);
        funlockfile(p->log);
}

/* A connection the firewall refused (NFLOG). */
void dnsp_refused(void *userdata, const char *addr, uint16_t port, const char *proto)
{
        struct dns_proxy *p = userdata;
        dnsp_count_denial(p, NULL, addr, port, proto);
        if (!p->log)
                return;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        flockfile(p->log);
        fprintf(p->log,
                "{\"time\":%lld.%03ld,\"event\":\"connect\",\"addr\":\"%s\",\"port\":%u,"
                "\"proto\":\"%s\",\"action\":\"reject\"}\n",
                (long long) ts.tv_sec, ts.tv_nsec / 1000000, addr, (unsigned) port, proto);
        fflush(p->log);
        funlockfile(p->log);
}
