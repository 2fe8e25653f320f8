/* SPDX-License-Identifier: MIT */
/*
 * struct policy itself: its lifetime, the names of its enums, what a valid
 * value of each field is, and policy_validate(). The YAML and -o parser
 * (policy-parse.c) calls the same checks and adds where it found the value.
 * Character classes are spelled out in ASCII rather than taken from
 * <ctype.h>, whose answers depend on the locale of the embedding process.
 */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/names.h"

/* Enum fields are read through int pointers by the tables below and in
 * policy-parse.c. */
_Static_assert(sizeof(enum policy_network) == sizeof(int), "enum size");
_Static_assert(sizeof(enum policy_backend) == sizeof(int), "enum size");
_Static_assert(sizeof(enum policy_gvisor_platform) == sizeof(int), "enum size");
_Static_assert(sizeof(enum policy_layer) == sizeof(int), "enum size");

/* ---- values ---- */

#define DOMAIN_MAX  253
#define LABEL_MAX   63
#define PROFILE_MAX 255
/* Characters of a value shown in a message before it is cut with "...". */
#define ESCAPE_SHOWN 64

static bool is_alpha(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_control(unsigned char c)
{
        return c < 0x20 || c == 0x7f;
}

const char *policy_escape(const char *s, char *buf, size_t size)
{
        size_t o = 0, shown = 0;

        if (size == 0)
                return buf;
        for (; *s && o + 8 < size; s++) {
                unsigned char c = (unsigned char) *s;
                if (shown++ == ESCAPE_SHOWN) {
                        memcpy(buf + o, "...", 3);
                        o += 3;
                        break;
                }
                if (c == '\n')
                        o += (size_t) snprintf(buf + o, size - o, "\\n");
                else if (c == '\t')
                        o += (size_t) snprintf(buf + o, size - o, "\\t");
                else if (c == '"' || c == '\\' || c == '`')
                        o += (size_t) snprintf(buf + o, size - o, "\\%c", c);
                else if (is_control(c))
                        o += (size_t) snprintf(buf + o, size - o, "\\x%02x", c);
                else
                        buf[o++] = (char) c;
        }
        buf[o] = '\0';
        return buf;
}

int policy_normalize_path(const char *path, char **ret, psrun_error *err)
{
        size_t len = strlen(path);

        if (path[0] != '/')
                return psrun_error_set(err, EINVAL, "must be an absolute path");
        if (len > POLICY_PATH_MAX)
                return psrun_error_set(err, ENAMETOOLONG, "is longer than %d characters",
                                       POLICY_PATH_MAX);
        for (const char *c = path; *c; c++)
                if (is_control((unsigned char) *c))
                        return psrun_error_set(err, EINVAL, "must not contain control characters");

        _cleanup_free_ char *out = malloc(len + 1);
        if (!out)
                return psrun_error_errno(err, ENOMEM, "normalize path");
        size_t o = 0;
        for (const char *s = path; *s;) {
                size_t n;
                while (*s == '/')
                        s++;
                n = strcspn(s, "/");
                if (n == 0 || (n == 1 && s[0] == '.')) {
                        s += n;
                        continue;
                }
                /* Lexical ".." would be wrong next to symlinks; refuse it. */
                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return psrun_error_set(err, EINVAL, "must not contain `..`");
                out[o++] = '/';
                memcpy(out + o, s, n);
                o += n;
                s += n;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

int policy_normalize_source(const char *path, char **ret, psrun_error *err)
{
        if (path[0] == '/')
                return policy_normalize_path(path, ret, err);
        if (path[0] == '\0')
                return psrun_error_set(err, EINVAL, "must not be empty");
        if (strlen(path) > POLICY_PATH_MAX)
                return psrun_error_set(err, ENAMETOOLONG, "is longer than %d characters",
                                       POLICY_PATH_MAX);
        for (const char *c = path; *c; c++)
                if (is_control((unsigned char) *c))
                        return psrun_error_set(err, EINVAL, "must not contain control characters");
        *ret = strdup(path);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "mount source");
}

/* Set up by psrun itself; a bind mount over them would undo the masking. */
static const char *const reserved_targets[] = {"/proc", "/dev", "/.oldroot"};

int policy_check_mount_target(const char *target, psrun_error *err)
{
        if (strcmp(target, "/") == 0)
                return psrun_error_set(err, EINVAL, "must not be `/`");
        for (size_t i = 0; i < ARRAY_SIZE(reserved_targets); i++) {
                size_t n = strlen(reserved_targets[i]);
                if (strncmp(target, reserved_targets[i], n) == 0 &&
                    (target[n] == '\0' || target[n] == '/'))
                        return psrun_error_set(err, EINVAL,
                                               "must not be %s or below it (psrun sets it up)",
                                               reserved_targets[i]);
        }
        return 0;
}

/* NULL if `label` (n characters) is a valid DNS label, else why not. */
static const char *label_problem(const char *label, size_t n)
{
        if (n == 0)
                return "empty label";
        if (n > LABEL_MAX)
                return "a label is longer than 63 characters";
        if (label[0] == '-' || label[n - 1] == '-')
                return "a label starts or ends with '-'";
        for (size_t i = 0; i < n; i++)
                if (!is_alpha(label[i]) && !is_digit(label[i]) && label[i] != '-')
                        return "only letters, digits, '-' and '.' are allowed";
        return NULL;
}

int policy_normalize_domain(const char *name, char **ret, psrun_error *err)
{
        char shown[128];
        const char *host = name;
        size_t len;

        if (strncmp(host, "*.", 2) == 0)
                host += 2;
        len = strlen(host);
        /* "example.com." is the same name, fully qualified. */
        if (len > 1 && host[len - 1] == '.')
                len--;
        const char *problem = len > DOMAIN_MAX ? "longer than 253 characters" : NULL;
        for (size_t start = 0; !problem && start <= len;) {
                size_t n = strcspn(host + start, ".");
                if (start + n > len)
                        n = len - start;
                problem = label_problem(host + start, n);
                start += n + 1;
        }
        if (problem)
                return psrun_error_set(err, EINVAL, "\"%s\" is not a valid domain name: %s",
                                       policy_escape(name, shown, sizeof(shown)), problem);

        size_t prefix = (size_t) (host - name);
        char *out = strndup(name, prefix + len);
        if (!out)
                return psrun_error_errno(err, ENOMEM, "domain");
        for (char *c = out; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char) (*c - 'A' + 'a');
        *ret = out;
        return 0;
}

int policy_check_hostname(const char *name, psrun_error *err)
{
        char shown[128];
        const char *problem = label_problem(name, strlen(name));

        if (problem)
                return psrun_error_set(err, EINVAL,
                                       "\"%s\" is not a valid hostname (1-63 letters, digits "
                                       "or '-', not starting or ending with '-')",
                                       policy_escape(name, shown, sizeof(shown)));
        return 0;
}

int policy_check_env_name(const char *name, psrun_error *err)
{
        char shown[128];
        bool ok = is_alpha(name[0]) || name[0] == '_';

        for (const char *c = name + 1; ok && *c; c++)
                ok = is_alpha(*c) || is_digit(*c) || *c == '_';
        if (!ok)
                return psrun_error_set(err, EINVAL,
                                       "\"%s\" is not a valid variable name (letters, digits "
                                       "and '_', not starting with a digit)",
                                       policy_escape(name, shown, sizeof(shown)));
        return 0;
}

int policy_check_apparmor_profile(const char *name, psrun_error *err)
{
        size_t len = strlen(name);

        if (len == 0)
                return psrun_error_set(err, EINVAL, "must not be empty");
        if (len > PROFILE_MAX)
                return psrun_error_set(err, EINVAL, "is longer than %d characters", PROFILE_MAX);
        for (const char *c = name; *c; c++)
                if (*c == ' ' || is_control((unsigned char) *c))
                        return psrun_error_set(err, EINVAL,
                                               "must not contain whitespace or control "
                                               "characters");
        return 0;
}

static const struct {
        const char *name;
        uint32_t uid, gid;
} user_names[] = {
        {"root", 0, 0},
        {"sandbox", POLICY_DEFAULT_UID, POLICY_DEFAULT_GID},
};

/* Digits only, [s, s + n); -EINVAL if not a number, -ERANGE past POLICY_ID_MAX. */
static int parse_id(const char *s, size_t n, uint32_t *ret)
{
        uint32_t v = 0;

        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!is_digit(s[i]))
                        return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                v = v * 10 + (uint32_t) (s[i] - '0');
                if (v > POLICY_ID_MAX)
                        return -ERANGE;
        }
        *ret = v;
        return 0;
}

