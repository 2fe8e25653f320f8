/* SPDX-License-Identifier: MIT */
/* The command table and its one parser and dispatcher: every command's
 * --help (`psrun session`'s subcommands' too), argument counts, unknown
 * options and missing values as one line naming the command, and psrun
 * run's policy sources in command-line order. */
#include <unistd.h>

#include "common/cleanup.h"
#include "integration/common.h"
#include "policy/apparmor.h"
#include "policy/landlock.h"

TestSuite(cli, .timeout = 60);

/* Every command psrun has: its own, then the OCI runtime's. */
static const char *const commands[] = {
        "run",    "policy", "session", "image", "gc",     "version",  "help",
        "create", "start",  "state",   "kill",  "delete", "exec",     "ps",
        "pause",  "resume", "update",  "list",  "events", "features", "spec",
};

/* `psrun session`'s subcommands, rows of their own table. */
static const char *const session_commands[] = {
        "create", "exec", "install", "write", "read", "ls", "rm", "list", "destroy",
};

/* Exit status of psrun's own usage errors, and of the OCI commands' (runc's). */
#define USAGE_OWN 125
#define USAGE_OCI 1

/* Lines, besides notes about optional layers this host lacks. */
static int lines_of(const char *s)
{
        int n = 0;
        for (const char *l = s; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
                if (strncmp(l, "psrun: note: ", 13) != 0)
                        n++;
        return n;
}

static void expect_error(const char *const *argv, int status, const char *needle)
{
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, status, "%s: exit %d, stderr: %s", argv[0], r.status, r.err);
        cr_expect(strstr(r.err, needle), "%s: stderr lacks `%s`: %s", argv[0], needle, r.err);
        cr_expect_eq(lines_of(r.err), 1, "%s: not one line: %s", argv[0], r.err);
        cr_expect_str_eq(r.out, "", "%s: printed on stdout: %s", argv[0], r.out);
        test_run_free(&r);
}

Test(cli, help_for_every_command)
{
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
                char usage[64];
                snprintf(usage, sizeof(usage), "Usage: psrun %s ", commands[i]);
                /* --help and -h, also after other options and before missing
                 * arguments: help is looked at before anything is done. */
                const char *const long_help[] = {commands[i], "--help", NULL};
                const char *const short_help[] = {commands[i], "-h", NULL};
                const char *const *forms[] = {long_help, short_help};
                for (size_t f = 0; f < ARRAY_SIZE(forms); f++) {
                        struct test_run r;
                        test_run_psrun(&r, forms[f]);
                        cr_expect_eq(r.status, 0, "%s %s: exit %d, stderr: %s", commands[i],
                                     forms[f][1], r.status, r.err);
                        cr_expect(strncmp(r.out, usage, strlen(usage)) == 0, "%s %s printed: %s",
                                  commands[i], forms[f][1], r.out);
                        cr_expect(strstr(r.out, "-h, --help"), "%s: no --help line: %s",
                                  commands[i], r.out);
                        test_run_free(&r);
                }
        }
}

/* `psrun help session`, `psrun session --help` and each subcommand's
 * --help are printed from the rows: the list names every subcommand, each
 * has its synopsis and options, and none needs a session (or root). */
Test(cli, session_help_is_generated_from_its_rows)
{
        struct test_run a, b;
        test_run_psrun(&a, (const char *const[]){"help", "session", NULL});
        test_run_psrun(&b, (const char *const[]){"session", "--help", NULL});
        cr_expect_eq(a.status, 0, "%s", a.err);
        cr_expect_str_eq(a.out, b.out);
        cr_expect(strncmp(a.out, "Usage: psrun session COMMAND [ARGS...]\n", 39) == 0, "%s", a.out);
        cr_expect(strstr(a.out, "$PSRUN_SESSION_ROOT"), "the notes are missing: %s", a.out);
        for (size_t i = 0; i < ARRAY_SIZE(session_commands); i++) {
                char row[64], usage[64];
                snprintf(row, sizeof(row), "\n  %s ", session_commands[i]);
                cr_expect(strstr(a.out, row), "`%s` is not listed: %s", session_commands[i], a.out);
                snprintf(usage, sizeof(usage), "Usage: psrun session %s ", session_commands[i]);
                const char *const long_help[] = {"session", session_commands[i], "--help", NULL};
                const char *const short_help[] = {"session", session_commands[i], "-h", NULL};
                const char *const *forms[] = {long_help, short_help};
                for (size_t f = 0; f < ARRAY_SIZE(forms); f++) {
                        struct test_run r;
                        test_run_psrun(&r, forms[f]);
                        cr_expect_eq(r.status, 0, "session %s %s: exit %d, stderr: %s",
                                     session_commands[i], forms[f][2], r.status, r.err);
                        cr_expect(strncmp(r.out, usage, strlen(usage)) == 0, "%s %s printed: %s",
                                  session_commands[i], forms[f][2], r.out);
                        cr_expect(strstr(r.out, "-h, --help"), "%s: no --help line: %s",
                                  session_commands[i], r.out);
                        test_run_free(&r);
                }
        }
        test_run_free(&a);
        test_run_free(&b);
        /* A row's options and notes are in its help. */
        test_run_psrun(&a, (const char *const[]){"session", "exec", "--help", NULL});
        cr_expect(strstr(a.out, "-e, --env NAME=VALUE") && strstr(a.out, "Exit status"), "%s",
                  a.out);
        test_run_free(&a);
}

