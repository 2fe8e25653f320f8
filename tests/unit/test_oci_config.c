/* SPDX-License-Identifier: MIT */
/*
 * The config.json parser: the configs `crun spec` and `runc spec` generate, a
 * Docker-style config with seccomp and hooks, a config with every field,
 * every table entry, every rejection with its exact message and
 * line:column, YAML that is not JSON, hostile sizes, and a bounded mutation
 * fuzz loop. Fixtures are in tests/unit/data/oci/ (tests run from the repo
 * root). Each failing parse must leave the output zeroed; SANITIZE=1 builds
 * catch what it would leak.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "common/cleanup.h"
#include "policy/seccomp.h"
#include "runtime/oci-config.h"

#define FIXTURES "tests/unit/data/oci/"
/* A valid start: tests add their fields on line 2 and close the object. */
#define HEAD         "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},\n"
#define PROCESS_HEAD HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "

#define CAP(n) (1ULL << (n))

/* ---- helpers ---- */

static bool all_zero(const void *p, size_t n)
{
        const unsigned char *c = p;

        for (size_t i = 0; i < n; i++)
                if (c[i])
                        return false;
        return true;
}

/* LeakSanitizer reports at exit but does not fail a Criterion test: in
 * SANITIZE=1 builds each test checks for leaks itself. */
static void assert_no_leaks(void)
{
#ifdef __SANITIZE_ADDRESS__
        cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (report above)");
#endif
}

static void assert_one_line(const psrun_error *err)
{
        cr_assert_gt(strlen(err->msg), 0, "empty message");
        for (const char *c = err->msg; *c; c++)
                cr_assert_geq((unsigned char) *c, 0x20, "control character in: %s", err->msg);
}

static void load_fixture(const char *name, struct oci_config *c)
{
        char path[256];
        psrun_error err = {0};

        snprintf(path, sizeof(path), FIXTURES "%s", name);
        int r = oci_config_load_file(path, c, &err);
        cr_assert_eq(r, 0, "%s: %d: %s", path, r, err.msg);
}

static int parse(const char *json, struct oci_config *c, psrun_error *err)
{
        return oci_config_parse(json, strlen(json), c, err);
}

static void parse_ok(const char *json, struct oci_config *c)
{
        psrun_error err = {0};
        int r = parse(json, c, &err);

        cr_assert_eq(r, 0, "parse failed (%d): %s\n--- json:\n%.300s", r, err.msg, json);
}

/* Fails with errnum and exactly msg; the output stays zeroed. */
static void expect_error_len(const char *json, size_t len, int errnum, const char *msg)
{
        struct oci_config c;
        psrun_error err = {0};

        memset(&c, 0xa5, sizeof(c));
        int r = oci_config_parse(json, len, &c, &err);
        cr_expect_eq(r, -errnum, "want %d, got %d (%s)\n--- json:\n%.300s", -errnum, r, err.msg,
                     json);
        cr_expect_eq(err.code, errnum, "code %d for: %s", err.code, err.msg);
        cr_expect_str_eq(err.msg, msg, "\n got: %s\nwant: %s\n--- json:\n%.300s", err.msg, msg,
                         json);
        assert_one_line(&err);
        cr_expect(all_zero(&c, sizeof(c)), "output not zeroed after: %s", err.msg);
        oci_config_free(&c);
}

static void expect_error(const char *json, int errnum, const char *msg)
{
        expect_error_len(json, strlen(json), errnum, msg);
}

static const struct oci_mount *find_mount(const struct oci_config *c, const char *destination)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i].destination, destination) == 0)
                        return &c->mounts[i];
        cr_assert_fail("no mount at %s", destination);
        return NULL;
}

static uint64_t namespaces_mask(const struct oci_config *c)
{
        uint64_t mask = 0;

        for (size_t i = 0; i < c->linux_->n_namespaces; i++)
                mask |= (unsigned) c->linux_->namespaces[i].type;
        return mask;
}

static uint64_t cap_mask(const char *const *names)
{
        uint64_t mask = 0;
        /* Numbers from linux/capability.h, spelled out so the test does not
         * share the parser's source of truth. */
        static const struct {
                const char *name;
                int bit;
        } caps[] = {
                {"CAP_CHOWN", 0},
                {"CAP_DAC_OVERRIDE", 1},
                {"CAP_FOWNER", 3},
                {"CAP_FSETID", 4},
                {"CAP_KILL", 5},
                {"CAP_SETGID", 6},
                {"CAP_SETUID", 7},
                {"CAP_SETPCAP", 8},
                {"CAP_NET_BIND_SERVICE", 10},
                {"CAP_NET_ADMIN", 12},
                {"CAP_NET_RAW", 13},
                {"CAP_SYS_CHROOT", 18},
                {"CAP_SYS_ADMIN", 21},
                {"CAP_MKNOD", 27},
                {"CAP_AUDIT_WRITE", 29},
                {"CAP_SETFCAP", 31},
                {"CAP_CHECKPOINT_RESTORE", 40},
        };

        for (const char *const *n = names; *n; n++) {
                size_t i = 0;
                while (i < sizeof(caps) / sizeof(caps[0]) && strcmp(caps[i].name, *n) != 0)
                        i++;
                cr_assert_lt(i, sizeof(caps) / sizeof(caps[0]), "test table lacks %s", *n);
                mask |= CAP(caps[i].bit);
        }
        return mask;
}

/* ---- generated and real-world configs ---- */

/* What `crun spec` and `runc spec` both generate (they differ in version). */
static void check_spec_defaults(const struct oci_config *c, bool rootless)
{
        static const char *const default_caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL",
                                                   "CAP_NET_BIND_SERVICE", NULL};
        const struct oci_process *p = c->process;
        const struct oci_mount *m;

        cr_assert_not_null(p);
        cr_assert(p->terminal);
        cr_assert_eq(p->user.uid, 0);
        cr_assert_eq(p->user.gid, 0);
        cr_assert_eq(p->n_args, 1);
        cr_assert_str_eq(p->args[0], "sh");
        cr_assert_null(p->args[1]);
        cr_assert_eq(p->n_env, 2);
        cr_assert_str_eq(p->env[1], "TERM=xterm");
        cr_assert_null(p->env[2]);
        cr_assert_str_eq(p->cwd, "/");
        cr_assert_not_null(p->capabilities);
        cr_assert_eq(p->capabilities->bounding, cap_mask(default_caps));
        cr_assert_eq(p->capabilities->effective, cap_mask(default_caps));
        cr_assert_eq(p->capabilities->permitted, cap_mask(default_caps));
        cr_assert_eq(p->capabilities->ambient, cap_mask(default_caps));
        cr_assert_eq(p->n_rlimits, 1);
        cr_assert_eq(p->rlimits[0].type, RLIMIT_NOFILE);
        cr_assert_eq(p->rlimits[0].soft, 1024);
        cr_assert_eq(p->rlimits[0].hard, 1024);
        cr_assert(p->no_new_privileges);
        cr_assert_not(p->oom_score_adj.set);
        cr_assert_null(p->console_size);
        cr_assert_str_eq(c->root.path, "rootfs");
        cr_assert(c->root.readonly);

        cr_assert_eq(c->n_mounts, 7);
        m = find_mount(c, "/proc");
        cr_assert_str_eq(m->type, "proc");
        cr_assert_eq(m->flags, 0);
        cr_assert_null(m->data);
        m = find_mount(c, "/dev");
        cr_assert_eq(m->flags, MS_NOSUID | MS_STRICTATIME);
        cr_assert_str_eq(m->data, "mode=755,size=65536k");
        m = find_mount(c, "/dev/pts");
        cr_assert_eq(m->flags, MS_NOSUID | MS_NOEXEC);
        cr_assert_str_eq(m->data, rootless ? "newinstance,ptmxmode=0666,mode=0620"
                                           : "newinstance,ptmxmode=0666,mode=0620,gid=5");
        m = find_mount(c, "/dev/shm");
        cr_assert_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV);
        cr_assert_str_eq(m->data, "mode=1777,size=65536k");
        m = find_mount(c, "/sys");
        cr_assert_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY);
        cr_assert_eq(m->bind, rootless ? OCI_BIND_RECURSIVE : OCI_BIND_NONE);
        m = find_mount(c, "/sys/fs/cgroup");
        cr_assert_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY);
        cr_assert_eq(m->clear_flags, 0);
        cr_assert_eq(m->propagation, 0);

        cr_assert_not_null(c->linux_);
        cr_assert_eq(c->linux_->n_masked_paths, 10);
        cr_assert_str_eq(c->linux_->masked_paths[2], "/proc/kcore");
        cr_assert_eq(c->linux_->n_readonly_paths, 5);
        cr_assert_str_eq(c->linux_->readonly_paths[4], "/proc/sysrq-trigger");
        cr_assert_null(c->linux_->seccomp);
        for (int i = 0; i < _OCI_HOOK_MAX; i++)
                cr_assert_eq(c->hooks.lists[i].n, 0);
}

