/* SPDX-License-Identifier: MIT */
/* Named kill (and stop) points for the tests. */
#include "common/fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fault_point(const char *stage)
{
        const char *want = getenv("PSRUN_TEST_KILL_AT");
        if (want && strcmp(want, stage) == 0)
                kill(getpid(), SIGKILL);
        want = getenv("PSRUN_TEST_STOP_AT");
        if (want && strcmp(want, stage) == 0)
                kill(getpid(), SIGSTOP);
}
