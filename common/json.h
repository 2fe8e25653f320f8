/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Write s as a JSON string literal (with quotes), escaping control
 * characters, quotes, backslashes and invalid UTF-8 bytes (as \u00XX). */
void json_write_string(FILE *f, const char *s);
/* The same for len bytes that may hold NULs (written as \u0000). */
void json_write_bytes(FILE *f, const char *s, size_t len);
