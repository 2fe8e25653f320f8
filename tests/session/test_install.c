/* SPDX-License-Identifier: MIT */
/*
 * psrun_install_package's refusals, through the public API: every one is
 * decided before any network is built or anything runs, so this tier needs
 * no fake internet (tests/net/session.sh installs for real, from a fake
 * index, and has the approver command's cases).
 */
#include <fcntl.h>

#include "runtime/session/package.h"
#include "runtime/session/session.h"
#include "session/common.h"

struct asked {
        int calls;
        int answer;
        char json[512];
        const char *reason;
};

static int approver(void *userdata, psrun_approval *a)
{
        struct asked *q = userdata;
        q->calls++;
        snprintf(q->json, sizeof(q->json), "%s", a->json);
        cr_expect_str_eq(a->action, "install");
        cr_expect_str_eq(a->session, "t");
        if (q->reason)
                snprintf(a->reason, sizeof(a->reason), "%s", q->reason);
        return q->answer;
}

static int install(struct sess *t, const char *tool, const char *pkg, psrun_exec_result *res,
                   psrun_error *err)
{
        psrun_install_options o = {.tool = tool};
        return psrun_install_package(t->s, pkg, &o, res, err);
}

Test(install, bad_specs_and_tools_are_refused_before_anything_runs, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        struct asked q = {.answer = 1};
        psrun_session_set_approver(t.s, approver, &q);
        /* Archives the sandbox planted, which pip and npm would take from
         * disk for what looks like a name. */
        psrun_error werr = {0};
        cr_assert_eq(
                psrun_write_file(t.s, "/workspace/x-1.0-py3-none-any.whl", "PK", 2, 0644, &werr), 0,
                "%s", werr.msg);
        cr_assert_eq(psrun_write_file(t.s, "/workspace/x.tgz", "\x1f\x8b", 2, 0644, &werr), 0, "%s",
                     werr.msg);
        static const char *const bad[] = {"--index-url=http://evil.test/", "-e.",  "x; id",
                                          "http://evil.test/x.whl",        "../x", "a b",
                                          "x-1.0-py3-none-any.whl",        "x.tgz"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                psrun_exec_result res;
                psrun_error err = {0};
                cr_expect_eq(install(&t, NULL, bad[i], &res, &err), -EINVAL, "`%s`", bad[i]);
                cr_expect(strncmp(err.msg, "package: ", 9) == 0, "%s", err.msg);
                cr_expect_str_eq(res.result.reason, "setup_error");
                cr_expect_eq(res.result.exit_code, 125);
                cr_expect(strstr(res.result.error, "package: "), "%s", res.result.error);
                psrun_exec_result_free(&res);
        }
        psrun_exec_result res;
        psrun_error err = {0};
        cr_expect_eq(install(&t, "cargo", "serde", &res, &err), -EINVAL);
        cr_expect(strncmp(err.msg, "tool: ", 6) == 0, "%s", err.msg);
        psrun_exec_result_free(&res);
        cr_expect_eq(install(&t, "python", NULL, &res, &err), -EINVAL);
        psrun_exec_result_free(&res);
        cr_expect_eq(q.calls, 0, "no one is asked about a bad spec");
        sess_end(&t);
}

Test(install, no_network_at_all_says_why, .timeout = 30)
{
        struct sess t;
        sess_start(&t,
                   (const char *const[]){"install_network", "none", "approve", "[install]", NULL});
        struct asked q = {.answer = 1};
        psrun_session_set_approver(t.s, approver, &q);
        psrun_exec_result res;
        psrun_error err = {0};
        cr_expect_eq(install(&t, NULL, "requests", &res, &err), -ENETUNREACH);
        cr_expect(strstr(err.msg, "cannot be installed: the session has no network"), "%s",
                  err.msg);
        cr_expect(strstr(res.result.error, "install_network"), "%s", res.result.error);
        psrun_exec_result_free(&res);
        cr_expect_eq(q.calls, 0, "no one is asked to approve what cannot work");
        sess_end(&t);
}

