/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

/* Write s as a JSON string literal (with quotes), escaping control
 * characters, quotes, backslashes and invalid UTF-8 bytes (as \u00XX). */
void json_write_string(FILE *f, const char *s);
