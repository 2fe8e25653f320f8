#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/compare.sh OLD NEW
#
# The regression guard: two builds of psrun paired on the start paths, in one
# interleaved run. OLD and NEW are build directories (holding psrun) or psrun
# binaries. Rows:
#
#   run           psrun run -- true
#   session-exec  psrun session exec ID -- true  (each build in a session of
#                 its own, under a session root of its own)
#   oci-run       psrun run --bundle B ID        (a busybox bundle whose
#                 process is `true`)
#   oci-exec      psrun exec ID true             (into a detached container
#                 of the same bundle, one per build)
#
# Each pair runs OLD and NEW back to back, in an order that alternates from
# pair to pair (ABBA...), so machine noise hits both alike. Per row it prints
# both medians, NEW/OLD of the medians, the median of the per-pair ratios
# (the steadier figure on a busy host) and in how many pairs NEW was faster.
# Then, when perf is installed, the same pairs again timed by CPU instead of
# the wall clock: the task-clock of the whole process tree (`perf stat -e
# task-clock`, children included), which a loaded host's run queue does not
# inflate the way it does wall time.
# A row a build cannot run is reported and left out; the exit status is
# nonzero only when a build fails a run it had started to do.
#
# Environment:
#   COMPARE_PAIRS=40      measured pairs per row (after 3 warm-up pairs)
#   COMPARE_ROWS="run session-exec oci-run oci-exec"
#   COMPARE_CPU=N         pin every run to CPU N (taskset)
#   COMPARE_TASK_CLOCK=0  skip the CPU-time pass (default 1 when perf exists)
# shellcheck disable=SC2317 # cleanup runs from the EXIT trap
set -u
export LC_ALL=C

