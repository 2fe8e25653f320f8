/* SPDX-License-Identifier: MIT */
/*
 * Watching what the layers refuse (runtime/violations-watch.h).
 *
 * seccomp: the command's filter sends its refusals to a listener, which
 * this process answers with EPERM, as the filter did on its own; and the
 * command's installs of a filter of its own, which continue and are
 * listed (its refusals outrank psrun's notifications: they are not).
 * Landlock: the command's domain logs its denials (ABI 7 flags) to the
 * kernel's audit log; a record names the domain, and the domain's first
 * record names its creator, the command: that is how a record is known to
 * be this command's and not another sandbox's or the host's.
 * AppArmor: its denials name the refused process, which must be in the
 * command's cgroup.
 */
#include "runtime/violations-watch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "policy/audit.h"
#include "policy/seccomp-notify.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/plan.h"

/* How long the result waits for records still on their way after the
 * command ended: the domain's last record follows the release of its
 * processes' credentials (an RCU grace period and a work item later); the
 * others are in the kernel's queue already and only need the audit
 * thread to run. */
#define VWATCH_DOMAIN_WAIT_MS 500
#define VWATCH_GRACE_MS       3

/* ---- processes ---- */

/* The pid of host process `pid` in the innermost pid namespace it is in
 * (the sandbox's): the last field of NStgid. 0 when it is gone. */
static pid_t sandbox_pid(pid_t pid)
{
        char path[64], buf[2048];
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        const char *line = strstr(buf, "\nNStgid:");
        if (!line)
                return 0;
        line += strlen("\nNStgid:");
        long last = 0;
        for (char *end; *line && *line != '\n'; line = end) {
                long v = strtol(line, &end, 10);
                if (end == line)
                        break;
                last = v;
        }
        return (pid_t) last;
}

/* Whether host process `pid` is in one of `lines` ("0::/a/b", "pids:/a/b")
 * or below it, per /proc/PID/cgroup. */
static bool pid_in_cgroups(pid_t pid, char *const *lines)
{
        if (!lines)
                return false;
        char path[64], buf[4096];
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        for (char *line = buf, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                /* "ID:controllers:path": compare without the hierarchy id,
                 * as cgroup_paths() spells it ("0::" kept for cgroup2). */
                char *rest = strchr(line, ':');
                if (!rest)
                        continue;
                const char *cmp =
                        line[0] == '0' && rest == line + 1 && rest[1] == ':' ? line : rest + 1;
                for (char *const *l = lines; *l; l++) {
                        size_t k = strlen(*l);
                        if (strncmp(cmp, *l, k) == 0 && (cmp[k] == '\0' || cmp[k] == '/'))
                                return true;
                }
        }
        return false;
}

/* ---- preparing ---- */

static void set_why(struct vwatch *w, enum violation_layer l, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void set_why(struct vwatch *w, enum violation_layer l, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->why[l], sizeof(w->why[l]), fmt, ap);
        va_end(ap);
}

/* Whether this process is in the host's network namespace, that of the
 * kernel's threads (kthreadd is pid 2 of the host's pid namespace, where
 * psrun must be for the audit socket's queries anyway; pid 1's namespaces
 * may be closed to it). */
