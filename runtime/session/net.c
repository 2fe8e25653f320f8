/* SPDX-License-Identifier: MIT */
/* A session supervisor's networks (runtime/session/net.h). */
#include "runtime/session/net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/plan.h"

static int write_resolv(struct install_net *in, const char *state_dir, psrun_error *err)
{
        if ((size_t) snprintf(in->resolv_path, sizeof(in->resolv_path), "%s/resolv-%s", state_dir,
                              in->plan.id) >= sizeof(in->resolv_path))
                return psrun_error_set(err, ENAMETOOLONG, "install: network: %s is too long",
                                       state_dir);
        _cleanup_close_ int fd =
                open(in->resolv_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                int e = errno;
                in->resolv_path[0] = '\0';
                return psrun_error_errno(err, e, "install: network: create resolv.conf");
        }
        /* Readable by the sandbox's user (we run with umask 077). */
        if (fchmod(fd, 0644) < 0)
                return psrun_error_errno(err, errno, "install: network: chmod resolv.conf");
        int r = write_all(fd, in->plan.resolv_conf, strlen(in->plan.resolv_conf));
        if (r < 0)
                return psrun_error_errno(err, r, "install: network: write resolv.conf");
        /* A detached read-only copy the child attaches over the sandbox's
         * /etc/resolv.conf (runtime/child.c, step_private_mounts). */
        in->resolv_tree = open_tree(AT_FDCWD, in->resolv_path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (in->resolv_tree < 0)
                return psrun_error_errno(err, errno, "install: network: open_tree resolv.conf");
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                              MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
        if (mount_setattr(in->resolv_tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return psrun_error_errno(err, errno, "install: network: resolv.conf read-only");
        return 0;
}

int install_net_prepare(const struct policy *pol, const char *state_dir, struct install_net **ret,
                        psrun_error *err)
{
        *ret = NULL;
        if (pol->install_network == POLICY_NETWORK_NONE)
                return 0;
        struct install_net *in = calloc(1, sizeof(*in));
        if (!in)
                return psrun_error_errno(err, ENOMEM, "install: network");
        in->resolv_tree = -1;
        in->net = (struct netns_live) NETNS_LIVE_INIT;
        /* The plan borrows the policy's lists, which live as long as pol. */
        int r = plan_install_network(pol, &in->plan, err);
        if (r >= 0)
                r = netns_lease(&in->plan, err);
        if (r >= 0)
                r = write_resolv(in, state_dir, err);
        if (r < 0) {
                install_net_free(in, NULL);
                return psrun_error_prefix(err, "install_network");
        }
        *ret = in;
        return 0;
}

int install_net_start(struct install_net *in, pid_t pid, psrun_error *err)
{
        int r = netns_up(&in->plan, pid, &in->net, err);
        return r < 0 ? psrun_error_prefix(err, "install_network") : r;
}

void install_net_free(struct install_net *in, struct netns_stats *stats)
{
        if (!in)
                return;
        /* The table goes only now: until the network's processes are
         * gone, it is what confines them. */
        netns_down(&in->net, stats);
        netns_live_close(&in->net);
        netns_release(&in->plan);
        if (in->resolv_path[0])
                (void) unlink(in->resolv_path);
        safe_close(in->resolv_tree);
        free(in);
}
