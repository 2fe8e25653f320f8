/* SPDX-License-Identifier: MIT */
/*
 * linux.resources.devices: which device nodes the container may open (r, w)
 * or create (m). The rules come in order and later ones win; a container's
 * rules start from "deny everything", as runc's do, on both versions:
 *
 *  - v1: the devices controller's own files. "a" into devices.deny first,
 *    then each rule into devices.allow or devices.deny. The kernel keeps a
 *    default and a list of exceptions, so a narrow deny after a wide allow
 *    removes only an exception of exactly that shape (kernel semantics).
 *  - v2: there are no files; a BPF_PROG_TYPE_CGROUP_DEVICE program attached
 *    to the cgroup decides each access. It is generated here, in C, from the
 *    rules, read as v1 reads them (see build_program); no rule: deny.
 */
#include "runtime/cgroup/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/cgroup/resources.h"

#define FIELD "linux.resources.devices"

static bool any_number(const struct oci_opt_i64 *v)
{
        return !v->set || v->value < 0;
}

static bool is_wildcard(const struct oci_device_rule *rule)
{
        return rule->type == 'a' && any_number(&rule->major) && any_number(&rule->minor) &&
               strchr(rule->access, 'r') && strchr(rule->access, 'w') && strchr(rule->access, 'm');
}

static void number(char *buf, size_t size, const struct oci_opt_i64 *v)
{
        if (any_number(v))
                snprintf(buf, size, "*");
        else
                snprintf(buf, size, "%" PRId64, v->value);
}

/* ---- v1 ------------------------------------------------------------------ */

