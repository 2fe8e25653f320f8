/* SPDX-License-Identifier: MIT */
/* Background processes in a session (docs/sessions.md). */
#include <pthread.h>

#include "session/common.h"

static uint32_t bg_start(struct sess *t, const char *line)
{
        char *argv[] = {"/bin/sh", "-c", (char *) line, NULL};
        uint32_t id = 0;
        psrun_error err = {0};
        cr_assert_eq(psrun_exec_background(t->s, argv, NULL, &id, &err), 0, "`%s`: %s", line,
                     err.msg);
        cr_assert_gt(id, 0);
        return id;
}

/* Output of stream from offset until eof or want bytes are there. */
static size_t bg_read_all(struct sess *t, uint32_t id, int stream, char *buf, size_t size)
{
        uint64_t off = 0;
        size_t n = 0;
        psrun_error err = {0};
        for (int round = 0; round < 400 && n < size; round++) {
                psrun_process_chunk c;
                cr_assert_eq(
                        psrun_process_output(t->s, id, stream, off, buf + n, size - n, &c, &err), 0,
                        "%s", err.msg);
                n += c.len;
                off = c.offset + c.len;
                if (c.eof)
                        break;
                if (c.len == 0)
                        usleep(20000);
        }
        buf[n < size ? n : size - 1] = '\0';
        return n;
}

Test(background, a_server_reached_from_the_next_exec_then_killed, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        sess_sh_ok(&t, "echo hello-from-bg > /workspace/index.html");
        uint32_t id = bg_start(&t, "exec busybox httpd -f -p 127.0.0.1:8080 -h /workspace");
        /* The server is up once a request gets through; a foreground exec
         * shares its network namespace. */
        psrun_exec_result res = sess_sh(&t,
                                        "for i in $(seq 50); do busybox wget -qO- "
                                        "http://127.0.0.1:8080/index.html && exit 0; "
                                        "sleep 0.1; done; exit 1",
                                        NULL);
        cr_expect_eq(res.result.exit_code, 0, "wget: %s", res.stderr_data);
        cr_expect(res.stdout_data && strstr(res.stdout_data, "hello-from-bg"), "got `%s`",
                  res.stdout_data);
        psrun_exec_result_free(&res);

        psrun_process_info *list = NULL;
        size_t n = 0;
        psrun_error err = {0};
        cr_assert_eq(psrun_process_list(t.s, &list, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 1);
        cr_expect_eq(list[0].id, id);
        cr_expect(list[0].running);
        cr_expect(strstr(list[0].command, "httpd"), "command `%s`", list[0].command);
        free(list);

        cr_assert_eq(psrun_process_signal(t.s, id, SIGTERM, &err), 0, "%s", err.msg);
        psrun_exec_result wr;
        cr_assert_eq(psrun_process_wait(t.s, id, 10000, &wr, &err), 0, "%s", err.msg);
        cr_expect_eq(wr.result.signal, SIGTERM);
        psrun_exec_result_free(&wr);
        /* Nothing left: no httpd in the sandbox. */
        res = sess_sh(&t, "! busybox pgrep httpd", NULL);
        cr_expect_eq(res.result.exit_code, 0, "httpd still there: %s", res.stdout_data);
        psrun_exec_result_free(&res);
        cr_expect_eq(psrun_process_list(t.s, &list, &n, &err), 0, "%s", err.msg);
        cr_expect_eq(n, 1);
        cr_expect(n == 1 && !list[0].running);
        free(list);
        sess_end(&t);
}

Test(background, output_by_offset_and_a_flood_stays_bounded, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"output_limit", "64K", NULL});
        uint32_t id = bg_start(&t, "echo first; echo err >&2; head -c 50000000 /dev/zero; "
                                   "echo; echo last");
        psrun_exec_result wr;
        psrun_error err = {0};
        cr_assert_eq(psrun_process_wait(t.s, id, 30000, &wr, &err), 0, "%s", err.msg);
        cr_expect_eq(wr.result.exit_code, 0);
        psrun_exec_result_free(&wr);
        char buf[256];
        psrun_process_chunk c;
        cr_assert_eq(psrun_process_output(t.s, id, 1, 0, buf, 6, &c, &err), 0, "%s", err.msg);
        cr_expect_eq(c.offset, 0);
        cr_expect_eq(c.len, 6);
        cr_expect(memcmp(buf, "first\n", 6) == 0);
        cr_expect_eq(c.total, 6 + 50000000 + 6);
        /* The middle was dropped: asking for it gives the ring's first byte. */
        cr_assert_eq(psrun_process_output(t.s, id, 1, 1000000, buf, sizeof(buf), &c, &err), 0, "%s",
                     err.msg);
        cr_expect_eq(c.offset, c.total - 32 * 1024);
        cr_assert_eq(psrun_process_output(t.s, id, 1, c.total - 5, buf, sizeof(buf), &c, &err), 0,
                     "%s", err.msg);
        cr_expect_eq(c.len, 5);
        cr_expect(memcmp(buf, "last\n", 5) == 0);
        cr_expect(c.eof);
        size_t n = bg_read_all(&t, id, 2, buf, sizeof(buf));
        cr_expect_eq(n, 4);
        cr_expect_str_eq(buf, "err\n");
        sess_end(&t);
}

