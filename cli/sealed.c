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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

#define SEALS_NEEDED (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

static int copy_all(int to, int from, off_t size)
{
        /* One write from a mapping of the file: sendfile() would splice it
         * page by page, several times slower for a few MB. */
        void *src = mmap(NULL, (size_t) size, PROT_READ, MAP_PRIVATE, from, 0);
        if (src == MAP_FAILED)
                return -errno;
        int r = 0;
        for (off_t done = 0; done < size && r == 0;) {
                ssize_t n = write(to, (const char *) src + done, (size_t) (size - done));
                if (n < 0 && errno != EINTR)
                        r = -errno;
                else if (n == 0)
                        r = -EIO;
                else if (n > 0)
                        done += n;
        }
        munmap(src, (size_t) size);
        return r;
}

static int sealed_copy(int exe)
{
        struct stat st;
        if (fstat(exe, &st) < 0)
                return -errno;
        /* MFD_EXEC: where vm.memfd_noexec makes memfds non-executable by
         * default; kernels before 6.3 do not know the flag. */
        int fd = memfd_create("psrun", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd < 0 && errno == EINVAL)
                fd = memfd_create("psrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        int r = copy_all(fd, exe, st.st_size);
        if (r >= 0 && fchmod(fd, 0555) < 0)
                r = -errno;
        /* F_SEAL_EXEC (6.3+) keeps the mode as it is; older kernels refuse
         * the unknown seal, and the rest holds without it. */
        if (r >= 0 && fcntl(fd, F_ADD_SEALS, SEALS_NEEDED | F_SEAL_EXEC) < 0 &&
            fcntl(fd, F_ADD_SEALS, SEALS_NEEDED) < 0)
                r = -errno;
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int cli_reexec_sealed(char **argv, psrun_error *err)
{
        _cleanup_close_ int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (exe < 0)
                return psrun_error_errno(err, errno, "sealed copy: open /proc/self/exe");
        int seals = fcntl(exe, F_GET_SEALS);
        if (seals >= 0 && (seals & SEALS_NEEDED) == SEALS_NEEDED) {
                /* Already the copy. execveat named the process after the fd:
                 * give it its name back. */
                (void) prctl(PR_SET_NAME, "psrun", 0, 0, 0);
                return 0;
        }
        int fd = sealed_copy(exe);
        if (fd < 0)
                return psrun_error_errno(err, -fd, "sealed copy of psrun's executable");
        syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
        int r = -errno;
        close(fd);
        return psrun_error_errno(err, -r, "sealed copy of psrun's executable: execute");
}
