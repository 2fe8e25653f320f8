/* SPDX-License-Identifier: MIT */
/* The violations list of a result: modes, the cap, limits, network, JSON. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cgroup/cgroup.h"
#include "runtime/result.h"
#include "runtime/violations.h"

static char *json_of(const struct violations *v)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        violations_write_json(v, f);
        fclose(f);
        return buf;
}

Test(violations, off_counts_and_writes_nothing)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_OFF);
        cr_assert_null(violations_add(&v, VIOLATION_SECCOMP, "ptrace", 2, 1));
        cr_assert_eq(v.n, 0);
        char *s = json_of(&v);
        cr_expect_str_eq(s, "");
        free(s);
        /* And the result line has no trace of it. */
        struct run_result r = {.reason = RUN_REASON_EXITED};
        violations_init(&r.violations, POLICY_VIOLATIONS_OFF);
        char *line = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&line, &len);
        run_result_write_json(&r, f);
        fclose(f);
        cr_expect_null(strstr(line, "violations"), "%s", line);
        free(line);
}

Test(violations, summary_is_one_entry_per_what_with_the_first_pid)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        violations_add(&v, VIOLATION_SECCOMP, "ptrace", 7, 1);
        violations_add(&v, VIOLATION_SECCOMP, "ptrace", 9, 2);
        violations_add(&v, VIOLATION_LANDLOCK, "ptrace", 0, 1); /* another layer */
        struct violation *e = violations_add(&v, VIOLATION_SECCOMP, "bpf", 0, 1);
        cr_assert_not_null(e);
        e->pid = 11; /* given its first process afterwards */
        cr_assert_eq(v.n, 3);
        char *s = json_of(&v);
        cr_expect_str_eq(s,
                         ",\"violations\":[{\"layer\":\"seccomp\",\"what\":\"ptrace\",\"count\":3,"
                         "\"pid\":7},{\"layer\":\"landlock\",\"what\":\"ptrace\",\"count\":1},"
                         "{\"layer\":\"seccomp\",\"what\":\"bpf\",\"count\":1,\"pid\":11}],"
                         "\"violations_more\":0");
        free(s);
}

Test(violations, full_is_one_entry_per_process)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_FULL);
        violations_add(&v, VIOLATION_SECCOMP, "socket(AF_PACKET)", 7, 1);
        violations_add(&v, VIOLATION_SECCOMP, "socket(AF_PACKET)", 9, 1);
        violations_add(&v, VIOLATION_SECCOMP, "socket(AF_PACKET)", 7, 4);
        cr_assert_eq(v.n, 2);
        cr_expect_eq(v.list[0].count, 5);
        cr_expect_eq(v.list[0].pid, 7);
        cr_expect_eq(v.list[1].count, 1);
        cr_expect_eq(v.list[1].pid, 9);
}

Test(violations, the_first_32_distinct_then_a_count)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        char what[32];
        for (int i = 0; i < 40; i++) {
                snprintf(what, sizeof(what), "call%d", i);
                violations_add(&v, VIOLATION_SECCOMP, what, 0, (uint64_t) i + 1);
        }
        /* Entries already listed still count after the list is full. */
        violations_add(&v, VIOLATION_SECCOMP, "call0", 0, 10);
        cr_assert_eq(v.n, VIOLATIONS_MAX);
        cr_expect_eq(v.list[0].count, 11);
        uint64_t more = 0;
        for (int i = VIOLATIONS_MAX; i < 40; i++)
                more += (uint64_t) i + 1;
        cr_expect_eq(v.more, more);
        char *s = json_of(&v);
        char want[64];
        snprintf(want, sizeof(want), "\"violations_more\":%llu", (unsigned long long) more);
        cr_expect_not_null(strstr(s, want), "%s", s);
        cr_expect_null(strstr(s, "call32"), "%s", s);
        free(s);
}

Test(violations, long_and_hostile_whats_are_cut_and_escaped)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        char big[1000];
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        violations_add(&v, VIOLATION_LANDLOCK, big, 0, 1);
        cr_expect_eq(strlen(v.list[0].what), VIOLATION_WHAT_MAX - 1);
        /* The same long text again is the same entry. */
        violations_add(&v, VIOLATION_LANDLOCK, big, 0, 1);
        cr_expect_eq(v.n, 1);
        violations_add(&v, VIOLATION_LANDLOCK, "write_file /x\"},{\"layer\n", 0, 1);
        char *s = json_of(&v);
        cr_expect_not_null(strstr(s, "\"write_file /x\\\"},{\\\"layer\\n\""), "%s", s);
        free(s);
}

