/* SPDX-License-Identifier: MIT */
/* bench/unpack.sh's driver: unpack_layer (image/unpack.h) of each
 * "MEDIA_TYPE BLOB DIR" line on stdin into DIR (made here), as the store
 * will: one directory per layer. Prints the wall time in ms. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image/unpack.h"

int main(void)
{
        char mt[200], blob[4096], dir[4096];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (scanf("%199s %4095s %4095s", mt, blob, dir) == 3) {
                if (mkdir(dir, 0700) < 0)
                        return perror(dir), 1;
                int fd = open(blob, O_RDONLY | O_CLOEXEC);
                int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || dfd < 0)
                        return perror(blob), 1;
                struct unpack_limits lim = {0};
                psrun_error err = {0};
                if (unpack_layer(fd, mt, dfd, &lim, NULL, &err) < 0) {
                        fprintf(stderr, "%s\n", err.msg);
                        return 1;
                }
                close(fd);
                close(dfd);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("%.1f\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
        return 0;
}
