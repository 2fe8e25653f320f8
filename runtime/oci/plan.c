/* SPDX-License-Identifier: MIT */
/* config.json -> plan: namespaces, identity, capabilities, seccomp. */
#include "runtime/oci/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/oci/rootless.h"
#include "runtime/run.h"
#include "policy/policy.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct oci_namespace *find_namespace(const struct oci_config *c, int type)
{
        const struct oci_linux *l = c->linux_;
        for (size_t i = 0; l && i < l->n_namespaces; i++)
                if (l->namespaces[i].type == type)
                        return &l->namespaces[i];
        return NULL;
}

static int format_map(char *buf, size_t size, const struct oci_id_mapping *m, size_t n,
                      const char *field, psrun_error *err)
{
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                int len = snprintf(buf + off, size - off, "%u %u %u\n", m[i].container_id,
                                   m[i].host_id, m[i].size);
                if (len < 0 || (size_t) len >= size - off)
                        return psrun_error_set(err, E2BIG, "%s: too many mappings", field);
                off += (size_t) len;
        }
        return 0;
}

/* The order namespaces are entered in: the user namespace first (it gives
 * the rights over the others), the mount namespace last (paths of the
 * others are resolved in ours). */
static const int join_order[] = {CLONE_NEWUSER, CLONE_NEWIPC,    CLONE_NEWUTS,  CLONE_NEWNET,
                                 CLONE_NEWPID,  CLONE_NEWCGROUP, CLONE_NEWTIME, CLONE_NEWNS};

static int plan_namespaces(const struct oci_config *c, struct plan *p, psrun_error *err)
{
        const struct oci_linux *l = c->linux_;
        for (size_t k = 0; k < ARRAY_SIZE(join_order); k++) {
                const struct oci_namespace *ns = find_namespace(c, join_order[k]);
                if (!ns)
                        continue;
                const char *name = oci_namespace_to_string(ns->type);
                if (!ns->path) {
                        /* A new time namespace is made at execve (offsets
                         * can only be set before a process is in it). */
                        if (ns->type != CLONE_NEWTIME)
                                p->clone_flags |= (uint64_t) ns->type;
                        continue;
                }
                int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return psrun_error_errno(err, errno, "linux.namespaces: %s: %s", name,
                                                 ns->path);
                p->joins[p->n_joins++] = (struct plan_join){.type = ns->type, .fd = fd};
        }

        bool new_user = p->clone_flags & CLONE_NEWUSER;
        size_t n_uid = l ? l->n_uid_mappings : 0, n_gid = l ? l->n_gid_mappings : 0;
        if (new_user && n_uid == 0 && n_gid == 0) {
                /* No mappings at all: psrun's own default range, as crun
                 * maps one of its own; root inside is an unprivileged id
                 * outside (docs/man/psrun.1). */
                snprintf(p->uid_map, sizeof(p->uid_map), "0 %u %u\n", PSRUN_ID_BASE,
                         PSRUN_ID_COUNT);
                snprintf(p->gid_map, sizeof(p->gid_map), "0 %u %u\n", PSRUN_ID_BASE,
                         PSRUN_ID_COUNT);
                new_user = false; /* nothing of the config's to format */
        }
        if (new_user && (n_uid == 0 || n_gid == 0))
                return psrun_error_set(err, EINVAL,
                                       "%s: a new user namespace with %s mappings needs %s "
                                       "mappings too",
                                       n_uid ? "linux.gidMappings" : "linux.uidMappings",
                                       n_uid ? "uid" : "gid", n_uid ? "gid" : "uid");
        if (!(p->clone_flags & CLONE_NEWUSER) && (n_uid || n_gid))
                return psrun_error_set(err, EINVAL,
                                       "linux.uidMappings: mappings are given but no new user "
                                       "namespace is asked for");
        if (new_user) {
                int r = format_map(p->uid_map, sizeof(p->uid_map), l->uid_mappings, n_uid,
                                   "linux.uidMappings", err);
                if (r < 0)
                        return r;
                r = format_map(p->gid_map, sizeof(p->gid_map), l->gid_mappings, n_gid,
                               "linux.gidMappings", err);
                if (r < 0)
                        return r;
        }
        const struct oci_namespace *time_ns = find_namespace(c, CLONE_NEWTIME);
        const struct oci_time_offsets *to = l ? l->time_offsets : NULL;
        if (to && (!time_ns || time_ns->path))
                return psrun_error_set(err, EINVAL,
                                       "linux.timeOffsets: needs a new time namespace");
        if (time_ns && !time_ns->path) {
                /* Written as one block at execve; "monotonic 0 0" makes the
                 * namespace even without offsets. */
                const struct oci_time_offset zero = {0},
                                             *mono = to && to->monotonic ? to->monotonic : &zero,
                                             *boot = to && to->boottime ? to->boottime : &zero;
                snprintf(p->timens_offsets, sizeof(p->timens_offsets),
                         "monotonic %lld %u\nboottime %lld %u\n", (long long) mono->secs,
                         mono->nanosecs, (long long) boot->secs, boot->nanosecs);
        }
        bool uts_joined = false;
        for (size_t i = 0; i < p->n_joins; i++)
                uts_joined |= p->joins[i].type == CLONE_NEWUTS;
        /* A uts namespace joined by path takes the names too, as runc's. */
        if ((c->hostname || c->domainname) && !(p->clone_flags & CLONE_NEWUTS) && !uts_joined)
                return psrun_error_set(err, EINVAL,
                                       "%s: needs a new uts namespace (linux.namespaces)",
                                       c->hostname ? "hostname" : "domainname");
        /* runc brings lo up in a new network namespace; so do we. */
        p->loopback_up = p->clone_flags & CLONE_NEWNET;
        return 0;
}

