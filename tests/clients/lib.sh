# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Helpers for the client harness (sourced by run.sh): result lines, the
# check runner, bounded polling, and the clean-up primitives every stage
# uses to take back what it started. Nothing here starts anything.

PASSED=0
FAILED=0
SKIPPED=0

# The checks have a deadline so a hung runtime cannot stall CI: every client
# command and every wait is cut to what is left of it. CLIENTS_BUDGET
# (seconds) is shared two thirds for docker, one third for containerd (a
# run with runc takes about a quarter of it); clean-up has its own bounds
# (about 40 s at worst).
BUDGET=${CLIENTS_BUDGET:-180}
DEADLINE=$((SECONDS + BUDGET))
# The most one client command may take (a docker run takes 1-3 s here):
# a hang costs this much of the budget, not all of it.
CMD_TIMEOUT=20

# One result line per check, then the detail, if any, as '#' lines that
# counting parsers ignore.
report() { # report ok|not ok|skip NAME [WHY [DETAIL-FILE]]
	local verdict=$1 name=$2 why=${3:-} detail=${4:-}
	case "$verdict" in
	ok) PASSED=$((PASSED + 1)) ;;
	"not ok") FAILED=$((FAILED + 1)) ;;
	skip) SKIPPED=$((SKIPPED + 1)) ;;
	esac
	if [ -n "$why" ]; then
		echo "$verdict - $name: $why"
	else
		echo "$verdict - $name"
	fi
	if [ -n "$detail" ] && [ -s "$detail" ]; then
		# Enough to diagnose, not a flood.
		tail -n 40 "$detail" | sed 's/^/#   /'
	fi
}

# check NAME FUNCTION [ARGS...]
# Runs FUNCTION in a subshell with errexit on, output captured. Inside it:
#   fail MESSAGE   the check fails with MESSAGE (its last line is the "why")
#   skip_check WHY the host lacks what the check needs (exit 77)
# and any command that fails unexpectedly fails the check, naming it.
check() {
	local name=$1
	shift
	local out=$SCRATCH/check.out rc why t0
	t0=$(now_ms)
	trace_mark "$name"
	if ((SECONDS >= DEADLINE)); then
		report "not ok" "$name" "not run: the stage's share of the ${BUDGET} s budget is used up"
		return 0
	fi
	set +e
	(
		set -eEuo pipefail
		trap 'echo "command failed (status $?): $BASH_COMMAND"' ERR
		"$@"
	) >"$out" 2>&1 </dev/null
	rc=$?
	set -e
	echo "$(($(now_ms) - t0)) $name" >>"$SCRATCH/times"
	case "$rc" in
	0) report ok "$name" ;;
	77) report skip "$name" "$(tail -n 1 "$out")" ;;
	*)
		why=$(grep -E '^FAIL: ' "$out" | tail -n 1 | sed 's/^FAIL: //') || true
		[ -n "$why" ] || why=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1) || true
		[ -n "$why" ] || why="exit status $rc"
		grep -vxF -e "FAIL: $why" -e "$why" "$out" >"$out.detail" || true
		report "not ok" "$name" "$why" "$out.detail"
		;;
	esac
}

# step NAME FUNCTION [ARGS...]: like check, but FUNCTION runs in this shell
# (for starting daemons, whose PIDs must outlive it); it reports a failure
# by returning nonzero, its last line saying why. Returns its status.
step() {
	local name=$1
	shift
	local out=$SCRATCH/step.out rc=0 why
	"$@" >"$out" 2>&1 </dev/null || rc=$?
	if [ "$rc" -eq 0 ]; then
		report ok "$name"
	else
		why=$(grep -v '^[[:space:]]*$' "$out" | head -n 1) || true
		report "not ok" "$name" "${why:-exit status $rc}" "$out"
	fi
	return "$rc"
}

