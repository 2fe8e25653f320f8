/* SPDX-License-Identifier: MIT */
/*
 * OCI linux.resources against the real kernel, on whichever driver the host
 * has (v1 here, v2 in the VM), plus the v2 BPF device filter forced onto a
 * hybrid host's cgroup2 mount: limits in the files, updates in both
 * directions, a fork refused after `update`, device nodes denied and allowed
 * for a process in the cgroup, and errors that name the OCI field. Suite
 * cgroup_oci (test_cgroup_oci.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup_test.h"

static bool v2(void)
{
        return strcmp(cgroup_driver_name(), "v2") == 0;
}

/* A file of the cgroup where this driver keeps `v1_name`'s controller. */
static char *res_file(struct cgroup *cg, const char *v1_name, const char *file, char *buf,
                      size_t size)
{
        return cg_file(cg, v2() ? "unified" : v1_name, file, buf, size);
}

static void apply_fails(struct cgroup *cg, const struct oci_resources *res, int want,
                        const char *msg_start)
{
        psrun_error err = {0};
        int r = cgroup_apply_resources(cg, res, &err);
        cr_assert_eq(r, -want, "%d %s", r, err.msg);
        cr_assert_eq(strncmp(err.msg, msg_start, strlen(msg_start)), 0, "%s", err.msg);
}

/* v2: does the cgroup have the controller (its parent handed it down)? */
static bool has_controller(struct cgroup *cg, const char *name)
{
        char buf[512];
        if (!v2())
                return cgroup_path(cg, name) != NULL;
        cg_file(cg, "unified", "cgroup.controllers", buf, sizeof(buf));
        return strstr(buf, name) != NULL;
}

Test(cgroup_oci, memory_limit_and_swap_in_both_directions)
{
        struct oci_memory mem = {.limit = {true, 64 * MiB}, .swap = {true, 64 * MiB}};
        struct oci_resources res = {.memory = &mem};
        struct cgroup *cg = oci_create(oci_name("mem"), &res);
        const char *dir = cgroup_path(cg, "memory");
        char buf[64];
        bool swap = v2() ? cg_file_exists(dir, "memory.swap.max")
                         : cg_file_exists(dir, "memory.memsw.limit_in_bytes");
        const char *limit_file = v2() ? "memory.max" : "memory.limit_in_bytes";
        cr_assert_str_eq(read_file(dir, limit_file, buf, sizeof(buf)), "67108864");
        if (swap && v2())
                cr_assert_str_eq(read_file(dir, "memory.swap.max", buf, sizeof(buf)), "0");
        else if (swap)
                cr_assert_str_eq(read_file(dir, "memory.memsw.limit_in_bytes", buf, sizeof(buf)),
                                 "67108864");

        /* Up: v1 must raise memsw before the limit (the limit may never
         * exceed it). */
        mem = (struct oci_memory){.limit = {true, 128 * MiB}, .swap = {true, 256 * MiB}};
        oci_apply(cg, &res);
        cr_assert_str_eq(read_file(dir, limit_file, buf, sizeof(buf)), "134217728");
        if (swap)
                cr_assert_str_eq(read_file(dir,
                                           v2() ? "memory.swap.max" : "memory.memsw.limit_in_bytes",
                                           buf, sizeof(buf)),
                                 v2() ? "134217728" : "268435456");
        /* Down: the limit first. */
        mem = (struct oci_memory){.limit = {true, 32 * MiB}, .swap = {true, 32 * MiB}};
        oci_apply(cg, &res);
        cr_assert_str_eq(read_file(dir, limit_file, buf, sizeof(buf)), "33554432");
        /* Unlimited memory, swap not given: both unlimited. */
        mem = (struct oci_memory){.limit = {true, -1}};
        oci_apply(cg, &res);
        cr_assert_str_eq(read_file(dir, limit_file, buf, sizeof(buf)),
                         v2() ? "max" : "9223372036854771712");
        oci_remove(cg);
}

Test(cgroup_oci, memory_soft_settings)
{
        struct oci_memory mem = {.reservation = {true, 16 * MiB},
                                 .swappiness = {true, 10},
                                 .disable_oom_killer = {true, true}};
        struct oci_resources res = {.memory = &mem};
        struct cgroup *cg = oci_create(oci_name("soft"), &res);
        const char *dir = cgroup_path(cg, "memory");
        char buf[256];
        if (v2()) {
                cr_assert_str_eq(read_file(dir, "memory.low", buf, sizeof(buf)), "16777216");
        } else {
                cr_assert_str_eq(read_file(dir, "memory.soft_limit_in_bytes", buf, sizeof(buf)),
                                 "16777216");
                cr_assert_str_eq(read_file(dir, "memory.swappiness", buf, sizeof(buf)), "10");
                cr_assert_str_eq(read_file(dir, "memory.oom_control", buf, sizeof(buf)),
                                 "oom_kill_disable 1");
        }
        oci_remove(cg);
}

