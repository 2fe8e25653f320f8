/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * `psrun features` and `psrun spec`: two JSON documents made from psrun's
 * own tables, so what they claim is what the config.json parser accepts.
 * Library code: nothing is printed except to the FILE given.
 */

#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"

/* The lowest runtime-spec version psrun reads (features' ociVersionMin). */
#define OCI_FEATURES_VERSION_MIN "1.0.0"

/* The features document (runtime-spec features.md), laid out as
 * `runc features` prints it (4-space indent), to f. */
int oci_features_print(FILE *f, psrun_error *err);

/* A default config.json for a bundle with ./rootfs, laid out as `runc spec`
 * writes it (tab indent), to f: runc's default spec, hostname "psrun".
 * rootless: as `runc spec --rootless`: a user namespace mapping the current
 * euid/egid to 0 (size 1) instead of a network namespace, /sys bound from
 * the host read-only instead of a new sysfs, no uid=/gid= mount options and
 * no linux.resources. */
int oci_spec_print(FILE *f, bool rootless, psrun_error *err);
