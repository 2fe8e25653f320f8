/* SPDX-License-Identifier: MIT */
/* Where an image root comes from and what is checked before it runs
 * (docs/policy.md, "Images" and "tools"): a `docker save` archive as
 * `image: docker-archive:FILE`, imported at its first use; `tools` checked
 * by `psrun run` before the command starts; a reference's grammar checked
 * by the planner; and eight sandboxes at once on one image
 * sharing the store's layers, no copy made. */
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integration/common.h"
#include "integration/image.h"

TEST_IMAGE_SUITE(image_sources, img, test_require_root);

static void expect_one_line(struct test_run *r, const char *needle)
{
        cr_expect_eq(r->status, 125, "exit %d, stderr: %s", r->status, r->err);
        cr_expect(strstr(r->err, needle), "stderr lacks `%s`: %s", needle, r->err);
        cr_expect(strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "not one line: %s", r->err);
}

Test(image_sources, docker_archive_imported_at_first_use_and_verified)
{
        if (test_sh("command -v skopeo >/dev/null") != 0)
                cr_skip_test("skopeo not installed (it writes the docker-archive)");
        char cmd[2048], opt[600];
        snprintf(cmd, sizeof(cmd),
                 "cd %s && skopeo --insecure-policy copy -q oci:layout:v1 "
                 "docker-archive:img.tar:test/img:v1 >/dev/null 2>&1",
                 img.dir);
        cr_assert_eq(test_sh(cmd), 0, "skopeo could not write the archive: %s", cmd);
        snprintf(opt, sizeof(opt), "image=docker-archive:%s/img.tar", img.dir);
        struct test_run r;
        for (int i = 0; i < 2; i++) {
                const char *const argv[] = {
                        "run",     "-o",      opt,
                        "-o",      img.store, "--",
                        "/bin/sh", "-c",      "cat /etc/image-only; echo $IMG_VAR; pwd",
                        NULL};
                test_run_psrun(&r, argv);
                cr_expect_eq(r.status, 0, "run %d: stderr: %s", i, r.err);
                cr_expect_str_eq(r.out, "from-the-image\nfrom-image\n/app\n", "run %d", i);
                test_run_free(&r);
        }
        /* Recorded once, by its absolute path, as `psrun image import` names it. */
        char listing[700];
        snprintf(listing, sizeof(listing), "%s/store", img.dir);
        const char *const ls[] = {"image", "ls", "-q", "--store", listing, NULL};
        test_run_psrun(&r, ls);
        char want[600];
        snprintf(want, sizeof(want), "docker-archive:%s/img.tar", img.dir);
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect(strstr(r.out, want), "ls: %s", r.out);
        test_run_free(&r);

        /* A layer blob altered in a second archive: refused naming its
         * digest, nothing recorded. */
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd %s; mkdir bad; tar -xf img.tar -C bad; "
                 "f=$(cd bad && python3 -c 'import json; print(json.load(open(\"manifest.json\"))"
                 "[0][\"Layers\"][0])'); printf tamp | dd of=bad/$f bs=1 seek=600 conv=notrunc "
                 "status=none; (cd bad && tar -cf ../bad.tar *)",
                 img.dir);
        cr_assert_eq(test_sh(cmd), 0, "%s", cmd);
        /* (a store of its own: the first has the good blob by that digest) */
        char store2[600];
        snprintf(opt, sizeof(opt), "image=docker-archive:%s/bad.tar", img.dir);
        snprintf(store2, sizeof(store2), "image_store=%s/store-bad", img.dir);
        const char *const bad[] = {"run", "-o", opt, "-o", store2, "--", "/bin/true", NULL};
        test_run_psrun(&r, bad);
        expect_one_line(&r, "does not match");
        test_run_free(&r);
        const char *const missing[] = {
                "run",       "-o", "image=docker-archive:/nonexistent.tar", "-o", img.store, "--",
                "/bin/true", NULL};
        test_run_psrun(&r, missing);
        expect_one_line(&r, "image: docker-archive:/nonexistent.tar: No such file or directory");
        test_run_free(&r);
}