static void child_touch_and_wait(int fd, long bytes)
{
        touch((size_t) bytes);
        child_wait_forever(fd, 1);
}

Test(cgroup_oci, check_before_update_refuses_a_limit_below_usage)
{
        struct cgroup *cg = oci_create(oci_name("cbu"), NULL);
        struct oci_memory mem = {.limit = {true, 256 * MiB}};
        struct oci_resources res = {.memory = &mem};
        if (!has_controller(cg, "memory"))
                cr_skip_test("no memory controller");
        oci_apply(cg, &res);
        struct kid k = spawn(cg, false, child_touch_and_wait, 16 * MiB);
        read_report(&k);
        mem = (struct oci_memory){.limit = {true, 4 * MiB}, .check_before_update = {true, true}};
        apply_fails(cg, &res, EBUSY, "linux.resources.memory.limit: 4194304 is below the current");
        oci_remove(cg);
        reap(k.pid);
}

Test(cgroup_oci, cpu_settings)
{
        struct oci_cpu cpu = {
                .shares = {true, 512}, .quota = {true, 50000}, .period = {true, 100000}};
        struct oci_resources res = {.cpu = &cpu};
        struct cgroup *cg = oci_create(oci_name("cpu"), &res);
        char buf[64], want[64];
        if (v2()) {
                snprintf(want, sizeof(want), "%llu",
                         (unsigned long long) cgroup_cpu_shares_to_weight(512));
                cr_assert_str_eq(res_file(cg, "cpu", "cpu.weight", buf, sizeof(buf)), want);
                cr_assert_str_eq(res_file(cg, "cpu", "cpu.max", buf, sizeof(buf)), "50000 100000");
        } else {
                cr_assert_str_eq(res_file(cg, "cpu", "cpu.shares", buf, sizeof(buf)), "512");
                cr_assert_str_eq(res_file(cg, "cpu", "cpu.cfs_quota_us", buf, sizeof(buf)),
                                 "50000");
                cr_assert_str_eq(res_file(cg, "cpu", "cpu.cfs_period_us", buf, sizeof(buf)),
                                 "100000");
        }
        /* A period alone keeps the quota; quota -1 lifts it. */
        cpu = (struct oci_cpu){.period = {true, 200000}};
        oci_apply(cg, &res);
        cr_assert_str_eq(
                res_file(cg, "cpu", v2() ? "cpu.max" : "cpu.cfs_period_us", buf, sizeof(buf)),
                v2() ? "50000 200000" : "200000");
        cpu = (struct oci_cpu){.quota = {true, -1}};
        oci_apply(cg, &res);
        cr_assert_str_eq(
                res_file(cg, "cpu", v2() ? "cpu.max" : "cpu.cfs_quota_us", buf, sizeof(buf)),
                v2() ? "max 200000" : "-1");
        /* A burst above the quota is the kernel's to refuse; a lower quota
         * with a lower burst needs the burst written first. */
        const char *burst_file = v2() ? "cpu.max.burst" : "cpu.cfs_burst_us";
        if (cg_file_exists(cgroup_path(cg, "cpu"), burst_file)) {
                cpu = (struct oci_cpu){.quota = {true, 100000}, .burst = {true, 80000}};
                oci_apply(cg, &res);
                cpu = (struct oci_cpu){.quota = {true, 20000}, .burst = {true, 10000}};
                oci_apply(cg, &res);
                cr_assert_str_eq(res_file(cg, "cpu", burst_file, buf, sizeof(buf)), "10000");
        }
        oci_remove(cg);
}

Test(cgroup_oci, realtime_cpu)
{
        struct oci_cpu cpu = {.realtime_runtime = {true, 0}, .realtime_period = {true, 1000000}};
        struct oci_resources res = {.cpu = &cpu};
        struct cgroup *cg = oci_create(oci_name("rt"), NULL);
        if (v2()) {
                apply_fails(cg, &res, EOPNOTSUPP, "linux.resources.cpu.realtimeRuntime: ");
        } else {
                oci_apply(cg, &res);
                char buf[64];
                cr_assert_str_eq(cg_file(cg, "cpu", "cpu.rt_runtime_us", buf, sizeof(buf)), "0");
        }
        oci_remove(cg);
}