static bool in_hosts_netns(void)
{
        char comm[32] = "";
        _cleanup_close_ int fd = open("/proc/2/comm", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : -1;
        const char *ref =
                n > 0 && strncmp(comm, "kthreadd\n", 9) == 0 ? "/proc/2/ns/net" : "/proc/1/ns/net";
        struct stat self, host;
        if (stat("/proc/self/ns/net", &self) < 0 || stat(ref, &host) < 0)
                return false;
        return self.st_dev == host.st_dev && self.st_ino == host.st_ino;
}

static void prepare_audit(struct vwatch *w, const struct plan *plan)
{
        bool landlock = plan->landlock.ruleset_fd >= 0, apparmor = plan->apparmor.active;
        if (!landlock && !apparmor)
                return;
        if (landlock && plan->landlock.abi < LANDLOCK_LOG_ABI) {
                set_why(w, VIOLATION_LANDLOCK,
                        "Landlock ABI %d logs no denials (ABI %d, Linux 6.15, does)",
                        plan->landlock.abi, LANDLOCK_LOG_ABI);
                landlock = false;
        }
        /* The kernel sends its records to listeners in the host's network
         * namespace only: elsewhere the socket would stay silent. */
        if (!in_hosts_netns()) {
                static const char why[] = "psrun runs outside the host's network namespace, and "
                                          "the kernel sends its audit records only there";
                if (landlock)
                        set_why(w, VIOLATION_LANDLOCK, "%s", why);
                if (apparmor)
                        set_why(w, VIOLATION_APPARMOR, "%s", why);
                return;
        }
        struct audit_state st = {0};
        psrun_error err = {0};
        if ((landlock || apparmor) && audit_query(&st, &err) < 0) {
                if (landlock)
                        set_why(w, VIOLATION_LANDLOCK, "%s", err.msg);
                if (apparmor)
                        set_why(w, VIOLATION_APPARMOR, "%s", err.msg);
                return;
        }
        /* With a panicking failure mode, records a sandbox can make at will
         * are a way to stop the host: not psrun's to hand out. */
        if (landlock && st.failure == AUDIT_FAILURE_PANIC) {
                set_why(w, VIOLATION_LANDLOCK,
                        "the host's audit failure mode is panic: psrun does not make a sandbox "
                        "a source of audit records there");
                landlock = false;
        }
        if (landlock && !st.enabled) {
                set_why(w, VIOLATION_LANDLOCK,
                        "kernel audit is off, and Landlock logs nothing without it (auditctl -e 1 "
                        "or the boot parameter audit=1 turn it on, for the whole host)");
                landlock = false;
        }
        if (!landlock && !apparmor)
                return;
        if (audit_reader_open(&w->audit_fd, &err) < 0) {
                if (landlock)
                        set_why(w, VIOLATION_LANDLOCK, "%s", err.msg);
                if (apparmor)
                        set_why(w, VIOLATION_APPARMOR, "%s", err.msg);
                return;
        }
        w->landlock_audit = landlock;
        if (apparmor) {
                /* The plan's "exec <profile>": the name the records give. */
                w->apparmor_audit = true;
                snprintf(w->apparmor_profile, sizeof(w->apparmor_profile), "%s",
                         plan->apparmor.attr_value + strlen("exec "));
        }
}

void vwatch_prepare(struct vwatch *w, const struct plan *plan)
{
        memset(w, 0, sizeof(*w));
        w->audit_fd = -1;
        w->mode = (enum policy_violations) plan->violations;
        if (w->mode == POLICY_VIOLATIONS_OFF)
                return;
        w->host_uid = PSRUN_ID_BASE + plan->uid;
        /* The planner made no listener's program of a profile that refuses
         * nothing with EPERM (plan-policy.c). */
        if (plan->seccomp.len && !plan->seccomp_notify.len)
                set_why(w, VIOLATION_SECCOMP, "the profile refuses nothing with EPERM");
        else if (plan->seccomp_notify.len)
                w->plain = &plan->seccomp;
        prepare_audit(w, plan);
}

void vwatch_prepare_elsewhere(struct vwatch *w, const struct plan *plan, const char *why)
{
        memset(w, 0, sizeof(*w));
        w->audit_fd = -1;
        w->mode = (enum policy_violations) plan->violations;
        if (w->mode == POLICY_VIOLATIONS_OFF)
                return;
        static const enum violation_layer layers[] = {VIOLATION_SECCOMP, VIOLATION_LANDLOCK,
                                                      VIOLATION_APPARMOR};
        for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
                set_why(w, layers[i], "%s", why);
}

void vwatch_close(struct vwatch *w)
{
        w->audit_fd = safe_close(w->audit_fd);
}

/* ---- targets ---- */

void vwatch_target_init(struct vwatch *w, struct vwatch_target *t, struct violations *out,
                        struct cgroup *cg)
{
        memset(t, 0, sizeof(*t));
        t->out = out;
        t->listener = -1;
        t->workspace_fd = -1;
        violations_init(out, w->mode);
        if (w->apparmor_audit && cg)
                (void) cgroup_paths(cg, &t->cgroups, NULL);
}

void vwatch_target_start(struct vwatch *w, struct vwatch_target *t, pid_t pid, int listener,
                         int err)
{
        if (t->started) {
                safe_close(listener);
                return;
        }
        t->started = true;
        t->creator = pid;
        t->listener = listener;
        if (err == EBUSY)
                snprintf(t->out->unavailable[VIOLATION_SECCOMP],
                         sizeof(t->out->unavailable[VIOLATION_SECCOMP]),
                         "psrun runs under a seccomp filter with a listener of its own, and the "
                         "kernel allows one per process");
        (void) w;
}

static bool throttled(struct vwatch *w, uint64_t now_ms)
{
        if (now_ms >= w->window_ms + VWATCH_WINDOW_MS) {
                w->window_ms = now_ms;
                w->window_cpu_ns = 0;
                w->window_answers = 0;
        }
        return w->window_answers >= VWATCH_WINDOW_ANSWERS ||
               w->window_cpu_ns >= VWATCH_WINDOW_CPU_NS;
}

int vwatch_target_fd(struct vwatch *w, struct vwatch_target *t, uint64_t now_ms)
{
        if (t->listener < 0)
                return -1;
        return throttled(w, now_ms) ? -1 : t->listener;
}

int vwatch_poll_timeout(struct vwatch *w, uint64_t now_ms)
{
        if (w->mode == POLICY_VIOLATIONS_OFF || !throttled(w, now_ms))
                return -1;
        uint64_t end = w->window_ms + VWATCH_WINDOW_MS;
        return end > now_ms ? (int) (end - now_ms) : 0;
}

static uint64_t cpu_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

/* A call the plan's program allows, which its listener's program sends
 * here to be seen: a filter of the command's own (policy/seccomp-notify.h).
 * It continues, as without the report, and the filter is counted. */
static void continue_install(struct vwatch *w, struct vwatch_target *t,
                             const struct seccomp_refusal *r)
{
        /* Installs are few: the pid is read for each, while the call
         * waits (so its tid was not reused). */
        pid_t pid = sandbox_pid(r->tid);
        if (!seccomp_notify_pending(t->listener, r->id))
                pid = 0;
        int e = seccomp_notify_continue(t->listener, r->id);
        if (e == -EINVAL) {
                /* Before Linux 5.5 nothing can let the call run: it is
                 * refused, and listed as every refusal is. */
                char what[VIOLATION_WHAT_MAX];
                seccomp_refusal_describe(r, w->mode == POLICY_VIOLATIONS_FULL, what, sizeof(what));
                violations_add(t->out, VIOLATION_SECCOMP, what, pid, 1);
                (void) seccomp_notify_answer(t->listener, r->id, EPERM);
                return;
        }
        if (e == 0 && seccomp_refusal_installs_filter(r))
                violations_add(t->out, VIOLATION_SECCOMP, VIOLATION_OWN_FILTER, pid, 1);
}

/* One notification: read, named, counted, answered. false: stop (none
 * left, or the listener is gone). */
static bool answer_one(struct vwatch *w, struct vwatch_target *t, bool first)
{
        bool full = w->mode == POLICY_VIOLATIONS_FULL;
        struct pollfd p = {t->listener, POLLIN, 0};
        if (!first && (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))) {
                if (p.revents & (POLLHUP | POLLERR))
                        t->listener = safe_close(t->listener);
                return false;
        }
        struct seccomp_refusal r;
        int e = seccomp_notify_recv(t->listener, &r);
        if (e == -ENOENT || e == -EINTR)
                return true; /* its thread died meanwhile */
        if (e < 0) {
                /* The filter is gone (every process of it exited). */
                t->listener = safe_close(t->listener);
                return false;
        }
        w->window_answers++;
        if (w->plain && seccomp_program_allows(w->plain, &r)) {
                continue_install(w, t, &r);
                return true;
        }
        char what[VIOLATION_WHAT_MAX];
        seccomp_refusal_describe(&r, full, what, sizeof(what));
        /* A pid is read while the thread waits for the answer: that the call
         * is still pending afterwards proves its tid was not reused
         * meanwhile. summary reads it for a new entry only. */
        pid_t pid = full ? sandbox_pid(r.tid) : 0;
        if (full && !seccomp_notify_pending(t->listener, r.id))
                pid = 0;
        struct violation *v = violations_add(t->out, VIOLATION_SECCOMP, what, pid, 1);
        if (v && !v->pid && !full) {
                pid = sandbox_pid(r.tid);
                if (seccomp_notify_pending(t->listener, r.id))
                        v->pid = pid;
        }
        (void) seccomp_notify_answer(t->listener, r.id, EPERM);
        return true;
}

