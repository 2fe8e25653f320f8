/* SPDX-License-Identifier: MIT */
#include "policy/caps.h"

#include <stdio.h>
#include <string.h>
#include <sys/capability.h>

int caps_last_cap(void)
{
        int last = -1;
        FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
        if (f) {
                if (fscanf(f, "%d", &last) != 1)
                        last = -1;
                fclose(f);
        }
        if (last < 0)
                last = (int) cap_max_bits() - 1;
        /* Masks are 64 bits wide. */
        return last > 63 ? 63 : last;
}

void caps_plan_none(struct caps_plan *plan)
{
        memset(plan, 0, sizeof(*plan));
        plan->last_cap = caps_last_cap();
}