Test(cgroup_oci, shares_to_weight_like_runc_and_crun)
{
        static const struct {
                uint64_t shares, weight;
        } cases[] = {{0, 0}, {1, 1}, {2, 1}, {1024, 100}, {262144, 10000}, {1000000, 10000}};
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                cr_assert_eq(cgroup_cpu_shares_to_weight(cases[i].shares), cases[i].weight,
                             "%llu -> %llu", (unsigned long long) cases[i].shares,
                             (unsigned long long) cgroup_cpu_shares_to_weight(cases[i].shares));
        uint64_t last = 0;
        for (uint64_t s = 2; s <= 262144; s += 97) {
                uint64_t w = cgroup_cpu_shares_to_weight(s);
                cr_assert_geq(w, last, "not monotonic at %llu", (unsigned long long) s);
                last = w;
        }
}

Test(cgroup_oci, shares_to_weight_without_libm_agrees_with_libm_for_every_share)
{
        /* psrun links no libm: the curve's log2 and 10^y are its own
         * (runtime/cgroup/res.c). Every share value gives libm's weight. */
        for (uint64_t s = 2; s <= 262144; s++) {
                double l = log2((double) s);
                double w = pow(10.0, (l * l + 125.0 * l) / 612.0 - 7.0 / 34.0);
                uint64_t want = (uint64_t) ceil(w - 1e-6);
                want = want < 1 ? 1 : want > 10000 ? 10000 : want;
                uint64_t got = cgroup_cpu_shares_to_weight(s);
                if (got != want)
                        cr_assert_fail("shares %llu: %llu, libm says %llu", (unsigned long long) s,
                                       (unsigned long long) got, (unsigned long long) want);
        }
}

Test(cgroup_oci, cpuset)
{
        struct oci_cpu cpu = {.cpus = "0", .mems = "0"};
        struct oci_resources res = {.cpu = &cpu};
        struct cgroup *cg = oci_create(oci_name("cpuset"), NULL);
        if (!has_controller(cg, "cpuset"))
                cr_skip_test("no cpuset controller");
        oci_apply(cg, &res);
        char buf[64];
        cr_assert_str_eq(res_file(cg, "cpuset", "cpuset.cpus", buf, sizeof(buf)), "0");
        cr_assert_str_eq(res_file(cg, "cpuset", "cpuset.mems", buf, sizeof(buf)), "0");
        /* A process can live in it. */
        struct kid k = spawn(cg, false, child_wait_forever, 5);
        cr_assert_eq(read_report(&k), 5);
        oci_remove(cg);
        reap(k.pid);
}

/* Fork (and reap) every few ms until a fork fails; report its errno. */
static void child_fork_until_refused(int fd, long arg)
{
        report(fd, 0);
        for (;;) {
                pid_t p = raw_fork();
                if (p == 0)
                        _exit(0);
                if (p < 0) {
                        report(fd, errno);
                        for (;;)
                                pause();
                }
                waitpid(p, NULL, 0);
                sleep_ms(2);
        }
}

Test(cgroup_oci, update_lowers_pids_max_and_a_fork_fails)
{
        struct oci_pids pids = {.limit = {true, 64}};
        struct oci_resources res = {.pids = &pids};
        struct cgroup *cg = oci_create(oci_name("pids"), &res);
        struct kid k = spawn(cg, false, child_fork_until_refused, 0);
        cr_assert_eq(read_report(&k), 0);
        sleep_ms(30);
        pids.limit.value = 1;
        oci_apply(cg, &res);
        char buf[64];
        cr_assert_str_eq(res_file(cg, "pids", "pids.max", buf, sizeof(buf)), "1");
        cr_assert_eq(read_report(&k), EAGAIN);
        cr_assert_geq(stats_of(cg).pids_max_hits, 1);
        /* -1 (and 0) lift the limit. */
        pids.limit.value = -1;
        oci_apply(cg, &res);
        cr_assert_str_eq(res_file(cg, "pids", "pids.max", buf, sizeof(buf)), "max");
        oci_remove(cg);
        reap(k.pid);
}

/* ---- devices ---------------------------------------------------------------- */

static const char *const device_paths[] = {"/dev/null", "/dev/zero"};