/* `psrun image`'s subcommands, rows of their own table. */
static const char *const image_commands[] = {
        "pull", "ls", "inspect", "rm", "prune", "import",
};

/* `psrun image --help` and each subcommand's are printed from the rows,
 * and need no store. */
Test(cli, image_help_is_generated_from_its_rows)
{
        struct test_run a, b;
        test_run_psrun(&a, (const char *const[]){"help", "image", NULL});
        test_run_psrun(&b, (const char *const[]){"image", "--help", NULL});
        cr_expect_eq(a.status, 0, "%s", a.err);
        cr_expect_str_eq(a.out, b.out);
        cr_expect(strncmp(a.out, "Usage: psrun image COMMAND [ARGS...]\n", 37) == 0, "%s", a.out);
        cr_expect(strstr(a.out, "$PSRUN_IMAGE_STORE"), "the notes are missing: %s", a.out);
        for (size_t i = 0; i < ARRAY_SIZE(image_commands); i++) {
                char row[64], usage[64];
                snprintf(row, sizeof(row), "\n  %s ", image_commands[i]);
                cr_expect(strstr(a.out, row), "`%s` is not listed: %s", image_commands[i], a.out);
                snprintf(usage, sizeof(usage), "Usage: psrun image %s ", image_commands[i]);
                struct test_run r;
                test_run_psrun(&r,
                               (const char *const[]){"image", image_commands[i], "--help", NULL});
                cr_expect_eq(r.status, 0, "image %s --help: %s", image_commands[i], r.err);
                cr_expect(strncmp(r.out, usage, strlen(usage)) == 0, "%s", r.out);
                cr_expect(strstr(r.out, "--store DIR"), "image %s: no --store: %s",
                          image_commands[i], r.out);
                test_run_free(&r);
        }
        test_run_free(&a);
        test_run_free(&b);
        test_run_psrun(&a, (const char *const[]){"image", "pull", "--help", NULL});
        cr_expect(strstr(a.out, "--authfile FILE") && strstr(a.out, "never from the command line"),
                  "%s", a.out);
        test_run_free(&a);
}

/* Usage errors and refused input: one line naming `image SUB`, 125,
 * nothing on stdout, and no record or temporary file left in the store. */
