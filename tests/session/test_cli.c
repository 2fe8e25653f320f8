/* SPDX-License-Identifier: MIT */
/* `psrun session ...` end to end: output, exit status, one-line errors. */
#include <dlfcn.h>

#include "session/common.h"

/* psrun with argv, stdin from `input` (may be NULL). */
static void cli(struct test_run *r, const char *const *argv)
{
        test_run_psrun(r, argv);
}

static void expect_one_line_error(const struct test_run *r, const char *field)
{
        cr_expect_eq(r->status, 125, "exit %d, stderr: %s", r->status, r->err);
        cr_expect(strstr(r->err, field), "error does not name `%s`: %s", field, r->err);
        const char *nl = strchr(r->err, '\n');
        cr_expect(nl && nl[1] == '\0', "not one line: %s", r->err);
}

Test(session_cli, create_exec_files_destroy, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        struct test_run r;
        cli(&r, (const char *const[]){"session", "create", "--name", "c1", "-o",
                                      "memory_limit=128M", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "c1\n");
        test_run_free(&r);

        cli(&r,
            (const char *const[]){"session", "exec", "c1", "--env", "A=b", "--cwd", "/tmp", "--",
                                  "sh", "-c", "echo $A $(pwd); echo err >&2; exit 7", NULL});
        cr_expect_eq(r.status, 7, "%s", r.err);
        cr_expect_str_eq(r.out, "b /tmp\n");
        cr_expect_str_eq(r.err, "err\n");
        test_run_free(&r);

        cli(&r, (const char *const[]){"session", "exec", "c1", "--json", "--timeout", "200ms", "--",
                                      "sleep", "5", NULL});
        cr_expect_eq(r.status, 137, "%s", r.err);
        cr_expect(strstr(r.err, "\"reason\":\"timeout\""), "%s", r.err);
        cr_expect(strstr(r.err, "\"violations\":[{\"layer\":\"limits\",\"what\":\"timeout 200ms "
                                "reached\",\"count\":1}],\"violations_more\":0"),
                  "%s", r.err);
        test_run_free(&r);

        cli(&r, (const char *const[]){"session", "ls", "c1", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "");
        test_run_free(&r);

        cli(&r, (const char *const[]){"session", "list", "--json", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "\"id\":\"c1\",\"alive\":true"), "%s", r.out);
        test_run_free(&r);

        cli(&r, (const char *const[]){"session", "destroy", "c1", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        test_run_free(&r);
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/c1", t.root);
        struct stat st;
        cr_expect(stat(dir, &st) < 0, "%s left", dir);
        sess_end(&t);
}

Test(session_cli, bad_input_is_one_line_and_exit_125, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        struct test_run r;
        static const struct {
                const char *argv[12];
                const char *field;
        } cases[] = {
                {{"session", "exec", "nope", "--", "true"}, "id"},
                {{"session", "exec", "../t", "--", "true"}, "id"},
                {{"session", "exec", "t", "--timeout", "soon", "--", "true"}, "--timeout"},
                {{"session", "exec", "t", "--cwd", "rel", "--", "true"}, "--cwd"},
                {{"session", "exec", "t", "--env", "NOEQ", "--", "true"}, "--env"},
                {{"session", "exec", "t", "--bogus", "--", "true"}, "--bogus"},
                {{"session", "exec", "t"}, "command"},
                {{"session", "read", "t", "/etc/passwd"}, "path"},
                {{"session", "read", "t", "missing"}, "path"},
                {{"session", "rm", "t", "/workspace"}, "path"},
                {{"session", "create", "-o", "memory_limit=lots"}, "memory_limit"},
                {{"session", "create", "--name", "t"}, "name"},
                {{"session", "frobnicate"}, "frobnicate"},
                {{"session"}, "COMMAND"},
                {{"session", "write", "t"}, "usage"},
                {{"session", "ls", "t", "/etc"}, "dir"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cli(&r, cases[i].argv);
                expect_one_line_error(&r, cases[i].field);
                test_run_free(&r);
        }
        /* Nothing changed: still one session, alive. */
        psrun_session_info *list;
        size_t n;
        psrun_error err = {0};
        cr_assert_eq(psrun_session_list(NULL, &list, &n, &err), 0);
        cr_expect_eq(n, 1);
        cr_expect(n == 1 && list[0].alive);
        free(list);
        sess_end(&t);
}

/* In a sanitizer build (SANITIZE=1), libpsrun.so executed as a session's
 * supervisor needs the ASan runtime loaded before it: this process's own,
 * as LD_PRELOAD (which the supervisor keeps). "" elsewhere. */
static const char *asan_runtime(void)
{
#if defined(__SANITIZE_ADDRESS__)
        Dl_info info;
        void *sym = dlsym(RTLD_DEFAULT, "__asan_init");
        if (sym && dladdr(sym, &info) && info.dli_fname && strstr(info.dli_fname, "libasan"))
                return info.dli_fname;
#endif
        return "";
}

/* docs/api.md's example, compiled from the document by `make tests` and
 * linked three ways: libpsrun.so, libpsrun.a, and `pkg-config --cflags
 * --libs psrun` against a staged `make install`. */
Test(session_cli, the_api_example_runs, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        const char *b = getenv("PSRUN_BUILD");
        static const char *const variants[] = {"", "-static", "-pkgconfig"};
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/examples/api-example%s", b && *b ? b : "build",
                         variants[i]);
                /* `make tests` builds them; the kernel-matrix VM carries test
                 * binaries only. */
                if (access(path, X_OK) != 0)
                        cr_skip_test("%s is not built here (`make tests` builds it)", path);
                char cmd[4200];
                const char *asan = i == 1 ? "" : asan_runtime();
                snprintf(cmd, sizeof(cmd), "%s%s %s > /dev/null 2>&1", *asan ? "LD_PRELOAD=" : "",
                         asan, path);
                int st = system(cmd);
                cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed: %d", path, st);
        }
        /* Each destroyed its own session: only ours is left. */
        psrun_session_info *list;
        size_t n;
        psrun_error err = {0};
        cr_assert_eq(psrun_session_list(NULL, &list, &n, &err), 0);
        cr_expect_eq(n, 1);
        free(list);
        sess_end(&t);
}
