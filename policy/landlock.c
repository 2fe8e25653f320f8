/* SPDX-License-Identifier: MIT */
/*
 * Landlock through raw syscalls: glibc has no wrappers, and the build
 * machine's <linux/landlock.h> may predate the running kernel, so the rights
 * and the ruleset attribute of newer ABIs are spelled out here.
 */
#include "policy/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* The ABI 6 layout of struct landlock_ruleset_attr. Older kernels accept the
 * longer struct as long as the fields they do not know are zero. */
struct ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

#define ACCESS_FS_V1                                                                               \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
         LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |                              \
         LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                          \
         LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |                              \
         LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |                              \
         LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |                            \
         LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that make sense on a single file; the kernel rejects a rule on a
 * non-directory that asks for anything else. */
#define ACCESS_FS_FILE                                                                             \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
         LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                              \
         LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define ACCESS_FS_READ_EXECUTE                                                                     \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* What each ABI version added, in order. Network rights (v4) are left out on
 * purpose: the network namespace decides what the sandbox can reach. */
static const struct {
        int abi;
        uint64_t access_fs;
        uint64_t scoped;
} abi_additions[] = {
        {1, ACCESS_FS_V1, 0},
        {2, LANDLOCK_ACCESS_FS_REFER, 0},
        {3, LANDLOCK_ACCESS_FS_TRUNCATE, 0},
        {5, LANDLOCK_ACCESS_FS_IOCTL_DEV, 0},
        /* Keeps the sandbox from signalling, or connecting to abstract unix
         * sockets of, processes outside its Landlock domain: psrun's init and
         * anything else sharing the pid or network namespace from outside. */
        {6, 0, LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET},
};

uint64_t landlock_fs_access_for_abi(int abi)
{
        uint64_t access = 0;

        for (size_t i = 0; i < ARRAY_SIZE(abi_additions); i++)
                if (abi >= abi_additions[i].abi)
                        access |= abi_additions[i].access_fs;
        return access;
}

uint64_t landlock_scope_for_abi(int abi)
{
        uint64_t scoped = 0;

        for (size_t i = 0; i < ARRAY_SIZE(abi_additions); i++)
                if (abi >= abi_additions[i].abi)
                        scoped |= abi_additions[i].scoped;
        return scoped;
}

int landlock_abi(void)
{
        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

        /* ENOSYS: not built in; EOPNOTSUPP: built in but not enabled at boot. */
        return abi > 0 ? (int) abi : 0;
}

static int plan_add_rule(struct landlock_plan *plan, const char *path, uint64_t access,
                         psrun_error *err)
{
        if (!path || path[0] != '/')
                return psrun_error_set(err, EINVAL, "landlock: path '%s' is not absolute",
                                       path ? path : "(null)");
        char *copy = strdup(path);
        if (!copy)
                return psrun_error_errno(err, ENOMEM, "landlock: rule for %s", path);
        plan->rules[plan->n_rules++] = (struct landlock_path_rule){
                .path = copy,
                .access = access,
        };
        return 0;
}

int landlock_plan_default(struct landlock_plan *plan, const char *const *writable, psrun_error *err)
{
        size_t n_writable = 0;
        int r;

        if (!plan)
                return psrun_error_set(err, EINVAL, "landlock: no plan");
        *plan = (struct landlock_plan){.ruleset_fd = -1};

        int abi = landlock_abi();
        if (abi <= 0)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "landlock: not supported by this kernel (or not enabled "
                                       "in the lsm= boot parameter)");

        while (writable && writable[n_writable])
                n_writable++;

        struct ruleset_attr attr = {
                .handled_access_fs = landlock_fs_access_for_abi(abi),
                .handled_access_net = 0,
                .scoped = landlock_scope_for_abi(abi),
        };

        plan->abi = abi;
        plan->rules = calloc(n_writable + 1, sizeof(*plan->rules));
        if (!plan->rules)
                return psrun_error_errno(err, ENOMEM, "landlock: plan");

        /* Everything may be read and executed: the mount namespace already
         * decides what exists; Landlock's job is to confine writes. */
        r = plan_add_rule(plan, "/", ACCESS_FS_READ_EXECUTE, err);
        for (size_t i = 0; r >= 0 && i < n_writable; i++)
                r = plan_add_rule(plan, writable[i], attr.handled_access_fs, err);
        if (r < 0) {
                landlock_plan_free(plan);
                return r;
        }

        /* Created here, in the parent, so that a kernel refusing the ruleset
         * is reported with a message before anything is cloned. The fd is
         * O_CLOEXEC by construction. */
        long fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (fd < 0) {
                r = psrun_error_errno(err, errno, "landlock: create ruleset (ABI %d)", abi);
                landlock_plan_free(plan);
                return r;
        }
        plan->ruleset_fd = (int) fd;
        return 0;
}

void landlock_plan_free(struct landlock_plan *plan)
{
        if (!plan)
                return;
        for (size_t i = 0; i < plan->n_rules; i++)
                free((char *) plan->rules[i].path);
        free(plan->rules);
        if (plan->ruleset_fd >= 0)
                close(plan->ruleset_fd);
        *plan = (struct landlock_plan){.ruleset_fd = -1};
}

/* Async-signal-safe: open, fstat, syscall, close. */
static int apply_rule(int ruleset_fd, const struct landlock_path_rule *rule)
{
        struct landlock_path_beneath_attr beneath = {.allowed_access = rule->access};
        struct stat st;
        int r = 0;

        int fd = open(rule->path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                /* Writable paths are a fixed list (/dev, rw mounts, ...); one
                 * this sandbox does not have is nothing to grant. */
                return errno == ENOENT ? 0 : -errno;

        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        if (!S_ISDIR(st.st_mode))
                beneath.allowed_access &= ACCESS_FS_FILE;

        /* An empty grant is refused by the kernel (ENOMSG) and grants nothing. */
        if (beneath.allowed_access != 0) {
                beneath.parent_fd = fd;
                if (syscall(__NR_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH,
                            &beneath, 0) < 0)
                        r = -errno;
        }
        close(fd);
        return r;
}

int landlock_plan_apply(const struct landlock_plan *plan, int *failed_rule)
{
        if (failed_rule)
                *failed_rule = -1;
        if (!plan || plan->ruleset_fd < 0)
                return -EINVAL;

        for (size_t i = 0; i < plan->n_rules; i++) {
                int r = apply_rule(plan->ruleset_fd, &plan->rules[i]);
                if (r < 0) {
                        if (failed_rule)
                                *failed_rule = (int) i;
                        return r;
                }
        }

        /* From here on the process and every child it creates are confined;
         * the ruleset fd stays open (O_CLOEXEC) until execve closes it. */
        if (syscall(__NR_landlock_restrict_self, plan->ruleset_fd, plan->restrict_flags) < 0)
                return -errno;
        return 0;
}