Test(oci_config, crun_spec)
{
        struct oci_config c;

        load_fixture("crun-spec.json", &c);
        cr_assert_str_eq(c.oci_version, "1.0.0");
        cr_assert_str_eq(c.hostname, "crun");
        check_spec_defaults(&c, false);
        cr_assert_eq(c.process->capabilities->inheritable, 0);
        cr_assert_eq(namespaces_mask(&c),
                     CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS);
        cr_assert_not_null(c.linux_->resources);
        cr_assert_eq(c.linux_->resources->n_devices, 1);
        cr_assert_not(c.linux_->resources->devices[0].allow);
        cr_assert_eq(c.linux_->resources->devices[0].type, 'a');
        cr_assert_not(c.linux_->resources->devices[0].major.set);
        cr_assert_str_eq(c.linux_->resources->devices[0].access, "rwm");
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, runc_spec)
{
        struct oci_config c;

        load_fixture("runc-spec.json", &c);
        cr_assert_str_eq(c.oci_version, "1.0.2-dev");
        cr_assert_str_eq(c.hostname, "runc");
        check_spec_defaults(&c, false);
        cr_assert_eq(namespaces_mask(&c),
                     CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS);
        cr_assert_eq(c.linux_->n_uid_mappings, 0);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, runc_spec_rootless)
{
        struct oci_config c;

        load_fixture("runc-spec-rootless.json", &c);
        check_spec_defaults(&c, true);
        cr_assert_eq(namespaces_mask(&c),
                     CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWUSER);
        cr_assert_eq(c.linux_->n_uid_mappings, 1);
        cr_assert_eq(c.linux_->uid_mappings[0].container_id, 0);
        cr_assert_eq(c.linux_->uid_mappings[0].size, 1);
        cr_assert_eq(c.linux_->n_gid_mappings, 1);
        cr_assert_str_eq(find_mount(&c, "/sys")->source, "/sys");
        cr_assert_str_eq(find_mount(&c, "/sys")->type, "none");
        cr_assert_null(c.linux_->resources);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, docker_style_config)
{
        static const char *const bounding[] = {"CAP_CHOWN",
                                               "CAP_DAC_OVERRIDE",
                                               "CAP_FSETID",
                                               "CAP_FOWNER",
                                               "CAP_MKNOD",
                                               "CAP_NET_RAW",
                                               "CAP_SETGID",
                                               "CAP_SETUID",
                                               "CAP_SETFCAP",
                                               "CAP_SETPCAP",
                                               "CAP_NET_BIND_SERVICE",
                                               "CAP_SYS_CHROOT",
                                               "CAP_KILL",
                                               "CAP_AUDIT_WRITE",
                                               NULL};
        struct oci_config c;
        const struct oci_process *p;
        const struct oci_mount *m;
        const struct oci_resources *res;
        const struct oci_seccomp *sc;

        load_fixture("docker-run.json", &c);
        p = c.process;
        cr_assert_eq(p->user.uid, 1000);
        cr_assert_eq(p->user.n_additional_gids, 2);
        cr_assert_eq(p->user.additional_gids[1], 10);
        cr_assert_not(p->user.umask.set);
        cr_assert_eq(p->n_args, 3);
        cr_assert_str_eq(p->args[2], "echo hi");
        cr_assert_str_eq(p->env[2], "FOO=bar=baz");
        cr_assert_str_eq(p->env[3], "EMPTY=");
        cr_assert_str_eq(p->cwd, "/work");
        cr_assert_eq(p->capabilities->bounding, cap_mask(bounding));
        cr_assert_eq(p->capabilities->effective, CAP(0) | CAP(5));
        cr_assert_eq(p->capabilities->inheritable, 0);
        cr_assert_eq(p->capabilities->ambient, 0);
        cr_assert_str_eq(p->apparmor_profile, "docker-default");
        cr_assert(p->oom_score_adj.set);
        cr_assert_eq(p->oom_score_adj.value, 0);
        cr_assert_not(p->no_new_privileges);
        cr_assert_eq(p->n_rlimits, 2);
        cr_assert_eq(p->rlimits[1].type, RLIMIT_NPROC);
        cr_assert_eq(p->rlimits[1].hard, UINT64_MAX);
        cr_assert_eq(p->rlimits[0].soft, 1024);
        cr_assert_eq(p->rlimits[0].hard, 1048576);

        m = find_mount(&c, "/etc/resolv.conf");
        cr_assert_eq(m->bind, OCI_BIND_RECURSIVE);
        cr_assert_eq(m->propagation, MS_PRIVATE | MS_REC);
        cr_assert_eq(m->flags, 0);
        cr_assert_null(m->data);
        m = find_mount(&c, "/data");
        cr_assert_eq(m->flags, MS_RDONLY);
        cr_assert_str_eq(m->source, "/srv/data");
        m = find_mount(&c, "/dev/shm");
        cr_assert_str_eq(m->data, "mode=1777,size=67108864");

        cr_assert_eq(c.hooks.lists[OCI_HOOK_PRESTART].n, 1);
        cr_assert_str_eq(c.hooks.lists[OCI_HOOK_PRESTART].hooks[0].path, "/usr/bin/dockerd");
        cr_assert_eq(c.hooks.lists[OCI_HOOK_PRESTART].hooks[0].n_args, 4);
        cr_assert_str_eq(c.hooks.lists[OCI_HOOK_PRESTART].hooks[0].args[0], "libnetwork-setkey");
        cr_assert_not(c.hooks.lists[OCI_HOOK_PRESTART].hooks[0].timeout.set);
        cr_assert_eq(c.hooks.lists[OCI_HOOK_POSTSTOP].n, 1);
        cr_assert_eq(c.hooks.lists[OCI_HOOK_POSTSTOP].hooks[0].timeout.value, 5);
        cr_assert_str_eq(c.hooks.lists[OCI_HOOK_POSTSTOP].hooks[0].env[0], "LOG=1");
        cr_assert_eq(c.hooks.lists[OCI_HOOK_CREATE_RUNTIME].n, 0);
        cr_assert_null(c.hooks.lists[OCI_HOOK_CREATE_RUNTIME].hooks);

        cr_assert_eq(c.n_annotations, 1);
        cr_assert_str_eq(c.annotations[0].key, "org.opencontainers.image.stopSignal");
        cr_assert_str_eq(c.annotations[0].value, "SIGTERM");

        cr_assert_str_eq(c.linux_->cgroups_path, "system.slice:docker:4f2d7c1a9b3e");
        cr_assert_eq(c.linux_->n_sysctl, 2);
        cr_assert_str_eq(c.linux_->sysctl[1].value, "0 2147483647");
        cr_assert_eq(c.linux_->n_namespaces, 6);
        cr_assert_eq(c.linux_->namespaces[1].type, CLONE_NEWNET);
        cr_assert_str_eq(c.linux_->namespaces[1].path, "/var/run/docker/netns/default");
        cr_assert_null(c.linux_->namespaces[0].path);

        res = c.linux_->resources;
        cr_assert_eq(res->memory->limit.value, 33554432);
        cr_assert_eq(res->memory->swap.value, 67108864);
        cr_assert_eq(res->memory->reservation.value, -1);
        cr_assert(res->memory->disable_oom_killer.set);
        cr_assert_not(res->memory->disable_oom_killer.value);
        cr_assert_not(res->memory->swappiness.set);
        cr_assert_eq(res->cpu->quota.value, 150000);
        cr_assert_eq(res->cpu->period.value, 100000);
        cr_assert(res->cpu->shares.set);
        cr_assert_eq(res->pids->limit.value, 100);
        cr_assert_eq(res->n_devices, 4);
        cr_assert_eq(res->devices[2].major.value, 136);
        cr_assert_not(res->devices[2].minor.set);

        sc = c.linux_->seccomp;
        cr_assert_not_null(sc);
        cr_assert_eq(sc->default_action, SECCOMP_ACT_ERRNO_);
        cr_assert_eq(sc->profile.default_action.kind, SECCOMP_ACT_ERRNO_);
        cr_assert_eq(sc->profile.default_action.errno_ret, 1);
        cr_assert_eq(sc->profile.badarch_action.kind, SECCOMP_ACT_KILL_THREAD_);
        cr_assert_eq(sc->profile.n_architectures, 3);
        cr_assert_str_eq(sc->profile.architectures[2], "SCMP_ARCH_X32");
        cr_assert_eq(sc->n_syscalls, 8);
        /* One rule per name: 62 allowed + 3 personality + clone, clone3,
         * socket, ptrace. */
        cr_assert_eq(sc->profile.n_rules, sc->syscalls[0].n_names + 7);
        const struct seccomp_rule *rules = sc->profile.rules;
        size_t first = sc->syscalls[0].n_names;
        cr_assert_str_eq(rules[0].syscall, "accept");
        cr_assert_eq(rules[0].action.kind, SECCOMP_ACT_ALLOW_);
        cr_assert_eq(rules[0].action.errno_ret, 0);
        cr_assert_eq(rules[0].n_args, 0);
        cr_assert_str_eq(rules[first + 2].syscall, "personality");
        cr_assert_eq(rules[first + 2].args[0].value, 4294967295U);
        cr_assert_eq(rules[first + 2].args[0].op, SECCOMP_CMP_EQ_);
        cr_assert_str_eq(rules[first + 3].syscall, "clone");
        cr_assert_eq(rules[first + 3].n_args, 1);
        cr_assert_eq(rules[first + 3].args[0].op, SECCOMP_CMP_MASKED_EQ_);
        cr_assert_eq(rules[first + 3].args[0].value, 2114060288);
        cr_assert_eq(rules[first + 3].args[0].value_two, 0);
        cr_assert_str_eq(rules[first + 4].syscall, "clone3");
        cr_assert_eq(rules[first + 4].action.kind, SECCOMP_ACT_ERRNO_);
        cr_assert_eq(rules[first + 4].action.errno_ret, 38);
        cr_assert_eq(rules[first + 5].n_args, 2);
        cr_assert_eq(rules[first + 5].args[1].index, 1);
        cr_assert_eq(rules[first + 5].args[1].op, SECCOMP_CMP_NE_);
        cr_assert_eq(rules[first + 6].action.kind, SECCOMP_ACT_KILL_THREAD_);
        cr_assert_eq(sc->profile.flags, 0);
        oci_config_free(&c);
        assert_no_leaks();
}

/* The profile the parser builds is one seccomp_compile() takes as it is. */
Test(oci_config, docker_seccomp_profile_compiles)
{
        struct oci_config c;
        struct seccomp_program prog = {0};
        psrun_error err = {0};

        load_fixture("docker-run.json", &c);
        int r = seccomp_compile(&c.linux_->seccomp->profile, &prog, &err);
        cr_assert_eq(r, 0, "%s", err.msg);
        cr_assert_gt(prog.len, 10);
        seccomp_program_free(&prog);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, every_field)
{
        struct oci_config c;
        const struct oci_process *p;
        const struct oci_linux *l;
        const struct oci_resources *res;
        const struct oci_mount *m;

        load_fixture("full.json", &c);
        cr_assert_str_eq(c.oci_version, "1.2.0");
        p = c.process;
        cr_assert(p->terminal);
        cr_assert_eq(p->console_size->height, 24);
        cr_assert_eq(p->console_size->width, 80);
        cr_assert(p->user.umask.set);
        cr_assert_eq(p->user.umask.value, 18);
        cr_assert_eq(p->user.additional_gids[1], UINT32_MAX);
        cr_assert_str_eq(p->args[2], "");
        cr_assert_eq(p->capabilities->bounding, CAP(21) | CAP(12) | CAP(40));
        cr_assert_eq(p->capabilities->effective, CAP(21));
        cr_assert_eq(p->capabilities->inheritable, 0);
        cr_assert_eq(p->capabilities->permitted, CAP(21) | CAP(12));
        cr_assert_eq(p->capabilities->ambient, CAP(12));
        cr_assert_eq(p->rlimits[0].type, RLIMIT_CORE);
        cr_assert_str_eq(p->apparmor_profile, "psrun-test");
        cr_assert_eq(p->oom_score_adj.value, -1000);
        cr_assert_str_eq(p->selinux_label, "system_u:system_r:container_t:s0:c1,c2");
        cr_assert_not(c.root.readonly);
        cr_assert_str_eq(c.hostname, "box");
        cr_assert_str_eq(c.domainname, "example.org");

        m = find_mount(&c, "/tmp");
        cr_assert(m->tmpcopyup);
        cr_assert_str_eq(m->data, "mode=1777,size=64m");
        m = find_mount(&c, "/mnt/idmapped");
        cr_assert_eq(m->bind, OCI_BIND_RECURSIVE);
        cr_assert(m->idmap);
        cr_assert(m->idmap_recursive);
        cr_assert_eq(m->attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOATIME);
        cr_assert_eq(m->attr_clr, MOUNT_ATTR__ATIME);
        cr_assert_eq(m->propagation, MS_SLAVE | MS_REC);
        cr_assert_eq(m->n_uid_mappings, 1);
        cr_assert_eq(m->uid_mappings[0].host_id, 100000);
        cr_assert_eq(m->gid_mappings[0].size, 65536);
        m = find_mount(&c, "/mnt/plain");
        cr_assert_null(m->type);
        cr_assert_eq(m->bind, OCI_BIND);
        cr_assert(m->idmap);
        cr_assert_not(m->idmap_recursive);

        for (int k = 0; k < _OCI_HOOK_MAX; k++)
                cr_assert_geq(c.hooks.lists[k].n, 1, "%s", oci_hook_kind_to_string(k));
        cr_assert_eq(c.hooks.lists[OCI_HOOK_CREATE_RUNTIME].n, 2);
        cr_assert_str_eq(c.hooks.lists[OCI_HOOK_CREATE_RUNTIME].hooks[1].path,
                         "/hooks/create-runtime-2");
        cr_assert_eq(c.hooks.lists[OCI_HOOK_CREATE_CONTAINER].hooks[0].timeout.value, 10);
        cr_assert_eq(c.hooks.lists[OCI_HOOK_POSTSTOP].hooks[0].timeout.value, INT32_MAX);
        cr_assert_eq(c.n_annotations, 2);
        cr_assert_str_eq(c.annotations[1].value, "");

        l = c.linux_;
        cr_assert_eq(namespaces_mask(&c), CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC |
                                                  CLONE_NEWUTS | CLONE_NEWUSER | CLONE_NEWCGROUP |
                                                  0x80 /* CLONE_NEWTIME */);
        cr_assert_eq(l->n_uid_mappings, 2);
        cr_assert_eq(l->uid_mappings[1].host_id, 4294901760U);
        cr_assert_eq(l->time_offsets->monotonic->secs, -86400);
        cr_assert_eq(l->time_offsets->monotonic->nanosecs, 500);
        cr_assert_eq(l->time_offsets->boottime->secs, 31536000);
        cr_assert_eq(l->time_offsets->boottime->nanosecs, 0);
        cr_assert_str_eq(l->sysctl[0].key, "kernel.domainname");

        res = l->resources;
        cr_assert_eq(res->memory->limit.value, 536870912);
        cr_assert_eq(res->memory->reservation.value, 268435456);
        cr_assert_eq(res->memory->swap.value, 1073741824);
        cr_assert_eq(res->memory->kernel.value, -1);
        cr_assert(res->memory->kernel_tcp.set);
        cr_assert_eq(res->memory->swappiness.value, 60);
        cr_assert(res->memory->disable_oom_killer.value);
        cr_assert(res->memory->use_hierarchy.set);
        cr_assert_not(res->memory->use_hierarchy.value);
        cr_assert(res->memory->check_before_update.value);
        cr_assert_eq(res->cpu->shares.value, 1024);
        cr_assert_eq(res->cpu->burst.value, 100000);
        cr_assert_eq(res->cpu->realtime_runtime.value, 950000);
        cr_assert_eq(res->cpu->realtime_period.value, 1000000);
        cr_assert_str_eq(res->cpu->cpus, "0-3");
        cr_assert_str_eq(res->cpu->mems, "0");
        cr_assert_eq(res->cpu->idle.value, 1);
        cr_assert_eq(res->pids->limit.value, -1);
        cr_assert_eq(res->block_io->weight.value, 500);
        cr_assert_eq(res->block_io->leaf_weight.value, 300);
        cr_assert_eq(res->block_io->n_weight_device, 2);
        cr_assert_not(res->block_io->weight_device[1].weight.set);
        cr_assert_eq(res->block_io->weight_device[1].leaf_weight.value, 100);
        cr_assert_eq(res->block_io->throttle_read_bps[0].rate, 104857600);
        cr_assert_eq(res->block_io->throttle_write_bps[0].rate, 52428800);
        cr_assert_eq(res->block_io->throttle_read_iops[0].minor, 16);
        cr_assert_eq(res->block_io->throttle_write_iops[0].rate, 500);
        cr_assert_eq(res->n_hugepage_limits, 2);
        cr_assert_str_eq(res->hugepage_limits[1].page_size, "1GB");
        cr_assert_eq(res->devices[0].type, 'a');
        cr_assert_str_eq(res->devices[0].access, "rwm");
        cr_assert_eq(res->devices[1].type, 'b');
        cr_assert_eq(res->devices[1].minor.value, -1);
        cr_assert_str_eq(res->devices[2].access, "mw");
        cr_assert_eq(res->n_unified, 2);
        cr_assert_str_eq(res->unified[1].value, "8:0 rbps=1048576\n8:16 wiops=120");

        cr_assert_str_eq(l->cgroups_path, "/psrun/test");
        cr_assert_eq(l->n_devices, 4);
        cr_assert_eq(l->devices[0].type, S_IFCHR);
        cr_assert_eq(l->devices[0].file_mode.value, 0666);
        cr_assert(l->devices[0].uid.set);
        cr_assert_eq(l->devices[1].type, S_IFBLK);
        cr_assert_not(l->devices[1].file_mode.set);
        cr_assert_eq(l->devices[2].type, S_IFCHR);
        cr_assert_eq(l->devices[3].type, S_IFIFO);

        cr_assert_eq(l->seccomp->profile.default_action.kind, SECCOMP_ACT_ALLOW_);
        cr_assert_eq(l->seccomp->profile.default_action.errno_ret, 0);
        cr_assert_eq(l->seccomp->flags, SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW);
        cr_assert_eq(l->seccomp->profile.flags,
                     SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW);
        cr_assert_str_eq(l->seccomp->listener_path, "/run/seccomp-agent.sock");
        cr_assert_str_eq(l->seccomp->listener_metadata, "opaque");
        cr_assert_eq(l->seccomp->profile.n_rules, 9);
        cr_assert_str_eq(l->seccomp->profile.rules[1].syscall, "umount2");
        /* The spec's default errno is EPERM. */
        cr_assert_eq(l->seccomp->profile.rules[1].action.errno_ret, EPERM);
        cr_assert_eq(l->seccomp->profile.rules[3].action.kind, SECCOMP_ACT_TRACE_);
        cr_assert_eq(l->seccomp->profile.rules[3].action.errno_ret, 65535);
        cr_assert_eq(l->seccomp->profile.rules[7].action.kind, SECCOMP_ACT_NOTIFY_);
        cr_assert_eq(l->seccomp->profile.rules[8].action.errno_ret, 4095);
        cr_assert_eq(l->seccomp->profile.rules[8].n_args, 5);
        cr_assert_eq(l->seccomp->profile.rules[8].args[1].value, UINT64_MAX);
        cr_assert_eq(l->seccomp->profile.rules[8].args[1].index, 5);
        cr_assert_eq(l->rootfs_propagation, MS_SLAVE | MS_REC);
        cr_assert_str_eq(l->masked_paths[0], "/proc/kcore");
        cr_assert_str_eq(l->mount_label, "system_u:object_r:container_file_t:s0:c1,c2");
        cr_assert_eq(l->personality->domain, PER_LINUX32);
        cr_assert_eq(l->personality->n_flags, 0);
        oci_config_free(&c);
        /* Freeing twice (and NULL) is fine. */
        oci_config_free(&c);
        oci_config_free(NULL);
        assert_no_leaks();
}

