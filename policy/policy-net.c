/* SPDX-License-Identifier: MIT */
/* The network keys' pure checks: CIDRs, addresses, domain presets. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"

/* ---- presets usable inside allow_domains ---- */

static const char *const preset_pypi[] = {"pypi.org", "files.pythonhosted.org", NULL};
static const char *const preset_npm[] = {"registry.npmjs.org", NULL};
static const char *const preset_crates[] = {"crates.io", "index.crates.io", "static.crates.io",
                                            NULL};
static const char *const preset_go[] = {"proxy.golang.org", "sum.golang.org", NULL};
static const char *const preset_github[] = {"github.com",
                                            "api.github.com",
                                            "codeload.github.com",
                                            "objects.githubusercontent.com",
                                            "raw.githubusercontent.com",
                                            NULL};

static const struct {
        const char *name;
        const char *const *names;
} presets[] = {
        {"@pypi", preset_pypi}, {"@npm", preset_npm},       {"@crates", preset_crates},
        {"@go", preset_go},     {"@github", preset_github},
};

const char *const policy_domain_preset_names[] = {"@pypi", "@npm",    "@crates",
                                                  "@go",   "@github", NULL};

const char *const *policy_domain_preset(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
                if (strcmp(presets[i].name, name) == 0)
                        return presets[i].names;
        return NULL;
}

/* ---- addresses ---- */

static int parse_addr(const char *s, int *family, uint8_t *addr)
{
        if (inet_pton(AF_INET, s, addr) == 1) {
                *family = AF_INET;
                return 0;
        }
        if (inet_pton(AF_INET6, s, addr) == 1) {
                *family = AF_INET6;
                return 0;
        }
        return -EINVAL;
}

static bool host_bits_zero(const struct cidr *c)
{
        unsigned bits = c->family == AF_INET ? 32 : 128;
        for (unsigned i = c->prefix; i < bits; i++)
                if (c->addr[i / 8] & (0x80 >> (i % 8)))
                        return false;
        return true;
}

int policy_parse_cidr(const char *s, bool with_port, struct cidr *ret, psrun_error *err)
{
        char shown[128], buf[128];
        struct cidr c = {0};
        policy_escape(s, shown, sizeof(shown));
        if (strlen(s) >= sizeof(buf))
                return psrun_error_set(err, EINVAL, "\"%s\" is not a CIDR", shown);
        snprintf(buf, sizeof(buf), "%s", s);

        char *addr = buf, *port = NULL;
        if (with_port && buf[0] == '[') {
                /* [v6]:port or [v6/len]:port */
                char *close = strchr(buf, ']');
                if (!close || (close[1] && close[1] != ':'))
                        return psrun_error_set(err, EINVAL, "\"%s\" is not CIDR[:port]", shown);
                *close = '\0';
                addr = buf + 1;
                port = close[1] ? close + 2 : NULL;
        } else if (with_port) {
                char *colon = strrchr(buf, ':');
                /* one colon: IPv4 with a port; IPv6 needs brackets for one */
                if (colon && colon == strchr(buf, ':')) {
                        *colon = '\0';
                        port = colon + 1;
                }
        }
        if (port) {
                uint64_t v;
                if (parse_uint64(port, &v) < 0 || v == 0 || v > 65535)
                        return psrun_error_set(err, EINVAL, "\"%s\": port must be 1 to 65535",
                                               shown);
                c.port = (uint16_t) v;
        }
        char *slash = strchr(addr, '/');
        if (slash)
                *slash = '\0';
        if (parse_addr(addr, &c.family, c.addr) < 0)
                return psrun_error_set(err, EINVAL, "\"%s\" is not an IP address or CIDR", shown);
        unsigned bits = c.family == AF_INET ? 32 : 128;
        c.prefix = bits;
        if (slash) {
                uint64_t v;
                if (parse_uint64(slash + 1, &v) < 0 || v > bits)
                        return psrun_error_set(err, EINVAL, "\"%s\": prefix length must be 0 to %u",
                                               shown, bits);
                c.prefix = (unsigned) v;
        }
        if (!host_bits_zero(&c))
                return psrun_error_set(err, EINVAL, "\"%s\": host bits set after /%u", shown,
                                       c.prefix);
        *ret = c;
        return 0;
}

/* The canonical text: "192.0.2.0/24", "[2001:db8::1]/128:443" is not used;
 * v6 with a port is "[2001:db8::/32]:443". */
static int format_cidr(const struct cidr *c, bool with_port, char **ret, psrun_error *err)
{
        char a[INET6_ADDRSTRLEN], out[96];
        inet_ntop(c->family, c->addr, a, sizeof(a));
        if (with_port && c->port && c->family == AF_INET6)
                snprintf(out, sizeof(out), "[%s/%u]:%u", a, c->prefix, c->port);
        else if (with_port && c->port)
                snprintf(out, sizeof(out), "%s/%u:%u", a, c->prefix, c->port);
        else
                snprintf(out, sizeof(out), "%s/%u", a, c->prefix);
        *ret = strdup(out);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "cidr");
}

int policy_normalize_cidr(const char *in, char **ret, psrun_error *err)
{
        struct cidr c;
        int r = policy_parse_cidr(in, false, &c, err);
        return r < 0 ? r : format_cidr(&c, false, ret, err);
}

