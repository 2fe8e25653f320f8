/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI conformance tier: the psrun binary driven as Docker and containerd
 * drive an OCI runtime, with a busybox bundle. Every test gets its own
 * bundle, state root and cgroup parent (below the test's own cgroup), all
 * removed in teardown. Like the containerd shim, the test process is a
 * child subreaper: a container's init, psrun's child until `psrun create`
 * exits, is then the test's to reap.
 */

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/testlib.h"

struct bundle {
        char dir[256];    /* the bundle: config.json, rootfs/ */
        char root[300];   /* --root, inside dir */
        char cgroup[128]; /* cgroupsPath parent, relative to the test's cgroup */
};

/* What varies between configs; NULL/false: the default. Fragments are JSON
 * text spliced in (with their leading comma where they extend a list). */
struct cfg {
        const char *args;          /* JSON array; default ["sh","-c","sleep 1000"] */
        bool readonly;             /* root.readonly */
        bool terminal;             /* process.terminal */
        const char *user;          /* JSON object; default {"uid":0,"gid":0} */
        const char *cwd;           /* default "/" */
        const char *process_extra; /* ",\"rlimits\":[...]" */
        const char *caps;          /* JSON array for bounding/effective/permitted */
        const char *mounts_extra;  /* ",{...}" */
        const char *hooks;         /* "\"prestart\":[...]" */
        const char *namespaces;    /* JSON array replacing the default list */
        const char *linux_extra;   /* ",\"sysctl\":{...}" */
        bool no_masks;             /* no maskedPaths/readonlyPaths */
        const char *env;           /* JSON array; default ["PATH=/bin","HOME=/root"] */
        bool new_privs;            /* process.noNewPrivileges false */
};

struct out {
        int status; /* exit status, or 128+signal */
        char out[65536];
        char err[16384];
};

/* A fresh bundle (fixture setup) and its removal (teardown): kills what is
 * left of its containers, removes the state root and cgroups. */
void bundle_setup(void);
void bundle_teardown(void);
extern struct bundle B;

/* Writes B's config.json for container `id` (its cgroupsPath is
 * <B.cgroup>/<id>). */
void bundle_config(const char *id, const struct cfg *c);

/* psrun --root B.root ARGS... (NULL-terminated), stdin from /dev/null
 * unless stdin_data. Returns the exit status. */
int psrun(struct out *o, const char *stdin_data, ...) __attribute__((sentinel));

/* create + start of the container with the given config. */
void oci_up(const char *id, const struct cfg *c);

/* The "status" of `psrun state id`, "" when state fails. */
const char *oci_status(const char *id);
int oci_pid(const char *id);

/* Host path of the container's cgroup dir in a v1 hierarchy or "unified". */
bool oci_cgroup_dir(const char *id, const char *controller, char *buf, size_t len);

/* Reads a file into buf (NUL-terminated, trimmed); false when absent. */
bool read_text(const char *path, char *buf, size_t len);

/* Poll until `psrun state id` says status (or timeout_ms passes). */
bool wait_status(const char *id, const char *status, int timeout_ms);

/* Reap exited children (container inits made by create). */
void reap_children(void);

/* true when s contains needle; for messages. */
bool contains(const char *s, const char *needle);
