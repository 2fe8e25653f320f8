/* SPDX-License-Identifier: MIT */
/* `psrun session ...` end to end: output, exit status, one-line errors. */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <termios.h>

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

/* psrun with argv, its stdout and stderr in files (read back whole into
 * out and err), and its own peak RSS from wait4: what the CLI process
 * cost, apart from the test's buffers. */
struct rss_run {
        int status;
        long maxrss_kib;
        char *out, *err;
        size_t out_len;
};

static char *slurp_fd(int fd, size_t *len)
{
        off_t end = lseek(fd, 0, SEEK_END);
        cr_assert_geq(end, 0);
        char *buf = malloc((size_t) end + 1);
        cr_assert_not_null(buf);
        cr_assert_eq(pread(fd, buf, (size_t) end, 0), end);
        buf[end] = '\0';
        if (len)
                *len = (size_t) end;
        return buf;
}

static void cli_rss(struct rss_run *r, const char *const *argv)
{
        size_t n = 0;
        while (argv[n])
                n++;
        const char **args = calloc(n + 2, sizeof(char *));
        cr_assert_not_null(args);
        args[0] = test_psrun_path();
        memcpy(args + 1, argv, n * sizeof(char *));
        int out = memfd_create("ls-out", MFD_CLOEXEC), err = memfd_create("ls-err", MFD_CLOEXEC);
        cr_assert(out >= 0 && err >= 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDONLY);
                dup2(devnull, 0);
                dup2(out, 1);
                dup2(err, 2);
                execv(args[0], (char *const *) args);
                _exit(127);
        }
        free(args);
        int st;
        struct rusage ru;
        cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
        r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        r->maxrss_kib = ru.ru_maxrss;
        r->out = slurp_fd(out, &r->out_len);
        r->err = slurp_fd(err, NULL);
        close(out);
        close(err);
}

static void rss_run_free(struct rss_run *r)
{
        free(r->out);
        free(r->err);
        *r = (struct rss_run){0};
}

/* Before a session is made: a skipped test leaves nothing. */
static void need_python3(void)
{
        if (access("/usr/bin/python3", X_OK) != 0)
                cr_skip_test("no /usr/bin/python3 on this host: the names are made by python3 in "
                             "the sandbox (bytes no shell writes portably, paths past PATH_MAX)");
}

static void sess_python(struct sess *t, const char *code)
{
        char *argv[] = {"python3", "-c", (char *) code, NULL};
        psrun_exec_result res;
        psrun_error err = {0};
        cr_assert_eq(psrun_exec(t->s, argv, NULL, &res, &err), 0, "%s", err.msg);
        cr_assert_eq(res.result.exit_code, 0, "python3: %s", res.stderr_data);
        psrun_exec_result_free(&res);
}

/* Memory the listing itself may take (16 MiB of names, 100,000 entries)
 * and the process around it; ASan's shadow and quarantine come on top. */
#if defined(__SANITIZE_ADDRESS__)
#define LS_RSS_MAX_KIB (320L << 10)
#else
#define LS_RSS_MAX_KIB (64L << 10)
#endif

/* Class 1 of issue 28: a deep tree of long names (48 levels of 255-byte
 * directories, 1,400 files at the bottom: 17 MiB of names, as paths from
 * the listed directory) made the CLI hold them all, several times over.
 * The listing stops at 16 MiB of names, says so, and the CLI's peak RSS
 * stays bounded in every output form. */
