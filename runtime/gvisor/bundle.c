/* SPDX-License-Identifier: MIT */
/*
 * The bundle runsc gets: made from the plan the native backend would apply,
 * so that both run the same sandbox. The plan's root is a list of mount
 * steps (rootfs/standalone.c); here each kind of step has two halves, one
 * for the host side (the skeleton, a tmpfs on rootfs/: its directories,
 * links and the synthesized /etc files) and one for config.json (its
 * mounts). What runsc makes itself (/dev, its devpts) and what gVisor's own
 * procfs has no use for (masks of host /proc files, read-only rebinds) is
 * left out. The workspace is the host tmpfs psrun mounted for runsc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/names.h"
#include "policy/seccomp.h"
#include "runtime/gc.h"
#include "runtime/gvisor/gvisor.h"
#include "rootfs/mounts.h"
#include "runtime/plan.h"

#define WORKSPACE "/workspace"

/* ---- the state directory ---- */

/* mkdir, with the mode given whatever the umask (a session's supervisor
 * runs with 077; an embedder may too): the gofer, an unprivileged host uid,
 * must read the skeleton. */
static int mkdir_mode(const char *path, mode_t mode)
{
        if (mkdir(path, mode) < 0)
                return -errno;
        return chmod(path, mode) < 0 ? -errno : 0;
}

static int mkdir_owned(const char *path, mode_t mode)
{
        if (mkdir_mode(path, mode) < 0 && errno != EEXIST)
                return -errno;
        struct stat st;
        if (lstat(path, &st) < 0)
                return -errno;
        /* Someone else's directory (or a link) where psrun's should be. */
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022))
                return -EPERM;
        return 0;
}

int gvisor_sandbox_create(struct gvisor_sandbox *gs, const struct gvisor_runtime *rt,
                          const struct plan *plan, psrun_error *err)
{
        static atomic_uint counter;
        unsigned n = atomic_fetch_add(&counter, 1);
        memset(gs, 0, sizeof(*gs));
        gs->lock_fd = -1;
        gs->rt = *rt;
        gs->netstack = plan->net.veth; /* full, restricted */
        snprintf(gs->id, sizeof(gs->id), "psrun-%d-%u", (int) getpid(), n);
        snprintf(gs->dir, sizeof(gs->dir), GVISOR_STATE_DIR "/%d-%u", (int) getpid(), n);
        snprintf(gs->rootfs, sizeof(gs->rootfs), "%s/rootfs", gs->dir);
        snprintf(gs->workspace, sizeof(gs->workspace), "%s/workspace", gs->dir);
        snprintf(gs->proc, sizeof(gs->proc), "%s/proc", gs->dir);
        snprintf(gs->runsc_log, sizeof(gs->runsc_log), "%s/runsc.log", gs->dir);
        /* The host ids of the sandbox user: the bundle maps them as the
         * native backend's user namespace does. */
        snprintf(gs->workspace_data, sizeof(gs->workspace_data),
                 "mode=0755,size=%llu,uid=%u,gid=%u",
                 (unsigned long long) plan->reported.disk_bytes, PSRUN_ID_BASE + plan->uid,
                 PSRUN_ID_BASE + plan->gid);

        /* 0711: the gofer runs as an unprivileged host uid (the user
         * namespace's root) and must reach rootfs/ and workspace/. */
        int r = mkdir_owned(GVISOR_STATE_DIR, 0711);
        if (r < 0)
                return psrun_error_errno(err, r, "backend: gvisor: %s", GVISOR_STATE_DIR);
        if ((r = mkdir_mode(gs->dir, 0711)) < 0)
                return psrun_error_errno(err, r, "backend: gvisor: mkdir %s", gs->dir);
        char lock[sizeof(gs->dir) + 8];
        snprintf(lock, sizeof(lock), "%s/lock", gs->dir);
        gs->lock_fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (gs->lock_fd < 0 || flock(gs->lock_fd, LOCK_EX | LOCK_NB) < 0) {
                r = -errno;
                gvisor_sandbox_remove(gs);
                return psrun_error_errno(err, r, "backend: gvisor: lock %s", lock);
        }
        static const struct {
                const char *name;
                mode_t mode;
        } subdirs[] = {{"rootfs", 0755}, {"workspace", 0755}, {"proc", 0555}, {"runsc", 0700}};
        for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++) {
                char path[sizeof(gs->dir) + 16];
                snprintf(path, sizeof(path), "%s/%s", gs->dir, subdirs[i].name);
                if ((r = mkdir_mode(path, subdirs[i].mode)) < 0) {
                        gvisor_sandbox_remove(gs);
                        return psrun_error_errno(err, r, "backend: gvisor: mkdir %s", path);
                }
        }
        return 0;
}

