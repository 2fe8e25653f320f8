/* SPDX-License-Identifier: MIT */
/*
 * The audit record parser (policy/audit.c), on records written the way the
 * kernel formats them (security/landlock/audit.c, security/lsm_audit.c,
 * security/apparmor/audit.c), hostile ones first: the paths in a record are
 * the sandbox's to choose.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/audit.h"

static int parse(int type, const char *text, struct audit_record *rec)
{
        return audit_parse(type, text, strlen(text), rec);
}

Test(audit, landlock_access_with_a_path)
{
        struct audit_record rec;
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1729738800.268:30): domain=195ba459b blockers=fs.write_file "
                           "path=\"/proc/2/oom_score_adj\" dev=\"proc\" ino=12345",
                           &rec),
                     0);
        cr_expect_eq(rec.kind, AUDIT_KIND_LANDLOCK_ACCESS);
        cr_expect_eq(rec.domain, 0x195ba459bULL);
        cr_expect_str_eq(rec.blockers, "fs.write_file");
        cr_expect_str_eq(rec.object, "/proc/2/oom_score_adj");
}

Test(audit, landlock_access_hex_name_and_signal)
{
        struct audit_record rec;
        /* "/srv/a b<newline>\"" is printed as hex: it holds a space, a
         * newline and a quote. */
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1.2:3): domain=10 blockers=fs.make_reg,fs.truncate "
                           "path=2F7372762F6120620A22 dev=\"tmpfs\" ino=2",
                           &rec),
                     0);
        cr_expect_str_eq(rec.blockers, "fs.make_reg,fs.truncate");
        cr_expect_str_eq(rec.object, "/srv/a b?\"", "control characters are shown as ?");
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1.2:3): domain=10 blockers=fs.remove_file name=\"x.txt\" "
                           "dev=\"vda\" ino=7",
                           &rec),
                     0);
        cr_expect_str_eq(rec.object, "x.txt");
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1.2:3): domain=10 blockers=scope.signal opid=4242 ocomm=\"init\"",
                           &rec),
                     0);
        cr_expect_str_eq(rec.blockers, "scope.signal");
        cr_expect_eq(rec.object_pid, 4242);
        cr_expect_str_eq(rec.object, "");
}

Test(audit, a_path_cannot_forge_the_domain)
{
        struct audit_record rec;
        /* A file named ` domain=1 ` comes as hex, and only the first key is
         * the domain anyway. */
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1.2:3): domain=abc blockers=fs.write_file "
                           "path=20646F6D61696E3D3120 domain=1",
                           &rec),
                     0);
        cr_expect_eq(rec.domain, 0xabc);
        cr_expect_str_eq(rec.object, " domain=1 ");
        /* A record whose first key is not the domain is not understood. */
        cr_expect_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1.2:3): path=\"/x\" domain=abc blockers=fs.write_file", &rec),
                     -EBADMSG);
        cr_expect_eq(rec.kind, AUDIT_KIND_OTHER);
}

Test(audit, landlock_domain_records)
{
        struct audit_record rec;
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_DOMAIN,
                           "audit(1.2:3): domain=195ba459b status=allocated mode=enforcing "
                           "pid=4321 uid=1879049192 exe=\"/usr/local/bin/psrun\" comm=\"psrun\"",
                           &rec),
                     0);
        cr_expect_eq(rec.kind, AUDIT_KIND_LANDLOCK_DOMAIN);
        cr_expect(rec.allocated);
        cr_expect_eq(rec.pid, 4321);
        cr_expect_eq(rec.uid, 0x70000000U + 1000);
        /* The creator's exe is psrun's to choose, never a key of ours. */
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_DOMAIN,
                           "audit(1.2:3): domain=5 status=allocated mode=enforcing pid=7 uid=0 "
                           "exe=2F782070696433 comm=\"x\"",
                           &rec),
                     0);
        cr_expect_eq(rec.pid, 7);
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_DOMAIN,
                           "audit(1.2:3): domain=195ba459b status=deallocated denials=3", &rec),
                     0);
        cr_expect(rec.deallocated);
        cr_expect_eq(rec.denials, 3);
        cr_expect_eq(parse(AUDIT_TYPE_LANDLOCK_DOMAIN, "audit(1.2:3): domain=5 status=other", &rec),
                     -EBADMSG);
        cr_expect_eq(parse(AUDIT_TYPE_LANDLOCK_DOMAIN,
                           "audit(1.2:3): domain=5 status=allocated mode=enforcing uid=0", &rec),
                     -EBADMSG, "an allocation names its creator");
}

