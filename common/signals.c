/* SPDX-License-Identifier: MIT */
#include "common/signals.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sigaction for rt_sigaction (x86_64, arm64, ...). */
struct kernel_sigaction {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        unsigned long mask;
};

void signals_reset_dispositions(void)
{
        const struct kernel_sigaction dfl = {.handler = SIG_DFL};
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
}
