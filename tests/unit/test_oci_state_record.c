/* SPDX-License-Identifier: MIT */
/*
 * The OCI state record: atomic state.json, corrupt files, hostile strings in
 * the JSON, liveness and pid reuse, and the create/start FIFO handshake.
 */
#include "oci_state_test.h"

TestSuite(oci_state_record, .init = setup, .fini = teardown, .timeout = 30);

/* ---- state.json ---- */

static void fill_everything(struct oci_state *s, const char *id)
{
        psrun_error err = {0};

        make_state(s, id);
        s->status = OCI_STATUS_RUNNING;
        s->pid = 4242;
        s->pid_start_time = 18446744073709551615ULL;
        s->rootfs = strdup("/bundles/b/rootfs");
        s->owner = strdup("root");
        s->detached = true;
        s->no_new_keyring = true;
        cr_assert_eq(oci_state_add_annotation(s, "org.example/a", "1", &err), 0);
        cr_assert_eq(oci_state_add_annotation(s, "b", "", &err), 0);
        cr_assert_eq(oci_state_add_cgroup_path(s, "memory:/psrun/x", &err), 0);
        cr_assert_eq(oci_state_add_cgroup_path(s, ":/psrun/x", &err), 0);
}

Test(oci_state_record, write_read_round_trip_and_no_tmp_left)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "rt");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        psrun_error err = {0};

        fill_everything(&s, "rt");
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_expect_not(exists_at(oci_container_dir_fd(c), "state.json.tmp"));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        assert_state_eq(&s, &back);

        /* NULL rootfs, owner and no lists come back as NULL. */
        oci_state_free(&s);
        make_state(&s, "rt");
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        assert_state_eq(&s, &back);
        cr_expect_null(back.rootfs);
        cr_expect_null(back.annotations);
        cr_expect_null(back.cgroup_paths);
}

Test(oci_state_record, write_needs_exclusive_lock)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "w");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        psrun_error err = {0};

        make_state(&s, "w");
        oci_container_unlock(c);
        cr_expect_eq(oci_state_write(c, &s, &err), -ENOLCK);
        cr_expect_str_eq(err.msg, "container \"w\": state written without the exclusive lock");
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_SHARED, &err), 0);
        cr_expect_eq(oci_state_write(c, &s, &err), -ENOLCK);
        cr_expect_eq(oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err), -EINVAL);
        cr_expect(strstr(err.msg, "already locked shared"), "%s", err.msg);
        oci_container_unlock(c);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err), 0);
        cr_assert_eq(oci_container_lock(c, OCI_LOCK_EXCLUSIVE, &err), 0); /* no-op */
        cr_expect_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
}

Test(oci_state_record, crash_before_rename_keeps_old_state)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "crash");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        psrun_error err = {0};
        int dir_fd = oci_container_dir_fd(c);

        make_state(&s, "crash");
        s.status = OCI_STATUS_CREATED;
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);

        /* A writer died after writing half of its .tmp: readers see the old state. */
        const char *half = "{\n  \"ociVersion\": \"1.2.0\",\n  \"id\": \"cr";
        write_at(dir_fd, "state.json.tmp", half, strlen(half));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.status, OCI_STATUS_CREATED);

        /* The next writer replaces the leftover and leaves no .tmp behind. */
        s.status = OCI_STATUS_RUNNING;
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_expect_not(exists_at(dir_fd, "state.json.tmp"));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.status, OCI_STATUS_RUNNING);

        /* A failed write (invalid UTF-8) leaves the state as it was, no .tmp. */
        s.status = OCI_STATUS_STOPPED;
        s.owner = strdup("\xc0\xaf");
        cr_expect_eq(oci_state_write(c, &s, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"crash\": state: owner is not valid UTF-8");
        cr_expect_not(exists_at(dir_fd, "state.json.tmp"));
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.status, OCI_STATUS_RUNNING);
}

