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
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/seccomp.h"

/* The program with each `RET ERRNO(EPERM)` made `RET USER_NOTIF` and
 * SECCOMP_FILTER_FLAG_NEW_LISTENER added. Returns the number of returns
 * changed (0: the program refuses nothing with EPERM; out is left empty),
 * or -ENOMEM. */
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
};

/* Reads one notification. -ENOENT: its thread died meanwhile (nothing to
 * answer); -EAGAIN: none was pending. */
int seccomp_notify_recv(int listener, struct seccomp_refusal *r);
/* Answers it: the call fails with errno `err` (positive). -ENOENT: the
 * thread is gone. */
int seccomp_notify_answer(int listener, uint64_t id, int err);
/* Whether notification `id` is still pending: its thread is alive and
 * still the one that made the call (so its tid was not reused). */
bool seccomp_notify_pending(int listener, uint64_t id);

/* The call for the report: "ptrace", "getpid (i386)", "syscall 999"; with
 * `detail`, the argument that made it a refusal where one can:
 * "socket(AF_PACKET)", "ioctl(TIOCSTI)", "clone(CLONE_NEWUSER)",
 * "personality(0x400000)". Uses libseccomp's tables: parent only. */
void seccomp_refusal_describe(const struct seccomp_refusal *r, bool detail, char *buf, size_t len);
