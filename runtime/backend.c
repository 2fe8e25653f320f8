/* SPDX-License-Identifier: MIT */
/* The backends' table: the policy's `backend` value -> its ops. */
#include "runtime/backend.h"

#include "common/cleanup.h"

static const struct backend_ops *const backends[_POLICY_BACKEND_MAX] = {
        [POLICY_BACKEND_NATIVE] = &backend_native,
        [POLICY_BACKEND_GVISOR] = &backend_gvisor,
};

const struct backend_ops *backend_of(enum policy_backend backend)
{
        return (unsigned) backend < ARRAY_SIZE(backends) ? backends[backend] : NULL;
}