void vwatch_on_listener(struct vwatch *w, struct vwatch_target *t, short revents, uint64_t now_ms)
{
        if (t->listener < 0)
                return;
        if (!(revents & POLLIN)) {
                /* POLLHUP: no process uses the filter any more. */
                if (revents & (POLLHUP | POLLERR | POLLNVAL))
                        t->listener = safe_close(t->listener);
                return;
        }
        /* Everything pending, up to the window's budget, its CPU time read
         * every few answers. The caller's poll saw one: the first receive
         * cannot block (the kernel's receive ignores O_NONBLOCK, and blocks
         * while none is pending); the others are polled for first. */
        uint64_t cpu0 = cpu_ns();
        /* What the loop spent since the last answers (waking up, polling)
         * is the listeners' too: the supervisor has little else to do. */
        if (w->cpu_mark && cpu0 > w->cpu_mark && now_ms < w->window_ms + VWATCH_WINDOW_MS)
                w->window_cpu_ns += cpu0 - w->cpu_mark;
        for (unsigned k = 0; vwatch_target_fd(w, t, now_ms) >= 0; k++) {
                bool more = answer_one(w, t, k == 0);
                if (!more || k % 8 == 7) {
                        uint64_t c = cpu_ns();
                        w->window_cpu_ns += c - cpu0;
                        cpu0 = c;
                }
                if (!more)
                        break;
        }
        uint64_t end = cpu_ns();
        w->window_cpu_ns += end - cpu0;
        w->cpu_mark = end;
}

