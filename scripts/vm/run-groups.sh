#!/bin/sh
# SPDX-License-Identifier: MIT
# Run groups of Criterion tests and print one result line per group:
#   PSRUN-VM-RESULT group=G status=S tested=N pass=N fail=N skip=N secs=N
# status: ok | failed | timeout | error (no Criterion summary) | missing (binary not built).
# Failing tests, warnings and skip reasons follow as PSRUN-VM-FAIL, -WARN and
# -SKIP lines.
# vm-check.sh runs it on the host and scripts/vm/init runs it inside the VM, so
# both columns of the kernel matrix are counted the same way. POSIX sh: the VM
# only has busybox.
#
# Usage: run-groups.sh BUILD GROUPS_FILE LOG_DIR [GROUP_TIMEOUT_SECS]
# GROUPS_FILE lines: <name> <binary under BUILD/tests> <Criterion --filter pattern>
# [<jobs>: tests run at once, default 1]
# PSRUN_GROUPS_ECHO=1 copies each group's full output to stdout (the VM's
# serial log is the only record of a run there).
set -eu

build=$1
groups_file=$2
log_dir=$3
group_timeout=${4:-300}

mkdir -p "$log_dir"
export PSRUN_BUILD="$build"

now() {
        cut -d' ' -f1 /proc/uptime | cut -d. -f1
}

# Criterion's last line reads
#   [====] Synthesis: Tested: 5 | Passing: 4 | Failing: 1 | Crashing: 0
# where Tested leaves skipped tests out and Failing includes crashes.
synthesis_field() {
        sed -n "s/.*Synthesis:.* $1: \\([0-9]*\\).*/\\1/p" "$2" | tail -n 1
}

overall=0
while read -r name binary filter jobs; do
        jobs=${jobs:-1}
        case "$name" in
        '' | '#'*) continue ;;
        esac
        bin="$build/tests/$binary"
        log="$log_dir/$name.log"
        if [ ! -x "$bin" ]; then
                echo "PSRUN-VM-RESULT group=$name status=missing tested=0 pass=0 fail=0 skip=0 secs=0"
                continue
        fi

        start=$(now)
        # --verbose=0 prints one line per test ([RUN ]/[PASS]/[FAIL]/[SKIP]);
        # -j1 (the default) keeps tests that share host state (cgroups,
        # AppArmor) apart; the groups whose tests are apart already say more;
        # --ignore-warnings: a test's cr_log_warn() note ("this kernel has no
        # IA32 emulation") is not a failure; it is passed on as a WARN line.
        if [ "${PSRUN_GROUPS_ECHO:-0}" = 1 ]; then
                # Streamed, so a hang shows which test it is in.
                echo "----- group $name: $bin --filter=$filter"
                {
                        rc=0
                        timeout "$group_timeout" "$bin" --verbose=0 -j"$jobs" --ignore-warnings \
                                --filter="$filter" \
                                </dev/null 2>&1 || rc=$?
                        echo "$rc" >"$log.rc"
                } | tee "$log"
                rc=$(cat "$log.rc")
        else
                rc=0
                timeout "$group_timeout" "$bin" --verbose=0 -j"$jobs" --ignore-warnings \
                        --filter="$filter" >"$log" 2>&1 </dev/null || rc=$?
        fi
        secs=$(($(now) - start))
        [ "${PSRUN_GROUPS_ECHO:-0}" != 1 ] || echo "----- end of group $name (exit $rc, ${secs}s)"

        tested=$(synthesis_field Tested "$log")
        pass=$(synthesis_field Passing "$log")
        fail=$(synthesis_field Failing "$log")
        # Tests outside the filter show as "[SKIP] ...: Test is disabled".
        skip=$(grep -a '^\[SKIP\]' "$log" | grep -vc ': Test is disabled$' || true)
        if [ "$secs" -ge "$group_timeout" ] || [ "$rc" = 124 ] || [ "$rc" = 143 ]; then
                status=timeout
        elif [ -z "$tested" ]; then
                status=error
        elif [ "$fail" -gt 0 ]; then
                status=failed
        elif [ "$rc" != 0 ]; then
                status=error
        else
                status=ok
        fi
        [ "$status" = ok ] || overall=1
        echo "PSRUN-VM-RESULT group=$name status=$status tested=${tested:-0} pass=${pass:-0}" \
                "fail=${fail:-0} skip=$skip secs=$secs"
        grep -a '^\[FAIL\]' "$log" | head -n 50 | sed "s/^/PSRUN-VM-FAIL group=$name /" || true
        grep -a '^\[WARN\]' "$log" | head -n 20 | sed "s/^/PSRUN-VM-WARN group=$name /" || true
        grep -a '^\[SKIP\]' "$log" | grep -v ': Test is disabled$' | head -n 20 |
                sed "s/^/PSRUN-VM-SKIP group=$name /" || true
done <"$groups_file"

exit "$overall"