static bool cap_in_bounding_set(int cap)
{
        return prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1;
}

/* Capabilities: asking for one this host's root does not have (on some
 * hosts CAP_SYS_RESOURCE is not in the bounding set) is an error naming it,
 * unless a new user namespace gives a full set of its own. Capabilities the
 * kernel does not know are left out, as runc does. */
static int plan_caps(const struct oci_process *proc, bool new_user, struct plan *p,
                     psrun_error *err)
{
        caps_plan_none(&p->caps);
        if (!proc->capabilities)
                return 0;
        const struct oci_capabilities *oc = proc->capabilities;
        int last = p->caps.last_cap;
        uint64_t known = last >= 63 ? ~0ULL : (1ULL << (last + 1)) - 1;
        p->caps.bounding = oc->bounding & known;
        p->caps.effective = oc->effective & known;
        p->caps.permitted = oc->permitted & known;
        p->caps.inheritable = oc->inheritable & known;
        p->caps.ambient = oc->ambient & known;
        if (new_user)
                return 0;
        static const struct {
                const char *name;
                size_t offset;
        } sets[] = {
                {"effective", offsetof(struct caps_plan, effective)},
                {"permitted", offsetof(struct caps_plan, permitted)},
                {"inheritable", offsetof(struct caps_plan, inheritable)},
                {"ambient", offsetof(struct caps_plan, ambient)},
        };
        for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
                uint64_t mask = *(const uint64_t *) ((const char *) &p->caps + sets[i].offset);
                for (int cap = 0; cap <= last; cap++) {
                        if (!(mask & (1ULL << cap)) || cap_in_bounding_set(cap))
                                continue;
                        char *name = cap_to_name((cap_value_t) cap);
                        for (char *ch = name; ch && *ch; ch++)
                                if (*ch >= 'a' && *ch <= 'z')
                                        *ch = (char) (*ch - 'a' + 'A');
                        psrun_error_set(err, EPERM,
                                        "process.capabilities.%s: %s is not in this host's "
                                        "bounding set: psrun cannot grant it",
                                        sets[i].name, name ? name : "?");
                        cap_free(name);
                        return -EPERM;
                }
        }
        /* Keeping in the bounding set what the host does not have is
         * impossible and harmless: the set only shrinks. */
        for (int cap = 0; cap <= last; cap++)
                if (!cap_in_bounding_set(cap))
                        p->caps.bounding &= ~(1ULL << cap);
        return 0;
}

