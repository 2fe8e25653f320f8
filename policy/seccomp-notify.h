/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Seeing what the seccomp filter refuses (docs/security.md, "Violations").
 * The filter's refusals (every ERRNO(EPERM) return: the default action,
 * the denied families, refused arguments, foreign ABIs) become
 * USER_NOTIF returns; the supervisor reads each one from the listener and
 * answers with the same EPERM. Allowed syscalls run the same instructions
 * to the same ALLOW as before: they cost nothing more. Should the listener
 * close, the kernel answers every notification with ENOSYS: the syscall is
 * still refused.
 *
 * A filter the command stacks on psrun's would hide psrun's refusals
 * behind its own (the kernel takes the most restrictive action of all
 * filters, and ERRNO outranks USER_NOTIF). Where the program allows
 * seccomp(SECCOMP_SET_MODE_FILTER) or prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER) whatever their arguments, those become USER_NOTIF
 * too: the supervisor lets them continue and reports the filter. Only
 * those two calls' paths change; every other allowed call runs the same
 * instructions to ALLOW.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/seccomp.h"

/* The program with each `RET ERRNO(EPERM)` made `RET USER_NOTIF`, the
 * filter installs it allows made USER_NOTIF (for each ABI it allows them
 * in: a check of their arguments after the `jeq` on their number), and
 * SECCOMP_FILTER_FLAG_NEW_LISTENER added. Returns the number of returns
 * changed and installs caught (0: none; out is left empty), or -ENOMEM. An
 * install allowed only for some arguments, or whose check would not fit a
 * jump's 8 bits, is left a plain ALLOW: not reported. */
int seccomp_program_notify(const struct seccomp_program *prog, struct seccomp_program *out);

/* Async-signal-safe, for the child: load `notify` and return its listener
 * (O_CLOEXEC) in *listener. A filter up the chain that has a listener
 * already (psrun running under another supervisor's filter) makes the
 * kernel refuse a second one: then `plain` is loaded and *listener is -1.
 * Returns 0 or -errno. */
int seccomp_program_load_listener(const struct seccomp_program *notify,
                                  const struct seccomp_program *plain, int *listener);

/* One refused call, as the listener reports it. */
struct seccomp_refusal {
        uint64_t id;
        pid_t tid; /* in the pid namespace of whoever read it */
        int nr;
        uint32_t arch; /* AUDIT_ARCH_* */
        uint64_t args[6];
        uint64_t ip;
};

/* Reads one notification. -ENOENT: its thread died meanwhile (nothing to
 * answer); -EAGAIN: none was pending. */
int seccomp_notify_recv(int listener, struct seccomp_refusal *r);
/* Answers it: the call fails with errno `err` (positive). -ENOENT: the
 * thread is gone. */
int seccomp_notify_answer(int listener, uint64_t id, int err);
/* Lets it run as if the filter had allowed it (Linux 5.5; -EINVAL
 * before). Only for a call the program allows (seccomp_program_allows()).
 * -ENOENT: the thread is gone. */
int seccomp_notify_continue(int listener, uint64_t id);
/* Whether notification `id` is still pending: its thread is alive and
 * still the one that made the call (so its tid was not reused). */
bool seccomp_notify_pending(int listener, uint64_t id);

/* Whether `prog` (the plain program) allows the call: then the
 * notification is not a refusal but an install seccomp_program_notify()
 * made visible. false also for a program it cannot run. */
bool seccomp_program_allows(const struct seccomp_program *prog, const struct seccomp_refusal *r);
/* Whether the call stacks a filter: seccomp(SECCOMP_SET_MODE_FILTER) or
 * prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER), in any ABI. Parent only. */
bool seccomp_refusal_installs_filter(const struct seccomp_refusal *r);

/* The call for the report: "ptrace", "getpid (i386)", "syscall 999"; with
 * `detail`, the argument that made it a refusal where one can:
 * "socket(AF_PACKET)", "ioctl(TIOCSTI)", "clone(CLONE_NEWUSER)",
 * "personality(0x400000)". Uses libseccomp's tables: parent only. */
void seccomp_refusal_describe(const struct seccomp_refusal *r, bool detail, char *buf, size_t len);
