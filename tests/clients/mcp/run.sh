#!/bin/bash
# SPDX-License-Identifier: MIT
# The MCP server under real MCP clients from npm (pinned in package.json and
# package-lock.json here, installed by install.sh into BUILD/npm):
#   client.mjs       the official TypeScript SDK 1.x, @modelcontextprotocol/sdk
#                    (the 2025 initialize handshake)
#   client-2026.mjs  the 2026-era @modelcontextprotocol/client 2.x (the
#                    stateless 2026-07-28 revision, and its legacy mode)
#   inspector.mjs    @modelcontextprotocol/inspector's CLI mode
#   hostile.mjs      the 1.x SDK while the sandbox plants what would make
#                    the server large (its peak RSS and longest line bounded)
#   client-1.0.mjs   the SDK 1.0.4 (as mcp-sdk-1.0.4): revision 2024-11-05
#   agent-loop.mjs   the 1.x SDK as an agent loop drives it: parallel calls,
#                    a cancel beside another call, progress heartbeats
#   background.mjs   the 1.x SDK with background processes: a dev server
#                    fetched by the next exec, its log by offset, kill,
#                    wait, background_limit, destroy
#   cancel-install.mjs the 1.x SDK cancelling a sandbox_install_package (a
#                    fake installer): killed, its network freed
#   cancel-write.mjs the 1.x SDK cancelling a large sandbox_write_file half
#                    way (a slow writer: cpu_limit): no file left, next call
# Each runs with a session root of its own; after each, a check that no
# session is left. Needs root (sessions) and node. Prints one line per check
# and, at the end, "mcp: P passed, F failed, S skipped".
# Usage: run.sh BUILD
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD}" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "skip mcp: node and npm are not installed (Debian: nodejs npm)"
	echo "mcp: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! "$here/install.sh" "$build"; then
	echo "not ok mcp: npm ci of tests/clients/mcp failed"
	echo "mcp: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
# The session roots of this run; the server ties its sessions to itself, so
# they end with it. The directory goes whatever happens.
state=$(mktemp -d "${TMPDIR:-/tmp}/psrun-mcp-test.XXXXXX")
chmod 700 "$state"
trap 'rm -rf "$state"' EXIT

passed=0 failed=0 skipped=0
summary='^mcp: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$'

# run_client NAME SCRIPT: its check lines pass through, its summary is
# added to ours; then the check that it left no session behind.
run_client() {
	local name=$1 script=$2 line status="" got="" own_failed=0
	mkdir -m 700 "$state/$name"
	cp "$here/$script" "$here/lib.mjs" "$build/npm/"
	while IFS= read -r line; do
		if [[ $line =~ $summary ]]; then
			got=1
			passed=$((passed + BASH_REMATCH[1]))
			own_failed=${BASH_REMATCH[2]}
			failed=$((failed + own_failed))
			skipped=$((skipped + BASH_REMATCH[3]))
		elif [[ $line =~ ^@@status\ ([0-9]+)$ ]]; then
			status=${BASH_REMATCH[1]}
		else
			echo "$line"
		fi
	done < <(cd "$build/npm" && PSRUN_SESSION_ROOT=$state/$name timeout 120 \
		node "$script" "$build/psrun"; echo "@@status $?")
	if [ -z "$got" ] || { [ "$status" != 0 ] && [ "$own_failed" = 0 ]; }; then
		echo "not ok $name: exited with status $status${got:- and no summary}"
		failed=$((failed + 1))
	fi
	local left
	left=$(ls -A "$state/$name")
	if [ -n "$left" ]; then
		echo "not ok $name: no session left behind: $left"
		failed=$((failed + 1))
	else
		echo "ok $name: no session left behind"
		passed=$((passed + 1))
	fi
}

run_client sdk-1.x client.mjs
run_client hostile hostile.mjs
run_client agent-loop agent-loop.mjs
run_client background background.mjs
run_client cancel-install cancel-install.mjs
run_client cancel-write cancel-write.mjs
run_client sdk-1.0.4 client-1.0.mjs
# The 2.x client declares node >= 20; the inspector declares >= 22.19 but
# its CLI mode runs on 20 (what this tier is checked with).
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -ge 20 ]; then
	run_client client-2.x client-2026.mjs
	run_client inspector inspector.mjs
else
	echo "skip client-2.x, inspector: node $(node --version) is older than 20"
	skipped=$((skipped + 2))
fi
echo "mcp: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
