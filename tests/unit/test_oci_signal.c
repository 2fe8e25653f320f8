/* SPDX-License-Identifier: MIT */
/*
 * Signal names for `psrun kill`: every table entry round-trips, every
 * spelling runc and kill(1) take is accepted, and everything else is one
 * -EINVAL line that leaves the output alone.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "runtime/oci/signal.h"

TestSuite(oci_signal, .timeout = 30);

static int parse_ok(const char *s)
{
        psrun_error err = {0};
        int sig = -1;

        int r = oci_signal_from_string(s, &sig, &err);
        cr_assert_eq(r, 0, "\"%s\": %d: %s", s, r, err.msg);
        return sig;
}

static void assert_refused(const char *s, const char *msg)
{
        psrun_error err = {0};
        int sig = 12345;

        cr_assert_eq(oci_signal_from_string(s, &sig, &err), -EINVAL, "\"%s\" accepted", s);
        cr_assert_eq(sig, 12345, "\"%s\" wrote the output", s);
        cr_assert_eq(err.code, EINVAL);
        for (const char *c = err.msg; *c; c++)
                cr_assert_geq((unsigned char) *c, 0x20, "control character in: %s", err.msg);
        if (msg)
                cr_assert_str_eq(err.msg, msg);
}

Test(oci_signal, every_table_name_round_trips)
{
        const char *name;
        size_t i = 0;

        for (; (name = oci_signal_name_at(i)); i++) {
                char lower[32], bare[32];
                int sig = parse_ok(name);

                cr_assert(strncmp(name, "SIG", 3) == 0, "%s", name);
                cr_assert_gt(sig, 0);
                cr_assert_lt(sig, SIGRTMIN);
                /* The canonical name of the number gives the number back. */
                const char *canonical = oci_signal_to_string(sig);
                cr_assert_not_null(canonical, "%s", name);
                cr_assert_eq(parse_ok(canonical), sig);
                /* Any case, "SIG" optional. */
                snprintf(bare, sizeof(bare), "%s", name + 3);
                cr_assert_eq(parse_ok(bare), sig);
                for (size_t j = 0; name[j] && j < sizeof(lower) - 1; j++)
                        lower[j] = (char) tolower((unsigned char) name[j]);
                lower[strlen(name)] = '\0';
                cr_assert_eq(parse_ok(lower), sig);
                cr_assert_eq(parse_ok(lower + 3), sig);
                /* Names are unique. */
                for (size_t j = 0; j < i; j++)
                        cr_assert_str_neq(oci_signal_name_at(j), name);
        }
        cr_assert_geq(i, 31);
        cr_assert_null(oci_signal_name_at(i));
        cr_assert_null(oci_signal_name_at((size_t) -1));
}

Test(oci_signal, every_standard_number_has_a_name)
{
        for (int sig = 1; sig < 32; sig++) {
                const char *name = oci_signal_to_string(sig);
                cr_assert_not_null(name, "%d", sig);
                cr_assert_eq(parse_ok(name), sig);
        }
}

Test(oci_signal, spellings)
{
        const char *kill_spellings[] = {"9",       "KILL",    "SIGKILL", "kill",
                                        "sigkill", "SiGkIlL", "Kill",    "09"};

        for (size_t i = 0; i < sizeof(kill_spellings) / sizeof(kill_spellings[0]); i++)
                cr_assert_eq(parse_ok(kill_spellings[i]), SIGKILL, "%s", kill_spellings[i]);
        cr_assert_eq(parse_ok("TERM"), SIGTERM);
        cr_assert_eq(parse_ok("15"), SIGTERM);
        cr_assert_eq(parse_ok("hup"), SIGHUP);
        cr_assert_eq(parse_ok("SIGWINCH"), SIGWINCH);
        cr_assert_eq(parse_ok("1"), 1);
}

Test(oci_signal, aliases_and_canonical_names)
{
        cr_assert_eq(parse_ok("SIGIOT"), SIGABRT);
        cr_assert_eq(parse_ok("CLD"), SIGCHLD);
        cr_assert_eq(parse_ok("poll"), SIGIO);
        cr_assert_eq(parse_ok("STKFLT"), SIGSTKFLT);
        cr_assert_eq(parse_ok("PWR"), SIGPWR);
        cr_assert_str_eq(oci_signal_to_string(SIGKILL), "SIGKILL");
        cr_assert_str_eq(oci_signal_to_string(SIGABRT), "SIGABRT");
        cr_assert_str_eq(oci_signal_to_string(SIGCHLD), "SIGCHLD");
        cr_assert_str_eq(oci_signal_to_string(SIGIO), "SIGIO");
        cr_assert_str_eq(oci_signal_to_string(SIGSYS), "SIGSYS");
        cr_assert_str_eq(oci_signal_to_string(SIGTERM), "SIGTERM");
}

