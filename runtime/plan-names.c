/* SPDX-License-Identifier: MIT */
/*
 * Kernel names next to the plan (runtime/plan.h): namespaces by their OCI
 * linux.namespaces type, rlimits by their RLIMIT_* name. The child's error
 * text names them and the OCI config parser reads them. A file of its own so
 * that the parser and its fuzz targets link without the rest of the runtime.
 */
#include "runtime/plan.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>

#include "common/cleanup.h"
#include "common/names.h"

static const struct name_value namespace_names[] = {
        {"pid", CLONE_NEWPID},       {"network", CLONE_NEWNET}, {"mount", CLONE_NEWNS},
        {"ipc", CLONE_NEWIPC},       {"uts", CLONE_NEWUTS},     {"user", CLONE_NEWUSER},
        {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};

const char *oci_namespace_to_string(int clone_flag)
{
        return name_value_to_string(namespace_names, ARRAY_SIZE(namespace_names), clone_flag);
}

int oci_namespace_from_string(const char *name)
{
        return name_value_from_string(namespace_names, ARRAY_SIZE(namespace_names), name);
}

const char *oci_namespace_name_at(int i)
{
        return (size_t) i < ARRAY_SIZE(namespace_names) ? namespace_names[i].name : NULL;
}

static const struct name_value rlimit_names[] = {
        {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
        {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
        {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
        {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
        {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
        {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
        {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
        {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

const char *oci_rlimit_to_string(int resource)
{
        return name_value_to_string(rlimit_names, ARRAY_SIZE(rlimit_names), resource);
}

int oci_rlimit_from_string(const char *name)
{
        return name_value_from_string(rlimit_names, ARRAY_SIZE(rlimit_names), name);
}

const char *oci_rlimit_name_at(int i)
{
        return (size_t) i < ARRAY_SIZE(rlimit_names) ? rlimit_names[i].name : NULL;
}