Test(oci_config, minimal_config)
{
        struct oci_config c;

        parse_ok("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}}", &c);
        cr_assert_str_eq(c.root.path, "r");
        cr_assert_null(c.process);
        cr_assert_null(c.linux_);
        cr_assert_null(c.mounts);
        cr_assert_null(c.hostname);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, json_escapes_and_unicode)
{
        struct oci_config c;

        parse_ok(HEAD "\"hostname\": \"a\\/b\\u00e9\\t\", \"annotations\": {\"k\\\"q\": "
                      "\"\u00e9\u2603\"}}",
                 &c);
        cr_assert_str_eq(c.hostname, "a/b\xc3\xa9\t");
        cr_assert_str_eq(c.annotations[0].key, "k\"q");
        cr_assert_str_eq(c.annotations[0].value, "\xc3\xa9\xe2\x98\x83");
        oci_config_free(&c);
        assert_no_leaks();
}

/* ---- tables ---- */

static struct oci_mount *parse_mount_options(struct oci_config *c, const char *options)
{
        char json[1024];

        snprintf(json, sizeof(json),
                 HEAD "\"mounts\": [{\"destination\": \"/m\", \"options\": [%s]}]}", options);
        parse_ok(json, c);
        return &c->mounts[0];
}

Test(oci_config, every_mount_option)
{
        static const struct {
                const char *name;
                unsigned long flags, clear_flags, propagation;
                enum oci_bind bind;
                uint64_t attr_set, attr_clr;
                bool idmap, idmap_recursive, tmpcopyup;
        } want[] = {
                {"defaults", .flags = 0},
                {"ro", .flags = MS_RDONLY},
                {"rw", .clear_flags = MS_RDONLY},
                {"nosuid", .flags = MS_NOSUID},
                {"suid", .clear_flags = MS_NOSUID},
                {"nodev", .flags = MS_NODEV},
                {"dev", .clear_flags = MS_NODEV},
                {"noexec", .flags = MS_NOEXEC},
                {"exec", .clear_flags = MS_NOEXEC},
                {"sync", .flags = MS_SYNCHRONOUS},
                {"async", .clear_flags = MS_SYNCHRONOUS},
                {"remount", .flags = MS_REMOUNT},
                {"mand", .flags = MS_MANDLOCK},
                {"nomand", .clear_flags = MS_MANDLOCK},
                {"dirsync", .flags = MS_DIRSYNC},
                {"noatime", .flags = MS_NOATIME},
                {"atime", .clear_flags = MS_NOATIME},
                {"nodiratime", .flags = MS_NODIRATIME},
                {"diratime", .clear_flags = MS_NODIRATIME},
                {"relatime", .flags = MS_RELATIME},
                {"norelatime", .clear_flags = MS_RELATIME},
                {"strictatime", .flags = MS_STRICTATIME},
                {"nostrictatime", .clear_flags = MS_STRICTATIME},
                {"lazytime", .flags = MS_LAZYTIME},
                {"nolazytime", .clear_flags = MS_LAZYTIME},
                {"iversion", .flags = MS_I_VERSION},
                {"noiversion", .clear_flags = MS_I_VERSION},
                {"silent", .flags = MS_SILENT},
                {"loud", .clear_flags = MS_SILENT},
                {"nosymfollow", .flags = 256},
                {"symfollow", .clear_flags = 256},
                {"bind", .bind = OCI_BIND},
                {"rbind", .bind = OCI_BIND_RECURSIVE},
                {"private", .propagation = MS_PRIVATE},
                {"rprivate", .propagation = MS_PRIVATE | MS_REC},
                {"shared", .propagation = MS_SHARED},
                {"rshared", .propagation = MS_SHARED | MS_REC},
                {"slave", .propagation = MS_SLAVE},
                {"rslave", .propagation = MS_SLAVE | MS_REC},
                {"unbindable", .propagation = MS_UNBINDABLE},
                {"runbindable", .propagation = MS_UNBINDABLE | MS_REC},
                {"rro", .attr_set = MOUNT_ATTR_RDONLY},
                {"rrw", .attr_clr = MOUNT_ATTR_RDONLY},
                {"rnosuid", .attr_set = MOUNT_ATTR_NOSUID},
                {"rsuid", .attr_clr = MOUNT_ATTR_NOSUID},
                {"rnodev", .attr_set = MOUNT_ATTR_NODEV},
                {"rdev", .attr_clr = MOUNT_ATTR_NODEV},
                {"rnoexec", .attr_set = MOUNT_ATTR_NOEXEC},
                {"rexec", .attr_clr = MOUNT_ATTR_NOEXEC},
                {"rnodiratime", .attr_set = MOUNT_ATTR_NODIRATIME},
                {"rdiratime", .attr_clr = MOUNT_ATTR_NODIRATIME},
                {"rnosymfollow", .attr_set = MOUNT_ATTR_NOSYMFOLLOW},
                {"rsymfollow", .attr_clr = MOUNT_ATTR_NOSYMFOLLOW},
                {"rnoatime", .attr_set = MOUNT_ATTR_NOATIME, .attr_clr = MOUNT_ATTR__ATIME},
                {"rstrictatime", .attr_set = MOUNT_ATTR_STRICTATIME, .attr_clr = MOUNT_ATTR__ATIME},
                {"rrelatime", .attr_clr = MOUNT_ATTR__ATIME},
                {"ratime", .attr_clr = MOUNT_ATTR__ATIME},
                {"rnorelatime", .attr_clr = MOUNT_ATTR__ATIME},
                {"rnostrictatime", .attr_clr = MOUNT_ATTR__ATIME},
                {"idmap", .idmap = true},
                {"ridmap", .idmap = true, .idmap_recursive = true},
                {"tmpcopyup", .tmpcopyup = true},
        };
        const size_t n = sizeof(want) / sizeof(want[0]);
        size_t n_table = 0;

        /* Every table entry is expected here, and nothing else. */
        for (const char *name; (name = oci_mount_option_name(n_table)); n_table++) {
                size_t i = 0;
                while (i < n && strcmp(want[i].name, name) != 0)
                        i++;
                cr_expect_lt(i, n, "table entry %s is not tested", name);
        }
        cr_assert_eq(n_table, n);

        for (size_t i = 0; i < n; i++) {
                struct oci_config c;
                char quoted[64];

                snprintf(quoted, sizeof(quoted), "\"%s\"", want[i].name);
                const struct oci_mount *m = parse_mount_options(&c, quoted);
                cr_expect_eq(m->flags, want[i].flags, "%s: flags %#lx", want[i].name, m->flags);
                cr_expect_eq(m->clear_flags, want[i].clear_flags, "%s: clear %#lx", want[i].name,
                             m->clear_flags);
                cr_expect_eq(m->propagation, want[i].propagation, "%s", want[i].name);
                cr_expect_eq(m->bind, want[i].bind, "%s", want[i].name);
                cr_expect_eq(m->attr_set, want[i].attr_set, "%s", want[i].name);
                cr_expect_eq(m->attr_clr, want[i].attr_clr, "%s", want[i].name);
                cr_expect_eq(m->idmap, want[i].idmap, "%s", want[i].name);
                cr_expect_eq(m->idmap_recursive, want[i].idmap_recursive, "%s", want[i].name);
                cr_expect_eq(m->tmpcopyup, want[i].tmpcopyup, "%s", want[i].name);
                cr_expect_null(m->data, "%s: data %s", want[i].name, m->data);
                cr_expect_eq(m->n_options, 1);
                cr_expect_str_eq(m->options[0], want[i].name);
                oci_config_free(&c);
        }
        cr_assert_null(oci_mount_option_name(n));
        assert_no_leaks();
}