/* rm -rf below dfd: nothing is followed (unlinkat removes a link itself). */
static void remove_below(int dfd, int depth)
{
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) == 0 || (errno != EISDIR && errno != EPERM))
                        continue;
                int sub = openat(dirfd(d), de->d_name,
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0 && depth < 64)
                        remove_below(sub, depth + 1);
                else
                        safe_close(sub);
                (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
        }
        closedir(d);
}

static void remove_tree(const char *path)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        remove_below(fd, 0);
        (void) rmdir(path);
}

void gvisor_sandbox_remove(struct gvisor_sandbox *gs)
{
        if (gs->dir[0])
                remove_tree(gs->dir);
        gs->dir[0] = '\0';
        /* Unlocked last: gc must not take a directory being removed. */
        gs->lock_fd = safe_close(gs->lock_fd);
}

/* Whether the owner of the state directory name is gone: its pid is, or
 * (a zombie, or the pid taken by another process) its lock is free. A
 * directory without a lock is one being made right now. */
static bool owner_gone(int root, const char *name, pid_t pid)
{
        if (kill(pid, 0) < 0 && errno == ESRCH)
                return true;
        char lock[300];
        snprintf(lock, sizeof(lock), "%s/lock", name);
        _cleanup_close_ int fd = openat(root, lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
}

/* "<pid>-<n>", decimal: the owner's pid. */
static bool parse_dir_name(const char *name, pid_t *pid)
{
        char *end;
        long v = strtol(name, &end, 10);
        if (end == name || *end != '-' || v <= 0 || v > INT_MAX || name[0] == '+')
                return false;
        const char *n = end + 1;
        if (!*n || strspn(n, "0123456789") != strlen(n))
                return false;
        *pid = (pid_t) v;
        return true;
}

int gvisor_gc(psrun_error *err)
{
        _cleanup_close_ int root =
                open(GVISOR_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                return errno == ENOENT ? 0
                                       : psrun_error_errno(err, errno, "gc: %s", GVISOR_STATE_DIR);
        DIR *d = fdopendir(dup(root));
        if (!d)
                return psrun_error_errno(err, errno, "gc: %s", GVISOR_STATE_DIR);
        int removed = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                pid_t pid;
                if (de->d_type != DT_DIR || !parse_dir_name(de->d_name, &pid))
                        continue;
                if (!owner_gone(root, de->d_name, pid))
                        continue;
                char path[sizeof(GVISOR_STATE_DIR) + 300];
                snprintf(path, sizeof(path), GVISOR_STATE_DIR "/%s", de->d_name);
                remove_tree(path);
                removed++;
        }
        closedir(d);
        return removed;
}

/* ---- the skeleton: host halves of the steps ---- */

static bool below(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* runsc makes /dev (and its devpts) itself, and gVisor's procfs is its own:
 * their contents are not the bundle's business. /dev/shm is kept. */
static bool runsc_owns(const struct mount_step *s)
{
        if (streq(s->target, "/dev/shm"))
                return false;
        return below(s->target, "/dev") || below(s->target, "/proc") ||
               (streq(s->target, "/dev") && s->op == MOUNT_OP_MOUNT);
}

struct skeleton {
        char root[PATH_MAX];
        psrun_error *err;
};

static int host_path(const struct skeleton *k, const struct mount_step *s, char *out, size_t size)
{
        if ((size_t) snprintf(out, size, "%s%s", k->root, s->target) >= size)
                return psrun_error_set(k->err, ENAMETOOLONG, "backend: gvisor: %s: too long",
                                       s->target);
        return 0;
}

static int host_mkdir(const struct skeleton *k, const struct mount_step *s)
{
        char p[PATH_MAX];
        int r = host_path(k, s, p, sizeof(p));
        /* Below /workspace it is made in the workspace itself
         * (gvisor_make_workdir). */
        if (r < 0 || below(s->target, WORKSPACE))
                return r;
        if ((r = mkdir_mode(p, s->mode ? s->mode & 07777 : 0755)) < 0 && r != -EEXIST)
                return psrun_error_errno(k->err, r, "backend: gvisor: rootfs: mkdir %s", s->target);
        return 0;
}

static int host_mkfile(const struct skeleton *k, const struct mount_step *s)
{
        char p[PATH_MAX];
        int r = host_path(k, s, p, sizeof(p));
        if (r < 0)
                return r;
        int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || fchmod(fd, 0644) < 0) {
                r = -errno;
                safe_close(fd);
                return psrun_error_errno(k->err, r, "backend: gvisor: rootfs: create %s",
                                         s->target);
        }
        safe_close(fd);
        return 0;
}

static int host_symlink(const struct skeleton *k, const struct mount_step *s)
{
        char p[PATH_MAX];
        int r = host_path(k, s, p, sizeof(p));
        if (r < 0)
                return r;
        if (symlink(s->source, p) < 0 && errno != EEXIST)
                return psrun_error_errno(k->err, errno, "backend: gvisor: rootfs: symlink %s",
                                         s->target);
        return 0;
}

static int host_write(const struct skeleton *k, const struct mount_step *s)
{
        char p[PATH_MAX];
        int r = host_path(k, s, p, sizeof(p));
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                      s->mode ? s->mode & 07777 : 0644);
        if (fd < 0 || fchmod(fd, s->mode ? s->mode & 07777 : 0644) < 0 ||
            (r = write_all(fd, s->data, s->data_len)) < 0)
                return psrun_error_errno(k->err, fd < 0 ? errno : -r,
                                         "backend: gvisor: rootfs: write %s", s->target);
        return 0;
}