Test(image_sources, run_checks_tools_before_the_command_starts)
{
        struct test_run r;
        const char *const missing[] = {
                "run", "-o",        img.ref,   "-o", img.store, "-o", "tools=[sh, node]",
                "--",  "/bin/echo", "started", NULL};
        test_run_psrun(&r, missing);
        char want[700];
        snprintf(want, sizeof(want),
                 "tools: `node` is not in the root of oci:%s:v1 (no node or nodejs on PATH)",
                 img.layout);
        expect_one_line(&r, want);
        cr_expect_str_eq(r.out, "", "the command ran");
        test_run_free(&r);

        const char *const present[] = {"run",        "-o", img.ref,     "-o",      img.store, "-o",
                                       "tools=[sh]", "--", "/bin/echo", "started", NULL};
        test_run_psrun(&r, present);
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "started\n");
        test_run_free(&r);
}

Test(image_sources, reference_grammar_refused_by_the_planner_before_the_store)
{
        char store[600];
        snprintf(store, sizeof(store), "image_store=%s/never-made", img.dir);
        struct test_run r;
        const char *const argv[] = {"run", "-o", "image=a/UPPER", "-o", store, "--", "true", NULL};
        test_run_psrun(&r, argv);
        expect_one_line(&r, "image: `a/UPPER`: repository name must be lowercase");
        test_run_free(&r);
        snprintf(store, sizeof(store), "%s/never-made", img.dir);
        cr_expect_neq(access(store, F_OK), 0, "the store was made for a refused reference");
}

/* Eight sandboxes started at once on one image: each sees the image, all
 * share the store's unpacked layers (the store's layers/ the same bytes
 * and entries before, while the eight hold it, and after), nothing left in
 * tmp/. */
Test(image_sources, eight_at_once_share_the_layers, .timeout = 120)
{
        char cmd[4096], psrun[PATH_MAX];
        cr_assert_not_null(realpath(test_psrun_path(), psrun));
        /* The first run imports the image; the eight find it. */
        snprintf(cmd, sizeof(cmd),
                 "set -e; cd %s; P=%s; mkdir gate; "
                 "$P run -o %s -o %s -- /bin/true; "
                 "du -sb --apparent-size store/layers | cut -f1 > du0; "
                 "find store/layers | sort > ls0; "
                 "for i in 1 2 3 4 5 6 7 8; do "
                 "$P run -o %s -o %s -o mounts=%s/gate:/gate:ro -- /bin/sh -c "
                 "'cat /etc/image-only; while [ ! -e /gate/go ]; do sleep 0.05; done; echo done' "
                 ">out.$i 2>err.$i & echo $! >>pids; done; "
                 "n=0; while [ $(cat out.* | grep -c from-the-image) -lt 8 ] && [ $n -lt 600 ]; do "
                 "sleep 0.1; n=$((n+1)); done; "
                 "du -sb --apparent-size store/layers | cut -f1 > du1; "
                 "find store/layers | sort > ls1; "
                 "touch gate/go; fail=0; for p in $(cat pids); do wait $p || fail=1; done; "
                 "du -sb --apparent-size store/layers | cut -f1 > du2; echo $fail > fail",
                 img.dir, psrun, img.ref, img.store, img.ref, img.store, img.dir);
        cr_assert_eq(test_sh(cmd), 0, "the runs could not be started: %s", cmd);
        char check[1024];
        snprintf(check, sizeof(check),
                 "cd %s && [ \"$(cat fail)\" = 0 ] && cmp -s du0 du1 && cmp -s du0 du2 && "
                 "cmp -s ls0 ls1 && [ -z \"$(ls -A store/tmp)\" ] && "
                 "[ $(cat out.* | grep -cx from-the-image) = 8 ] && [ $(cat out.* | grep -cx done) "
                 "= 8 ]",
                 img.dir);
        int rc = test_sh(check);
        if (rc != 0) {
                snprintf(cmd, sizeof(cmd),
                         "cd %s; echo fail=$(cat fail) du $(cat du0) $(cat du1) $(cat du2) >&2; "
                         "diff ls0 ls1 >&2; ls -A store/tmp >&2; head -c 400 out.* err.* >&2",
                         img.dir);
                test_sh(cmd);
        }
        cr_expect_eq(rc, 0, "the eight did not share one copy of the image (see stderr)");
}