static int plan_rlimits(const struct oci_process *proc, bool new_user, struct plan *p,
                        psrun_error *err)
{
        if (proc->n_rlimits > PLAN_MAX_RLIMITS)
                return psrun_error_set(err, E2BIG, "process.rlimits: too many");
        for (size_t i = 0; i < proc->n_rlimits; i++) {
                const struct oci_rlimit *rl = &proc->rlimits[i];
                struct rlimit cur;
                if (getrlimit(rl->type, &cur) < 0)
                        return psrun_error_errno(err, errno, "process.rlimits[%zu]", i);
                /* Raising a hard limit needs CAP_SYS_RESOURCE in the initial
                 * user namespace, whatever namespace the process is in. */
                if (rl->hard > cur.rlim_max && !cap_in_bounding_set(CAP_SYS_RESOURCE))
                        return psrun_error_set(
                                err, EPERM,
                                "process.rlimits[%zu]: %s: raising the hard limit from %llu to "
                                "%llu needs CAP_SYS_RESOURCE, which this host's bounding set "
                                "lacks",
                                i, oci_rlimit_to_string(rl->type),
                                (unsigned long long) cur.rlim_max, (unsigned long long) rl->hard);
                p->rlimits[p->n_rlimits++] = (struct plan_rlimit){
                        .resource = rl->type,
                        .limit = {.rlim_cur = rl->soft, .rlim_max = rl->hard},
                };
        }
        (void) new_user;
        return 0;
}

static int plan_seccomp(const struct oci_config *c, struct plan *p, psrun_error *err)
{
        const struct oci_seccomp *sc = c->linux_ ? c->linux_->seccomp : NULL;
        if (!sc)
                return 0;
        int r = seccomp_compile(&sc->profile, &p->seccomp, err);
        if (r < 0)
                return psrun_error_prefix(err, "linux.seccomp");
        /* Without no_new_privs the filter can only be loaded with
         * CAP_SYS_ADMIN: before the capabilities are dropped. */
        p->seccomp_early = !p->no_new_privs;
        /* listenerPath: the filter's listener goes to the agent there
         * (runtime/oci/seccomp-agent.c). */
        p->seccomp_listener = sc->listener_path != NULL;
        return 0;
}

/* The home directory of uid in the root's /etc/passwd, or NULL. The file is
 * the container's: resolved inside root_dir (a symbolic link cannot lead out
 * of it), and read only if it is a regular file (a FIFO or a device there
 * must not block or touch anything), at most 1 MiB of it. */
static char *passwd_home(const char *root_dir, uid_t uid)
{
        _cleanup_close_ int root = open(root_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return NULL;
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_close_ int path =
                (int) syscall(SYS_openat2, root, "etc/passwd", &how, sizeof(how));
        struct stat st;
        if (path < 0 || fstat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return NULL;
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path);
        _cleanup_close_ int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (fd < 0 || read_all(fd, 1 << 20, &text, &len) < 0)
                return NULL;
        /* name:password:uid:gid:gecos:home:shell */
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                char *field[7] = {0};
                size_t n = 0;
                for (char *q = line; n < 7; n++) {
                        field[n] = q;
                        q = strchr(q, ':');
                        if (!q)
                                break;
                        *q++ = '\0';
                }
                uint64_t id;
                if (n >= 5 && parse_uint64(field[2], &id) == 0 && id == uid && field[5][0])
                        return strdup(field[5]);
        }
        return NULL;
}

/* HOME, when the config's env has none: from the root's /etc/passwd for the
 * process's uid, else "/" (as runc and crun do). */