int policy_parse_user(const char *s, uint32_t *uid, uint32_t *gid, psrun_error *err)
{
        char shown[128];
        uint32_t u, g;
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(user_names); i++)
                if (strcmp(s, user_names[i].name) == 0) {
                        *uid = user_names[i].uid;
                        *gid = user_names[i].gid;
                        return 0;
                }

        const char *colon = strchr(s, ':');
        size_t n_uid = colon ? (size_t) (colon - s) : strlen(s);
        r = parse_id(s, n_uid, &u);
        g = u;
        if (r >= 0 && colon)
                r = parse_id(colon + 1, strlen(colon + 1), &g);
        if (r == -ERANGE)
                return psrun_error_set(err, ERANGE, "\"%s\" is out of range (ids are 0 to %d)",
                                       policy_escape(s, shown, sizeof(shown)), POLICY_ID_MAX);
        if (r < 0)
                return psrun_error_set(err, EINVAL,
                                       "\"%s\" is not a user (use UID[:GID], root or sandbox)",
                                       policy_escape(s, shown, sizeof(shown)));
        *uid = u;
        *gid = g;
        return 0;
}

/* ---- enum <-> string ---- */

static const char *const network_names[_POLICY_NETWORK_MAX] = {
        [POLICY_NETWORK_NONE] = "none",
        [POLICY_NETWORK_RESTRICTED] = "restricted",
        [POLICY_NETWORK_FULL] = "full",
};

