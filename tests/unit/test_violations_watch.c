/* SPDX-License-Identifier: MIT */
/*
 * Which audit records are whose (runtime/violations-watch.c): the host's
 * audit log holds every sandbox's and the host's own records; a command
 * gets those of the Landlock domain it created, and nothing else. Records
 * are written as the kernel does and come through a socket, as from the
 * audit log's multicast group.
 */
#include <criterion/criterion.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/audit.h"
#include "runtime/run.h"
#include "runtime/violations-watch.h"

#define OUR_UID (PSRUN_ID_BASE + 1000)

struct fixture {
        int sv[2];
        struct vwatch w;
        struct vwatch_target a, b;
        struct violations va, vb;
        struct vwatch_target *targets[2];
};

static void setup(struct fixture *f, enum policy_violations mode)
{
        memset(f, 0, sizeof(*f));
        cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, f->sv), 0);
        f->w.mode = mode;
        f->w.audit_fd = f->sv[1];
        f->w.landlock_audit = true;
        f->w.host_uid = OUR_UID;
        vwatch_target_init(&f->w, &f->a, &f->va, NULL);
        vwatch_target_init(&f->w, &f->b, &f->vb, NULL);
        /* Two commands of one session: their pids as the supervisor sees them. */
        vwatch_target_start(&f->w, &f->a, 1111, -1, 0);
        vwatch_target_start(&f->w, &f->b, 2222, -1, 0);
        f->targets[0] = &f->a;
        f->targets[1] = &f->b;
}

static void teardown(struct fixture *f)
{
        vwatch_target_close(&f->a);
        vwatch_target_close(&f->b);
        close(f->sv[0]);
        close(f->sv[1]);
}