static int plan_home(struct plan *p, const char *root_dir, psrun_error *err)
{
        size_t n = 0;
        for (; p->envp[n]; n++)
                if (strncmp(p->envp[n], "HOME=", 5) == 0)
                        return 0;
        _cleanup_free_ char *home = root_dir ? passwd_home(root_dir, p->uid) : NULL;
        char *entry = NULL;
        if (asprintf(&entry, "HOME=%s", home ? home : "/") < 0)
                return psrun_error_errno(err, ENOMEM, "plan");
        char **grown = realloc(p->envp, (n + 2) * sizeof(char *));
        if (!grown) {
                free(entry);
                return psrun_error_errno(err, ENOMEM, "plan");
        }
        grown[n] = entry;
        grown[n + 1] = NULL;
        p->envp = grown;
        return 0;
}

/* Sets NAME=value in p->envp, replacing NAME's entry if there is one. */
static int env_set(struct plan *p, const char *name, unsigned value, psrun_error *err)
{
        char *entry = NULL;
        if (asprintf(&entry, "%s=%u", name, value) < 0)
                return psrun_error_errno(err, ENOMEM, "plan");
        size_t n = 0, len = strlen(name);
        for (; p->envp[n]; n++)
                if (strncmp(p->envp[n], name, len) == 0 && p->envp[n][len] == '=') {
                        free(p->envp[n]);
                        p->envp[n] = entry;
                        return 0;
                }
        char **grown = realloc(p->envp, (n + 2) * sizeof(char *));
        if (!grown) {
                free(entry);
                return psrun_error_errno(err, ENOMEM, "plan");
        }
        grown[n] = entry;
        grown[n + 1] = NULL;
        p->envp = grown;
        return 0;
}

/* own_userns: the process runs in a user namespace of its own (made for
 * the container, or entered by exec), where it has a full capability set.
 * root_dir: the container's root as seen from here (for its /etc/passwd). */
/* process.scheduler and process.ioPriority (checked by the parser as runc
 * checks them). */
static void plan_tuning(const struct oci_process *proc, struct plan *p)
{
        const struct oci_scheduler *s = proc->scheduler;
        if (s) {
                p->has_sched = true;
                p->sched = (struct plan_sched){
                        .policy = (uint32_t) s->policy,
                        .nice = s->nice.set ? (int32_t) s->nice.value : 0,
                        .priority = s->priority.set ? (uint32_t) s->priority.value : 0,
                        .flags = s->flags,
                        .runtime = s->runtime,
                        .deadline = s->deadline,
                        .period = s->period,
                };
        }
        const struct oci_io_priority *io = proc->io_priority;
        if (io)
                p->ioprio = (io->klass << 13) | (int) io->priority;
}

/* process.execCPUAffinity, for an exec (the spec leaves init's alone). */
static int plan_cpu_affinity(const struct oci_process *proc, struct plan *p, psrun_error *err)
{
        const struct oci_cpu_affinity *a = proc->exec_cpu_affinity;
        if (a && a->initial && a->initial[0]) {
                if (oci_cpu_list_parse(a->initial, &p->cpus_initial) < 0)
                        return psrun_error_set(err, EINVAL,
                                               "process.execCPUAffinity.initial: \"%s\" is not a "
                                               "CPU list",
                                               a->initial);
                p->has_cpus_initial = true;
        }
        if (a && a->final && a->final[0]) {
                if (oci_cpu_list_parse(a->final, &p->cpus_final) < 0)
                        return psrun_error_set(err, EINVAL,
                                               "process.execCPUAffinity.final: \"%s\" is not a CPU "
                                               "list",
                                               a->final);
                p->has_cpus_final = true;
        }
        return 0;
}