/* ---- audit records ---- */

struct audit_ctx {
        struct vwatch *w;
        struct vwatch_target *const *targets;
        size_t n;
};

static bool is_foreign(const struct vwatch *w, uint64_t domain)
{
        for (size_t i = 0; i < VWATCH_FOREIGN; i++)
                if (w->foreign[i] == domain)
                        return true;
        return false;
}

static struct vwatch_target *target_of_domain(const struct audit_ctx *c, uint64_t domain)
{
        for (size_t i = 0; i < c->n; i++)
                if (c->targets[i] && c->targets[i]->domain == domain)
                        return c->targets[i];
        return NULL;
}

/* "write_file /proc/2/oom_score_adj", "signal pid 1": Landlock's blocker
 * names without their "fs."/"scope." prefix, and the object. */
static void landlock_what(const struct audit_record *rec, char *buf, size_t len)
{
        char blockers[sizeof(rec->blockers)];
        size_t o = 0;
        for (const char *p = rec->blockers; *p && o + 1 < sizeof(blockers);) {
                const char *dot = strchr(p, '.'), *comma = strchr(p, ',');
                if (dot && (!comma || dot < comma))
                        p = dot + 1;
                while (*p && *p != ',' && o + 1 < sizeof(blockers))
                        blockers[o++] = *p++;
                if (*p == ',') {
                        blockers[o++] = ',';
                        p++;
                }
        }
        blockers[o] = '\0';
        if (rec->object[0]) {
                snprintf(buf, len, "%s %s", blockers, rec->object);
        } else if (rec->object_pid > 0) {
                pid_t p = sandbox_pid(rec->object_pid);
                if (p > 0)
                        snprintf(buf, len, "%s pid %d", blockers, (int) p);
                else
                        snprintf(buf, len, "%s", blockers);
        } else {
                snprintf(buf, len, "%s", blockers);
        }
}