Test(audit, apparmor_denials_and_others)
{
        struct audit_record rec;
        cr_assert_eq(parse(AUDIT_TYPE_AVC,
                           "audit(1.2:3): apparmor=\"DENIED\" operation=\"open\" class=\"file\" "
                           "info=\"Failed name lookup - disconnected path\" error=-13 "
                           "profile=\"psrun-default\" name=\"/proc/sys/kernel/hostname\" pid=1234 "
                           "comm=\"sh\" requested_mask=\"wc\" denied_mask=\"wc\" fsuid=1000 ouid=0",
                           &rec),
                     0);
        cr_expect_eq(rec.kind, AUDIT_KIND_APPARMOR);
        cr_expect_str_eq(rec.operation, "open");
        cr_expect_str_eq(rec.profile, "psrun-default");
        cr_expect_str_eq(rec.object, "/proc/sys/kernel/hostname");
        cr_expect_eq(rec.pid, 1234);
        cr_expect_str_eq(rec.denied_mask, "wc");
        /* Allowed and audited ones, and SELinux's, are no refusals. */
        cr_expect_eq(parse(AUDIT_TYPE_AVC,
                           "audit(1.2:3): apparmor=\"AUDIT\" operation=\"open\" pid=1 "
                           "profile=\"p\"",
                           &rec),
                     0);
        cr_expect_eq(rec.kind, AUDIT_KIND_OTHER);
        cr_expect_eq(parse(AUDIT_TYPE_AVC,
                           "audit(1.2:3): avc:  denied  { read } for  pid=1 comm=\"x\"", &rec),
                     0);
        cr_expect_eq(rec.kind, AUDIT_KIND_OTHER);
        cr_expect_eq(parse(1300, "audit(1.2:3): arch=c000003e syscall=2", &rec), 0);
        cr_expect_eq(rec.kind, AUDIT_KIND_OTHER);
}

Test(audit, malformed_records_are_refused_in_bounded_time)
{
        struct audit_record rec;
        static const char *const bad[] = {
                "",
                "audit(",
                "audit(1.2:3)",
                "audit(1.2:3):",
                "domain=5 blockers=fs.write_file",
                "audit(1.2:3): domain=0 blockers=fs.write_file",
                "audit(1.2:3): domain=zz blockers=fs.write_file",
                "audit(1.2:3): domain=123456789012345678901 blockers=fs.write_file",
                "audit(1.2:3): domain=5",
                "audit(1.2:3): domain=5 blockers=",
                "audit(1.2:3): domain=5 path=\"/x\"",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_expect_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS, bad[i], &rec), -EBADMSG, "%s",
                             bad[i]);
        /* An unterminated quote, a huge path, a trailing NUL counted in. */
        cr_expect_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS,
                           "audit(1.2:3): domain=5 blockers=fs.x path=\"/unterminated", &rec),
                     0);
        static char huge[20000];
        int n = snprintf(huge, sizeof(huge),
                         "audit(1.2:3): domain=5 blockers=fs.read_file path=\"");
        memset(huge + n, 'a', sizeof(huge) - (size_t) n - 2);
        huge[sizeof(huge) - 2] = '"';
        cr_assert_eq(parse(AUDIT_TYPE_LANDLOCK_ACCESS, huge, &rec), 0);
        cr_expect_eq(strlen(rec.object), AUDIT_OBJECT_MAX - 1);
        const char with_nul[] = "audit(1.2:3): domain=5 status=deallocated denials=2";
        cr_expect_eq(audit_parse(AUDIT_TYPE_LANDLOCK_DOMAIN, with_nul, sizeof(with_nul), &rec), 0);
        cr_expect_eq(rec.denials, 2);
}

struct collected {
        int n;
        struct audit_record last;
};

static void collect(void *userdata, const struct audit_record *rec)
{
        struct collected *c = userdata;
        c->n++;
        c->last = *rec;
}

static void send_record(int fd, int type, const char *text)
{
        char buf[512];
        struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf;
        size_t len = strlen(text);
        cr_assert(NLMSG_LENGTH(len) <= sizeof(buf));
        *h = (struct nlmsghdr){.nlmsg_len = NLMSG_LENGTH(len), .nlmsg_type = (uint16_t) type};
        memcpy(NLMSG_DATA(h), text, len);
        cr_assert_eq(send(fd, buf, h->nlmsg_len, 0), (ssize_t) h->nlmsg_len);
}

Test(audit, read_passes_the_records_psrun_reads)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
        send_record(sv[0], 1300, "audit(1.2:3): arch=c000003e syscall=2");
        send_record(sv[0], AUDIT_TYPE_LANDLOCK_ACCESS, "audit(1.2:4): garbage");
        send_record(sv[0], AUDIT_TYPE_LANDLOCK_ACCESS,
                    "audit(1.2:5): domain=9 blockers=fs.write_file path=\"/usr/x\"");
        struct collected c = {0};
        cr_assert_eq(audit_read(sv[1], collect, &c), 0);
        cr_expect_eq(c.n, 1);
        cr_expect_eq(c.last.domain, 9);
        cr_expect_str_eq(c.last.object, "/usr/x");
        /* Nothing pending: returns at once. */
        cr_assert_eq(audit_read(sv[1], collect, &c), 0);
        cr_expect_eq(c.n, 1);
        close(sv[0]);
        close(sv[1]);
}
