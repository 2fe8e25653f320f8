/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * psrun_gc (include/psrun.h) composes the gc of every part of psrun. The
 * spine knows nothing of the OCI runtime's state: that step is the one
 * function below, which runtime/oci/gc.c defines (as backend.h names the
 * gVisor backend that runtime/gvisor/ defines).
 */

#include "common/error.h"

/* Removes the containers of the OCI root at path (NULL: the default root)
 * whose create died; a root that does not exist is left alone (0). Returns
 * how many were removed. */
int oci_gc_root(const char *path, psrun_error *err);
