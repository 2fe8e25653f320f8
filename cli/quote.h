/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Text the sandbox chose (file names, file contents) on its way to the
 * operator's terminal or a parser. A name may hold any byte but NUL: a
 * newline forges a line of a listing, ESC and BEL start terminal control
 * sequences (a title, the clipboard, a colour that hides the rest), a
 * carriage return overwrites what was printed, bidi controls reorder it,
 * bytes that are not UTF-8 are not text. None of them is written raw.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* s (len bytes) is well-formed UTF-8: no overlong form, no surrogate,
 * nothing past U+10FFFF. */
bool utf8_valid(const char *s, size_t len);

/* A name as a shell reads it back (GNU ls's shell-escape style): bare when
 * it is only letters, digits and ._-+,:@%/= (or printable non-ASCII);
 * 'in single quotes' when it holds other printable characters (a space, a
 * quote as '\'', a backslash); $'with escapes' (\n, \r, \t, \033, \377 for
 * a byte that is not UTF-8) when it holds anything that is not printable
 * text. The result is one line whatever the name. */
void quote_name(FILE *f, const char *name);

/* A JSON member for a name that round-trips every byte: "key":"..." (a
 * JSON string) when the name is valid UTF-8, else "key_b64":"..." (the
 * bytes in standard base64, RFC 4648 with padding) and no "key". */
void quote_json_name(FILE *f, const char *key, const char *name);

/*
 * File contents to a terminal: every byte that is not printable text is
 * shown as \xHH, but newline and tab. Writes what of p[0..len) it can and
 * returns how many bytes it consumed: a UTF-8 sequence cut by the end of
 * the buffer is left for the next call, unless final.
 */
size_t quote_text(FILE *f, const char *p, size_t len, bool final);
