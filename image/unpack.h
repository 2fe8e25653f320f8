/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One image layer applied to a layer directory: the directory the store
 * keeps for that layer, used as one overlayfs lower directory of a root.
 * A layer is untrusted input from the network, so (docs/images.md,
 * "Unpacking"):
 *
 * - every path is resolved inside the layer directory only: parents with
 *   openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV),
 *   the last component never followed (O_NOFOLLOW, O_EXCL, *at calls on
 *   the parent's fd), so a symlink entry followed by a file "through" it
 *   lands inside; names are cleaned lexically (a leading `/`, `.` and `..`
 *   go), and a name whose `..` climbs above the layer is refused, as is any
 *   name of PATH_MAX bytes or more, or with a component over NAME_MAX;
 * - hardlinks name an entry already unpacked from this layer (the directory
 *   starts empty), never a directory;
 * - device nodes are skipped (counted in skipped_devices: the sandbox's
 *   /dev is psrun's and every other mount is nodev); a char 0/0 entry is an
 *   overlay-style whiteout and kept as one; FIFOs are made;
 * - whiteouts become overlayfs's own form, so the layer directory is a
 *   lower directory as it is: `.wh.NAME` a char 0/0 device NAME, and
 *   `.wh..wh..opq` the xattrs trusted.overlay.opaque=y (honoured by an
 *   overlay mounted by host root) and user.overlay.opaque=y (by one mounted
 *   with `userxattr` in a user namespace); a whiteout of a name this layer
 *   itself has is dropped (OCI: whiteouts apply to lower layers only);
 *   aufs's `.wh..wh.*` metadata is skipped;
 * - a later entry of the same name wins (a directory over a directory keeps
 *   what is in it and takes the new metadata);
 * - sizes are counted as declared, before any byte is written, against
 *   max_bytes (so a decompression bomb or a "20 GB" entry stops at its
 *   header); GNU sparse entries are refused by the reader; entries are
 *   counted against max_entries (bounded time for 10^6 tiny files);
 * - modes are kept with their setuid/setgid bits, and security.capability
 *   and user.* xattrs are kept (no_new_privs and the capability drop make
 *   them inert in the sandbox); other xattrs (security.selinux, trusted.*,
 *   ACLs, overlay's own but opaque) are dropped and counted;
 * - owners are the image's ids plus uid_shift/gid_shift (an id at or past
 *   id_count, when set, is refused: the sandbox would not map it), or left
 *   as the unpacker's (keep_owner); mtimes are kept, directories' set last;
 * - in an unprivileged user's store (unprivileged) setuid/setgid bits of
 *   files and security.capability are dropped, and no trusted.* is written.
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "image/decompress.h"

#define UNPACK_DEFAULT_MAX_BYTES   (8ULL << 30)
#define UNPACK_DEFAULT_MAX_ENTRIES 500000ULL

struct unpack_limits {
        uint64_t max_bytes;   /* declared data bytes of this layer (0: UNPACK_DEFAULT_MAX_BYTES) */
        uint64_t max_entries; /* entries of this layer (0: UNPACK_DEFAULT_MAX_ENTRIES) */
        uint32_t uid_shift, gid_shift; /* added to every owner (0: none) */
        uint32_t id_count;             /* owners must be below it (0: any id) */
        /* An unprivileged user's store (docs/rootless.md, "Images"): no
         * trusted.* xattr (the opaque mark is user.overlay.opaque alone),
         * no security.capability, and no setuid or setgid bit on a file. */
        bool unprivileged;
        /* Owners are not set at all: every entry is the unpacker's own
         * (a user with no subordinate ids), whatever id the image gives. */
        bool keep_owner;
};

struct unpack_stats {
        uint64_t bytes, entries;
        uint64_t whiteouts, opaques;
        uint64_t skipped_devices, skipped_other; /* devices; aufs metadata */
        uint64_t dropped_xattrs;
        uint64_t setid_cleared; /* setuid/setgid bits taken off (unprivileged) */
        enum layer_compression compression;
};

/* Apply the layer read from fd (from where it is, to its tar end marker;
 * compressed or not as its first bytes say; media_type, when given, must
 * be a layer's) to dest_dirfd, an empty directory the caller made (an
 * O_PATH fd will do). The directory itself becomes the layer's root: owner
 * the shifted 0:0, mode 0755, unless the layer has a `./` entry. 0, or
 * -errno with err one line naming the entry ("layer: entry `a/../../x`:
 * ..."). On error the caller removes the directory; nothing outside it is
 * ever touched. st may be NULL; it is filled as far as the layer got. */
int unpack_layer(int fd, const char *media_type, int dest_dirfd, const struct unpack_limits *lim,
                 struct unpack_stats *st, psrun_error *err);
