#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/violations.sh BUILD
#
# What the violations report (the policy key `violations`) costs, with the
# report off, in summary and in full, side by side in one interleaved run
# (each round runs every mode once per workload, in an order that rotates):
#
#   getppid   ns per allowed syscall inside the sandbox: 1,000,000
#             getppid() in a loop (the static probe, timed inside)
#   dd        ms for `dd bs=1 count=200000` (400,000 allowed read/write
#             calls; the result's wall_ms)
#   start     ms of `psrun run -- true`, start to exit (the listener handed
#             over, the audit state read)
#   refused   ns per refused syscall inside the sandbox: 100 ptrace() calls,
#             fewer than one throttling window allows
#
# Per row and mode: median, p10, p90 over the rounds, and the median's ratio
# to `off`. The allowed-syscall rows are the target: summary and full must
# not make them slower (same filter instructions up to the same ALLOW). Not
# a test: it never fails on a number.
#
#   BENCH_RUNS=15   rounds (after 2 warm-up rounds)
set -u
export LC_ALL=C
[ $# -eq 1 ] || {
	echo "usage: $0 BUILD" >&2
	exit 2
}
BUILD=$(realpath "$1")
PSRUN=$BUILD/psrun
PROBE=$BUILD/tests/helper/probe
RUNS=${BENCH_RUNS:-15}
WARMUP=2
[ "$(id -u)" -eq 0 ] || {
	echo "bench: needs root" >&2
	exit 2
}
for f in "$PSRUN" "$PROBE"; do
	[ -x "$f" ] || {
		echo "bench: $f is missing (make && make tests)" >&2
		exit 2
	}
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MODES="off summary full"
ROWS="getppid dd start refused"

now_ns() { date +%s%N; }

# run MODE ROW -> one number on stdout
run() {
	local mode=$1 row=$2 t0 t1 out
	local base=("$PSRUN" run -o "violations=$mode" -o "mounts=$PROBE:/probe:ro")
	case $row in
	getppid) "${base[@]}" -- /probe getppid 1000000 2>/dev/null ;;
	refused) "${base[@]}" -- /probe refusetime 100 ptrace 2>/dev/null ;;
	dd)
		out=$("${base[@]}" --json -- dd if=/dev/zero of=/dev/null bs=1 count=200000 2>&1 >/dev/null |
			tail -1)
		sed -n 's/.*"wall_ms":\([0-9]*\).*/\1/p' <<<"$out"
		;;
	start)
		t0=$(now_ns)
		"${base[@]}" -- true >/dev/null 2>&1
		t1=$(now_ns)
		echo $(((t1 - t0) / 1000000))
		;;
	esac
}

echo "bench: $RUNS rounds (+$WARMUP warm-up), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
round=0
while [ $round -lt $((RUNS + WARMUP)) ]; do
	# The modes' order rotates from round to round.
	case $((round % 3)) in
	0) order="off summary full" ;;
	1) order="summary full off" ;;
	2) order="full off summary" ;;
	esac
	for row in $ROWS; do
		for mode in $order; do
			v=$(run "$mode" "$row")
			[ $round -ge $WARMUP ] && [ -n "$v" ] && echo "$v" >>"$TMP/$row.$mode"
		done
	done
	round=$((round + 1))
done

# stats FILE -> "median p10 p90"
stats() {
	sort -g "$1" | awk '{v[NR] = $1} END {
		if (NR == 0) { print "- - -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		p10 = v[int((NR - 1) * 0.1) + 1]; p90 = v[int((NR - 1) * 0.9) + 1]
		printf "%g %g %g\n", m, p10, p90 }'
}

printf "%-8s %-8s %10s %10s %10s %8s\n" row mode median p10 p90 "x off"
for row in $ROWS; do
	base=""
	for mode in $MODES; do
		read -r med p10 p90 < <(stats "$TMP/$row.$mode")
		[ "$mode" = off ] && base=$med
		ratio=$(awk -v a="$med" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
		printf "%-8s %-8s %10s %10s %10s %8s\n" "$row" "$mode" "$med" "$p10" "$p90" "$ratio"
	done
done
echo "units: getppid and refused ns per call, dd and start ms" >&2
