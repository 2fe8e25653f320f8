/* SPDX-License-Identifier: MIT */
/*
 * The runtime-spec 1.2 process fields psrun used to ignore: scheduler,
 * ioPriority, execCPUAffinity (and linux.intelRdt and resources.rdma,
 * refused); each seen
 * from inside the container, each bad value refused naming its field.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oci/oci_test.h"

TestSuite(oci_process_tuning, .init = bundle_setup, .fini = bundle_teardown, .timeout = 60);

static int run_with(const char *id, const char *args, const char *process_extra,
                    const char *linux_extra, struct out *o)
{
        bundle_config(id, &(struct cfg){.args = args,
                                        .process_extra = process_extra,
                                        .linux_extra = linux_extra});
        return psrun(o, NULL, "run", "--bundle", B.dir, id, NULL);
}

/* /proc/self/stat fields 19 (nice), 40 (rt_priority) and 41 (policy). */
#define SCHED_FIELDS "[\"awk\",\"{print $19, $40, $41}\",\"/proc/self/stat\"]"

Test(oci_process_tuning, scheduler_policy_nice_and_priority)
{
        struct out o;
        int r = run_with("c1", SCHED_FIELDS,
                         ",\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"nice\":5}", NULL, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "5 0 3"), "SCHED_BATCH (3) at nice 5: %s", o.out);

        /* RESET_ON_FORK: awk, exec'd by the process itself, keeps it. (A
         * real-time policy is refused here by the kernel: the container's
         * cgroup has no real-time runtime, as with runc.) */
        r = run_with("c2", SCHED_FIELDS,
                     ",\"scheduler\":{\"policy\":\"SCHED_IDLE\","
                     "\"flags\":[\"SCHED_FLAG_RESET_ON_FORK\"]}",
                     NULL, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, " 0 5"), "SCHED_IDLE (5): %s", o.out);
}

Test(oci_process_tuning, io_priority)
{
        char link[600];
        snprintf(link, sizeof(link), "%s/rootfs/bin/ionice", B.dir);
        cr_assert(symlink("busybox", link) == 0 || errno == EEXIST);
        struct out o;
        int r = run_with("c1", "[\"ionice\"]",
                         ",\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\",\"priority\":6}", NULL,
                         &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "best-effort") && contains(o.out, "6"), "%s", o.out);
        r = run_with("c2", "[\"ionice\"]",
                     ",\"ioPriority\":{\"class\":\"IOPRIO_CLASS_IDLE\","
                     "\"priority\":0}",
                     NULL, &o);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "idle"), "%s", o.out);
}

Test(oci_process_tuning, exec_cpu_affinity_is_an_execs_not_inits)
{
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                cr_skip_test("execCPUAffinity: this host has one CPU, nothing to narrow");
        oci_up("c1", &(struct cfg){.process_extra = ",\"execCPUAffinity\":{\"initial\":\"0-1\","
                                                    "\"final\":\"1\"}"});
        struct out o, k;
        int r = psrun(&o, NULL, "exec", "c1", "sh", "-c",
                      "grep Cpus_allowed_list /proc/self/status /proc/1/status", NULL);
        (void) psrun(&k, NULL, "delete", "--force", "c1", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "/proc/self/status:Cpus_allowed_list:\t1\n"), "%s", o.out);
        cr_expect(!contains(o.out, "/proc/1/status:Cpus_allowed_list:\t1\n"),
                  "init was narrowed too: %s", o.out);
}

Test(oci_process_tuning, bad_values_and_intel_rdt_are_refused_naming_the_field)
{
        const struct {
                const char *process, *linux_, *want;
        } cases[] = {
                {",\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"nice\":30}", NULL,
                 "process.scheduler.nice: 30 is out of range -20..19 for SCHED_OTHER"},
                {",\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"priority\":3}", NULL,
                 "process.scheduler.priority: only SCHED_FIFO and SCHED_RR take a priority"},
                {",\"scheduler\":{\"policy\":\"SCHED_RR\",\"runtime\":1000}", NULL,
                 "process.scheduler.runtime: only SCHED_DEADLINE takes one"},
                {",\"scheduler\":{\"policy\":\"SCHED_FAST\"}", NULL,
                 "process.scheduler.policy: \\\"SCHED_FAST\\\" is not one of"},
                {",\"scheduler\":{\"nice\":1}", NULL, "process.scheduler.policy"},
                {",\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"flags\":[\"SCHED_FLAG_FAST\"]}",
                 NULL, "SCHED_FLAG_FAST"},
                {",\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\",\"priority\":8}", NULL,
                 "process.ioPriority.priority"},
                {",\"ioPriority\":{\"class\":\"IOPRIO_CLASS_NONE\",\"priority\":0}", NULL,
                 "process.ioPriority.class"},
                {",\"execCPUAffinity\":{\"final\":\"1-x\"}", NULL,
                 "process.execCPUAffinity.final: \\\"1-x\\\" is not a CPU list"},
                {",\"execCPUAffinity\":{\"initial\":\"3-1\"}", NULL,
                 "process.execCPUAffinity.initial"},
                {NULL, ",\"intelRdt\":{\"closID\":\"guaranteed_group\"}",
                 "linux.intelRdt: psrun does not support Intel RDT"},
                {NULL, ",\"resources\":{\"rdma\":{\"mlx5_1\":{\"hcaHandles\":3}}}",
                 "linux.resources.rdma: psrun does not support the rdma controller"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct out o;
                char id[16];
                snprintf(id, sizeof(id), "bad%zu", i);
                int r = run_with(id, "[\"true\"]", cases[i].process, cases[i].linux_, &o);
                cr_expect_neq(r, 0, "case %zu ran", i);
                cr_expect(contains(o.err, cases[i].want), "case %zu: %s", i, o.err);
                cr_expect_str_eq(oci_status(id), "", "case %zu left a container", i);
        }
}
