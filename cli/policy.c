/* SPDX-License-Identifier: MIT */
/*
 * `psrun policy`'s effective values (docs/policy.md, "psrun policy"): what
 * the policy leaves to psrun to decide when a sandbox starts, decided as
 * it would be on this host now, so that the JSON printed says what psrun
 * will use and reads back as that same policy, pinned. One table: each row
 * names the key and fills it in where the policy left it open.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "netns/netns.h"
#include "policy/apparmor.h"
#include "policy/landlock.h"
#include "policy/policy.h"
#include "psrun.h"

/* The index URLs the installers use without pip_index_url / npm_registry
 * (runtime/session/package.c's install_index_url: pip's and npm's own). */
#define PIP_INDEX_DEFAULT    "https://pypi.org/simple"
#define NPM_REGISTRY_DEFAULT "https://registry.npmjs.org/"

/* An empty dns_upstream: the host's resolvers, read when a sandbox starts.
 * Not with `network: none`, which refuses the key (a session's install
 * network reads the host's resolvers then, whatever is printed). */
static int resolve_dns_upstream(struct policy *p)
{
        if (p->n_dns_upstream > 0 || p->network == POLICY_NETWORK_NONE)
                return 0;
        char **ns = NULL;
        size_t n = 0;
        if (netns_host_resolvers(&ns, &n) == 0 && n > 0) {
                strv_free(p->dns_upstream);
                p->dns_upstream = ns;
                p->n_dns_upstream = n;
        } else {
                strv_free(ns);
        }
        return 0;
}

/* `auto` is `required` where the host has the layer (the sandbox gets it,
 * as a start without it would be refused) and `off` where it does not. The
 * native backend's: under gVisor the result's layers say what holds. */
static void resolve_layer(const struct policy *p, enum policy_layer *layer, bool host_has)
{
        if (*layer == POLICY_LAYER_AUTO && p->backend == POLICY_BACKEND_NATIVE)
                *layer = host_has ? POLICY_LAYER_REQUIRED : POLICY_LAYER_OFF;
}

static int resolve_landlock(struct policy *p)
{
        resolve_layer(p, &p->landlock, landlock_abi() > 0);
        return 0;
}

static int resolve_apparmor(struct policy *p)
{
        resolve_layer(p, &p->apparmor, apparmor_enabled() == 1);
        return 0;
}

static int set_default(char **field, const char *value)
{
        if (*field)
                return 0;
        *field = strdup(value);
        return *field ? 0 : -ENOMEM;
}

static int resolve_pip_index_url(struct policy *p)
{
        return set_default(&p->pip_index_url, PIP_INDEX_DEFAULT);
}

static int resolve_npm_registry(struct policy *p)
{
        return set_default(&p->npm_registry, NPM_REGISTRY_DEFAULT);
}

/* The store an image is taken from ($PSRUN_IMAGE_STORE, else psrun's, or
 * a user's own; none for a user with no home). */
static int resolve_image_store(struct policy *p)
{
        const char *store = psrun_image_store_default();
        return p->image && store ? set_default(&p->image_store, store) : 0;
}

static const struct effective {
        const char *key;
        int (*resolve)(struct policy *p);
} effective[] = {
        {"dns_upstream", resolve_dns_upstream}, {"landlock", resolve_landlock},
        {"apparmor", resolve_apparmor},         {"pip_index_url", resolve_pip_index_url},
        {"npm_registry", resolve_npm_registry}, {"image_store", resolve_image_store},
};

int cli_policy_effective(struct policy *p, psrun_error *err)
{
        for (size_t i = 0; i < ARRAY_SIZE(effective); i++) {
                int r = effective[i].resolve(p);
                if (r < 0)
                        return psrun_error_errno(err, -r, "policy: %s", effective[i].key);
        }
        return 0;
}