int policy_normalize_cidr_port(const char *in, char **ret, psrun_error *err)
{
        struct cidr c;
        int r = policy_parse_cidr(in, true, &c, err);
        return r < 0 ? r : format_cidr(&c, true, ret, err);
}

int policy_normalize_ip(const char *in, char **ret, psrun_error *err)
{
        char shown[128], a[INET6_ADDRSTRLEN];
        uint8_t addr[16];
        int family;
        if (parse_addr(in, &family, addr) < 0)
                return psrun_error_set(err, EINVAL, "\"%s\" is not an IP address",
                                       policy_escape(in, shown, sizeof(shown)));
        inet_ntop(family, addr, a, sizeof(a));
        *ret = strdup(a);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "address");
}

/* ---- cross-field checks ---- */

static int check_list(const char *name, char *const *v, size_t n,
                      int (*normalize)(const char *, char **, psrun_error *), psrun_error *err)
{
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *norm = NULL;
                if (!v[i])
                        return psrun_error_set(err, EINVAL, "%s[%zu]: missing", name, i);
                if (normalize(v[i], &norm, err) < 0)
                        return psrun_error_prefix(err, "%s[%zu]", name, i);
                if (strcmp(norm, v[i]) != 0)
                        return psrun_error_set(err, EINVAL, "%s[%zu]: must be written as %s", name,
                                               i, norm);
        }
        return 0;
}

int policy_check_network(const struct policy *p, psrun_error *err)
{
        int r;
        if ((r = check_list("allow_cidrs", p->allow_cidrs, p->n_allow_cidrs,
                            policy_normalize_cidr_port, err)) < 0 ||
            (r = check_list("allow_private", p->allow_private, p->n_allow_private,
                            policy_normalize_cidr, err)) < 0 ||
            (r = check_list("dns_upstream", p->dns_upstream, p->n_dns_upstream, policy_normalize_ip,
                            err)) < 0)
                return r;
        /* IPv6 is off inside the sandbox (docs/network.md): a v6 entry
         * would silently allow nothing. */
        for (size_t i = 0; i < p->n_allow_cidrs; i++)
                if (p->allow_cidrs[i] && p->allow_cidrs[i][0] == '[')
                        return psrun_error_set(
                                err, EINVAL, "allow_cidrs[%zu]: IPv6 is off inside the sandbox", i);
        if (p->network_pool) {
                struct cidr c;
                if (policy_parse_cidr(p->network_pool, false, &c, err) < 0)
                        return psrun_error_prefix(err, "network_pool");
                if (c.family != AF_INET || c.prefix > 28 || c.prefix < 8)
                        return psrun_error_set(err, EINVAL,
                                               "network_pool: must be an IPv4 block of /8 to /28");
        }
        if (p->n_allow_ports > POLICY_MAX_PORTS)
                return psrun_error_set(err, EINVAL, "allow_ports: at most %d ports",
                                       POLICY_MAX_PORTS);
        for (size_t i = 0; i < p->n_allow_ports; i++)
                if (p->allow_ports[i] == 0)
                        return psrun_error_set(err, EINVAL, "allow_ports[%zu]: must be 1 to 65535",
                                               i);
        if (p->dns_min_ttl_ms > POLICY_DNS_TTL_MAX || p->dns_max_ttl_ms > POLICY_DNS_TTL_MAX ||
            p->dns_max_ttl_ms < 1000)
                return psrun_error_set(err, ERANGE,
                                       "dns_min_ttl, dns_max_ttl: must be between 0 and 7 days "
                                       "(dns_max_ttl at least 1s)");
        if (p->dns_min_ttl_ms > p->dns_max_ttl_ms)
                return psrun_error_set(err, EINVAL,
                                       "dns_min_ttl: must not be greater than dns_max_ttl");
        /* Keys that mean nothing in the chosen mode would be silently ignored. */
        if (p->network != POLICY_NETWORK_RESTRICTED && p->n_allow_cidrs > 0)
                return psrun_error_set(err, EINVAL,
                                       "allow_cidrs: only used with `network: restricted`");
        if (!p->name_check && p->network != POLICY_NETWORK_RESTRICTED &&
            p->install_network != POLICY_NETWORK_RESTRICTED)
                return psrun_error_set(err, EINVAL,
                                       "name_check: only used with `network: restricted` (or "
                                       "`install_network: restricted`)");
        /* A session's install network (install_network) reads them too. */
        if (p->install_network == POLICY_NETWORK_NONE)
                return policy_check_network_alone(p, err);
        return 0;
}

int policy_check_network_alone(const struct policy *p, psrun_error *err)
{
        if (p->network == POLICY_NETWORK_NONE &&
            (p->n_allow_private > 0 || p->network_pool || p->network_log || p->n_dns_upstream))
                return psrun_error_set(err, EINVAL, "%s: not used with `network: none`%s",
                                       p->n_allow_private > 0 ? "allow_private"
                                       : p->network_pool      ? "network_pool"
                                       : p->network_log       ? "network_log"
                                                              : "dns_upstream",
                                       p->install_network == POLICY_NETWORK_NONE
                                               ? " and `install_network: none`"
                                               : " (install_network is for sessions)");
        return 0;
}