Test(oci_state_record, corrupt_state_json)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "bad");
        _cleanup_(oci_state_free) struct oci_state good = {0};
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_free_ char *text = NULL;
        psrun_error err = {0};
        int dir_fd = oci_container_dir_fd(c);

        fill_everything(&good, "bad");
        cr_assert_eq(oci_state_write(c, &good, &err), 0, "%s", err.msg);
        text = strdup(read_at(dir_fd, "state.json"));

#define HEAD "{\"ociVersion\": \"1.2.0\", \"id\": \"bad\", "
#define TAIL "\"bundle\": \"/b\", \"created\": \"2024-01-01T00:00:00Z\"}"
        const struct {
                const char *text;
                size_t len; /* 0: strlen */
                const char *message;
        } cases[] = {
                {text, strlen(text) / 2, "container \"bad\": state.json:"},
                {"", 0, "container \"bad\": state.json: corrupt: empty"},
                {"   \n", 0, "state.json: corrupt: empty"},
                {"{\"id\": \"bad\"", 0,
                 "state.json:2:1: corrupt: did not find expected ',' or '}'"},
                {"[]", 0, "state.json:1:1: expected an object"},
                {"not json", 0, "state.json:1:1: expected an object"},
                {"{}\n---\n{}", 0, "more than one document"},
                {HEAD "\"pid\": 1, \"status\": \"running\"}", 0, "missing \"bundle\""},
                {HEAD "\"pid\": -1, \"status\": \"running\", " TAIL, 0,
                 "pid: expected a non-negative integer"},
                {HEAD "\"pid\": \"7\", \"status\": \"running\", " TAIL, 0,
                 "pid: expected a non-negative integer"},
                {HEAD "\"pid\": 99999999999, \"status\": \"running\", " TAIL, 0,
                 "pid: out of range"},
                {HEAD "\"pid\": 1, \"status\": \"bogus\", " TAIL, 0,
                 "status: \"bogus\" is not one of creating, created, running, paused, stopped"},
                {HEAD "\"pid\": 1, \"status\": running, " TAIL, 0, "status: expected a string"},
                {HEAD "\"pid\": 1, \"pid\": 2, \"status\": \"running\", " TAIL, 0,
                 "duplicate key \"pid\""},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"owner\": \"a\\u0000b\", " TAIL, 0,
                 "owner: contains a NUL character"},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"annotations\": [], " TAIL, 0,
                 "annotations: expected an object"},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"annotations\": {\"k\": \"1\", "
                      "\"k\": \"2\"}, " TAIL,
                 0, "annotations: duplicate key \"k\""},
                {HEAD "\"pid\": 1, \"status\": \"running\", \"psrun\": {\"detached\": 1}, " TAIL, 0,
                 "psrun.detached: expected true or false"},
                {HEAD
                 "\"pid\": 1, \"status\": \"running\", \"psrun\": {\"cgroupPaths\": \"x\"}, " TAIL,
                 0, "psrun.cgroupPaths: expected a list"},
                {"{\"ociVersion\": \"1.2.0\", \"id\": \"other\", \"pid\": 1, \"status\": "
                 "\"running\", " TAIL,
                 0, "container \"bad\": state.json is for id \"other\" instead"},
                {"{\"ociVersion\": \"1.2.0\", \"id\": \"a/b\", \"pid\": 1, \"status\": "
                 "\"running\", " TAIL,
                 0, "state.json: id \"a/b\" is not a valid id"},
                {"{\"id\": \"b\xff\"}", 0, "state.json:1:10: corrupt: invalid"},
        };