/* ---- an image root ---- */

int gvisor_image_root(const struct plan *plan, int *ret, psrun_error *err)
{
        *ret = -1;
        if (!plan->rootfs.overlay)
                return 0;
        _cleanup_close_ int fd = -1;
        int r = rootfs_overlay_open(plan->rootfs.overlay, &fd, err);
        if (r < 0)
                return r;
        /*
         * The gofer remounts the root read-only from its own user namespace
         * (flags: bind, read-only, nothing else), which the kernel refuses
         * where nosuid or nodev were set outside it (they are locked). The
         * overlay is attached only in the launcher's mount namespace, where
         * nothing but runsc runs and nothing is executed from the root on
         * the host side (the sentry loads the sandbox's binaries), and it
         * holds no device: the store skips them (image/unpack.c) and the
         * gofer's user namespace cannot make one in the upper.
         */
        struct mount_attr attr = {.attr_clr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
        if (mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return psrun_error_errno(err, errno, "backend: gvisor: image root: mount flags");
        *ret = TAKE_FD(fd);
        return 0;
}

/* ---- config.json: the mount halves ---- */

struct config_ctx {
        FILE *f;
        const struct gvisor_config *c;
        bool first;
        psrun_error *err;
};

static void mount_open(struct config_ctx *x, const char *dest, const char *type, const char *src)
{
        fputs(x->first ? "\n  {" : ",\n  {", x->f);
        x->first = false;
        fputs("\"destination\":", x->f);
        json_write_string(x->f, dest);
        fputs(",\"type\":", x->f);
        json_write_string(x->f, type);
        fputs(",\"source\":", x->f);
        json_write_string(x->f, src);
        fputs(",\"options\":[", x->f);
}

static void option(struct config_ctx *x, bool *first, const char *opt, size_t len)
{
        fputs(*first ? "" : ",", x->f);
        *first = false;
        char buf[256];
        snprintf(buf, sizeof(buf), "%.*s", (int) len, opt);
        json_write_string(x->f, buf);
}

static int oci_bind(struct config_ctx *x, const struct mount_step *s)
{
        /* Host sources only: the read-only rebinds of /proc paths are left
         * to gVisor's procfs. */
        if (!s->from_host)
                return 0;
        if (s->optional && access(s->source, F_OK) < 0)
                return 0;
        mount_open(x, s->target, "bind", s->source);
        bool first = true;
        option(x, &first, s->recursive ? "rbind" : "bind", s->recursive ? 5 : 4);
        option(x, &first, (s->attr_set & MOUNT_ATTR_RDONLY) ? "ro" : "rw", 2);
        option(x, &first, "nosuid", 6);
        option(x, &first, "nodev", 5);
        fputs("]}", x->f);
        return 0;
}

static int oci_mount(struct config_ctx *x, const struct mount_step *s)
{
        bool first = true;
        if (streq(s->fstype, "tmpfs") && streq(s->target, WORKSPACE)) {
                /* The host's tmpfs, which the file API reaches without runsc. */
                mount_open(x, WORKSPACE, "bind", x->c->workspace);
                option(x, &first, "rbind", 5);
                option(x, &first, "rw", 2);
                option(x, &first, "nosuid", 6);
                option(x, &first, "nodev", 5);
        } else if (streq(s->fstype, "tmpfs") || streq(s->fstype, "proc")) {
                mount_open(x, s->target, s->fstype, s->fstype);
                option(x, &first, "nosuid", 6);
                option(x, &first, "nodev", 5);
                if (streq(s->fstype, "proc"))
                        option(x, &first, "noexec", 6);
                for (const char *p = s->data; p && *p;) {
                        size_t len = strcspn(p, ",");
                        if (len)
                                option(x, &first, p, len);
                        p += len + (p[len] == ',');
                }
        } else {
                return psrun_error_set(x->err, EOPNOTSUPP,
                                       "backend: gvisor: rootfs: a `%s` mount on %s has no form "
                                       "in a gVisor bundle",
                                       s->fstype ? s->fstype : "?", s->target);
        }
        fputs("]}", x->f);
        return 0;
}

/* One row per kind of step: its host half and its config.json half; NULL:
 * nothing to do on that side. */
static const struct step_kind {
        int (*host)(const struct skeleton *k, const struct mount_step *s);
        int (*oci)(struct config_ctx *x, const struct mount_step *s);
} step_kinds[_MOUNT_OP_MAX] = {
        [MOUNT_OP_MKDIR] = {host_mkdir, NULL},
        [MOUNT_OP_MKFILE] = {host_mkfile, NULL},
        [MOUNT_OP_SYMLINK] = {host_symlink, NULL},
        [MOUNT_OP_WRITE] = {host_write, NULL},
        [MOUNT_OP_BIND] = {NULL, oci_bind},
        [MOUNT_OP_MOUNT] = {NULL, oci_mount},
        /* gVisor's procfs does not show the host's /proc files masks hide;
         * the read-only remounts and the old root's detach are the native
         * child's own business. */
        [MOUNT_OP_MASK] = {NULL, NULL},
        [MOUNT_OP_SETATTR] = {NULL, NULL},
        [MOUNT_OP_DETACH] = {NULL, NULL},
        [MOUNT_OP_MKNOD] = {NULL, NULL},
};

static void write_strv(FILE *f, char *const *v)
{
        fputc('[', f);
        for (size_t i = 0; v && v[i]; i++) {
                if (i)
                        fputc(',', f);
                json_write_string(f, v[i]);
        }
        fputc(']', f);
}

static void write_process(FILE *f, char *const argv[], char *const envp[], const char *cwd,
                          const struct plan *plan, enum gvisor_identity who)
{
        bool root = who != GVISOR_SANDBOX_USER;
        fprintf(f, "{\"terminal\":false,\"user\":{\"uid\":%u,\"gid\":%u},\"args\":",
                root ? 0 : plan->uid, root ? 0 : plan->gid);
        write_strv(f, argv);
        fputs(",\"env\":", f);
        write_strv(f, envp);
        fputs(",\"cwd\":", f);
        json_write_string(f, cwd ? cwd : "/");
        /* No capabilities, and none to gain. psrun's own kill helper keeps
         * CAP_KILL: the commands it kills run as another user. A session's
         * init is root with none: out of the sandbox user's reach (another
         * uid), and able to do nothing but reap. */
        const char *caps = who == GVISOR_ROOT_KILL ? "[\"CAP_KILL\"]" : "[]";
        fprintf(f,
                ",\"capabilities\":{\"bounding\":%s,\"effective\":%s,\"inheritable\":[],"
                "\"permitted\":%s,\"ambient\":[]},\"noNewPrivileges\":true,\"rlimits\":[",
                caps, caps, caps);
        for (size_t i = 0; i < plan->n_rlimits; i++) {
                const char *name = oci_rlimit_to_string(plan->rlimits[i].resource);
                if (!name)
                        continue;
                fprintf(f, "%s{\"type\":\"%s\",\"soft\":%llu,\"hard\":%llu}", i ? "," : "", name,
                        (unsigned long long) plan->rlimits[i].limit.rlim_cur,
                        (unsigned long long) plan->rlimits[i].limit.rlim_max);
        }
        fputs("]}", f);
}

/* ---- config.json: linux.seccomp ---- */

static void write_action(FILE *f, const char *key, const char *errno_key,
                         const struct seccomp_action *a)
{
        fprintf(f, "\"%s\":\"%s\"", key, seccomp_action_kind_to_string(a->kind));
        if (a->kind == SECCOMP_ACT_ERRNO_)
                fprintf(f, ",\"%s\":%u", errno_key, a->errno_ret);
}

static bool action_eq(const struct seccomp_action *a, const struct seccomp_action *b)
{
        return a->kind == b->kind &&
               (a->kind != SECCOMP_ACT_ERRNO_ || a->errno_ret == b->errno_ret);
}

/*
 * The native backend's seccomp profile (policy/seccomp-default.c, which
 * runtime/plan-policy.c compiles for the native child) as the OCI
 * linux.seccomp runsc applies inside the sandbox (--oci-seccomp): the
 * sentry refuses what the host kernel refuses natively, with the same
 * errno. The unconditional allows are one entry; each conditional rule one
 * of its own (rules of one syscall are OR'ed, as natively); rules that only
 * restate the default action are left out. The bad-architecture action has
 * no OCI form: gVisor runs the native ABI only.
 *
 * Where runsc reads the profile otherwise than libseccomp (runsc 20221219;
 * tests/gvisor/test_policy.c holds each):
 *  - it knows some syscalls by other names, and ignores names it does not
 *    know (they take the default action): each allowed name is also given
 *    in runsc's spelling (gvisor_names);
 *  - every SCMP_ACT_ERRNO is EPERM, whatever its errnoRet. The one rule
 *    that needs another errno, clone3's ENOSYS (libc then falls back to
 *    clone, whose flags are checked), is an allow here: the sentry has no
 *    clone3 and answers ENOSYS itself.
 */
static const struct {
        const char *name, *gvisor;
} gvisor_names[] = {
        {"pselect6", "pselect"},
};

static bool allowed_here(const struct seccomp_rule *r, const struct seccomp_action *allow)
{
        return !r->n_args && (action_eq(&r->action, allow) || streq(r->syscall, "clone3"));
}
static void write_seccomp(FILE *f, const struct seccomp_profile *prof)
{
        fputs("\"seccomp\":{", f);
        write_action(f, "defaultAction", "defaultErrnoRet", &prof->default_action);
        fputs(",\"architectures\":[\"SCMP_ARCH_X86_64\"],\"syscalls\":[{\"names\":[", f);
        const struct seccomp_action allow = {.kind = SECCOMP_ACT_ALLOW_};
        bool first = true;
        for (size_t i = 0; i < prof->n_rules; i++) {
                const struct seccomp_rule *r = &prof->rules[i];
                if (!allowed_here(r, &allow))
                        continue;
                fputs(first ? "" : ",", f);
                first = false;
                json_write_string(f, r->syscall);
                for (size_t k = 0; k < ARRAY_SIZE(gvisor_names); k++)
                        if (streq(r->syscall, gvisor_names[k].name)) {
                                fputc(',', f);
                                json_write_string(f, gvisor_names[k].gvisor);
                        }
        }
        fputs("],\"action\":\"SCMP_ACT_ALLOW\"}", f);
        for (size_t i = 0; i < prof->n_rules; i++) {
                const struct seccomp_rule *r = &prof->rules[i];
                if (allowed_here(r, &allow) ||
                    (!r->n_args && action_eq(&r->action, &prof->default_action)))
                        continue;
                fputs(",{\"names\":[", f);
                json_write_string(f, r->syscall);
                fputs("],", f);
                write_action(f, "action", "errnoRet", &r->action);
                fputs(",\"args\":[", f);
                for (size_t k = 0; k < r->n_args; k++) {
                        const struct seccomp_arg_cmp *a = &r->args[k];
                        fprintf(f,
                                "%s{\"index\":%u,\"value\":%llu,\"valueTwo\":%llu,\"op\":\"%s\"}",
                                k ? "," : "", a->index, (unsigned long long) a->value,
                                (unsigned long long) a->value_two, seccomp_cmp_op_to_string(a->op));
                }
                fputs("]}", f);
        }
        fputs("]}", f);
}

int gvisor_write_config(FILE *f, const struct plan *plan, const struct gvisor_config *c,
                        psrun_error *err)
{
        fputs("{\"ociVersion\":\"1.0.2\",\"process\":", f);
        write_process(f, plan->argv, plan->envp, plan->workdir, plan, c->init);
        fputs(",\"root\":{\"path\":", f);
        json_write_string(f, c->root);
        /* A writable image root is the overlay's upper (a tmpfs of
         * disk_limit bytes, rootfs/overlay.c), which the gofer writes. */
        fputs(plan->rootfs.overlay && plan->rootfs.overlay->writable ? ",\"readonly\":false}"
                                                                     : ",\"readonly\":true}",
              f);
        fputs(",\"hostname\":", f);
        json_write_string(f, plan->hostname ? plan->hostname : POLICY_DEFAULT_HOSTNAME);
        fputs(",\"mounts\":[", f);
        struct config_ctx x = {.f = f, .c = c, .first = true, .err = err};
        for (size_t i = 0; i < plan->rootfs.n_steps; i++) {
                const struct mount_step *s = &plan->rootfs.steps[i];
                if ((unsigned) s->op >= _MOUNT_OP_MAX || runsc_owns(s))
                        continue;
                int r = step_kinds[s->op].oci ? step_kinds[s->op].oci(&x, s) : 0;
                if (r < 0)
                        return r;
        }
        fputs("],\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"ipc\"},"
              "{\"type\":\"uts\"},{\"type\":\"mount\"},{\"type\":\"user\"},{\"type\":\"network\"",
              f);
        if (c->netns_pid > 0)
                fprintf(f, ",\"path\":\"/proc/%d/ns/net\"", (int) c->netns_pid);
        /* The ids of the native backend's user namespace: files the sandbox
         * makes in /workspace belong to the same unnamed host ids. */
        fprintf(f,
                "}],\"uidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":%u}],"
                "\"gidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":%u}],",
                PSRUN_ID_BASE, PSRUN_ID_COUNT, PSRUN_ID_BASE, PSRUN_ID_COUNT);
        write_seccomp(f, seccomp_default_profile());
        fputs("}}\n", f);
        return ferror(f) ? psrun_error_set(err, EIO, "backend: gvisor: write config.json") : 0;
}

