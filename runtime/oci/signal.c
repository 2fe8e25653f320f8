/* SPDX-License-Identifier: MIT */
/*
 * Signal names <-> numbers for `psrun kill`. The numbers come from
 * <signal.h>, so the table is right on every architecture (SIGBUS is 7 on
 * x86 and 10 on MIPS); names an architecture lacks are left out.
 */
#include "runtime/oci/signal.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/names.h"
#include "common/number.h"
#include "policy/policy.h"

/* The first name of a number is the one oci_signal_to_string gives; the
 * aliases after it are accepted on input only. */
static const struct name_value signal_names[] = {
        {"SIGHUP", SIGHUP},       {"SIGINT", SIGINT},     {"SIGQUIT", SIGQUIT},
        {"SIGILL", SIGILL},       {"SIGTRAP", SIGTRAP},   {"SIGABRT", SIGABRT},
        {"SIGIOT", SIGIOT},       {"SIGBUS", SIGBUS},
#ifdef SIGEMT
        {"SIGEMT", SIGEMT},
#endif
        {"SIGFPE", SIGFPE},       {"SIGKILL", SIGKILL},   {"SIGUSR1", SIGUSR1},
        {"SIGSEGV", SIGSEGV},     {"SIGUSR2", SIGUSR2},   {"SIGPIPE", SIGPIPE},
        {"SIGALRM", SIGALRM},     {"SIGTERM", SIGTERM},
#ifdef SIGSTKFLT
        {"SIGSTKFLT", SIGSTKFLT},
#endif
        {"SIGCHLD", SIGCHLD},
#ifdef SIGCLD
        {"SIGCLD", SIGCLD},
#endif
        {"SIGCONT", SIGCONT},     {"SIGSTOP", SIGSTOP},   {"SIGTSTP", SIGTSTP},
        {"SIGTTIN", SIGTTIN},     {"SIGTTOU", SIGTTOU},   {"SIGURG", SIGURG},
        {"SIGXCPU", SIGXCPU},     {"SIGXFSZ", SIGXFSZ},   {"SIGVTALRM", SIGVTALRM},
        {"SIGPROF", SIGPROF},     {"SIGWINCH", SIGWINCH}, {"SIGIO", SIGIO},
#ifdef SIGPOLL
        {"SIGPOLL", SIGPOLL},
#endif
#ifdef SIGPWR
        {"SIGPWR", SIGPWR},
#endif
#ifdef SIGINFO
        {"SIGINFO", SIGINFO},
#endif
#ifdef SIGLOST
        {"SIGLOST", SIGLOST},
#endif
        {"SIGSYS", SIGSYS},
/* glibc dropped SIGUNUSED in 2.26, but the kernel still has it as SIGSYS. */
#ifdef SIGUNUSED
        {"SIGUNUSED", SIGUNUSED},
#endif
};

/* Real-time signals by their distance from SIGRTMIN, which glibc decides at
 * run time (34 with NPTL, which keeps 32 and 33). Linux has at most 32 of
 * them on every architecture but MIPS; there the rest have no name. */
static const char *const rt_names[] = {
        "SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",  "SIGRTMIN+4",  "SIGRTMIN+5",
        "SIGRTMIN+6",  "SIGRTMIN+7",  "SIGRTMIN+8",  "SIGRTMIN+9",  "SIGRTMIN+10", "SIGRTMIN+11",
        "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15", "SIGRTMIN+16", "SIGRTMIN+17",
        "SIGRTMIN+18", "SIGRTMIN+19", "SIGRTMIN+20", "SIGRTMIN+21", "SIGRTMIN+22", "SIGRTMIN+23",
        "SIGRTMIN+24", "SIGRTMIN+25", "SIGRTMIN+26", "SIGRTMIN+27", "SIGRTMIN+28", "SIGRTMIN+29",
        "SIGRTMIN+30", "SIGRTMIN+31",
};

const char *oci_signal_name_at(size_t i)
{
        return i < ARRAY_SIZE(signal_names) ? signal_names[i].name : NULL;
}

const char *oci_signal_to_string(int sig)
{
        const char *name = name_value_to_string(signal_names, ARRAY_SIZE(signal_names), sig);
        if (name)
                return name;
        if (sig >= SIGRTMIN && sig <= SIGRTMAX && (size_t) (sig - SIGRTMIN) < ARRAY_SIZE(rt_names))
                return rt_names[sig - SIGRTMIN];
        return NULL;
}

/* A decimal number (no sign, no spaces) up to INT_MAX -> *ret. */
static bool parse_small_number(const char *s, int *ret)
{
        int64_t v;

        if (number_parse(s, 0, INT_MAX, &v) < 0)
                return false;
        *ret = (int) v;
        return true;
}

/* "RTMIN", "RTMIN+n", "RTMAX", "RTMAX-n" (any case, "SIG" already removed),
 * the forms kill(1) and bash take. The result must stay in the range. */
static bool parse_realtime(const char *s, int *ret)
{
        static const struct {
                const char *base;
                char sign; /* the only direction that stays in the range */
                bool from_max;
        } forms[] = {
                {"RTMIN", '+', false},
                {"RTMAX", '-', true},
        };

        for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
                size_t len = strlen(forms[i].base);
                int base = forms[i].from_max ? SIGRTMAX : SIGRTMIN;
                int offset = 0;

                if (strncasecmp(s, forms[i].base, len) != 0)
                        continue;
                if (s[len] == forms[i].sign) {
                        if (!parse_small_number(s + len + 1, &offset))
                                return false;
                } else if (s[len] != '\0') {
                        return false;
                }
                if (offset > SIGRTMAX - SIGRTMIN)
                        return false;
                *ret = forms[i].from_max ? base - offset : base + offset;
                return true;
        }
        return false;
}

static bool parse_name(const char *s, int *ret)
{
        /* The "SIG" prefix is optional, once: "SIGSIGKILL" is not a name. */
        const char *bare = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;

        if (*bare == '\0')
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(signal_names); i++)
                if (strcasecmp(signal_names[i].name + 3, bare) == 0) {
                        *ret = signal_names[i].value;
                        return true;
                }
        return parse_realtime(bare, ret);
}

int oci_signal_from_string(const char *s, int *sig, psrun_error *err)
{
        char shown[64];
        int value;

        if (!s)
                return psrun_error_set(err, EINVAL, "signal: no signal given");
        if (s[0] >= '0' && s[0] <= '9') {
                /* Digits are a number, never a name: in range, or refused. */
                int64_t v;
                if (number_parse(s, 1, SIGRTMAX, &v) < 0)
                        return psrun_error_set(err, EINVAL,
                                               "signal: invalid signal %s (must be 1..%d)",
                                               policy_escape(s, shown, sizeof(shown)), SIGRTMAX);
                value = (int) v;
        } else if (!parse_name(s, &value)) {
                return psrun_error_set(err, EINVAL, "signal: unknown signal \"%s\"",
                                       policy_escape(s, shown, sizeof(shown)));
        }
        *sig = value;
        return 0;
}