#undef HEAD
#undef TAIL
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
                write_at(dir_fd, "state.json", cases[i].text, len);
                cr_expect_eq(oci_state_read(c, &s, &err), -EBADMSG, "case %zu: %s", i, err.msg);
                cr_expect(strstr(err.msg, cases[i].message), "case %zu: %s", i, err.msg);
                cr_expect_null(strchr(err.msg, '\n'), "case %zu: not one line", i);
                cr_expect_null(s.id, "case %zu: state left filled", i);
        }

        /* Unknown keys are skipped; a compact (runc-like) file reads too. */
        const char *compact = "{\"ociVersion\":\"1.2.0\",\"id\":\"bad\",\"pid\":12,\"status\":"
                              "\"paused\",\"bundle\":\"/b\",\"created\":\"x\",\"future\":{\"a\":"
                              "[1,2]},\"psrun\":{\"more\":true}}";
        write_at(dir_fd, "state.json", compact, strlen(compact));
        cr_assert_eq(oci_state_read(c, &s, &err), 0, "%s", err.msg);
        cr_expect_eq(s.pid, 12);
        cr_expect_eq(s.status, OCI_STATUS_PAUSED);

        /* Not a regular file: a FIFO in its place must not hang the reader. */
        cr_assert_eq(unlinkat(dir_fd, "state.json", 0), 0);
        cr_assert_eq(mkfifoat(dir_fd, "state.json", 0600), 0);
        cr_expect_eq(oci_state_read(c, &s, &err), -EBADMSG);
        cr_expect(strstr(err.msg, "not a regular file"), "%s", err.msg);
}

Test(oci_state_record, parse_is_pure_and_bounded)
{
        _cleanup_(oci_state_free) struct oci_state s = {0};
        psrun_error err = {0};
        size_t big = (4 << 20) + 1;
        _cleanup_free_ char *huge = malloc(big);

        memset(huge, ' ', big);
        cr_expect_eq(oci_state_parse(&s, "x.json", huge, big, &err), -EFBIG);
        cr_expect_str_eq(err.msg, "x.json: larger than 4 MiB");
        cr_expect_eq(oci_state_parse(&s, NULL, NULL, 0, NULL), -EBADMSG);
        /* Aliases can't loop the walk: they only reach nodes the table knows. */
        const char *alias = "{ociVersion: &v \"1\", id: \"a\", pid: 1, status: \"created\", "
                            "bundle: *v, created: *v, annotations: &m {\"k\": *v}}";
        cr_assert_eq(oci_state_parse(&s, NULL, alias, strlen(alias), &err), 0, "%s", err.msg);
        cr_expect_str_eq(s.bundle, "1");
        cr_expect_str_eq(s.annotations[0].value, "1");
}

/* Issue 10: 100,000 annotations took 13 s (a pairwise duplicate check and
 * growth by one); now linear-ish, and a duplicate is still found. */
