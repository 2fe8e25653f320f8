#!/bin/bash
# SPDX-License-Identifier: MIT
# The peer tier: crun's own test suite (tests/*.py from Debian's crun source
# package, fetched by scripts/fetch-crun-tests.sh into BUILD/peer) run with
# OCI_RUNTIME pointing at psrun. Every test either passes or is listed in
# tests/peer/known-failures.txt with a reason; an unexpected failure, an
# unexpected pass and a stale entry all fail the tier.
#
# Usage: tests/peer/run.sh [BUILD]
#   PEER_COMPARE=0      do not also run the suite with crun (default: when
#                       crun is installed, its counts on this host are shown)
#   PEER_TIMEOUT=S      seconds one test may take (default 30)
#   PEER_FILES="a.py"   run only these test files (then stale entries of
#                       the others are not checked)
#   PEER_KEEP=1         keep the work directory (the suite's output)
#
# Prints "ok - FILE:TEST", "not ok - FILE:TEST" (the suite's stderr after it
# as '#' lines), "skip - FILE:TEST" per test, then
# "peer: N passed, N failed, N skipped" (failed: unexpected results only;
# the known failures are counted apart) and exits nonzero iff one was
# unexpected. Needs root. The containers' cgroups go below a cgroup of this
# run, which is emptied and removed on exit, as is the work directory.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${1:-build}
KNOWN=$HERE/known-failures.txt
TEST_TIMEOUT=${PEER_TIMEOUT:-30}

summary() { # summary PASSED FAILED SKIPPED
	echo "peer: $1 passed, $2 failed, $3 skipped"
}

if [ "$(id -u)" -ne 0 ]; then
	echo "skip - peer: needs root (the suite creates containers as root)"
	summary 0 0 1
	exit 0
fi
PSRUN=$(realpath "$BUILD/psrun")
if [ ! -x "$PSRUN" ]; then
	echo "not ok - peer: $BUILD/psrun is not built"
	summary 0 1 0
	exit 1
fi
# Debian's python3 (python3-libmount and kin live in its dist-packages),
# else whatever python3 is first in PATH.
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3 || true)
if [ -z "$PYTHON" ]; then
	echo "not ok - peer: python3 is not installed (scripts/install-deps.sh installs it)"
	summary 0 1 0
	exit 1
fi

# --- the suite ----------------------------------------------------------------
if ! SRC=$("$REPO/scripts/fetch-crun-tests.sh" "$BUILD" 2>"$BUILD/peer-fetch.log"); then
	echo "not ok - peer: fetching crun's source package failed:"
	sed 's/^/#   /' "$BUILD/peer-fetch.log"
	summary 0 1 0
	exit 1
