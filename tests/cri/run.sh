#!/bin/bash
# SPDX-License-Identifier: MIT
# The CRI tier: a test-owned containerd with its CRI plugin, psrun and runc
# as two runtime handlers of io.containerd.runc.v2 (BinaryName), a CNI
# bridge in 198.18.0.0/15 with no gateway (no traffic leaves it), the pause
# and busybox images built offline and imported (tests/cri/setup.sh); then,
# for each handler, a crictl pod life cycle, and critest (cri-tools, built
# by scripts/fetch-cri-tools.sh) side by side. psrun must pass every critest
# spec runc passes here; each other difference is in known-failures.txt
# with a reason, and an unexpected pass fails the tier too.
#
# Usage: tests/cri/run.sh [BUILD]
#   CRI_CRITEST=full    critest specs run (default: full, every non-serial
#                       spec, as `make check` and `make check-cri` run;
#                       focus: the selection CRI_FOCUS below; off: no
#                       critest)
#   CRI_FOCUS=RE        the ginkgo focus of the focus selection
#   CRI_KEEP=1          keep the work directory
#   CRI_BENCH=0         no run of bench/cri-pods.sh at its smallest
#
# Prints "ok/not ok/skip - NAME" lines, then "cri: N passed, N failed,
# N skipped" and exits nonzero iff a check failed. Needs root. Everything
# it starts or creates (containerd, shims, containers, cgroups below this
# run's own, netns, the CNI bridge) is removed on exit, failure or not.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${1:-build}
KNOWN=$HERE/known-failures.txt
# The whole non-serial suite takes about 70 s per handler here, the focus
# selection about as long (it is most of the suite): make check runs all.
MODE=${CRI_CRITEST:-full}
# The focus selection: the pod, container, exec/log/attach and
# namespace/security specs a kubelet's everyday use exercises.
FOCUS=${CRI_FOCUS:-'PodSandbox|Container|Streaming|Networking|Security Context'}
# Never run: serial specs (they assume the whole node) and the benchmarks.
SKIP_RE='\[Serial\]|[Bb]enchmark'

PASSED=0
FAILED=0
SKIPPED=0
ok() {
	PASSED=$((PASSED + 1))
	echo "ok - $1"
}
not_ok() {
	FAILED=$((FAILED + 1))
	echo "not ok - $1${2:+: $2}"
}
skipped() {
	SKIPPED=$((SKIPPED + 1))
	echo "skip - $1: $2"
}
summary() {
	echo "cri: $PASSED passed, $FAILED failed, $SKIPPED skipped"
}
# The tier cannot run on this host: say why, count one skip.
skip_tier() {
	skipped cri "$1"
	summary
	exit 0
}

# shellcheck source=tests/cri/setup.sh
. "$HERE/setup.sh"

# shellcheck source=tests/cri/lifecycle.sh
. "$HERE/lifecycle.sh"
for handler in psrun runc; do
	lifecycle "$handler"
done

# shellcheck source=tests/cri/critest.sh
. "$HERE/critest.sh"
critest_side_by_side

# The CRI benchmark (bench/cri-pods.sh) kept working, at its smallest: two
# pods per handler on a containerd of its own, every column printed,
# nothing left.
bench_check() {
	local out rc h bad=""
	out=$(BENCH_PODS=2 BENCH_INFLIGHT=2 BENCH_ROUNDS=1 timeout -k 10 300 \
		"$REPO/bench/cri-pods.sh" "$BUILD" 2>&1 </dev/null) && rc=0 || rc=$?
	for h in psrun runc; do
		grep -Eq "^$h +2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 0 0 0 0 0$" <<<"$out" || bad="$bad $h's row;"
		grep -Eq "^$h: p50 of each step: runp [0-9.]+ ms, create [0-9.]+ ms, start [0-9.]+ ms$" <<<"$out" || bad="$bad $h's steps;"
	done
	grep -Eq '^psrun/runc: p50 [0-9.]+, p95 [0-9.]+, runtime cpu [0-9.]+, pods cpu [0-9.]+$' <<<"$out" || bad="$bad the ratios;"
	grep -Eq '^goal \(psrun p50 <= 0.5 x runc.s\): (met|not met \([0-9.]+\))$' <<<"$out" || bad="$bad the goal;"
	if [ "$rc" -eq 0 ] && [ -z "$bad" ]; then
		ok "bench/cri-pods.sh: 2 pods per handler, every column, nothing left"
	else
		not_ok "bench/cri-pods.sh: 2 pods per handler" "exit $rc, missing:$bad $(tail -n 4 <<<"$out" | tr '\n' '|')"
	fi
}
[ "${CRI_BENCH:-1}" = 0 ] || bench_check

summary
[ "$FAILED" -eq 0 ]