Test(oci_config, mount_options_later_ones_win)
{
        struct oci_config c;
        const struct oci_mount *m;

        m = parse_mount_options(&c, "\"ro\", \"nosuid\", \"rw\", \"suid\", \"nosuid\"");
        cr_assert_eq(m->flags, MS_NOSUID);
        cr_assert_eq(m->clear_flags, MS_RDONLY);
        oci_config_free(&c);

        m = parse_mount_options(&c, "\"shared\", \"rprivate\", \"bind\", \"rbind\", \"bind\"");
        cr_assert_eq(m->propagation, MS_PRIVATE | MS_REC);
        cr_assert_eq(m->bind, OCI_BIND);
        oci_config_free(&c);

        m = parse_mount_options(&c, "\"rro\", \"rrw\", \"rnoatime\", \"rstrictatime\"");
        cr_assert_eq(m->attr_set, MOUNT_ATTR_STRICTATIME);
        cr_assert_eq(m->attr_clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR__ATIME);
        oci_config_free(&c);

        /* Unknown options keep their order in data; known ones are left out. */
        m = parse_mount_options(&c, "\"mode=755\", \"ro\", \"size=65536k\", \"uid=0,gid=0\"");
        cr_assert_str_eq(m->data, "mode=755,size=65536k,uid=0,gid=0");
        cr_assert_eq(m->flags, MS_RDONLY);
        oci_config_free(&c);

        m = parse_mount_options(&c, "");
        cr_assert_eq(m->n_options, 0);
        cr_assert_not_null(m->options);
        cr_assert_null(m->options[0]);
        cr_assert_null(m->data);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, mount_type_bind_is_a_bind_mount)
{
        struct oci_config c;

        parse_ok(HEAD "\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\", \"source\": "
                      "\"/x\"}, {\"destination\": \"/b\", \"type\": \"bind\", \"options\": "
                      "[\"rbind\"]}, {\"destination\": \"/c\", \"type\": \"none\"}]}",
                 &c);
        cr_assert_eq(c.mounts[0].bind, OCI_BIND);
        cr_assert_eq(c.mounts[1].bind, OCI_BIND_RECURSIVE);
        cr_assert_eq(c.mounts[2].bind, OCI_BIND_NONE);
        cr_assert_null(c.mounts[2].source);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, rootfs_propagation)
{
        static const struct {
                const char *name;
                int flags;
        } want[] = {
                {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
                {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
                {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
                {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
        };

        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                struct oci_config c;
                char json[256];

                snprintf(json, sizeof(json), HEAD "\"linux\": {\"rootfsPropagation\": \"%s\"}}",
                         want[i].name);
                parse_ok(json, &c);
                cr_expect_eq(c.linux_->rootfs_propagation, want[i].flags, "%s", want[i].name);
                oci_config_free(&c);
        }
        assert_no_leaks();
}

Test(oci_config, namespace_table)
{
        static const struct {
                const char *name;
                int flag;
        } want[] = {
                {"pid", CLONE_NEWPID},       {"network", CLONE_NEWNET},
                {"mount", CLONE_NEWNS},      {"ipc", CLONE_NEWIPC},
                {"uts", CLONE_NEWUTS},       {"user", CLONE_NEWUSER},
                {"cgroup", CLONE_NEWCGROUP}, {"time", 0x80},
        };

        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                struct oci_config c;
                char json[256];

                cr_expect_eq(oci_namespace_from_string(want[i].name), want[i].flag);
                cr_expect_str_eq(oci_namespace_to_string(want[i].flag), want[i].name);
                snprintf(json, sizeof(json),
                         HEAD "\"linux\": {\"namespaces\": [{\"type\": \"%s\", \"path\": "
                              "\"/proc/1/ns/x\"}]}}",
                         want[i].name);
                parse_ok(json, &c);
                cr_expect_eq(c.linux_->namespaces[0].type, want[i].flag, "%s", want[i].name);
                cr_expect_str_eq(c.linux_->namespaces[0].path, "/proc/1/ns/x");
                oci_config_free(&c);
        }
        cr_assert_eq(oci_namespace_from_string("net"), -EINVAL);
        cr_assert_eq(oci_namespace_from_string(NULL), -EINVAL);
        cr_assert_null(oci_namespace_to_string(0));
        assert_no_leaks();
}

Test(oci_config, rlimit_table)
{
        static const struct {
                const char *name;
                int resource;
        } want[] = {
                {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
                {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
                {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
                {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
                {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
                {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
                {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
                {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME},
        };
        char json[4096];
        size_t o = 0;
        struct oci_config c;

        cr_assert_eq(sizeof(want) / sizeof(want[0]), RLIM_NLIMITS);
        o += (size_t) snprintf(json + o, sizeof(json) - o, PROCESS_HEAD "\"rlimits\": [");
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                cr_expect_eq(oci_rlimit_from_string(want[i].name), want[i].resource);
                cr_expect_str_eq(oci_rlimit_to_string(want[i].resource), want[i].name);
                o += (size_t) snprintf(json + o, sizeof(json) - o,
                                       "%s{\"type\": \"%s\", \"soft\": %zu, \"hard\": %zu}",
                                       i ? ", " : "", want[i].name, i, i + 1);
        }
        snprintf(json + o, sizeof(json) - o, "]}}");
        parse_ok(json, &c);
        cr_assert_eq(c.process->n_rlimits, RLIM_NLIMITS);
        for (size_t i = 0; i < RLIM_NLIMITS; i++) {
                cr_expect_eq(c.process->rlimits[i].type, want[i].resource);
                cr_expect_eq(c.process->rlimits[i].soft, i);
                cr_expect_eq(c.process->rlimits[i].hard, i + 1);
        }
        oci_config_free(&c);
        cr_assert_eq(oci_rlimit_from_string("RLIMIT_FOO"), -EINVAL);
        cr_assert_eq(oci_rlimit_from_string(NULL), -EINVAL);
        cr_assert_null(oci_rlimit_to_string(RLIM_NLIMITS));
        assert_no_leaks();
}

Test(oci_config, hook_kinds)
{
        static const char *const names[] = {"prestart",       "createRuntime", "createContainer",
                                            "startContainer", "poststart",     "poststop"};

        cr_assert_eq(sizeof(names) / sizeof(names[0]), _OCI_HOOK_MAX);
        for (int k = 0; k < _OCI_HOOK_MAX; k++) {
                struct oci_config c;
                char json[256];

                cr_expect_str_eq(oci_hook_kind_to_string(k), names[k]);
                snprintf(json, sizeof(json), HEAD "\"hooks\": {\"%s\": [{\"path\": \"/h\"}]}}",
                         names[k]);
                parse_ok(json, &c);
                for (int j = 0; j < _OCI_HOOK_MAX; j++)
                        cr_expect_eq(c.hooks.lists[j].n, j == k, "%s in %s", names[k], names[j]);
                cr_expect_str_eq(c.hooks.lists[k].hooks[0].path, "/h");
                cr_expect_null(c.hooks.lists[k].hooks[0].args);
                oci_config_free(&c);
        }
        cr_assert_null(oci_hook_kind_to_string(_OCI_HOOK_MAX));
        assert_no_leaks();
}

Test(oci_config, capabilities)
{
        struct oci_config c;

        parse_ok(PROCESS_HEAD "\"capabilities\": {\"bounding\": [\"CAP_SYS_ADMIN\", \"CAP_CHOWN\", "
                              "\"CAP_CHOWN\", \"CAP_CHECKPOINT_RESTORE\", \"CAP_BPF\", "
                              "\"CAP_PERFMON\"], \"ambient\": []}}}",
                 &c);
        /* CAP_PERFMON 38, CAP_BPF 39, CAP_CHECKPOINT_RESTORE 40: kept even where
         * the running kernel is older than them. */
        cr_assert_eq(c.process->capabilities->bounding,
                     CAP(21) | CAP(0) | CAP(40) | CAP(39) | CAP(38));
        cr_assert_eq(c.process->capabilities->ambient, 0);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, seccomp_names)
{
        for (int kind = 0; seccomp_action_kind_to_string(kind); kind++) {
                struct oci_config c;
                char json[512];

                snprintf(json, sizeof(json),
                         HEAD "\"linux\": {\"seccomp\": {\"defaultAction\": \"%s\", \"syscalls\": "
                              "[{\"names\": [\"getpid\"], \"action\": \"%s\"}]}}}",
                         seccomp_action_kind_to_string(kind), seccomp_action_kind_to_string(kind));
                parse_ok(json, &c);
                cr_expect_eq(c.linux_->seccomp->default_action, kind);
                cr_expect_eq(c.linux_->seccomp->profile.rules[0].action.kind, kind);
                oci_config_free(&c);
        }
        for (int op = 0; seccomp_cmp_op_to_string(op); op++) {
                struct oci_config c;
                char json[512];

                snprintf(json, sizeof(json),
                         HEAD "\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", "
                              "\"syscalls\": [{\"names\": [\"a\"], \"action\": \"SCMP_ACT_LOG\", "
                              "\"args\": [{\"index\": 3, \"value\": 7, \"op\": \"%s\"}]}]}}}",
                         seccomp_cmp_op_to_string(op));
                parse_ok(json, &c);
                cr_expect_eq(c.linux_->seccomp->syscalls[0].args[0].op, op);
                cr_expect_eq(c.linux_->seccomp->syscalls[0].args[0].index, 3);
                cr_expect_eq(c.linux_->seccomp->syscalls[0].args[0].value_two, 0);
                oci_config_free(&c);
        }
        /* The spec's old name for KILL_THREAD. */
        struct oci_config c;
        parse_ok(HEAD
                 "\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_KILL\", \"flags\": "
                 "[\"SECCOMP_FILTER_FLAG_TSYNC\", \"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\", "
                 "\"SECCOMP_FILTER_FLAG_NEW_LISTENER\", \"SECCOMP_FILTER_FLAG_TSYNC_ESRCH\"]}}}",
                 &c);
        cr_assert_eq(c.linux_->seccomp->default_action, SECCOMP_ACT_KILL_THREAD_);
        cr_assert_eq(c.linux_->seccomp->flags, SECCOMP_FILTER_FLAG_TSYNC | (1U << 5) |
                                                       SECCOMP_FILTER_FLAG_NEW_LISTENER |
                                                       SECCOMP_FILTER_FLAG_TSYNC_ESRCH);
        cr_assert_eq(c.linux_->seccomp->profile.n_rules, 0);
        cr_assert_not_null(c.linux_->seccomp->profile.rules);
        oci_config_free(&c);
        assert_no_leaks();
}

/* ---- unknown fields, null, -1 ---- */

Test(oci_config, unknown_fields_are_ignored)
{
        struct oci_config c;

        parse_ok(
                "{\"ociVersion\": \"1.0.2\", \"platform\": {\"os\": \"linux\"}, \"x\": [[[]]],\n"
                " \"root\": {\"path\": \"r\", \"extra\": true},\n"
                " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"commandLine\": 5,\n"
                "   \"user\": {\"uid\": 1, \"gid\": 2, \"username\": {}},\n"
                "   \"capabilities\": {\"bounding\": [], \"future\": [\"CAP_X\"]},\n"
                "   \"rlimits\": [{\"type\": \"RLIMIT_AS\", \"soft\": 1, \"hard\": 2, \"x\": 1}],\n"
                "   \"scheduler\": {\"policy\": 7}, \"ioPriority\": \"high\"},\n"
                " \"mounts\": [{\"destination\": \"/a\", \"future\": null}],\n"
                " \"hooks\": {\"prestart\": [{\"path\": \"/h\", \"y\": 1}], \"later\": 3},\n"
                " \"linux\": {\"namespaces\": [{\"type\": \"pid\", \"z\": []}],\n"
                "   \"resources\": {\"memory\": {\"limit\": 1, \"future\": \"x\"}, \"rdma\": 1,\n"
                "     \"network\": [1], \"misc\": {}},\n"
                "   \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [\n"
                "     {\"names\": [\"a\"], \"action\": \"SCMP_ACT_LOG\", \"comment\": 1,\n"
                "      \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\", \"w\": "
                "0}]}]},\n"
                "   \"intelRdt\": {\"closID\": 5}, \"netDevices\": {\"eth0\": {}}}}",
                &c);
        cr_assert_str_eq(c.root.path, "r");
        cr_assert_eq(c.process->user.uid, 1);
        cr_assert_eq(c.process->user.gid, 2);
        cr_assert_eq(c.process->rlimits[0].hard, 2);
        cr_assert_str_eq(c.mounts[0].destination, "/a");
        cr_assert_eq(c.hooks.lists[OCI_HOOK_PRESTART].n, 1);
        cr_assert_eq(c.linux_->namespaces[0].type, CLONE_NEWPID);
        cr_assert_eq(c.linux_->resources->memory->limit.value, 1);
        cr_assert_eq(c.linux_->seccomp->syscalls[0].args[0].value, 1);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config, null_means_not_set)
{
        struct oci_config c;

        parse_ok(HEAD
                 "\"hostname\": null, \"mounts\": null, \"hooks\": null, \"annotations\": null,"
                 " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"oomScoreAdj\": null,"
                 " \"capabilities\": null, \"env\": null},"
                 " \"linux\": {\"resources\": {\"memory\": {\"limit\": null, \"swap\": 5}}}}",
                 &c);
        cr_assert_null(c.hostname);
        cr_assert_null(c.mounts);
        cr_assert_null(c.annotations);
        cr_assert_not(c.process->oom_score_adj.set);
        cr_assert_null(c.process->capabilities);
        cr_assert_null(c.process->env);
        cr_assert_not(c.linux_->resources->memory->limit.set);
        cr_assert_eq(c.linux_->resources->memory->swap.value, 5);
        oci_config_free(&c);

        /* A required field that is null is missing. */
        expect_error(HEAD "\"process\": {\"args\": null, \"cwd\": \"/\"}}", EINVAL,
                     "config.json:2:12: process.args: missing (required)");
        assert_no_leaks();
}

Test(oci_config, minus_one_means_unlimited)
{
        struct oci_config c;

        parse_ok(HEAD
                 "\"linux\": {\"resources\": {\"memory\": {\"limit\": -1, \"reservation\": -1,"
                 " \"swap\": -1, \"kernel\": -1, \"kernelTCP\": -1}, \"pids\": {\"limit\": -1},"
                 " \"cpu\": {\"quota\": -1, \"realtimeRuntime\": -1},"
                 " \"devices\": [{\"allow\": true, \"major\": -1, \"minor\": -1}]}}}",
                 &c);
        const struct oci_resources *res = c.linux_->resources;
        cr_assert_eq(res->memory->limit.value, -1);
        cr_assert_eq(res->memory->reservation.value, -1);
        cr_assert_eq(res->memory->swap.value, -1);
        cr_assert_eq(res->memory->kernel.value, -1);
        cr_assert_eq(res->memory->kernel_tcp.value, -1);
        cr_assert_eq(res->pids->limit.value, -1);
        cr_assert_eq(res->cpu->quota.value, -1);
        cr_assert_eq(res->devices[0].major.value, -1);
        oci_config_free(&c);

        /* Limit -1 with a swap is fine: unlimited memory. */
        parse_ok(HEAD "\"linux\": {\"resources\": {\"memory\": {\"limit\": -1, \"swap\": 100}}}}",
                 &c);
        oci_config_free(&c);

        expect_error(HEAD "\"linux\": {\"resources\": {\"memory\": {\"limit\": -2}}}}", ERANGE,
                     "config.json:2:45: linux.resources.memory.limit: -2 is out of range "
                     "(-1..9223372036854775807)");
        expect_error(HEAD
                     "\"linux\": {\"resources\": {\"memory\": {\"swap\": -9223372036854775808}}}}",
                     ERANGE,
                     "config.json:2:44: linux.resources.memory.swap: -9223372036854775808 is out "
                     "of range (-1..9223372036854775807)");
        expect_error(HEAD "\"linux\": {\"resources\": {\"pids\": {\"limit\": -2}}}}", ERANGE,
                     "config.json:2:43: linux.resources.pids.limit: -2 is out of range "
                     "(-1..9223372036854775807)");
        expect_error(
                HEAD
                "\"linux\": {\"resources\": {\"devices\": [{\"allow\": true, \"minor\": -2}]}}}",
                ERANGE,
                "config.json:2:62: linux.resources.devices[0].minor: -2 is out of range "
                "(-1..9223372036854775807)");
        assert_no_leaks();
}

Test(oci_config, integer_bounds)
{
        struct oci_config c;

        parse_ok(HEAD "\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 4294967295,"
                      " \"size\": 1}], \"timeOffsets\": {\"monotonic\": {\"secs\": "
                      "-9223372036854775808, \"nanosecs\": 999999999}}, \"resources\": "
                      "{\"hugepageLimits\": [{\"pageSize\": \"64KB\", \"limit\": "
                      "18446744073709551615}]}}}",
                 &c);
        cr_assert_eq(c.linux_->uid_mappings[0].host_id, UINT32_MAX);
        cr_assert_eq(c.linux_->time_offsets->monotonic->secs, INT64_MIN);
        cr_assert_eq(c.linux_->resources->hugepage_limits[0].limit, UINT64_MAX);
        oci_config_free(&c);

        /* "-0" is 0. */
        parse_ok(PROCESS_HEAD "\"user\": {\"uid\": -0, \"gid\": 0}}}", &c);
        cr_assert_eq(c.process->user.uid, 0);
        oci_config_free(&c);

        expect_error(HEAD "\"linux\": {\"resources\": {\"hugepageLimits\": [{\"pageSize\": \"2MB\","
                          " \"limit\": 18446744073709551616}]}}}",
                     ERANGE,
                     "config.json:2:73: linux.resources.hugepageLimits[0].limit: "
                     "18446744073709551616 is out of range (0..18446744073709551615)");
        expect_error(HEAD "\"linux\": {\"timeOffsets\": {\"boottime\": {\"secs\": "
                          "-9223372036854775809}}}}",
                     ERANGE,
                     "config.json:2:48: linux.timeOffsets.boottime.secs: -9223372036854775809 is "
                     "out of range (-9223372036854775808..9223372036854775807)");
        expect_error(HEAD "\"linux\": {\"timeOffsets\": {\"boottime\": {\"nanosecs\": "
                          "1000000000}}}}",
                     ERANGE,
                     "config.json:2:52: linux.timeOffsets.boottime.nanosecs: 1000000000 is out of "
                     "range (0..999999999)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 4294967296, \"gid\": 0}}}", ERANGE,
                     "config.json:2:57: process.user.uid: 4294967296 is out of range "
                     "(0..4294967295)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": -1, \"gid\": 0}}}", ERANGE,
                     "config.json:2:57: process.user.uid: -1 is out of range (0..4294967295)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 99999999999999999999999, \"gid\": 0}}}",
                     ERANGE,
                     "config.json:2:57: process.user.uid: 99999999999999999999999 is out of range "
                     "(0..4294967295)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 1.0, \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got 1.0");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 1e3, \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got 1e3");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": \"5\", \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got a string");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": true, \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got a boolean");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": [], \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got an array");
        assert_no_leaks();
}

/* ---- every rejection, with its message ---- */

struct error_case {
        const char *json;
        int errnum;
        const char *msg;
};

static void expect_errors(const struct error_case *cases, size_t n)
{
        for (size_t i = 0; i < n; i++)
                expect_error(cases[i].json, cases[i].errnum, cases[i].msg);
}

#define CASES(...)                                                                                 \
        do {                                                                                       \
                static const struct error_case cases_[] = {__VA_ARGS__};                           \
                expect_errors(cases_, sizeof(cases_) / sizeof(cases_[0]));                         \
        } while (0)

Test(oci_config, top_level_errors)
{
        CASES({"{\"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:1: ociVersion: missing (required)"},
              {"{\"ociVersion\": \"1.0.2\"}", EINVAL, "config.json:1:1: root: missing (required)"},
              {"{\"ociVersion\": \"2.0.0\", \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: ociVersion: \"2.0.0\" is not supported (psrun reads version "
               "1.x)"},
              {"{\"ociVersion\": \"1\", \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: ociVersion: \"1\" is not supported (psrun reads version 1.x)"},
              {"{\"ociVersion\": 1.0, \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: ociVersion: expected a string, got a number"},
              {"{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"\"}}", EINVAL,
               "config.json:1:42: root.path: must not be empty"},
              {"{\"ociVersion\": \"1.0.0\", \"root\": \"rootfs\"}", EINVAL,
               "config.json:1:33: root: expected an object, got a string"},
              {HEAD "\"root\": {\"path\": \"again\"}}", EINVAL,
               "config.json:2:1: root: duplicate key"},
              {HEAD "\"hostname\": 5}", EINVAL,
               "config.json:2:13: hostname: expected a string, got a number"},
              {HEAD "\"hostname\": \"a\", \"hostname\": \"b\"}", EINVAL,
               "config.json:2:18: hostname: duplicate key"},
              {HEAD "\"hostname\": \"a\\u0000b\"}", EINVAL,
               "config.json:2:13: hostname: must not contain NUL characters"},
              {HEAD "\"hostname\": "
                    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
               EINVAL, "config.json:2:13: hostname: longer than 64 characters"},
              {HEAD "\"domainname\": []}", EINVAL,
               "config.json:2:15: domainname: expected a string, got an array"},
              {HEAD "\"annotations\": {\"a\": 1}}", EINVAL,
               "config.json:2:22: annotations[\"a\"]: expected a string, got a number"},
              {HEAD "\"annotations\": {\"\": \"x\"}}", EINVAL,
               "config.json:2:17: annotations: keys must not be empty"},
              {HEAD "\"annotations\": {\"a\\u0000\": \"x\"}}", EINVAL,
               "config.json:2:17: annotations: keys must not contain NUL characters"},
              {HEAD "\"annotations\": {\"b\": \"x\", \"a\": \"y\", \"b\": \"z\"}}", EINVAL,
               "config.json:2:37: annotations[\"b\"]: duplicate key"},
              {HEAD "\"annotations\": [\"a=b\"]}", EINVAL,
               "config.json:2:16: annotations: expected an object of strings, got an array"},
              {"[1]", EINVAL,
               "config.json:1:1: expected a JSON object at the top level, got an array"},
              {"\"x\"", EINVAL,
               "config.json:1:1: expected a JSON object at the top level, got a string"},
              {"null", EINVAL,
               "config.json:1:1: expected a JSON object at the top level, got null"});
        assert_no_leaks();
}

Test(oci_config, process_errors)
{
        CASES({HEAD "\"process\": {\"cwd\": \"/\"}}", EINVAL,
               "config.json:2:12: process.args: missing (required)"},
              {HEAD "\"process\": {\"args\": [\"sh\"]}}", EINVAL,
               "config.json:2:12: process.cwd: missing (required)"},
              {HEAD "\"process\": {\"args\": [], \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:21: process.args: must not be empty"},
              {HEAD "\"process\": {\"args\": [\"\"], \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:22: process.args[0]: the program must not be empty"},
              {HEAD "\"process\": {\"args\": [\"sh\", 1], \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:28: process.args[1]: expected a string, got a number"},
              {HEAD "\"process\": {\"args\": \"sh\", \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:21: process.args: expected an array of strings, got a string"},
              {PROCESS_HEAD "\"cwd\": \"/\"}}", EINVAL,
               "config.json:2:41: process.cwd: duplicate key"},
              {HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"relative\"}}", EINVAL,
               "config.json:2:36: process.cwd: \"relative\" is not an absolute path"},
              {PROCESS_HEAD "\"terminal\": \"yes\"}}", EINVAL,
               "config.json:2:53: process.terminal: expected a boolean, got a string"},
              {PROCESS_HEAD "\"noNewPrivileges\": 1}}", EINVAL,
               "config.json:2:60: process.noNewPrivileges: expected a boolean, got a number"},
              {PROCESS_HEAD "\"env\": [\"FOO\"]}}", EINVAL,
               "config.json:2:49: process.env[0]: \"FOO\" is not NAME=value"},
              {PROCESS_HEAD "\"env\": [\"=x\"]}}", EINVAL,
               "config.json:2:49: process.env[0]: \"=x\" has an empty name"},
              {PROCESS_HEAD "\"consoleSize\": {\"height\": 1, \"width\": 65536}}}", ERANGE,
               "config.json:2:79: process.consoleSize.width: 65536 is out of range (0..65535)"},
              {PROCESS_HEAD "\"consoleSize\": {\"height\": 1}}}", EINVAL,
               "config.json:2:56: process.consoleSize.width: missing (required)"},
              {PROCESS_HEAD "\"user\": {\"gid\": 0}}}", EINVAL,
               "config.json:2:49: process.user.uid: missing (required)"},
              {PROCESS_HEAD "\"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [-1]}}}",
               ERANGE,
               "config.json:2:89: process.user.additionalGids[0]: -1 is out of range "
               "(0..4294967295)"},
              {PROCESS_HEAD "\"user\": {\"uid\": 0, \"gid\": 0, \"umask\": 4294967296}}}", ERANGE,
               "config.json:2:79: process.user.umask: 4294967296 is out of range "
               "(0..4294967295)"},
              {PROCESS_HEAD "\"capabilities\": {\"bounding\": [\"CAP_FOO\"]}}}", EINVAL,
               "config.json:2:71: process.capabilities.bounding[0]: unknown capability "
               "\"CAP_FOO\""},
              {PROCESS_HEAD "\"capabilities\": {\"ambient\": [\"CAP_KILL\", \"cap_kill\"]}}}",
               EINVAL,
               "config.json:2:82: process.capabilities.ambient[1]: unknown capability "
               "\"cap_kill\""},
              {PROCESS_HEAD "\"capabilities\": {\"effective\": [\"KILL\"]}}}", EINVAL,
               "config.json:2:72: process.capabilities.effective[0]: unknown capability "
               "\"KILL\""},
              {PROCESS_HEAD "\"capabilities\": [\"CAP_KILL\"]}}", EINVAL,
               "config.json:2:57: process.capabilities: expected an object, got an array"},
              {PROCESS_HEAD "\"oomScoreAdj\": 1001}}", ERANGE,
               "config.json:2:56: process.oomScoreAdj: 1001 is out of range (-1000..1000)"},
              {PROCESS_HEAD "\"oomScoreAdj\": -1001}}", ERANGE,
               "config.json:2:56: process.oomScoreAdj: -1001 is out of range (-1000..1000)"},
              {PROCESS_HEAD "\"apparmorProfile\": false}}", EINVAL,
               "config.json:2:60: process.apparmorProfile: expected a string, got a boolean"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": -1, "
                            "\"hard\": 1}]}}",
               ERANGE,
               "config.json:2:87: process.rlimits[0].soft: -1 is out of range "
               "(0..18446744073709551615)"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, "
                            "\"hard\": 1}]}}",
               EINVAL, "config.json:2:87: process.rlimits[0].soft: 2 is above the hard limit 1"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1}]}}", EINVAL,
               "config.json:2:53: process.rlimits[0].hard: missing (required)"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"NOFILE\", \"soft\": 1, \"hard\": 1}]}}",
               EINVAL,
               "config.json:2:62: process.rlimits[0].type: \"NOFILE\" is not one of RLIMIT_CPU, "
               "RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_RSS, RLIMIT_NPROC, "
               "RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_AS, RLIMIT_LOCKS, RLIMIT_SIGPENDING, "
               "RLIMIT_MSGQUEUE, RLIMIT_NICE, RLIMIT_RTPRIO, RLIMIT_RTTIME"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_AS\", \"soft\": 1, \"hard\": 1},\n"
                            "{\"type\": \"RLIMIT_CORE\", \"soft\": 1, \"hard\": 1},\n"
                            "{\"type\": \"RLIMIT_AS\", \"soft\": 2, \"hard\": 2}]}}",
               EINVAL,
               "config.json:4:10: process.rlimits[2].type: RLIMIT_AS is already set by "
               "process.rlimits[0]"});
        assert_no_leaks();
}

Test(oci_config, mount_and_hook_errors)
{
        CASES({HEAD "\"mounts\": {}}", EINVAL,
               "config.json:2:11: mounts: expected an array, got an object"},
              {HEAD "\"mounts\": [null]}", EINVAL,
               "config.json:2:12: mounts[0]: expected an object, got null"},
              {HEAD "\"mounts\": [\"/tmp\"]}", EINVAL,
               "config.json:2:12: mounts[0]: expected an object, got a string"},
              {HEAD "\"mounts\": [{\"type\": \"tmpfs\"}]}", EINVAL,
               "config.json:2:12: mounts[0].destination: missing (required)"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\"}, {\"destination\": \"tmp\"}]}", EINVAL,
               "config.json:2:51: mounts[1].destination: \"tmp\" is not an absolute path"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\", \"options\": [\"ro\", \"\"]}]}", EINVAL,
               "config.json:2:52: mounts[0].options[1]: must not be empty"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\", \"options\": \"ro\"}]}", EINVAL,
               "config.json:2:45: mounts[0].options: expected an array of strings, got a "
               "string"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\", \"uidMappings\": [{\"containerID\": "
                    "0, \"hostID\": 0, \"size\": 0}]}]}",
               EINVAL, "config.json:2:90: mounts[0].uidMappings[0].size: must be at least 1"},
              {HEAD "\"hooks\": []}", EINVAL,
               "config.json:2:10: hooks: expected an object, got an array"},
              {HEAD "\"hooks\": {\"prestart\": {\"path\": \"/h\"}}}", EINVAL,
               "config.json:2:23: hooks.prestart: expected an array, got an object"},
              {HEAD "\"hooks\": {\"prestart\": [{\"path\": \"hook\"}]}}", EINVAL,
               "config.json:2:33: hooks.prestart[0].path: \"hook\" is not an absolute path"},
              {HEAD "\"hooks\": {\"poststart\": [{\"args\": [\"x\"]}]}}", EINVAL,
               "config.json:2:25: hooks.poststart[0].path: missing (required)"},
              {HEAD "\"hooks\": {\"poststop\": [{\"path\": \"/h\", \"timeout\": 0}]}}", ERANGE,
               "config.json:2:50: hooks.poststop[0].timeout: 0 is out of range "
               "(1..2147483647)"},
              {HEAD "\"hooks\": {\"createRuntime\": [{\"path\": \"/h\", \"env\": [\"X\"]}]}}",
               EINVAL, "config.json:2:52: hooks.createRuntime[0].env[0]: \"X\" is not NAME=value"});
        assert_no_leaks();
}

#define LINUX_HEAD HEAD "\"linux\": "

Test(oci_config, linux_errors)
{
        CASES({LINUX_HEAD "[]}", EINVAL,
               "config.json:2:10: linux: expected an object, got an array"},
              {LINUX_HEAD "{\"namespaces\": [{\"type\": \"net\"}]}}", EINVAL,
               "config.json:2:35: linux.namespaces[0].type: \"net\" is not one of pid, network, "
               "mount, ipc, uts, user, cgroup, time"},
              {LINUX_HEAD "{\"namespaces\": [{\"path\": \"/proc/1/ns/pid\"}]}}", EINVAL,
               "config.json:2:26: linux.namespaces[0].type: missing (required)"},
              {LINUX_HEAD "{\"namespaces\": [{\"type\": \"pid\", \"path\": \"ns\"}]}}", EINVAL,
               "config.json:2:50: linux.namespaces[0].path: \"ns\" is not an absolute path"},
              {LINUX_HEAD "{\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"uts\"},\n"
                          "  {\"type\": \"pid\", \"path\": \"/proc/1/ns/pid\"}]}}",
               EINVAL,
               "config.json:3:12: linux.namespaces[2].type: \"pid\" is already in "
               "linux.namespaces[0]"},
              {LINUX_HEAD "{\"uidMappings\": [{\"containerID\": 0, \"hostID\": 4294967296, "
                          "\"size\": 1}]}}",
               ERANGE,
               "config.json:2:56: linux.uidMappings[0].hostID: 4294967296 is out of range "
               "(0..4294967295)"},
              {LINUX_HEAD "{\"gidMappings\": [{\"containerID\": 4294967295, \"hostID\": 0, "
                          "\"size\": 2}]}}",
               ERANGE,
               "config.json:2:76: linux.gidMappings[0].size: the range goes past id "
               "4294967295"},
              {LINUX_HEAD "{\"uidMappings\": [{\"containerID\": 0, \"size\": 2}]}}", EINVAL,
               "config.json:2:27: linux.uidMappings[0].hostID: missing (required)"},
              {LINUX_HEAD "{\"sysctl\": {\"a\": \"1\", \"a\": \"2\"}}}", EINVAL,
               "config.json:2:32: linux.sysctl[\"a\"]: duplicate key"},
              {LINUX_HEAD "{\"sysctl\": {\"net.core.somaxconn\": 256}}}", EINVAL,
               "config.json:2:44: linux.sysctl[\"net.core.somaxconn\"]: expected a string, got "
               "a number"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"x\", \"major\": 1, "
                          "\"minor\": 1}]}}",
               EINVAL, "config.json:2:50: linux.devices[0].type: \"x\" is not one of c, b, u, p"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"minor\": 1}]}}",
               EINVAL,
               "config.json:2:23: linux.devices[0].major: missing (required unless type is "
               "\"p\")"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"dev/x\", \"type\": \"p\"}]}}", EINVAL,
               "config.json:2:32: linux.devices[0].path: \"dev/x\" is not an absolute path"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"b\", \"major\": -1, "
                          "\"minor\": 0}]}}",
               ERANGE,
               "config.json:2:64: linux.devices[0].major: -1 is out of range (0..4294967295)"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"p\", \"fileMode\": "
                          "-1}]}}",
               ERANGE,
               "config.json:2:67: linux.devices[0].fileMode: -1 is out of range "
               "(0..4294967295)"},
              {LINUX_HEAD "{\"maskedPaths\": [\"proc/kcore\"]}}", EINVAL,
               "config.json:2:27: linux.maskedPaths[0]: \"proc/kcore\" is not an absolute path"},
              {LINUX_HEAD "{\"readonlyPaths\": \"/proc/sys\"}}", EINVAL,
               "config.json:2:28: linux.readonlyPaths: expected an array of strings, got a "
               "string"},
              {LINUX_HEAD "{\"rootfsPropagation\": \"bogus\"}}", EINVAL,
               "config.json:2:32: linux.rootfsPropagation: \"bogus\" is not one of private, "
               "rprivate, shared, rshared, slave, rslave, unbindable, runbindable"},
              {LINUX_HEAD "{\"rootfsPropagation\": \"ro\"}}", EINVAL,
               "config.json:2:32: linux.rootfsPropagation: \"ro\" is not one of private, "
               "rprivate, shared, rshared, slave, rslave, unbindable, runbindable"},
              {LINUX_HEAD "{\"personality\": {\"domain\": \"LINUX64\"}}}", EINVAL,
               "config.json:2:37: linux.personality.domain: \"LINUX64\" is not one of LINUX, "
               "LINUX32"},
              {LINUX_HEAD "{\"personality\": {\"flags\": []}}}", EINVAL,
               "config.json:2:26: linux.personality.domain: missing (required)"},
              {LINUX_HEAD "{\"timeOffsets\": {\"monotonic\": {\"secs\": \"1\"}}}}", EINVAL,
               "config.json:2:49: linux.timeOffsets.monotonic.secs: expected an integer, got a "
               "string"},
              {LINUX_HEAD "{\"mountLabel\": 1}}", EINVAL,
               "config.json:2:25: linux.mountLabel: expected a string, got a number"},
              {LINUX_HEAD "{\"cgroupsPath\": {}}}", EINVAL,
               "config.json:2:26: linux.cgroupsPath: expected a string, got an object"});
        assert_no_leaks();
}

#define RES_HEAD LINUX_HEAD "{\"resources\": "

Test(oci_config, resources_errors)
{
        CASES({RES_HEAD "{\"memory\": {\"limit\": \"1\"}}}}", EINVAL,
               "config.json:2:45: linux.resources.memory.limit: expected an integer, got a "
               "string"},
              {RES_HEAD "{\"memory\": {\"limit\": 200, \"swap\": 100}}}}", EINVAL,
               "config.json:2:58: linux.resources.memory.swap: 100 is below limit 200 (swap "
               "counts memory+swap)"},
              {RES_HEAD "{\"memory\": {\"swappiness\": 101}}}}", ERANGE,
               "config.json:2:50: linux.resources.memory.swappiness: 101 is out of range "
               "(0..100)"},
              {RES_HEAD "{\"memory\": {\"disableOOMKiller\": \"true\"}}}}", EINVAL,
               "config.json:2:56: linux.resources.memory.disableOOMKiller: expected a boolean, "
               "got a string"},
              {RES_HEAD "{\"cpu\": {\"quota\": 100, \"burst\": 200}}}}", EINVAL,
               "config.json:2:56: linux.resources.cpu.burst: 200 is larger than quota 100"},
              {RES_HEAD "{\"cpu\": {\"idle\": 2}}}}", ERANGE,
               "config.json:2:41: linux.resources.cpu.idle: 2 is out of range (0..1)"},
              {RES_HEAD "{\"cpu\": {\"shares\": -1}}}}", ERANGE,
               "config.json:2:43: linux.resources.cpu.shares: -1 is out of range "
               "(0..18446744073709551615)"},
              {RES_HEAD "{\"cpu\": {\"cpus\": 3}}}}", EINVAL,
               "config.json:2:41: linux.resources.cpu.cpus: expected a string, got a number"},
              {RES_HEAD "{\"pids\": {\"limit\": \"max\"}}}}", EINVAL,
               "config.json:2:43: linux.resources.pids.limit: expected an integer, got a "
               "string"},
              {RES_HEAD "{\"blockIO\": {\"weight\": 65536}}}}", ERANGE,
               "config.json:2:47: linux.resources.blockIO.weight: 65536 is out of range "
               "(0..65535)"},
              {RES_HEAD "{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0}]}}}}",
               EINVAL,
               "config.json:2:54: linux.resources.blockIO.weightDevice[0]: needs weight or "
               "leafWeight (or both)"},
              {RES_HEAD "{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"weight\": 10}]}}}}",
               EINVAL,
               "config.json:2:54: linux.resources.blockIO.weightDevice[0].minor: missing "
               "(required)"},
              {RES_HEAD "{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": "
                        "0}]}}}}",
               EINVAL,
               "config.json:2:63: linux.resources.blockIO.throttleReadBpsDevice[0].rate: "
               "missing (required)"},
              {RES_HEAD "{\"blockIO\": {\"throttleWriteIOPSDevice\": [{\"major\": 8, \"minor\": "
                        "0, \"rate\": -5}]}}}}",
               ERANGE,
               "config.json:2:98: linux.resources.blockIO.throttleWriteIOPSDevice[0].rate: -5 "
               "is out of range (0..18446744073709551615)"},
              {RES_HEAD "{\"hugepageLimits\": [{\"pageSize\": \"2M\", \"limit\": 1}]}}}", EINVAL,
               "config.json:2:57: linux.resources.hugepageLimits[0].pageSize: \"2M\" is not a "
               "page size such as 2MB"},
              {RES_HEAD "{\"hugepageLimits\": [{\"pageSize\": \"MB\", \"limit\": 1}]}}}", EINVAL,
               "config.json:2:57: linux.resources.hugepageLimits[0].pageSize: \"MB\" is not a "
               "page size such as 2MB"},
              {RES_HEAD "{\"hugepageLimits\": [{\"pageSize\": \"2MB\"}]}}}", EINVAL,
               "config.json:2:44: linux.resources.hugepageLimits[0].limit: missing (required)"},
              {RES_HEAD "{\"devices\": [{\"access\": \"rwm\"}]}}}", EINVAL,
               "config.json:2:37: linux.resources.devices[0].allow: missing (required)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}}}", EINVAL,
               "config.json:2:63: linux.resources.devices[0].access: \"rwx\" is not some of r, "
               "w, m (each once)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"access\": \"rr\"}]}}}", EINVAL,
               "config.json:2:63: linux.resources.devices[0].access: \"rr\" is not some of r, w, "
               "m (each once)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"access\": \"\"}]}}}", EINVAL,
               "config.json:2:63: linux.resources.devices[0].access: must not be empty (use "
               "some of r, w, m)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"type\": \"u\"}]}}}", EINVAL,
               "config.json:2:61: linux.resources.devices[0].type: \"u\" is not one of a, b, c"},
              {RES_HEAD "{\"devices\": [{\"allow\": \"yes\"}]}}}", EINVAL,
               "config.json:2:47: linux.resources.devices[0].allow: expected a boolean, got a "
               "string"},
              {RES_HEAD "{\"unified\": {\"memory.max\": 5}}}}", EINVAL,
               "config.json:2:51: linux.resources.unified[\"memory.max\"]: expected a string, "
               "got a number"});
        assert_no_leaks();
}

#define SECCOMP_HEAD LINUX_HEAD "{\"seccomp\": "

Test(oci_config, seccomp_errors)
{
        CASES({SECCOMP_HEAD "{\"syscalls\": []}}}", EINVAL,
               "config.json:2:22: linux.seccomp.defaultAction: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_FOO\"}}}", EINVAL,
               "config.json:2:40: linux.seccomp.defaultAction: \"SCMP_ACT_FOO\" is not one of "
               "SCMP_ACT_ALLOW, SCMP_ACT_ERRNO, SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL_THREAD, "
               "SCMP_ACT_TRAP, SCMP_ACT_LOG, SCMP_ACT_TRACE, SCMP_ACT_NOTIFY"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultErrnoRet\": 1}}}",
               EINVAL,
               "config.json:2:77: linux.seccomp.defaultErrnoRet: SCMP_ACT_ALLOW takes no errno "
               "(only SCMP_ACT_ERRNO and SCMP_ACT_TRACE do)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": -1}}}",
               ERANGE,
               "config.json:2:77: linux.seccomp.defaultErrnoRet: -1 is out of range "
               "(0..18446744073709551615)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 4096}]}}}",
               ERANGE,
               "config.json:2:128: linux.seccomp.syscalls[0].errnoRet: 4096 is out of range for "
               "SCMP_ACT_ERRNO (0..4095)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_TRACE\", \"errnoRet\": 65536}]}}}",
               ERANGE,
               "config.json:2:128: linux.seccomp.syscalls[0].errnoRet: 65536 is out of range for "
               "SCMP_ACT_TRACE (0..65535)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_KILL\", \"errnoRet\": 1}]}}}",
               EINVAL,
               "config.json:2:127: linux.seccomp.syscalls[0].errnoRet: SCMP_ACT_KILL_THREAD "
               "takes no errno (only SCMP_ACT_ERRNO and SCMP_ACT_TRACE do)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[], \"action\": \"SCMP_ACT_LOG\"}]}}}",
               EINVAL, "config.json:2:81: linux.seccomp.syscalls[0].names: must not be empty"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"\"], \"action\": \"SCMP_ACT_LOG\"}]}}}",
               EINVAL, "config.json:2:82: linux.seccomp.syscalls[0].names[0]: must not be empty"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"action\": "
                            "\"SCMP_ACT_LOG\"}]}}}",
               EINVAL, "config.json:2:71: linux.seccomp.syscalls[0].names: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"]}]}}}",
               EINVAL, "config.json:2:71: linux.seccomp.syscalls[0].action: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_LOG\", \"args\": [{\"index\": 6, "
                            "\"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}}}",
               ERANGE,
               "config.json:2:133: linux.seccomp.syscalls[0].args[0].index: 6 is out of range "
               "(0..5)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_LOG\", \"args\": [{\"index\": 0, "
                            "\"value\": 1, \"op\": \"SCMP_CMP_FOO\"}]}]}}}",
               EINVAL,
               "config.json:2:154: linux.seccomp.syscalls[0].args[0].op: \"SCMP_CMP_FOO\" is "
               "not one of SCMP_CMP_NE, SCMP_CMP_LT, SCMP_CMP_LE, SCMP_CMP_EQ, SCMP_CMP_GE, "
               "SCMP_CMP_GT, SCMP_CMP_MASKED_EQ"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_LOG\", \"args\": [{\"index\": 0, "
                            "\"op\": \"SCMP_CMP_EQ\"}]}]}}}",
               EINVAL,
               "config.json:2:123: linux.seccomp.syscalls[0].args[0].value: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": "
                            "[\"SCMP_ARCH_Z80\"]}}}",
               EINVAL,
               "config.json:2:76: linux.seccomp.architectures[0]: unknown architecture "
               "\"SCMP_ARCH_Z80\""},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": "
                            "[\"x86_64\"]}}}",
               EINVAL,
               "config.json:2:76: linux.seccomp.architectures[0]: unknown architecture "
               "\"x86_64\""},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": "
                            "[\"SECCOMP_FILTER_FLAG_FOO\"]}}}",
               EINVAL,
               "config.json:2:68: linux.seccomp.flags[0]: unknown seccomp flag "
               "\"SECCOMP_FILTER_FLAG_FOO\""},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerMetadata\": "
                            "\"x\"}}}",
               EINVAL,
               "config.json:2:78: linux.seccomp.listenerMetadata: must not be set without "
               "listenerPath"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": "
                            "\"agent.sock\"}}}",
               EINVAL,
               "config.json:2:74: linux.seccomp.listenerPath: \"agent.sock\" is not an absolute "
               "path"});
        assert_no_leaks();
}