static const char *const backend_names[_POLICY_BACKEND_MAX] = {
        [POLICY_BACKEND_NATIVE] = "native",
        [POLICY_BACKEND_GVISOR] = "gvisor",
};

static const char *const gvisor_platform_names[_POLICY_GVISOR_PLATFORM_MAX] = {
        [POLICY_GVISOR_PLATFORM_AUTO] = "auto",
        [POLICY_GVISOR_PLATFORM_SYSTRAP] = "systrap",
        [POLICY_GVISOR_PLATFORM_KVM] = "kvm",
        [POLICY_GVISOR_PLATFORM_PTRACE] = "ptrace",
};

static const char *const layer_names[_POLICY_LAYER_MAX] = {
        [POLICY_LAYER_AUTO] = "auto",
        [POLICY_LAYER_REQUIRED] = "required",
        [POLICY_LAYER_OFF] = "off",
};

static const char *const violations_names[_POLICY_VIOLATIONS_MAX] = {
        [POLICY_VIOLATIONS_OFF] = "off",
        [POLICY_VIOLATIONS_SUMMARY] = "summary",
        [POLICY_VIOLATIONS_FULL] = "full",
};

static const char *const limits_names[_POLICY_LIMITS_MAX] = {
        [POLICY_LIMITS_STRICT] = "strict",
        [POLICY_LIMITS_BEST_EFFORT] = "best_effort",
};

const char *policy_limits_to_string(enum policy_limits v)
{
        return enum_to_string(limits_names, ARRAY_SIZE(limits_names), (int) v);
}

int policy_limits_from_string(const char *s)
{
        return enum_from_string(limits_names, ARRAY_SIZE(limits_names), s);
}

const char *policy_violations_to_string(enum policy_violations v)
{
        return enum_to_string(violations_names, ARRAY_SIZE(violations_names), (int) v);
}

int policy_violations_from_string(const char *s)
{
        return enum_from_string(violations_names, ARRAY_SIZE(violations_names), s);
}

const char *policy_network_to_string(enum policy_network v)
{
        return enum_to_string(network_names, ARRAY_SIZE(network_names), (int) v);
}

