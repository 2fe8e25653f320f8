/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Named kill points for the soak tier (tests/soak): with
 * PSRUN_TEST_KILL_AT=<stage> in its environment, psrun SIGKILLs itself when
 * it reaches that stage, so every half-done state a crash can leave is
 * reached on purpose, then cleaned with `delete --force` and `psrun gc`.
 * Called only in the parent, never between clone and execve. Killing
 * psrun is something its caller can always do: the variable grants nothing.
 * PSRUN_TEST_STOP_AT=<stage> stops psrun there instead (SIGSTOP, until its
 * caller sends SIGCONT): a test makes psrun slow at a known point, which
 * its caller could do as well.
 *
 * Stages (docs/testing.md lists them): create:temp, create:state, create:planned,
 * create:cgroups, create:cloned, create:pid, create:released, create:ready;
 * run:cgroup, run:cloned, run:confined, run:released; in a network
 * set-up (netns/netns.c), net:table and net:veth; gvisor:cgroup,
 * gvisor:cloned, gvisor:released (backend: gvisor); session:image (a
 * session's supervisor, executed, before it starts anything).
 */

void fault_point(const char *stage);