static void count_landlock(struct vwatch_target *t, const char *what)
{
        t->logged++;
        violations_add(t->out, VIOLATION_LANDLOCK, what, 0, 1);
}

static void on_landlock_access(struct audit_ctx *c, const struct audit_record *rec)
{
        struct vwatch *w = c->w;
        if (is_foreign(w, rec->domain))
                return;
        char what[VIOLATION_WHAT_MAX];
        landlock_what(rec, what, sizeof(what));
        struct vwatch_target *t = target_of_domain(c, rec->domain);
        if (t) {
                count_landlock(t, what);
                return;
        }
        /* The domain's first record comes before the one naming its
         * creator: keep it until that one says whose it is. */
        if (w->n_pending == VWATCH_PENDING) {
                memmove(&w->pending[0], &w->pending[1],
                        (VWATCH_PENDING - 1) * sizeof(w->pending[0]));
                w->n_pending--;
        }
        struct vwatch_pending *p = &w->pending[w->n_pending++];
        p->domain = rec->domain;
        memcpy(p->what, what, sizeof(p->what));
}

static void on_landlock_domain(struct audit_ctx *c, const struct audit_record *rec)
{
        struct vwatch *w = c->w;
        struct vwatch_target *t = target_of_domain(c, rec->domain);
        if (rec->deallocated) {
                if (!t)
                        return;
                t->domain_gone = true;
                /* The kernel counts every denial; what its records did not
                 * bring (lost on the way) is counted as unlisted. */
                if (rec->denials > t->logged && violations_on(t->out))
                        t->out->more += rec->denials - t->logged;
                return;
        }
        if (!t && !is_foreign(w, rec->domain)) {
                /* Ours only if its creator is one of our commands, running
                 * as our sandbox's user: a creator's pid is held by its
                 * domain, and psrun's commands do not outlive their
                 * sandboxes, so no other domain can name it meanwhile. */
                for (size_t i = 0; i < c->n; i++) {
                        struct vwatch_target *x = c->targets[i];
                        if (x && x->creator == rec->pid && !x->domain && rec->uid == w->host_uid) {
                                x->domain = rec->domain;
                                t = x;
                                break;
                        }
                }
                if (!t) {
                        w->foreign[w->next_foreign] = rec->domain;
                        w->next_foreign = (w->next_foreign + 1) % VWATCH_FOREIGN;
                }
        }
        size_t keep = 0;
        for (size_t i = 0; i < w->n_pending; i++) {
                if (w->pending[i].domain != rec->domain)
                        w->pending[keep++] = w->pending[i];
                else if (t)
                        count_landlock(t, w->pending[i].what);
        }
        w->n_pending = keep;
}

