/* SPDX-License-Identifier: MIT */
/* The default profile embedded at build time is exactly what libseccomp makes
 * of the profile table now: the embedded copy can't drift from the table. */
#include <criterion/criterion.h>
#include <string.h>

#include "policy/seccomp.h"

Test(seccomp_embedded, equals_a_fresh_compile)
{
        struct seccomp_program fresh = {0}, embedded = {0};
        psrun_error err = {0};
        cr_assert_eq(seccomp_compile(seccomp_default_profile(), &fresh, &err), 0, "%s", err.msg);
        cr_assert_eq(seccomp_default_program(&embedded), 0);
        cr_assert_eq(embedded.len, fresh.len);
        cr_assert_eq(embedded.flags, fresh.flags);
        cr_assert_eq(memcmp(embedded.insns, fresh.insns, fresh.len * sizeof(*fresh.insns)), 0,
                     "the embedded default seccomp program is stale: rebuild");
        seccomp_program_free(&fresh);
        seccomp_program_free(&embedded);
}