Test(install, a_gated_install_is_denied_without_an_approver_or_a_yes, .timeout = 30)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"approve", "[install]", NULL});
        psrun_exec_result res;
        psrun_error err = {0};
        /* No approver: denied, never silently allowed. */
        cr_expect_eq(install(&t, NULL, "psfake==1.0", &res, &err), -EPERM);
        cr_expect(strstr(err.msg, "install: `psfake==1.0` (python) was denied: the policy gates "
                                  "installs (`approve: [install]`) and no approver is set"),
                  "%s", err.msg);
        cr_expect_str_eq(res.result.reason, "setup_error");
        psrun_exec_result_free(&res);

        struct asked q = {.answer = 0, .reason = "not now\nplease"};
        psrun_session_set_approver(t.s, approver, &q);
        cr_expect_eq(install(&t, "node", "@scope/pkg@^1", &res, &err), -EPERM);
        cr_expect_eq(q.calls, 1);
        /* Exactly what will be fetched, and from where: the package, the
         * index (npm's default here) and the installer's command line. */
        cr_expect_str_eq(q.json, "{\"action\": \"install\", \"session\": \"t\", \"tool\": "
                                 "\"node\", \"package\": \"@scope/pkg@^1\", \"index\": "
                                 "\"https://registry.npmjs.org/\", \"command\": [\"npm\", "
                                 "\"install\", \"--no-fund\", \"--no-audit\", "
                                 "\"--no-update-notifier\", \"--cache\", "
                                 "\"/tmp/.psrun-npm-cache\", \"--\", \"@scope/pkg@^1\"]}");
        cr_expect(strstr(err.msg, "install: `@scope/pkg@^1` (node) was denied by the approver: "
                                  "not now please"),
                  "%s", err.msg);
        cr_expect_null(strchr(err.msg, '\n'));
        psrun_exec_result_free(&res);

        /* A handle opened elsewhere has no approver: denied. */
        psrun_session *other;
        cr_assert_eq(psrun_session_open("t", NULL, &other, &err), 0, "%s", err.msg);
        cr_expect_eq(psrun_install_package(other, "psfake", NULL, &res, &err), -EPERM);
        cr_expect(strstr(err.msg, "no approver is set"), "%s", err.msg);
        psrun_exec_result_free(&res);
        psrun_session_close(other);

        /* Nothing ran: the workspace has no trace of an installer. */
        psrun_file_entry *e = NULL;
        size_t n = 0;
        cr_expect_eq(psrun_list_files(t.s, "/workspace", 1, &e, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0, "the workspace has %zu entries", n);
        psrun_file_entries_free(e, n);
        sess_end(&t);
}

/* The supervisor holds the line too: a raw request that does not claim
 * the approver's yes for a gated action is refused, and nothing runs,
 * whatever the client; and the CLI without --approve-cmd is denied. */
Test(install, the_supervisor_refuses_an_unapproved_gated_install, .timeout = 30)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"approve", "[install]", NULL});
        char dir[256];
        snprintf(dir, sizeof(dir), "%s/t", t.root);
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[3] = {null_fd, null_fd, null_fd};
        struct sess_req req = {.op = SESS_OP_INSTALL, .tool = INSTALL_TOOL_PYTHON};
        static struct sess_reply rep;
        psrun_error err = {0};
        int r = session_call(dir, &req, "psfake", 7, fds, 3, &rep, NULL, NULL, &err);
        cr_expect_eq(r, -EPERM, "%s", err.msg);
        cr_expect(strstr(err.msg, "needs approval"), "%s", err.msg);
        /* A spec the client did not check is checked here too. */
        req.flags = SESS_REQ_APPROVED;
        r = session_call(dir, &req, "-e.", 4, fds, 3, &rep, NULL, NULL, &err);
        cr_expect_eq(r, -EINVAL, "%s", err.msg);
        cr_expect(strncmp(err.msg, "package: ", 9) == 0, "%s", err.msg);
        req.tool = 7;
        r = session_call(dir, &req, "psfake", 7, fds, 3, &rep, NULL, NULL, &err);
        cr_expect_eq(r, -EINVAL, "%s", err.msg);
        r = session_call(dir, &req, "psfake", 6, fds, 3, &rep, NULL, NULL, &err);
        cr_expect_lt(r, 0, "a spec without its NUL");
        close(null_fd);

        struct test_run run;
        test_run_psrun(&run, (const char *const[]){"session", "install", "t", "psfake", NULL});
        cr_expect_eq(run.status, 125, "%s", run.err);
        cr_expect(strstr(run.err, "psrun: session install: install: `psfake` (python) was denied"),
                  "%s", run.err);
        test_run_free(&run);
        test_run_psrun(&run, (const char *const[]){"session", "install", "--tool", "rust", "t",
                                                   "serde", NULL});
        cr_expect_eq(run.status, 125);
        cr_expect(strstr(run.err, "tool: `rust` is not an installer"), "%s", run.err);
        test_run_free(&run);
        psrun_file_entry *e = NULL;
        size_t n = 0;
        cr_expect_eq(psrun_list_files(t.s, "/workspace", 1, &e, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 0, "the workspace has %zu entries", n);
        psrun_file_entries_free(e, n);
        sess_end(&t);
}
