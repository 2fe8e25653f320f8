/* SPDX-License-Identifier: MIT */
/*
 * psrun's firewall: one `table inet psrun_<id>` per sandbox, written as
 * nft text and handed to libnftables in one transaction (all or nothing),
 * so removal is one `delete table`. Every rule matches on the host end of
 * the sandbox's veth, in psrun's (the host's) namespace, out of the
 * sandbox's reach.
 *
 *   input    from the veth: only DNS (UDP/TCP 53) to the gateway; the host
 *            itself is otherwise unreachable in every mode.
 *   forward  from the veth: source must be the sandbox's address; IPv6,
 *            loopback, link-local (so metadata), multicast, reserved ranges
 *            and the pool (the other sandboxes) always refused; private
 *            ranges unless allow_private; then `full` accepts, `restricted` accepts only
 *            TCP to (addr . port) pins and allow_cidrs. Refusals are logged
 *            to NFLOG and rejected (TCP reset, ICMP admin-prohibited), not
 *            dropped, so clients fail fast.
 *            to the veth: replies only; inbound connections never.
 *   postrouting: masquerade the sandbox's address.
 *
 * The table is deliberately not `flags owner` (deleted by the kernel when
 * psrun's socket closes): if psrun were killed, the rules would vanish
 * before the sandbox's pdeathsig kill, a window in which the sandbox could
 * reach the host unfiltered. Killed runs' tables stay, closed, until
 * `psrun gc` deletes them with their lease.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <nftables/libnftables.h>
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "netns/netns.h"

struct buf {
        char *data;
        size_t len, cap;
        bool failed;
};

__attribute__((format(printf, 2, 3))) static void add(struct buf *b, const char *fmt, ...)
{
        va_list ap;
        for (;;) {
                va_start(ap, fmt);
                int n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? b->cap - b->len : 0,
                                  fmt, ap);
                va_end(ap);
                if (n < 0) {
                        b->failed = true;
                        return;
                }
                if (b->data && b->len + (size_t) n < b->cap) {
                        b->len += (size_t) n;
                        return;
                }
                size_t cap = (b->cap + (size_t) n + 1) * 2;
                char *d = realloc(b->data, cap);
                if (!d) {
                        b->failed = true;
                        return;
                }
                b->data = d;
                b->cap = cap;
        }
}

/*
 * libnftables is loaded when a sandbox first needs it, not linked: it
 * exists only as a shared library (with libnftnl, libmnl, libjansson,
 * libgmp and libxtables behind it), and loading all that at every start
 * would cost every sandbox, `none` included, a few milliseconds.
 */
#define LIBNFTABLES "libnftables.so.1"

