/* SPDX-License-Identifier: MIT */
/* Rootless: the /etc/subuid reader and the delegated cgroup's place
 * (runtime/rootless.c, runtime/cgroup/delegate.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "runtime/cgroup/cgroup.h"
#include "runtime/rootless.h"

Test(rootless, subid_by_name_or_uid_first_line_wins)
{
        struct subid_range r = {0};
        const char *text = "alice:100000:65536\nbob:165536:65536\n1003:231072:10\nbob:9:9\n";
        cr_expect_eq(subid_find(text, "bob", 1002, &r), 1);
        cr_expect_eq(r.start, 165536);
        cr_expect_eq(r.count, 65536);
        cr_expect_eq(subid_find(text, NULL, 1003, &r), 1);
        cr_expect_eq(r.start, 231072);
        cr_expect_eq(r.count, 10);
        cr_expect_eq(subid_find(text, "carol", 1004, &r), 0);
        /* A prefix of a name is not the name. */
        cr_expect_eq(subid_find(text, "ali", 1005, &r), 0);
}

Test(rootless, subid_hostile_lines)
{
        struct subid_range r = {0};
        /* Malformed: refused, not read as another range. */
        cr_expect_eq(subid_find("eve:1x:5\n", "eve", 1, &r), -EINVAL);
        cr_expect_eq(subid_find("eve:100\n", "eve", 1, &r), -EINVAL);
        cr_expect_eq(subid_find("eve:-1:5\n", "eve", 1, &r), -EINVAL);
        cr_expect_eq(subid_find("eve:99999999999999999999999:5\n", "eve", 1, &r), -EINVAL);
        /* Past 32 bits or empty: skipped, the next line counts. */
        cr_expect_eq(subid_find("eve:4294967295:2\neve:7:0\neve:500:5", "eve", 1, &r), 1);
        cr_expect_eq(r.start, 500);
        cr_expect_eq(subid_find("# eve:1:1\n", "eve", 1, &r), 0);
}

Test(rootless, delegated_parent_from_proc_self_cgroup)
{
        char *p = NULL;
        cr_expect_eq(cgroup_delegated_in("0::/user.slice/user-1000.slice/user@1000.service/"
                                         "app.slice/foot.scope\n",
                                         1000, &p),
                     1);
        cr_expect_str_eq(p, "/user.slice/user-1000.slice/user@1000.service/psrun.slice");
        free(p);
        /* Another user's unit, a login session scope, a unit whose name
         * only starts alike: none. */
        cr_expect_eq(cgroup_delegated_in("0::/user.slice/user-1001.slice/user@1001.service/x\n",
                                         1000, &p),
                     0);
        cr_expect_eq(
                cgroup_delegated_in("0::/user.slice/user-1000.slice/session-3.scope\n", 1000, &p),
                0);
        cr_expect_eq(cgroup_delegated_in("0::/user.slice/user@1000.services/x\n", 1000, &p), 0);
        cr_expect_null(p);
}