Test(oci_state_record, many_annotations_parse_fast)
{
        _cleanup_(oci_state_free) struct oci_state s = {0};
        psrun_error err = {0};
        size_t n = 100000, cap = n * 32 + 256, o = 0;
        _cleanup_free_ char *doc = malloc(cap);
        cr_assert_not_null(doc);
        o += (size_t) snprintf(doc + o, cap - o,
                               "{\"ociVersion\": \"1\", \"id\": \"a\", \"pid\": 1, "
                               "\"status\": \"created\", \"bundle\": \"/b\", \"created\": "
                               "\"x\", \"annotations\": {");
        for (size_t i = 0; i < n; i++)
                o += (size_t) snprintf(doc + o, cap - o, "%s\"k%06zu\": \"v\"", i ? "," : "", i);
        size_t body = o;
        o += (size_t) snprintf(doc + o, cap - o, "}}");
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(oci_state_parse(&s, "s.json", doc, o, &err), 0, "%s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        cr_expect_lt(secs, 2.0, "100000 annotations took %.2f s", secs);
        cr_expect_eq(s.n_annotations, n);
        cr_expect_str_eq(s.annotations[n - 1].key, "k099999");
        /* The same key twice, far apart. */
        o = body + (size_t) snprintf(doc + body, cap - body, ",\"k000007\": \"w\"}}");
        cr_expect_eq(oci_state_parse(&s, "s.json", doc, o, &err), -EBADMSG);
        cr_expect(strstr(err.msg, "duplicate key \"k000007\""), "%s", err.msg);
}

/* ---- hostile strings ---- */

static bool valid_utf8(const unsigned char *p)
{
        while (*p) {
                int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;
                if (*p >= 0xf8 || (*p >= 0x80 && *p < 0xc2))
                        return false;
                for (int i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                p += n;
        }
        return true;
}

Test(oci_state_record, hostile_annotations_round_trip_exactly)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "h");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        _cleanup_(oci_state_free) struct oci_state printed = {0};
        psrun_error err = {0};
        const char *hostile[][2] = {
                {"quote\"key", "a \"quoted\" value"},
                {"back\\slash", "C:\\path\\"},
                {"nl", "line1\nline2\r\n\ttab"},
                {"ctl", "\x01\x02\x1b[31mred\x1b[0m\x1f\x7f"},
                {"c1", "\xc2\x80 \xc2\x85 \xc2\x9f"}, /* U+0080, NEL, U+009F */
                {"seps", "a\xe2\x80\xa8"
                         "b\xe2\x80\xa9"
                         "c"},                                        /* U+2028, U+2029 */
                {"nonchars", "\xef\xbb\xbf\xef\xbf\xbe\xef\xbf\xbf"}, /* BOM, U+FFFE, U+FFFF */
                {"emoji \xf0\x9f\x90\xb3", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"},
                {"yaml", "&anchor *alias !tag {a: b} [1] # not a comment : -"},
                {"json", "\"}, \"pid\": 1, \"x\": {\""},
                {"spaces", "  leading and trailing  "},
        };

        make_state(&s, "h");
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++)
                cr_assert_eq(oci_state_add_annotation(&s, hostile[i][0], hostile[i][1], &err), 0,
                             "%s", err.msg);
        cr_expect_eq(oci_state_add_annotation(&s, "nl", "again", &err), -EEXIST);
        cr_expect_str_eq(err.msg, "annotation \"nl\" given twice");
        cr_assert_eq(oci_state_write(c, &s, &err), 0, "%s", err.msg);
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        assert_state_eq(&s, &back);

        /* The file holds no raw control characters: one JSON token per line. */
        const unsigned char *file =
                (const unsigned char *) read_at(oci_container_dir_fd(c), "state.json");
        for (const unsigned char *p = file; *p; p++)
                cr_expect(*p >= 0x20 || *p == '\n', "raw byte 0x%02x in state.json", *p);
        cr_expect(valid_utf8(file));
        cr_expect(strstr((const char *) file, "\\u2028"), "%s", file);

        /* The public view parses back to the same annotations. */
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        cr_assert_eq(oci_state_print_json(&s, f), 0);
        fclose(f);
        _cleanup_free_ char *owned = out;
        cr_expect(valid_utf8((const unsigned char *) out));
        cr_assert_eq(oci_state_parse(&printed, "print", out, len, &err), 0, "%s\n%s", err.msg, out);
        cr_assert_eq(printed.n_annotations, ARRAY_SIZE(hostile));
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
                cr_expect_str_eq(printed.annotations[i].key, hostile[i][0]);
                cr_expect_str_eq(printed.annotations[i].value, hostile[i][1], "%s", hostile[i][0]);
        }
        /* No C1 control (U+009B is a terminal's CSI) reaches the output raw. */
        cr_expect_null(strstr(out, "\xc2\x80"));
        cr_expect_null(strstr(out, "\xc2\x9f"));
}

