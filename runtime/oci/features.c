/* SPDX-License-Identifier: MIT */
/*
 * `psrun features` (runtime-spec features.md) and `psrun spec` (runc's
 * default config.json). Both are built from the tables the config.json
 * parser and the seccomp compiler use, or from small tables here that the
 * unit tests hold against them, so neither document can promise what the
 * parser would refuse.
 */
#include "runtime/oci/features.h"

#include <ctype.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "policy/seccomp.h"
#include "runtime/oci/config.h"
#include "runtime/oci/state.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1U << 5)
#endif

/* ---- what psrun implements: flip these as it changes ---- */

#define FEATURE_SECCOMP_ENABLED  true
#define FEATURE_APPARMOR_ENABLED true
#define FEATURE_SELINUX_ENABLED  false
#define FEATURE_INTEL_RDT        false
/* "idmap"/"ridmap" and a mount's uidMappings/gidMappings, on binds
 * (runtime/oci/rootfs.c, rootfs/sources.c). */
#define FEATURE_IDMAP_MOUNTS true

struct feature_flag {
        const char *name;
        bool enabled;
};

/* linux.cgroup: both drivers exist (runtime/cgroup/v1.c, v2.c);
 * there is no systemd driver and no rdma controller support. */
static const struct feature_flag cgroup_features[] = {
        {"v1", true}, {"v2", true}, {"systemd", false}, {"systemdUser", false}, {"rdma", false},
};

/* linux.namespaces: the types psrun can create or join. Every type the
 * parser knows (oci_namespace_to_string) for now; drop one here if psrun
 * stops supporting it, the parser may keep recognising it. */
static const int supported_namespaces[] = {
        CLONE_NEWCGROUP, CLONE_NEWIPC,  CLONE_NEWNS,  CLONE_NEWNET,
        CLONE_NEWPID,    CLONE_NEWUSER, CLONE_NEWUTS, CLONE_NEWTIME,
};

/* Spellings seccomp_action_kind_from_string() takes besides the canonical
 * names (the pre-2.4 libseccomp name the runtime-spec still lists). */
static const char *const seccomp_action_aliases[] = {
        "SCMP_ACT_KILL",
};

/* Filter flags the parser recognises but seccomp_compile() refuses: they
 * need a user-notification listener. knownFlags has them, supportedFlags
 * does not. */
static const unsigned unsupported_seccomp_flags[] = {
        SECCOMP_FILTER_FLAG_NEW_LISTENER,
        SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
        SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
};

/* Architectures seccomp_compile() recognises with the libseccomp psrun is
 * built with (2.5; the unit tests hold each against it). Recognised, as
 * features.md asks, not all usable here: libseccomp will not mix byte
 * orders in one filter, so an x86_64 host refuses MIPS or S390X (EDOM).
 * libseccomp 2.6 adds SCMP_ARCH_LOONGARCH64, M68K, SH and SHEB. */
static const char *const seccomp_archs[] = {
        "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
        "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
        "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
        "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
        "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",
};

/* psrun's own key: features.md leaves annotation names to the runtime (runc
 * says org.opencontainers.runc.version). */
#define FEATURES_VERSION_ANNOTATION "io.github.psrun.version"

/* runc's layouts: `features` through a 4-space json.Encoder, `spec` through
 * json.MarshalIndent with a tab. */
#define FEATURES_INDENT "    "
#define SPEC_INDENT     "\t"

/* ---- a small indenting JSON writer ---- */

struct json_out {
        FILE *f;
        const char *indent;
        int depth;
        bool has_items; /* the innermost open container has a value */
};

static void json_newline(struct json_out *o)
{
        fputc('\n', o->f);
        for (int i = 0; i < o->depth; i++)
                fputs(o->indent, o->f);
}

/* Starts a value: the comma, the line, and "key": inside an object. */
static void json_item(struct json_out *o, const char *key)
{
        if (o->has_items)
                fputc(',', o->f);
        if (o->depth > 0)
                json_newline(o);
        if (key) {
                json_write_string(o->f, key);
                fputs(": ", o->f);
        }
        o->has_items = true;
}