# The slowest checks, as a '#' line: where a runtime (or the host) is slow.
slowest_checks() {
	[ -s "$SCRATCH/times" ] || return 0
	echo "# slowest checks (ms): $(sort -rn "$SCRATCH/times" | head -n "${1:-5}" |
		awk '{ t = $1; $1 = ""; printf "%s%s %d", sep, substr($0, 2), t; sep = ", " }')"
}

# With CLIENTS_TRACE, the runtime calls that follow are filed under NAME.
trace_mark() {
	[ -z "${CLIENTS_TRACE:-}" ] || echo "## $1" >>"$CLIENTS_TRACE/invocations.log"
}

fail() {
	echo "FAIL: $*"
	exit 1
}

skip_check() {
	echo "$*"
	exit 77
}

# Seconds left before the deadline, at least 1 and at most $1.
budget() {
	local left=$((DEADLINE - SECONDS))
	((left < 1)) && left=1
	((left > $1)) && left=$1
	echo "$left"
}

# capture CMD...: run CMD, keep its stdout in OUT, stderr in ERR, status in RC.
# (The || keeps errexit and the check's ERR trap out of it.)
capture() {
	RC=0
	"$@" >"$SCRATCH/capture.out" 2>"$SCRATCH/capture.err" || RC=$?
	# dockerd runs with --ip-forward=false (the host's setting is not the
	# test's to change), and the docker CLI says so on every run: drop it.
	OUT=$(tr -d '\r' <"$SCRATCH/capture.out" | grep -vE "$NOISE" || true)
	ERR=$(tr -d '\r' <"$SCRATCH/capture.err" | grep -vE "$NOISE" || true)
}
NOISE='^WARNING: IPv4 forwarding is disabled|^IPv4 forwarding is disabled'

# What the last capture printed, for failure messages.
captured() {
	if grep -q '^timeout: sending signal' <<<"$ERR"; then
		printf 'TIMED OUT (killed after at most %s s), ' "$CMD_TIMEOUT"
	fi
	printf 'status %s; stdout: %s; stderr: %s' "$RC" \
		"$(printf '%s' "$OUT" | head -c 600 | tr '\n' '|')" \
		"$(printf '%s' "$ERR" | head -c 600 | tr '\n' '|')"
}

expect_rc() { # expect_rc N [WHAT]
	[ "$RC" = "$1" ] || fail "${2:-command}: expected exit status $1, got $(captured)"
}

expect_out() { # expect_out EXACT [WHAT]
	[ "$OUT" = "$1" ] || fail "${2:-command}: expected output '$1', got $(captured)"
}

expect_out_match() { # expect_out_match ERE [WHAT]
	grep -qE -- "$1" <<<"$OUT" || fail "${2:-command}: output does not match /$1/: $(captured)"
}

# wait_until SECONDS CMD...: poll CMD (quietly) until it succeeds; false on
# timeout. Polling, not sleeping a fixed time: these machines are noisy.
wait_until() {
	local limit
	limit=$(budget "$1")
	shift
	local end=$((SECONDS + limit))
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		((SECONDS >= end)) && return 1
		sleep 0.1
	done
}

now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# --- clean-up primitives --------------------------------------------------

# PIDs of processes whose command line mentions PATTERN (a path unique to
# this run, within one argument: nothing of anyone else matches), never this
# shell. One grep over /proc: it lists itself too, gone by the time its PID
# is checked.
pids_mentioning() {
	local pat=$1 f p
	# An empty or short pattern would match everyone's processes.
	[ "${#pat}" -ge 8 ] || return 0
	while IFS= read -r f; do
		p=${f#/proc/}
		p=${p%/cmdline}
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
		[ -e "/proc/$p" ] && echo "$p"
	done < <(grep -laF -- "$pat" /proc/[0-9]*/cmdline 2>/dev/null)
	return 0
}

# PIDs of processes whose root directory is below DIR: the containers of
# this run, wherever a runtime left them (its cgroups or not).
pids_rooted_below() {
	case "$1" in /?*/?*) ;; *) return 0 ;; esac
	find /proc/[0-9]*/root -maxdepth 0 -lname "$1/*" 2>/dev/null |
		sed -e 's|^/proc/||' -e 's|/root$||' || true
}

