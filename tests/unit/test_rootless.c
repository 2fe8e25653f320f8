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

Test(rootless, router_maps_nest_the_sandbox_below_the_router)
{
        char router[128], inner[128];
        /* Subordinate ids: the user is the router's 0, the range its
         * 1..65536, and the sandbox's 0.. go onto those: on the host the
         * sandbox has the range, as without a router. */
        cr_assert_eq(rootless_nest_maps("0 296608 65536\n", 1004, true, router, sizeof(router),
                                        inner, sizeof(inner)),
                     0);
        cr_expect_str_eq(router, "0 1004 1\n1 296608 65536\n");
        cr_expect_str_eq(inner, "0 1 65536\n");
        /* One id: the router has only the user; the sandbox's user is it. */
        cr_assert_eq(rootless_nest_maps("1000 1004 1\n", 1004, false, router, sizeof(router), inner,
                                        sizeof(inner)),
                     0);
        cr_expect_str_eq(router, "0 1004 1\n");
        cr_expect_str_eq(inner, "1000 0 1\n");
}

Test(rootless, router_maps_refuse_what_they_cannot_nest)
{
        char router[128], inner[128];
        const char *bad[] = {"",        "0 296608\n",  "0 1 65536\n1 2 3\n",
                             "0 1 0\n", "0 1 65537\n", "x 1 1\n"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_expect_eq(rootless_nest_maps(bad[i], 1004, true, router, sizeof(router), inner,
                                                sizeof(inner)),
                             -EINVAL, "%s", bad[i]);
        /* One id that is a range would map more than the user. */
        cr_expect_eq(rootless_nest_maps("0 1004 2\n", 1004, false, router, sizeof(router), inner,
                                        sizeof(inner)),
                     -EINVAL);
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