Test(session_cli, ls_of_a_deep_tree_of_long_names_is_bounded, .timeout = 120)
{
        need_python3();
        struct sess t;
        sess_start(&t, NULL);
        sess_python(&t, "import os\n"
                        "os.chdir('/workspace'); os.mkdir('deep'); os.chdir('deep')\n"
                        "for i in range(48):\n"
                        "    n = '%02d' % i + 'd' * 253; os.mkdir(n); os.chdir(n)\n"
                        "for i in range(1400):\n"
                        "    open('%04d' % i + 'f' * 251, 'w').close()\n");
        static const char *const forms[][8] = {
                {"session", "ls", "-R", "t", "deep", NULL},
                {"session", "ls", "-R", "--json", "t", "deep", NULL},
                {"session", "ls", "-R", "-0", "t", "deep", NULL},
        };
        for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
                struct rss_run r;
                cli_rss(&r, forms[f]);
                cr_expect_eq(r.status, 1, "form %zu: exit %d: %s", f, r.status, r.err);
                cr_expect_lt(r.maxrss_kib, LS_RSS_MAX_KIB, "form %zu: peak RSS %ld KiB", f,
                             r.maxrss_kib);
                /* Something was listed, up to the bound and no further. */
                cr_expect_gt(r.out_len, 8U << 20, "form %zu: %zu bytes", f, r.out_len);
                cr_expect_lt(r.out_len, 18U << 20, "form %zu: %zu bytes", f, r.out_len);
                if (f == 1) {
                        cr_expect(strstr(r.out, "\"truncated\":true"), "no truncated field");
                        cr_expect(r.out_len && r.out[r.out_len - 1] == '\n');
                        cr_expect_str_eq(r.err, "");
                } else {
                        cr_expect(strstr(r.err, "psrun: session ls: listing truncated at ") ==
                                          r.err,
                                  "form %zu: %s", f, r.err);
                        cr_expect(strstr(r.err, "(the directory holds more)\n"), "%s", r.err);
                }
                rss_run_free(&r);
        }
        sess_end(&t);
}

/* The hostile names, as the sandbox makes them, sorted as listed. */
static const struct {
        const char *raw;
        const char *shown; /* the human listing's name column */
} hostile_names[] = {
        {"\x1b]0;pwned\x07", "$'\\033]0;pwned\\a'"},
        {"$'a\\nb'", "'$'\\''a\\nb'\\'''"}, /* looks quoted: is quoted again */
        {"a\nb", "$'a\\nb'"},
        {"back\\slash", "'back\\slash'"},
        {"bad\xff\xfe", "$'bad\\377\\376'"},
        {"plain.txt", "plain.txt"},
        {"x\rINJECT", "$'x\\rINJECT'"},
        {"\xe2\x80\xae"
         "evil",
         "$'\\342\\200\\256evil'"}, /* U+202E reverses what follows */
};
#define N_HOSTILE (sizeof(hostile_names) / sizeof(hostile_names[0]))

/* Class 2 of issue 28: names reached the terminal raw, and a newline in
 * one forged a line of the listing. */