/* ---- not JSON, syntax, limits ---- */

Test(oci_config, yaml_that_is_not_json)
{
        CASES({"{\"ociVersion\": &v \"1.0.2\", \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: not JSON: YAML anchor \"&v\""},
              {"{\"ociVersion\": \"1.0.2\", \"root\": &r {\"path\": \"r\"}}", EINVAL,
               "config.json:1:33: not JSON: YAML anchor \"&r\""},
              {"{\"ociVersion\": \"1.0.2\", \"root\": *r}", EINVAL,
               "config.json:1:33: not JSON: YAML alias \"*r\""},
              {"{\"a\": &x [1, 2], \"b\": *x}", EINVAL,
               "config.json:1:7: not JSON: YAML anchor \"&x\""},
              {"{\"ociVersion\": !!str \"1.0.2\"}", EINVAL,
               "config.json:1:16: not JSON: YAML tag \"tag:yaml.org,2002:str\""},
              {"ociVersion: 1.0.2\nroot: {path: r}\n", EINVAL,
               "config.json:1:1: not JSON: YAML block-style mapping"},
              {"{\"a\":\n- 1\n}", EINVAL,
               "config.json:2:1: JSON syntax error: did not find expected node content"},
              {"{'ociVersion': '1.0.2'}", EINVAL,
               "config.json:1:2: not JSON: strings must be in double quotes"},
              {"{\"ociVersion\": 1.0.2}", EINVAL,
               "config.json:1:16: not JSON: \"1.0.2\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{ociVersion: \"1.0.2\"}", EINVAL,
               "config.json:1:2: not JSON: \"ociVersion\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{1: \"x\"}", EINVAL, "config.json:1:2: not JSON: object keys must be strings"},
              {"{[1]: \"x\"}", EINVAL, "config.json:1:2: not JSON: object keys must be strings"},
              {"{\"a\": }", EINVAL, "config.json:1:7: not JSON: a value is missing"},
              {"{\"a\": 0x10}", EINVAL,
               "config.json:1:7: not JSON: \"0x10\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{\"a\": 010}", EINVAL,
               "config.json:1:7: not JSON: \"010\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{\"a\": +1}", EINVAL,
               "config.json:1:7: not JSON: \"+1\" is not a number, true, false or null (strings "
               "must be in double quotes)"},
              {"{\"a\": .5}", EINVAL,
               "config.json:1:7: not JSON: \".5\" is not a number, true, false or null (strings "
               "must be in double quotes)"},
              {"{\"a\": True}", EINVAL,
               "config.json:1:7: not JSON: \"True\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"{\"a\": ~}", EINVAL,
               "config.json:1:7: not JSON: \"~\" is not a number, true, false or null (strings "
               "must be in double quotes)"},
              {"{\"a\": .nan}", EINVAL,
               "config.json:1:7: not JSON: \".nan\" is not a number, true, false or null "
               "(strings must be in double quotes)"},
              {"---\n{\"ociVersion\": \"1.0.2\"}", EINVAL,
               "config.json:1:1: not JSON: YAML document start (\"---\" or a directive)"},
              {"%YAML 1.1\n---\n{}", EINVAL,
               "config.json:1:1: not JSON: YAML document start (\"---\" or a directive)"},
              {"{\"ociVersion\": \"1.0.2\"}\n...\n", EINVAL,
               "config.json:2:1: not JSON: YAML document end (\"...\")"},
              {"{\"a\": 1}\n---\n{\"b\": 2}", EINVAL,
               "config.json:2:1: more than one JSON document"},
              {"{\"a\": |\n  text\n}", EINVAL,
               "config.json:1:7: JSON syntax error: found character that cannot start any "
               "token"});
        assert_no_leaks();
}

Test(oci_config, syntax_errors_and_empty_text)
{
        CASES({"", EINVAL, "config.json:1:1: empty, expected a JSON object"},
              {"  \n\t\n", EINVAL, "config.json:1:1: empty, expected a JSON object"},
              {"# just a comment\n", EINVAL, "config.json:1:1: empty, expected a JSON object"},
              {"{\"ociVersion\": \"1.0.2\",\n \"root\" {\"path\": \"r\"}}", EINVAL,
               "config.json:2:9: not JSON: a value is missing"},
              {"{\"ociVersion\": \"1.0.2\"\n \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:2:2: JSON syntax error: did not find expected ',' or '}'"},
              {"{\"ociVersion\": \"1.0.2\"", EINVAL,
               "config.json:2:1: JSON syntax error: did not find expected ',' or '}'"},
              {"{\"a\": [1, 2}", EINVAL,
               "config.json:1:12: JSON syntax error: did not find expected ',' or ']'"},
              {"{\"a\": \"x\xff\"}", EINVAL,
               "config.json:1:9: JSON syntax error: invalid leading UTF-8 octet"},
              {"{\"a\": \"unterminated}", EINVAL,
               "config.json:1:21: JSON syntax error: found unexpected end of stream"},
              {"{\"a\": \"\\q\"}", EINVAL,
               "config.json:1:8: JSON syntax error: found unknown escape character"},
              {"{} {}", EINVAL,
               "config.json:1:4: JSON syntax error: did not find expected <document start>"});
        /* NUL bytes inside the buffer. */
        expect_error_len("{\"ociVersion\": \"1.0.2\"}\0", 24, EINVAL,
                         "config.json:1:24: not JSON: NUL byte in the text");
        expect_error_len("{\n\"a\":\0 1}", 9, EINVAL,
                         "config.json:2:5: not JSON: NUL byte in the text");
        /* A NULL buffer is the empty text. */
        expect_error_len(NULL, 0, EINVAL, "config.json:1:1: empty, expected a JSON object");
        assert_no_leaks();
}

/* JSON allows tabs before and after the top-level value, where YAML would
 * take them for indentation. */
Test(oci_config, tabs_around_the_document)
{
        struct oci_config c;

        parse_ok("\t \t{\"ociVersion\":\t\"1.0.2\",\n\t\"root\": {\"path\": \"r\"}}\n\t\r\n\t", &c);
        cr_assert_str_eq(c.root.path, "r");
        oci_config_free(&c);
        expect_error("\t{\"ociVersion\": \"1.0.2\",\n\t\"root\": 5}\t", EINVAL,
                     "config.json:2:10: root: expected an object, got a number");
        assert_no_leaks();
}

static char *nested(size_t depth)
{
        /* {"ociVersion": "1.0.2", "root": {"path": "r"}, "x": [[[...]]]} */
        static const char head[] =
                "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"}, \"x\": ";
        size_t len = strlen(head) + 2 * depth + 2;
        char *s = malloc(len);

        cr_assert_not_null(s);
        memcpy(s, head, strlen(head));
        memset(s + strlen(head), '[', depth);
        memset(s + strlen(head) + depth, ']', depth);
        s[len - 2] = '}';
        s[len - 1] = '\0';
        return s;
}

