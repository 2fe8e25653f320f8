/* SPDX-License-Identifier: MIT */
#pragma once

#include <fcntl.h>

/*
 * A sealed, executable in-memory copy of a file (the CVE-2019-5736
 * defence: a process that runs from it can be reached through
 * /proc/PID/exe, but nothing can write to it). Used by the OCI commands
 * that reach into a container (cli/sealed.c) and by a session's
 * supervisor image when its file is not safe to run as it is
 * (runtime/session/image.c).
 */

#define MEMFD_SEALS_NEEDED (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* A memfd named `name` with from's content, mode 0555, sealed against
 * every change. Returns the fd (close-on-exec) or -errno. */
int memfd_sealed_copy(int from, const char *name);

/* Whether fd is a memfd with every seal of MEMFD_SEALS_NEEDED. */
int memfd_is_sealed(int fd);
