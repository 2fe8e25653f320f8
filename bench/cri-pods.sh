#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/cri-pods.sh [BUILD]
#
# Pods through Kubernetes' CRI, psrun against runc, in one run on one
# test-owned containerd (tests/cri/setup.sh: the CRI tier's own set-up,
# both handlers of io.containerd.runc.v2). Each round starts BENCH_PODS pods
# per handler, BENCH_INFLIGHT at a time, each one pod with one container
# (crictl runp, create, start; the busybox image running sleep), then
# removes them all (stopp, rmp). The handlers alternate first in each
# round. Per handler it prints:
#
#   pod start     p50 and p95 of runp + create + start, ms (every round's
#                 pods together), and each step's p50
#   runtime cpu   CPU seconds of the runtime's own processes while the pods
#                 start: the runtime commands the shims run (create, start,
#                 state, ...) are their children, so the shims' cutime +
#                 cstime (/proc/PID/stat) once the pods run
#   pods cpu      CPU seconds in the pods' cgroups over the same time: the
#                 containers' inits from when they join (the runtime's
#                 last set-up steps) and the pause and sleep programs
#   left          after the removal: containers and pods CRI still lists,
#                 cgroups below the handler's pods' parent, processes in
#                 them and shims of this containerd, mounts below the run's
#                 directory and network namespaces, each against before the
#                 round (all must be 0)
#
# then psrun/runc ratios, and whether psrun's p50 is at most half of
# runc's (the goal). Exits 1 if a pod failed or anything was left.
#
# Environment: BENCH_PODS=50, BENCH_INFLIGHT=8, BENCH_ROUNDS=2.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "$0")/../tests/cri" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${1:-build}
PODS=${BENCH_PODS:-50}
INFLIGHT=${BENCH_INFLIGHT:-8}
ROUNDS=${BENCH_ROUNDS:-2}
for v in PODS INFLIGHT ROUNDS; do
	case "${!v}" in
	'' | *[!0-9]* | 0*)
		echo "bench: BENCH_$v: a positive whole number, not '${!v}'" >&2
		exit 2
		;;
	esac
done

FAILED=0
ok() { echo "# $1"; }
not_ok() {
	FAILED=1
	echo "bench: $1${2:+: $2}" >&2
}
summary() { :; }
skip_tier() {
	echo "bench: cannot run here: $1" >&2
	exit 2
}

# shellcheck source=tests/cri/setup.sh
. "$HERE/setup.sh"

TICK=$(getconf CLK_TCK)
BENCH=$WORK/bench
mkdir -p "$BENCH"