int cg_v1_apply_devices(const char *dir, const struct oci_device_rule *rules, size_t n,
                        psrun_error *err)
{
        int r = cg_res_write(FIELD, dir, "devices.deny", "a", err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const struct oci_device_rule *rule = &rules[i];
                const char *file = rule->allow ? "devices.allow" : "devices.deny";
                char field[64], major[24], minor[24], line[80];
                snprintf(field, sizeof(field), FIELD "[%zu]", i);
                /* "a" resets the whole list whatever follows it in v1; a
                 * narrower "all types" rule is one for each type. */
                if (is_wildcard(rule)) {
                        r = cg_res_write(field, dir, file, "a", err);
                        if (r < 0)
                                return r;
                        continue;
                }
                number(major, sizeof(major), &rule->major);
                number(minor, sizeof(minor), &rule->minor);
                static const char both[] = "bc";
                for (const char *t = rule->type == 'a' ? both
                                                       : (const char[]){(char) rule->type, 0};
                     *t; t++) {
                        snprintf(line, sizeof(line), "%c %s:%s %s", *t, major, minor, rule->access);
                        r = cg_res_write(field, dir, file, line, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* ---- v2: the program ------------------------------------------------------ */

/* Registers: r1 the context (struct bpf_cgroup_dev_ctx), r3 the device type,
 * r4 the access bits not decided yet, r5 major, r6 minor, r7 scratch. */
enum { R0, R1, R2, R3, R4, R5, R6, R7 };

#define MAX_INSNS 4096

struct prog {
        struct bpf_insn insn[MAX_INSNS];
        size_t n;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
        if (p->n < MAX_INSNS)
                p->insn[p->n] = (struct bpf_insn){
                        .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
        p->n++;
}

/* if (dst != imm) goto the end of the rule: patched when the rule's length
 * is known. 32-bit compares, so majors past 2^31 aren't sign-extended. */
static void emit_skip_unless(struct prog *p, uint8_t op, uint8_t dst, int32_t imm, size_t *fix,
                             size_t *n_fix)
{
        fix[(*n_fix)++] = p->n;
        emit(p, BPF_JMP32 | op | BPF_K, dst, 0, 0, imm);
}

static int access_bits(const char *access)
{
        int bits = 0;
        for (const char *c = access; *c; c++)
                bits |= *c == 'r'   ? BPF_DEVCG_ACC_READ
                        : *c == 'w' ? BPF_DEVCG_ACC_WRITE
                        : *c == 'm' ? BPF_DEVCG_ACC_MKNOD
                                    : 0;
        return bits;
}

static void emit_return(struct prog *p, int value)
{
        emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, value);
        emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/*
 * Rules are checked last to first, and the first that matches the device
 * decides, the way the v1 kernel reads its lists: a deny that names any of
 * the access bits asked for denies; an allow must name all of them (one
 * rule, as in v1: "c 1:3 r" and "c 1:3 w" don't make an O_RDWR). No rule:
 * deny, the implicit first rule.
 */
static int build_program(struct prog *p, const struct oci_device_rule *rules, size_t n)
{
        emit(p, BPF_LDX | BPF_W | BPF_MEM, R2, R1, 0, 0); /* access_type */
        emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R3, R2, 0, 0);
        emit(p, BPF_ALU64 | BPF_AND | BPF_K, R3, 0, 0, 0xffff); /* type */
        emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R4, R2, 0, 0);
        emit(p, BPF_ALU64 | BPF_RSH | BPF_K, R4, 0, 0, 16); /* access */
        emit(p, BPF_LDX | BPF_W | BPF_MEM, R5, R1, 4, 0);   /* major */
        emit(p, BPF_LDX | BPF_W | BPF_MEM, R6, R1, 8, 0);   /* minor */
        for (size_t i = n; i-- > 0;) {
                const struct oci_device_rule *rule = &rules[i];
                int access = access_bits(rule->access);
                size_t fix[8], n_fix = 0;
                if (rule->type == 'b' || rule->type == 'c')
                        emit_skip_unless(p, BPF_JNE, R3,
                                         rule->type == 'b' ? BPF_DEVCG_DEV_BLOCK
                                                           : BPF_DEVCG_DEV_CHAR,
                                         fix, &n_fix);
                if (!any_number(&rule->major))
                        emit_skip_unless(p, BPF_JNE, R5, (int32_t) (uint32_t) rule->major.value,
                                         fix, &n_fix);
                if (!any_number(&rule->minor))
                        emit_skip_unless(p, BPF_JNE, R6, (int32_t) (uint32_t) rule->minor.value,
                                         fix, &n_fix);
                emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R7, R4, 0, 0);
                if (rule->allow) {
                        /* r7 = the bits asked for that the rule doesn't give */
                        emit(p, BPF_ALU64 | BPF_AND | BPF_K, R7, 0, 0, ~access);
                        emit_skip_unless(p, BPF_JNE, R7, 0, fix, &n_fix);
                } else {
                        emit(p, BPF_ALU64 | BPF_AND | BPF_K, R7, 0, 0, access);
                        emit_skip_unless(p, BPF_JEQ, R7, 0, fix, &n_fix);
                }
                emit_return(p, rule->allow ? 1 : 0);
                if (p->n > MAX_INSNS)
                        return -E2BIG;
                for (size_t f = 0; f < n_fix; f++)
                        p->insn[fix[f]].off = (int16_t) (p->n - fix[f] - 1);
        }
        emit_return(p, 0);
        return p->n > MAX_INSNS ? -E2BIG : 0;
}

/* ---- v2: loading and attaching --------------------------------------------- */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
        return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int load_program(const struct prog *p, psrun_error *err)
{
        char log[4096];
        union bpf_attr attr = {
                .prog_type = BPF_PROG_TYPE_CGROUP_DEVICE,
                .insns = (uint64_t) (uintptr_t) p->insn,
                .insn_cnt = (uint32_t) p->n,
                .license = (uint64_t) (uintptr_t) "MIT",
        };
        int fd = (int) sys_bpf(BPF_PROG_LOAD, &attr);
        if (fd >= 0)
                return fd;
        int e = errno;
        if (e != EINVAL && e != EACCES)
                return psrun_error_errno(err, e, FIELD ": load the BPF device filter");
        /* The verifier says why; its last line is the reason. */
        attr.log_buf = (uint64_t) (uintptr_t) log;
        attr.log_size = sizeof(log);
        attr.log_level = 1;
        log[0] = '\0';
        fd = (int) sys_bpf(BPF_PROG_LOAD, &attr);
        if (fd >= 0)
                return fd;
        log[sizeof(log) - 1] = '\0';
        size_t len = strlen(log);
        while (len > 0 && log[len - 1] == '\n')
                log[--len] = '\0';
        /* The reason is the line before the "processed N insns" summary. */
        char *last = strrchr(log, '\n');
        if (last && strncmp(last + 1, "processed ", 10) == 0) {
                *last = '\0';
                last = strrchr(log, '\n');
        }
        return psrun_error_set(err, e, FIELD ": the kernel refused the BPF device filter: %s (%s)",
                               strerror(e), last ? last + 1 : log);
}

int cg_v2_apply_devices(const char *dir, const struct oci_device_rule *rules, size_t n,
                        psrun_error *err)
{
        _cleanup_free_ struct prog *p = calloc(1, sizeof(*p));
        if (!p)
                return psrun_error_errno(err, ENOMEM, FIELD);
        if (build_program(p, rules, n) < 0)
                return psrun_error_set(err, E2BIG,
                                       FIELD ": %zu rules are too many for one BPF "
                                             "program",
                                       n);
        _cleanup_close_ int cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cgfd < 0)
                return psrun_error_errno(err, errno, FIELD ": open %s", dir);

        /* The programs attached now (an earlier create or update). */
        uint32_t old_ids[64];
        union bpf_attr query = {
                .query.target_fd = (uint32_t) cgfd,
                .query.attach_type = BPF_CGROUP_DEVICE,
                .query.prog_ids = (uint64_t) (uintptr_t) old_ids,
                .query.prog_cnt = ARRAY_SIZE(old_ids),
        };
        if (sys_bpf(BPF_PROG_QUERY, &query) < 0)
                return psrun_error_errno(err, errno, FIELD ": query the BPF programs of %s", dir);
        uint32_t n_old = query.query.prog_cnt < ARRAY_SIZE(old_ids) ? query.query.prog_cnt
                                                                    : ARRAY_SIZE(old_ids);

        _cleanup_close_ int progfd = load_program(p, err);
        if (progfd < 0)
                return progfd;
        /* The new program goes in before the old ones come out: with several
         * attached every one must allow an access, so in between the rules
         * are stricter than either set, never looser. */
        union bpf_attr attach = {
                .target_fd = (uint32_t) cgfd,
                .attach_bpf_fd = (uint32_t) progfd,
                .attach_type = BPF_CGROUP_DEVICE,
                .attach_flags = BPF_F_ALLOW_MULTI,
        };
        if (sys_bpf(BPF_PROG_ATTACH, &attach) < 0) {
                /* A program attached without BPF_F_ALLOW_MULTI can only be
                 * replaced by one attached the same way. */
                int e = errno;
                attach.attach_flags = 0;
                if (e != EPERM || n_old != 1 || sys_bpf(BPF_PROG_ATTACH, &attach) < 0)
                        return psrun_error_errno(err, e,
                                                 FIELD ": attach the BPF device filter to "
                                                       "%s",
                                                 dir);
                return 0;
        }
        for (uint32_t i = 0; i < n_old; i++) {
                union bpf_attr get = {.prog_id = old_ids[i]};
                _cleanup_close_ int oldfd = (int) sys_bpf(BPF_PROG_GET_FD_BY_ID, &get);
                if (oldfd < 0) {
                        if (errno == ENOENT)
                                continue;
                        return psrun_error_errno(
                                err, errno, FIELD ": find the old BPF device filter of %s", dir);
                }
                union bpf_attr detach = {
                        .target_fd = (uint32_t) cgfd,
                        .attach_bpf_fd = (uint32_t) oldfd,
                        .attach_type = BPF_CGROUP_DEVICE,
                };
                if (sys_bpf(BPF_PROG_DETACH, &detach) < 0 && errno != ENOENT)
                        return psrun_error_errno(
                                err, errno, FIELD ": detach the old BPF device filter of %s", dir);
        }
        return 0;
}
