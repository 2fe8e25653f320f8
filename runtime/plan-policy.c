/* SPDX-License-Identifier: MIT */
/* Policy -> plan: every decision and allocation the child must not make
 * (psrun run, a session's template; the OCI path has runtime/oci/plan.c). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netns.h"
#include "policy/policy.h"
#include "policy/seccomp-notify.h"
#include "rootfs/rootfs.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"

#define SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void note(const struct plan_options *o, const char *msg)
{
        if (o && o->log)
                o->log(o->log_userdata, LOG_LEVEL_INFO, msg);
}

/* Set NAME=value in a NULL-terminated vector with room for it, replacing an
 * earlier entry of the same name. */
static int env_put(char **envp, size_t *n, const char *name, const char *value)
{
        char *entry;
        if (asprintf(&entry, "%s=%s", name, value) < 0)
                return -ENOMEM;
        size_t len = strlen(name);
        for (size_t i = 0; i < *n; i++)
                if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=') {
                        free(envp[i]);
                        envp[i] = entry;
                        return 0;
                }
        envp[(*n)++] = entry;
        envp[*n] = NULL;
        return 0;
}

/* A clean environment: PATH, HOME, LANG and what the policy names. Nothing
 * comes from the host unless the policy asks for it by name. */
static int build_env(const struct policy *pol, char *const *image_env, struct plan *p)
{
        size_t n = 0, n_image = 0;
        while (image_env && image_env[n_image])
                n_image++;
        char **envp = calloc(pol->n_env + n_image + 4, sizeof(char *));
        if (!envp)
                return -ENOMEM;
        int r = env_put(envp, &n, "PATH", SANDBOX_PATH);
        if (r >= 0)
                r = env_put(envp, &n, "HOME", "/workspace");
        if (r >= 0)
                r = env_put(envp, &n, "LANG", "C.UTF-8");
        /* An image's Env (its PATH above all) over psrun's, under the
         * policy's. */
        for (size_t i = 0; r >= 0 && i < n_image; i++) {
                _cleanup_free_ char *name = strndup(image_env[i], strcspn(image_env[i], "="));
                r = name ? env_put(envp, &n, name, image_env[i] + strlen(name) + 1) : -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < pol->n_env; i++) {
                const char *v = pol->env[i].value;
                if (!v)
                        v = getenv(pol->env[i].name);
                if (v)
                        r = env_put(envp, &n, pol->env[i].name, v);
        }
        if (r < 0) {
                strv_free(envp);
                return r;
        }
        p->envp = envp;
        for (size_t i = 0; i < n; i++)
                if (strncmp(envp[i], "PATH=", 5) == 0)
                        p->path_env = envp[i] + 5;
        return 0;
}

static const char *pick_base_dir(void)
{
        /* Any existing directory will do: the new root's tmpfs is mounted on
         * it inside the sandbox's own mount namespace only. */
        static const char *const candidates[] = {"/tmp", "/mnt", "/run", "/var/tmp", "/dev"};
        struct stat st;
        for (size_t i = 0; i < ARRAY_SIZE(candidates); i++)
                if (stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode))
                        return candidates[i];
        return "/";
}

static int plan_landlock(const struct policy *pol, const struct plan_options *o, struct plan *p,
                         psrun_error *err)
{
        p->landlock.ruleset_fd = -1;
        if (pol->landlock == POLICY_LAYER_OFF)
                return 0;
        size_t n = 0;
        const char *writable[16 + 64];
        for (const char *const *w = rootfs_writable_paths; *w; w++)
                writable[n++] = *w;
        /* A writable root is writable everywhere ownership allows. */
        if (!pol->readonly_rootfs)
                writable[n++] = "/";
        for (size_t i = 0; i < pol->n_mounts && n + 1 < ARRAY_SIZE(writable); i++)
                if (!pol->mounts[i].readonly)
                        writable[n++] = pol->mounts[i].target;
        writable[n] = NULL;

        psrun_error lerr = {0};
        int r = landlock_plan_default(&p->landlock, writable, &lerr);
        if (r == -EOPNOTSUPP && pol->landlock == POLICY_LAYER_AUTO) {
                char msg[PSRUN_ERROR_MSG_MAX + 32];
                snprintf(msg, sizeof(msg), "%s; skipped", lerr.msg);
                note(o, msg);
                p->landlock.ruleset_fd = -1;
                return 0;
        }
        if (r < 0) {
                *err = lerr;
                return psrun_error_prefix(err, "landlock (required by the policy)");
        }
        return 0;
}

