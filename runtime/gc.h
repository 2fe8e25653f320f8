/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * psrun_gc (include/psrun.h) composes the gc of every part of psrun. The
 * spine includes nothing of the layers above it (the layering check's
 * "spine" wall): the steps of the OCI runtime's state and of gVisor's are
 * the functions below, which runtime/oci/gc.c and runtime/gvisor/bundle.c
 * define (as backend.h names the gVisor backend that runtime/gvisor/
 * defines); each includes this header, so the compiler checks them.
 */

#include "common/error.h"

/* Removes the containers of the OCI root at path (NULL: the default root)
 * whose create died; a root that does not exist is left alone (0). Returns
 * how many were removed. */
int oci_gc_root(const char *path, psrun_error *err);

/* Removes the state directories of gVisor sandboxes whose owner is gone.
 * Returns how many were removed. */
int gvisor_gc(psrun_error *err);
