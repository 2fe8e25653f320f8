/* SPDX-License-Identifier: MIT */
/* The session keys' pure checks: the install network, the package indexes,
 * the gated actions (docs/sessions.md, psrun-policy(5)). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"

static const struct {
        const char *name;
        uint32_t bit;
} actions[] = {
        {"install", POLICY_ACTION_INSTALL},
};

int policy_action_from_string(const char *s)
{
        for (size_t i = 0; s && i < ARRAY_SIZE(actions); i++)
                if (strcmp(actions[i].name, s) == 0)
                        return (int) actions[i].bit;
        return -EINVAL;
}

const char *policy_action_name_at(size_t i, uint32_t *bit)
{
        if (i >= ARRAY_SIZE(actions))
                return NULL;
        if (bit)
                *bit = actions[i].bit;
        return actions[i].name;
}

static bool host_char(char c)
{
        return isalnum((unsigned char) c) || c == '.' || c == '-';
}

/* Unreserved characters, '/', '%' (escapes) and '+': what index paths use.
 * No '?', '#', '@', quotes, spaces or shell metacharacters. */
static bool path_char(char c)
{
        return isalnum((unsigned char) c) || strchr("-._~/%+", c);
}

int policy_normalize_url(const char *in, char **ret, psrun_error *err)
{
        size_t len = strlen(in);
        if (len == 0 || len > POLICY_URL_MAX)
                return psrun_error_set(err, EINVAL, "must be a URL of 1 to %d characters",
                                       POLICY_URL_MAX);
        const char *scheme = NULL;
        if (strncasecmp(in, "https://", 8) == 0)
                scheme = "https://";
        else if (strncasecmp(in, "http://", 7) == 0)
                scheme = "http://";
        else
                return psrun_error_set(err, EINVAL, "must start with https:// or http://");
        const char *host = in + strlen(scheme), *p = host;
        if (memchr(host, '@', strcspn(host, "/")))
                return psrun_error_set(err, EINVAL,
                                       "credentials in the URL are not accepted (they would be "
                                       "visible in the installer's command line)");
        if (*p == '[') {
                /* An IPv6 literal. */
                p++;
                while (*p && (isxdigit((unsigned char) *p) || *p == ':'))
                        p++;
                if (*p != ']' || p == host + 1)
                        return psrun_error_set(err, EINVAL,
                                               "the host is not an IPv6 address in []");
                p++;
        } else {
                while (host_char(*p))
                        p++;
                if (p == host || host[0] == '.' || host[0] == '-')
                        return psrun_error_set(err, EINVAL, "has no host name");
        }
        if (*p == ':') {
                const char *digits = ++p;
                unsigned long port = 0;
                while (isdigit((unsigned char) *p) && port <= 65535)
                        port = port * 10 + (unsigned long) (*p++ - '0');
                if (p == digits || port == 0 || port > 65535)
                        return psrun_error_set(err, EINVAL, "the port must be 1 to 65535");
        }
        if (*p && *p != '/')
                return psrun_error_set(err, EINVAL, "unexpected `%c` after the host", *p);
        for (const char *q = p; *q; q++)
                if (!path_char(*q))
                        return psrun_error_set(err, EINVAL,
                                               "`%c` is not accepted in the path (no query, "
                                               "fragment, quotes or spaces)",
                                               isprint((unsigned char) *q) ? *q : '?');
        char *out = strdup(in);
        if (!out)
                return psrun_error_errno(err, ENOMEM, "url");
        /* Scheme and host are case-insensitive: stored lowercased. */
        for (char *q = out; q < out + (p - in); q++)
                *q = (char) tolower((unsigned char) *q);
        *ret = out;
        return 0;
}

int policy_install_domains_default(char ***ret, size_t *n)
{
        static const char *const presets[] = {"@pypi", "@npm"};
        size_t count = 0;
        for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
                for (const char *const *d = policy_domain_preset(presets[i]); d && *d; d++)
                        count++;
        _cleanup_strv_free_ char **v = calloc(count + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
                for (const char *const *d = policy_domain_preset(presets[i]); d && *d; d++)
                        if (!(v[k++] = strdup(*d)))
                                return -ENOMEM;
        *ret = TAKE_PTR(v);
        *n = count;
        return 0;
}

int policy_check_install(const struct policy *p, psrun_error *err)
{
        if ((unsigned) p->install_network >= _POLICY_NETWORK_MAX)
                return psrun_error_set(err, EINVAL, "install_network: invalid value %d",
                                       (int) p->install_network);
        for (size_t i = 0; i < p->n_install_allow_domains; i++) {
                _cleanup_free_ char *d = NULL;
                const char *v = p->install_allow_domains[i];
                if (!v)
                        return psrun_error_set(err, EINVAL, "install_allow_domains[%zu]: missing",
                                               i);
                if (policy_normalize_domain(v, &d, err) < 0)
                        return psrun_error_prefix(err, "install_allow_domains[%zu]", i);
                if (strcmp(d, v) != 0)
                        return psrun_error_set(err, EINVAL,
                                               "install_allow_domains[%zu]: must be written as %s",
                                               i, d);
        }
        /* As allow_domains: an allowlist only restricted mode reads would
         * silently mean nothing otherwise. */
        if (p->install_allow_domains_given && p->install_network != POLICY_NETWORK_RESTRICTED)
                return psrun_error_set(err, EINVAL,
                                       "install_allow_domains: only used with "
                                       "`install_network: restricted`");
        static const struct {
                const char *name;
                size_t offset;
        } urls[] = {
                {"pip_index_url", offsetof(struct policy, pip_index_url)},
                {"npm_registry", offsetof(struct policy, npm_registry)},
        };
        for (size_t i = 0; i < ARRAY_SIZE(urls); i++) {
                const char *v = *(char *const *) (const void *) ((const char *) p + urls[i].offset);
                _cleanup_free_ char *norm = NULL;
                if (!v)
                        continue;
                if (policy_normalize_url(v, &norm, err) < 0)
                        return psrun_error_prefix(err, "%s", urls[i].name);
                if (strcmp(norm, v) != 0)
                        return psrun_error_set(err, EINVAL, "%s: must be written as %s",
                                               urls[i].name, norm);
        }
        uint32_t known = 0, bit;
        for (size_t i = 0; policy_action_name_at(i, &bit); i++)
                known |= bit;
        if (p->approve & ~known)
                return psrun_error_set(err, EINVAL, "approve: unknown action bits 0x%x",
                                       p->approve & ~known);
        return 0;
}
