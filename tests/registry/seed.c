/* SPDX-License-Identifier: MIT */
/*
 * `imgtool seed KEY=VALUE... -- ARGV...` (tests/registry/seed-dict.sh):
 * the seed's sandbox dict from C, through the public API alone
 * (include/psrun.h): a policy of the dict's keys, a session tied to this
 * process (the dict's `persistent: False`), one exec of ARGV; its stdout
 * and stderr passed on, its exit code returned; an error is one line on
 * stderr and exit 125.
 */
#include <psrun.h>
#include <stdio.h>
#include <string.h>

#include "seed.h"

int seed_main(int argc, char **argv)
{
        psrun_error err = {0};
        psrun_policy *p = psrun_policy_new();
        if (!p)
                return 125;
        int i = 0, r = 0;
        for (; i < argc && strcmp(argv[i], "--") != 0 && r >= 0; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq) {
                        fprintf(stderr, "seed: `%s`: not KEY=VALUE\n", argv[i]);
                        psrun_policy_free(p);
                        return 125;
                }
                *eq = '\0';
                r = psrun_policy_set(p, argv[i], eq + 1, &err);
        }
        if (r < 0 || i + 1 >= argc) {
                fprintf(stderr, "seed: %s\n", r < 0 ? err.msg : "no command after --");
                psrun_policy_free(p);
                return 125;
        }
        psrun_session *s = NULL;
        psrun_session_options so = {.tie_to_caller = 1};
        r = psrun_session_create(p, &so, &s, &err);
        psrun_policy_free(p);
        if (r < 0) {
                fprintf(stderr, "seed: %s\n", err.msg);
                return 125;
        }
        psrun_exec_result res = {0};
        r = psrun_exec(s, argv + i + 1, NULL, &res, &err);
        int code = r < 0 ? 125 : res.result.exit_code;
        if (r < 0)
                fprintf(stderr, "seed: %s\n", err.msg);
        else {
                fwrite(res.stdout_data, 1, res.stdout_len, stdout);
                fwrite(res.stderr_data, 1, res.stderr_len, stderr);
        }
        psrun_exec_result_free(&res);
        if (psrun_session_destroy(s, &err) < 0) {
                fprintf(stderr, "seed: destroy: %s\n", err.msg);
                code = 125;
        }
        return code;
}
