#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/bench/run.sh BUILD
#
# bench/compare.sh, the regression guard, kept working: its bad inputs fail
# with one line naming the field, and one pair of BUILD against itself prints
# a ratio for each row asked for; bench/cri-pods.sh's bad inputs too (its
# small real run is the cri tier's). Needs root (it starts sandboxes).
set -u
BUILD=${1:-build}
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
COMPARE=$SRCDIR/bench/compare.sh
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $1"; }

out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect_refused NAME FIELD ENV... -- ARGS...: exit 2, one stderr line naming FIELD.
expect_refused() {
	local name=$1 field=$2 rc
	shift 2
	local envs=()
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	env "${envs[@]}" "${SCRIPT:-$COMPARE}" "$@" >"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q "$field" "$err"; then
		ok "$name"
	else
		not_ok "$name (exit $rc: $(head -c 200 "$err"))"
	fi
}

expect_refused "one build only: usage" usage -- "$BUILD"
expect_refused "a build without psrun" "no psrun executable" -- "$BUILD" "$BUILD/no-such-dir"
expect_refused "COMPARE_PAIRS not a number" COMPARE_PAIRS COMPARE_PAIRS=4x -- "$BUILD" "$BUILD"
expect_refused "COMPARE_PAIRS zero" COMPARE_PAIRS COMPARE_PAIRS=0 -- "$BUILD" "$BUILD"
expect_refused "COMPARE_ROWS unknown row" COMPARE_ROWS COMPARE_ROWS="run fork" -- "$BUILD" "$BUILD"
expect_refused "COMPARE_CPU not a number" COMPARE_CPU COMPARE_CPU=-1 -- "$BUILD" "$BUILD"
expect_refused "COMPARE_TASK_CLOCK not 0 or 1" COMPARE_TASK_CLOCK COMPARE_TASK_CLOCK=yes -- "$BUILD" "$BUILD"

SCRIPT=$SRCDIR/bench/cri-pods.sh
expect_refused "BENCH_PODS zero" BENCH_PODS BENCH_PODS=0 -- "$BUILD"
expect_refused "BENCH_INFLIGHT not a number" BENCH_INFLIGHT BENCH_INFLIGHT=8x -- "$BUILD"
expect_refused "BENCH_ROUNDS negative" BENCH_ROUNDS BENCH_ROUNDS=-1 -- "$BUILD"
unset SCRIPT

# One pair of the build against itself: each row measured, with a ratio, in
# the wall-clock table and (with perf) the CPU-time table.
tables=1
command -v perf >/dev/null 2>&1 && tables=2
COMPARE_PAIRS=1 COMPARE_ROWS="run session-exec" "$COMPARE" "$BUILD" "$BUILD" >"$out" 2>"$err"
rc=$?
for row in run session-exec; do
	if [ $rc -eq 0 ] && [ "$(grep -Ec "^$row +1 +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+x +[01]/1$" "$out")" -eq $tables ]; then
		ok "one pair of $row: medians and ratios ($tables tables)"
	else
		not_ok "one pair of $row (exit $rc: $(head -c 300 "$out") $(head -c 300 "$err"))"
	fi
done
echo "bench: $pass passed, $fail failed"
[ $fail -eq 0 ]