static int write_file_with(const char *path, psrun_error *err,
                           int (*fill)(FILE *f, const void *arg, psrun_error *err), const void *arg)
{
        _cleanup_close_ int fd =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return psrun_error_errno(err, errno, "backend: gvisor: create %s", path);
        FILE *f = fdopen(TAKE_FD(fd), "w");
        if (!f)
                return psrun_error_errno(err, errno, "backend: gvisor: %s", path);
        int r = fill(f, arg, err);
        if (fclose(f) != 0 && r >= 0)
                r = psrun_error_errno(err, errno, "backend: gvisor: write %s", path);
        return r;
}

struct bundle_args {
        const struct plan *plan;
        const struct gvisor_config *c;
};

static int fill_config(FILE *f, const void *arg, psrun_error *err)
{
        const struct bundle_args *a = arg;
        return gvisor_write_config(f, a->plan, a->c, err);
}

int gvisor_write_bundle(const struct gvisor_sandbox *gs, const struct plan *plan, pid_t launcher,
                        pid_t netns_pid, enum gvisor_identity init, psrun_error *err)
{
        /* The skeleton's tmpfs is mounted in the launcher's namespace only,
         * and goes with it: nothing of it to remove afterwards. */
        struct skeleton k = {.err = err};
        snprintf(k.root, sizeof(k.root), "/proc/%d/root%s", (int) launcher, gs->rootfs);
        /* An image root has its mount points and /etc files in psrun's top
         * layer of the overlay already (rootfs/overlay.c): no skeleton. */
        for (size_t i = 0; !plan->rootfs.overlay && i < plan->rootfs.n_steps; i++) {
                const struct mount_step *s = &plan->rootfs.steps[i];
                if ((unsigned) s->op >= _MOUNT_OP_MAX || runsc_owns(s))
                        continue;
                int r = step_kinds[s->op].host ? step_kinds[s->op].host(&k, s) : 0;
                if (r < 0)
                        return r;
        }
        struct gvisor_config c = {.root = gs->rootfs,
                                  .workspace = gs->workspace,
                                  .netns_pid = netns_pid,
                                  .init = init};
        struct bundle_args a = {plan, &c};
        char path[sizeof(gs->dir) + 16];
        snprintf(path, sizeof(path), "%s/config.json", gs->dir);
        return write_file_with(path, err, fill_config, &a);
}