/* Open device_paths[arg] for reading and writing; report 0 or errno. */
static void child_open_device(int fd, long arg)
{
        int d = open(device_paths[arg], O_RDWR | O_CLOEXEC);
        report(fd, d < 0 ? errno : 0);
        _exit(0);
}

static long open_in(struct cgroup *cg, long which)
{
        struct kid k = spawn(cg, false, child_open_device, which);
        long v = read_report(&k);
        reap(k.pid);
        return v;
}

#define RULE(allow_, type_, major_, minor_, access_)                                               \
        {                                                                                          \
                .allow = allow_, .type = type_, .major = {major_ != -2, major_},                   \
                .minor = {minor_ != -2, minor_}, .access = access_                                 \
        }

static void devices_deny_then_allow(struct cgroup *cg)
{
        struct oci_device_rule deny_all[] = {RULE(false, 'a', -2, -2, "rwm")};
        struct oci_resources res = {.devices = deny_all, .n_devices = ARRAY_SIZE(deny_all)};
        oci_apply(cg, &res);
        cr_assert_eq(open_in(cg, 0), EPERM, "/dev/null opened after deny all");
        cr_assert_eq(open_in(cg, 1), EPERM);

        /* Later rules win: deny all, then c 1:3 rw. */
        struct oci_device_rule null_only[] = {RULE(false, 'a', -2, -2, "rwm"),
                                              RULE(true, 'c', 1, 3, "rw")};
        res = (struct oci_resources){.devices = null_only, .n_devices = ARRAY_SIZE(null_only)};
        oci_apply(cg, &res);
        cr_assert_eq(open_in(cg, 0), 0, "/dev/null refused after allow c 1:3 rw");
        cr_assert_eq(open_in(cg, 1), EPERM, "/dev/zero opened");

        /* One rule must allow the whole access, as in v1: r from one rule
         * and w from another is no O_RDWR. */
        struct oci_device_rule split[] = {RULE(false, 'a', -1, -1, "rwm"),
                                          RULE(true, 'c', -1, -1, "r"), RULE(true, 'c', 1, 3, "w"),
                                          RULE(true, 'c', 1, 5, "rw")};
        res = (struct oci_resources){.devices = split, .n_devices = ARRAY_SIZE(split)};
        oci_apply(cg, &res);
        cr_assert_eq(open_in(cg, 0), EPERM, "/dev/null O_RDWR allowed by r and w in two rules");
        cr_assert_eq(open_in(cg, 1), 0, "/dev/zero has c 1:5 rw");

        /* Allow all, then a deny of one device. */
        struct oci_device_rule all_but_zero[] = {RULE(true, 'a', -2, -2, "rwm"),
                                                 RULE(false, 'c', 1, 5, "rwm")};
        res = (struct oci_resources){.devices = all_but_zero,
                                     .n_devices = ARRAY_SIZE(all_but_zero)};
        oci_apply(cg, &res);
        cr_assert_eq(open_in(cg, 0), 0);
        cr_assert_eq(open_in(cg, 1), EPERM);
}

Test(cgroup_oci, devices_deny_then_allow)
{
        struct cgroup *cg = oci_create(oci_name("dev"), NULL);
        if (!v2() && !cgroup_path(cg, "devices"))
                cr_skip_test("no devices hierarchy");
        devices_deny_then_allow(cg);
        if (!v2()) {
                char buf[256];
                cr_assert_str_eq(cg_file(cg, "devices", "devices.list", buf, sizeof(buf)),
                                 "a *:* rwm");
        }
        oci_remove(cg);
}

static unsigned attached_programs(const char *dir)
{
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        uint32_t ids[8];
        union bpf_attr attr = {
                .query.target_fd = (uint32_t) fd,
                .query.attach_type = BPF_CGROUP_DEVICE,
                .query.prog_ids = (uint64_t) (uintptr_t) ids,
                .query.prog_cnt = ARRAY_SIZE(ids),
        };
        long r = syscall(SYS_bpf, BPF_PROG_QUERY, &attr, sizeof(attr));
        close(fd);
        cr_assert_eq(r, 0, "BPF_PROG_QUERY: %s", strerror(errno));
        return attr.query.prog_cnt;
}

/* The v2 device filter on this host's cgroup2 mount: a BPF device program
 * decides for processes in any cgroup2 directory, controllers or not. */
