/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include <stddef.h>
#include <sys/types.h>

/* Read fd until EOF or until buf holds size-1 bytes, retrying on EINTR;
 * NUL-terminate. Returns the length or -errno. */
ssize_t read_into(int fd, char *buf, size_t size);

/* Read all of fd into a new NUL-terminated buffer. More than max bytes is
 * -EFBIG (checked by reading one byte past it). Returns 0 or -errno. */
int read_all(int fd, size_t max, char **ret, size_t *ret_len);

/* Writes all of p, retrying after EINTR and short writes. 0 or -errno.
 * Async-signal-safe (the child uses it). */
int write_all(int fd, const char *p, size_t len);

/* /proc/<pid>/<name> (uid_map, gid_map, ...) in one write, which such files
 * take whole or not at all: 0, -errno, or -EIO for a short write. */
int write_proc_file(pid_t pid, const char *name, const char *text);

/* A stdio stream on a copy of fd (so that fclose leaves fd open), or NULL
 * with errno set. */
FILE *fdopen_copy(int fd, const char *mode);