static int plan_process(const struct oci_config *c, const struct oci_process *proc, bool own_userns,
                        const char *root_dir, struct plan *p, psrun_error *err)
{
        bool new_user = own_userns;
        if (!(p->argv = strv_copy(proc->args)) ||
            !(p->envp = strv_copy(proc->env ? proc->env : (char *[]){NULL})) ||
            !(p->workdir = strdup(proc->cwd)))
                return psrun_error_errno(err, ENOMEM, "plan");
        p->uid = proc->user.uid;
        p->gid = proc->user.gid;
        if (proc->user.n_additional_gids) {
                p->groups = calloc(proc->user.n_additional_gids, sizeof(gid_t));
                if (!p->groups)
                        return psrun_error_errno(err, ENOMEM, "plan");
                for (size_t i = 0; i < proc->user.n_additional_gids; i++)
                        p->groups[i] = proc->user.additional_gids[i];
                p->n_groups = proc->user.n_additional_gids;
        }
        p->umask = proc->user.umask.set ? (mode_t) (proc->user.umask.value & 07777) : 022;
        p->no_new_privs = proc->no_new_privileges;
        p->chown_stdio = true;
        int r = plan_home(p, root_dir, err);
        if (r < 0)
                return r;
        for (size_t i = 0; p->envp[i]; i++)
                if (strncmp(p->envp[i], "PATH=", 5) == 0)
                        p->path_env = p->envp[i] + 5;
        if (proc->console_size) {
                p->console_rows = proc->console_size->height;
                p->console_cols = proc->console_size->width;
        }

        /* A label asked for is a layer asked for: without SELinux support
         * it would be silently missing, so it is refused. */
        if (proc->selinux_label && proc->selinux_label[0])
                return psrun_error_set(err, EOPNOTSUPP,
                                       "process.selinuxLabel: psrun does not support SELinux");
        r = plan_caps(proc, new_user, p, err);
        if (r >= 0)
                r = plan_rlimits(proc, new_user, p, err);
        if (r >= 0 && proc->apparmor_profile && proc->apparmor_profile[0]) {
                /* Asked for by name: without AppArmor that is an error, not a
                 * note (the layer fails closed). */
                r = apparmor_plan_init(&p->apparmor, POLICY_LAYER_REQUIRED, proc->apparmor_profile,
                                       err);
                if (r < 0)
                        psrun_error_prefix(err, "process.apparmorProfile");
        }
        if (r >= 0)
                r = plan_seccomp(c, p, err);
        if (r >= 0)
                plan_tuning(proc, p);
        if (r >= 0 && c->linux_ && c->linux_->personality)
                p->personality = (unsigned long) c->linux_->personality->domain;
        return r;
}

static int resolve_rootfs(const struct oci_config *c, const char *bundle, char **ret,
                          psrun_error *err)
{
        _cleanup_free_ char *joined = NULL;
        if (c->root.path[0] == '/')
                joined = strdup(c->root.path);
        else if (asprintf(&joined, "%s/%s", bundle, c->root.path) < 0)
                joined = NULL;
        if (!joined)
                return psrun_error_errno(err, ENOMEM, "root.path");
        char *real = realpath(joined, NULL);
        if (!real)
                return psrun_error_errno(err, errno, "root.path: %s", joined);
        struct stat st;
        if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
                free(real);
                return psrun_error_set(err, ENOTDIR, "root.path: %s: not a directory", joined);
        }
        *ret = real;
        return 0;
}

/* runc's name for a container's session keyring; an exec gets one of its
 * own too, unless the container was made with --no-new-keyring (as runc). */
static int plan_keyring(const struct oci_plan_options *o, struct plan *p, psrun_error *err)
{
        if (o->no_new_keyring || !o->id)
                return 0;
        if (asprintf(&p->session_keyring, "_ses.%s", o->id) < 0) {
                p->session_keyring = NULL;
                return psrun_error_errno(err, ENOMEM, "plan");
        }
        return 0;
}