int policy_network_from_string(const char *s)
{
        return enum_from_string(network_names, ARRAY_SIZE(network_names), s);
}

const char *policy_backend_to_string(enum policy_backend v)
{
        return enum_to_string(backend_names, ARRAY_SIZE(backend_names), (int) v);
}

int policy_backend_from_string(const char *s)
{
        return enum_from_string(backend_names, ARRAY_SIZE(backend_names), s);
}

const char *policy_gvisor_platform_to_string(enum policy_gvisor_platform v)
{
        return enum_to_string(gvisor_platform_names, ARRAY_SIZE(gvisor_platform_names), (int) v);
}

int policy_gvisor_platform_from_string(const char *s)
{
        return enum_from_string(gvisor_platform_names, ARRAY_SIZE(gvisor_platform_names), s);
}

const char *policy_layer_to_string(enum policy_layer v)
{
        return enum_to_string(layer_names, ARRAY_SIZE(layer_names), (int) v);
}

int policy_layer_from_string(const char *s)
{
        return enum_from_string(layer_names, ARRAY_SIZE(layer_names), s);
}

/* ---- lifetime ---- */

int policy_init(struct policy *p)
{
        *p = (struct policy){
                .network = POLICY_NETWORK_NONE,
                .memory_limit = POLICY_DEFAULT_MEMORY_LIMIT,
                .cpu_limit = POLICY_DEFAULT_CPU_LIMIT,
                .pids_limit = POLICY_DEFAULT_PIDS_LIMIT,
                .disk_limit = POLICY_DEFAULT_DISK_LIMIT,
                .timeout_ms = POLICY_DEFAULT_TIMEOUT_MS,
                .idle_timeout_ms = POLICY_DEFAULT_IDLE_TIMEOUT_MS,
                .lifetime_ms = POLICY_DEFAULT_LIFETIME_MS,
                .output_limit = POLICY_DEFAULT_OUTPUT_LIMIT,
                .background_limit = POLICY_DEFAULT_BACKGROUND_LIMIT,
                .readonly_rootfs = true,
                .uid = POLICY_DEFAULT_UID,
                .gid = POLICY_DEFAULT_GID,
                .backend = POLICY_BACKEND_NATIVE,
                .gvisor_platform = POLICY_GVISOR_PLATFORM_AUTO,
                .landlock = POLICY_LAYER_AUTO,
                .apparmor = POLICY_LAYER_AUTO,
                .violations = POLICY_VIOLATIONS_SUMMARY,
                .pty_limit = POLICY_DEFAULT_PTY_LIMIT,
                .inotify_limit = POLICY_DEFAULT_INOTIFY_LIMIT,
                .inotify_watch_limit = POLICY_DEFAULT_INOTIFY_WATCH_LIMIT,
                .fanotify_limit = POLICY_DEFAULT_FANOTIFY_LIMIT,
                .fanotify_mark_limit = POLICY_DEFAULT_FANOTIFY_MARK_LIMIT,
                .namespace_limit = POLICY_DEFAULT_NAMESPACE_LIMIT,
                .sigpending_limit = POLICY_DEFAULT_SIGPENDING_LIMIT,
                .msgqueue_limit = POLICY_DEFAULT_MSGQUEUE_LIMIT,
                .image_max_size = POLICY_DEFAULT_IMAGE_MAX_SIZE,
                .allow_ports = {80, 443},
                .n_allow_ports = 2,
                .dns_min_ttl_ms = POLICY_DEFAULT_DNS_MIN_TTL,
                .dns_max_ttl_ms = POLICY_DEFAULT_DNS_MAX_TTL,
                .name_check = true,
        };
        p->install_network = POLICY_NETWORK_RESTRICTED;
        p->workdir = strdup(POLICY_DEFAULT_WORKDIR);
        p->hostname = strdup(POLICY_DEFAULT_HOSTNAME);
        if (!p->workdir || !p->hostname ||
            policy_install_domains_default(&p->install_allow_domains, &p->n_install_allow_domains) <
                    0) {
                policy_free(p);
                return -ENOMEM;
        }
        return 0;
}

static void env_free(struct policy_env *env, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(env[i].name);
                free(env[i].value);
        }
        free(env);
}