# The directories of a cgroup below this run's, in every hierarchy. The
# runtimes and the shim resolve the path CG_PATH/SUBDIR (the memory
# hierarchy's name of this run's cgroup) in each hierarchy, which is not
# this run's directory where this shell's cgroups differ between
# hierarchies: both are looked at.
sub_dirs() { # sub_dirs SUBDIR
	local i
	for i in "${!CG_DIRS[@]}"; do
		echo "${CG_DIRS[$i]}/$1"
		echo "${CG_MOUNTS[$i]}$CG_PATH/$1"
	done | sort -u | while read -r d; do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# CPU time of a cgroup below this run's, in ns: v1's cpuacct (summed over
# the directories sub_dirs names: one of them is empty), else v2's cpu.stat.
cg_cpu_ns() { # cg_cpu_ns SUBDIR
	local d v1=0 v2=0 have_v1=""
	for d in $(sub_dirs "$1"); do
		if [ -f "$d/cpuacct.usage" ]; then
			v1=$((v1 + $(cat "$d/cpuacct.usage")))
			have_v1=1
		elif [ -f "$d/cpu.stat" ] && grep -q '^usage_usec ' "$d/cpu.stat"; then
			v2=$((v2 + $(awk '$1 == "usage_usec" { printf "%d\n", $2 * 1000 }' "$d/cpu.stat")))
		fi
	done
	if [ -n "$have_v1" ]; then echo "$v1"; else echo "$v2"; fi
}

# The processes in a cgroup below this run's, in every hierarchy.
cg_procs() { # cg_procs SUBDIR
	local d
	for d in $(sub_dirs "$1"); do
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -un
}

# CPU time of the runtime's own processes for these pods, ns: the runtime
# commands (create, start, state, ...) are the shim's children, which it
# waits for, so their user + system time (and that of whatever they waited
# for) is in the shim's cutime + cstime. The container's processes are
# children too, but none of them has ended yet: their time is the pods'
# cgroups'.
runtime_cpu_ns() { # runtime_cpu_ns POD...
	local pod pid sum=0 t
	for pod in "$@"; do
		pid=$(pgrep -f -- "-id $pod -address $SOCK" | head -n 1) || true
		[ -n "$pid" ] || continue
		t=$(awk -v tick="$TICK" '{ sub(/^.*\) /, ""); printf "%d\n", ($14 + $15) * 1e9 / tick }' \
			"/proc/$pid/stat" 2>/dev/null) || continue
		sum=$((sum + t))
	done
	echo "$sum"
}

pod_config() { # pod_config HANDLER ROUND N
	cat <<EOF
{
  "metadata": { "name": "bench-$1-$2-$3", "namespace": "psrun-bench", "uid": "bench-$1-$2-$3-$ID", "attempt": 0 },
  "hostname": "bench-$3",
  "log_directory": "$BENCH/logs-$1-$2-$3",
  "linux": { "cgroup_parent": "$CG_PATH/pods-$1" }
}
EOF
}
cat >"$BENCH/container.json" <<EOF
{
  "metadata": { "name": "agent" },
  "image": { "image": "$IMAGE" },
  "command": [ "sleep", "100000" ],
  "log_path": "agent.log"
}
EOF

# One pod: prints "ok TOTAL RUNP CREATE START POD" (microseconds) or
# "fail STEP MESSAGE".
one_pod() { # one_pod HANDLER ROUND N
	local cfg=$BENCH/pod-$1-$2-$3.json t0 t1 t2 t3 pod cid
	pod_config "$@" >"$cfg"
	t0=$(date +%s%N)
	pod=$(cri runp --runtime "$1" "$cfg" 2>"$cfg.err") || {
		echo "fail runp $(head -c 300 "$cfg.err" | tr '\n' ' ')"
		return 0
	}
	t1=$(date +%s%N)
	cid=$(cri create "$pod" "$BENCH/container.json" "$cfg" 2>"$cfg.err") || {
		echo "fail create $(head -c 300 "$cfg.err" | tr '\n' ' ') POD $pod"
		return 0
	}
	t2=$(date +%s%N)
	cri start "$cid" >/dev/null 2>"$cfg.err" || {
		echo "fail start $(head -c 300 "$cfg.err" | tr '\n' ' ') POD $pod"
		return 0
	}
	t3=$(date +%s%N)
	echo "ok $(((t3 - t0) / 1000)) $(((t1 - t0) / 1000)) $(((t2 - t1) / 1000)) $(((t3 - t2) / 1000)) $pod"
}

# At most INFLIGHT of CMD at a time, for N in 1..PODS. Waits for its own
# jobs alone: containerd is this shell's job too.
in_flight() { # in_flight CMD ARGS... (N appended)
	local n p pids=() running
	for n in $(seq 1 "$PODS"); do
		while :; do
			running=0
			for p in "${pids[@]}"; do
				kill -0 "$p" 2>/dev/null && running=$((running + 1))
			done
			[ "$running" -lt "$INFLIGHT" ] && break
			sleep 0.02
		done
		"$@" "$n" &
		pids+=($!)
	done
	wait "${pids[@]}" || true
}

remove_pod() { # remove_pod HANDLER ROUND N
	local pod
	pod=$(awk '$1 == "ok" || / POD / { print $NF }' "$BENCH/t-$1-$2-$3" 2>/dev/null)
	[ -n "$pod" ] || return 0
	cri stopp "$pod" >/dev/null 2>&1 || true
	cri rmp "$pod" >/dev/null 2>&1 || true
}

# What a round leaves: "containers pods cgroups processes mounts netns".
leftovers() { # leftovers HANDLER
	local containers pods cgroups procs mounts netns d
	containers=$(cri ps -a -q 2>/dev/null | grep -c . || true)
	pods=$(cri pods -q 2>/dev/null | grep -c . || true)
	cgroups=$(for d in $(sub_dirs "pods-$1"); do
		find "$d" -mindepth 1 -type d
	done | grep -c . || true)
	procs=$( (
		cg_procs "pods-$1"
		pgrep -f -- "-address $SOCK" || true
	) | grep -c . || true)
	mounts=$(awk -v d="$WORK/" 'index($5, d) == 1' /proc/self/mountinfo | grep -c . || true)
	netns=$(find /run/netns -maxdepth 1 -name 'cni-*' 2>/dev/null | grep -c . || true)
	echo "$containers $pods $cgroups $procs $mounts $netns"
}

# Waits (up to 10 s) for the shims to go and the state to settle.
settle() { # settle HANDLER BASELINE
	local now
	for _ in $(seq 1 100); do
		now=$(leftovers "$1")
		[ "$now" = "$2" ] && break
		sleep 0.1
	done
	echo "$now"
}

round() { # round HANDLER R
	local h=$1 r=$2 before after pods0 pods1 runtime
	before=$(leftovers "$h")
	pods0=$(cg_cpu_ns "pods-$h")
	rm -f "$BENCH"/t-"$h"-"$r"-*
	in_flight start_one "$h" "$r"
	pods1=$(cg_cpu_ns "pods-$h")
	# shellcheck disable=SC2046 # a list of pod ids
	runtime=$(runtime_cpu_ns $(awk '$1 == "ok" || / POD / { print $NF }' "$BENCH"/t-"$h"-"$r"-*))
	echo "$h $((runtime / 1000)) $(((pods1 - pods0) / 1000))" >>"$BENCH/cpu"
	cat "$BENCH"/t-"$h"-"$r"-* >>"$BENCH/times-$h"
	while read -r line; do
		not_ok "$h round $r: pods failed" "$line"
	done < <(grep -h '^fail' "$BENCH"/t-"$h"-"$r"-* | cut -d' ' -f1-8 | sort | uniq -c | head -n 3 || true)
	in_flight remove_pod "$h" "$r"
	after=$(settle "$h" "$before")
	echo "$h $before $after" >>"$BENCH/left"
}
start_one() { one_pod "$@" >"$BENCH/t-$1-$2-$3"; }

# A warm-up pod per handler (the image's snapshot, the first shim), not
# counted.
for h in psrun runc; do
	PODS=1 in_flight start_one "$h" 0
	in_flight remove_pod "$h" 0
done
echo "# $PODS pods per handler and round, $INFLIGHT in flight, $ROUNDS rounds ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then order="psrun runc"; else order="runc psrun"; fi
	for h in $order; do
		round "$h" "$r"
	done
done

# --- results --------------------------------------------------------------
pct() { # pct FILE P [FIELD]: the P-th percentile (nearest rank) of the "ok" lines' FIELD (2: the total), ms
	awk -v f="${3:-2}" '$1 == "ok" { print $f }' "$1" | sort -n | awk -v p="$2" '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "nan"; exit }
			i = int(p / 100 * NR + 0.999999); if (i < 1) i = 1
			printf "%.1f\n", v[i] / 1000
		}'
}
cpu_s() { # cpu_s HANDLER COLUMN
	awk -v h="$1" -v c="$2" '$1 == h { s += $c } END { printf "%.2f\n", s / 1e6 }' "$BENCH/cpu"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "nan" }'; }
