/* SPDX-License-Identifier: MIT */
/*
 * The planning layer without root or a kernel feature: a plan built from a
 * policy text and from a config.json, checked through its mount steps
 * (mount_step_describe), environment, capabilities, rlimits and limits.
 * Nothing is cloned or mounted.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "policy/policy.h"
#include "rootfs/mounts.h"
#include "rootfs/rootfs.h"
#include "runtime/oci/config.h"
#include "runtime/oci/plan.h"
#include "runtime/plan.h"
#include "runtime/run.h"

/* The index of the first step described as `want` at or after `from`, or -1. */
static long find_step(const struct plan *p, size_t from, const char *want)
{
        char buf[512];
        for (size_t i = from; i < p->rootfs.n_steps; i++) {
                mount_step_describe(&p->rootfs.steps[i], buf, sizeof(buf));
                if (strcmp(buf, want) == 0)
                        return (long) i;
        }
        return -1;
}

static bool has_env(const struct plan *p, const char *entry)
{
        for (char **e = p->envp; e && *e; e++)
                if (strcmp(*e, entry) == 0)
                        return true;
        return false;
}

static void policy_from_text(struct policy *pol, const char *text)
{
        psrun_error err = {0};
        cr_assert_eq(policy_init(pol), 0);
        cr_assert_eq(policy_load_buffer(pol, "test.yaml", text, strlen(text), &err), 0, "%s",
                     err.msg);
}

/* Plans text in a bundle of an empty rootfs/ (made and removed here: the
 * planner only resolves it). */
static void oci_plan_from_text(struct oci_config *c, struct plan *p, const char *text,
                               psrun_error *err, int want)
{
        char bundle[64], rootfs[80];
        test_tmp_template(bundle, sizeof(bundle), "psrun-test-plan");
        cr_assert_not_null(mkdtemp(bundle));
        snprintf(rootfs, sizeof(rootfs), "%s/rootfs", bundle);
        cr_assert_eq(mkdir(rootfs, 0755), 0);
        struct oci_plan_options o = {.bundle = bundle};
        int r = oci_config_parse(text, strlen(text), c, err);
        if (r == 0)
                r = plan_from_oci(c, &o, p, err);
        rmdir(rootfs);
        rmdir(bundle);
        cr_assert_eq(r, want, "%s", err->msg);
}

Test(plan, from_policy)
{
        static const char text[] = "memory_limit: 256M\n"
                                   "pids_limit: 10\n"
                                   "timeout: 7s\n"
                                   "hostname: box\n"
                                   "landlock: off\n"
                                   "apparmor: off\n"
                                   "env: {FOO: bar}\n";
        _cleanup_(policy_free) struct policy pol;
        policy_from_text(&pol, text);
        char *argv[] = {"true", NULL};
        struct plan_options ro = {0};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        cr_assert_eq(plan_from_policy(&pol, argv, &ro, &p, &err), 0, "%s", err.msg);

        /* What the parent enforces: the backends read these, not the policy. */
        cr_assert_eq(p.limits.memory_bytes, 256ULL << 20);
        cr_assert_eq(p.limits.pids_max, 11, "psrun's init is one more pid");
        cr_assert_eq(p.timeout_ms, 7000);

        cr_assert(has_env(&p, "FOO=bar"));
        cr_assert(has_env(&p, "HOME=/workspace"));
        cr_assert_not_null(p.path_env);
        cr_assert_str_eq(p.argv[0], "true");
        cr_assert_str_eq(p.hostname, "box");

        /* Every capability dropped, no_new_privs. */
        cr_assert_eq(p.caps.bounding, 0);
        cr_assert_eq(p.caps.effective | p.caps.permitted | p.caps.inheritable | p.caps.ambient, 0);
        cr_assert(p.no_new_privs);

        /* /proc with its masks, /dev from the host's harmless nodes, in that
         * order, and /dev read-only after its last step. */
        long proc = find_step(&p, 0, "mount proc on /proc");
        cr_assert_geq(proc, 0);
        cr_assert_gt(find_step(&p, (size_t) proc, "mask /proc/kcore"), proc);
        long null_node = find_step(&p, 0, "bind /dev/null on /dev/null");
        cr_assert_geq(null_node, 0);
        cr_assert_gt(find_step(&p, (size_t) null_node, "symlink /dev/ptmx -> pts/ptmx"), null_node);
        cr_assert_lt(find_step(&p, 0, "symlink /dev/core -> /proc/kcore"), 0,
                     "/dev/core is the OCI default devices' only");
        cr_assert_geq(find_step(&p, 0, "mount devpts on /dev/pts"), 0);
}