static struct {
        struct nft_ctx *(*ctx_new)(uint32_t flags);
        void (*ctx_free)(struct nft_ctx *ctx);
        int (*buffer_output)(struct nft_ctx *ctx);
        int (*buffer_error)(struct nft_ctx *ctx);
        const char *(*error_buffer)(struct nft_ctx *ctx);
        int (*run_cmd)(struct nft_ctx *ctx, const char *buf);
        char error[160];
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_load(void)
{
        static const struct {
                const char *name;
                size_t offset;
        } symbols[] = {
                {"nft_ctx_new", offsetof(typeof(lib), ctx_new)},
                {"nft_ctx_free", offsetof(typeof(lib), ctx_free)},
                {"nft_ctx_buffer_output", offsetof(typeof(lib), buffer_output)},
                {"nft_ctx_buffer_error", offsetof(typeof(lib), buffer_error)},
                {"nft_ctx_get_error_buffer", offsetof(typeof(lib), error_buffer)},
                {"nft_run_cmd_from_buffer", offsetof(typeof(lib), run_cmd)},
        };
        void *h = dlopen(LIBNFTABLES, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h) {
                snprintf(lib.error, sizeof(lib.error), "%s", dlerror());
                return;
        }
        for (size_t i = 0; i < ARRAY_SIZE(symbols); i++) {
                void *sym = dlsym(h, symbols[i].name);
                if (!sym) {
                        snprintf(lib.error, sizeof(lib.error), "%s: no %s", LIBNFTABLES,
                                 symbols[i].name);
                        lib.ctx_new = NULL;
                        return;
                }
                memcpy((char *) &lib + symbols[i].offset, &sym, sizeof(sym));
        }
}

int nft_open(struct nft_ctx **ret, psrun_error *err)
{
        pthread_once(&lib_once, lib_load);
        if (!lib.ctx_new)
                return psrun_error_set(err, ENOENT, "network: nft: %s (install libnftables1)",
                                       lib.error);
        struct nft_ctx *ctx = lib.ctx_new(NFT_CTX_DEFAULT);
        if (!ctx)
                return psrun_error_errno(err, ENOMEM, "network: nft: context");
        lib.buffer_output(ctx);
        lib.buffer_error(ctx);
        *ret = ctx;
        return 0;
}

void nft_close(struct nft_ctx *ctx)
{
        if (ctx)
                lib.ctx_free(ctx);
}

/* libnftables says "Error: Could not process rule: Operation not
 * permitted" and then the offending line; keep the reason. */
static int run(struct nft_ctx *ctx, const char *cmd, const char *what, psrun_error *err)
{
        if (lib.run_cmd(ctx, cmd) == 0)
                return 0;
        const char *text = lib.error_buffer(ctx);
        char reason[160] = "failed";
        int e = EIO;
        if (text && *text) {
                const char *colon = strrchr(text, ':');
                const char *start = strstr(text, "Error: ");
                size_t n = strcspn(start ? start + 7 : text, "\n");
                snprintf(reason, sizeof(reason), "%.*s", (int) n, start ? start + 7 : text);
                if (strstr(text, "Operation not permitted"))
                        e = EPERM, snprintf(reason, sizeof(reason), "Operation not permitted");
                else if (strstr(text, "No such file or directory"))
                        e = ENOENT, snprintf(reason, sizeof(reason), "No such file or directory");
                (void) colon;
        }
        return err ? psrun_error_set(err, e, "network: nft: %s: %s", what, reason) : -e;
}

/* "a/n, b/m" of a range table. */
static void add_ranges(struct buf *b, const struct netns_range *r, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char a[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, r[i].addr, a, sizeof(a));
                add(b, "%s%s/%u", i ? ", " : "", a, r[i].prefix);
        }
}

static void add_cidr_rules(struct buf *b, const struct netns_plan *p)
{
        for (size_t i = 0; i < p->n_cidrs; i++) {
                const struct policy_cidr *c = &p->cidrs[i];
                if (c->family != AF_INET)
                        continue;
                char a[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, c->addr, a, sizeof(a));
                if (c->port) {
                        add(b, "    ip daddr %s/%u tcp dport %u accept\n", a, c->prefix, c->port);
                        continue;
                }
                add(b, "    ip daddr %s/%u tcp dport { ", a, c->prefix);
                for (size_t j = 0; j < p->n_ports; j++)
                        add(b, "%s%u", j ? ", " : "", p->ports[j]);
                add(b, " } accept\n");
        }
}

static void add_private_set(struct buf *b, const struct netns_plan *p)
{
        add(b, "  set allowpriv4 { type ipv4_addr; flags interval; auto-merge;");
        size_t n = 0;
        for (size_t i = 0; i < p->n_privates; i++) {
                const struct policy_cidr *c = &p->privates[i];
                if (c->family != AF_INET)
                        continue;
                char a[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, c->addr, a, sizeof(a));
                add(b, "%s%s/%u", n++ ? ", " : " elements = { ", a, c->prefix);
        }
        add(b, "%s }\n", n ? " }" : "");
}

