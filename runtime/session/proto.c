/* SPDX-License-Identifier: MIT */
/*
 * What the client and the supervisor of a session share
 * (runtime/session/proto.h): ids, the protocol's header,
 * a state directory's removal.
 */
#include "runtime/session/proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"

int session_id_valid(const char *id)
{
        size_t n = id ? strlen(id) : 0;
        if (n == 0 || n > SESSION_ID_MAX || id[0] == '.' || id[0] == '-')
                return 0;
        return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

void session_hdr_init(struct sess_hdr *h, size_t size)
{
        *h = (struct sess_hdr){
                .magic = SESS_PROTO_MAGIC, .version = SESS_PROTO_VERSION, .size = (uint32_t) size};
}

int session_check_hdr(const void *buf, size_t n, size_t size, bool from_supervisor,
                      psrun_error *err)
{
        struct sess_hdr h = {0};
        memcpy(&h, buf, n < sizeof(h) ? n : sizeof(h));
        unsigned theirs;
        if (n >= sizeof(h) && h.magic == SESS_PROTO_MAGIC) {
                if (h.version == SESS_PROTO_VERSION && h.size == size && n == size)
                        return 0;
                if (h.version == SESS_PROTO_VERSION && h.size == size)
                        return psrun_error_set(err, EPROTO,
                                               "session: a truncated %s (%zu of %zu bytes)",
                                               from_supervisor ? "reply" : "request", n, size);
                theirs = h.version;
        } else if (n >= sizeof(uint32_t) && h.magic >= 1 && h.magic <= 6) {
                /* Protocol 1 had no header: its structs began with op (1-6)
                 * or kind (1-4). */
                theirs = 1;
        } else {
                return psrun_error_set(err, EPROTO, "session: a malformed %s (%zu bytes)",
                                       from_supervisor ? "reply" : "request", n);
        }
        if (theirs == SESS_PROTO_VERSION)
                return psrun_error_set(err, EPROTONOSUPPORT,
                                       "session: %s speaks session protocol %u with %u-byte "
                                       "messages, this psrun %u with %zu-byte ones (another "
                                       "psrun build)%s",
                                       from_supervisor ? "its supervisor" : "the client", theirs,
                                       h.size, SESS_PROTO_VERSION, size,
                                       from_supervisor ? ": destroy it and create it again" : "");
        return psrun_error_set(err, EPROTONOSUPPORT,
                               "session: %s speaks session protocol %u, this psrun %u (another "
                               "psrun build)%s",
                               from_supervisor ? "its supervisor" : "the client", theirs,
                               SESS_PROTO_VERSION,
                               from_supervisor ? ": destroy the session and create it again" : "");
}

void session_remove_files(int dfd)
{
        int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
        if (!d) {
                safe_close(dup);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' || (de->d_name[1] && strcmp(de->d_name, "..") != 0))
                        (void) unlinkat(dfd, de->d_name, 0);
        closedir(d);
}