Test(oci_config, nesting_is_bounded)
{
        struct oci_config c;
        _cleanup_free_ char *ok = nested(OCI_CONFIG_MAX_DEPTH - 1);
        _cleanup_free_ char *deep = nested(OCI_CONFIG_MAX_DEPTH);
        _cleanup_free_ char *very_deep = nested(1000000);

        /* The top-level object is one level. */
        parse_ok(ok, &c);
        oci_config_free(&c);
        expect_error(deep, EINVAL, "config.json:1:116: nested too deeply (more than 64 levels)");
        expect_error(very_deep, EINVAL,
                     "config.json:1:116: nested too deeply (more than 64 levels)");
        assert_no_leaks();
}

Test(oci_config, value_count_is_bounded)
{
        static const char head[] =
                "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\"}, \"x\": [";
        size_t n = OCI_CONFIG_MAX_NODES, len = strlen(head) + 2 * n + 2;
        _cleanup_free_ char *json = malloc(len + 1);
        struct oci_config c;
        char *o;

        cr_assert_not_null(json);
        o = json + strlen(head);
        memcpy(json, head, strlen(head));
        for (size_t i = 0; i < n; i++) {
                *o++ = '0';
                *o++ = ',';
        }
        o[-1] = ']';
        *o++ = '}';
        *o = '\0';
        /* The document's own values (object, keys, strings, root, ...) push it
         * over: 262144 zeros plus 9 others. */
        expect_error(json, E2BIG, "config.json:1:524324: too many values (more than 262144)");

        /* Many values below the limit are fine, and a map of 50000 keys is
         * checked for duplicates without comparing every pair. */
        size_t keys = 50000;
        _cleanup_free_ char *map = malloc(keys * 24 + 256);
        cr_assert_not_null(map);
        o = map + sprintf(map, HEAD "\"annotations\": {");
        for (size_t i = 0; i < keys; i++)
                o += sprintf(o, "%s\"k%zu\": \"v\"", i ? ", " : "", i);
        sprintf(o, "}}");
        parse_ok(map, &c);
        cr_assert_eq(c.n_annotations, keys);
        cr_assert_str_eq(c.annotations[keys - 1].key, "k49999");
        oci_config_free(&c);
        sprintf(o, ", \"k123\": \"again\"}}");
        expect_error(map, EINVAL, "config.json:2:738907: annotations[\"k123\"]: duplicate key");
        assert_no_leaks();
}