Test(plan, host_root_plans_the_masks_that_can_apply_in_it)
{
        /* The host-/usr root has no /sys: its masks would be skipped by
         * the child, after a clone of /dev/null made for each. Every /proc
         * mask stays. */
        _cleanup_(policy_free) struct policy pol;
        policy_from_text(&pol, "landlock: off\napparmor: off\n");
        char *argv[] = {"true", NULL};
        struct plan_options ro = {0};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        cr_assert_eq(plan_from_policy(&pol, argv, &ro, &p, &err), 0, "%s", err.msg);
        size_t proc = 0;
        for (const char *const *m = rootfs_default_masked_paths; *m; m++) {
                char want[256];
                snprintf(want, sizeof(want), "mask %s", *m);
                bool in_proc = strncmp(*m, "/proc/", 6) == 0;
                proc += in_proc;
                if (in_proc)
                        cr_expect_geq(find_step(&p, 0, want), 0, "no %s", want);
                else
                        cr_expect_lt(find_step(&p, 0, want), 0, "%s planned in a root without it",
                                     want);
        }
        cr_assert_gt(proc, 0);
}

/* A policy's bind of the host's /sys gets /sys's masks over it, as
 * psrun's own /sys would: they come after the policy's mounts. */
Test(plan, sys_masks_cover_a_bind_of_the_hosts_sys)
{
        _cleanup_(policy_free) struct policy pol;
        policy_from_text(&pol, "landlock: off\napparmor: off\nmounts: [/sys:/sys:ro]\n");
        char *argv[] = {"true", NULL};
        struct plan_options ro = {0};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        cr_assert_eq(plan_from_policy(&pol, argv, &ro, &p, &err), 0, "%s", err.msg);
        long bind = find_step(&p, 0, "bind /sys on /sys");
        cr_assert_geq(bind, 0, "no bind of /sys planned");
        size_t sys = 0;
        for (const char *const *m = rootfs_default_masked_paths; *m; m++) {
                if (strncmp(*m, "/sys/", 5) != 0)
                        continue;
                char want[256];
                snprintf(want, sizeof(want), "mask %s", *m);
                cr_expect_gt(find_step(&p, (size_t) bind, want), bind, "no %s after the bind",
                             want);
                sys++;
        }
        cr_assert_gt(sys, 0);
}