static int plan_apparmor(const struct policy *pol, const struct plan_options *o, struct plan *p,
                         psrun_error *err)
{
        psrun_error aerr = {0};
        int r = apparmor_plan_init(&p->apparmor, (int) pol->apparmor, pol->apparmor_profile, &aerr);
        if (r == -EOPNOTSUPP && pol->apparmor == POLICY_LAYER_AUTO) {
                /* A host without AppArmor: Landlock and seccomp still hold. */
                note(o, aerr.msg);
                p->apparmor.active = false;
                return 0;
        }
        if (r < 0)
                *err = aerr;
        return r;
}

/*
 * The sandbox's user namespace is charged to its creator, host root: without
 * caps of its own, a sandbox could take every inotify instance, fanotify
 * group, queued signal or message queue byte host root may have. Each
 * quota is capped in the sandbox's namespace (its code has no
 * CAP_SYS_RESOURCE there to raise it), and RLIMIT_SIGPENDING and
 * RLIMIT_MSGQUEUE, which the kernel counts the same way, for the command.
 */
static void plan_quotas(const struct policy *pol, struct plan *p)
{
        const struct {
                const char *path;
                uint64_t value;
                bool cgroupns;
        } quotas[] = {
                {"/proc/sys/user/max_inotify_instances", pol->inotify_limit, false},
                {"/proc/sys/user/max_inotify_watches", pol->inotify_watch_limit, false},
                {"/proc/sys/user/max_fanotify_groups", pol->fanotify_limit, false},
                {"/proc/sys/user/max_fanotify_marks", pol->fanotify_mark_limit, false},
                {"/proc/sys/user/max_user_namespaces", pol->namespace_limit, false},
                {"/proc/sys/user/max_mnt_namespaces", pol->namespace_limit, false},
                {"/proc/sys/user/max_pid_namespaces", pol->namespace_limit, false},
                {"/proc/sys/user/max_net_namespaces", pol->namespace_limit, false},
                {"/proc/sys/user/max_ipc_namespaces", pol->namespace_limit, false},
                {"/proc/sys/user/max_uts_namespaces", pol->namespace_limit, false},
                {"/proc/sys/user/max_cgroup_namespaces", pol->namespace_limit, true},
                {"/proc/sys/user/max_time_namespaces", pol->namespace_limit, false},
        };
        _Static_assert(ARRAY_SIZE(quotas) <= PLAN_MAX_USER_QUOTAS, "PLAN_MAX_USER_QUOTAS");
        for (size_t i = 0; i < ARRAY_SIZE(quotas); i++) {
                struct plan_user_quota *q = &p->user_quotas[p->n_user_quotas++];
                q->path = quotas[i].path;
                q->cgroupns = quotas[i].cgroupns;
                snprintf(q->value, sizeof(q->value), "%llu", (unsigned long long) quotas[i].value);
        }
        p->rlimits[p->n_rlimits++] = (struct plan_rlimit){
                .resource = RLIMIT_SIGPENDING,
                .limit = {pol->sigpending_limit, pol->sigpending_limit},
        };
        /* POSIX message queues are charged the same way, and host root has
         * no capability that lets it past its own limit. */
        p->rlimits[p->n_rlimits++] = (struct plan_rlimit){
                .resource = RLIMIT_MSGQUEUE,
                .limit = {pol->msgqueue_limit, pol->msgqueue_limit},
        };
}

/* What the violations report needs of the child (native backend): the
 * command's exec message, and the listener's program, a copy of the
 * profile that notifies instead of refusing with EPERM (none when it
 * refuses nothing so). */
static int plan_violations(const struct policy *pol, struct plan *p, psrun_error *err)
{
        if (pol->violations == POLICY_VIOLATIONS_OFF)
                return 0;
        p->report_exec = true;
        int r = seccomp_program_notify(&p->seccomp, &p->seccomp_notify);
        if (r < 0)
                return psrun_error_errno(err, r, "violations: seccomp");
        return 0;
}

static const enum netns_mode network_modes[_POLICY_NETWORK_MAX] = {
        [POLICY_NETWORK_NONE] = NETNS_MODE_NONE,
        [POLICY_NETWORK_RESTRICTED] = NETNS_MODE_RESTRICTED,
        [POLICY_NETWORK_FULL] = NETNS_MODE_FULL,
};
_Static_assert(POLICY_MAX_PORTS <= NETNS_MAX_PORTS, "NETNS_MAX_PORTS");

