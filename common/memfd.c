/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/memfd.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

static int copy_all(int to, int from, off_t size)
{
        /* One write from a mapping of the file: sendfile() would splice it
         * page by page, several times slower for a few MB. */
        if (size == 0)
                return 0;
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

int memfd_sealed_copy(int from, const char *name)
{
        struct stat st;
        if (fstat(from, &st) < 0)
                return -errno;
        /* MFD_EXEC: where vm.memfd_noexec makes memfds non-executable by
         * default; kernels before 6.3 do not know the flag. */
        int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd < 0 && errno == EINVAL)
                fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        int r = copy_all(fd, from, st.st_size);
        if (r >= 0 && fchmod(fd, 0555) < 0)
                r = -errno;
        /* F_SEAL_EXEC (6.3+) keeps the mode as it is; older kernels refuse
         * the unknown seal, and the rest holds without it. */
        if (r >= 0 && fcntl(fd, F_ADD_SEALS, MEMFD_SEALS_NEEDED | F_SEAL_EXEC) < 0 &&
            fcntl(fd, F_ADD_SEALS, MEMFD_SEALS_NEEDED) < 0)
                r = -errno;
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int memfd_is_sealed(int fd)
{
        int seals = fcntl(fd, F_GET_SEALS);
        return seals >= 0 && (seals & MEMFD_SEALS_NEEDED) == MEMFD_SEALS_NEEDED;
}
