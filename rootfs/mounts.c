/* SPDX-License-Identifier: MIT */
#include "rootfs/mounts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/names.h"

static const char *keep_string(struct rootfs_plan *plan, const char *s, size_t len)
{
        if (!s)
                return NULL;
        if (plan->n_strings == plan->cap_strings) {
                size_t cap = plan->cap_strings ? plan->cap_strings * 2 : 64;
                char **n = realloc(plan->strings, cap * sizeof(*n));
                if (!n)
                        return NULL;
                plan->strings = n;
                plan->cap_strings = cap;
        }
        char *copy = malloc(len + 1);
        if (!copy)
                return NULL;
        memcpy(copy, s, len);
        copy[len] = '\0';
        plan->strings[plan->n_strings++] = copy;
        return copy;
}

#define KEEP(field, len)                                                                           \
        do {                                                                                       \
                if (step->field) {                                                                 \
                        copy.field = keep_string(plan, step->field, (len));                        \
                        if (!copy.field)                                                           \
                                return -ENOMEM;                                                    \
                }                                                                                  \
        } while (0)

int rootfs_plan_add(struct rootfs_plan *plan, const struct mount_step *step)
{
        if (plan->n_steps >= ROOTFS_MAX_STEPS)
                return -E2BIG;
        if (plan->n_steps == plan->cap_steps) {
                size_t cap = plan->cap_steps ? plan->cap_steps * 2 : 64;
                struct mount_step *n = realloc(plan->steps, cap * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                plan->steps = n;
                plan->cap_steps = cap;
        }
        struct mount_step copy = *step;
        KEEP(source, strlen(step->source));
        KEEP(target, strlen(step->target));
        KEEP(fstype, strlen(step->fstype));
        KEEP(idmap_uids, strlen(step->idmap_uids));
        KEEP(idmap_gids, strlen(step->idmap_gids));
        KEEP(idmap_userns, strlen(step->idmap_userns));
        if (step->op == MOUNT_OP_WRITE)
                KEEP(data, step->data_len);
        else
                KEEP(data, strlen(step->data));
        plan->steps[plan->n_steps++] = copy;
        return 0;
}

int rootfs_plan_set_source(struct rootfs_plan *plan, size_t index, const char *source)
{
        const char *copy = keep_string(plan, source, strlen(source));
        if (!copy)
                return -ENOMEM;
        plan->steps[index].source = copy;
        return 0;
}

static bool plan_creates(const struct rootfs_plan *plan, const char *path)
{
        for (size_t i = 0; i < plan->n_steps; i++) {
                const struct mount_step *s = &plan->steps[i];
                if ((s->op == MOUNT_OP_MKDIR || s->op == MOUNT_OP_SYMLINK) &&
                    strcmp(s->target, path) == 0)
                        return true;
        }
        return false;
}

int rootfs_plan_mkdir_p(struct rootfs_plan *plan, const char *path, mode_t mode)
{
        _cleanup_free_ char *buf = strdup(path);
        if (!buf)
                return -ENOMEM;
        /* Walk "/a/b/c" as "/a", "/a/b", "/a/b/c". */
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                *p = '\0';
                if (!plan_creates(plan, buf)) {
                        struct mount_step s = {.op = MOUNT_OP_MKDIR, .target = buf, .mode = mode};
                        int r = rootfs_plan_add(plan, &s);
                        if (r < 0)
                                return r;
                }
                *p = saved;
                if (saved == '\0')
                        break;
        }
        return 0;
}

void rootfs_plan_free(struct rootfs_plan *plan)
{
        if (!plan)
                return;
        for (size_t i = 0; i < plan->n_strings; i++)
                free(plan->strings[i]);
        free(plan->strings);
        free(plan->steps);
        rootfs_overlay_free(plan->overlay);
        memset(plan, 0, sizeof(*plan));
}

bool rootfs_plan_mounts_cgroupfs(const struct rootfs_plan *plan)
{
        for (size_t i = 0; i < plan->n_steps; i++) {
                const struct mount_step *s = &plan->steps[i];
                if (s->op == MOUNT_OP_MOUNT && s->fstype &&
                    (streq(s->fstype, "cgroup") || streq(s->fstype, "cgroup2")))
                        return true;
        }
        return false;
}

void mount_step_describe(const struct mount_step *s, char *buf, size_t len)
{
        const char *src = s->source ? s->source : "";
        /* Show host paths as the user wrote them, not under /.oldroot. */
        size_t pre = strlen(ROOTFS_OLDROOT);
        if (strncmp(src, ROOTFS_OLDROOT, pre) == 0 && (src[pre] == '/' || src[pre] == '\0'))
                src = src[pre] ? src + pre : "/";

        switch (s->op) {
        case MOUNT_OP_MKDIR:
                snprintf(buf, len, "mkdir %s", s->target);
                break;
        case MOUNT_OP_MKFILE:
                snprintf(buf, len, "create %s", s->target);
                break;
        case MOUNT_OP_WRITE:
                snprintf(buf, len, "%s %s", s->existing ? "write" : "create", s->target);
                break;
        case MOUNT_OP_MKNOD:
                snprintf(buf, len, "mknod %s", s->target);
                break;
        case MOUNT_OP_SYMLINK:
                snprintf(buf, len, "symlink %s -> %s", s->target, src);
                break;
        case MOUNT_OP_BIND:
                if (s->node)
                        snprintf(buf, len, "make device %s", s->target);
                else
                        snprintf(buf, len, "bind %s on %s", src, s->target);
                break;
        case MOUNT_OP_MOUNT:
                if (s->fstype)
                        snprintf(buf, len, "mount %s on %s", s->fstype, s->target);
                else
                        snprintf(buf, len, "set propagation of %s", s->target);
                break;
        case MOUNT_OP_MASK:
                snprintf(buf, len, "mask %s", s->target);
                break;
        case MOUNT_OP_SETATTR:
                snprintf(buf, len, "set mount flags on %s", s->target);
                break;
        case MOUNT_OP_DETACH:
                snprintf(buf, len, "detach %s", s->target);
                break;
        default:
                snprintf(buf, len, "step on %s", s->target ? s->target : "?");
                break;
        }
}