static int parse_cidrs(char *const *v, size_t n, bool with_port, struct cidr *out, size_t *n_out,
                       const char *key, psrun_error *err)
{
        if (n > NETNS_MAX_CIDRS)
                return psrun_error_set(err, E2BIG, "%s: at most %d entries", key, NETNS_MAX_CIDRS);
        for (size_t i = 0; i < n; i++)
                if (policy_parse_cidr(v[i], with_port, &out[i], err) < 0)
                        return psrun_error_prefix(err, "%s[%zu]", key, i);
        *n_out = n;
        return 0;
}

/* The one place a policy's network keys become a network request: the
 * sandbox's (network, allow_domains, allow_cidrs) or an install's (its
 * mode and allowlist, no allow_cidrs); the other keys are shared. The
 * request borrows the policy's strings, so the plan must not outlive pol. */
static int plan_network(const struct policy *pol, enum policy_network network,
                        char *const *allow_domains, size_t n_allow_domains, bool with_cidrs,
                        struct netns_plan *net, psrun_error *err)
{
        /* Safe for netns_release() whatever fails. */
        memset(net, 0, sizeof(*net));
        net->lease_fd = -1;
        if ((unsigned) network >= _POLICY_NETWORK_MAX)
                return psrun_error_set(err, EINVAL, "network: unknown mode %d", (int) network);
        /* Big (the lists, parsed): not on the stack of an embedder's thread. */
        _cleanup_free_ struct netns_request *req = calloc(1, sizeof(*req));
        if (!req)
                return psrun_error_errno(err, ENOMEM, "network");
        req->mode = network_modes[network];
        int r = 0;
        if (netns_mode_has_veth(req->mode)) {
                req->ports = pol->allow_ports;
                req->n_ports = pol->n_allow_ports;
                if (with_cidrs)
                        r = parse_cidrs(pol->allow_cidrs, pol->n_allow_cidrs, true, req->cidrs,
                                        &req->n_cidrs, "allow_cidrs", err);
                if (r >= 0)
                        r = parse_cidrs(pol->allow_private, pol->n_allow_private, false,
                                        req->privates, &req->n_privates, "allow_private", err);
                if (r >= 0 && pol->n_dns_upstream > NETNS_MAX_UPSTREAM)
                        r = psrun_error_set(err, E2BIG, "dns_upstream: at most %d addresses",
                                            NETNS_MAX_UPSTREAM);
                if (r >= 0)
                        r = parse_cidrs(pol->dns_upstream, pol->n_dns_upstream, false,
                                        req->upstream, &req->n_upstream, "dns_upstream", err);
                if (r >= 0 && pol->network_pool) {
                        r = policy_parse_cidr(pol->network_pool, false, &req->pool, err);
                        if (r < 0)
                                psrun_error_prefix(err, "network_pool");
                        req->pool_given = r >= 0;
                }
                req->min_ttl_ms = pol->dns_min_ttl_ms;
                req->max_ttl_ms = pol->dns_max_ttl_ms;
                req->allow_domains = (const char *const *) allow_domains;
                req->n_allow_domains = n_allow_domains;
                req->log_path = pol->network_log;
                req->name_check = pol->name_check && req->mode == NETNS_MODE_RESTRICTED;
        }
        return r < 0 ? r : netns_plan(req, net, err);
}

int plan_policy_network(const struct policy *pol, struct netns_plan *net, psrun_error *err)
{
        return plan_network(pol, pol->network, pol->allow_domains, pol->n_allow_domains, true, net,
                            err);
}

int plan_install_network(const struct policy *pol, struct netns_plan *net, psrun_error *err)
{
        return plan_network(pol, pol->install_network, pol->install_allow_domains,
                            pol->n_install_allow_domains, false, net, err);
}

/* An image's User ("uid[:gid]", "name[:group]" of its /etc/passwd and
 * /etc/group) where the policy's user is its default. */