int plan_from_oci(const struct oci_config *c, const struct oci_plan_options *o, struct plan *p,
                  psrun_error *err)
{
        plan_init(p);
        if (!c->process)
                return psrun_error_set(err, EINVAL, "process: missing (nothing to run)");
        if (plan_keyring(o, p, err) < 0)
                return -ENOMEM;
        p->root = PLAN_ROOT_BUNDLE;
        p->pdeathsig = !o->detached;
        p->no_pivot = o->no_pivot;
        p->preserve_fds = o->preserve_fds;
        p->base_dir = "/tmp";
        p->rootfs_propagation = c->linux_ && c->linux_->rootfs_propagation
                                        ? (unsigned long) c->linux_->rootfs_propagation
                                        : 0;

        if (c->linux_ && c->linux_->mount_label && c->linux_->mount_label[0])
                return psrun_error_set(err, EOPNOTSUPP,
                                       "linux.mountLabel: psrun does not support SELinux");
        if (c->linux_ && c->linux_->intel_rdt)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "linux.intelRdt: psrun does not support Intel RDT "
                                       "(resctrl)");
        int r = plan_namespaces(c, p, err);
        /* The root is always built in a mount namespace of psrun's making:
         * with no mount namespace in the config, a private copy of the
         * runtime's (the container sees what it saw, and nothing it mounts
         * reaches the host's); with one joined by path, a private copy of
         * that one, made right after joining it (runtime/child.c): neither
         * namespace is changed. */
        p->clone_flags |= CLONE_NEWNS;
        if (r >= 0 && c->hostname && !(p->hostname = strdup(c->hostname)))
                r = psrun_error_errno(err, ENOMEM, "plan");
        if (r >= 0 && c->domainname && !(p->domainname = strdup(c->domainname)))
                r = psrun_error_errno(err, ENOMEM, "plan");
        if (r >= 0)
                r = resolve_rootfs(c, o->bundle, &p->rootfs_dir, err);
        if (r >= 0)
                r = plan_process(c, c->process, p->clone_flags & CLONE_NEWUSER, p->rootfs_dir, p,
                                 err);
        if (r >= 0 && o->socket_activation) {
                /* Socket activation: the fds, and their count for pid 1. */
                if (p->preserve_fds < o->listen_fds)
                        p->preserve_fds = o->listen_fds;
                r = env_set(p, "LISTEN_FDS", o->listen_fds, err);
                if (r >= 0)
                        r = env_set(p, "LISTEN_PID", 1, err);
        }
        if (r >= 0) {
                const struct oci_namespace *user = find_namespace(c, CLONE_NEWUSER);
                const struct oci_userns userns = {
                        .new_userns = p->clone_flags & CLONE_NEWUSER,
                        .uid_map = p->uid_map,
                        .gid_map = p->gid_map,
                        .path = user ? user->path : NULL,
                        .rootless = o->rootless,
                };
                r = oci_rootfs_plan(c, o->bundle, &userns, &p->rootfs, err);
        }
        /* Root of a user namespace (rootless podman's) writes its maps as
         * root does; a user without privileges has its own rules. */
        if (r >= 0 && o->rootless && geteuid() != 0)
                r = oci_rootless_plan_identity(c, p, err);
        if (r < 0)
                plan_free(p);
        return r;
}

/* A user namespace that denies setgroups (a rootless container mapping only
 * its user's ids) refuses any setgroups, an empty list too: the exec's
 * process keeps the groups it has, and a config asking for some is
 * refused rather than given none. */
static int plan_joined_setgroups(pid_t pid, struct plan *p, psrun_error *err)
{
        char path[64], buf[16] = "";
        snprintf(path, sizeof(path), "/proc/%d/setgroups", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_into(fd, buf, sizeof(buf)) < 0 || strncmp(buf, "deny", 4) != 0)
                return 0;
        if (p->n_groups)
                return psrun_error_set(err, EPERM,
                                       "process.user.additionalGids: the container's user "
                                       "namespace denies setgroups (it maps only its user's ids)");
        p->rootless.groups_denied = true;
        return 0;
}

/* Which of pid's namespaces differ from ours: those are the ones to enter
 * (entering one's own user namespace is an error). */