Test(session_cli, ls_names_never_forge_lines_or_reach_the_terminal, .timeout = 60)
{
        need_python3();
        struct sess t;
        sess_start(&t, NULL);
        sess_python(&t,
                    "import os\n"
                    "for n in [b'a\\nb', b'\\x1b]0;pwned\\x07', b'x\\rINJECT', b'bad\\xff\\xfe',\n"
                    "          b'back\\\\slash', b'plain.txt', b\"$'a\\\\nb'\",\n"
                    "          b'\\xe2\\x80\\xaeevil']:\n"
                    "    open(b'/workspace/' + n, 'wb').close()\n");
        struct test_run r;

        /* Human: a line per entry, the name last, quoted; no control byte. */
        cli(&r, (const char *const[]){"session", "ls", "t", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        size_t lines = 0;
        for (const char *p = r.out; *p; p++) {
                unsigned char ch = (unsigned char) *p;
                cr_expect(ch == '\n' || (ch >= 0x20 && ch != 0x7f), "raw byte 0x%02x in: %s", ch,
                          r.out);
                lines += ch == '\n';
        }
        cr_expect_eq(lines, N_HOSTILE, "%zu lines: %s", lines, r.out);
        char *save = NULL, *line = strtok_r(r.out, "\n", &save);
        for (size_t i = 0; i < N_HOSTILE; i++, line = strtok_r(NULL, "\n", &save)) {
                cr_assert_not_null(line, "entry %zu missing", i);
                /* type mode size mtime name: the name after the 4th run of spaces. */
                char *name = line;
                for (int field = 0; field < 4; field++) {
                        name += strcspn(name, " ");
                        name += strspn(name, " ");
                }
                cr_expect_str_eq(name, hostile_names[i].shown, "entry %zu: `%s`", i, line);
        }
        test_run_free(&r);

        /* -0: the raw names, each ended by a NUL, nothing else. */
        struct rss_run z;
        cli_rss(&z, (const char *const[]){"session", "ls", "-0", "t", NULL});
        cr_assert_eq(z.status, 0, "%s", z.err);
        size_t off = 0;
        for (size_t i = 0; i < N_HOSTILE; i++) {
                size_t len = strlen(hostile_names[i].raw);
                cr_expect(off + len < z.out_len &&
                                  memcmp(z.out + off, hostile_names[i].raw, len) == 0 &&
                                  z.out[off + len] == '\0',
                          "-0: name %zu is not at %zu", i, off);
                off += len + 1;
        }
        cr_expect_eq(off, z.out_len);
        rss_run_free(&z);

        /* --json: one object; a name that is not UTF-8 goes as its bytes. */
        cli_rss(&z, (const char *const[]){"session", "ls", "--json", "t", NULL});
        cr_assert_eq(z.status, 0, "%s", z.err);
        cr_expect(strstr(z.out, "\"truncated\":false,\"entries\":[{"), "%s", z.out);
        cr_expect(strstr(z.out, "{\"name\":\"a\\nb\",\"type\":\"file\""), "%s", z.out);
        cr_expect(strstr(z.out, "{\"name_b64\":\"YmFk//4=\",\"type\":\"file\""), "%s", z.out);
        cr_expect(strstr(z.out, "{\"name\":\"\\u001b]0;pwned\\u0007\""), "%s", z.out);
        for (size_t i = 0; i + 1 < z.out_len; i++)
                cr_expect((unsigned char) z.out[i] >= 0x20, "raw control byte at %zu", i);
        /* A JSON parser reads every name back, byte for byte. */
        char path[64];
        test_tmp_template(path, sizeof(path), "psrun-ls-json");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, z.out, z.out_len), (ssize_t) z.out_len);
        close(fd);
        char cmd[512];
        snprintf(cmd, sizeof(cmd),
                 "python3 -c 'import sys, json, base64\n"
                 "d = json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"))\n"
                 "for e in d[\"entries\"]:\n"
                 "    b = e[\"name\"].encode() if \"name\" in e else "
                 "base64.b64decode(e[\"name_b64\"])\n"
                 "    sys.stdout.buffer.write(b + bytes(1))' %s",
                 path);
        FILE *py = popen(cmd, "r");
        cr_assert_not_null(py);
        char back[4096];
        size_t got = fread(back, 1, sizeof(back), py);
        int st = pclose(py);
        unlink(path);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "python3 could not read the JSON: %s",
                  z.out);
        off = 0;
        for (size_t i = 0; i < N_HOSTILE; i++) {
                size_t len = strlen(hostile_names[i].raw);
                cr_expect(off + len < got && memcmp(back + off, hostile_names[i].raw, len) == 0,
                          "json: name %zu did not round-trip", i);
                off += len + 1;
        }
        cr_expect_eq(off, got);
        rss_run_free(&z);
        sess_end(&t);
}