static void mounts_free(struct policy_mount *m, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(m[i].source);
                free(m[i].target);
        }
        free(m);
}

/* Leaves *p zeroed, so freeing twice is harmless. */
void policy_free(struct policy *p)
{
        if (!p)
                return;
        strv_free(p->allow_domains);
        strv_free(p->install_allow_domains);
        free(p->pip_index_url);
        free(p->npm_registry);
        strv_free(p->allow_cidrs);
        strv_free(p->allow_private);
        strv_free(p->dns_upstream);
        free(p->network_pool);
        free(p->network_log);
        env_free(p->env, p->n_env);
        mounts_free(p->mounts, p->n_mounts);
        free(p->workdir);
        free(p->hostname);
        free(p->apparmor_profile);
        free(p->image);
        free(p->image_store);
        strv_free(p->registry_mirrors);
        strv_free(p->insecure_registries);
        strv_free(p->tools);
        *p = (struct policy){0};
}

/* strdup that keeps NULL; false only when an allocation failed. */
static bool dup_or_null(const char *s, char **ret)
{
        *ret = s ? strdup(s) : NULL;
        return !s || *ret;
}

static int copy_strv(char ***dst, size_t *n, char *const *src, size_t src_n)
{
        if (!src)
                return 0;
        *dst = calloc(src_n + 1, sizeof(char *));
        if (!*dst)
                return -ENOMEM;
        for (; *n < src_n; (*n)++)
                if (!dup_or_null(src[*n], &(*dst)[*n]))
                        return -ENOMEM;
        return 0;
}

/* Copies the arrays of src into the zeroed pointers of p. */
static int copy_arrays(struct policy *p, const struct policy *src)
{
        if (copy_strv(&p->allow_cidrs, &p->n_allow_cidrs, src->allow_cidrs, src->n_allow_cidrs) <
                    0 ||
            copy_strv(&p->allow_private, &p->n_allow_private, src->allow_private,
                      src->n_allow_private) < 0 ||
            copy_strv(&p->dns_upstream, &p->n_dns_upstream, src->dns_upstream,
                      src->n_dns_upstream) < 0 ||
            copy_strv(&p->install_allow_domains, &p->n_install_allow_domains,
                      src->install_allow_domains, src->n_install_allow_domains) < 0 ||
            copy_strv(&p->registry_mirrors, &p->n_registry_mirrors, src->registry_mirrors,
                      src->n_registry_mirrors) < 0 ||
            copy_strv(&p->insecure_registries, &p->n_insecure_registries, src->insecure_registries,
                      src->n_insecure_registries) < 0 ||
            copy_strv(&p->tools, &p->n_tools, src->tools, src->n_tools) < 0)
                return -ENOMEM;
        if (src->allow_domains) {
                p->allow_domains = calloc(src->n_allow_domains + 1, sizeof(char *));
                if (!p->allow_domains)
                        return -ENOMEM;
                for (; p->n_allow_domains < src->n_allow_domains; p->n_allow_domains++)
                        if (!dup_or_null(src->allow_domains[p->n_allow_domains],
                                         &p->allow_domains[p->n_allow_domains]))
                                return -ENOMEM;
        }
        if (src->n_env > 0) {
                p->env = calloc(src->n_env, sizeof(*p->env));
                if (!p->env)
                        return -ENOMEM;
                for (; p->n_env < src->n_env; p->n_env++)
                        if (!dup_or_null(src->env[p->n_env].name, &p->env[p->n_env].name) ||
                            !dup_or_null(src->env[p->n_env].value, &p->env[p->n_env].value)) {
                                p->n_env++;
                                return -ENOMEM;
                        }
        }
        if (src->n_mounts > 0) {
                p->mounts = calloc(src->n_mounts, sizeof(*p->mounts));
                if (!p->mounts)
                        return -ENOMEM;
                for (; p->n_mounts < src->n_mounts; p->n_mounts++) {
                        struct policy_mount *m = &p->mounts[p->n_mounts];
                        m->readonly = src->mounts[p->n_mounts].readonly;
                        /* Count the entry before filling it so a failure frees it. */
                        if (!dup_or_null(src->mounts[p->n_mounts].source, &m->source) ||
                            !dup_or_null(src->mounts[p->n_mounts].target, &m->target)) {
                                p->n_mounts++;
                                return -ENOMEM;
                        }
                }
        }
        return 0;
}

