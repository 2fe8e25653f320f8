#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/session.sh PSRUN
#
# Sessions side by side, in one interleaved run:
#
#   session-exec  psrun session exec ID -- true   (CLI: a client process, the
#                 control socket, the supervisor's clone into the session)
#   run           psrun run -- true                (a new sandbox each time)
#   oci-exec      psrun exec ID true into a running OCI container (busybox
#                 bundle, psrun as the OCI runtime)
#   runc-exec     runc exec into the same bundle run by runc (when installed)
#   gvisor-exec   psrun session exec into a session with backend: gvisor
#                 (runsc exec into the session's sandbox, behind the supervisor)
#   runsc-exec    runsc exec into the busybox bundle run by runsc alone
#                 (--ignore-cgroups --network=none, psrun's platform)
#
# then, in process through the public API (bench/session-api.c, built
# against libpsrun.so next to PSRUN): psrun_exec of `true`, create+destroy,
# a 100 MiB binary file written and read back, and the caller's peak RSS
# while an exec prints 1 GiB.
#
# Environment: BENCH_RUNS=100 (rounds), BENCH_WARMUP=5.
set -u
export LC_ALL=C
[ $# -eq 1 ] || {
	echo "usage: $0 PATH/TO/psrun" >&2
	exit 2
}
PSRUN=$1
case "$PSRUN" in /*) ;; *) PSRUN=$PWD/$PSRUN ;; esac
BUILD=$(dirname "$PSRUN")
RUNS=${BENCH_RUNS:-100}
WARMUP=${BENCH_WARMUP:-5}
[ "$(id -u)" -eq 0 ] || {
	echo "bench: needs root" >&2
	exit 2
}

TMP=$(mktemp -d /tmp/psrun-bench-session.XXXXXX)
chmod 0755 "$TMP"
export PSRUN_SESSION_ROOT=$TMP/sessions
SID=bench-$$
GSID=bench-gvisor-$$
OCI_ID=bench-oci-$$
RUNC_ID=bench-runc-$$
RUNSC_ID=bench-runsc-$$
cleanup() {
	"$PSRUN" session destroy "$SID" >/dev/null 2>&1
	"$PSRUN" session destroy "$GSID" >/dev/null 2>&1
	command -v runsc >/dev/null && runsc --root "$TMP/runsc" delete --force "$RUNSC_ID" >/dev/null 2>&1
	"$PSRUN" --root "$TMP/oci" delete --force "$OCI_ID" >/dev/null 2>&1
	command -v runc >/dev/null && runc --root "$TMP/runc" delete --force "$RUNC_ID" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

"$PSRUN" session create --name "$SID" >/dev/null || exit 1

# A busybox bundle running `sleep 3600` for the exec rows.
BB=$(command -v busybox || echo /bin/busybox)
mkdir -p "$TMP/bundle/rootfs/bin" "$TMP/bundle/rootfs/proc" "$TMP/bundle/rootfs/dev"
cp "$BB" "$TMP/bundle/rootfs/bin/busybox"
for t in sh sleep true; do ln -s busybox "$TMP/bundle/rootfs/bin/$t"; done
(cd "$TMP/bundle" && "$PSRUN" spec >/dev/null 2>&1 && sed -i \
	-e 's/"terminal": true/"terminal": false/' \
	-e 's/"sh"$/"sleep", "3600"/' config.json)
have_oci=0
if "$PSRUN" --root "$TMP/oci" run --bundle "$TMP/bundle" --detach "$OCI_ID" >/dev/null 2>&1 ||
	{ "$PSRUN" --root "$TMP/oci" create --bundle "$TMP/bundle" "$OCI_ID" >/dev/null 2>&1 &&
		"$PSRUN" --root "$TMP/oci" start "$OCI_ID" >/dev/null 2>&1; }; then
	have_oci=1
fi
have_runc=0
if command -v runc >/dev/null &&
	runc --root "$TMP/runc" run --bundle "$TMP/bundle" --detach "$RUNC_ID" >/dev/null 2>&1; then
	have_runc=1
fi

have_gvisor=0
if command -v runsc >/dev/null &&
	"$PSRUN" session create --name "$GSID" -o backend=gvisor >/dev/null 2>"$TMP/gvisor.err"; then
	have_gvisor=1
fi
have_runsc=0
RUNSC_PLATFORM=$(awk '$2 == "ok" { print $1; exit }' /run/psrun-gvisor/platforms 2>/dev/null)
if [ $have_gvisor = 1 ] && runsc --root "$TMP/runsc" --ignore-cgroups --network=none \
	--platform="${RUNSC_PLATFORM:-ptrace}" run --bundle "$TMP/bundle" --detach "$RUNSC_ID" \
	</dev/null >/dev/null 2>&1; then
	have_runsc=1
fi

declare -A samples
rows="session-exec run"
[ $have_oci = 1 ] && rows="$rows oci-exec" || echo "oci-exec: skipped (the OCI container did not start)"
[ $have_runc = 1 ] && rows="$rows runc-exec" || echo "runc-exec: skipped (runc missing or failed)"
[ $have_gvisor = 1 ] && rows="$rows gvisor-exec" ||
	echo "gvisor-exec: skipped ($(head -c 300 "$TMP/gvisor.err" 2>/dev/null || echo runsc missing))"
[ $have_runsc = 1 ] && rows="$rows runsc-exec" || echo "runsc-exec: skipped (runsc missing or failed)"

one() {
	case $1 in
	session-exec) "$PSRUN" session exec "$SID" -- true ;;
	run) "$PSRUN" run -- true ;;
	oci-exec) "$PSRUN" --root "$TMP/oci" exec "$OCI_ID" true ;;
	runc-exec) runc --root "$TMP/runc" exec "$RUNC_ID" true ;;
	gvisor-exec) "$PSRUN" session exec "$GSID" -- true ;;
	runsc-exec) runsc --root "$TMP/runsc" exec "$RUNSC_ID" /bin/true ;;
	esac
}

for ((i = 0; i < RUNS + WARMUP; i++)); do
	for row in $rows; do
		t0=$(date +%s%N)
		one "$row" >/dev/null 2>&1 || {
			echo "bench: $row failed" >&2
			exit 1
		}
		t1=$(date +%s%N)
		[ $i -ge $WARMUP ] && samples[$row]+="$(((t1 - t0) / 1000)) "
	done
done

printf '%-14s %10s %10s %10s\n' row "median ms" "p90 ms" "min ms"
for row in $rows; do
	tr ' ' '\n' <<<"${samples[$row]}" | grep . | sort -n | awk -v row="$row" '
		{ v[NR] = $1 }
		END { printf "%-14s %10.2f %10.2f %10.2f\n", row, v[int(NR / 2) + 1] / 1000,
		      v[int(NR * 0.9)] / 1000, v[1] / 1000 }'
done

# In process, through the public API.
cc -O2 -std=gnu11 -Wall -Wextra -Iinclude -o "$TMP/session-api" bench/session-api.c \
	-L"$BUILD" -l:libpsrun.so -Wl,-rpath,"$BUILD" || exit 1
"$TMP/session-api" "$((RUNS * 2))"