static void json_open(struct json_out *o, const char *key, char bracket)
{
        json_item(o, key);
        fputc(bracket, o->f);
        o->depth++;
        o->has_items = false;
}

/* Empty containers stay on one line ("[]"), as Go writes them. */
static void json_close(struct json_out *o, char bracket)
{
        o->depth--;
        if (o->has_items)
                json_newline(o);
        fputc(bracket, o->f);
        o->has_items = true;
}

static void json_string(struct json_out *o, const char *key, const char *value)
{
        json_item(o, key);
        json_write_string(o->f, value);
}

static void json_bool(struct json_out *o, const char *key, bool value)
{
        json_item(o, key);
        fputs(value ? "true" : "false", o->f);
}

static void json_u64(struct json_out *o, const char *key, uint64_t value)
{
        json_item(o, key);
        fprintf(o->f, "%llu", (unsigned long long) value);
}

/* A NULL-terminated string list as an array. */
static void json_strv(struct json_out *o, const char *key, const char *const *list)
{
        json_open(o, key, '[');
        for (; *list; list++)
                json_string(o, NULL, *list);
        json_close(o, ']');
}

/* {"enabled": value} */
static void json_enabled(struct json_out *o, const char *key, bool value)
{
        json_open(o, key, '{');
        json_bool(o, "enabled", value);
        json_close(o, '}');
}

static int json_finish(struct json_out *o, const char *what, psrun_error *err)
{
        fputc('\n', o->f);
        /* stdio keeps no errno for an earlier failed write. */
        if (fflush(o->f) != 0 || ferror(o->f))
                return psrun_error_errno(err, EIO, "%s: write", what);
        return 0;
}

/* ---- features ---- */

static int features_namespaces(struct json_out *o, psrun_error *err)
{
        json_open(o, "namespaces", '[');
        for (size_t i = 0; i < ARRAY_SIZE(supported_namespaces); i++) {
                const char *name = oci_namespace_to_string(supported_namespaces[i]);
                if (!name)
                        return psrun_error_set(err, EPROTO,
                                               "features: namespace flag 0x%x has no name",
                                               (unsigned) supported_namespaces[i]);
                json_string(o, NULL, name);
        }
        json_close(o, ']');
        return 0;
}

/* Every capability libcap can name, which is what the parser accepts
 * (runtime/oci/config.c resolves names with cap_from_name); the spec asks
 * for the recognised names, including ones this kernel may lack. */
static int features_capabilities(struct json_out *o, psrun_error *err)
{
        json_open(o, "capabilities", '[');
        for (cap_value_t cap = 0; cap < 64; cap++) {
                char *name = cap_to_name(cap);
                if (!name)
                        return psrun_error_errno(err, ENOMEM, "features: capability %d", cap);
                /* Past libcap's table cap_to_name gives the number. */
                if (strncmp(name, "cap_", 4) == 0) {
                        char upper[64];
                        size_t n = 0;
                        for (; name[n] && n + 1 < sizeof(upper); n++)
                                upper[n] = (char) toupper((unsigned char) name[n]);
                        upper[n] = '\0';
                        json_string(o, NULL, upper);
                }
                cap_free(name);
        }
        json_close(o, ']');
        return 0;
}

static bool seccomp_flag_supported(unsigned flag)
{
        for (size_t i = 0; i < ARRAY_SIZE(unsupported_seccomp_flags); i++)
                if (unsupported_seccomp_flags[i] == flag)
                        return false;
        return true;
}

/* The flags seccomp_filter_flag_to_string() knows, each a single bit;
 * supported_only: without unsupported_seccomp_flags. */
static void features_seccomp_flags(struct json_out *o, const char *key, bool supported_only)
{
        json_open(o, key, '[');
        for (unsigned bit = 0; bit < 32; bit++) {
                const char *name = seccomp_filter_flag_to_string(1U << bit);
                if (name && (!supported_only || seccomp_flag_supported(1U << bit)))
                        json_string(o, NULL, name);
        }
        json_close(o, ']');
}

