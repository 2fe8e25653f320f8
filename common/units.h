/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Numbers with units, as the policy and the command line write them: sizes,
 * durations, CPU counts, and the way back for messages. Pure, independent
 * of the locale.
 */

#include <stddef.h>
#include <stdint.h>

/* "512M", "1.5G", "4096", "1k" (binary units, case-insensitive, optional
 * trailing "B"/"iB"). Returns 0 or -EINVAL / -ERANGE. */
int parse_size(const char *s, uint64_t *ret);
/* "300", "2.5", "300s", "5m", "1h", "500ms" -> milliseconds. */
int parse_duration_ms(const char *s, uint64_t *ret);
/* "2", "0.5", ".5" -> CPUs. Returns 0 or -EINVAL / -ERANGE. */
int parse_cpus(const char *s, double *ret);
/* Decimal digits only. Returns 0 or -EINVAL / -ERANGE. */
int parse_uint64(const char *s, uint64_t *ret);
/* The inverse, for messages: 4194304 -> "4M", 1000 -> "1000"; 300000 -> "5m",
 * 1500 -> "1500ms". Output is cut to size. */
void format_size(uint64_t bytes, char *buf, size_t size);
void format_duration_ms(uint64_t ms, char *buf, size_t size);
void format_uint64(uint64_t v, char *buf, size_t size);
/* 1.5 -> "1.5", 2 -> "2": what parse_cpus reads back as the same double. */
void format_cpus(double cpus, char *buf, size_t size);
