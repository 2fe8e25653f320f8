/* SPDX-License-Identifier: MIT */
/*
 * config.json: the entry points, and the field tables of the top level,
 * process, root, mounts (with the one mount option table) and hooks. The
 * `linux` object is in oci-config-linux.c, the walker in oci-config-walk.c.
 */
#include "runtime/oci/config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/names.h"
#include "policy/policy.h"
#include "runtime/oci/config-internal.h"

/* sethostname(2) and setdomainname(2) refuse longer names. */
#define HOST_NAME_LIMIT 64

/* ---- names ---- */

static const char *const hook_names[] = {
        [OCI_HOOK_PRESTART] = "prestart",
        [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
        [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
        [OCI_HOOK_START_CONTAINER] = "startContainer",
        [OCI_HOOK_POSTSTART] = "poststart",
        [OCI_HOOK_POSTSTOP] = "poststop",
};

const char *oci_hook_kind_to_string(enum oci_hook_kind kind)
{
        return (size_t) kind < ARRAY_SIZE(hook_names) ? hook_names[kind] : NULL;
}

/* ---- mount options: one table ---- */

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

enum mount_option_kind {
        MOUNT_OPT_SET,         /* flags |= value */
        MOUNT_OPT_CLEAR,       /* flags &= ~value, remembered in clear_flags */
        MOUNT_OPT_BIND,        /* MS_BIND [| MS_REC] */
        MOUNT_OPT_PROPAGATION, /* one of the four [| MS_REC]; the last one wins */
        MOUNT_OPT_ATTR_SET,    /* recursive MOUNT_ATTR_* */
        MOUNT_OPT_ATTR_CLEAR,
        MOUNT_OPT_ATTR_ATIME, /* recursive atime mode */
        MOUNT_OPT_IDMAP,      /* value 1: recursive */
        MOUNT_OPT_TMPCOPYUP,
        MOUNT_OPT_NOTHING,
};

struct mount_option {
        const char *name;
        enum mount_option_kind kind;
        unsigned long value;
};

static const struct mount_option mount_options[] = {
        {"defaults", MOUNT_OPT_NOTHING, 0},
        {"ro", MOUNT_OPT_SET, MS_RDONLY},
        {"rw", MOUNT_OPT_CLEAR, MS_RDONLY},
        {"nosuid", MOUNT_OPT_SET, MS_NOSUID},
        {"suid", MOUNT_OPT_CLEAR, MS_NOSUID},
        {"nodev", MOUNT_OPT_SET, MS_NODEV},
        {"dev", MOUNT_OPT_CLEAR, MS_NODEV},
        {"noexec", MOUNT_OPT_SET, MS_NOEXEC},
        {"exec", MOUNT_OPT_CLEAR, MS_NOEXEC},
        {"sync", MOUNT_OPT_SET, MS_SYNCHRONOUS},
        {"async", MOUNT_OPT_CLEAR, MS_SYNCHRONOUS},
        {"remount", MOUNT_OPT_SET, MS_REMOUNT},
        {"mand", MOUNT_OPT_SET, MS_MANDLOCK},
        {"nomand", MOUNT_OPT_CLEAR, MS_MANDLOCK},
        {"dirsync", MOUNT_OPT_SET, MS_DIRSYNC},
        {"noatime", MOUNT_OPT_SET, MS_NOATIME},
        {"atime", MOUNT_OPT_CLEAR, MS_NOATIME},
        {"nodiratime", MOUNT_OPT_SET, MS_NODIRATIME},
        {"diratime", MOUNT_OPT_CLEAR, MS_NODIRATIME},
        {"relatime", MOUNT_OPT_SET, MS_RELATIME},
        {"norelatime", MOUNT_OPT_CLEAR, MS_RELATIME},
        {"strictatime", MOUNT_OPT_SET, MS_STRICTATIME},
        {"nostrictatime", MOUNT_OPT_CLEAR, MS_STRICTATIME},
        {"lazytime", MOUNT_OPT_SET, MS_LAZYTIME},
        {"nolazytime", MOUNT_OPT_CLEAR, MS_LAZYTIME},
        {"iversion", MOUNT_OPT_SET, MS_I_VERSION},
        {"noiversion", MOUNT_OPT_CLEAR, MS_I_VERSION},
        {"silent", MOUNT_OPT_SET, MS_SILENT},
        {"loud", MOUNT_OPT_CLEAR, MS_SILENT},
        {"nosymfollow", MOUNT_OPT_SET, MS_NOSYMFOLLOW},
        {"symfollow", MOUNT_OPT_CLEAR, MS_NOSYMFOLLOW},
        {"bind", MOUNT_OPT_BIND, MS_BIND},
        {"rbind", MOUNT_OPT_BIND, MS_BIND | MS_REC},
        {"private", MOUNT_OPT_PROPAGATION, MS_PRIVATE},
        {"rprivate", MOUNT_OPT_PROPAGATION, MS_PRIVATE | MS_REC},
        {"shared", MOUNT_OPT_PROPAGATION, MS_SHARED},
        {"rshared", MOUNT_OPT_PROPAGATION, MS_SHARED | MS_REC},
        {"slave", MOUNT_OPT_PROPAGATION, MS_SLAVE},
        {"rslave", MOUNT_OPT_PROPAGATION, MS_SLAVE | MS_REC},
        {"unbindable", MOUNT_OPT_PROPAGATION, MS_UNBINDABLE},
        {"runbindable", MOUNT_OPT_PROPAGATION, MS_UNBINDABLE | MS_REC},
        {"rro", MOUNT_OPT_ATTR_SET, MOUNT_ATTR_RDONLY},
        {"rrw", MOUNT_OPT_ATTR_CLEAR, MOUNT_ATTR_RDONLY},
        {"rnosuid", MOUNT_OPT_ATTR_SET, MOUNT_ATTR_NOSUID},
        {"rsuid", MOUNT_OPT_ATTR_CLEAR, MOUNT_ATTR_NOSUID},
        {"rnodev", MOUNT_OPT_ATTR_SET, MOUNT_ATTR_NODEV},
        {"rdev", MOUNT_OPT_ATTR_CLEAR, MOUNT_ATTR_NODEV},
        {"rnoexec", MOUNT_OPT_ATTR_SET, MOUNT_ATTR_NOEXEC},
        {"rexec", MOUNT_OPT_ATTR_CLEAR, MOUNT_ATTR_NOEXEC},
        {"rnodiratime", MOUNT_OPT_ATTR_SET, MOUNT_ATTR_NODIRATIME},
        {"rdiratime", MOUNT_OPT_ATTR_CLEAR, MOUNT_ATTR_NODIRATIME},
        {"rnosymfollow", MOUNT_OPT_ATTR_SET, MOUNT_ATTR_NOSYMFOLLOW},
        {"rsymfollow", MOUNT_OPT_ATTR_CLEAR, MOUNT_ATTR_NOSYMFOLLOW},
        /* The atime mode is one field that mount_setattr() only replaces
         * whole; "not noatime/strictatime/relatime" all mean the kernel's
         * default, relatime (as MS_* without any atime flag does). */
        {"rnoatime", MOUNT_OPT_ATTR_ATIME, MOUNT_ATTR_NOATIME},
        {"rstrictatime", MOUNT_OPT_ATTR_ATIME, MOUNT_ATTR_STRICTATIME},
        {"rrelatime", MOUNT_OPT_ATTR_ATIME, MOUNT_ATTR_RELATIME},
        {"ratime", MOUNT_OPT_ATTR_ATIME, MOUNT_ATTR_RELATIME},
        {"rnorelatime", MOUNT_OPT_ATTR_ATIME, MOUNT_ATTR_RELATIME},
        {"rnostrictatime", MOUNT_OPT_ATTR_ATIME, MOUNT_ATTR_RELATIME},
        {"idmap", MOUNT_OPT_IDMAP, 0},
        {"ridmap", MOUNT_OPT_IDMAP, 1},
        {"tmpcopyup", MOUNT_OPT_TMPCOPYUP, 0},
};

const char *oci_mount_option_name(size_t i)
{
        return i < ARRAY_SIZE(mount_options) ? mount_options[i].name : NULL;
}

static const struct mount_option *find_mount_option(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(mount_options); i++)
                if (streq(mount_options[i].name, name))
                        return &mount_options[i];
        return NULL;
}

int oci_propagation_from_string(const char *name)
{
        const struct mount_option *o = find_mount_option(name);

        return o && o->kind == MOUNT_OPT_PROPAGATION ? (int) o->value : -EINVAL;
}

const char *oci_propagation_name_at(int i)
{
        for (size_t j = 0; j < ARRAY_SIZE(mount_options); j++)
                if (mount_options[j].kind == MOUNT_OPT_PROPAGATION && i-- == 0)
                        return mount_options[j].name;
        return NULL;
}

static void apply_mount_option(struct oci_mount *m, const struct mount_option *o)
{
        switch (o->kind) {
        case MOUNT_OPT_SET:
                m->flags |= o->value;
                m->clear_flags &= ~o->value;
                break;
        case MOUNT_OPT_CLEAR:
                m->flags &= ~o->value;
                m->clear_flags |= o->value;
                break;
        case MOUNT_OPT_BIND:
                /* "rbind" wins over "bind" in any order, as in runc and crun:
                 * a later "bind" must not drop the submounts. */
                if (m->bind != OCI_BIND_RECURSIVE)
                        m->bind = o->value & MS_REC ? OCI_BIND_RECURSIVE : OCI_BIND;
                break;
        case MOUNT_OPT_PROPAGATION:
                m->propagation = o->value;
                break;
        case MOUNT_OPT_ATTR_SET:
                m->attr_set |= o->value;
                m->attr_clr &= ~(uint64_t) o->value;
                break;
        case MOUNT_OPT_ATTR_CLEAR:
                m->attr_set &= ~(uint64_t) o->value;
                m->attr_clr |= o->value;
                break;
        case MOUNT_OPT_ATTR_ATIME:
                m->attr_set = (m->attr_set & ~(uint64_t) MOUNT_ATTR__ATIME) | o->value;
                m->attr_clr |= MOUNT_ATTR__ATIME;
                break;
        case MOUNT_OPT_IDMAP:
                m->idmap = true;
                m->idmap_recursive = o->value;
                break;
        case MOUNT_OPT_TMPCOPYUP:
                m->tmpcopyup = true;
                break;
        case MOUNT_OPT_NOTHING:
                break;
        }
}

/* ---- checks ---- */

int oci_check_absolute(const char *s, psrun_error *err)
{
        char buf[OCI_SHOWN_MAX];

        if (s[0] != '/')
                return psrun_error_set(err, EINVAL, "\"%s\" is not an absolute path",
                                       policy_escape(s, buf, sizeof(buf)));
        return 0;
}

int oci_check_not_empty(const char *s, psrun_error *err)
{
        return *s ? 0 : psrun_error_set(err, EINVAL, "must not be empty");
}

static int check_version(const char *s, psrun_error *err)
{
        char buf[OCI_SHOWN_MAX];

        /* Compatible within a major version, so any 1.x will do. */
        if (strncmp(s, "1.", 2) != 0 || s[2] < '0' || s[2] > '9')
                return psrun_error_set(err, EINVAL,
                                       "\"%s\" is not supported (psrun reads version 1.x)",
                                       policy_escape(s, buf, sizeof(buf)));
        return 0;
}

static int check_host_name(const char *s, psrun_error *err)
{
        if (strlen(s) > HOST_NAME_LIMIT)
                return psrun_error_set(err, EINVAL, "longer than %d characters", HOST_NAME_LIMIT);
        return 0;
}

static int check_env(const char *s, psrun_error *err)
{
        char buf[OCI_SHOWN_MAX];
        const char *eq = strchr(s, '=');

        if (!eq)
                return psrun_error_set(err, EINVAL, "\"%s\" is not NAME=value",
                                       policy_escape(s, buf, sizeof(buf)));
        if (eq == s)
                return psrun_error_set(err, EINVAL, "\"%s\" has an empty name",
                                       policy_escape(s, buf, sizeof(buf)));
        return 0;
}

static int cap_bit(const char *name, uint64_t *ret)
{
        cap_value_t cap;

        /* libcap also takes numbers and lower case; the spec spells CAP_*. */
        if (strncmp(name, "CAP_", 4) != 0 || cap_from_name(name, &cap) < 0 || cap < 0 || cap >= 64)
                return -EINVAL;
        *ret = 1ULL << cap;
        return 0;
}

/* ---- top level, process, mounts, hooks ---- */

#define OCI_STRUCT struct oci_console_size
static const struct oci_field console_size_fields[] = {
        {"height", OCI_F_INT, OCI_AT(height), OCI_U16, .required = true},
        {"width", OCI_F_INT, OCI_AT(width), OCI_U16, .required = true},
};
#undef OCI_STRUCT
static const struct oci_type console_size_type =
        OCI_TYPE(console_size_fields, struct oci_console_size);

#define OCI_STRUCT struct oci_user
static const struct oci_field user_fields[] = {
        {"uid", OCI_F_INT, OCI_AT(uid), OCI_U32, .required = true},
        {"gid", OCI_F_INT, OCI_AT(gid), OCI_U32, .required = true},
        {"umask", OCI_F_INT, OCI_AT(umask), OCI_RANGE(OCI_I_OPT_U64, 0, UINT32_MAX)},
        {"additionalGids", OCI_F_LIST, OCI_AT(additional_gids), OCI_COUNT(n_additional_gids),
         .item = &(const struct oci_field){.kind = OCI_F_INT, OCI_U32},
         .item_size = sizeof(uint32_t)},
};
#undef OCI_STRUCT
static const struct oci_type user_type = OCI_TYPE(user_fields, struct oci_user);

#define CAP_SET(json, member)                                                                      \
        {                                                                                          \
                json, OCI_F_BITS, OCI_AT(member), .bit = cap_bit, .what = "capability"             \
        }
#define OCI_STRUCT struct oci_capabilities
static const struct oci_field capabilities_fields[] = {
        CAP_SET("bounding", bounding),       CAP_SET("effective", effective),
        CAP_SET("inheritable", inheritable), CAP_SET("permitted", permitted),
        CAP_SET("ambient", ambient),
};
#undef OCI_STRUCT
static const struct oci_type capabilities_type =
        OCI_TYPE(capabilities_fields, struct oci_capabilities);

static int finish_rlimit(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_rlimit *rl = obj;
        char soft_path[OCI_PATH_MAX];

        if (rl->soft <= rl->hard)
                return 0;
        oci_join_path(soft_path, path, "soft");
        return oci_fail(w, oci_mark_of(w, node, "soft"), soft_path, EINVAL,
                        "%" PRIu64 " is above the hard limit %" PRIu64, rl->soft, rl->hard);
}

#define OCI_STRUCT struct oci_rlimit
static const struct oci_field rlimit_fields[] = {
        {"type", OCI_F_ENUM, OCI_AT(type), .required = true, .from_string = oci_rlimit_from_string,
         .name_at = oci_rlimit_name_at},
        {"soft", OCI_F_INT, OCI_AT(soft), OCI_U64, .required = true},
        {"hard", OCI_F_INT, OCI_AT(hard), OCI_U64, .required = true},
};
#undef OCI_STRUCT
static const struct oci_type rlimit_type =
        OCI_TYPE(rlimit_fields, struct oci_rlimit, .finish = finish_rlimit);

static int finish_process(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        const struct oci_process *p = obj;
        yaml_node_t *list = oci_child(w, node, "rlimits");
        char sub[OCI_PATH_MAX];
        size_t seen_at[RLIM_NLIMITS] = {0}; /* index + 1 */

        if (p->n_args == 0) {
                oci_join_path(sub, path, "args");
                return oci_fail(w, oci_mark_of(w, node, "args"), sub, EINVAL, "must not be empty");
        }
        if (!p->args[0][0]) {
                snprintf(sub, sizeof(sub), "%s.args[0]", path);
                return oci_fail(w, &oci_item(w, oci_child(w, node, "args"), 0)->start_mark, sub,
                                EINVAL, "the program must not be empty");
        }
        /* The spec: duplicated types MUST be an error. Types come from
         * rlimit_names[], so they are below RLIM_NLIMITS. */
        for (size_t i = 0; i < p->n_rlimits; i++) {
                int type = p->rlimits[i].type;
                if (!seen_at[type]) {
                        seen_at[type] = i + 1;
                        continue;
                }
                snprintf(sub, sizeof(sub), "%s.rlimits[%zu].type", path, i);
                return oci_fail(w, oci_mark_of(w, oci_item(w, list, i), "type"), sub, EINVAL,
                                "%s is already set by %s.rlimits[%zu]", oci_rlimit_to_string(type),
                                path, seen_at[type] - 1);
        }
        return 0;
}

#define OCI_STRUCT struct oci_process
static const struct oci_field process_fields[] = {
        {"terminal", OCI_F_BOOL, OCI_AT(terminal)},
        {"consoleSize", OCI_F_OBJECT, OCI_AT(console_size), .type = &console_size_type},
        {"user", OCI_F_STRUCT, OCI_AT(user), .type = &user_type},
        {"args", OCI_F_STRV, OCI_AT(args), OCI_COUNT(n_args), .required = true},
        {"env", OCI_F_STRV, OCI_AT(env), OCI_COUNT(n_env), .check = check_env},
        {"cwd", OCI_F_STRING, OCI_AT(cwd), .required = true, .check = oci_check_absolute},
        {"capabilities", OCI_F_OBJECT, OCI_AT(capabilities), .type = &capabilities_type},
        {"rlimits", OCI_F_LIST, OCI_AT(rlimits), OCI_COUNT(n_rlimits),
         OCI_LIST_OF(rlimit_type, struct oci_rlimit)},
        {"noNewPrivileges", OCI_F_BOOL, OCI_AT(no_new_privileges)},
        {"apparmorProfile", OCI_F_STRING, OCI_AT(apparmor_profile)},
        {"oomScoreAdj", OCI_F_INT, OCI_AT(oom_score_adj), OCI_RANGE(OCI_I_OPT_I64, -1000, 1000)},
        {"selinuxLabel", OCI_F_STRING, OCI_AT(selinux_label)},
        {"scheduler", OCI_F_OBJECT, OCI_AT(scheduler), .type = &oci_scheduler_type},
        {"ioPriority", OCI_F_OBJECT, OCI_AT(io_priority), .type = &oci_io_priority_type},
        {"execCPUAffinity", OCI_F_OBJECT, OCI_AT(exec_cpu_affinity),
         .type = &oci_cpu_affinity_type},
};
#undef OCI_STRUCT
static const struct oci_type process_type =
        OCI_TYPE(process_fields, struct oci_process, .finish = finish_process);

#define OCI_STRUCT struct oci_root
static const struct oci_field root_fields[] = {
        {"path", OCI_F_STRING, OCI_AT(path), .required = true, .check = oci_check_not_empty},
        {"readonly", OCI_F_BOOL, OCI_AT(readonly)},
};
#undef OCI_STRUCT
static const struct oci_type root_type = OCI_TYPE(root_fields, struct oci_root);

static int finish_mount(struct oci_walk *w, yaml_node_t *node, const char *path, void *obj)
{
        struct oci_mount *m = obj;
        size_t data_len = 0;

        for (size_t i = 0; i < m->n_options; i++) {
                const struct mount_option *o = find_mount_option(m->options[i]);
                if (o)
                        apply_mount_option(m, o);
                else
                        data_len += strlen(m->options[i]) + 1;
        }
        /* runc and crun treat type "bind" as a bind mount even without the
         * option; so does psrun. */
        if (m->bind == OCI_BIND_NONE && m->type && streq(m->type, "bind"))
                m->bind = OCI_BIND;
        if (data_len == 0)
                return 0;
        m->data = malloc(data_len);
        if (!m->data)
                return psrun_error_errno(w->err, ENOMEM, "%s", path);
        m->data[0] = '\0';
        for (size_t i = 0, o = 0; i < m->n_options; i++) {
                if (find_mount_option(m->options[i]))
                        continue;
                o += (size_t) sprintf(m->data + o, "%s%s", o ? "," : "", m->options[i]);
        }
        return 0;
}

static void release_mount(void *obj)
{
        struct oci_mount *m = obj;

        free(m->data);
        m->data = NULL;
}

#define OCI_STRUCT struct oci_mount
static const struct oci_field mount_fields[] = {
        {"destination", OCI_F_STRING, OCI_AT(destination), .required = true,
         .check = oci_check_absolute},
        {"type", OCI_F_STRING, OCI_AT(type)},
        {"source", OCI_F_STRING, OCI_AT(source)},
        {"options", OCI_F_STRV, OCI_AT(options), OCI_COUNT(n_options),
         .check = oci_check_not_empty},
        {"uidMappings", OCI_F_LIST, OCI_AT(uid_mappings), OCI_COUNT(n_uid_mappings),
         OCI_LIST_OF(oci_id_mapping_type, struct oci_id_mapping)},
        {"gidMappings", OCI_F_LIST, OCI_AT(gid_mappings), OCI_COUNT(n_gid_mappings),
         OCI_LIST_OF(oci_id_mapping_type, struct oci_id_mapping)},
};
#undef OCI_STRUCT
static const struct oci_type mount_type =
        OCI_TYPE(mount_fields, struct oci_mount, .finish = finish_mount, .release = release_mount);

#define OCI_STRUCT struct oci_hook
static const struct oci_field hook_fields[] = {
        {"path", OCI_F_STRING, OCI_AT(path), .required = true, .check = oci_check_absolute},
        {"args", OCI_F_STRV, OCI_AT(args), OCI_COUNT(n_args)},
        {"env", OCI_F_STRV, OCI_AT(env), OCI_COUNT(n_env), .check = check_env},
        {"timeout", OCI_F_INT, OCI_AT(timeout), OCI_RANGE(OCI_I_OPT_I64, 1, INT32_MAX)},
};
#undef OCI_STRUCT
static const struct oci_type hook_type = OCI_TYPE(hook_fields, struct oci_hook);

#define HOOK_LIST(json, kind)                                                                      \
        {                                                                                          \
                json, OCI_F_LIST, OCI_AT(lists[kind].hooks), OCI_COUNT(lists[kind].n),             \
                        OCI_LIST_OF(hook_type, struct oci_hook)                                    \
        }
#define OCI_STRUCT struct oci_hooks
static const struct oci_field hooks_fields[] = {
        HOOK_LIST("prestart", OCI_HOOK_PRESTART),
        HOOK_LIST("createRuntime", OCI_HOOK_CREATE_RUNTIME),
        HOOK_LIST("createContainer", OCI_HOOK_CREATE_CONTAINER),
        HOOK_LIST("startContainer", OCI_HOOK_START_CONTAINER),
        HOOK_LIST("poststart", OCI_HOOK_POSTSTART),
        HOOK_LIST("poststop", OCI_HOOK_POSTSTOP),
};
#undef OCI_STRUCT
static const struct oci_type hooks_type = OCI_TYPE(hooks_fields, struct oci_hooks);

#define OCI_STRUCT struct oci_config
static const struct oci_field config_fields[] = {
        {"ociVersion", OCI_F_STRING, OCI_AT(oci_version), .required = true, .check = check_version},
        {"root", OCI_F_STRUCT, OCI_AT(root), .required = true, .type = &root_type},
        {"process", OCI_F_OBJECT, OCI_AT(process), .type = &process_type},
        {"hostname", OCI_F_STRING, OCI_AT(hostname), .check = check_host_name},
        {"domainname", OCI_F_STRING, OCI_AT(domainname), .check = check_host_name},
        {"mounts", OCI_F_LIST, OCI_AT(mounts), OCI_COUNT(n_mounts),
         OCI_LIST_OF(mount_type, struct oci_mount)},
        {"hooks", OCI_F_STRUCT, OCI_AT(hooks), .type = &hooks_type},
        {"annotations", OCI_F_MAP, OCI_AT(annotations), OCI_COUNT(n_annotations)},
        {"linux", OCI_F_OBJECT, OCI_AT(linux_), .type = &oci_linux_type},
};
#undef OCI_STRUCT
static const struct oci_type config_type = OCI_TYPE(config_fields, struct oci_config);

/* ---- entry points ---- */

/* One document of `type` into obj (zeroed first, freed on failure). */
static int parse_typed(const char *name, const struct oci_type *type, const char *buf, size_t len,
                       void *obj, psrun_error *err)
{
        _cleanup_(yaml_document_delete) yaml_document_t doc = {0};
        psrun_error ignored;
        struct oci_walk w = {.name = name, .doc = &doc, .err = err ? err : &ignored};
        yaml_node_t *root;
        int r;

        memset(obj, 0, type->size);
        r = oci_load_root(&w, buf, len, &root);
        if (r >= 0)
                r = oci_parse_object(&w, type, root, "", obj);
        if (r < 0) {
                oci_free_object(type, obj);
                memset(obj, 0, type->size);
        }
        return r;
}

static int load_typed(const char *path, const struct oci_type *type, void *obj, psrun_error *err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        memset(obj, 0, type->size);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return psrun_error_errno(err, errno, "%.*s", OCI_NAME_SHOWN, path);
        r = read_all(fd, OCI_CONFIG_MAX_SIZE, &buf, &len);
        if (r == -EFBIG)
                return psrun_error_set(err, EFBIG, "%.*s: larger than %u MiB", OCI_NAME_SHOWN, path,
                                       OCI_CONFIG_MAX_SIZE >> 20);
        if (r < 0)
                return psrun_error_errno(err, r, "%.*s: read", OCI_NAME_SHOWN, path);
        return parse_typed(path, type, buf, len, obj, err);
}

int oci_config_parse(const char *buf, size_t len, struct oci_config *out, psrun_error *err)
{
        return parse_typed("config.json", &config_type, buf, len, out, err);
}

int oci_config_parse_named(const char *name, const char *buf, size_t len, struct oci_config *out,
                           psrun_error *err)
{
        return parse_typed(name, &config_type, buf, len, out, err);
}

int oci_config_load_file(const char *path, struct oci_config *out, psrun_error *err)
{
        return load_typed(path, &config_type, out, err);
}

int oci_process_parse(const char *name, const char *buf, size_t len, struct oci_process *out,
                      psrun_error *err)
{
        return parse_typed(name, &process_type, buf, len, out, err);
}

int oci_process_load_file(const char *path, struct oci_process *out, psrun_error *err)
{
        return load_typed(path, &process_type, out, err);
}

void oci_process_free(struct oci_process *process)
{
        if (!process)
                return;
        oci_free_object(&process_type, process);
        *process = (struct oci_process){0};
}

int oci_resources_parse(const char *name, const char *buf, size_t len, struct oci_resources *out,
                        psrun_error *err)
{
        return parse_typed(name, &oci_resources_type, buf, len, out, err);
}

void oci_resources_free(struct oci_resources *resources)
{
        if (!resources)
                return;
        oci_free_object(&oci_resources_type, resources);
        *resources = (struct oci_resources){0};
}

void oci_config_free(struct oci_config *config)
{
        if (!config)
                return;
        oci_free_object(&config_type, config);
        *config = (struct oci_config){0};
}
