/* SPDX-License-Identifier: MIT */
/*
 * The config.json parser on valid input: the configs `crun spec` and
 * `runc spec` generate, a Docker-style config with seccomp and hooks, a
 * config with every field, and every table entry (mount options,
 * namespaces, rlimits, hooks, capabilities, seccomp names). Rejections are in
 * test_oci_config_errors.c, hostile input and fuzzing in
 * test_oci_config_hostile.c.
 */
#include "oci_config_test.h"

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

        /* Except recursion: "rbind" stays recursive whatever "bind" follows
         * (runc and crun; dropping it would hide the source's submounts). */
        m = parse_mount_options(&c, "\"shared\", \"rprivate\", \"bind\", \"rbind\", \"bind\"");
        cr_assert_eq(m->propagation, MS_PRIVATE | MS_REC);
        cr_assert_eq(m->bind, OCI_BIND_RECURSIVE);
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

Test(oci_config, resources_network_is_parsed)
{
        /* Parsed (not ignored as before), so that it is applied where
         * net_cls/net_prio exist and refused elsewhere, never dropped. */
        struct oci_config c;
        psrun_error err = {0};
        const char *json = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                           "\"linux\":{\"resources\":{\"network\":{\"classID\":1048577,"
                           "\"priorities\":[{\"name\":\"eth0\",\"priority\":500}]}}}}";
        cr_assert_eq(oci_config_parse(json, strlen(json), &c, &err), 0, "%s", err.msg);
        const struct oci_network *n = c.linux_->resources->network;
        cr_assert_not_null(n);
        cr_expect(n->class_id.set && n->class_id.value == 1048577);
        cr_assert_eq(n->n_priorities, 1);
        cr_expect_str_eq(n->priorities[0].name, "eth0");
        cr_expect_eq(n->priorities[0].priority, 500);
        oci_config_free(&c);

        json = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
               "\"linux\":{\"resources\":{\"network\":{\"classID\":4294967296}}}}";
        cr_expect_lt(oci_config_parse(json, strlen(json), &c, &err), 0);
        cr_expect(strstr(err.msg, "linux.resources.network.classID"), "%s", err.msg);
}
