/* SPDX-License-Identifier: MIT */
/* Named kill points for the soak tier. */
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
}