int policy_copy(struct policy *dst, const struct policy *src)
{
        _cleanup_(policy_free) struct policy p = *src;

        p.allow_domains = NULL;
        p.n_allow_domains = 0;
        p.env = NULL;
        p.n_env = 0;
        p.mounts = NULL;
        p.n_mounts = 0;
        p.allow_cidrs = p.allow_private = p.dns_upstream = p.install_allow_domains = NULL;
        p.n_allow_cidrs = p.n_allow_private = p.n_dns_upstream = p.n_install_allow_domains = 0;
        p.workdir = p.hostname = p.apparmor_profile = p.network_pool = p.network_log = NULL;
        p.pip_index_url = p.npm_registry = NULL;
        p.image = p.image_store = NULL;
        p.registry_mirrors = p.insecure_registries = p.tools = NULL;
        p.n_registry_mirrors = p.n_insecure_registries = p.n_tools = 0;

        if (!dup_or_null(src->workdir, &p.workdir) || !dup_or_null(src->hostname, &p.hostname) ||
            !dup_or_null(src->pip_index_url, &p.pip_index_url) ||
            !dup_or_null(src->npm_registry, &p.npm_registry) ||
            !dup_or_null(src->network_pool, &p.network_pool) ||
            !dup_or_null(src->network_log, &p.network_log) ||
            !dup_or_null(src->apparmor_profile, &p.apparmor_profile) ||
            !dup_or_null(src->image, &p.image) || !dup_or_null(src->image_store, &p.image_store) ||
            copy_arrays(&p, src) < 0) {
                *dst = (struct policy){0};
                return -ENOMEM;
        }
        *dst = p;
        p = (struct policy){0};
        return 0;
}

/* ---- reading a file ---- */

int policy_load_file(struct policy *p, const char *path, psrun_error *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        if (fd < 0)
                return psrun_error_errno(err, errno, "policy: open %s", path);
        int r = read_all(fd, POLICY_MAX_DOCUMENT_SIZE, &buf, &len);
        if (r == -EFBIG)
                return psrun_error_set(err, EFBIG, "policy: %s: larger than 1 MiB", path);
        if (r < 0)
                return psrun_error_errno(err, r, "policy: read %s", path);
        return policy_load_buffer(p, path, buf, len, err);
}

/* ---- policy_validate(): for structs filled through the C API, too ---- */

static const struct range_check {
        const char *name;
        size_t offset;
        uint64_t min, max;
        void (*format)(uint64_t v, char *buf, size_t size);
} range_checks[] = {
        {"memory_limit", offsetof(struct policy, memory_limit), POLICY_MEMORY_LIMIT_MIN,
         POLICY_MEMORY_LIMIT_MAX, format_size},
        {"pids_limit", offsetof(struct policy, pids_limit), POLICY_PIDS_LIMIT_MIN,
         POLICY_PIDS_LIMIT_MAX, format_uint64},
        {"disk_limit", offsetof(struct policy, disk_limit), POLICY_DISK_LIMIT_MIN,
         POLICY_DISK_LIMIT_MAX, format_size},
        {"timeout", offsetof(struct policy, timeout_ms), POLICY_TIMEOUT_MS_MIN,
         POLICY_TIMEOUT_MS_MAX, format_duration_ms},
        {"pty_limit", offsetof(struct policy, pty_limit), 1, POLICY_PTY_LIMIT_MAX, format_uint64},
        {"inotify_limit", offsetof(struct policy, inotify_limit), 0, POLICY_QUOTA_MAX,
         format_uint64},
        {"inotify_watch_limit", offsetof(struct policy, inotify_watch_limit), 0, POLICY_QUOTA_MAX,
         format_uint64},
        {"fanotify_limit", offsetof(struct policy, fanotify_limit), 0, POLICY_QUOTA_MAX,
         format_uint64},
        {"fanotify_mark_limit", offsetof(struct policy, fanotify_mark_limit), 0, POLICY_QUOTA_MAX,
         format_uint64},
        {"namespace_limit", offsetof(struct policy, namespace_limit), 0, POLICY_QUOTA_MAX,
         format_uint64},
        {"sigpending_limit", offsetof(struct policy, sigpending_limit), 0, POLICY_QUOTA_MAX,
         format_uint64},
        {"msgqueue_limit", offsetof(struct policy, msgqueue_limit), 0, POLICY_MSGQUEUE_LIMIT_MAX,
         format_size},
        {"idle_timeout", offsetof(struct policy, idle_timeout_ms), 0, POLICY_TIMEOUT_MS_MAX,
         format_duration_ms},
        {"lifetime", offsetof(struct policy, lifetime_ms), 0, POLICY_TIMEOUT_MS_MAX,
         format_duration_ms},
        {"output_limit", offsetof(struct policy, output_limit), POLICY_OUTPUT_LIMIT_MIN,
         POLICY_OUTPUT_LIMIT_MAX, format_size},
        {"background_limit", offsetof(struct policy, background_limit), 0,
         POLICY_BACKGROUND_LIMIT_MAX, format_uint64},
};