Test(oci_signal, realtime)
{
        cr_assert_eq(parse_ok("RTMIN"), SIGRTMIN);
        cr_assert_eq(parse_ok("SIGRTMIN"), SIGRTMIN);
        cr_assert_eq(parse_ok("RTMIN+3"), SIGRTMIN + 3);
        cr_assert_eq(parse_ok("rtmin+0"), SIGRTMIN);
        cr_assert_eq(parse_ok("SIGRTMAX-2"), SIGRTMAX - 2);
        cr_assert_eq(parse_ok("sigrtmax"), SIGRTMAX);
        cr_assert_eq(parse_ok("RTMAX-0"), SIGRTMAX);
        char buf[32];
        snprintf(buf, sizeof(buf), "RTMIN+%d", SIGRTMAX - SIGRTMIN);
        cr_assert_eq(parse_ok(buf), SIGRTMAX);
        snprintf(buf, sizeof(buf), "RTMAX-%d", SIGRTMAX - SIGRTMIN);
        cr_assert_eq(parse_ok(buf), SIGRTMIN);

        /* Every real-time number has a name that gives it back. */
        for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
                const char *name = oci_signal_to_string(sig);
                cr_assert_not_null(name, "%d", sig);
                cr_assert_eq(parse_ok(name), sig, "%s", name);
        }
        cr_assert_str_eq(oci_signal_to_string(SIGRTMIN), "SIGRTMIN");
        cr_assert_str_eq(oci_signal_to_string(SIGRTMIN + 3), "SIGRTMIN+3");
}

Test(oci_signal, every_number_in_range)
{
        char buf[16];

        for (int sig = 1; sig <= SIGRTMAX; sig++) {
                snprintf(buf, sizeof(buf), "%d", sig);
                cr_assert_eq(parse_ok(buf), sig);
        }
}

Test(oci_signal, refused)
{
        char buf[32];

        assert_refused("KILLX", "signal: unknown signal \"KILLX\"");
        assert_refused("FOO", "signal: unknown signal \"FOO\"");
        assert_refused("", "signal: unknown signal \"\"");
        assert_refused("SIG", NULL);
        assert_refused("sig", NULL);
        assert_refused("-1", "signal: unknown signal \"-1\"");
        assert_refused("-9", NULL);
        assert_refused("+9", NULL);
        assert_refused(" 9", NULL);
        assert_refused("9 ", NULL);
        assert_refused("0x9", NULL);
        assert_refused("SIGSIGKILL", NULL);
        assert_refused("KILL ", NULL);
        assert_refused("RTMIN+99", NULL);
        assert_refused("RTMIN+", NULL);
        assert_refused("RTMIN-1", NULL);
        assert_refused("RTMAX+1", NULL);
        assert_refused("RTMAX-99", NULL);
        assert_refused("RTMIN+1x", NULL);
        assert_refused("RTMIN+9999999999", NULL);
        assert_refused("RTMINX", NULL);
        assert_refused("RT", NULL);
        assert_refused("SIGKILL\n", "signal: unknown signal \"SIGKILL\\n\"");
        assert_refused("\x1b[31m", NULL);
        assert_refused(NULL, NULL);

        /* Numbers: 0 only probes, past SIGRTMAX there is no signal. */
        assert_refused("0", NULL);
        assert_refused("00", NULL);
        snprintf(buf, sizeof(buf), "%d", SIGRTMAX + 1);
        assert_refused(buf, NULL);
        assert_refused("65", NULL);
        assert_refused("4294967305", NULL); /* 9 modulo 2^32 */
        assert_refused("99999999999999999999", NULL);
        /* The hostile values of issue 10: never half-read, never wrapped. */
        assert_refused("4294967296", NULL);
        assert_refused("4294967295", NULL);
        assert_refused("99999999999", NULL);
        assert_refused("1e3", NULL);
        assert_refused("65536x", NULL);
        assert_refused("9x", "signal: invalid signal 9x (must be 1..64)");
}

Test(oci_signal, unknown_numbers_have_no_name)
{
        cr_assert_null(oci_signal_to_string(0));
        cr_assert_null(oci_signal_to_string(-1));
        cr_assert_null(oci_signal_to_string(SIGRTMAX + 1));
        /* glibc keeps 32 and 33 for itself; they are below its SIGRTMIN. */
        for (int sig = 32; sig < SIGRTMIN; sig++)
                cr_assert_null(oci_signal_to_string(sig));
}
