/* SPDX-License-Identifier: MIT */
/* The OCI runtime's step of psrun_gc (runtime/gc.h). */
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/gc.h"
#include "runtime/oci/container.h"
#include "runtime/oci/state.h"

int oci_gc_root(const char *path, psrun_error *err)
{
        /* gc never makes a root: oci_root_open would. */
        if (!path)
                path = OCI_ROOT_DEFAULT;
        if (access(path, F_OK) != 0)
                return 0;
        _cleanup_(oci_root_closep) struct oci_root *root = NULL;
        int r = oci_root_open(path, &root, err);
        return r < 0 ? r : oci_gc(root, err);
}
