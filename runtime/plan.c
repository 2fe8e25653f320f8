/* SPDX-License-Identifier: MIT */
/* The plan's lifetime: an empty plan, and freeing what a planner put in it. */
#include "runtime/plan.h"

#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "netns/netns.h"
#include "rootfs/rootfs.h"

void plan_init(struct plan *p)
{
        memset(p, 0, sizeof(*p));
        p->join_pidfd = -1;
        p->private_resolv_fd = -1;
        p->console_fd = -1;
        p->exec_fifo_fd = -1;
        p->landlock.ruleset_fd = -1;
        p->personality = 0xffffffffUL;
        p->net.lease_fd = -1;
        p->umask = 022;
}

void plan_free(struct plan *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < p->n_joins; i++)
                safe_close(p->joins[i].fd);
        safe_close(p->join_pidfd);
        safe_close(p->console_fd);
        safe_close(p->exec_fifo_fd);
        netns_release(&p->net);
        free(p->groups);
        free(p->hostname);
        free(p->session_keyring);
        free(p->domainname);
        free(p->rootfs_dir);
        free(p->workdir);
        strv_free(p->argv);
        strv_free(p->envp);
        rootfs_plan_free(&p->rootfs);
        image_hold_release(&p->image_hold);
        landlock_plan_free(&p->landlock);
        seccomp_program_free(&p->seccomp);
        seccomp_program_free(&p->seccomp_notify);
        plan_init(p);
}

struct cgroup_limits plan_limits_with(const struct plan *p, uint64_t extra_processes)
{
        return (struct cgroup_limits){
                .memory_bytes = p->reported.memory_bytes,
                .pids_max = p->reported.pids + extra_processes,
                .cpus = p->reported.cpus,
        };
}

struct cgroup_limits plan_limits_host_tasks(const struct plan *p, uint64_t extra_processes,
                                            unsigned base, unsigned per_process)
{
        struct cgroup_limits l = plan_limits_with(p, extra_processes);
        l.pids_max = base + per_process * l.pids_max;
        return l;
}

void plan_log_landlock_denials(struct plan *p)
{
        /* The command's denials only: not psrun's own execve, not the
         * domains the command nests in its own. */
        p->landlock.restrict_flags =
                LANDLOCK_LOG_SAME_EXEC_OFF | LANDLOCK_LOG_NEW_EXEC_ON | LANDLOCK_LOG_SUBDOMAINS_OFF;
}
