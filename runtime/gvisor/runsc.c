/* SPDX-License-Identifier: MIT */
/*
 * Which runsc and which gVisor platform (docs/security.md, "The gVisor
 * backend").
 *
 * The platform is how the sentry, gVisor's kernel, gets the sandboxed
 * process's syscalls and page faults. `auto` takes the first of these that
 * this runsc offers and that really starts a sandbox here:
 *
 *   systrap  gVisor's default since 2023: seccomp traps in the sandboxed
 *            process, no ptrace stops and no hardware needed
 *   kvm      the sentry as a guest of /dev/kvm: the fastest syscall path on
 *            bare metal, but in a VM it needs nested virtualisation, which
 *            can fail only once a guest runs (on this project's CI host the
 *            sentry then spins), so it is tried, never assumed
 *   ptrace   works wherever ptrace does; every syscall is two ptrace stops,
 *            the slowest of the three
 *
 * Trying means starting `true` in a sandbox under the platform, bounded by
 * PROBE_TIMEOUT_MS. Verdicts are cached in GVISOR_STATE_DIR/platforms,
 * keyed by the runsc binary (path, inode, size, mtime) and the boot (the
 * kernel's boot_id): a new runsc or a reboot probes again. A platform the
 * policy names is probed the same way: a platform that cannot start a
 * sandbox is an error at start, never a run that hangs until its timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/names.h"
#include "runtime/gvisor/gvisor.h"

#define PROBE_TIMEOUT_MS 3000
#define CACHE_PATH       GVISOR_STATE_DIR "/platforms"
#define CACHE_MAX        4096

static bool kvm_device_opens(char *why, size_t size)
{
        int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                snprintf(why, size, "/dev/kvm: %s", strerror(errno));
                return false;
        }
        close(fd);
        return true;
}

/*
 * In the order `auto` tries them. The pids numbers: psrun's pids limit is a
 * host cgroup's, which counts the host tasks of runsc, its gofer and the
 * sentry (about 40 with nothing running, measured with ptrace) and those
 * the platform adds per sandboxed process (about 11 with ptrace: the
 * tracee the sentry runs the process in, and the sentry's threads that
 * trace it). The limit psrun sets is
 * base + per_process * pids_limit, so that pids_limit processes fit and a
 * fork bomb still ends at the limit, with reason "pids". systrap and kvm
 * could not be measured on this project's host; they get ptrace's numbers,
 * which are larger than their own needs.
 */
static const struct platform {
        enum policy_gvisor_platform key;
        const char *name;
        bool (*host_has)(char *why, size_t size); /* cheap check before a probe */
        unsigned pids_base, pids_per_process;
} platforms[] = {
        {POLICY_GVISOR_PLATFORM_SYSTRAP, "systrap", NULL, 64, 16},
        {POLICY_GVISOR_PLATFORM_KVM, "kvm", kvm_device_opens, 64, 16},
        {POLICY_GVISOR_PLATFORM_PTRACE, "ptrace", NULL, 64, 16},
};

/* ---- finding runsc ---- */