Test(oci_state_record, invalid_utf8_is_escaped_in_print_and_refused_in_file)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "u");
        _cleanup_(oci_state_free) struct oci_state s = {0};
        _cleanup_(oci_state_free) struct oci_state back = {0};
        psrun_error err = {0};
        const char *bad[] = {
                "\xff",             /* never valid */
                "\xc0\xaf",         /* overlong '/' */
                "\xed\xa0\x80",     /* a surrogate */
                "\xf4\x90\x80\x80", /* past U+10FFFF */
                "ok\xe2\x82",       /* truncated */
        };

        make_state(&s, "u");
        cr_assert_eq(oci_state_add_annotation(&s, "k", "x", &err), 0);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                free(s.annotations[0].value);
                s.annotations[0].value = strdup(bad[i]);
                cr_expect_eq(oci_state_write(c, &s, &err), -EINVAL, "case %zu", i);
                cr_expect_str_eq(err.msg,
                                 "container \"u\": state: annotations[\"k\"] is not valid UTF-8");

                char *out = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&out, &len);
                cr_assert_eq(oci_state_print_json(&s, f), 0);
                fclose(f);
                cr_expect(valid_utf8((const unsigned char *) out), "case %zu: %s", i, out);
                cr_expect(strstr(out, "\\u00"), "case %zu: %s", i, out);
                cr_expect_eq(oci_state_parse(&back, "print", out, len, &err), 0, "%s", err.msg);
                free(out);
        }
        free(s.annotations[0].value);
        s.annotations[0].value = strdup("fine");
        free(s.annotations[0].key);
        s.annotations[0].key = strdup("\xfe");
        cr_expect_eq(oci_state_write(c, &s, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"u\": state: annotations key \"\xfe\" is not valid "
                                  "UTF-8");
        /* Nothing of that reached the disk. */
        cr_assert_eq(oci_state_read(c, &back, &err), 0, "%s", err.msg);
        cr_expect_eq(back.n_annotations, 0);
}

Test(oci_state_record, print_json_like_runc_state)
{
        struct oci_state s = {
                .oci_version = "1.2.0",
                .id = "web",
                .status = OCI_STATUS_RUNNING,
                .pid = 4242,
                .bundle = "/b",
                .rootfs = "/b/rootfs",
                .created = "2024-05-01T12:34:56.123456789Z",
                .owner = NULL,
                .pid_start_time = 99,
                .detached = true,
        };
        struct oci_annotation a[] = {{"z", "1"}, {"a", "2"}};
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        cr_assert_eq(oci_state_print_json(&s, f), 0);
        s.annotations = a;
        s.n_annotations = 2;
        s.status = OCI_STATUS_STOPPED;
        s.pid = 0;
        cr_assert_eq(oci_state_print_json(&s, f), 0);
        fclose(f);
        cr_expect_str_eq(out, "{\n"
                              "  \"ociVersion\": \"1.2.0\",\n"
                              "  \"id\": \"web\",\n"
                              "  \"pid\": 4242,\n"
                              "  \"status\": \"running\",\n"
                              "  \"bundle\": \"/b\",\n"
                              "  \"rootfs\": \"/b/rootfs\",\n"
                              "  \"created\": \"2024-05-01T12:34:56.123456789Z\",\n"
                              "  \"owner\": \"\"\n"
                              "}\n"
                              "{\n"
                              "  \"ociVersion\": \"1.2.0\",\n"
                              "  \"id\": \"web\",\n"
                              "  \"pid\": 0,\n"
                              "  \"status\": \"stopped\",\n"
                              "  \"bundle\": \"/b\",\n"
                              "  \"rootfs\": \"/b/rootfs\",\n"
                              "  \"created\": \"2024-05-01T12:34:56.123456789Z\",\n"
                              "  \"owner\": \"\",\n"
                              "  \"annotations\": {\n"
                              "    \"z\": \"1\",\n"
                              "    \"a\": \"2\"\n"
                              "  }\n"
                              "}\n");
        free(out);
}

/* ---- liveness ---- */

static struct oci_state running_state(pid_t pid, uint64_t start_time)
{
        struct oci_state s = {
                .status = OCI_STATUS_RUNNING, .pid = pid, .pid_start_time = start_time};
        return s;
}

