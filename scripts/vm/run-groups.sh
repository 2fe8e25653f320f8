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
# [<jobs>: tests run at once, default 1] [as=UID: the group runs as that user
# (no groups, no capabilities) with PSRUN_TEST_ROOTLESS=1, its own
# XDG_RUNTIME_DIR, and, where this runner's cgroup is a cgroup2 one that can
# give controllers to children (the VM's root cgroup), in a subtree delegated
# to it as systemd delegates user@UID.service: the rootless limits' cgroup
# branch; elsewhere (a cgroup v1 host) their rlimit or refusal branch]
# PSRUN_GROUPS_ECHO=1 copies each group's full output to stdout (the VM's
# serial log is the only record of a run there).
set -eu

build=$1
groups_file=$2
log_dir=$3
group_timeout=${4:-300}

mkdir -p "$log_dir"
# Absolute: a group run as a user has it in its environment too.
case "$build" in
/*) ;;
*) build="$PWD/$build" ;;
esac
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

# user_unit UID: a cgroup like systemd's user@UID.service below this
# runner's own cgroup2 one, the user's (Delegate=yes), holding no process,
# with memory, pids and cpu given to its children; its path on stdout, or
# nothing where there is none to make (not cgroup2, or a cgroup that holds
# processes and so can give no controllers). Removed by unit_remove.
user_unit() {
        # A cgroup2 mount there (busybox stat names no cgroup2 type).
        [ -f /sys/fs/cgroup/cgroup.controllers ] || return 0
        own=$(sed -n 's/^0:://p' /proc/self/cgroup)
        base="/sys/fs/cgroup${own%/}/psrun-vm-user-$1"
        unit="$base/user@$1.service"
        mkdir -p "$unit" 2>/dev/null || return 0
        for c in memory pids cpu; do
                echo "+$c" >"/sys/fs/cgroup${own%/}/cgroup.subtree_control" 2>/dev/null &&
                        echo "+$c" >"$base/cgroup.subtree_control" 2>/dev/null || {
                        rmdir "$unit" "$base" 2>/dev/null
                        return 0
                }
        done
        chown "$1:$1" "$unit" "$unit/cgroup.procs" "$unit/cgroup.subtree_control" \
                "$unit/cgroup.threads"
        echo "$unit"
}

# unit_remove DIR: the unit and everything below it, deepest first (every
# process in it has ended with the group).
unit_remove() {
        [ -n "$1" ] || return 0
        find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
        rmdir "$(dirname "$1")" 2>/dev/null || true
}

# run_group BIN JOBS FILTER AS: the group's binary, as root or (AS=as=UID)
# as that user, in its delegated unit where one is made. util-linux's
# setpriv by its path: busybox sh runs its own applet for the bare name,
# which cannot change ids.
run_group() {
        case "$4" in
        as=*)
                uid=${4#as=}
                unit=$(user_unit "$uid")
                run_dir=$(mktemp -d)
                chown "$uid:$uid" "$run_dir" && chmod 700 "$run_dir"
                rc=0
                sh -c '[ -z "$1" ] || { mkdir "$1/tests.scope" && echo $$ >"$1/tests.scope/cgroup.procs"; } &&
                        shift && exec "$@"' sh "$unit" \
                        /usr/bin/setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all \
                        env PSRUN_TEST_ROOTLESS=1 PSRUN_BUILD="$build" XDG_RUNTIME_DIR="$run_dir" \
                        HOME="$run_dir" timeout "$group_timeout" "$1" --verbose=0 -j"$2" \
                        --ignore-warnings --filter="$3" </dev/null || rc=$?
                rm -rf "$run_dir"
                unit_remove "$unit"
                return "$rc"
                ;;
        esac
        timeout "$group_timeout" "$1" --verbose=0 -j"$2" --ignore-warnings --filter="$3" </dev/null
}

overall=0
while read -r name binary filter jobs as; do
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
                        run_group "$bin" "$jobs" "$filter" "$as" 2>&1 || rc=$?
                        echo "$rc" >"$log.rc"
                } | tee "$log"
                rc=$(cat "$log.rc")
        else
                rc=0
                run_group "$bin" "$jobs" "$filter" "$as" >"$log" 2>&1 || rc=$?
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
