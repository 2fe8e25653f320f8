/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Signal dispositions for a process about to execve() something else (the
 * sandboxed command, an OCI hook). Async-signal-safe.
 */

/* Every signal back to SIG_DFL, the glibc-internal ones (32, 33) included:
 * glibc's sigaction() refuses those, so an ignored SIGRTMIN-2 inherited from
 * whoever started psrun would otherwise reach the command (SIG_IGN survives
 * execve). Uses the raw rt_sigaction. */
void signals_reset_dispositions(void);