# with_descendants PID...: those PIDs and every process below them, so that
# what a stuck runtime forked goes with it.
with_descendants() {
	[ $# -gt 0 ] || return 0
	ps -e -o pid=,ppid= | awk -v roots="$*" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
		{ parent[$1] = $2 }
		END {
			do {
				grew = 0
				for (p in parent)
					if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; grew = 1 }
			} while (grew)
			for (p in keep) print p
		}' | grep -vxE "$$|$BASHPID" || true
}

# stop_pids SECONDS PID...: SIGTERM, wait up to SECONDS, then SIGKILL.
stop_pids() {
	local grace=$1 p alive end
	shift
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null || true
	end=$((SECONDS + grace))
	while :; do
		alive=
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null && alive="$alive $p"
		done
		[ -z "$alive" ] && return 0
		((SECONDS >= end)) && break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $alive 2>/dev/null || true
	sleep 0.2
}

# The v1 hierarchies and the v2 one, as mount points.
cgroup_mounts() {
	awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo
}

# Processes still in any cgroup below PATH (relative to each hierarchy root).
cgroup_pids_below() {
	local rel=$1 m
	# Never the whole hierarchy: only a directory of this run.
	case "$rel" in */psrun-clients-*) ;; *) return 0 ;; esac
	for m in $(cgroup_mounts); do
		[ -d "$m$rel" ] || continue
		find "$m$rel" -name cgroup.procs -exec cat {} + 2>/dev/null || true
	done | sort -un
}

# Directories left below PATH in any hierarchy.
cgroup_dirs_below() {
	local rel=$1 m
	case "$rel" in */psrun-clients-*) ;; *) return 0 ;; esac
	for m in $(cgroup_mounts); do
		[ -d "$m$rel" ] && find "$m$rel" -mindepth 1 -type d 2>/dev/null
	done
	return 0
}

# rmdir_tree DIR: remove a cgroup directory and those below it, depth
# first. Right after its last process died a cgroup can still be busy for a
# moment: retry for a few seconds.
rmdir_tree() {
	local dir=$1
	case "$dir" in */psrun-clients-*) ;; *) return 0 ;; esac
	for _ in $(seq 1 30); do
		[ -d "$dir" ] || return 0
		find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Mount points at or below DIR, deepest first (octal escapes decoded).
mounts_below() {
	local dir=$1
	case "$dir" in /?*/?*) ;; *) return 0 ;; esac
	awk -v d="$dir" '{ mp = $5; gsub(/\\040/, " ", mp);
		if (mp == d || index(mp, d "/") == 1) print length(mp) " " mp }' \
		/proc/self/mountinfo | sort -rn | cut -d' ' -f2-
}

unmount_below() {
	local dir=$1 list m
	# A lazy unmount per pass; overlapping and stacked mounts may need a few.
	for _ in 1 2 3 4 5; do
		list=$(mounts_below "$dir")
		[ -z "$list" ] && return 0
		while IFS= read -r m; do
			umount -l "$m" 2>/dev/null || true
		done <<<"$list"
	done
	[ -z "$(mounts_below "$dir")" ]
}

# Host paths the clients create whatever they are told (containerd 1.6's
# shim sockets live in /run/containerd/s, ctr's FIFOs default to
# /run/containerd/fifo, dockerd makes /run/docker/plugins):
# those that did not exist before the run are removed after it, if empty.
HOST_PATHS="/run/containerd /run/containerd/s /run/containerd/fifo /run/docker /run/docker/plugins"
HOST_PATHS_NEW=
note_host_paths() {
	local p
	for p in $HOST_PATHS; do
		[ -e "$p" ] || HOST_PATHS_NEW="$p $HOST_PATHS_NEW"
	done
}
tidy_host_paths() {
	local p
	# Reverse order of HOST_PATHS: children first.
	for p in $HOST_PATHS_NEW; do
		[ -d "$p" ] && rmdir "$p" 2>/dev/null
	done
	return 0
}