Test(oci_config, size_is_bounded)
{
        size_t len = OCI_CONFIG_MAX_SIZE + 1;
        _cleanup_free_ char *big = malloc(len);
        char path[] = "/tmp/psrun-oci-config-XXXXXX";
        struct oci_config c;
        psrun_error err = {0};
        int fd;

        cr_assert_not_null(big);
        /* A valid config padded with spaces: only the size is wrong. */
        memset(big, ' ', len);
        memcpy(big, HEAD "\"x\": 1}", strlen(HEAD "\"x\": 1}"));
        expect_error_len(big, len, EFBIG, "config.json: larger than 16 MiB");
        parse_ok(HEAD "\"x\": 1}", &c);
        oci_config_free(&c);
        /* Exactly the limit is accepted. */
        cr_assert_eq(oci_config_parse(big, len - 1, &c, &err), 0, "%s", err.msg);
        oci_config_free(&c);

        fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, big, len), (ssize_t) len);
        close(fd);
        memset(&c, 0xa5, sizeof(c));
        cr_assert_eq(oci_config_load_file(path, &c, &err), -EFBIG);
        unlink(path);
        cr_assert(all_zero(&c, sizeof(c)));
        char want[PSRUN_ERROR_MSG_MAX];
        snprintf(want, sizeof(want), "%s: larger than 16 MiB", path);
        cr_assert_str_eq(err.msg, want);
        assert_no_leaks();
}