/* Actions and operators come straight from policy/seccomp.c's name tables
 * (their enums are dense from 0). Every action compiles; SCMP_ACT_NOTIFY
 * only with linux.seccomp.listenerPath (runtime/oci/seccomp-agent.c). */
static void features_seccomp(struct json_out *o)
{
        const char *name;

        json_open(o, "seccomp", '{');
        json_bool(o, "enabled", FEATURE_SECCOMP_ENABLED);

        json_open(o, "actions", '[');
        for (int k = 0; (name = seccomp_action_kind_to_string((enum seccomp_action_kind) k)); k++)
                json_string(o, NULL, name);
        for (size_t i = 0; i < ARRAY_SIZE(seccomp_action_aliases); i++)
                json_string(o, NULL, seccomp_action_aliases[i]);
        json_close(o, ']');

        json_open(o, "operators", '[');
        for (int op = 0; (name = seccomp_cmp_op_to_string((enum seccomp_cmp_op) op)); op++)
                json_string(o, NULL, name);
        json_close(o, ']');

        json_open(o, "archs", '[');
        for (size_t i = 0; i < ARRAY_SIZE(seccomp_archs); i++)
                json_string(o, NULL, seccomp_archs[i]);
        json_close(o, ']');

        features_seccomp_flags(o, "knownFlags", false);
        features_seccomp_flags(o, "supportedFlags", true);
        json_close(o, '}');
}

static int features_linux(struct json_out *o, psrun_error *err)
{
        int r;

        json_open(o, "linux", '{');
        r = features_namespaces(o, err);
        if (r < 0)
                return r;
        r = features_capabilities(o, err);
        if (r < 0)
                return r;

        json_open(o, "cgroup", '{');
        for (size_t i = 0; i < ARRAY_SIZE(cgroup_features); i++)
                json_bool(o, cgroup_features[i].name, cgroup_features[i].enabled);
        json_close(o, '}');

        features_seccomp(o);
        json_enabled(o, "apparmor", FEATURE_APPARMOR_ENABLED);
        json_enabled(o, "selinux", FEATURE_SELINUX_ENABLED);
        json_enabled(o, "intelRdt", FEATURE_INTEL_RDT);
        json_open(o, "mountExtensions", '{');
        json_enabled(o, "idmap", FEATURE_IDMAP_MOUNTS);
        json_close(o, '}');
        json_close(o, '}');
        return 0;
}

int oci_features_print(FILE *f, psrun_error *err)
{
        struct json_out o = {.f = f, .indent = FEATURES_INDENT};
        const char *name;
        int r;

        json_open(&o, NULL, '{');
        json_string(&o, "ociVersionMin", OCI_FEATURES_VERSION_MIN);
        json_string(&o, "ociVersionMax", OCI_STATE_SPEC_VERSION);

        json_open(&o, "hooks", '[');
        for (int k = 0; (name = oci_hook_kind_to_string((enum oci_hook_kind) k)); k++)
                json_string(&o, NULL, name);
        json_close(&o, ']');

        json_open(&o, "mountOptions", '[');
        for (size_t i = 0; (name = oci_mount_option_name(i)); i++)
                json_string(&o, NULL, name);
        json_close(&o, ']');

        r = features_linux(&o, err);
        if (r < 0)
                return r;

        json_open(&o, "annotations", '{');
        json_string(&o, FEATURES_VERSION_ANNOTATION, psrun_version());
        json_close(&o, '}');
        json_close(&o, '}');
        return json_finish(&o, "features", err);
}

/* ---- spec ---- */

/* Which variant of the default spec an entry belongs to. */
enum spec_variant {
        SPEC_BOTH,
        SPEC_ROOTFUL, /* not with --rootless */
        SPEC_ROOTLESS,
};

static bool spec_wants(enum spec_variant v, bool rootless)
{
        return v == SPEC_BOTH || (v == SPEC_ROOTLESS) == rootless;
}

#define STRV(...) ((const char *const[]){__VA_ARGS__, NULL})