fi
CRUN_VERSION=${SRC##*/crun-}
# tests/init.c, static, as crun's Makefile builds it; its config.h only
# says what this host has.
INIT=$(realpath "$BUILD/peer")/init
if [ ! -x "$INIT" ] || [ "$SRC/tests/init.c" -nt "$INIT" ]; then
	cfg=$BUILD/peer/config.h
	: >"$cfg"
	echo '#define HAVE_ERROR_H 1' >>"$cfg"
	[ -f /usr/include/seccomp.h ] && echo '#define HAVE_SECCOMP 1' >>"$cfg"
	if ! cc -static -O2 -I"$BUILD/peer" -o "$INIT" "$SRC/tests/init.c" 2>"$BUILD/peer-init.log"; then
		echo "not ok - peer: building crun's tests/init.c failed:"
		sed 's/^/#   /' "$BUILD/peer-init.log"
		summary 0 1 0
		exit 1
	fi
fi

# --- clean-up -------------------------------------------------------------------
WORK=$(mktemp -d "$(realpath "$BUILD/peer")/run.XXXXXX")
# shellcheck source=tests/lib/cgroup.sh
. "$HERE/../lib/cgroup.sh"
# Containers a failed test left: killed, whatever their state (a frozen
# one is thawed, or SIGKILL would wait).
reap_leftovers() {
	local pids f
	for f in "${CG_DIRS[@]}"; do
		[ -d "$f" ] || continue
		find "$f" -mindepth 2 -name freezer.state 2>/dev/null | while read -r s; do
			echo THAWED >"$s" 2>/dev/null || true
		done
	done
	pids=$(cg_pids)
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	pids=$(find /proc/[0-9]*/root -maxdepth 0 -lname "$WORK/*" 2>/dev/null |
		sed -e 's|^/proc/||' -e 's|/root$||' || true)
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	return 0
}
cleanup() {
	set +e
	local m
	# Back to where this shell came from, then the run's subtree goes.
	cg_leave
	reap_leftovers
	sleep 0.2
	cg_remove 30
	awk -v d="$WORK" '{ if (index($5, d "/") == 1) print length($5) " " $5 }' /proc/self/mountinfo |
		sort -rn | cut -d' ' -f2- | while read -r m; do umount -l "$m"; done
	if [ -z "${PEER_KEEP:-}" ]; then
		rm -rf --one-file-system "$WORK"
	else
		echo "# kept: $WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# This shell moves into a new cgroup below its own in every hierarchy:
# psrun nests the containers' cgroups below its caller's, so whatever a test
# leaves is found there, and nothing lands outside this run's subtree.
cg_enter "psrun-peer-${WORK##*.}"

# --- known failures ----------------------------------------------------------------
# "fail FILE:TEST REASON": the test fails with psrun, for REASON;
# "skip FILE:TEST REASON": the test is not run at all (it would change the
# host outside this run, or its result depends on chance).
declare -A EXPECTED=()
declare -A NOT_RUN=()
declare -A SEEN=()
while read -r kind name reason; do
	case "$kind" in
	'' | '#'*) continue ;;
	fail) EXPECTED[$name]=" $reason" ;;
	skip) NOT_RUN[$name]=" $reason" ;;
	*)
		echo "not ok - known-failures.txt: \"$kind $name\": not fail or skip"
		summary 0 1 0
		exit 1
		;;
	esac
done <"$KNOWN"
# Tests that need what some hosts do not give, probed here: where the host
# gives it they run, and must pass. A list entry could only be wrong on one
# kind of host or the other.
if ! readlink /proc/1/ns/net >/dev/null 2>&1; then
	# The test joins pid 1's network namespace by path; opening it needs
	# ptrace access to pid 1, which a nested or confined host may deny.
	NOT_RUN[test_exec.py:exec-root-netns-with-userns]=" this host: /proc/1/ns/net cannot be opened (pid 1 is out of this shell's ptrace reach)"
fi

