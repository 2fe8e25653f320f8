#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the pinned MCP client packages (package.json + package-lock.json
# here) into BUILD/npm with `npm ci`, unless the same lock is there already.
# Usage: install.sh BUILD
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:?usage: install.sh BUILD}/npm
mkdir -p "$dest"
if [ -d "$dest/node_modules/@modelcontextprotocol/sdk" ] &&
	cmp -s "$here/package-lock.json" "$dest/package-lock.json"; then
	exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dest/"
cd "$dest"
npm ci --no-fund --no-audit --ignore-scripts --engine-strict=false --loglevel=error >&2
