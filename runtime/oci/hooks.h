/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * OCI hooks (runtime-spec config.md "POSIX-platform Hooks"): run a hook
 * program with the container's state JSON on its stdin.
 *
 * Each hook runs in a child made with clone3(CLONE_PIDFD): its own process
 * group, signal mask empty and every disposition default, no fd but 0-2
 * (stdin: a pipe carrying the state; stdout and stderr: pipes whose last
 * 4 KiB are kept for the error message), the environment exactly hook->env
 * (empty when none) and argv exactly hook->args ({path} when none).
 *
 * The hook need not read its stdin: the state is written without blocking
 * and EPIPE ends the writing; SIGPIPE is blocked meanwhile and a SIGPIPE we
 * caused is consumed, so the caller never sees one.
 *
 * A timeout (hook->timeout, seconds; the spec gives no default, so none)
 * SIGKILLs the hook's process group, then the hook itself should it have
 * left the group. A hook that exits on its own may leave processes it started
 * running: some hooks start helpers on purpose.
 *
 * The hook is reaped with waitid(P_PIDFD): the caller must not ignore
 * SIGCHLD (SIG_IGN makes the kernel reap it first, and the status is lost:
 * -ECHILD) nor reap children it did not start (waitpid(-1)) while a hook runs.
 *
 * Errors are one line naming the hook kind, index and path:
 *   -EPROTO     "hooks: prestart[0] /usr/bin/foo: exited with status 3: <last line>"
 *               "hooks: prestart[0] /usr/bin/foo: killed by SIGSEGV"
 *   -ETIMEDOUT  "hooks: poststart[1] /x: timed out after 5 s"
 *   -errno      "hooks: createRuntime[0] /nope: exec: No such file or directory"
 * where <last line> is the last non-empty line of the hook's stderr, or of
 * its stdout when stderr is empty, with control characters replaced by '?'.
 */

#include <stddef.h>

#include "common/error.h"
#include "runtime/oci/config.h"

/* How much of a hook's stdout and of its stderr is kept (the tail). */
#define OCI_HOOK_OUTPUT_MAX 4096

/* Runs one hook with state_json (len bytes) on its stdin and waits for it.
 * 0 when it exited with status 0. kind and index are for messages. */
int oci_hook_run(enum oci_hook_kind kind, size_t index, const struct oci_hook *hook,
                 const char *state_json, size_t len, psrun_error *err);

/* Runs the hooks of list in order, stopping at the first failure, whose
 * error it returns. A NULL or empty list is 0. */
int oci_hooks_run(enum oci_hook_kind kind, const struct oci_hook_list *list, const char *state_json,
                  size_t len, psrun_error *err);

/* The same, each hook in the namespaces of the process behind ns_pidfd
 * (setns flags ns_flags: the container's, for createContainer and
 * startContainer hooks); the hook's path is resolved in ours, as the spec
 * says, and the program is executed from that fd. ns_pidfd -1: ours. */
int oci_hooks_run_in(enum oci_hook_kind kind, const struct oci_hook_list *list,
                     const char *state_json, size_t len, int ns_pidfd, unsigned ns_flags,
                     psrun_error *err);
