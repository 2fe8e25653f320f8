#!/bin/bash
# SPDX-License-Identifier: MIT
# Build critest and crictl (kubernetes-sigs/cri-tools) into BUILD/cri/bin,
# offline from the tag's vendored modules (GOFLAGS=-mod=vendor GOPROXY=off).
# The source comes from, in order:
#   CRI_TOOLS_GIT        a git directory (bare or not) of cri-tools
#   a mirror below CRI_TOOLS_MIRROR_ROOT (default: the parent of the
#   repository's own directory, then its parent), laid out as
#   .mirror/kubernetes-sigs+cri-tools/repo
#   git clone https://github.com/kubernetes-sigs/cri-tools (needs internet)
# The tag is the newest vX.Y.Z whose go.mod's `go` line the installed Go
# can build (Debian bookworm's Go 1.19 builds v1.26.x). Cached: a built
# pair for the same tag is reused.
#
# Usage: fetch-cri-tools.sh BUILD
# Prints BUILD/cri/bin on stdout; exit 2 with the reason on stderr when it
# cannot (no Go, no source).
set -euo pipefail

BUILD=${1:-build}
CRI=$(realpath -m "$BUILD/cri")
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$CRI/bin"

say() { echo "fetch-cri-tools: $*" >&2; }

if ! command -v go >/dev/null; then
	say "go is not installed (scripts/install-deps.sh installs golang-go)"
	exit 2
fi
gover=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')

# --- the source -----------------------------------------------------------
git_dir=${CRI_TOOLS_GIT:-}
if [ -z "$git_dir" ]; then
	for root in ${CRI_TOOLS_MIRROR_ROOT:-} "$(dirname "$REPO")" "$(dirname "$(dirname "$REPO")")"; do
		d=$root/.mirror/kubernetes-sigs+cri-tools/repo
		if [ -d "$d" ] && git --git-dir="$d" rev-parse --verify -q HEAD >/dev/null; then
			git_dir=$d
			break
		fi
	done
fi
if [ -z "$git_dir" ]; then
	if [ ! -d "$CRI/cri-tools.git" ]; then
		say "no local mirror of cri-tools; cloning from GitHub"
		if ! timeout 300 git clone -q --bare https://github.com/kubernetes-sigs/cri-tools "$CRI/cri-tools.git.part" >&2; then
			rm -rf "$CRI/cri-tools.git.part"
			say "no cri-tools source: no mirror (CRI_TOOLS_GIT, CRI_TOOLS_MIRROR_ROOT) and git clone from GitHub failed"
			exit 2
		fi
		mv "$CRI/cri-tools.git.part" "$CRI/cri-tools.git"
	fi
	git_dir=$CRI/cri-tools.git
fi
[ -d "$git_dir/objects" ] || git_dir=$git_dir/.git

# --- the tag: newest release whose go.mod this Go accepts -------------------
tag=""
while read -r t; do
	want=$(git --git-dir="$git_dir" show "$t:go.mod" 2>/dev/null | awk '$1 == "go" { print $2; exit }')
	[ -n "$want" ] || continue
	if [ "$(printf '%s\n%s\n' "$want" "$gover" | sort -V | tail -n 1)" = "$gover" ]; then
		tag=$t
		break
	fi
done < <(git --git-dir="$git_dir" tag -l 'v[0-9]*.[0-9]*.[0-9]*' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -rV)
if [ -z "$tag" ]; then
	say "no cri-tools tag in $git_dir builds with Go $gover"
	exit 2
fi

if [ -x "$CRI/bin/critest" ] && [ -x "$CRI/bin/crictl" ] && [ "$(cat "$CRI/bin/tag" 2>/dev/null)" = "$tag" ]; then
	echo "$CRI/bin"
	exit 0
fi

src=$CRI/src-$tag
rm -rf "$src"
mkdir -p "$src"
git --git-dir="$git_dir" archive "$tag" | tar -x -C "$src"
say "building critest and crictl $tag with Go $gover (vendored, offline)"
export GOFLAGS=-mod=vendor GOPROXY=off GOCACHE=$CRI/gocache GOPATH=$CRI/gopath CGO_ENABLED=0
ldflags="-X github.com/kubernetes-sigs/cri-tools/pkg/version.Version=${tag#v}"
(
	cd "$src"
	go build -trimpath -ldflags "$ldflags" -o "$CRI/bin/crictl" ./cmd/crictl
	go test -c -trimpath -ldflags "$ldflags" -o "$CRI/bin/critest" ./cmd/critest
) >&2
echo "$tag" >"$CRI/bin/tag"
rm -rf "$src"
echo "$CRI/bin"