struct process_args {
        char *const *argv, *const *envp;
        const char *cwd;
        const struct plan *plan;
        enum gvisor_identity who;
};

static int fill_process(FILE *f, const void *arg, psrun_error *err)
{
        const struct process_args *a = arg;
        write_process(f, a->argv, a->envp, a->cwd, a->plan, a->who);
        fputc('\n', f);
        return ferror(f) ? psrun_error_set(err, EIO, "backend: gvisor: write process.json") : 0;
}

int gvisor_write_process(const char *path, char *const argv[], char *const envp[], const char *cwd,
                         const struct plan *plan, enum gvisor_identity who, psrun_error *err)
{
        struct process_args a = {argv, envp, cwd, plan, who};
        return write_file_with(path, err, fill_process, &a);
}

int gvisor_make_workdir(int ws_fd, const char *workdir, const struct plan *plan, psrun_error *err)
{
        if (!workdir || !below(workdir, WORKSPACE))
                return 0;
        _cleanup_close_ int dir = fcntl(ws_fd, F_DUPFD_CLOEXEC, 3);
        char comp[NAME_MAX + 1];
        for (const char *p = workdir + strlen(WORKSPACE) + 1; dir >= 0 && *p;) {
                size_t len = strcspn(p, "/");
                if (len == 0 || len > NAME_MAX)
                        return psrun_error_set(err, EINVAL, "workdir: %s: bad component", workdir);
                memcpy(comp, p, len);
                comp[len] = '\0';
                if (mkdirat(dir, comp, 0755) == 0) {
                        if (fchownat(dir, comp, PSRUN_ID_BASE + plan->uid,
                                     PSRUN_ID_BASE + plan->gid, AT_SYMLINK_NOFOLLOW) < 0)
                                return psrun_error_errno(err, errno, "workdir: chown %s", comp);
                } else if (errno != EEXIST) {
                        return psrun_error_errno(err, errno, "workdir: mkdir %s", comp);
                }
                int next = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return psrun_error_errno(err, errno, "workdir: %s", workdir);
                close(dir);
                dir = next;
                p += len;
                p += strspn(p, "/");
        }
        return dir < 0 ? psrun_error_errno(err, errno, "workdir: %s", workdir) : 0;
}

