/* SPDX-License-Identifier: MIT */
/* The OCI runtime's step of psrun_gc (runtime/gc.h). */
#include <stdlib.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/gc.h"
#include "runtime/oci/container.h"
#include "runtime/oci/rootless.h"
#include "runtime/oci/state.h"

int oci_gc_root(const char *path, psrun_error *err)
{
        /* gc never makes a root: oci_root_open would. A user's default is
         * its own root only (runtime/oci/rootless.h), never root's or
         * another user's; with no XDG_RUNTIME_DIR it has none. */
        _cleanup_free_ char *mine = NULL;
        if (!path && oci_rootless_active(OCI_ROOTLESS_AUTO)) {
                psrun_error ignored = {0};
                if (!getenv("XDG_RUNTIME_DIR"))
                        return 0;
                int r = oci_rootless_root(false, &mine, err ? err : &ignored);
                if (r < 0 || !mine)
                        return r;
                path = mine;
        }
        if (!path)
                path = OCI_ROOT_DEFAULT;
        if (access(path, F_OK) != 0)
                return 0;
        _cleanup_(oci_root_closep) struct oci_root *root = NULL;
        int r = oci_root_open(path, &root, err);
        return r < 0 ? r : oci_gc(root, err);
}