struct spec_mount {
        const char *destination;
        const char *type;
        const char *source;
        const char *const *options; /* NULL: no "options" key */
        enum spec_variant variant;
};

/* runc's default mounts. Rootless, a new sysfs needs CAP_SYS_ADMIN over the
 * network namespace, which the container does not own: bind the host's. */
static const struct spec_mount spec_mounts[] = {
        {"/proc", "proc", "proc", NULL, SPEC_BOTH},
        {"/dev", "tmpfs", "tmpfs", STRV("nosuid", "strictatime", "mode=755", "size=65536k"),
         SPEC_BOTH},
        {"/dev/pts", "devpts", "devpts",
         STRV("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"), SPEC_BOTH},
        {"/dev/shm", "tmpfs", "shm", STRV("nosuid", "noexec", "nodev", "mode=1777", "size=65536k"),
         SPEC_BOTH},
        {"/dev/mqueue", "mqueue", "mqueue", STRV("nosuid", "noexec", "nodev"), SPEC_BOTH},
        {"/sys", "sysfs", "sysfs", STRV("nosuid", "noexec", "nodev", "ro"), SPEC_ROOTFUL},
        {"/sys", "none", "/sys", STRV("rbind", "nosuid", "noexec", "nodev", "ro"), SPEC_ROOTLESS},
        {"/sys/fs/cgroup", "cgroup", "cgroup", STRV("nosuid", "noexec", "nodev", "relatime", "ro"),
         SPEC_BOTH},
};

struct spec_namespace {
        int type;
        enum spec_variant variant;
};

/* Rootless drops the network namespace: with a user namespace of one id
 * there is no way to give it a link (runc does the same). */
static const struct spec_namespace spec_namespaces[] = {
        {CLONE_NEWPID, SPEC_BOTH},      {CLONE_NEWNET, SPEC_ROOTFUL}, {CLONE_NEWIPC, SPEC_BOTH},
        {CLONE_NEWUTS, SPEC_BOTH},      {CLONE_NEWNS, SPEC_BOTH},     {CLONE_NEWCGROUP, SPEC_BOTH},
        {CLONE_NEWUSER, SPEC_ROOTLESS},
};

static const char *const spec_env[] = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "TERM=xterm",
        NULL,
};

static const char *const spec_args[] = {"sh", NULL};

/* runc's default set, in bounding, effective and permitted. */
static const char *const spec_caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE",
                                        NULL};
static const char *const spec_cap_sets[] = {"bounding", "effective", "permitted"};

static const char *const spec_masked_paths[] = {
        "/proc/acpi",
        "/proc/asound",
        "/proc/kcore",
        "/proc/keys",
        "/proc/latency_stats",
        "/proc/timer_list",
        "/proc/timer_stats",
        "/proc/sched_debug",
        "/sys/firmware",
        "/proc/scsi",
        "/sys/devices/virtual/tpm",
        NULL,
};