uint64_t oci_namespaces_to_join(pid_t pid)
{
        static const struct {
                const char *name;
                int type;
        } kinds[] = {
                {"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},  {"ipc", CLONE_NEWIPC},
                {"uts", CLONE_NEWUTS},   {"net", CLONE_NEWNET}, {"cgroup", CLONE_NEWCGROUP},
                {"time", CLONE_NEWTIME},
        };
        uint64_t flags = 0;
        for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
                char path[64];
                struct stat theirs, ours;
                snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) pid, kinds[i].name);
                if (stat(path, &theirs) < 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i].name);
                if (stat(path, &ours) < 0 || theirs.st_ino != ours.st_ino ||
                    theirs.st_dev != ours.st_dev)
                        flags |= (uint64_t) kinds[i].type;
        }
        return flags;
}

int plan_for_exec(const struct oci_config *c, const struct oci_process *proc, pid_t pid, int pidfd,
                  const struct oci_plan_options *o, struct plan *p, psrun_error *err)
{
        plan_init(p);
        p->root = PLAN_ROOT_JOINED;
        p->pdeathsig = !o->detached;
        p->preserve_fds = o->preserve_fds;
        p->join_flags = oci_namespaces_to_join(pid);
        /* The pid namespace too: entered by the child for the command's
         * process it makes (plan.h spawn_command). */
        p->spawn_command = true;
        char ns[64];
        struct stat theirs, ours;
        snprintf(ns, sizeof(ns), "/proc/%d/ns/pid", (int) pid);
        if (stat(ns, &theirs) == 0 && stat("/proc/self/ns/pid", &ours) == 0 &&
            (theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev))
                p->join_flags |= CLONE_NEWPID;
        p->join_pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        if (p->join_pidfd < 0)
                return psrun_error_errno(err, errno, "exec: pidfd");
        char root_dir[64];
        snprintf(root_dir, sizeof(root_dir), "/proc/%d/root", (int) pid);
        int r = plan_process(c, proc, p->join_flags & CLONE_NEWUSER, root_dir, p, err);
        if (r >= 0 && (p->join_flags & CLONE_NEWUSER))
                r = plan_joined_setgroups(pid, p, err);
        if (r >= 0)
                r = plan_cpu_affinity(proc, p, err);
        if (r >= 0)
                r = plan_keyring(o, p, err);
        if (r < 0)
                plan_free(p);
        return r;
}

/* The devices a runtime supplies (config-linux.md "Default Devices"), and
 * the pty devices a terminal needs, allowed after the config's own rules as
 * runc does: engines such as Docker list only what they add to those. */
static const struct oci_device_rule default_device_rules[] = {
        {.allow = true, .type = 'c', .major = {true, -1}, .minor = {true, -1}, .access = "m"},
        {.allow = true, .type = 'b', .major = {true, -1}, .minor = {true, -1}, .access = "m"},
        {.allow = true, .type = 'c', .major = {true, 1}, .minor = {true, 3}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 1}, .minor = {true, 5}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 1}, .minor = {true, 7}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 1}, .minor = {true, 8}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 1}, .minor = {true, 9}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 5}, .minor = {true, 0}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 5}, .minor = {true, 2}, .access = "rwm"},
        {.allow = true, .type = 'c', .major = {true, 136}, .minor = {true, -1}, .access = "rwm"},
};

int oci_resources_with_default_devices(const struct oci_resources *res, struct oci_resources *out,
                                       struct oci_device_rule **owned)
{
        *owned = NULL;
        if (!res)
                return 0;
        *out = *res;
        if (res->n_devices == 0)
                return 0; /* no device policy at all: nothing to complete */
        size_t n = res->n_devices + ARRAY_SIZE(default_device_rules);
        struct oci_device_rule *rules = calloc(n, sizeof(*rules));
        if (!rules)
                return -ENOMEM;
        memcpy(rules, res->devices, res->n_devices * sizeof(*rules));
        memcpy(rules + res->n_devices, default_device_rules, sizeof(default_device_rules));
        out->devices = rules;
        out->n_devices = n;
        *owned = rules;
        return 0;
}