static int plan_image_user(const struct policy *pol, const struct plan_image *img, struct plan *p,
                           psrun_error *err)
{
        if (!img->user || pol->uid != POLICY_DEFAULT_UID || pol->gid != POLICY_DEFAULT_GID)
                return 0;
        _cleanup_free_ char *u = strdup(img->user);
        if (!u)
                return psrun_error_errno(err, ENOMEM, "image");
        char *g = strchr(u, ':');
        if (g)
                *g++ = '\0';
        long ids[2] = {-1, -1};
        const char *names[2] = {u, g}, *files[2] = {"passwd", "group"};
        for (int k = 0; k < 2; k++) {
                if (!names[k] || !*names[k])
                        continue;
                char *end;
                long v = strtol(names[k], &end, 10);
                if (*end == '\0') {
                        ids[k] = v;
                        continue;
                }
                _cleanup_free_ char *text = NULL;
                size_t len = 0;
                if (rootfs_image_read((const char *const *) img->lowers, img->n_lowers, "etc",
                                      files[k], 1 << 20, &text, &len) == 0) {
                        size_t nlen = strlen(names[k]);
                        for (char *line = text; line && *line; line = strchr(line, '\n')) {
                                line += *line == '\n';
                                if (strncmp(line, names[k], nlen) != 0 || line[nlen] != ':')
                                        continue;
                                char *f = strchr(line + nlen + 1, ':');
                                if (f) {
                                        ids[k] = strtol(f + 1, NULL, 10);
                                        if (k == 0 && !g) {
                                                char *gf = strchr(f + 1, ':');
                                                ids[1] = gf ? strtol(gf + 1, NULL, 10) : -1;
                                        }
                                }
                                break;
                        }
                }
                if (ids[k] < 0)
                        return psrun_error_set(err, EINVAL,
                                               "image: %s: its User `%s` names no %s of its "
                                               "/etc/%s",
                                               img->reference, img->user, k ? "group" : "user",
                                               files[k]);
        }
        if (ids[0] > POLICY_ID_MAX || ids[1] > POLICY_ID_MAX)
                return psrun_error_set(err, ERANGE, "image: %s: its User `%s` is past %d",
                                       img->reference, img->user, POLICY_ID_MAX);
        if (ids[0] >= 0)
                p->uid = (uid_t) ids[0];
        p->gid = (gid_t) (ids[1] >= 0 ? ids[1] : ids[0] >= 0 ? ids[0] : (long) p->gid);
        return 0;
}

/* A user's image is owned the way the sandbox maps ids: by the subordinate
 * range the sandbox maps, or by the user's one id (runtime/image-rootless.c
 * writes the store's owners from the same lookup). */
static int image_owners_match(const struct plan_image *img, struct plan *p, psrun_error *err)
{
        bool sub = strncmp(img->owners, "subordinate ids", 15) == 0;
        bool one = strncmp(img->owners, "one id", 6) == 0;
        if ((!sub && !one) || sub != p->rootless.subids)
                return psrun_error_set(err, EXDEV,
                                       "image: %s: its layers are owned as `%s`, which this "
                                       "sandbox's %s identity does not map (docs/rootless.md)",
                                       img->reference, img->owners,
                                       p->rootless.subids ? "subordinate-id" : "one-id");
        p->rootless.image_owners = sub ? "subordinate ids" : "one id";
        return 0;
}

int plan_from_policy(const struct policy *pol, char *const argv[], const struct plan_options *o,
                     struct plan *p, psrun_error *err)
{
        plan_init(p);

        int r = plan_policy_network(pol, &p->net, err);
        if (r < 0)
                return r;
        if (!argv || !argv[0] || !argv[0][0])
                return psrun_error_set(err, EINVAL, "run: no command given");

        p->clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS |
                         CLONE_NEWIPC | CLONE_NEWCGROUP;
        snprintf(p->uid_map, sizeof(p->uid_map), "0 %u %u\n", PSRUN_ID_BASE, PSRUN_ID_COUNT);
        snprintf(p->gid_map, sizeof(p->gid_map), "0 %u %u\n", PSRUN_ID_BASE, PSRUN_ID_COUNT);
        p->uid = pol->uid;
        p->gid = pol->gid;
        p->loopback_up = p->net.loopback_up;
        p->use_init = true;
        p->pdeathsig = true;
        p->no_new_privs = true;
        p->base_dir = pick_base_dir();
        caps_plan_none(&p->caps);
        plan_quotas(pol, p);

        _cleanup_(plan_image_free) struct plan_image img = {0};
        if (pol->image) {
                r = plan_image_resolve(pol, &img, err);
                if (r >= 0)
                        r = plan_image_user(pol, &img, p, err);
                if (r < 0) {
                        plan_free(p);
                        return r;
                }
                p->root = PLAN_ROOT_IMAGE;
        }
        /* Rootless, after the image's User: the one-id map maps the
         * sandbox's uid, whichever it is. */
        if (rootless_active()) {
                r = rootless_plan_identity(pol, p, err);
                if (r >= 0 && pol->image)
                        r = image_owners_match(&img, p, err);
                if (r >= 0)
                        r = rootless_plan_network(p, err);
                if (r < 0) {
                        plan_free(p);
                        return r;
                }
                /* Behind a router the sandbox's network namespace is the
                 * router's: its veth code brings lo up, the child has no
                 * right to. */
                if (p->rootless.router)
                        p->loopback_up = false;
        }
        /* The policy's workdir wins; left at its default, an image's
         * WorkingDir is taken. */
        const char *workdir = pol->workdir ? pol->workdir : POLICY_DEFAULT_WORKDIR;
        if (img.workdir && strcmp(workdir, POLICY_DEFAULT_WORKDIR) == 0)
                workdir = img.workdir;
        if (!(p->hostname = strdup(pol->hostname ? pol->hostname : POLICY_DEFAULT_HOSTNAME)) ||
            !(p->workdir = strdup(workdir)) || !(p->argv = strv_copy(argv)) ||
            build_env(pol, img.env, p) < 0) {
                plan_free(p);
                return psrun_error_errno(err, ENOMEM, "plan");
        }