/* ---- runsc's errors ---- */

/* The JSON string at p (after its opening quote) into out, one line. */
static const char *read_json_string(const char *p, char *out, size_t size)
{
        size_t n = 0;
        while (*p && *p != '"') {
                char ch = *p++;
                if (ch == '\\' && *p) {
                        char e = *p++;
                        ch = e == 'n' || e == 't' || e == 'r' ? ' ' : e;
                        if (e == 'u') {
                                unsigned v = 0;
                                for (int i = 0; i < 4 && *p; i++, p++)
                                        v = v * 16 + (unsigned) (*p >= 'a'   ? *p - 'a' + 10
                                                                 : *p >= 'A' ? *p - 'A' + 10
                                                                             : *p - '0');
                                ch = v >= 0x20 && v < 0x7f ? (char) v : '?';
                        }
                }
                if ((unsigned char) ch < 0x20)
                        ch = ' ';
                if (n + 1 < size)
                        out[n++] = ch;
        }
        while (n > 0 && out[n - 1] == ' ')
                n--;
        out[n] = '\0';
        return *p ? p + 1 : p;
}

int gvisor_read_error(const char *log_path, char *msg, size_t size)
{
        _cleanup_close_ int fd = open(log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -ENOENT;
        /* The end of the log is what matters; runsc writes little without
         * --debug. */
        off_t len = lseek(fd, 0, SEEK_END);
        if (len > 65536)
                (void) lseek(fd, len - 65536, SEEK_SET);
        else
                (void) lseek(fd, 0, SEEK_SET);
        char buf[65537];
        if (read_into(fd, buf, sizeof(buf)) <= 0)
                return -ENOENT;
        bool found = false;
        char cur[512];
        for (const char *p = strstr(buf, "{\"msg\":\""); p; p = strstr(p, "{\"msg\":\"")) {
                p = read_json_string(p + 8, cur, sizeof(cur));
                if (strncmp(p, ",\"level\":\"error\"", 16) == 0) {
                        snprintf(msg, size, "%s", cur);
                        found = true;
                }
        }
        return found ? 0 : -ENOENT;
}

int gvisor_error_exit_code(const char *msg)
{
        if (strstr(msg, "no such file or directory") &&
            (strstr(msg, "failed to load") || strstr(msg, "executable")))
                return 127;
        if (strstr(msg, "permission denied") &&
            (strstr(msg, "failed to load") || strstr(msg, "executable")))
                return 126;
        return 125;
}