# The names of a test file's tests, in its own order (its all_tests).
test_names() { # test_names FILE
	(cd "$SRC/tests" && PYTHONPATH=$HERE/pylib:$SRC/tests PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -c '
import importlib, sys
for name in importlib.import_module(sys.argv[1]).all_tests:
    print(name)' "$(basename "$1" .py)")
}

# run_suite RUNTIME OUTDIR: runs every test alone (RUN_TESTS=NAME, the
# suite's own filter), so that each has its own time limit and its own
# stderr: TAP lines to OUTDIR/FILE:TEST.out, stderr to OUTDIR/FILE:TEST.err,
# a nonzero status of the file to OUTDIR/FILE:TEST.status.
run_suite() {
	local runtime=$1 out=$2 f base name cwd
	mkdir -p "$out"
	for f in "$SRC"/tests/test_*.py; do
		base=${f##*/}
		if [ -n "${PEER_FILES:-}" ] && [[ " $PEER_FILES " != *" $base "* ]]; then
			continue
		fi
		if ! test_names "$f" >"$out/$base.names" 2>"$out/$base:.err"; then
			echo "1..1" >"$out/$base:.out"
			echo "not ok 1 - (its test list could not be read)" >>"$out/$base:.out"
			continue
		fi
		while IFS= read -r name; do
			if [ -n "${NOT_RUN[$base:$name]+x}" ]; then
				echo "ok 1 - $name #SKIP not run:${NOT_RUN[$base:$name]}" >"$out/$base:$name.out"
				continue
			fi
			# Some tests name the init binary ./tests/init.
			cwd=$out/cwd
			rm -rf "$cwd"
			mkdir -p "$cwd/tests"
			ln -s "$INIT" "$cwd/tests/init"
			(cd "$cwd" &&
				TMPDIR=$cwd INIT=$INIT OCI_RUNTIME=$runtime LANG=C RUN_TESTS=$name \
					PYTHONPATH=$HERE/pylib:$SRC/tests PYTHONDONTWRITEBYTECODE=1 \
					timeout -k 5 "$TEST_TIMEOUT" "$PYTHON" "$f" \
					>"$out/$base:$name.out" 2>"$out/$base:$name.err" </dev/null) ||
				echo "$?" >"$out/$base:$name.status"
			reap_leftovers
		done <"$out/$base.names"
	done
}

# count OUTDIR: "passed failed skipped" of a run.
count() {
	cat "$1"/*:*.out 2>/dev/null | awk '
		/^ok [0-9]+ - .*#SKIP/ { s++; next }
		/^ok [0-9]+ - / { p++; next }
		/^not ok [0-9]+ - / { f++ }
		END { printf "%d %d %d\n", p, f, s }'
}

start=$SECONDS
echo "# crun $CRUN_VERSION's tests ($SRC/tests), OCI_RUNTIME=$PSRUN"
run_suite "$PSRUN" "$WORK/psrun"
psrun_secs=$((SECONDS - start))

passed=0
unexpected=0
skipped=0
known=0
for out in "$WORK"/psrun/*.out; do
	key=${out##*/}
	key=${key%.out}
	base=${key%%:*}
	err=$WORK/psrun/$key.err
	line=$(grep -E '^(not )?ok [0-9]+ - ' "$out" | head -n 1 || true)
	if [ -f "$WORK/psrun/$key.status" ]; then
		st=$(cat "$WORK/psrun/$key.status")
		case "$st" in
		124 | 137) echo "# $key: timed out after $TEST_TIMEOUT s" >>"$err" ;;
		*) echo "# $key: the test file exited with status $st" >>"$err" ;;
		esac
		line="not ok"
	fi
	[ -n "$line" ] || line="not ok (no result)"
	SEEN[$key]=1
	case "$line" in
	"ok "*"#SKIP"*)
		echo "skip - $key$(sed -n 's/^ok [0-9]* - .*#SKIP not run:/:/p' "$out")"
		skipped=$((skipped + 1))
		;;
	"ok "*)
		if [ -n "${EXPECTED[$key]+x}" ]; then
			echo "not ok - $key: passes, but known-failures.txt lists it:${EXPECTED[$key]}"
			unexpected=$((unexpected + 1))
		else
			echo "ok - $key"
			passed=$((passed + 1))
		fi
		;;
	*)
		if [ -n "${EXPECTED[$key]+x}" ]; then
			echo "xfail - $key:${EXPECTED[$key]}"
			known=$((known + 1))
		else
			echo "not ok - $key"
			unexpected=$((unexpected + 1))
			{ grep -v '^$' "$err" || true; } | tail -n 4 | cut -c1-300 | sed 's/^/#   /'
		fi
		;;
	esac
done
if [ -z "${PEER_FILES:-}" ]; then
	for key in "${!EXPECTED[@]}" "${!NOT_RUN[@]}"; do
		if [ -z "${SEEN[$key]+x}" ]; then
			echo "not ok - $key: listed in known-failures.txt, but the suite has no such test"
			unexpected=$((unexpected + 1))
		fi
	done
fi

echo "# psrun: $passed passed, $known known failures, $unexpected unexpected, $skipped skipped ($psrun_secs s)"
if [ "${PEER_COMPARE:-1}" != 0 ] && command -v crun >/dev/null; then
	start=$SECONDS
	run_suite "$(command -v crun)" "$WORK/crun"
	read -r cp cf cs <<<"$(count "$WORK/crun")"
	echo "# crun $(crun --version | sed -n 's/^crun version //p') on this host: $cp passed, $cf failed, $cs skipped ($((SECONDS - start)) s)"
fi
summary "$passed" "$unexpected" "$((skipped + known))"
[ "$unexpected" -eq 0 ]