static bool executable(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int find_in_path(const char *name, char *out, size_t size)
{
        const char *path = getenv("PATH");
        if (!path || !*path)
                path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        while (*path) {
                size_t len = strcspn(path, ":");
                if (len > 0 &&
                    (size_t) snprintf(out, size, "%.*s/%s", (int) len, path, name) < size &&
                    out[0] == '/' && executable(out))
                        return 0;
                path += len;
                if (*path == ':')
                        path++;
        }
        return -ENOENT;
}

static int find_runsc(char *out, size_t size, psrun_error *err)
{
        const char *given = getenv(GVISOR_RUNSC_ENV);
        if (given && *given) {
                if (!strchr(given, '/')) {
                        if (find_in_path(given, out, size) < 0)
                                return psrun_error_set(err, ENOENT,
                                                       "backend: gvisor: " GVISOR_RUNSC_ENV
                                                       "=%.200s: not found in PATH",
                                                       given);
                        return 0;
                }
                if (given[0] != '/' || !executable(given))
                        return psrun_error_set(err, ENOENT,
                                               "backend: gvisor: " GVISOR_RUNSC_ENV "=%.200s: %s",
                                               given,
                                               given[0] != '/'            ? "not an absolute path"
                                               : access(given, F_OK) == 0 ? "not an executable file"
                                                                          : "no such file");
                snprintf(out, size, "%s", given);
                return 0;
        }
        if (find_in_path("runsc", out, size) < 0)
                return psrun_error_set(
                        err, ENOENT,
                        "backend: gvisor: runsc not found in PATH "
                        "(scripts/install-deps.sh installs it, or set " GVISOR_RUNSC_ENV ")");
        return 0;
}

/* ---- the cache ---- */

/* "runsc PATH DEV:INO SIZE MTIME BOOT_ID": what the verdicts hold for. */
static int cache_key(const char *runsc, char *key, size_t size)
{
        struct stat st;
        if (stat(runsc, &st) < 0)
                return -errno;
        char boot[64] = "";
        _cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && read_into(fd, boot, sizeof(boot)) > 0)
                boot[strcspn(boot, "\n")] = '\0';
        snprintf(key, size, "runsc %s %llu:%llu %lld %lld.%09ld %s", runsc,
                 (unsigned long long) st.st_dev, (unsigned long long) st.st_ino,
                 (long long) st.st_size, (long long) st.st_mtim.tv_sec, st.st_mtim.tv_nsec, boot);
        return 0;
}

/*
 * The cache holds one block per runsc binary: its key line, its verdict
 * lines, a blank line. A block whose key names the same path with another
 * binary or boot is stale and replaced.
 */

/* The block of key (its lines after the key) into body; "" when absent. */
static void cache_read(const char *key, char *body, size_t size)
{
        body[0] = '\0';
        _cleanup_close_ int fd = open(CACHE_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char buf[CACHE_MAX];
        if (fd < 0 || read_into(fd, buf, sizeof(buf)) <= 0)
                return;
        size_t klen = strlen(key);
        for (const char *p = buf; *p;) {
                const char *end = strstr(p, "\n\n");
                size_t len = end ? (size_t) (end - p) + 1 : strlen(p);
                if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '\n') {
                        snprintf(body, size, "%.*s", (int) (len - klen - 1), p + klen + 1);
                        return;
                }
                p += len + (end ? 1 : 0);
        }
}

/* "runsc PATH " of a key: what a block is for. */
static size_t key_path_len(const char *key)
{
        const char *sp = strchr(key + 6, ' ');
        return sp ? (size_t) (sp - key) + 1 : strlen(key);
}

static void cache_write(const char *key, const char *body)
{
        char tmp[sizeof(CACHE_PATH) + 24];
        /* Per thread: two runs of one embedder may write at once. */
        snprintf(tmp, sizeof(tmp), "%s.%d", CACHE_PATH, (int) gettid());
        if (mkdir(GVISOR_STATE_DIR, 0711) < 0 && errno != EEXIST)
                return;
        char old[CACHE_MAX] = "", buf[CACHE_MAX];
        _cleanup_close_ int in = open(CACHE_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (in >= 0)
                (void) read_into(in, old, sizeof(old));
        int n = snprintf(buf, sizeof(buf), "%s\n%s\n", key, body);
        /* The other binaries' blocks, while they fit. */
        size_t plen = key_path_len(key);
        for (const char *p = old; *p && n > 0 && (size_t) n < sizeof(buf);) {
                const char *end = strstr(p, "\n\n");
                size_t len = end ? (size_t) (end - p) + 2 : strlen(p);
                if (strncmp(p, key, plen) != 0 && strncmp(p, "runsc ", 6) == 0 &&
                    (size_t) n + len < sizeof(buf)) {
                        memcpy(buf + n, p, len);
                        n += (int) len;
                }
                p += len;
        }
        _cleanup_close_ int fd =
                open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return;
        if (n > 0 && (size_t) n < sizeof(buf) && write_all(fd, buf, (size_t) n) == 0 &&
            rename(tmp, CACHE_PATH) == 0)
                return;
        (void) unlink(tmp);
}

/* A line "WORD rest" of body, rest copied to out; false when absent. */
static bool cache_line(const char *body, const char *word, char *out, size_t size)
{
        size_t wlen = strlen(word);
        for (const char *p = body; *p;) {
                size_t len = strcspn(p, "\n");
                if (len > wlen && strncmp(p, word, wlen) == 0 && p[wlen] == ' ') {
                        snprintf(out, size, "%.*s", (int) (len - wlen - 1), p + wlen + 1);
                        return true;
                }
                p += len;
                if (*p)
                        p++;
        }
        return false;
}

static void cache_add(char *body, size_t size, const char *word, const char *rest)
{
        size_t used = strlen(body);
        snprintf(body + used, size - used, "%s %s\n", word, rest);
}

/* ---- platforms ---- */

/* The platforms this runsc offers: `runsc help platforms`, one a line. */
static int offered_platforms(const char *runsc, char *out, size_t size, psrun_error *err)
{
        char *argv[] = {(char *) runsc, "help", "platforms", NULL};
        char buf[512];
        int r = gvisor_capture(argv, buf, sizeof(buf), 10000, err);
        if (r < 0)
                return psrun_error_prefix(err, "backend: gvisor: %s help platforms", runsc);
        out[0] = '\0';
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                line += strspn(line, " \t");
                line[strcspn(line, " \t")] = '\0';
                if (*line && strlen(out) + strlen(line) + 2 < size) {
                        strcat(out, out[0] ? " " : "");
                        strcat(out, line);
                }
        }
        if (!out[0])
                return psrun_error_set(err, EPROTO,
                                       "backend: gvisor: `%s help platforms` names no platform",
                                       runsc);
        return 0;
}