Test(cli, image_usage_and_input_errors)
{
        expect_error((const char *const[]){"image", NULL}, USAGE_OWN,
                     "image: expected COMMAND [ARGS...], got 0 arguments");
        expect_error((const char *const[]){"image", "frobnicate", NULL}, USAGE_OWN,
                     "image: unknown command `frobnicate` (see `psrun image --help`)");
        expect_error((const char *const[]){"image", "pull", NULL}, USAGE_OWN,
                     "image pull: expected REFERENCE, got 0 arguments");
        expect_error((const char *const[]){"image", "ls", "x", NULL}, USAGE_OWN,
                     "image ls: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"image", "rm", NULL}, USAGE_OWN,
                     "image rm: expected REFERENCE..., got 0 arguments");
        expect_error((const char *const[]){"image", "pull", "--store", "rel/dir", "x", NULL},
                     USAGE_OWN, "image pull: --store: `rel/dir` is not an absolute path");
        expect_error((const char *const[]){"image", "pull", "--max-size", "lots", "x", NULL},
                     USAGE_OWN, "image pull: --max-size: `lots` is not a size");
        expect_error((const char *const[]){"image", "pull", "--password", "x", "y", NULL},
                     USAGE_OWN, "image pull: unknown option `--password`");

        char store[64];
        test_tmp_template(store, sizeof(store), "psrun-imgcli");
        cr_assert(mkdtemp(store));
        char root[64];
        snprintf(root, sizeof(root), "%s/store", store);
        expect_error((const char *const[]){"image", "pull", "--store", root, "a/../b", NULL},
                     USAGE_OWN, "image pull: image: `a/../b`");
        expect_error((const char *const[]){"image", "pull", "--store", root, "x:-bad", NULL},
                     USAGE_OWN, "image pull: image:");
        expect_error((const char *const[]){"image", "pull", "--store", root, "x@sha256:12", NULL},
                     USAGE_OWN, "image pull: image:");
        expect_error((const char *const[]){"image", "pull", "--store", root, "oci:/x:y", NULL},
                     USAGE_OWN, "is a local source: import it, not pull");
        char src[128];
        snprintf(src, sizeof(src), "oci:%s:../../etc", store);
        expect_error((const char *const[]){"image", "import", "--store", root, src, NULL},
                     USAGE_OWN, "`../../etc` is not a valid tag");
        snprintf(src, sizeof(src), "oci:%s/none:v1", store);
        expect_error((const char *const[]){"image", "import", "--store", root, src, NULL},
                     USAGE_OWN, "image import: image: OCI layout");
        expect_error((const char *const[]){"image", "import", "--store", root, "busybox", NULL},
                     USAGE_OWN, "is not a local source");
        expect_error((const char *const[]){"image", "inspect", "--store", root, "busybox", NULL},
                     USAGE_OWN,
                     "image inspect: image: docker.io/library/busybox:latest is not in "
                     "the store");
        expect_error((const char *const[]){"image", "rm", "--store", root, "x/y:z", NULL},
                     USAGE_OWN, "image rm: image: docker.io/x/y:z is not in the store");
        /* none of these made a store, or left anything in one */
        cr_expect(access(root, F_OK) < 0, "a refused reference created the store %s", root);
        struct test_run r;
        test_run_psrun(&r, (const char *const[]){"image", "ls", "--store", root, "--json", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "[]\n");
        test_run_free(&r);
        rmdir(store);
}

/* The subcommands' usage errors: one line naming `session SUB` and its
 * synopsis, 125, before any session is looked for. */
Test(cli, session_usage_errors)
{
        expect_error((const char *const[]){"session", NULL}, USAGE_OWN,
                     "session: expected COMMAND [ARGS...], got 0 arguments");
        expect_error((const char *const[]){"session", "frobnicate", NULL}, USAGE_OWN,
                     "session: unknown command `frobnicate` (see `psrun session --help`)");
        expect_error((const char *const[]){"session", "write", "t", NULL}, USAGE_OWN,
                     "session write: expected ID PATH, got 1 argument (usage: psrun session write "
                     "ID PATH)");
        expect_error((const char *const[]){"session", "destroy", NULL}, USAGE_OWN,
                     "session destroy: expected ID, got 0 arguments");
        expect_error((const char *const[]){"session", "rm", "a", "b", "c", NULL}, USAGE_OWN,
                     "session rm: expected ID PATH, got 3 arguments");
        expect_error((const char *const[]){"session", "list", "x", NULL}, USAGE_OWN,
                     "session list: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"session", "ls", "-x", "t", NULL}, USAGE_OWN,
                     "session ls: unknown option `-x`");
        expect_error((const char *const[]){"session", "exec", "t", "--bogus", "--", "true", NULL},
                     USAGE_OWN, "session exec: unknown option `--bogus`");
        expect_error((const char *const[]){"session", "exec", "--timeout", NULL}, USAGE_OWN,
                     "session exec: `--timeout` needs a value");
        expect_error((const char *const[]){"session", "exec", "t", "--timeout", "soon", "--",
                                           "true", NULL},
                     USAGE_OWN, "session exec: --timeout: `soon` is not a duration");
        expect_error((const char *const[]){"session", "exec", "--json", "t", "--", NULL}, USAGE_OWN,
                     "session exec: no command given");
        expect_error((const char *const[]){"session", "install", "--approve-timeout", "0", "t",
                                           "pkg", NULL},
                     USAGE_OWN, "session install: --approve-timeout: `0` is not a duration");
        expect_error((const char *const[]){"session", "create", "x", NULL}, USAGE_OWN,
                     "session create: expected no arguments, got 1 argument");
}

Test(cli, help_command_matches_help_option)
{
        struct test_run a, b;
        test_run_psrun(&a, (const char *const[]){"help", "kill", NULL});
        test_run_psrun(&b, (const char *const[]){"kill", "--all", "--help", NULL});
        cr_expect_eq(a.status, 0);
        cr_expect_eq(b.status, 0);
        cr_expect_str_eq(a.out, b.out);
        cr_expect(strstr(a.out, "Usage: psrun kill [--all] ID [SIGNAL]\n"), "%s", a.out);
        test_run_free(&a);
        test_run_free(&b);
}

Test(cli, wrong_argument_counts)
{
        expect_error((const char *const[]){"kill", "a", "b", "c", NULL}, USAGE_OCI,
                     "kill: expected ID [SIGNAL], got 3 arguments");
        expect_error((const char *const[]){"kill", NULL}, USAGE_OCI,
                     "kill: expected ID [SIGNAL], got 0 arguments");
        expect_error((const char *const[]){"start", NULL}, USAGE_OCI,
                     "start: expected ID, got 0 arguments");
        expect_error((const char *const[]){"delete", "--force", "a", "b", NULL}, USAGE_OCI,
                     "delete: expected ID, got 2 arguments");
        expect_error((const char *const[]){"exec", NULL}, USAGE_OCI,
                     "exec: expected ID [CMD [ARGS...]], got 0 arguments");
        expect_error((const char *const[]){"list", "x", NULL}, USAGE_OCI,
                     "list: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"features", "x", NULL}, USAGE_OCI,
                     "features: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"policy", "x", NULL}, USAGE_OWN,
                     "policy: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"gc", "x", "y", NULL}, USAGE_OWN,
                     "gc: expected no arguments, got 2 arguments");
        expect_error((const char *const[]){"version", "x", NULL}, USAGE_OWN,
                     "version: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"help", "run", "kill", NULL}, USAGE_OWN,
                     "help: expected [COMMAND], got 2 arguments");
}

Test(cli, unknown_options_and_missing_values)
{
        expect_error((const char *const[]){"state", "--nope", "x", NULL}, USAGE_OCI,
                     "state: unknown option `--nope`");
        expect_error((const char *const[]){"kill", "-Z", "x", NULL}, USAGE_OCI,
                     "kill: unknown option `-Z`");
        expect_error((const char *const[]){"update", "x", "--memory", NULL}, USAGE_OCI,
                     "update: expected ID, got 2 arguments");
        expect_error((const char *const[]){"update", "--memory", NULL}, USAGE_OCI,
                     "update: `--memory` needs a value");
        expect_error((const char *const[]){"exec", "-e", NULL}, USAGE_OCI,
                     "exec: `-e` needs a value");
        expect_error((const char *const[]){"run", "--nope", "--", "true", NULL}, USAGE_OWN,
                     "run: unknown option `--nope`");
        expect_error((const char *const[]){"run", "-p", NULL}, USAGE_OWN,
                     "run: `-p` needs a value");
        expect_error((const char *const[]){"policy", "-x", NULL}, USAGE_OWN,
                     "policy: unknown option `-x`");
        expect_error((const char *const[]){"gc", "--cgroup-parent", NULL}, USAGE_OWN,
                     "gc: `--cgroup-parent` needs a value");
        expect_error((const char *const[]){"version", "--short", NULL}, USAGE_OWN,
                     "version: unknown option `--short`");
        /* After `--` or the first argument, --help is an argument. */
        expect_error((const char *const[]){"list", "--", "--help", NULL}, USAGE_OCI,
                     "list: expected no arguments, got 1 argument");
        expect_error((const char *const[]){"policy", "x", "--help", NULL}, USAGE_OWN,
                     "policy: expected no arguments, got 2 arguments");
}

/* OCI usage errors go where the caller reads errors: the --log file. */
Test(cli, oci_usage_error_goes_to_the_log)
{
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-cli");
        cr_assert_not_null(mkdtemp(dir));
        char log[128];
        snprintf(log, sizeof(log), "%s/log.json", dir);
        struct test_run r;
        test_run_psrun(&r, (const char *const[]){"--log", log, "--log-format", "json", "kill", "a",
                                                 "b", "c", NULL});
        FILE *f = fopen(log, "re");
        char text[1024] = "";
        if (f) {
                size_t n = fread(text, 1, sizeof(text) - 1, f);
                text[n] = '\0';
                fclose(f);
        }
        unlink(log);
        rmdir(dir);
        cr_expect_eq(r.status, USAGE_OCI, "%s", r.err);
        cr_expect(strstr(text, "\"level\":\"error\"") &&
                          strstr(text, "kill: expected ID [SIGNAL], got 3 arguments"),
                  "log: %s", text);
        test_run_free(&r);
}

static char *policy_file(const char *text)
{
        char path[64];
        test_tmp_template(path, sizeof(path), "psrun-cli");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        return strdup(path);
}

/* -p and -o apply in command-line order: whichever comes last wins. */
Test(cli, policy_sources_in_command_line_order)
{
        char *file = policy_file("workdir: /from-file\n");
        struct test_run a, b;
        test_run_psrun(&a,
                       (const char *const[]){"policy", "-o", "workdir=/from-o", "-p", file, NULL});
        test_run_psrun(&b,
                       (const char *const[]){"policy", "-p", file, "-o", "workdir=/from-o", NULL});
        unlink(file);
        free(file);
        cr_expect(strstr(a.out, "\"workdir\": \"/from-file\""), "%s%s", a.out, a.err);
        cr_expect(strstr(b.out, "\"workdir\": \"/from-o\""), "%s%s", b.out, b.err);
        test_run_free(&a);
        test_run_free(&b);
}

Test(cli, run_applies_policy_sources_in_command_line_order, .init = test_require_root)
{
        char *file = policy_file("workdir: /nonexistent-from-file\n");
        expect_error((const char *const[]){"run", "-o", "workdir=/nonexistent-from-o", "-p", file,
                                           "--", "true", NULL},
                     USAGE_OWN, "chdir: /nonexistent-from-file:");
        expect_error((const char *const[]){"run", "-p", file, "-o", "workdir=/nonexistent-from-o",
                                           "--", "true", NULL},
                     USAGE_OWN, "chdir: /nonexistent-from-o:");
        unlink(file);
        free(file);
}

/* The first nameserver of the host's /etc/resolv.conf into first (""
 * when it names none, as the kernel-matrix VM's does). */
static void host_first_nameserver(char first[128])
{
        FILE *f = fopen("/etc/resolv.conf", "re");
        char line[256];
        first[0] = '\0';
        while (f && !first[0] && fgets(line, sizeof(line), f))
                if (sscanf(line, " nameserver %127s", first) != 1 || strchr(first, '%'))
                        first[0] = '\0';
        if (f)
                fclose(f);
}

/* psrun policy prints what psrun will use: an empty dns_upstream is the
 * host's resolvers (/etc/resolv.conf's nameservers), a given one itself. */
Test(cli, policy_prints_the_effective_dns_upstream)
{
        char first[128];
        host_first_nameserver(first);
        if (!first[0])
                cr_skip_test("the host's /etc/resolv.conf names no nameserver");
        struct test_run r;
        test_run_psrun(&r, (const char *const[]){"policy", "-o", "network=restricted", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        char want[160];
        snprintf(want, sizeof(want), "\"dns_upstream\": [\"%s\"", first);
        cr_expect(strstr(r.out, want), "no `%s` in: %s", want, r.out);
        test_run_free(&r);
        test_run_psrun(&r,
                       (const char *const[]){"policy", "-o", "dns_upstream=[198.18.0.53]", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "\"dns_upstream\": [\"198.18.0.53\"]"), "%s", r.out);
        test_run_free(&r);
}

/* What `psrun policy` prints is a policy psrun takes back: read again it
 * prints the same, and `psrun run` starts with it. With `network: none`,
 * which refuses dns_upstream, no resolvers are filled in. A host whose
 * resolv.conf names no nameserver has no resolvers to print, and
 * `restricted` then needs them given (which `psrun run` says). */
Test(cli, policy_output_reads_back_and_runs, .init = test_require_root)
{
        char first[128];
        host_first_nameserver(first);
        const char *const networks[] = {"network=none", "network=restricted"};
        const char *const upstream = first[0] ? "dns_upstream=[]" : "dns_upstream=[198.18.0.53]";
        for (size_t i = 0; i < sizeof(networks) / sizeof(networks[0]); i++) {
                struct test_run a, b, run;
                if (i == 0)
                        test_run_psrun(&a,
                                       (const char *const[]){"policy", "-o", networks[i], NULL});
                else
                        test_run_psrun(&a, (const char *const[]){"policy", "-o", networks[i], "-o",
                                                                 upstream, NULL});
                cr_assert_eq(a.status, 0, "%s", a.err);
                char *file = policy_file(a.out);
                test_run_psrun(&b, (const char *const[]){"policy", "-p", file, NULL});
                cr_expect_eq(b.status, 0, "%s: %s", networks[i], b.err);
                cr_expect_str_eq(b.out, a.out, "%s: read back, it prints otherwise", networks[i]);
                test_run_psrun(&run, (const char *const[]){"run", "-p", file, "--", "true", NULL});
                cr_expect_eq(run.status, 0, "%s: psrun run refuses its own output: %s", networks[i],
                             run.err);
                if (i == 0)
                        cr_expect(strstr(a.out, "\"dns_upstream\": []"), "%s", a.out);
                unlink(file);
                free(file);
                test_run_free(&a);
                test_run_free(&b);
                test_run_free(&run);
        }
}

/* The values psrun decides at a start, decided: a layer's `auto` as this
 * host resolves it, the installers' index URLs, the image store. */
Test(cli, policy_prints_the_effective_layers_and_defaults)
{
        struct test_run r;
        test_run_psrun(&r, (const char *const[]){"policy", "-o", "image=busybox:1", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(!strstr(r.out, "\"landlock\": \"auto\""), "%s", r.out);
        cr_expect(strstr(r.out, landlock_abi() > 0 ? "\"landlock\": \"required\""
                                                   : "\"landlock\": \"off\""),
                  "%s", r.out);
        cr_expect(strstr(r.out, apparmor_enabled() == 1 ? "\"apparmor\": \"required\""
                                                        : "\"apparmor\": \"off\""),
                  "%s", r.out);
        cr_expect(strstr(r.out, "\"pip_index_url\": \"https://pypi.org/simple\""), "%s", r.out);
        cr_expect(strstr(r.out, "\"npm_registry\": \"https://registry.npmjs.org/\""), "%s", r.out);
        char want[4096 + 32];
        snprintf(want, sizeof(want), "\"image_store\": \"%s\"", psrun_image_store_default());
        cr_expect(strstr(r.out, want), "no `%s` in: %s", want, r.out);
        test_run_free(&r);
        /* Given ones stay as given, `off` too. */
        test_run_psrun(&r, (const char *const[]){"policy", "-o", "landlock=off", "-o",
                                                 "pip_index_url=https://pypi.test/simple", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "\"landlock\": \"off\""), "%s", r.out);
        cr_expect(strstr(r.out, "\"pip_index_url\": \"https://pypi.test/simple\""), "%s", r.out);
        cr_expect(!strstr(r.out, "\"image_store\""), "no image, no store: %s", r.out);
        test_run_free(&r);
}

/* The shared libraries an ELF file names (readelf -d), one per line. */
static void needed_of(const char *path, char *out, size_t len)
{
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "readelf -d '%s'", path);
        FILE *f = popen(cmd, "r");
        cr_assert(f, "popen readelf");
        char line[512];
        size_t n = 0;
        out[0] = '\0';
        while (fgets(line, sizeof(line), f)) {
                char *lib = strstr(line, "(NEEDED)") ? strchr(line, '[') : NULL;
                char *end = lib ? strchr(lib, ']') : NULL;
                if (!end)
                        continue;
                n += (size_t) snprintf(out + n, n < len ? len - n : 0, "%.*s\n",
                                       (int) (end - lib - 1), lib + 1);
        }
        cr_assert_eq(pclose(f), 0, "readelf -d %s failed", path);
        cr_assert(strstr(out, "libc.so"), "%s: no libc among: %s", path, out);
}

Test(cli, psrun_and_libpsrun_load_no_libm)
{
        /* Each library the dynamic linker maps costs every start (mmaps,
         * relocations, page faults): the one use psrun had of libm, the cpu
         * shares curve, is computed by hand. */
        if (system("command -v readelf >/dev/null 2>&1") != 0)
                cr_skip_test("readelf (binutils) is not installed here (the kernel-matrix VM has "
                             "none; the build host checks it)");
        char needed[4096], lib[4200];
        needed_of(test_psrun_path(), needed, sizeof(needed));
        cr_expect_not(strstr(needed, "libm.so"), "psrun loads libm: %s", needed);
        snprintf(lib, sizeof(lib), "%s", test_psrun_path());
        char *slash = strrchr(lib, '/');
        cr_assert(slash);
        snprintf(slash + 1, sizeof(lib) - (size_t) (slash + 1 - lib), "libpsrun.so");
        needed_of(lib, needed, sizeof(needed));
        cr_expect_not(strstr(needed, "libm.so"), "libpsrun.so loads libm: %s", needed);
}
