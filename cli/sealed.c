/* SPDX-License-Identifier: MIT */
/*
 * Running the OCI commands that reach into a container from a sealed copy
 * of psrun's own executable (the CVE-2019-5736 class).
 *
 * `psrun exec` and `psrun create` clone processes that join the container's
 * namespaces while they still run psrun's binary; the init of a created
 * container does so until `psrun start`. A process of the container that
 * opens /proc/PID/exe of one of them holds the host's psrun file, and can
 * reopen it for writing once it no longer runs (the write is refused with
 * ETXTBSY only while it does). So these commands first copy the executable
 * into a memfd, seal it against every change, and re-execute themselves from
 * it: /proc/PID/exe then names that copy, which nothing can write, and which
 * is gone when the last process running it exits. The host's file is never
 * reachable. docs/security.md has the cost and why `psrun run` does not need
 * it.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/memfd.h"

extern char **environ;

int cli_reexec_sealed(char **argv, psrun_error *err)
{
        _cleanup_close_ int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (exe < 0)
                return psrun_error_errno(err, errno, "sealed copy: open /proc/self/exe");
        if (memfd_is_sealed(exe)) {
                /* Already the copy. execveat named the process after the fd:
                 * give it its name back. */
                (void) prctl(PR_SET_NAME, "psrun", 0, 0, 0);
                return 0;
        }
        int fd = memfd_sealed_copy(exe, "psrun");
        if (fd < 0)
                return psrun_error_errno(err, -fd, "sealed copy of psrun's executable");
        syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
        int r = -errno;
        close(fd);
        return psrun_error_errno(err, -r, "sealed copy of psrun's executable: execute");
}