static int check_ranges(const struct policy *p, psrun_error *err)
{
        for (size_t i = 0; i < ARRAY_SIZE(range_checks); i++) {
                const struct range_check *c = &range_checks[i];
                uint64_t v = *(const uint64_t *) (const void *) ((const char *) p + c->offset);
                char lo[32], hi[32];

                if (v >= c->min && v <= c->max)
                        continue;
                c->format(c->min, lo, sizeof(lo));
                c->format(c->max, hi, sizeof(hi));
                return psrun_error_set(err, ERANGE, "%s: must be between %s and %s", c->name, lo,
                                       hi);
        }
        /* Written so that NaN fails too. */
        if (!(p->cpu_limit > 0 && p->cpu_limit <= POLICY_CPU_LIMIT_MAX))
                return psrun_error_set(err, ERANGE,
                                       "cpu_limit: must be greater than 0 and at "
                                       "most %d",
                                       POLICY_CPU_LIMIT_MAX);
        if (p->uid > POLICY_ID_MAX || p->gid > POLICY_ID_MAX)
                return psrun_error_set(err, ERANGE, "user: ids must be 0 to %d", POLICY_ID_MAX);
        return 0;
}

static const struct enum_check {
        const char *name;
        size_t offset;
        const char *const *names;
        size_t n_names;
} enum_checks[] = {
        {"network", offsetof(struct policy, network), network_names, ARRAY_SIZE(network_names)},
        {"install_network", offsetof(struct policy, install_network), network_names,
         ARRAY_SIZE(network_names)},
        {"backend", offsetof(struct policy, backend), backend_names, ARRAY_SIZE(backend_names)},
        {"gvisor_platform", offsetof(struct policy, gvisor_platform), gvisor_platform_names,
         ARRAY_SIZE(gvisor_platform_names)},
        {"landlock", offsetof(struct policy, landlock), layer_names, ARRAY_SIZE(layer_names)},
        {"apparmor", offsetof(struct policy, apparmor), layer_names, ARRAY_SIZE(layer_names)},
        {"violations", offsetof(struct policy, violations), violations_names,
         ARRAY_SIZE(violations_names)},
        {"limits", offsetof(struct policy, limits), limits_names, ARRAY_SIZE(limits_names)},
};

static int check_enums(const struct policy *p, psrun_error *err)
{
        for (size_t i = 0; i < ARRAY_SIZE(enum_checks); i++) {
                const struct enum_check *c = &enum_checks[i];
                int v = *(const int *) (const void *) ((const char *) p + c->offset);

                if (!enum_to_string(c->names, c->n_names, v))
                        return psrun_error_set(err, EINVAL, "%s: invalid value %d", c->name, v);
        }
        return 0;
}

