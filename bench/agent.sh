#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/agent.sh PSRUN
#
# What the agent faces add to an exec, side by side in one interleaved run
# (bench/agent-faces.c, built against libpsrun.so next to PSRUN): psrun_exec
# of `/bin/sh -c true` in process; sandbox_exec {"command": "true"} through a
# `psrun mcp` child over stdio, in both protocol eras, driven by raw
# JSON-RPC from the same C process; and the Python binding's
# sb.exec("true"), timed inside a Python worker (bench/agent-py-worker.py).
# Targets: MCP and Python each within +0.5 ms of the API, median.
#
# Environment: BENCH_RUNS=200 (rounds), BENCH_GAP_MS=5 (pause before each
# exec), BENCH_PY_BALLAST_MB=0 (memory the Python worker touches before it
# makes its Sandbox).
set -u
export LC_ALL=C
[ $# -eq 1 ] || {
	echo "usage: $0 PATH/TO/psrun" >&2
	exit 2
}
PSRUN=$1
case "$PSRUN" in /*) ;; *) PSRUN=$PWD/$PSRUN ;; esac
BUILD=$(dirname "$PSRUN")
RUNS=${BENCH_RUNS:-200}
GAP=${BENCH_GAP_MS:-5}
[ "$(id -u)" -eq 0 ] || {
	echo "bench: needs root (sessions)" >&2
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/psrun-bench-agent.XXXXXX)
chmod 0755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
# Sessions of this run only; every one is tied to its creator.
export PSRUN_SESSION_ROOT=$TMP/sessions

cc -O2 -std=gnu11 -Wall -Wextra -I"$here/../include" -o "$TMP/agent-faces" \
	"$here/agent-faces.c" -L"$BUILD" -l:libpsrun.so -Wl,-rpath,"$BUILD" || exit 1
py=()
if command -v python3 >/dev/null; then
	py=(python3 "$here/agent-py-worker.py")
	export PYTHONPATH=$here/../bindings/python PSRUN_LIBRARY=$BUILD/libpsrun.so
else
	echo "python: skipped (no python3)"
fi
"$TMP/agent-faces" "$PSRUN" "$RUNS" "$GAP" "${py[@]}" || exit 1
left=$(ls -A "$TMP/sessions" 2>/dev/null)
[ -z "$left" ] || {
	echo "bench: sessions left behind: $left" >&2
	exit 1
}
