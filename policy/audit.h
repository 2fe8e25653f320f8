/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The kernel's audit records, read (never written, never configured) from
 * the netlink audit socket's read-only multicast group: how psrun sees
 * what Landlock and AppArmor refused (docs/security.md, "Violations").
 * Every record of the host arrives there; the caller decides which are its
 * sandbox's. Parsing is pure and bounded; the strings in a record are the
 * sandbox's to choose, so nothing in them is trusted.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* Record types (<linux/audit.h> of the build host may predate them). */
#define AUDIT_TYPE_AVC             1400 /* AppArmor's (and SELinux's) */
#define AUDIT_TYPE_LANDLOCK_ACCESS 1423
#define AUDIT_TYPE_LANDLOCK_DOMAIN 1424

/* audit_status.failure: what the kernel does when it loses a record. */
#define AUDIT_FAILURE_PANIC 2

struct audit_state {
        bool enabled;     /* audit_enabled: Landlock logs nothing without it */
        uint32_t failure; /* AUDIT_FAIL_SILENT 0, PRINTK 1, PANIC 2 */
};

/* AUDIT_GET (needs CAP_AUDIT_CONTROL), over a socket of its own. */
int audit_query(struct audit_state *st, psrun_error *err);

/* A socket in AUDIT_NLGRP_READLOG (needs CAP_AUDIT_READ): non-blocking,
 * O_CLOEXEC, with a receive buffer large enough for a burst. */
int audit_reader_open(int *fd, psrun_error *err);

enum audit_kind {
        AUDIT_KIND_OTHER,
        AUDIT_KIND_LANDLOCK_ACCESS, /* domain, blockers, object */
        AUDIT_KIND_LANDLOCK_DOMAIN, /* domain; allocated (pid, uid) or deallocated (denials) */
        AUDIT_KIND_APPARMOR,        /* pid, operation, profile, object, denied_mask */
};

#define AUDIT_OBJECT_MAX 1024

struct audit_record {
        enum audit_kind kind;
        uint64_t domain;
        char blockers[128]; /* "fs.write_file,fs.truncate", "scope.signal" */
        /* What was refused: the path (path=, or name= of a file in a
         * directory), decoded; "" when the record names none. */
        char object[AUDIT_OBJECT_MAX];
        pid_t object_pid; /* opid=: a signal's target, as the host sees it; 0: none */
        bool allocated, deallocated;
        pid_t pid;        /* the domain's creator; AppArmor: the refused process */
        uint32_t uid;     /* the domain creator's host uid */
        uint64_t denials; /* deallocated: the domain's refusals, logged or not */
        char operation[32], profile[256], denied_mask[32]; /* AppArmor */
};

/* One record's text (after the netlink header, not NUL-terminated) into
 * rec. A type or text psrun does not read gives AUDIT_KIND_OTHER and 0;
 * a record of a kind it reads that does not parse gives -EBADMSG. */
int audit_parse(int type, const char *text, size_t len, struct audit_record *rec);

/* Reads every datagram pending and passes each record of a kind psrun
 * reads to fn. Returns 0, or -ENOBUFS when the kernel dropped records for
 * this socket since the last call (its buffer overran), or -errno. */
int audit_read(int fd, void (*fn)(void *userdata, const struct audit_record *rec), void *userdata);