usage() {
	echo "usage: $0 OLD_BUILD NEW_BUILD (build directories or psrun binaries)" >&2
	exit 2
}
[ $# -eq 2 ] || usage
binary() {
	local p=$1
	[ -d "$p" ] && p=$p/psrun
	case "$p" in /*) ;; *) p=$PWD/$p ;; esac
	[ -x "$p" ] || {
		echo "compare: $1: no psrun executable there" >&2
		exit 2
	}
	echo "$p"
}
OLD_SRC=$(binary "$1") || exit 2
NEW_SRC=$(binary "$2") || exit 2
PAIRS=${COMPARE_PAIRS:-40}
ROWS=${COMPARE_ROWS:-"run session-exec oci-run oci-exec"}
WARMUP=3
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || {
	echo "compare: COMPARE_PAIRS: not a positive number: $PAIRS" >&2
	exit 2
}
for row in $ROWS; do
	case $row in run | session-exec | oci-run | oci-exec) ;; *)
		echo "compare: COMPARE_ROWS: unknown row $row (run, session-exec, oci-run, oci-exec)" >&2
		exit 2
		;;
	esac
done
PIN=()
if [ -n "${COMPARE_CPU:-}" ]; then
	[[ "$COMPARE_CPU" =~ ^[0-9]+$ ]] || {
		echo "compare: COMPARE_CPU: not a CPU number: $COMPARE_CPU" >&2
		exit 2
	}
	PIN=(taskset -c "$COMPARE_CPU")
fi
TASK_CLOCK=${COMPARE_TASK_CLOCK:-1}
case $TASK_CLOCK in 0 | 1) ;; *)
	echo "compare: COMPARE_TASK_CLOCK: 0 or 1, not $TASK_CLOCK" >&2
	exit 2
	;;
esac
command -v perf >/dev/null 2>&1 || TASK_CLOCK=0
[ "$(id -u)" -eq 0 ] || {
	echo "compare: needs root" >&2
	exit 2
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/psrun-compare.XXXXXX")
chmod 0755 "$TMP" # the bundle's rootfs is read by a mapped, unprivileged uid
TAG=cmp-$$
declare -A BIN SID
# Copies, so that a rebuild during the run changes nothing measured.
for b in old new; do
	src=$OLD_SRC
	[ $b = new ] && src=$NEW_SRC
	cp "$src" "$TMP/psrun-$b"
	BIN[$b]=$TMP/psrun-$b
	SID[$b]=$TAG-$b
	mkdir -p "$TMP/$b"
done

cleanup() {
	local b
	for b in old new; do
		PSRUN_SESSION_ROOT=$TMP/$b/sessions "${BIN[$b]}" session destroy "${SID[$b]}" >/dev/null 2>&1
		"${BIN[$b]}" --root "$TMP/$b/oci" delete --force "$TAG-$b-detached" >/dev/null 2>&1
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A busybox bundle: `true` for oci-run, `sleep` for the exec target.
bundle() { # dir process-args-json
	local bb
	bb=$(command -v busybox || echo /bin/busybox)
	[ -x "$bb" ] || return 1
	mkdir -p "$1/rootfs/bin" "$1/rootfs/proc" "$1/rootfs/dev"
	cp "$bb" "$1/rootfs/bin/busybox"
	for t in sh sleep true; do ln -sf busybox "$1/rootfs/bin/$t"; done
	(cd "$1" && "${BIN[new]}" spec >/dev/null 2>&1 && sed -i \
		-e 's/"terminal": true/"terminal": false/' \
		-e "s/\"sh\"\$/$2/" config.json)
}

declare -A SKIP
for row in $ROWS; do
	case $row in
	session-exec)
		for b in old new; do
			PSRUN_SESSION_ROOT=$TMP/$b/sessions "${BIN[$b]}" session create --name "${SID[$b]}" \
				>/dev/null 2>"$TMP/err" || SKIP[$row]="$b: session create: $(head -c 300 "$TMP/err")"
		done
		;;
	oci-run)
		bundle "$TMP/bundle-true" '"true"' || SKIP[$row]="no busybox for the bundle"
		;;
	oci-exec)
		if ! bundle "$TMP/bundle-sleep" '"sleep", "3600"'; then
			SKIP[$row]="no busybox for the bundle"
			continue
		fi
		for b in old new; do
			"${BIN[$b]}" --root "$TMP/$b/oci" run --bundle "$TMP/bundle-sleep" --detach \
				"$TAG-$b-detached" </dev/null >/dev/null 2>"$TMP/err" ||
				SKIP[$row]="$b: run --detach: $(head -c 300 "$TMP/err")"
		done
		;;
	esac
done

SEQ=0
one() { # row build
	local p=${BIN[$2]}
	case $1 in
	run) "${WRAP[@]}" "${PIN[@]}" "$p" run -- true ;;
	session-exec) PSRUN_SESSION_ROOT=$TMP/$2/sessions "${WRAP[@]}" "${PIN[@]}" "$p" session exec "${SID[$2]}" -- true ;;
	oci-run)
		SEQ=$((SEQ + 1))
		"${WRAP[@]}" "${PIN[@]}" "$p" --root "$TMP/$2/oci" run --bundle "$TMP/bundle-true" "$TAG-$SEQ"
		;;
	oci-exec) "${WRAP[@]}" "${PIN[@]}" "$p" --root "$TMP/$2/oci" exec "$TAG-$2-detached" true ;;
	esac
}

declare -A S
WRAP=()
ERRORS=0
ACTIVE=()
for row in $ROWS; do
	if [ -n "${SKIP[$row]:-}" ]; then
		echo "compare: $row skipped (${SKIP[$row]})" >&2
	else
		ACTIVE+=("$row")
	fi
done
echo "compare: $PAIRS pairs of ${ACTIVE[*]}, old=$OLD_SRC new=$NEW_SRC" >&2

# measure KEY: every pair of every active row; KEY=wall (µs from bash's
# clock) or cpu (µs of task-clock from perf stat, the tree's CPU time).
measure() {
	local key=$1 i row b order t0 t1 rc v
	for ((i = 0; i < WARMUP + PAIRS; i++)); do
		order="old new"
		((i % 2)) && order="new old"
		for row in "${ACTIVE[@]}"; do
			for b in $order; do
				if [ "$key" = cpu ]; then
					WRAP=(perf stat "-x," -e task-clock -o "$TMP/perf")
				else
					WRAP=()
				fi
				t0=$EPOCHREALTIME
				one "$row" "$b" </dev/null >/dev/null 2>"$TMP/err"
				rc=$?
				t1=$EPOCHREALTIME
				if ((rc != 0)); then
					echo "compare: $row ($b) failed, exit $rc: $(head -c 300 "$TMP/err")" >&2
					ERRORS=1
					return 1
				fi
				((i < WARMUP)) && continue
				if [ "$key" = cpu ]; then
					v=$(awk -F, '$3 == "task-clock" { printf "%d", $1 * 1000 }' "$TMP/perf")
					[ -n "$v" ] || {
						echo "compare: $row ($b): perf stat gave no task-clock" >&2
						ERRORS=1
						return 1
					}
				else
					v=$((${t1/./} - ${t0/./}))
				fi
				S[$key.$row.$b]+="$v "
			done
		done
	done
}

table() { # key title
	echo "$2"
	printf '%-13s %5s %10s %10s %8s %11s %9s\n' row pairs "old ms" "new ms" new/old "pair-ratio" "new wins"
	for row in "${ACTIVE[@]}"; do
		paste -d' ' <(tr ' ' '\n' <<<"${S[$1.$row.old]:-}" | grep .) \
			<(tr ' ' '\n' <<<"${S[$1.$row.new]:-}" | grep .) | awk -v row="$row" '
			function median(a, n,   i, j, t) {
				for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
				return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			NF == 2 && $1 > 0 { n++; o[n] = $1; w[n] = $2; r[n] = $2 / $1; if ($2 < $1) wins++ }
			END {
				if (n == 0) { printf "%-13s %5d %10s %10s %8s %11s %9s\n", row, 0, "-", "-", "-", "-", "-"; exit }
				mo = median(o, n); mw = median(w, n)
				printf "%-13s %5d %10.2f %10.2f %7.2fx %10.2fx %5d/%d\n", row, n, mo / 1000, mw / 1000,
					mw / mo, median(r, n), wins + 0, n
			}'
	done
}

WRAP=()
measure wall
table wall "wall clock (interleaved pairs)"
if [ $ERRORS = 0 ] && [ "$TASK_CLOCK" = 1 ]; then
	measure cpu
	echo
	table cpu "CPU time of the process tree (perf stat task-clock, interleaved pairs)"
fi
exit $ERRORS