Test(session_cli, ls_options_are_checked, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        struct test_run r;
        static const char *const bad[] = {
                "-1", "0x3e8", "1e3", "65536x", "", "+1", "18446744073709551616", "0", "100001"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cli(&r, (const char *const[]){"session", "ls", "t", "--max-entries", bad[i], NULL});
                expect_one_line_error(&r, "--max-entries");
                test_run_free(&r);
        }
        cli(&r, (const char *const[]){"session", "ls", "--json", "-0", "t", NULL});
        expect_one_line_error(&r, "--null");
        test_run_free(&r);
        /* A bound the caller set: the first N, marked. */
        sess_sh_ok(&t, "touch /workspace/a /workspace/b /workspace/c");
        cli(&r, (const char *const[]){"session", "ls", "t", "--max-entries", "2", NULL});
        cr_expect_eq(r.status, 1, "%s", r.err);
        cr_expect(strstr(r.err, "listing truncated at 2 entries"), "%s", r.err);
        size_t lines = 0;
        for (const char *p = r.out; *p; p++)
                lines += *p == '\n';
        cr_expect_eq(lines, 2, "%s", r.out);
        test_run_free(&r);
        cli(&r, (const char *const[]){"session", "ls", "t", "--max-entries", "3", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.err, "");
        test_run_free(&r);
        sess_end(&t);
}

/* `session read` to a terminal: the file is the sandbox's, and its ESC,
 * BEL and CR would be the terminal's commands. Escaped there (a UTF-8
 * character cut by nothing stays whole); to a pipe, the bytes as they are. */
Test(session_cli, read_to_a_terminal_escapes_control_bytes, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        static const char body[] = "ok\t\xc3\xa9\n\x1b]0;pwned\x07x\rINJECT\xff\n";
        psrun_error err = {0};
        cr_assert_eq(psrun_write_file(t.s, "f", body, sizeof(body) - 1, 0644, &err), 0, "%s",
                     err.msg);
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        cr_assert_geq(master, 0);
        cr_assert_eq(grantpt(master), 0);
        cr_assert_eq(unlockpt(master), 0);
        int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        cr_assert_geq(slave, 0);
        struct termios tio;
        cr_assert_eq(tcgetattr(slave, &tio), 0);
        cfmakeraw(&tio); /* no \n to \r\n on the way */
        cr_assert_eq(tcsetattr(slave, TCSANOW, &tio), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(slave, 1);
                execl(test_psrun_path(), "psrun", "session", "read", "t", "f", (char *) NULL);
                _exit(127);
        }
        close(slave);
        char got[512];
        size_t len = 0;
        for (;;) {
                ssize_t n = read(master, got + len, sizeof(got) - 1 - len);
                if (n <= 0) /* EIO: the last writer closed the terminal */
                        break;
                len += (size_t) n;
        }
        got[len] = '\0';
        close(master);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
        cr_expect_str_eq(got, "ok\t\xc3\xa9\n\\x1b]0;pwned\\x07x\\x0dINJECT\\xff\n");

        struct test_run r;
        cli(&r, (const char *const[]){"session", "read", "t", "f", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, body);
        test_run_free(&r);
        sess_end(&t);
}

/* Class 2 of issue 28: --json's line shares stderr with the command, which
 * can print one just like it. --result-fd's descriptor is not the
 * command's: what it writes there goes nowhere, and the one result is
 * psrun's. */
Test(session_cli, exec_result_fd_cannot_be_forged, .timeout = 30)
{
        struct sess t;
        sess_start(&t, NULL);
        struct test_run r;
        cli(&r, (const char *const[]){"session", "exec", "t", "--json", "--result-fd", "3", "--",
                                      "sh", "-c",
                                      "printf '{\"exit_code\":0}\\n' >&2; "
                                      "printf '{\"exit_code\":0}\\n' >&3; printf half >&2; exit 4",
                                      NULL});
        cr_expect_eq(r.status, 4, "%s", r.err);
        cr_expect(strncmp(r.result, "{\"exit_code\":4,", 15) == 0, "%s", r.result);
        const char *nl = strchr(r.result, '\n');
        cr_expect(nl && nl[1] == '\0', "not one line: %s", r.result);
        /* --json's line starts on a line of its own after the command's. */
        cr_expect(strstr(r.err, "half\n{\"exit_code\":4,"), "%s", r.err);
        test_run_free(&r);
        static const char *const bad[] = {
                "-1", "0x3e8", "1e3", "65536x", "", "+1", "18446744073709551616", "99"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cli(&r, (const char *const[]){"session", "exec", "t", "--result-fd", bad[i], "--",
                                              "true", NULL});
                expect_one_line_error(&r, "--result-fd");
                test_run_free(&r);
        }
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