static bool word_in(const char *words, const char *word)
{
        size_t len = strlen(word);
        for (const char *p = words; *p;) {
                size_t n = strcspn(p, " ");
                if (n == len && strncmp(p, word, len) == 0)
                        return true;
                p += n;
                p += strspn(p, " ");
        }
        return false;
}

/* Whether platform p works here: cached, or checked and probed now (and
 * recorded in body). why says why not. */
static bool platform_works(const char *runsc, const struct platform *p, char *body, size_t size,
                           bool *changed, char *why, size_t why_size)
{
        char verdict[256];
        if (cache_line(body, p->name, verdict, sizeof(verdict))) {
                if (strncmp(verdict, "ok", 2) == 0)
                        return true;
                snprintf(why, why_size, "%s", strncmp(verdict, "bad ", 4) == 0 ? verdict + 4 : "");
                return false;
        }
        bool ok = true;
        if (p->host_has && !p->host_has(why, why_size)) {
                ok = false;
        } else {
                psrun_error perr = {0};
                if (gvisor_probe(runsc, p->name, PROBE_TIMEOUT_MS, &perr) < 0) {
                        snprintf(why, why_size, "%s", perr.msg);
                        ok = false;
                }
        }
        char rest[256];
        snprintf(rest, sizeof(rest), ok ? "ok" : "bad %.240s", why);
        cache_add(body, size, p->name, rest);
        *changed = true;
        return ok;
}

static const struct platform *platform_by_key(enum policy_gvisor_platform key)
{
        for (size_t i = 0; i < ARRAY_SIZE(platforms); i++)
                if (platforms[i].key == key)
                        return &platforms[i];
        return NULL;
}

