/* SPDX-License-Identifier: MIT */
/* The backends' table: the policy's `backend` value -> its ops; and what
 * every backend's run shares (the forwarded signals). */
#include "runtime/backend.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common/cleanup.h"

static const struct backend_ops *const backends[_POLICY_BACKEND_MAX] = {
        [POLICY_BACKEND_NATIVE] = &backend_native,
        [POLICY_BACKEND_GVISOR] = &backend_gvisor,
};

const struct backend_ops *backend_of(enum policy_backend backend)
{
        return (unsigned) backend < ARRAY_SIZE(backends) ? backends[backend] : NULL;
}

static const int forwarded_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                                        SIGUSR1, SIGUSR2, SIGWINCH};

int run_block_signals(struct run_forwarding *f)
{
        sigset_t set;
        sigemptyset(&set);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded_signals); i++)
                sigaddset(&set, forwarded_signals[i]);
        if (pthread_sigmask(SIG_BLOCK, &set, &f->old_mask) != 0)
                return -EINVAL;
        f->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (f->signal_fd < 0) {
                int r = -errno;
                pthread_sigmask(SIG_SETMASK, &f->old_mask, NULL);
                return r;
        }
        f->blocked = true;
        return 0;
}

void run_unblock_signals(struct run_forwarding *f)
{
        if (!f->blocked)
                return;
        close(f->signal_fd);
        pthread_sigmask(SIG_SETMASK, &f->old_mask, NULL);
}