static const char *const spec_readonly_paths[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

#define SPEC_HOSTNAME     "psrun"
#define SPEC_NOFILE_LIMIT 1024
#define SPEC_ROOTFS       "rootfs"

/* Inside a user namespace that maps one id, uid=/gid= options name ids the
 * container does not have (devpts' gid=5 would fail the mount). */
static bool spec_option_wanted(const char *option, bool rootless)
{
        return !rootless || (strncmp(option, "uid=", 4) != 0 && strncmp(option, "gid=", 4) != 0);
}

static int spec_process(struct json_out *o, psrun_error *err)
{
        const char *nofile = oci_rlimit_to_string(RLIMIT_NOFILE);

        if (!nofile)
                return psrun_error_set(err, EPROTO, "spec: RLIMIT_NOFILE has no name");

        json_open(o, "process", '{');
        json_bool(o, "terminal", true);
        json_open(o, "user", '{');
        json_u64(o, "uid", 0);
        json_u64(o, "gid", 0);
        json_close(o, '}');
        json_strv(o, "args", spec_args);
        json_strv(o, "env", spec_env);
        json_string(o, "cwd", "/");

        json_open(o, "capabilities", '{');
        for (size_t i = 0; i < ARRAY_SIZE(spec_cap_sets); i++)
                json_strv(o, spec_cap_sets[i], spec_caps);
        json_close(o, '}');

        json_open(o, "rlimits", '[');
        json_open(o, NULL, '{');
        json_string(o, "type", nofile);
        json_u64(o, "hard", SPEC_NOFILE_LIMIT);
        json_u64(o, "soft", SPEC_NOFILE_LIMIT);
        json_close(o, '}');
        json_close(o, ']');

        json_bool(o, "noNewPrivileges", true);
        json_close(o, '}');
        return 0;
}

static void spec_mounts_list(struct json_out *o, bool rootless)
{
        json_open(o, "mounts", '[');
        for (size_t i = 0; i < ARRAY_SIZE(spec_mounts); i++) {
                const struct spec_mount *m = &spec_mounts[i];
                if (!spec_wants(m->variant, rootless))
                        continue;
                json_open(o, NULL, '{');
                json_string(o, "destination", m->destination);
                json_string(o, "type", m->type);
                json_string(o, "source", m->source);
                if (m->options) {
                        json_open(o, "options", '[');
                        for (const char *const *opt = m->options; *opt; opt++)
                                if (spec_option_wanted(*opt, rootless))
                                        json_string(o, NULL, *opt);
                        json_close(o, ']');
                }
                json_close(o, '}');
        }
        json_close(o, ']');
}

/* One mapping: container id 0 to `host_id`, size 1. */
static void spec_id_mapping(struct json_out *o, const char *key, unsigned host_id)
{
        json_open(o, key, '[');
        json_open(o, NULL, '{');
        json_u64(o, "containerID", 0);
        json_u64(o, "hostID", host_id);
        json_u64(o, "size", 1);
        json_close(o, '}');
        json_close(o, ']');
}

static int spec_linux(struct json_out *o, bool rootless, psrun_error *err)
{
        json_open(o, "linux", '{');
        if (rootless) {
                spec_id_mapping(o, "uidMappings", (unsigned) geteuid());
                spec_id_mapping(o, "gidMappings", (unsigned) getegid());
        } else {
                /* A rootless container cannot write the devices controller
                 * (runc leaves resources out too). */
                json_open(o, "resources", '{');
                json_open(o, "devices", '[');
                json_open(o, NULL, '{');
                json_bool(o, "allow", false);
                json_string(o, "access", "rwm");
                json_close(o, '}');
                json_close(o, ']');
                json_close(o, '}');
        }

        json_open(o, "namespaces", '[');
        for (size_t i = 0; i < ARRAY_SIZE(spec_namespaces); i++) {
                if (!spec_wants(spec_namespaces[i].variant, rootless))
                        continue;
                const char *name = oci_namespace_to_string(spec_namespaces[i].type);
                if (!name)
                        return psrun_error_set(err, EPROTO, "spec: namespace flag 0x%x has no name",
                                               (unsigned) spec_namespaces[i].type);
                json_open(o, NULL, '{');
                json_string(o, "type", name);
                json_close(o, '}');
        }
        json_close(o, ']');

        json_strv(o, "maskedPaths", spec_masked_paths);
        json_strv(o, "readonlyPaths", spec_readonly_paths);
        json_close(o, '}');
        return 0;
}

int oci_spec_print(FILE *f, bool rootless, psrun_error *err)
{
        struct json_out o = {.f = f, .indent = SPEC_INDENT};
        int r;

        json_open(&o, NULL, '{');
        json_string(&o, "ociVersion", OCI_STATE_SPEC_VERSION);
        r = spec_process(&o, err);
        if (r < 0)
                return r;
        json_open(&o, "root", '{');
        json_string(&o, "path", SPEC_ROOTFS);
        json_bool(&o, "readonly", true);
        json_close(&o, '}');
        json_string(&o, "hostname", SPEC_HOSTNAME);
        spec_mounts_list(&o, rootless);
        r = spec_linux(&o, rootless, err);
        if (r < 0)
                return r;
        json_close(&o, '}');
        return json_finish(&o, "spec", err);
}