        p->reported = (struct plan_limits){
                .memory_bytes = pol->memory_limit,
                .pids = pol->pids_limit,
                .disk_bytes = pol->disk_limit,
                .timeout_ms = pol->timeout_ms,
                .cpus = pol->cpu_limit,
        };
        /* + 1: psrun's init is pid 1 of the sandbox and not the user's. */
        p->limits = plan_limits_with(p, 1);
        p->timeout_ms = pol->timeout_ms;
        p->violations = (int) pol->violations;
        p->landlock_off = pol->landlock == POLICY_LAYER_OFF;
        p->apparmor_off = pol->apparmor == POLICY_LAYER_OFF;

        uint64_t tmp_size = pol->memory_limit / 4;
        if (tmp_size > pol->disk_limit)
                tmp_size = pol->disk_limit;
        /* The policy's mounts as the root's (the strings borrowed). */
        _cleanup_free_ struct rootfs_user_mount *mounts =
                pol->n_mounts ? calloc(pol->n_mounts, sizeof(*mounts)) : NULL;
        if (pol->n_mounts && !mounts) {
                plan_free(p);
                return psrun_error_errno(err, ENOMEM, "plan");
        }
        for (size_t i = 0; i < pol->n_mounts; i++)
                mounts[i] = (struct rootfs_user_mount){.source = pol->mounts[i].source,
                                                       .target = pol->mounts[i].target,
                                                       .readonly = pol->mounts[i].readonly};
        struct rootfs_options ro = {
                .readonly = pol->readonly_rootfs,
                .workspace_size = pol->disk_limit,
                .tmp_size = tmp_size,
                .uid = p->uid,
                .gid = p->gid,
                .hostname = p->hostname,
                .workdir = p->workdir,
                .mounts = mounts,
                .n_mounts = pol->n_mounts,
                .pty_limit = pol->pty_limit,
                .one_id = p->rootless.active && !p->rootless.subids,
        };
        /* The lease last but one: the sandbox's resolv.conf names the
         * gateway. plan_free() gives it back. */
        r = p->rootless.router ? netns_lease_private(&p->net, err) : netns_lease(&p->net, err);
        if (r >= 0 && p->net.veth)
                ro.resolv_conf = p->net.resolv_conf;
        if (r >= 0 && p->root == PLAN_ROOT_IMAGE) {
                struct rootfs_image_options io = {
                        .lowers = (const char *const *) img.lowers,
                        .n_lowers = img.n_lowers,
                        .id_shift = p->rootless.active ? 0 : PSRUN_ID_BASE,
                        .workdir = p->workdir,
                };
                r = rootfs_plan_image(&ro, &io, &p->rootfs, err);
                /* The plan holds the layers from here: prune leaves them. */
                if (r >= 0) {
                        p->image_hold = img.hold;
                        img.hold = (struct image_hold){0};
                }
        } else if (r >= 0) {
                r = rootfs_plan_standalone(&ro, &p->rootfs, err);
        }
        p->rootfs.sources_in_child = p->rootless.active;
        /* Rootless, only the sandbox's user namespace may mount the overlay. */
        if (p->rootfs.overlay)
                p->rootfs.overlay->in_child = p->rootless.active;
        /* `tools` fail the plan, before any command starts. */
        if (r >= 0)
                r = plan_check_planned_tools(pol, p, err);
        /* Under gVisor the sandbox's syscalls never reach the host kernel:
         * the sentry and the gofer stand where these layers stand, and runsc
         * confines those itself (runtime/gvisor/run.c). */
        if (r >= 0 && pol->backend != POLICY_BACKEND_NATIVE)
                return 0;
        if (r >= 0)
                r = plan_apparmor(pol, o, p, err);
        if (r >= 0)
                r = plan_landlock(pol, o, p, err);
        if (r >= 0) {
                r = seccomp_default_program(&p->seccomp);
                if (r < 0)
                        psrun_error_errno(err, r, "seccomp");
        }
        if (r >= 0)
                r = plan_violations(pol, p, err);
        if (r < 0)
                plan_free(p);
        return r;
}
