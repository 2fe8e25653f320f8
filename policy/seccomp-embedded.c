/* SPDX-License-Identifier: MIT */
/* The default profile as compiled at build time (see tools/gen-seccomp-bpf.c;
 * the tool itself links seccomp.c, so this lives apart). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/seccomp.h"

int seccomp_default_program(struct seccomp_program *out)
{
        out->insns = malloc(seccomp_default_bpf_len * sizeof(*out->insns));
        if (!out->insns)
                return -ENOMEM;
        memcpy(out->insns, seccomp_default_bpf, seccomp_default_bpf_len * sizeof(*out->insns));
        out->len = seccomp_default_bpf_len;
        out->flags = seccomp_default_bpf_flags;
        return 0;
}
