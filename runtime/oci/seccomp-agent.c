/* SPDX-License-Identifier: MIT */
/*
 * linux.seccomp.listenerPath: the seccomp agent. The process's filter was
 * loaded with a user-notification listener (runtime/child-exec.c); the
 * runtime hands it, with the "container process state", to whatever
 * listens on the config's unix socket, as runc does, and keeps no copy.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"
#include "common/json.h"
#include "runtime/oci/container.h"

/* runtime-spec config-linux.md "Container Process State". */
static int process_state(const struct oci_seccomp *sc, const struct oci_state *st, pid_t pid,
                         char **ret, size_t *len)
{
        _cleanup_free_ char *state = NULL;
        size_t state_len = 0;
        int r = oci_state_json(st, &state, &state_len);
        if (r < 0)
                return r;
        FILE *f = open_memstream(ret, len);
        if (!f)
                return -errno;
        fputs("{\"ociVersion\":", f);
        json_write_string(f, st->oci_version);
        fprintf(f, ",\"fds\":[\"seccompFd\"],\"pid\":%d", (int) pid);
        if (sc->listener_metadata) {
                fputs(",\"metadata\":", f);
                json_write_string(f, sc->listener_metadata);
        }
        fputs(",\"state\":", f);
        /* The state as `psrun state` prints it, without its newline. */
        while (state_len > 0 && (state[state_len - 1] == '\n' || state[state_len - 1] == ' '))
                state_len--;
        fwrite(state, 1, state_len, f);
        fputc('}', f);
        if (fclose(f) != 0)
                return -ENOMEM;
        return 0;
}

int oci_seccomp_agent_send(const struct oci_seccomp *sc, const struct oci_state *st, pid_t pid,
                           int listener, psrun_error *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        size_t plen = strlen(sc->listener_path);
        if (plen >= sizeof(sa.sun_path))
                return psrun_error_set(err, ENAMETOOLONG,
                                       "linux.seccomp.listenerPath: longer than a socket path "
                                       "(%zu bytes)",
                                       sizeof(sa.sun_path) - 1);
        memcpy(sa.sun_path, sc->listener_path, plen + 1);
        _cleanup_free_ char *msg = NULL;
        size_t len = 0;
        int r = process_state(sc, st, pid, &msg, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "linux.seccomp.listenerPath: the process state");
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return psrun_error_errno(err, errno, "linux.seccomp.listenerPath: socket");
        /* An agent that listens but never accepts (its backlog full) or
         * never reads would block the connect or the send for good; a unix
         * socket's connect waits as long as its sends may. */
        const struct timeval timeout = {.tv_sec = OCI_SECCOMP_AGENT_TIMEOUT_S};
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return psrun_error_errno(err, errno == EAGAIN ? ETIMEDOUT : errno,
                                         "linux.seccomp.listenerPath: connect to the seccomp "
                                         "agent at %s",
                                         sc->listener_path);
        ssize_t n = fdpass_send(fd, msg, len, &listener, 1, MSG_NOSIGNAL);
        if (n == -EAGAIN)
                n = -ETIMEDOUT;
        if (n < 0)
                return psrun_error_errno(err, (int) n,
                                         "linux.seccomp.listenerPath: send to the seccomp agent at "
                                         "%s",
                                         sc->listener_path);
        /* The fd went with the first bytes; a large state may need more
         * writes (a stream socket). */
        for (size_t off = (size_t) n; off < len; off += (size_t) n) {
                n = send(fd, msg + off, len - off, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR) {
                        n = 0;
                        continue;
                }
                if (n <= 0)
                        return psrun_error_errno(err,
                                                 n == 0            ? EPIPE
                                                 : errno == EAGAIN ? ETIMEDOUT
                                                                   : errno,
                                                 "linux.seccomp.listenerPath: send to the "
                                                 "seccomp agent at %s",
                                                 sc->listener_path);
        }
        return 0;
}