declare -A P50 P95 CPU PCPU
printf '%-6s %6s %12s %12s %14s %12s  %s\n' handler pods "p50 ms" "p95 ms" "runtime cpu s" "pods cpu s" "left (containers pods cgroups processes mounts netns)"
for h in psrun runc; do
	n=$(grep -c '^ok' "$BENCH/times-$h" || true)
	P50[$h]=$(pct "$BENCH/times-$h" 50)
	P95[$h]=$(pct "$BENCH/times-$h" 95)
	CPU[$h]=$(cpu_s "$h" 2)
	PCPU[$h]=$(cpu_s "$h" 3)
	left=$(awk -v h="$h" '$1 == h {
		for (i = 0; i < 6; i++) { d = $(8 + i) - $(2 + i); t[i] += d > 0 ? d : 0 }
	} END { printf "%d %d %d %d %d %d", t[0], t[1], t[2], t[3], t[4], t[5] }' "$BENCH/left")
	printf '%-6s %6s %12s %12s %14s %12s  %s\n' "$h" "$n" "${P50[$h]}" "${P95[$h]}" "${CPU[$h]}" "${PCPU[$h]}" "$left"
	if [ "$left" != "0 0 0 0 0 0" ]; then
		not_ok "$h: left after removal" "$left"
	fi
done
for h in psrun runc; do
	echo "$h: p50 of each step: runp $(pct "$BENCH/times-$h" 50 3) ms, create $(pct "$BENCH/times-$h" 50 4) ms, start $(pct "$BENCH/times-$h" 50 5) ms"
done
r50=$(ratio "${P50[psrun]}" "${P50[runc]}")
echo "psrun/runc: p50 $r50, p95 $(ratio "${P95[psrun]}" "${P95[runc]}"), runtime cpu $(ratio "${CPU[psrun]}" "${CPU[runc]}"), pods cpu $(ratio "${PCPU[psrun]}" "${PCPU[runc]}")"
if awk -v r="$r50" 'BEGIN { exit !(r != "nan" && r <= 0.5) }'; then
	echo "goal (psrun p50 <= 0.5 x runc's): met"
else
	echo "goal (psrun p50 <= 0.5 x runc's): not met ($r50)"
fi
exit "$FAILED"