Test(oci_state_record, proc_stat_reads_start_time)
{
        uint64_t a = 0, b = 0;
        char st = 0;

        cr_assert_eq(oci_proc_stat(getpid(), &st, &a), 0);
        cr_expect_eq(st, 'R');
        cr_expect_gt(a, 0);
        cr_assert_eq(oci_proc_stat(getpid(), NULL, &b), 0);
        cr_expect_eq(a, b);
        cr_expect_eq(oci_proc_stat(0, NULL, NULL), -EINVAL);
        cr_expect_eq(oci_proc_stat(INT_MAX, NULL, NULL), -ENOENT);
}

Test(oci_state_record, refresh_live_dead_zombie_and_reused_pids)
{
        struct oci_state s;
        uint64_t self_start;
        psrun_error err = {0};
        int status;

        cr_assert_eq(oci_proc_stat(getpid(), NULL, &self_start), 0);

        /* Our own pid with its real start time: still running. */
        s = running_state(getpid(), self_start);
        cr_expect_eq(oci_state_refresh(&s), 0);
        cr_expect_eq(s.status, OCI_STATUS_RUNNING);
        cr_expect_eq(s.pid, getpid());

        /* The same pid with another start time is another process. */
        s = running_state(getpid(), self_start + 1);
        cr_expect_eq(oci_state_refresh(&s), 1);
        cr_expect_eq(s.status, OCI_STATUS_STOPPED);
        cr_expect_eq(s.pid, 0);
        cr_expect_eq(s.pid_start_time, 0);

        /* A sleeping child, then the same child killed and reaped. */
        pid_t child = fork();
        cr_assert_geq(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        s = (struct oci_state){.status = OCI_STATUS_CREATED};
        cr_assert_eq(oci_state_set_pid(&s, child, &err), 0, "%s", err.msg);
        cr_expect_gt(s.pid_start_time, 0);
        cr_expect_eq(oci_state_refresh(&s), 0);
        cr_expect_eq(s.status, OCI_STATUS_CREATED);
        s.status = OCI_STATUS_PAUSED;
        cr_expect_eq(oci_state_refresh(&s), 0);

        /* Killed but not reaped: a zombie is stopped. */
        kill(child, SIGKILL);
        for (int i = 0; i < 200; i++) {
                char st = 0;
                if (oci_proc_stat(child, &st, NULL) == 0 && st == 'Z')
                        break;
                usleep(10 * 1000);
        }
        struct oci_state zombie = s;
        cr_expect_eq(oci_state_refresh(&zombie), 1);
        cr_expect_eq(zombie.status, OCI_STATUS_STOPPED);

        cr_assert_eq(waitpid(child, &status, 0), child);
        cr_expect_eq(oci_state_refresh(&s), 1);
        cr_expect_eq(s.status, OCI_STATUS_STOPPED);
        cr_expect_eq(oci_state_set_pid(&s, child, &err), -ENOENT);

        /* Statuses without a live process are left alone; no pid is stopped. */
        s = running_state(child, 0);
        s.status = OCI_STATUS_CREATING;
        cr_expect_eq(oci_state_refresh(&s), 0);
        cr_expect_eq(s.status, OCI_STATUS_CREATING);
        s.status = OCI_STATUS_STOPPED;
        cr_expect_eq(oci_state_refresh(&s), 0);
        s = running_state(0, 0);
        cr_expect_eq(oci_state_refresh(&s), 1);
}

/* ---- the create/start handshake ---- */

Test(oci_state_record, fifo_handshake_between_processes)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "hs");
        char path[PATH_MAX], expected[PATH_MAX + 32], byte = 0;
        psrun_error err = {0};
        struct stat st;
        int status;

        cr_assert_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), 0, "%s", err.msg);
        cr_assert_eq(fstatat(oci_container_dir_fd(c), OCI_EXEC_FIFO, &st, AT_SYMLINK_NOFOLLOW), 0);
        cr_expect(S_ISFIFO(st.st_mode));
        cr_expect_eq(st.st_mode & 07777, 0600);
        cr_expect_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), -EEXIST);
        cr_expect_str_eq(err.msg, "container \"hs\": exec.fifo already exists");
        cr_assert_eq(oci_container_fifo_path(c, OCI_EXEC_FIFO, path, sizeof(path)), 0);
        snprintf(expected, sizeof(expected), "%s/hs/exec.fifo", root_path);
        cr_expect_str_eq(path, expected);
        char small[8];
        cr_expect_eq(oci_container_fifo_path(c, OCI_EXEC_FIFO, small, sizeof(small)),
                     -ENAMETOOLONG);

        /* create ends here: the "init" blocks opening the FIFO for writing. */
        oci_container_unlock(c);
        pid_t init = fork();
        cr_assert_geq(init, 0);
        if (init == 0) {
                int fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, "0", 1) != 1)
                        _exit(100);
                close(fd);
                _exit(42); /* stands for execve() of the user process */
        }
        usleep(200 * 1000);
        char st_letter = 0;
        cr_expect_eq(waitpid(init, &status, WNOHANG), 0, "init did not block");
        cr_expect_eq(oci_proc_stat(init, &st_letter, NULL), 0);
        cr_expect_eq(st_letter, 'S');

        /* start: a non-blocking open, a poll, the byte, and init goes on. */
        int fd = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_RDONLY | O_NONBLOCK, &err);
        cr_assert_geq(fd, 0, "%s", err.msg);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        cr_assert_eq(poll(&pfd, 1, 5000), 1);
        cr_assert_eq(read(fd, &byte, 1), 1);
        cr_expect_eq(byte, '0');
        close(fd);
        cr_assert_eq(waitpid(init, &status, 0), init);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 42, "status %d", status);

        /* A second start finds no writer: EOF, not a hang. */
        fd = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_RDONLY | O_NONBLOCK, &err);
        cr_assert_geq(fd, 0, "%s", err.msg);
        cr_expect_eq(read(fd, &byte, 1), 0);
        close(fd);

        cr_assert_eq(oci_container_delete(c, &err), 0, "%s", err.msg);
        assert_root_holds(root, "");
}

