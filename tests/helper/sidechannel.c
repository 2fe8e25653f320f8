/* SPDX-License-Identifier: MIT */
/* Runs inside the sandbox: probes the side channels a file shared with the
 * host would open (docs/images.md, "Mounting").
 *   sidechannel flock PATH       "held" when another holder's exclusive lock
 *                                blocks ours, else "free"
 *   sidechannel inotify PATH MS  watches PATH for reads and opens for MS
 *                                milliseconds; prints the number of events */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int probe_flock(const char *path)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                perror(path);
                return 1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                puts("free");
        else if (errno == EWOULDBLOCK)
                puts("held");
        else {
                perror("flock");
                return 1;
        }
        return 0;
}

static int probe_inotify(const char *path, long ms)
{
        int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (in < 0 || inotify_add_watch(in, path, IN_ACCESS | IN_OPEN) < 0) {
                perror("inotify");
                return 1;
        }
        long events = 0, end = now_ms() + ms;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (long left; (left = end - now_ms()) > 0;) {
                struct pollfd p = {.fd = in, .events = POLLIN};
                if (poll(&p, 1, (int) left) <= 0)
                        continue;
                ssize_t n = read(in, buf, sizeof(buf));
                for (ssize_t off = 0; off < n;) {
                        const struct inotify_event *e = (const void *) (buf + off);
                        events++;
                        off += (ssize_t) sizeof(*e) + e->len;
                }
        }
        printf("%ld\n", events);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 3 && !strcmp(argv[1], "flock"))
                return probe_flock(argv[2]);
        if (argc == 4 && !strcmp(argv[1], "inotify"))
                return probe_inotify(argv[2], strtol(argv[3], NULL, 10));
        fprintf(stderr, "usage: sidechannel flock PATH | inotify PATH MS\n");
        return 2;
}