static void on_apparmor(struct audit_ctx *c, const struct audit_record *rec)
{
        struct vwatch *w = c->w;
        if (strcmp(rec->profile, w->apparmor_profile) != 0)
                return;
        for (size_t i = 0; i < c->n; i++) {
                struct vwatch_target *t = c->targets[i];
                if (!t || !pid_in_cgroups(rec->pid, t->cgroups))
                        continue;
                char what[VIOLATION_WHAT_MAX];
                bool full = w->mode == POLICY_VIOLATIONS_FULL;
                if (rec->object[0] && full && rec->denied_mask[0])
                        snprintf(what, sizeof(what), "%s %s (%s)", rec->operation, rec->object,
                                 rec->denied_mask);
                else if (rec->object[0])
                        snprintf(what, sizeof(what), "%s %s", rec->operation, rec->object);
                else
                        snprintf(what, sizeof(what), "%s", rec->operation);
                pid_t pid = sandbox_pid(rec->pid);
                struct violation *v =
                        violations_add(t->out, VIOLATION_APPARMOR, what, full ? pid : 0, 1);
                if (v && !v->pid)
                        v->pid = pid;
                return;
        }
}

static void on_record(void *userdata, const struct audit_record *rec)
{
        struct audit_ctx *c = userdata;
        if (rec->kind == AUDIT_KIND_LANDLOCK_ACCESS && c->w->landlock_audit)
                on_landlock_access(c, rec);
        else if (rec->kind == AUDIT_KIND_LANDLOCK_DOMAIN && c->w->landlock_audit)
                on_landlock_domain(c, rec);
        else if (rec->kind == AUDIT_KIND_APPARMOR && c->w->apparmor_audit)
                on_apparmor(c, rec);
}

void vwatch_on_audit(struct vwatch *w, struct vwatch_target *const *targets, size_t n)
{
        if (w->audit_fd < 0)
                return;
        struct audit_ctx c = {w, targets, n};
        if (audit_read(w->audit_fd, on_record, &c) == -ENOBUFS)
                w->lost = true;
}

void vwatch_target_finish(struct vwatch *w, struct vwatch_target *t,
                          struct vwatch_target *const *others, size_t n_others)
{
        /* The workspace is the caller's to read before this. */
        t->listener = safe_close(t->listener);
        if (w->audit_fd >= 0 && t->started) {
                /* Records of the command's last moments may still be in the
                 * kernel's queue: a short grace, and up to the domain's last
                 * record once the domain is known to have refused. */
                uint64_t start = monotonic_ms();
                for (;;) {
                        vwatch_on_audit(w, others, n_others);
                        uint64_t waited = monotonic_ms() - start;
                        bool wait_domain = t->domain && !t->domain_gone;
                        uint64_t limit = wait_domain ? VWATCH_DOMAIN_WAIT_MS : VWATCH_GRACE_MS;
                        if (waited >= limit)
                                break;
                        struct pollfd p = {w->audit_fd, POLLIN, 0};
                        if (poll(&p, 1, (int) (limit - waited)) <= 0 && !wait_domain)
                                break;
                }
        }
        for (int l = 0; l < _VIOLATION_LAYER_MAX; l++)
                if (w->why[l][0] && !t->out->unavailable[l][0])
                        memcpy(t->out->unavailable[l], w->why[l], sizeof(w->why[l]));
        if (w->lost && w->landlock_audit && !t->out->unavailable[VIOLATION_LANDLOCK][0])
                snprintf(t->out->unavailable[VIOLATION_LANDLOCK],
                         sizeof(t->out->unavailable[VIOLATION_LANDLOCK]),
                         "some of the host's audit records were lost before psrun read them: "
                         "the list may be incomplete");
        vwatch_target_close(t);
}

void vwatch_target_close(struct vwatch_target *t)
{
        if (!t)
                return;
        t->listener = safe_close(t->listener);
        t->workspace_fd = safe_close(t->workspace_fd);
        strv_free(t->cgroups);
        t->cgroups = NULL;
}

void vwatch_target_workspace(struct vwatch_target *t, int fd)
{
        struct statfs sf;
        if (fd < 0)
                return;
        if (t->workspace_fd >= 0 || fstatfs(fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC) {
                close(fd);
                return;
        }
        t->workspace_fd = fd;
}

bool vwatch_workspace_full(int fd)
{
        struct statfs sf;
        return fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_bavail == 0;
}