Test(oci_state_record, fifo_names_and_types_checked)
{
        _cleanup_(oci_root_closep) struct oci_root *root = open_root();
        _cleanup_(oci_container_closep) struct oci_container *c = create(root, "f");
        psrun_error err = {0};
        char path[PATH_MAX];
        const char *bad[] = {"", ".", "..", "a/b", "../x", "state.json", "lock", "state.json.tmp"};

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_expect_eq(oci_container_make_fifo(c, bad[i], &err), -EINVAL, "%s", bad[i]);
                cr_expect(strstr(err.msg, "is not a FIFO name"), "%s", err.msg);
                cr_expect_eq(oci_container_open_fifo(c, bad[i], O_PATH, &err), -EINVAL);
                cr_expect_eq(oci_container_fifo_path(c, bad[i], path, sizeof(path)), -EINVAL);
        }
        cr_expect_eq(oci_container_open_fifo(c, OCI_EXEC_FIFO, O_PATH, &err), -ENOENT);
        cr_expect_str_eq(err.msg, "container \"f\": exec.fifo does not exist");
        write_at(oci_container_dir_fd(c), "plain", "x", 1);
        cr_expect_eq(oci_container_open_fifo(c, "plain", O_RDONLY, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "container \"f\": plain is not a FIFO");
        cr_assert_eq(symlinkat("/dev/null", oci_container_dir_fd(c), "sym"), 0);
        cr_expect_lt(oci_container_open_fifo(c, "sym", O_RDONLY, &err), 0);

        /* An O_PATH fd is what create hands to the child. */
        cr_assert_eq(oci_container_make_fifo(c, OCI_EXEC_FIFO, &err), 0, "%s", err.msg);
        int fd = oci_container_open_fifo(c, OCI_EXEC_FIFO, O_PATH, &err);
        cr_assert_geq(fd, 0, "%s", err.msg);
        cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
}
