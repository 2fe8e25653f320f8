/* SPDX-License-Identifier: MIT */
/* psrun run's entry: check the policy and the caller, pick the policy's
 * backend (runtime/backend.h) and hand the run to it. */
#include "runtime/run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int run_sandbox(const struct policy *pol, char *const argv[], const struct run_options *o,
                struct run_result *res, psrun_error *err)
{
        static const struct run_options defaults = {0};
        if (!o)
                o = &defaults;
        memset(res, 0, sizeof(*res));

        int r = policy_validate(pol, err);
        /* install_network is a session's: here the keys it shares with
         * network mean nothing unless network does. */
        if (r >= 0)
                r = policy_check_network_alone(pol, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        /* Without root the native backend maps the user's own ids and holds
         * limits as it can (runtime/rootless.h); gVisor's runsc is not run
         * rootless yet. */
        if (geteuid() != 0 && pol->backend != POLICY_BACKEND_NATIVE)
                return run_result_setup_error(
                        res, err,
                        psrun_error_set(err, EPERM,
                                        "backend: %s needs root (rootless psrun runs only "
                                        "`backend: native` yet, docs/rootless.md)",
                                        policy_backend_to_string(pol->backend)));
        const struct backend_ops *b = backend_of(pol->backend);
        if (!b)
                return run_result_setup_error(res, err,
                                              psrun_error_set(err, EINVAL,
                                                              "backend: invalid value %d",
                                                              (int) pol->backend));
        r = b->run(pol, argv, o, res, err);
        snprintf(res->backend, sizeof(res->backend), "%s", b->name);
        return r;
}