Test(background, daemonized_children_die_with_their_process, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        /* The child outlives its parent, which closed stdout early. */
        uint32_t id = bg_start(&t, "exec >&-; (sleep 300 &) ; sleep 0.3");
        psrun_exec_result wr;
        psrun_error err = {0};
        cr_assert_eq(psrun_process_wait(t.s, id, 20000, &wr, &err), 0, "%s", err.msg);
        cr_expect_eq(wr.result.exit_code, 0);
        psrun_exec_result_free(&wr);
        psrun_exec_result res = sess_sh(&t, "! busybox pgrep -f 'sleep 300'", NULL);
        cr_expect_eq(res.result.exit_code, 0, "the daemon survived: %s", res.stdout_data);
        psrun_exec_result_free(&res);
        char buf[16];
        cr_expect_eq(bg_read_all(&t, id, 1, buf, sizeof(buf)), 0);
        sess_end(&t);
}

Test(background, limit_unknown_ids_and_ended_ones, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"background_limit", "2", NULL});
        uint32_t a = bg_start(&t, "sleep 60");
        bg_start(&t, "sleep 60");
        char *argv[] = {"sleep", "60", NULL};
        uint32_t id = 0;
        psrun_error err = {0};
        cr_expect_eq(psrun_exec_background(t.s, argv, NULL, &id, &err), -EAGAIN);
        cr_expect(strstr(err.msg, "background_limit: 2"), "%s", err.msg);
        /* Wait times out, the process runs on. */
        psrun_exec_result wr;
        uint64_t t0 = monotonic_ms();
        cr_expect_eq(psrun_process_wait(t.s, a, 200, &wr, &err), -ETIMEDOUT);
        cr_expect_lt(monotonic_ms() - t0, 5000);
        cr_expect(strstr(err.msg, "still runs"), "%s", err.msg);
        cr_expect_eq(psrun_process_signal(t.s, 999, SIGTERM, &err), -ENOENT);
        cr_expect(strstr(err.msg, "no background process 999"), "%s", err.msg);
        cr_expect_eq(psrun_process_wait(t.s, 999, 100, &wr, &err), -ENOENT);
        char buf[8];
        psrun_process_chunk c;
        cr_expect_eq(psrun_process_output(t.s, a, 3, 0, buf, sizeof(buf), &c, &err), -EINVAL);
        cr_expect(strstr(err.msg, "stream"), "%s", err.msg);
        cr_assert_eq(psrun_process_signal(t.s, a, SIGKILL, &err), 0, "%s", err.msg);
        cr_assert_eq(psrun_process_wait(t.s, a, 10000, &wr, &err), 0, "%s", err.msg);
        cr_expect_eq(wr.result.signal, SIGKILL);
        psrun_exec_result_free(&wr);
        cr_expect_eq(psrun_process_signal(t.s, a, SIGTERM, &err), -ESRCH);
        cr_expect(strstr(err.msg, "already ended"), "%s", err.msg);
        /* Room again. */
        bg_start(&t, "sleep 60");
        sess_end(&t); /* destroy with two running: nothing left */
}

Test(background, none_allowed_and_lifetime_ends_them, .timeout = 60)
{
        struct sess t;
        sess_start(&t, (const char *const[]){"background_limit", "0", NULL});
        char *argv[] = {"true", NULL};
        uint32_t id = 0;
        psrun_error err = {0};
        cr_expect_eq(psrun_exec_background(t.s, argv, NULL, &id, &err), -EPERM);
        cr_expect(strstr(err.msg, "background_limit: 0"), "%s", err.msg);
        sess_end(&t);

        sess_start(&t, (const char *const[]){"lifetime", "1500ms", NULL});
        id = bg_start(&t, "sleep 60");
        psrun_exec_result wr;
        uint64_t t0 = monotonic_ms();
        int r = psrun_process_wait(t.s, id, 20000, &wr, &err);
        cr_expect_lt(monotonic_ms() - t0, 10000);
        /* Its result, or the session's end first: either way it is over. */
        if (r == 0) {
                cr_expect_eq(wr.result.signal, SIGKILL);
                psrun_exec_result_free(&wr);
        } else {
                cr_expect_eq(r, -ESRCH, "%s", err.msg);
        }
        psrun_session_close(t.s);
        t.s = NULL;
        sess_end(&t);
}

