/* SPDX-License-Identifier: MIT */
/*
 * The control protocol's version (runtime/session/session.h): a client and a
 * supervisor of different psrun builds say so in one line naming both
 * versions, instead of misreading each other's structs; destroy still
 * ends such a session.
 */
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/cleanup.h"
#include "runtime/session/session.h"
#include "session/common.h"

/* What the fake supervisor answers every request with. */
enum fake_answer {
        FAKE_NEWER,       /* a header of the next version, alone */
        FAKE_UNVERSIONED, /* protocol 1: a reply that begins with kind */
};

/*
 * A supervisor of another build, as far as a client can tell: a process
 * holding <root>/<id>/lock, its pid in info, answering on control; SIGTERM
 * ends it (and frees the lock). Returns its pid.
 */
static pid_t fake_supervisor(const char *root, const char *id, enum fake_answer answer)
{
        char dir[256], path[300];
        snprintf(dir, sizeof(dir), "%s/%s", root, id);
        cr_assert_eq(mkdir(dir, 0700), 0);
        int ready[2];
        cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(ready[0]);
                snprintf(path, sizeof(path), "%s/lock", dir);
                int lock = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
                if (lock < 0 || flock(lock, LOCK_EX) < 0)
                        _exit(1);
                snprintf(path, sizeof(path), "%s/info", dir);
                FILE *f = fopen(path, "we");
                if (!f)
                        _exit(1);
                fprintf(f, "pid %d\n", (int) getpid());
                fclose(f);
                struct sockaddr_un sa = {.sun_family = AF_UNIX};
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control", dir);
                int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
                if (l < 0 || bind(l, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(l, 8) < 0)
                        _exit(1);
                if (write(ready[1], "", 1) != 1)
                        _exit(1);
                static char buf[1 << 18];
                for (;;) {
                        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                        if (c < 0)
                                continue;
                        (void) recv(c, buf, sizeof(buf), 0);
                        memset(buf, 0, sizeof(buf));
                        size_t n;
                        if (answer == FAKE_NEWER) {
                                struct sess_hdr h = {.magic = SESS_PROTO_MAGIC,
                                                     .version = SESS_PROTO_VERSION + 1,
                                                     .size = 30000};
                                memcpy(buf, &h, sizeof(h));
                                n = sizeof(h);
                        } else {
                                uint32_t kind = SESS_REPLY_ERROR;
                                memcpy(buf, &kind, sizeof(kind));
                                n = 20984; /* protocol 1's sess_reply */
                        }
                        (void) send(c, buf, n, MSG_NOSIGNAL);
                        close(c);
                }
        }
        close(ready[1]);
        char b;
        cr_assert_eq(read(ready[0], &b, 1), 1, "the fake supervisor did not start");
        close(ready[0]);
        return pid;
}

static void fake_end(const char *root, const char *id, pid_t pid)
{
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        char path[300];
        const char *files[] = {"lock", "info", "control"};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                snprintf(path, sizeof(path), "%s/%s/%s", root, id, files[i]);
                unlink(path);
        }
        snprintf(path, sizeof(path), "%s/%s", root, id);
        rmdir(path);
}

static void expect_mismatch(enum fake_answer answer, const char *want)
{
        test_require_root();
        char root[64];
        test_tmp_template(root, sizeof(root), "psrun-proto");
        cr_assert_not_null(mkdtemp(root));
        setenv("PSRUN_SESSION_ROOT", root, 1);
        pid_t pid = fake_supervisor(root, "old", answer);

        psrun_session *s = NULL;
        psrun_error err = {0};
        cr_assert_eq(psrun_session_open("old", NULL, &s, &err), 0, "%s", err.msg);
        psrun_exec_result res;
        char *argv[] = {"true", NULL};
        int r = psrun_exec(s, argv, NULL, &res, &err);
        cr_expect_eq(r, -EPROTONOSUPPORT, "%d: %s", r, err.msg);
        cr_expect(strstr(err.msg, want), "`%s` not in: %s", want, err.msg);
        cr_expect(!strchr(err.msg, '\n'), "one line: %s", err.msg);
        psrun_file_data d;
        r = psrun_read_file(s, "x", 0, 0, &d, &err);
        cr_expect_eq(r, -EPROTONOSUPPORT, "read_file: %d: %s", r, err.msg);
        psrun_session_close(s);

        /* The CLI: the same line, exit 125, nothing run. */
        struct test_run run;
        test_run_psrun(&run, (const char *const[]){"session", "exec", "old", "--", "true", NULL});
        cr_expect_eq(run.status, 125, "status %d: %s", run.status, run.err);
        cr_expect(strstr(run.err, want), "`%s` not in: %s", want, run.err);
        test_run_free(&run);

        /* destroy ends it all the same: SIGTERM to its supervisor. */
        cr_assert_eq(psrun_session_open("old", NULL, &s, &err), 0, "%s", err.msg);
        r = psrun_session_destroy(s, &err);
        cr_expect_eq(r, 0, "destroy: %s", err.msg);
        int status = 0;
        cr_expect_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
        fake_end(root, "old", pid);
        rmdir(root);
}

Test(protocol, a_newer_supervisor_is_one_line_naming_both_versions, .timeout = 30)
{
        char want[96];
        snprintf(want, sizeof(want), "its supervisor speaks session protocol %d, this psrun %d",
                 SESS_PROTO_VERSION + 1, SESS_PROTO_VERSION);
        expect_mismatch(FAKE_NEWER, want);
}

Test(protocol, an_unversioned_supervisor_is_protocol_1, .timeout = 30)
{
        char want[96];
        snprintf(want, sizeof(want), "its supervisor speaks session protocol 1, this psrun %d",
                 SESS_PROTO_VERSION);
        expect_mismatch(FAKE_UNVERSIONED, want);
}

/* A real supervisor answers a request of another version with its own
 * header alone, and runs nothing; one of its own version as before. */
Test(protocol, the_supervisor_answers_another_version_with_its_header, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/t/control", t.root);
        static const uint32_t versions[] = {SESS_PROTO_VERSION + 1, 1};
        for (size_t i = 0; i < ARRAY_SIZE(versions); i++) {
                int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
                cr_assert_eq(connect(c, (struct sockaddr *) &sa, sizeof(sa)), 0);
                struct sess_req req = {.op = SESS_OP_DESTROY};
                req.h = (struct sess_hdr){SESS_PROTO_MAGIC, versions[i], sizeof(req), 0};
                if (versions[i] == 1) /* protocol 1 began with op */
                        memmove(&req, &req.op, sizeof(req) - offsetof(struct sess_req, op));
                cr_assert_eq(send(c, &req, sizeof(req), 0), (ssize_t) sizeof(req));
                static struct sess_reply rep;
                memset(&rep, 0, sizeof(rep));
                ssize_t n = recv(c, &rep, sizeof(rep), 0);
                cr_expect_eq(n, (ssize_t) sizeof(struct sess_hdr), "version %u: %zd bytes",
                             versions[i], n);
                cr_expect_eq(rep.h.magic, SESS_PROTO_MAGIC);
                cr_expect_eq(rep.h.version, SESS_PROTO_VERSION);
                cr_expect_eq(rep.h.size, sizeof(struct sess_reply));
                close(c);
        }
        /* Not destroyed: the session still runs commands. */
        psrun_exec_result res = sess_sh(&t, "true", NULL);
        cr_expect_eq(res.result.exit_code, 0);
        psrun_exec_result_free(&res);
        sess_end(&t);
}