Test(oci_config, load_file_errors)
{
        struct oci_config c;
        psrun_error err = {0};

        cr_assert_eq(oci_config_load_file(FIXTURES "no-such-file.json", &c, &err), -ENOENT);
        cr_assert_str_eq(err.msg, FIXTURES "no-such-file.json: No such file or directory");
        cr_assert(all_zero(&c, sizeof(c)));
        cr_assert_eq(oci_config_load_file(FIXTURES, &c, &err), -EISDIR);
        cr_assert_str_eq(err.msg, FIXTURES ": read: Is a directory");
        /* Errors in a file name the file. */
        char path[] = "/tmp/psrun-oci-config-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        const char *text = HEAD "\"process\": {\"args\": [\"sh\"]}}";
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        cr_assert_eq(oci_config_load_file(path, &c, &err), -EINVAL);
        unlink(path);
        char want[PSRUN_ERROR_MSG_MAX];
        snprintf(want, sizeof(want), "%s:2:12: process.cwd: missing (required)", path);
        cr_assert_str_eq(err.msg, want);
        /* A NULL err is allowed. */
        cr_assert_eq(oci_config_parse("[]", 2, &c, NULL), -EINVAL);
        assert_no_leaks();
}

/* ---- mutation fuzzing ---- */

static uint64_t xorshift(uint64_t *state)
{
        uint64_t x = *state;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *state = x;
}

static char *read_fixture(const char *name, size_t *len)
{
        char path[256];
        FILE *f;
        char *buf;
        long size;

        snprintf(path, sizeof(path), FIXTURES "%s", name);
        f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        rewind(f);
        buf = malloc((size_t) size + 1);
        cr_assert_not_null(buf);
        cr_assert_eq(fread(buf, 1, (size_t) size, f), (size_t) size);
        fclose(f);
        *len = (size_t) size;
        return buf;
}

/* One random edit: replace a byte (often with JSON or YAML punctuation),
 * delete or duplicate a span, or cut the text short. */
static size_t mutate(char *buf, size_t len, size_t cap, uint64_t *rng)
{
        static const char interesting[] = "{}[]\",:-0123456789eE.&*!|>'#\\ \n\t\0\xff";
        size_t at = len ? xorshift(rng) % len : 0;
        size_t span = 1 + xorshift(rng) % 16;

        switch (xorshift(rng) % 6) {
        case 0:
        case 1:
                if (len)
                        buf[at] = interesting[xorshift(rng) % (sizeof(interesting) - 1)];
                return len;
        case 2:
                if (len)
                        buf[at] = (char) xorshift(rng);
                return len;
        case 3:
                span = span > len - at ? len - at : span;
                memmove(buf + at, buf + at + span, len - at - span);
                return len - span;
        case 4:
                span = span > len - at ? len - at : span;
                if (len + span > cap)
                        return len;
                memmove(buf + at + span, buf + at, len - at);
                return len + span;
        default:
                return at;
        }
}

Test(oci_config, mutation_fuzz, .timeout = 120)
{
        static const char *const fixtures[] = {"docker-run.json", "full.json", "crun-spec.json"};
        uint64_t rng = 0x9e3779b97f4a7c15ULL;
        size_t accepted = 0, rejected = 0;

        for (int i = 0; i < 2000; i++) {
                size_t len, cap;
                _cleanup_free_ char *orig = read_fixture(fixtures[i % 3], &len);
                _cleanup_free_ char *buf = malloc(cap = len * 2 + 64);
                struct oci_config c;
                psrun_error err = {0};
                int edits = 1 + (int) (xorshift(&rng) % 4);

                cr_assert_not_null(buf);
                memcpy(buf, orig, len);
                for (int e = 0; e < edits; e++)
                        len = mutate(buf, len, cap, &rng);
                int r = oci_config_parse(buf, len, &c, &err);
                if (r == 0) {
                        cr_assert_not_null(c.oci_version);
                        cr_assert_not_null(c.root.path);
                        accepted++;
                } else {
                        cr_assert_lt(r, 0);
                        cr_assert_eq(err.code, -r, "code %d vs %d: %s", err.code, r, err.msg);
                        assert_one_line(&err);
                        cr_assert(strncmp(err.msg, "config.json", 11) == 0, "%s", err.msg);
                        cr_assert(all_zero(&c, sizeof(c)));
                        rejected++;
                }
                oci_config_free(&c);
        }
        /* Both outcomes happen, or the mutations are not testing much. */
        cr_assert_gt(accepted, 50, "accepted %zu", accepted);
        cr_assert_gt(rejected, 500, "rejected %zu", rejected);
        assert_no_leaks();
}
