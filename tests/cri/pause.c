/* SPDX-License-Identifier: MIT */
/* The pod sandbox's pause process for the CRI tier: PID 1 of the pod's
 * namespaces, it sleeps until SIGINT or SIGTERM and reaps whatever is
 * reparented to it, as Kubernetes' own pause does. Built -static so the
 * pause image needs nothing else. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
        (void) sig;
        stop_requested = 1;
}

static void on_child(int sig)
{
        (void) sig;
        /* Reap every exited child; errno is the interrupted code's. */
        int saved = errno;
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        errno = saved;
}

int main(int argc, char **argv)
{
        struct sigaction stop = {.sa_handler = on_stop};
        struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP | SA_RESTART};

        if (argc > 1 && strcmp(argv[1], "-v") == 0) {
                puts("psrun-pause");
                return 0;
        }
        if (getpid() != 1)
                fputs("pause: warning: not PID 1\n", stderr);
        sigemptyset(&stop.sa_mask);
        sigemptyset(&child.sa_mask);
        if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 ||
            sigaction(SIGCHLD, &child, NULL) < 0) {
                perror("pause: sigaction");
                return 1;
        }
        while (!stop_requested)
                pause();
        on_child(SIGCHLD);
        return 42;
}