Test(background, the_cli_detach_ps_logs_kill_wait, .timeout = 60)
{
        struct sess t;
        sess_start(&t, NULL);
        struct test_run r;
        test_run_psrun(&r, (const char *const[]){"session", "exec", "--detach", "t", "--", "sh",
                                                 "-c", "echo out; echo err >&2; sleep 60", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "1\n");
        test_run_free(&r);
        /* Its output so far, once it is there. */
        for (int i = 0; i < 100; i++) {
                test_run_psrun(&r, (const char *const[]){"session", "logs", "t", "1", NULL});
                if (r.status != 0 || strcmp(r.out, "out\n") == 0)
                        break;
                test_run_free(&r);
                usleep(20000);
        }
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "out\n");
        cr_expect(strstr(r.err, "next offset 4"), "%s", r.err);
        test_run_free(&r);
        test_run_psrun(&r, (const char *const[]){"session", "logs", "--stream", "stderr",
                                                 "--offset", "1", "t", "1", NULL});
        cr_expect_str_eq(r.out, "rr\n");
        test_run_free(&r);
        test_run_psrun(&r, (const char *const[]){"session", "ps", "--json", "t", NULL});
        cr_expect(strstr(r.out, "\"id\":1,") && strstr(r.out, "\"running\":true"), "%s", r.out);
        test_run_free(&r);
        test_run_psrun(
                &r, (const char *const[]){"session", "wait", "--timeout", "100ms", "t", "1", NULL});
        cr_expect_eq(r.status, 125);
        cr_expect(strstr(r.err, "still runs"), "%s", r.err);
        test_run_free(&r);
        test_run_psrun(&r, (const char *const[]){"session", "kill", "-s", "KILL", "t", "1", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        test_run_free(&r);
        test_run_psrun(&r, (const char *const[]){"session", "wait", "t", "1", NULL});
        cr_expect_eq(r.status, 137, "%s", r.err);
        test_run_free(&r);
        /* Bad input: one line naming what is wrong, exit 125. */
        static const char *const bad[][8] = {
                {"session", "kill", "-s", "FOO", "t", "1", NULL},
                {"session", "kill", "t", "1", NULL},
                {"session", "logs", "t", "abc", NULL},
                {"session", "logs", "--stream", "both", "t", "1", NULL},
                {"session", "wait", "t", "9", NULL},
        };
        static const char *const field[] = {"--signal", "already ended", "PID", "--stream",
                                            "no background process 9"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                test_run_psrun(&r, bad[i]);
                cr_expect_eq(r.status, 125, "%s", r.err);
                cr_expect(strstr(r.err, field[i]), "`%s` not in: %s", field[i], r.err);
                const char *nl = strchr(r.err, '\n');
                cr_expect(nl && nl[1] == '\0', "not one line: %s", r.err);
                test_run_free(&r);
        }
        sess_end(&t);
}

struct waiter {
        struct sess *t;
        uint32_t id;
        int r;
        int exit_code;
        char msg[256];
};

static void *wait_one(void *arg)
{
        struct waiter *w = arg;
        psrun_exec_result wr;
        psrun_error err = {0};
        w->r = psrun_process_wait(w->t->s, w->id, 20000, &wr, &err);
        if (w->r == 0) {
                w->exit_code = wr.result.exit_code;
                psrun_exec_result_free(&wr);
        }
        snprintf(w->msg, sizeof(w->msg), "%s", err.msg);
        return NULL;
}

Test(background, several_waits_at_once_all_get_the_result, .timeout = 60)
{
        /* Four callers (the CLI, Python, MCP…) wait on one process at once:
         * each gets its result; a newer wait never pushes an older one out.
         * A fifth is refused with one line, not queued silently. */
        struct sess t;
        sess_start(&t, NULL);
        uint32_t id = bg_start(&t, "sleep 1; exit 7");
        struct waiter w[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
                w[i] = (struct waiter){.t = &t, .id = id, .r = -1};
                cr_assert_eq(pthread_create(&th[i], NULL, wait_one, &w[i]), 0);
        }
        usleep(300000);
        psrun_exec_result wr;
        psrun_error err = {0};
        cr_expect_eq(psrun_process_wait(t.s, id, 5000, &wr, &err), -EBUSY);
        cr_expect(strstr(err.msg, "4 waits on background process"), "%s", err.msg);
        for (int i = 0; i < 4; i++) {
                pthread_join(th[i], NULL);
                cr_expect_eq(w[i].r, 0, "waiter %d: %s", i, w[i].msg);
                cr_expect_eq(w[i].exit_code, 7, "waiter %d", i);
        }
        sess_end(&t);
}