/* Paths must be in the form the parser would have stored. */
static int check_path_with(const char *name, const char *path,
                           int (*normalize)(const char *, char **, psrun_error *), psrun_error *err)
{
        _cleanup_free_ char *normalized = NULL;

        if (!path)
                return psrun_error_set(err, EINVAL, "%s: must be set", name);
        if (normalize(path, &normalized, err) < 0)
                return psrun_error_prefix(err, "%s", name);
        if (!streq(path, normalized))
                return psrun_error_set(err, EINVAL, "%s: must be written as %s", name, normalized);
        return 0;
}

static int check_path(const char *name, const char *path, psrun_error *err)
{
        return check_path_with(name, path, policy_normalize_path, err);
}

static int check_strings(const struct policy *p, psrun_error *err)
{
        int r = check_path("workdir", p->workdir, err);

        if (r < 0)
                return r;
        if (!p->hostname)
                return psrun_error_set(err, EINVAL, "hostname: must be set");
        if (policy_check_hostname(p->hostname, err) < 0)
                return psrun_error_prefix(err, "hostname");
        /* NULL: psrun's generated profile. */
        if (p->apparmor_profile && policy_check_apparmor_profile(p->apparmor_profile, err) < 0)
                return psrun_error_prefix(err, "apparmor_profile");
        return 0;
}

static int check_env(const struct policy *p, psrun_error *err)
{
        for (size_t i = 0; i < p->n_env; i++) {
                if (!p->env[i].name)
                        return psrun_error_set(err, EINVAL, "env[%zu]: no name", i);
                if (policy_check_env_name(p->env[i].name, err) < 0)
                        return psrun_error_prefix(err, "env[%zu]", i);
        }
        return 0;
}

static int check_domains(const struct policy *p, psrun_error *err)
{
        for (size_t i = 0; i < p->n_allow_domains; i++) {
                _cleanup_free_ char *d = NULL;
                const char *v = p->allow_domains[i];

                if (!v)
                        return psrun_error_set(err, EINVAL, "allow_domains[%zu]: missing", i);
                if (policy_normalize_domain(v, &d, err) < 0)
                        return psrun_error_prefix(err, "allow_domains[%zu]", i);
                if (!streq(d, v))
                        return psrun_error_set(err, EINVAL,
                                               "allow_domains[%zu]: must be written as %s", i, d);
        }
        /* The allowlist is enforced by the DNS proxy of restricted mode only;
         * with `none` or `full` it would silently mean nothing. */
        if (p->n_allow_domains > 0 && p->network != POLICY_NETWORK_RESTRICTED)
                return psrun_error_set(err, EINVAL,
                                       "allow_domains: only used with `network: restricted`");
        return 0;
}

static int check_mounts(const struct policy *p, psrun_error *err)
{
        char path[64];
        int r;

        for (size_t i = 0; i < p->n_mounts; i++) {
                const struct policy_mount *m = &p->mounts[i];

                snprintf(path, sizeof(path), "mounts[%zu].source", i);
                /* May be relative: resolved against psrun's cwd at start. */
                r = check_path_with(path, m->source, policy_normalize_source, err);
                if (r < 0)
                        return r;
                snprintf(path, sizeof(path), "mounts[%zu].target", i);
                r = check_path(path, m->target, err);
                if (r < 0)
                        return r;
                if (policy_check_mount_target(m->target, err) < 0)
                        return psrun_error_prefix(err, "%s", path);
                for (size_t j = 0; j < i; j++)
                        if (streq(p->mounts[j].target, m->target))
                                return psrun_error_set(err, EINVAL,
                                                       "%s: already the target of mounts[%zu]",
                                                       path, j);
        }
        return 0;
}

static int (*const validators[])(const struct policy *p, psrun_error *err) = {
        check_ranges, check_enums,          check_strings,        check_env,          check_domains,
        check_mounts, policy_check_network, policy_check_install, policy_check_image,
};

int policy_validate(const struct policy *p, psrun_error *err)
{
        psrun_error ignored;

        /* The checks add context to err's message; give them one to fill. */
        err = err ? err : &ignored;
        for (size_t i = 0; i < ARRAY_SIZE(validators); i++) {
                int r = validators[i](p, err);
                if (r < 0)
                        return r;
        }
        return 0;
}
