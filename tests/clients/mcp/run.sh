#!/bin/bash
# SPDX-License-Identifier: MIT
# The MCP server under a real MCP client: the official TypeScript SDK 1.x
# (client.mjs), with its packages from install.sh. Needs root (sessions) and
# node. Prints one line per check and "mcp: P passed, F failed, S skipped".
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
# Sessions of this run only. The server ties them to itself, so they end
# with it; the check below proves it, and the directory goes whatever happens.
state=$(mktemp -d "${TMPDIR:-/tmp}/psrun-mcp-test.XXXXXX")
chmod 700 "$state"
trap 'rm -rf "$state"' EXIT
cp "$here/client.mjs" "$build/npm/client.mjs"
PSRUN_SESSION_ROOT=$state timeout 120 node "$build/npm/client.mjs" "$build/psrun"
status=$?
left=$(ls -A "$state")
if [ -n "$left" ]; then
	echo "not ok no session left behind: $left"
	echo "mcp: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
exit $status
