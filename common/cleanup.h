/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Scope-bound cleanup, after systemd's macros and the kernel's cleanup.h.
 * Destructors accept NULL / -1. Don't mix these with goto in one function.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void freep(void *p)
{
        free(*(void **) p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

/* close(fd) if it is one, keeping errno; returns -1 for `fd = safe_close(fd)`. */
static inline int safe_close(int fd)
{
        closep(&fd);
        return -1;
}

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

static inline void strv_free(char **v)
{
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

/* A deep copy of a NULL-terminated string vector; NULL when out of memory. */
static inline char **strv_copy(char *const *v)
{
        size_t n = 0;
        while (v[n])
                n++;
        char **copy = calloc(n + 1, sizeof(char *));
        if (!copy)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(copy[i] = strdup(v[i]))) {
                        strv_free(copy);
                        return NULL;
                }
        return copy;
}

static inline void strv_freep(char ***v)
{
        strv_free(*v);
}

#define _cleanup_(f)        __attribute__((cleanup(f)))
#define _cleanup_free_      _cleanup_(freep)
#define _cleanup_close_     _cleanup_(closep)
#define _cleanup_fclose_    _cleanup_(fclosep)
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* Take ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _tmp_ = (p);                                                         \
                (p) = NULL;                                                                        \
                _tmp_;                                                                             \
        })
#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _tmp_ = (fd);                                                                  \
                (fd) = -1;                                                                         \
                _tmp_;                                                                             \
        })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
