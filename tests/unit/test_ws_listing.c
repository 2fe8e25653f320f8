/* SPDX-License-Identifier: MIT */
/* A rootless session's listing, from its file writer to the client in a
 * memfd (runtime/session/files.c): the round trip, and a reply that does
 * not keep to the caller's bounds or to its own format refused. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/session/workspace.h"

static psrun_file_entry entries[] = {
        {.name = "a", .type = "file", .size = 3, .mode = 0600, .mtime = 1},
        {.name = "d", .type = "dir", .size = 60, .mode = 0700, .mtime = 2},
        {.name = "d/l", .type = "symlink", .size = 11, .mode = 0777, .mtime = -3},
};

Test(ws_listing, round_trip)
{
        psrun_listing l = {.entries = entries, .n = 3, .truncated = 1}, back;
        psrun_error err = {0};
        int fd = -1;
        cr_assert_eq(ws_listing_write(&l, &fd, &err), 0, "%s", err.msg);
        cr_assert_eq(ws_listing_read(fd, 3, true, 100, 1000, &back, &err), 0, "%s", err.msg);
        close(fd);
        cr_assert_eq(back.n, 3);
        cr_expect(back.truncated);
        for (size_t i = 0; i < 3; i++) {
                cr_expect_str_eq(back.entries[i].name, entries[i].name);
                cr_expect_str_eq(back.entries[i].type, entries[i].type);
                cr_expect_eq(back.entries[i].size, entries[i].size);
                cr_expect_eq(back.entries[i].mode, entries[i].mode);
                cr_expect_eq(back.entries[i].mtime, entries[i].mtime);
        }
        psrun_listing_free(&back);
}

Test(ws_listing, a_reply_past_the_callers_bounds_is_refused)
{
        psrun_listing l = {.entries = entries, .n = 3}, back;
        psrun_error err = {0};
        int fd = -1;
        cr_assert_eq(ws_listing_write(&l, &fd, &err), 0, "%s", err.msg);
        /* More entries than asked for. */
        cr_expect_eq(ws_listing_read(fd, 3, false, 2, 1000, &back, &err), -EPROTO);
        cr_expect(strstr(err.msg, "3 entries"), "%s", err.msg);
        /* More bytes of names than asked for (a, d, d/l: 2 + 2 + 4). */
        cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
        cr_expect_eq(ws_listing_read(fd, 3, false, 100, 7, &back, &err), -EPROTO, "%s", err.msg);
        /* More entries said than the memfd holds. */
        cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
        cr_expect_eq(ws_listing_read(fd, 4, false, 100, 1000, &back, &err), -EPROTO, "%s", err.msg);
        close(fd);
}

Test(ws_listing, a_malformed_entry_is_refused)
{
        /* A name length past PATH_MAX: never allocated, refused. */
        int fd = memfd_create("t", MFD_CLOEXEC);
        cr_assert_geq(fd, 0);
        uint32_t huge[10] = {1u << 30};
        cr_assert_eq(write(fd, huge, sizeof(huge)), (ssize_t) sizeof(huge));
        cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
        psrun_listing back;
        psrun_error err = {0};
        cr_expect_eq(ws_listing_read(fd, 1, false, 100, 1u << 31, &back, &err), -EPROTO);
        cr_expect(strstr(err.msg, "malformed listing"), "%s", err.msg);
        close(fd);
}