static void record(struct fixture *f, int type, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void record(struct fixture *f, int type, const char *fmt, ...)
{
        char text[1024], buf[1200];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        cr_assert(n > 0 && (size_t) n < sizeof(text));
        struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf;
        *h = (struct nlmsghdr){.nlmsg_len = NLMSG_LENGTH((size_t) n),
                               .nlmsg_type = (uint16_t) type};
        memcpy(NLMSG_DATA(h), text, (size_t) n);
        cr_assert_eq(send(f->sv[0], buf, h->nlmsg_len, 0), (ssize_t) h->nlmsg_len);
}

static void access_rec(struct fixture *f, const char *domain, const char *path)
{
        record(f, AUDIT_TYPE_LANDLOCK_ACCESS,
               "audit(1.1:1): domain=%s blockers=fs.write_file path=\"%s\" dev=\"proc\" ino=1",
               domain, path);
}

static void allocated(struct fixture *f, const char *domain, int pid, unsigned uid)
{
        record(f, AUDIT_TYPE_LANDLOCK_DOMAIN,
               "audit(1.1:1): domain=%s status=allocated mode=enforcing pid=%d uid=%u "
               "exe=\"/usr/bin/psrun\" comm=\"psrun\"",
               domain, pid, uid);
}

static void pump(struct fixture *f)
{
        vwatch_on_audit(&f->w, f->targets, 2);
}

Test(violations_watch, a_commands_domain_is_the_one_its_creator_made)
{
        struct fixture f;
        setup(&f, POLICY_VIOLATIONS_SUMMARY);
        /* The domain's first record comes before the one naming its creator. */
        access_rec(&f, "a1", "/proc/2/oom_score_adj");
        allocated(&f, "a1", 1111, OUR_UID);
        access_rec(&f, "a1", "/proc/2/oom_score_adj");
        access_rec(&f, "b2", "/proc/3/attr/current");
        allocated(&f, "b2", 2222, OUR_UID);
        pump(&f);
        cr_assert_eq(f.va.n, 1);
        cr_expect_str_eq(f.va.list[0].what, "write_file /proc/2/oom_score_adj");
        cr_expect_eq(f.va.list[0].count, 2);
        cr_expect_eq(f.va.list[0].layer, VIOLATION_LANDLOCK);
        cr_assert_eq(f.vb.n, 1);
        cr_expect_str_eq(f.vb.list[0].what, "write_file /proc/3/attr/current");
        teardown(&f);
}

Test(violations_watch, other_sandboxes_and_the_hosts_records_are_not_ours)
{
        struct fixture f;
        setup(&f, POLICY_VIOLATIONS_SUMMARY);
        /* Another sandbox's command (pid 3333), a host process that happens
         * to have our command's pid but another uid, a record with no
         * allocation at all (its domain logged before we listened). */
        access_rec(&f, "c3", "/etc/shadow");
        allocated(&f, "c3", 3333, OUR_UID);
        access_rec(&f, "c3", "/etc/shadow");
        access_rec(&f, "d4", "/root/x");
        allocated(&f, "d4", 1111, 0);
        access_rec(&f, "d4", "/root/x");
        access_rec(&f, "e5", "/home/x");
        pump(&f);
        cr_expect_eq(f.va.n, 0, "got %s", f.va.n ? f.va.list[0].what : "");
        cr_expect_eq(f.vb.n, 0);
        /* The real domain of command a comes later and is still found. */
        allocated(&f, "a1", 1111, OUR_UID);
        access_rec(&f, "a1", "/usr/x");
        pump(&f);
        cr_assert_eq(f.va.n, 1);
        cr_expect_str_eq(f.va.list[0].what, "write_file /usr/x");
        teardown(&f);
}

Test(violations_watch, the_domains_last_record_counts_what_was_lost)
{
        struct fixture f;
        setup(&f, POLICY_VIOLATIONS_SUMMARY);
        access_rec(&f, "a1", "/proc/2/oom_score_adj");
        allocated(&f, "a1", 1111, OUR_UID);
        /* The kernel counted 5; two records came. */
        access_rec(&f, "a1", "/proc/2/oom_score_adj");
        record(&f, AUDIT_TYPE_LANDLOCK_DOMAIN,
               "audit(1.1:1): domain=a1 status=deallocated denials=5");
        pump(&f);
        cr_expect(f.a.domain_gone);
        cr_expect_eq(f.va.list[0].count, 2);
        cr_expect_eq(f.va.more, 3);
        /* finish does not wait for a domain that is gone already. */
        vwatch_target_finish(&f.w, &f.a, f.targets, 2);
        teardown(&f);
}

Test(violations_watch, a_blocker_list_and_a_signal_are_readable)
{
        struct fixture f;
        setup(&f, POLICY_VIOLATIONS_SUMMARY);
        allocated(&f, "a1", 1111, OUR_UID);
        record(&f, AUDIT_TYPE_LANDLOCK_ACCESS,
               "audit(1.1:1): domain=a1 blockers=fs.make_reg,fs.truncate path=\"/usr/new\" "
               "dev=\"vda\" ino=3");
        /* A signal to a process that is gone by now: no pid to show. */
        record(&f, AUDIT_TYPE_LANDLOCK_ACCESS,
               "audit(1.1:1): domain=a1 blockers=scope.signal opid=999999999 ocomm=\"x\"");
        pump(&f);
        cr_assert_eq(f.va.n, 2);
        cr_expect_str_eq(f.va.list[0].what, "make_reg,truncate /usr/new");
        cr_expect_str_eq(f.va.list[1].what, "signal");
        teardown(&f);
}

Test(violations_watch, unavailable_reasons_reach_every_result)
{
        struct fixture f;
        setup(&f, POLICY_VIOLATIONS_SUMMARY);
        snprintf(f.w.why[VIOLATION_APPARMOR], sizeof(f.w.why[0]), "no records");
        f.w.audit_fd = -1;
        vwatch_target_finish(&f.w, &f.a, f.targets, 2);
        vwatch_target_finish(&f.w, &f.b, f.targets, 2);
        cr_expect_str_eq(f.va.unavailable[VIOLATION_APPARMOR], "no records");
        cr_expect_str_eq(f.vb.unavailable[VIOLATION_APPARMOR], "no records");
        teardown(&f);
}