int nft_add_sandbox_table(struct nft_ctx *ctx, const struct netns_plan *p, psrun_error *err)
{
        char gw[INET_ADDRSTRLEN], sb[INET_ADDRSTRLEN], pool[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &p->gateway, gw, sizeof(gw));
        inet_ntop(AF_INET, &p->sandbox, sb, sizeof(sb));
        inet_ntop(AF_INET, &p->pool.base, pool, sizeof(pool));
        const char *h = p->host_if;
        struct buf b = {0};

        add(&b, "table inet %s {\n", p->table);
        add(&b, "  set pin4 { type ipv4_addr . inet_service; flags timeout; }\n");
        add(&b, "  set pin6 { type ipv6_addr . inet_service; flags timeout; }\n");
        add_private_set(&b, p);
        add(&b, "  chain input {\n    type filter hook input priority -10; policy accept;\n");
        add(&b, "    iifname \"%s\" jump from_sandbox_to_host\n  }\n", h);
        add(&b, "  chain from_sandbox_to_host {\n");
        add(&b, "    ip saddr %s ip daddr %s meta l4proto { tcp, udp } th dport 53 accept\n", sb,
            gw);
        add(&b, "    goto refuse\n  }\n");
        add(&b, "  chain forward {\n    type filter hook forward priority -10; policy accept;\n");
        add(&b, "    iifname \"%s\" jump from_sandbox\n", h);
        add(&b, "    oifname \"%s\" jump to_sandbox\n  }\n", h);
        /* Inbound never: only the replies of what the sandbox opened. */
        add(&b, "  chain to_sandbox {\n    ct state established,related accept\n    drop\n  }\n");
        add(&b, "  chain from_sandbox {\n");
        /* Spoofed sources are dropped (no reply to an address that is not
         * the sandbox's). */
        add(&b, "    ip saddr != %s drop\n", sb);
        add(&b, "    meta nfproto ipv6 goto refuse\n");
        add(&b, "    ct state established,related accept\n");
        /* Never reachable, whatever allow_private says. */
        add(&b, "    ip daddr { ");
        add_ranges(&b, netns_never4, netns_n_never4);
        add(&b, " } goto refuse\n");
        /* The pool is the other sandboxes: never, whatever allow_private
         * covers (their own tables drop what comes in, but silently; this
         * refuses at once, and does not depend on them). */
        add(&b, "    ip daddr %s/%u goto refuse\n", pool, p->pool.prefix);
        add(&b, "    ip daddr { ");
        add_ranges(&b, netns_private4, netns_n_private4);
        add(&b, " } ip daddr != @allowpriv4 goto refuse\n");
        if (p->mode == POLICY_NETWORK_FULL) {
                add(&b, "    accept\n");
        } else {
                add(&b, "    ip daddr . tcp dport @pin4 accept\n");
                add_cidr_rules(&b, p);
        }
        add(&b, "    goto refuse\n  }\n");
        add(&b, "  chain refuse {\n");
        add(&b, "    ct state new log group %u\n", (unsigned) p->nflog_group);
        add(&b, "    meta l4proto tcp reject with tcp reset\n");
        add(&b, "    reject with icmpx admin-prohibited\n  }\n");
        add(&b, "  chain postrouting {\n    type nat hook postrouting priority 100; policy "
                "accept;\n");
        add(&b, "    ip saddr %s oifname != \"%s\" masquerade\n  }\n}\n", sb, h);
        if (b.failed) {
                free(b.data);
                return psrun_error_errno(err, ENOMEM, "network: nft");
        }
        char what[64];
        snprintf(what, sizeof(what), "add table %s", p->table);
        int r = run(ctx, b.data, what, err);
        free(b.data);
        return r;
}

int nft_delete_table(struct nft_ctx *ctx, const char *table, psrun_error *err)
{
        char cmd[64], what[64];
        snprintf(cmd, sizeof(cmd), "delete table inet %s\n", table);
        snprintf(what, sizeof(what), "delete table %s", table);
        return run(ctx, cmd, what, err);
}

int nft_pin(struct nft_ctx *ctx, const char *table, int family, const uint8_t *addr,
            const uint16_t *ports, size_t n_ports, unsigned timeout_s, psrun_error *err)
{
        char a[INET6_ADDRSTRLEN];
        inet_ntop(family, addr, a, sizeof(a));
        const char *set = family == AF_INET ? "pin4" : "pin6";
        struct buf b = {0};
        /* add (so it exists), delete, add: in one transaction, a pin that
         * is already there gets the new answer's timeout. */
        static const char *const verbs[] = {"add", "delete", "add"};
        for (size_t v = 0; v < ARRAY_SIZE(verbs); v++) {
                add(&b, "%s element inet %s %s { ", verbs[v], table, set);
                for (size_t i = 0; i < n_ports; i++)
                        add(&b, "%s%s . %u timeout %us", i ? ", " : "", a, ports[i], timeout_s);
                add(&b, " }\n");
        }
        if (b.failed) {
                free(b.data);
                return psrun_error_errno(err, ENOMEM, "network: nft");
        }
        int r = run(ctx, b.data, "pin", err);
        free(b.data);
        return r;
}
