/* SPDX-License-Identifier: MIT */
/*
 * "did you mean ...?" for unknown keys, in order of preference:
 *   1. the nearest candidate within edit distance 2 (`netwrok`, `mounts_`);
 *   2. the one candidate that the word begins (`mem` -> `memory_limit`);
 *   3. the longest candidate that begins the word (`network_mode` -> `network`,
 *      `memory_limit_mb` -> `memory_limit`).
 * Case and '-' vs '_' are ignored, so `Memory-Limit` finds `memory_limit`.
 */
#include "policy/policy.h"

#include <string.h>

#define SUGGEST_MAX_DISTANCE 2
#define SUGGEST_MIN_PREFIX   2
/* A candidate shorter than this is too weak a hint as the start of a word. */
#define SUGGEST_MIN_STEM 3
/* Longer words are never within distance 2 of a key; this also bounds the row. */
#define SUGGEST_MAX_LEN 64

static char fold(char c)
{
        if (c >= 'A' && c <= 'Z')
                return (char) (c - 'A' + 'a');
        return c == '-' ? '_' : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
        size_t m = a < b ? a : b;
        return m < c ? m : c;
}

/* Levenshtein distance with one row; both strings at most SUGGEST_MAX_LEN. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
        size_t row[SUGGEST_MAX_LEN + 1];

        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j];
                        size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
                        row[j] = min3(row[j] + 1, row[j - 1] + 1, diag + cost);
                        diag = up;
                }
        }
        return row[lb];
}

/* Whether the first len characters of a and b agree (both at least len long). */
static bool same_start(const char *a, const char *b, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (a[i] == '\0' || b[i] == '\0' || fold(a[i]) != fold(b[i]))
                        return false;
        return true;
}

const char *policy_suggest_from(const char *word, const char *const *candidates, size_t n)
{
        size_t len = word ? strlen(word) : 0;
        const char *best = NULL, *prefixed = NULL, *stem = NULL;
        size_t best_distance = SUGGEST_MAX_DISTANCE + 1, n_prefixed = 0, stem_len = 0;

        if (len == 0 || len > SUGGEST_MAX_LEN)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                size_t clen = strlen(candidates[i]);
                if (clen > SUGGEST_MAX_LEN)
                        continue;
                size_t d = edit_distance(word, len, candidates[i], clen);
                if (d < best_distance) {
                        best_distance = d;
                        best = candidates[i];
                }
                if (len >= SUGGEST_MIN_PREFIX && clen > len &&
                    same_start(word, candidates[i], len)) {
                        prefixed = candidates[i];
                        n_prefixed++;
                }
                if (clen >= SUGGEST_MIN_STEM && clen < len && clen > stem_len &&
                    same_start(word, candidates[i], clen)) {
                        stem = candidates[i];
                        stem_len = clen;
                }
        }
        if (best)
                return best;
        if (n_prefixed == 1)
                return prefixed;
        return stem;
}
