/* SPDX-License-Identifier: MIT */
/* The DNS proxy's state (netns/dns-proxy.c), shared with its log and
 * counts (netns/dns-proxy-log.c). Private to the two. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "netns/dns-packet.h"
#include "netns/dns-proxy.h"
#include "netns/name-relay.h"
#include "netns/rate.h"

#define MAX_PENDING       64
#define MAX_TCP           8
#define UPSTREAM_TIMEOUT  2000 /* ms per upstream server */
#define CLIENT_TIMEOUT    5000 /* ms for a TCP client to send its query */
#define PIN_MIN_TIMEOUT_S 1
#define FIXED_FDS         4 /* stop, udp, tcp, nflog */
/* psrun's own buckets: twice the kernel's rates and bursts, so that they
 * hold back nothing the kernel let through (its clock and ours differ a
 * little), only what comes past it. */
#define QUERY_RATE   (2 * (NETNS_DNS_RATE + NETNS_DNS_TCP_RATE))
#define QUERY_BURST  (2 * (NETNS_DNS_BURST + NETNS_DNS_TCP_BURST))
#define REPORT_RATE  (2 * NETNS_LOG_RATE)
#define REPORT_BURST (2 * NETNS_LOG_BURST)

enum up_state { UP_IDLE, UP_UDP, UP_TCP_CONNECT, UP_TCP_READ };

struct pending {
        bool used;
        bool raw;       /* full mode: relay as is */
        int client_tcp; /* index into tcp[], or -1: UDP */
        struct sockaddr_storage client;
        socklen_t client_len;
        struct dns_query q;
        uint16_t client_id, up_id;
        uint8_t query[DNS_UDP_MAX + 2]; /* what goes upstream; +2 for the TCP length */
        size_t query_len;
        size_t upstream; /* index into plan->upstream */
        enum up_state state;
        int fd;
        uint8_t *tcp_buf; /* UP_TCP_READ: 2 + DNS_TCP_MAX */
        size_t tcp_sent, tcp_got;
        uint64_t deadline;
};

struct tcp_client {
        int fd; /* -1: free */
        uint8_t buf[2 + DNS_UDP_MAX];
        size_t got;
        bool waiting; /* a query of it is upstream */
        uint64_t deadline;
};

/* Pins this proxy made, and until when (a pin never outlives its timeout:
 * only this proxy adds elements, and the kernel expires them). */
#define PIN_CACHE 256
struct pin {
        struct dns_addr addr;
        uint64_t until_ms; /* 0: free */
};

struct dns_proxy {
        const struct netns_plan *plan;
        int nft; /* nf_tables socket for the pins and the limits' counters */
        /* The nft socket's one user at a time: the proxy's pins, and a
         * session's supervisor reading the counters (dns_proxy_watch). */
        pthread_mutex_t nft_lock;
        struct netns_limited limited_seen; /* the counters as last counted */
        struct bucket queries, reports;
        uint32_t udp_drops, nflog_drops; /* socket_drops() as last counted */
        FILE *log;
        struct nflog *nflog;
        bool own_nflog; /* opened here, not the plan's (netns_lease) */
        int stop_fd, udp_fd, tcp_fd;
        pthread_t thread;
        bool started;
        struct pending pending[MAX_PENDING];
        struct tcp_client tcp[MAX_TCP];
        /* The counts, and the windows that count too (dns_proxy_watch): the
         * proxy's thread adds, a session's supervisor reads; under lock. */
        pthread_mutex_t lock;
        pthread_mutex_t read_lock; /* the NFLOG socket's one reader */
        struct netns_stats stats;
        struct netns_stats *watchers[DNS_PROXY_MAX_WATCHERS];
        struct pin pins[PIN_CACHE];
        size_t next_pin; /* the slot to reuse when none is free */
        /* The name check (restricted, name_check): told each name's pins,
         * it reports its verdicts to the counts and the log. */
        struct name_relay *relay;
};

/* The log and the counts (dns-proxy-log.c), each under the proxy's lock
 * where it touches the counts. */
void dnsp_log_query(struct dns_proxy *p, const struct dns_query *q, const char *action,
                    const char *reason, const struct dns_addr *addrs, size_t n_addrs);
void dnsp_count_limited(struct dns_proxy *p, const char *what, uint64_t n);
/* The kernel's drops and the table's limit counters since last time, as
 * refusals of their own (NETNS_LIMITED_*). */
void dnsp_sync_limited(struct dns_proxy *p);
void dnsp_count_query(struct dns_proxy *p, bool allowed);
void dnsp_count_denial(struct dns_proxy *p, const char *name, const char *addr, uint16_t port,
                       const char *proto);
/* The name check's verdicts (name_relay_report_fn) and the firewall's
 * refusals (nflog_read's callback), userdata the proxy. */
void dnsp_name_verdict(void *userdata, const struct name_relay_verdict *v);
void dnsp_refused(void *userdata, const char *addr, uint16_t port, const char *proto);
