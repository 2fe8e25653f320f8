/* SPDX-License-Identifier: MIT */
/*
 * The session keyring, as runc makes it: each container process joins a
 * new one named "_ses.<id>" (the kernel's keyrings are not namespaced: a
 * config whose seccomp profile allows keyctl would otherwise reach the
 * keys of whoever ran psrun), unless create has --no-new-keyring.
 */
#include <stdio.h>
#include <unistd.h>

#include "oci/oci_test.h"

static void setup(void)
{
        bundle_setup();
        if (access("/proc/keys", R_OK) != 0)
                cr_skip_test("no /proc/keys: this kernel has no keyrings to give (CONFIG_KEYS)");
}

TestSuite(oci_keyring, .init = setup, .fini = bundle_teardown, .timeout = 60);

/* /proc/keys lists what the process may view: its own session keyring
 * among them. The config masks nothing, and has no seccomp profile. */
#define SHOW_KEYRINGS "[\"sh\",\"-c\",\"grep -o '_ses[^ ]*' /proc/keys || true\"]"

Test(oci_keyring, a_container_and_its_execs_get_their_own)
{
        struct out o;
        bundle_config("c1", &(struct cfg){.args = SHOW_KEYRINGS, .no_masks = true});
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "_ses.c1:"), "no keyring of its own: %s", o.out);

        oci_up("c2", &(struct cfg){.no_masks = true});
        r = psrun(&o, NULL, "exec", "c2", "sh", "-c", "grep -o '_ses[^ ]*' /proc/keys", NULL);
        struct out k;
        (void) psrun(&k, NULL, "delete", "--force", "c2", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "_ses.c2:"), "the exec has no keyring of its own: %s", o.out);
}

/* create (with extra options) + start; what the process saw of its
 * keyrings, from a file it wrote in its root. */
static void keyrings_seen(const char *id, const char *option, char *buf, size_t len)
{
        struct out o, k;
        char path[600];
        bundle_config(id, &(struct cfg){.args = "[\"sh\",\"-c\",\"grep -o '_ses[^ ]*' "
                                                "/proc/keys > /keys.txt\"]",
                                        .no_masks = true});
        int r = option ? psrun(&o, NULL, "create", option, "--bundle", B.dir, id, NULL)
                       : psrun(&o, NULL, "create", "--bundle", B.dir, id, NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "start", id, NULL), 0, "%s", o.err);
        cr_assert(wait_status(id, "stopped", 10000));
        (void) psrun(&k, NULL, "delete", "--force", id, NULL);
        reap_children();
        snprintf(path, sizeof(path), "%s/rootfs/keys.txt", B.dir);
        cr_assert(read_text(path, buf, len), "%s: not written", path);
        unlink(path);
}

Test(oci_keyring, no_new_keyring_keeps_the_callers)
{
        char seen[4096];
        /* Ids of their own: a keyring outlives its container for a while
         * (the kernel collects it later), and root sees the others'. */
        keyrings_seen("kr-new", NULL, seen, sizeof(seen));
        cr_expect(contains(seen, "_ses.kr-new:"), "without the flag: %s", seen);
        keyrings_seen("kr-kept", "--no-new-keyring", seen, sizeof(seen));
        cr_expect(!contains(seen, "_ses.kr-kept:"), "with --no-new-keyring: %s", seen);
}

Test(oci_keyring, an_exec_keeps_the_callers_when_its_container_does)
{
        struct out o, k;
        bundle_config("kr-exec", &(struct cfg){.no_masks = true});
        int r = psrun(&o, NULL, "create", "--no-new-keyring", "--bundle", B.dir, "kr-exec", NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "start", "kr-exec", NULL), 0, "%s", o.err);
        r = psrun(&o, NULL, "exec", "kr-exec", "sh", "-c", "grep -o '_ses[^ ]*' /proc/keys || true",
                  NULL);
        (void) psrun(&k, NULL, "delete", "--force", "kr-exec", NULL);
        reap_children();
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(!contains(o.out, "_ses.kr-exec:"), "%s", o.out);
        cr_expect(contains(o.out, "_ses"), "no session keyring seen at all: %s", o.out);
}