Test(violations, unavailable_layers_are_named_once)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        violations_set_unavailable(&v, VIOLATION_LANDLOCK, "kernel audit is off");
        violations_set_unavailable(&v, VIOLATION_APPARMOR, "no %s", "records");
        char *s = json_of(&v);
        cr_expect_str_eq(s, ",\"violations\":[],\"violations_more\":0,\"violations_unavailable\":"
                            "{\"landlock\":\"kernel audit is off\",\"apparmor\":\"no records\"}");
        free(s);
}

Test(violations, limits_from_the_cgroup_counters)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        struct cgroup_stats st = {.pids_max_hits = 17, .oom_kills = 2, .memory_failcnt = 50};
        struct violation_limits l = {
                .stats = &st,
                .memory_limit = 512ULL << 20,
                .pids_limit = 256,
                .disk_limit = 1ULL << 30,
                .timeout_ms = 300000,
                .timed_out = true,
                .disk_full = true,
        };
        violations_add_limits(&v, &l);
        cr_assert_eq(v.n, 4);
        cr_expect_str_eq(v.list[0].what, "pids_limit 256 reached");
        cr_expect_eq(v.list[0].count, 17);
        /* An OOM kill says more than the reclaims before it. */
        cr_expect_str_eq(v.list[1].what, "memory_limit 512M: out of memory, process killed");
        cr_expect_eq(v.list[1].count, 2);
        cr_expect_str_eq(v.list[2].what, "disk_limit 1G: /workspace is full");
        cr_expect_str_eq(v.list[3].what, "timeout 5m reached");
        for (uint32_t i = 0; i < v.n; i++)
                cr_expect_eq(v.list[i].layer, VIOLATION_LIMITS);

        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        st = (struct cgroup_stats){.memory_failcnt = 3};
        l = (struct violation_limits){.stats = &st, .memory_limit = 64ULL << 20};
        violations_add_limits(&v, &l);
        cr_assert_eq(v.n, 1);
        cr_expect_str_eq(v.list[0].what, "memory_limit 64M reached");

        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        st = (struct cgroup_stats){0};
        violations_add_limits(&v, &l);
        cr_expect_eq(v.n, 0, "nothing reached, nothing listed");
}

Test(violations, network_names_and_addresses)
{
        struct violations v;
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        struct netns_stats n = {.active = true, .denied_more = 5};
        snprintf(n.denied[0].name, sizeof(n.denied[0].name), "evil.test");
        n.denied[0].count = 2;
        snprintf(n.denied[1].addr, sizeof(n.denied[1].addr), "192.0.2.9");
        n.denied[1].port = 443;
        snprintf(n.denied[1].proto, sizeof(n.denied[1].proto), "tcp");
        n.denied[1].count = 1;
        snprintf(n.denied[2].addr, sizeof(n.denied[2].addr), "2001:db8::1");
        n.denied[2].port = 53;
        snprintf(n.denied[2].proto, sizeof(n.denied[2].proto), "udp");
        n.denied[2].count = 3;
        n.n_denied = 3;
        violations_add_network(&v, &n);
        cr_assert_eq(v.n, 3);
        cr_expect_str_eq(v.list[0].what, "evil.test");
        cr_expect_eq(v.list[0].count, 2);
        cr_expect_str_eq(v.list[1].what, "192.0.2.9:443/tcp");
        cr_expect_str_eq(v.list[2].what, "[2001:db8::1]:53/udp");
        cr_expect_eq(v.more, 5);
        for (uint32_t i = 0; i < v.n; i++)
                cr_expect_eq(v.list[i].layer, VIOLATION_NETWORK);

        /* network: none records nothing. */
        violations_init(&v, POLICY_VIOLATIONS_SUMMARY);
        n.active = false;
        violations_add_network(&v, &n);
        cr_expect_eq(v.n, 0);
        cr_expect_eq(v.more, 0);
}

Test(violations, in_the_result_line_after_the_network)
{
        struct run_result r = {.reason = RUN_REASON_EXITED, .exit_code = 1};
        violations_init(&r.violations, POLICY_VIOLATIONS_SUMMARY);
        violations_add(&r.violations, VIOLATION_SECCOMP, "ptrace", 2, 1);
        char *line = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&line, &len);
        run_result_write_json(&r, f);
        fclose(f);
        cr_expect_str_eq(line,
                         "{\"exit_code\":1,\"signal\":null,\"reason\":\"exited\",\"wall_ms\":0,"
                         "\"cpu_ms\":0,\"peak_memory_bytes\":0,\"violations\":[{\"layer\":"
                         "\"seccomp\",\"what\":\"ptrace\",\"count\":1,\"pid\":2}],"
                         "\"violations_more\":0}\n");
        free(line);
}