Test(cgroup_oci, v2_bpf_device_filter)
{
        char mp[PATH_MAX];
        if (!hierarchy_mount(NULL, mp, sizeof(mp)))
                cr_skip_test("no cgroup2 mount");
        if (!is_v2())
                cgroup_test_set_driver("v2");
        struct cgroup *cg = oci_create(oci_name("bpf"), NULL);
        devices_deny_then_allow(cg);
        /* Each update replaced the program instead of stacking another. */
        cr_assert_eq(attached_programs(cgroup_path(cg, "unified")), 1);
        oci_remove(cg);
}

/* ---- errors ----------------------------------------------------------------- */

Test(cgroup_oci, errors_name_the_field)
{
        struct cgroup *cg = oci_create(oci_name("err"), NULL);
        struct oci_pids pids = {.limit = {true, 10000000}};
        struct oci_resources res = {.pids = &pids};
        apply_fails(cg, &res, EINVAL, "linux.resources.pids.limit: write pids.max: ");

        struct oci_kv unified[] = {{"../escape", "1"}};
        res = (struct oci_resources){.unified = unified, .n_unified = 1};
        if (v2()) {
                apply_fails(cg, &res, EINVAL, "linux.resources.unified.../escape: ");
                struct oci_kv high[] = {{"pids.max", "7"}};
                res.unified = high;
                if (has_controller(cg, "pids")) {
                        oci_apply(cg, &res);
                        char buf[32];
                        cr_assert_str_eq(cg_file(cg, "unified", "pids.max", buf, sizeof(buf)), "7");
                }
        } else {
                apply_fails(cg, &res, EOPNOTSUPP, "linux.resources.unified: needs cgroup v2");
        }

        struct oci_hugepage_limit huge[] = {{"2MB", 4 * MiB}};
        res = (struct oci_resources){.hugepage_limits = huge, .n_hugepage_limits = 1};
        char hugedir[PATH_MAX] = "";
        const char *u = cgroup_path(cg, "unified");
        if (has_controller(cg, "hugetlb") || (!v2() && u && cg_file_exists(u, "hugetlb.2MB.max"))) {
                oci_apply(cg, &res);
                snprintf(hugedir, sizeof(hugedir), "%s",
                         cgroup_path(cg,
                                     v2() || !cgroup_path(cg, "hugetlb") ? "unified" : "hugetlb"));
                char buf[64];
                cr_assert_str_eq(read_file(hugedir,
                                           v2() || !cgroup_path(cg, "hugetlb")
                                                   ? "hugetlb.2MB.max"
                                                   : "hugetlb.2MB.limit_in_bytes",
                                           buf, sizeof(buf)),
                                 "4194304");
        } else {
                apply_fails(cg, &res, EOPNOTSUPP,
                            "linux.resources.hugepageLimits: this host has no hugetlb controller");
        }
        oci_remove(cg);
}

/* The first whole disk the kernel lists, as major:minor. */
static bool some_disk(unsigned *major, unsigned *minor)
{
        FILE *f = fopen("/proc/partitions", "re");
        if (!f)
                return false;
        char line[256];
        bool found = false;
        while (!found && fgets(line, sizeof(line), f)) {
                char name[64];
                found = sscanf(line, "%u %u %*u %63s", major, minor, name) == 3 &&
                        (((strncmp(name, "vd", 2) == 0 || strncmp(name, "sd", 2) == 0) &&
                          strlen(name) == 3) ||
                         strcmp(name, "loop0") == 0);
        }
        fclose(f);
        return found;
}

Test(cgroup_oci, block_io_throttle)
{
        unsigned major, minor;
        if (!some_disk(&major, &minor))
                cr_skip_test("no disk");
        struct cgroup *cg = oci_create(oci_name("io"), NULL);
        if (!has_controller(cg, v2() ? "io" : "blkio"))
                cr_skip_test("no io controller");
        struct oci_throttle_device rbps[] = {{major, minor, 1048576}};
        struct oci_block_io bio = {.throttle_read_bps = rbps, .n_throttle_read_bps = 1};
        struct oci_resources res = {.block_io = &bio};
        oci_apply(cg, &res);
        char buf[256], want[64];
        snprintf(want, sizeof(want), "%u:%u %s", major, minor, v2() ? "rbps=1048576" : "1048576");
        res_file(cg, "blkio", v2() ? "io.max" : "blkio.throttle.read_bps_device", buf, sizeof(buf));
        cr_assert_eq(strncmp(buf, want, strlen(want)), 0, "%s, want %s", buf, want);
        oci_remove(cg);
}
