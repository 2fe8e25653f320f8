#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/startup-phases.sh PSRUN [RUNS]
#
# Where the start-up time of `psrun run -- true` goes, phase by phase. Runs
# psrun RUNS times (default 80) under `perf record` on a handful of scheduler
# and syscall tracepoints (cheap: no sampling, no ptrace), then cuts each run
# into phases at syscalls that mark them (the first landlock_create_ruleset
# ends start-up, the first statfs starts the cgroup work, the first
# open_tree the bind sources, clone3, pivot_root, the command's seccomp, the
# exec of `true`, the exits, ...) and prints the
# median, p10 and p90 of each. p10 is the best estimate of a phase's own cost
# on a noisy machine. A phase whose marker syscall is gone (because the code
# changed) prints n/a. Also counts page faults per process, which are costly
# on virtualized hosts. Needs perf and python3; run as root.
#
# Roles: psrun is the process you start, init is pid 1 of the sandbox (the
# clone3 child), the command is what init forks and what execs `true`.
set -eu
export LC_ALL=C

[ $# -ge 1 ] || {
	echo "usage: $0 PATH/TO/psrun [RUNS]" >&2
	exit 2
}
PSRUN=$1
RUNS=${2:-80}
case "$PSRUN" in /*) ;; *) PSRUN=$PWD/$PSRUN ;; esac
for t in perf python3; do
	command -v "$t" >/dev/null || {
		echo "startup-phases: $t is needed" >&2
		exit 2
	}
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/psrun-phases.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# A copy, so a rebuild during the run changes nothing; its name tells its
# processes apart from everything else on the machine.
cp "$PSRUN" "$TMP/psrun-under-test"

events="sched:sched_process_exec,sched:sched_process_exit,sched:sched_process_fork"
events="$events,syscalls:sys_enter_exit_group,exceptions:page_fault_user"
for s in prctl landlock_create_ruleset seccomp statfs mkdir open_tree socketpair clone3 sendto \
	poll pivot_root umount clone vfork waitid rmdir; do
	events="$events,syscalls:sys_enter_$s,syscalls:sys_exit_$s"
done

perf record -q -o "$TMP/perf.data" -e "$events" -- \
	sh -c "i=0; while [ \$i -lt $RUNS ]; do '$TMP/psrun-under-test' run -- true || exit 1; i=\$((i + 1)); done"
perf script -i "$TMP/perf.data" -F comm,pid,time,event,trace >"$TMP/trace.txt" 2>/dev/null

python3 - "$TMP/trace.txt" <<'EOF'
import collections, re, statistics, sys

line_re = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$")
events = []
for line in open(sys.argv[1]):
    m = line_re.match(line)
    if m:
        comm, pid, t, ev, args = m.groups()
        events.append((float(t) * 1000, int(pid), ev.split(":")[1], args))

parent, runs = {}, {}
for t, pid, ev, args in events:
    if ev == "sched_process_fork":
        parent[int(re.search(r"child_pid=(\d+)", args).group(1))] = pid
    elif ev == "sched_process_exec" and args.split()[0].endswith("/psrun-under-test"):
        runs[pid] = {"p:exec": t}

def role(pid):
    if pid in runs:
        return pid, "p"
    if parent.get(pid) in runs:
        return parent[pid], "i"
    if parent.get(parent.get(pid)) in runs:
        return parent[parent[pid]], "c"
    return None, None

faults = collections.Counter()
for t, pid, ev, args in events:
    run, r = role(pid)
    if run is None:
        continue
    d = runs[run]
    if ev == "page_fault_user":
        after = "after exec" if (r == "c" and "c:exec" in d) else ""
        if r == "p":
            after = "after clone3" if "p:sys_exit_clone3" in d else "before clone3"
        faults[(r, after)] += 1
        continue
    if ev == "sched_process_exec" and r == "c":
        ev = "exec"
    # However init creates the command (fork, vfork, clone3), the command's
    # side of it returning is the same marker.
    if r == "c" and ev in ("sys_exit_vfork", "sys_exit_clone3"):
        ev = "sys_exit_clone"
    if ev == "sys_exit_waitid" and args.strip() != "0x0":
        continue
    key = f"{r}:{ev}"
    # psrun's syscalls after clone3 are told apart from the same ones
    # before it (the violations watch's audit socket sends too).
    if r == "p" and "p:sys_exit_clone3" in d and ev not in ("sys_exit_clone3", "sched_process_exit"):
        key = f"p:after:{ev}"
    d.setdefault(key, t)
    d[key + ":last"] = t

phases = [
    ("psrun: exec + dynamic linking", "p:exec", "p:sys_enter_prctl"),
    ("psrun: constructors, main, policy, rootfs plan", "p:sys_enter_prctl", "p:sys_enter_landlock_create_ruleset"),
    ("psrun: Landlock ruleset, violations watch", "p:sys_enter_landlock_create_ruleset", "p:sys_enter_statfs"),
    ("psrun: cgroup hierarchies (mountinfo, /proc/self/cgroup)", "p:sys_enter_statfs", "p:sys_enter_mkdir"),
    ("psrun: cgroup mkdir + limits", "p:sys_enter_mkdir", "p:sys_enter_open_tree"),
    ("psrun: bind sources cloned (open_tree)", "p:sys_enter_open_tree", "p:sys_enter_socketpair"),
    ("psrun: clone3 (7 namespaces, copy of psrun)", "p:sys_enter_clone3", "p:sys_exit_clone3"),
    ("psrun: id maps + cgroup attach, release child", "p:sys_exit_clone3", "p:after:sys_enter_sendto"),
    ("psrun: cgroup gc of dead runs (child builds its root)", "p:after:sys_enter_sendto:last", "p:after:sys_enter_poll"),
    ("init: hostname, lo, fds, root tmpfs", "p:after:sys_enter_sendto", "i:sys_enter_pivot_root"),
    ("init: pivot_root", "i:sys_enter_pivot_root", "i:sys_exit_pivot_root"),
    ("init: mounts, detach old root", "i:sys_exit_pivot_root", "i:sys_exit_umount:last"),
    ("init: fork the command", "i:sys_exit_umount:last", "c:sys_exit_clone"),
    ("command: caps, ids, signals, Landlock", "c:sys_exit_clone", "c:sys_enter_seccomp"),
    ("command: seccomp load", "c:sys_enter_seccomp", "c:sys_exit_seccomp"),
    ("command: execve", "c:sys_exit_seccomp", "c:exec"),
    ("true: ld.so, libc, exit", "c:exec", "c:sched_process_exit"),
    ("init: reap, report, exit", "c:sched_process_exit", "i:sched_process_exit"),
    ("init's exit until psrun's waitid returns", "i:sched_process_exit", "p:after:sys_exit_waitid"),
    ("psrun: cgroup stats, kill, rmdir", "p:after:sys_exit_waitid", "p:after:sys_exit_rmdir:last"),
    ("psrun: exit", "p:after:sys_exit_rmdir:last", "p:sched_process_exit"),
    ("total (exec of psrun to its exit)", "p:exec", "p:sched_process_exit"),
]
print(f"{len(runs)} runs; ms per phase")
print(f"{'phase':50s} {'median':>7s} {'p10':>7s} {'p90':>7s}")
for name, a, b in phases:
    v = sorted(d[b] - d[a] for d in runs.values() if a in d and b in d)
    if not v:
        print(f"{name:50s} {'n/a':>7s}")
        continue
    print(f"{name:50s} {statistics.median(v):7.2f} {v[len(v) // 10]:7.2f} {v[len(v) * 9 // 10]:7.2f}")
print()
print("user page faults per run")
for (r, when), n in sorted(faults.items()):
    who = {"p": "psrun", "i": "init", "c": "command"}[r]
    print(f"  {who} {when}".ljust(30) + f"{n / max(len(runs), 1):7.1f}")
EOF