Test(plan, from_policy_refuses_no_command)
{
        _cleanup_(policy_free) struct policy pol;
        policy_from_text(&pol, "landlock: off\napparmor: off\n");
        char *argv[] = {NULL};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        cr_assert_eq(plan_from_policy(&pol, argv, NULL, &p, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "run: no command given");
}

/* The limits are the plan's, computed once: what the result reports (the
 * policy's numbers) and what each backend enforces, through the plan's
 * functions, never from the policy again. */
Test(plan, limits_reported_and_enforced)
{
        _cleanup_(policy_free) struct policy pol;
        policy_from_text(&pol, "memory_limit: 256M\npids_limit: 10\ndisk_limit: 64M\n"
                               "cpu_limit: 1.5\ntimeout: 7s\nlandlock: off\napparmor: off\n");
        char *argv[] = {"true", NULL};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        cr_assert_eq(plan_from_policy(&pol, argv, NULL, &p, &err), 0, "%s", err.msg);

        cr_assert_eq(p.reported.memory_bytes, 256ULL << 20);
        cr_assert_eq(p.reported.pids, 10, "the user's processes, psrun's init not counted");
        cr_assert_eq(p.reported.disk_bytes, 64ULL << 20);
        cr_assert_eq(p.reported.timeout_ms, 7000);
        cr_assert_float_eq(p.reported.cpus, 1.5, 1e-9);

        struct cgroup_limits l = plan_limits_with(&p, 2);
        cr_assert_eq(l.pids_max, 12);
        cr_assert_eq(l.memory_bytes, 256ULL << 20);
        cr_assert_float_eq(l.cpus, 1.5, 1e-9);
        cr_assert_eq(plan_limits_with(&p, 0).pids_max, 10);
        /* runsc's own tasks, then each process's host tasks. */
        l = plan_limits_host_tasks(&p, 1, 64, 16);
        cr_assert_eq(l.pids_max, 64 + 16 * 11);
        cr_assert_eq(l.memory_bytes, 256ULL << 20);
        cr_assert_eq(plan_limits_host_tasks(&p, 0, 64, 16).pids_max, 64 + 16 * 10);
}

/* The violations report's needs are the planner's to decide: the watch
 * opens what the plan asks for and changes nothing in it. */
Test(plan, violations_asked_by_the_plan)
{
        static const struct {
                const char *text;
                bool report_exec, notify;
        } cases[] = {
                {"violations: off\nlandlock: off\napparmor: off\n", false, false},
                {"violations: summary\nlandlock: off\napparmor: off\n", true, true},
                {"violations: full\nlandlock: off\napparmor: off\n", true, true},
                /* gVisor: psrun's child guards nothing, and reports nothing. */
                {"violations: full\nbackend: gvisor\nlandlock: off\napparmor: off\n", false, false},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                _cleanup_(policy_free) struct policy pol;
                policy_from_text(&pol, cases[i].text);
                char *argv[] = {"true", NULL};
                _cleanup_(plan_free) struct plan p;
                psrun_error err = {0};
                cr_assert_eq(plan_from_policy(&pol, argv, NULL, &p, &err), 0, "%s", err.msg);
                cr_expect_eq(p.violations, (int) pol.violations, "%s", cases[i].text);
                cr_expect_eq(p.report_exec, cases[i].report_exec, "%s", cases[i].text);
                cr_expect_eq(p.seccomp_notify.len > 0, cases[i].notify, "%s", cases[i].text);
                cr_expect(p.landlock_off && p.apparmor_off, "%s", cases[i].text);
                cr_expect_eq(p.landlock.restrict_flags, 0,
                             "Landlock logs only when the watch reads the audit log");
        }
}

#define CONFIG_HEAD                                                                                \
        "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\", \"readonly\": true},\n"      \
        "\"process\": {\"args\": [\"sh\", \"-c\", \"true\"], \"cwd\": \"/\",\n"                    \
        " \"env\": [\"PATH=/usr/bin:/bin\", \"FOO=bar\"],\n"                                       \
        " \"capabilities\": {\"bounding\": [\"CAP_CHOWN\", \"CAP_KILL\"],"                         \
        " \"effective\": [\"CAP_KILL\"]},\n"                                                       \
        " \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 512}]},\n"

Test(plan, from_oci_config)
{
        static const char text[] =
                CONFIG_HEAD "\"mounts\": [{\"destination\": \"/proc\", \"type\": \"proc\", "
                            "\"source\": \"proc\"},\n"
                            " {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": "
                            "\"tmpfs\"}],\n"
                            "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": "
                            "\"mount\"}],\n"
                            " \"maskedPaths\": [\"/proc/kcore\"], \"readonlyPaths\": "
                            "[\"/proc/sys\"]}}";
        _cleanup_(oci_config_free) struct oci_config c = {0};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        oci_plan_from_text(&c, &p, text, &err, 0);

        cr_assert(has_env(&p, "FOO=bar"));
        cr_assert_str_eq(p.argv[2], "true");
        cr_assert_eq(p.caps.bounding, (1ULL << CAP_CHOWN) | (1ULL << CAP_KILL));
        cr_assert_eq(p.caps.effective, 1ULL << CAP_KILL);
        cr_assert_eq(p.n_rlimits, 1);
        cr_assert_eq(p.rlimits[0].resource, RLIMIT_NOFILE);
        cr_assert_eq(p.rlimits[0].limit.rlim_cur, 512);
        cr_assert_eq(p.rlimits[0].limit.rlim_max, 1024);

        /* The config's mounts in order, then the default devices of a tmpfs
         * /dev (with /dev/core, bound alone), the masks, and / read-only. */
        long proc = find_step(&p, 0, "mount proc on /proc");
        long dev = find_step(&p, 0, "mount tmpfs on /dev");
        cr_assert(proc >= 0 && dev > proc);
        long null_node = find_step(&p, (size_t) dev, "bind /dev/null on /dev/null");
        cr_assert_gt(null_node, dev);
        cr_assert(p.rootfs.steps[null_node].single && p.rootfs.steps[null_node].from_host);
        cr_assert_gt(find_step(&p, (size_t) null_node, "symlink /dev/core -> /proc/kcore"),
                     null_node);
        long mask = find_step(&p, (size_t) null_node, "mask /proc/kcore");
        cr_assert_gt(mask, null_node);
        cr_assert_gt(find_step(&p, (size_t) mask, "bind /proc/sys on /proc/sys"), mask);
        cr_assert_lt(find_step(&p, 0, "mask /proc/keys"), 0, "only the config's masks");
}

/* A hostile config: more mounts than the child's step array holds. The plan
 * refuses it with one line instead of the child overrunning its stack. */
Test(plan, too_many_mount_steps)
{
        size_t n = ROOTFS_MAX_STEPS + 10, cap = strlen(CONFIG_HEAD) + 64 + n * 80;
        _cleanup_free_ char *text = malloc(cap);
        cr_assert_not_null(text);
        size_t len = (size_t) snprintf(text, cap, "%s\"mounts\": [", CONFIG_HEAD);
        for (size_t i = 0; i < n; i++)
                len += (size_t) snprintf(text + len, cap - len,
                                         "%s{\"destination\": \"/m%zu\", \"type\": \"tmpfs\"}",
                                         i ? "," : "", i);
        snprintf(text + len, cap - len,
                 "],\n\"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}");
        _cleanup_(oci_config_free) struct oci_config c = {0};
        _cleanup_(plan_free) struct plan p;
        psrun_error err = {0};
        oci_plan_from_text(&c, &p, text, &err, -E2BIG);
        cr_assert_str_eq(err.msg, "mounts: more than 4096 mount steps");
}

Test(plan, rootfs_plan_add_bound)
{
        struct rootfs_plan rp = {0};
        struct mount_step s = {.op = MOUNT_OP_MKDIR, .target = "/x", .mode = 0755};
        for (size_t i = 0; i < ROOTFS_MAX_STEPS; i++)
                cr_assert_eq(rootfs_plan_add(&rp, &s), 0);
        cr_assert_eq(rootfs_plan_add(&rp, &s), -E2BIG);
        cr_assert_eq(rp.n_steps, ROOTFS_MAX_STEPS);
        rootfs_plan_free(&rp);
}
