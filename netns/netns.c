/* SPDX-License-Identifier: MIT */
#include "netns/netns.h"

#include <errno.h>
#include <string.h>

struct netns_mode {
        /* NULL: the mode is part of the vocabulary but not built yet */
        int (*plan)(struct netns_plan *plan, psrun_error *err);
};

static int plan_none(struct netns_plan *plan, psrun_error *err)
{
        /* A fresh namespace has lo down: programs that talk to themselves
         * over 127.0.0.1 still work, nothing else is reachable. */
        plan->loopback_up = true;
        return 0;
}

static const struct netns_mode modes[_POLICY_NETWORK_MAX] = {
        [POLICY_NETWORK_NONE] = {plan_none},
        [POLICY_NETWORK_RESTRICTED] = {NULL},
        [POLICY_NETWORK_FULL] = {NULL},
};

int netns_plan(enum policy_network mode, struct netns_plan *plan, psrun_error *err)
{
        memset(plan, 0, sizeof(*plan));
        if ((unsigned) mode >= _POLICY_NETWORK_MAX)
                return psrun_error_set(err, EINVAL, "network: unknown mode %d", (int) mode);
        if (!modes[mode].plan)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "network: `%s` is not supported yet (only `none`)",
                                       policy_network_to_string(mode));
        return modes[mode].plan(plan, err);
}