int gvisor_runtime_resolve(const struct policy *pol, struct gvisor_runtime *rt, psrun_error *err)
{
        memset(rt, 0, sizeof(*rt));
        int r = find_runsc(rt->runsc, sizeof(rt->runsc), err);
        if (r < 0)
                return r;
        char key[PATH_MAX + 160], body[CACHE_MAX], offers[256];
        r = cache_key(rt->runsc, key, sizeof(key));
        if (r < 0)
                return psrun_error_errno(err, r, "backend: gvisor: %s", rt->runsc);
        cache_read(key, body, sizeof(body));
        bool changed = false;
        if (!cache_line(body, "offers", offers, sizeof(offers))) {
                r = offered_platforms(rt->runsc, offers, sizeof(offers), err);
                if (r < 0)
                        return r;
                body[0] = '\0';
                cache_add(body, sizeof(body), "offers", offers);
                changed = true;
        }

        const struct platform *chosen = NULL;
        char why[256] = "", tried[768] = "";
        if (pol->gvisor_platform != POLICY_GVISOR_PLATFORM_AUTO) {
                const struct platform *p = platform_by_key(pol->gvisor_platform);
                if (!p)
                        return psrun_error_set(err, EINVAL, "gvisor_platform: invalid value %d",
                                               (int) pol->gvisor_platform);
                if (!word_in(offers, p->name))
                        r = psrun_error_set(err, EOPNOTSUPP,
                                            "backend: gvisor: gvisor_platform: `%s` is not a "
                                            "platform of %s (it has: %s)",
                                            p->name, rt->runsc, offers);
                else if (!platform_works(rt->runsc, p, body, sizeof(body), &changed, why,
                                         sizeof(why)))
                        r = psrun_error_set(err, EOPNOTSUPP,
                                            "backend: gvisor: gvisor_platform: `%s` does not work "
                                            "on this host: %s",
                                            p->name, why);
                else
                        chosen = p;
        } else {
                for (size_t i = 0; !chosen && i < ARRAY_SIZE(platforms); i++) {
                        const struct platform *p = &platforms[i];
                        if (!word_in(offers, p->name))
                                continue;
                        if (platform_works(rt->runsc, p, body, sizeof(body), &changed, why,
                                           sizeof(why))) {
                                chosen = p;
                                break;
                        }
                        size_t used = strlen(tried);
                        snprintf(tried + used, sizeof(tried) - used, "%s%s: %s", used ? "; " : "",
                                 p->name, why);
                }
                if (!chosen)
                        r = psrun_error_set(err, EOPNOTSUPP,
                                            "backend: gvisor: gvisor_platform: no platform of %s "
                                            "works on this host (%s)",
                                            rt->runsc, tried[0] ? tried : offers);
        }
        if (changed)
                cache_write(key, body);
        if (!chosen)
                return r;
        rt->platform = chosen->name;
        rt->pids_base = chosen->pids_base;
        rt->pids_per_process = chosen->pids_per_process;
        return 0;
}

int gvisor_check_policy(const struct policy *pol, psrun_error *err)
{
        if (pol->landlock == POLICY_LAYER_REQUIRED)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "landlock: `required` cannot hold with backend: gvisor "
                                       "(files are served by runsc's gofer, which psrun does not "
                                       "confine; use landlock: auto or off)");
        if (pol->apparmor == POLICY_LAYER_REQUIRED)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "apparmor: `required` cannot hold with backend: gvisor "
                                       "(runsc starts the sentry and gofer itself; use apparmor: "
                                       "auto or off)");
        /* An image root's upper is psrun's own overlay's (bundle.c), bounded
         * by disk_limit as natively; the host's root has no such layer. */
        if (!pol->readonly_rootfs && !pol->image)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "readonly_rootfs: `false` is not supported with backend: "
                                       "gvisor (runsc overlays the root alone, which keeps /usr "
                                       "read-only, or every mount, /workspace too)");
        return 0;
}

char **gvisor_runsc_argv(const struct gvisor_sandbox *gs, const char *log_path, char *const sub[])
{
        size_t n = 0;
        while (sub[n])
                n++;
        char **v = calloc(n + 9, sizeof(char *));
        if (!v)
                return NULL;
        size_t k = 0;
        /* runsc creates no cgroups of its own: it runs in psrun's, which
         * hold everything it starts. */
        bool ok = (v[k++] = strdup(gs->rt.runsc)) &&
                  asprintf(&v[k++], "--root=%s/runsc", gs->dir) >= 0 &&
                  asprintf(&v[k++], "--platform=%s", gs->rt.platform) >= 0 &&
                  (v[k++] = strdup(gs->netstack ? "--network=sandbox" : "--network=none")) &&
                  (v[k++] = strdup("--ignore-cgroups")) &&
                  /* config.json's linux.seccomp: the policy's refusals
                   * inside the sandbox (bundle.c). */
                  (v[k++] = strdup("--oci-seccomp")) &&
                  asprintf(&v[k++], "--log=%s", log_path) >= 0 &&
                  (v[k++] = strdup("--log-format=json"));
        for (size_t i = 0; ok && i < n; i++)
                ok = (v[k++] = strdup(sub[i])) != NULL;
        if (!ok) {
                /* asprintf leaves its pointer undefined on failure. */
                v[k - 1] = NULL;
                strv_free(v);
                return NULL;
        }
        return v;
}
