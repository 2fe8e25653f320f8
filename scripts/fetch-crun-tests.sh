#!/bin/bash
# SPDX-License-Identifier: MIT
# Fetch crun's own test suite (tests/*.py, tests/init.c) from Debian's `crun`
# SOURCE package into BUILD/peer/, through a private apt configuration: its
# own sources list (one deb-src entry for the host's Debian release, derived
# from /etc/os-release and the host's own sources), its own lists and cache
# directories. The host's apt sources and state are never touched, and
# nothing of crun is copied into this repository.
#
# Usage: fetch-crun-tests.sh BUILD
# Prints the unpacked source directory on stdout (cached across runs).
set -euo pipefail

BUILD=${1:-build}
PEER=$(realpath -m "$BUILD/peer")
mkdir -p "$PEER"

# Cached: an unpacked tree with its tests is reused.
for d in "$PEER"/crun-*/; do
	if [ -f "$d/tests/tests_utils.py" ] && [ -f "$d/tests/init.c" ]; then
		echo "${d%/}"
		exit 0
	fi
done

for tool in apt-get dpkg-source; do
	if ! command -v "$tool" >/dev/null; then
		echo "fetch-crun-tests: $tool not installed (dpkg-dev provides dpkg-source)" >&2
		exit 2
	fi
done

# The release: VERSION_CODENAME from os-release (bookworm, trixie, ...).
# shellcheck disable=SC1091 # the host's
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$codename" ]; then
	echo "fetch-crun-tests: /etc/os-release names no VERSION_CODENAME" >&2
	exit 2
fi
# The mirror and keyring: the host's own entry for that suite (deb822 or
# one-line format), else deb.debian.org with Debian's archive keyring.
mirror=""
keyring=""
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] || continue
	case "$f" in
	*.sources)
		# First stanza whose Suites include the codename.
		read -r m k < <(awk -v suite="$codename" '
			BEGIN { RS = ""; FS = "\n" }
			{
				uri = ""; key = ""; ok = 0
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, u, /[ \t]+/); uri = u[1] }
					if ($i ~ /^Suites:/) { n = split($i, s, /[ \t]+/); for (j = 2; j <= n; j++) if (s[j] == suite) ok = 1 }
					if ($i ~ /^Signed-By:/) { sub(/^Signed-By:[ \t]*/, "", $i); key = $i }
				}
				if (ok && uri != "") { print uri, (key == "" ? "-" : key); exit }
			}' "$f") || true
		;;
	*)
		read -r m k < <(awk -v suite="$codename" '
			$1 == "deb" {
				key = "-"; i = 2
				if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) { if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) } i++ } i++ }
				if ($(i + 1) == suite) { print $i, key; exit }
			}' "$f") || true
		;;
	esac
	if [ -n "${m:-}" ]; then
		mirror=$m
		[ "${k:-}" != "-" ] && keyring=${k:-}
		break
	fi
done
mirror=${mirror:-http://deb.debian.org/debian}
keyring=${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}

apt_dir=$(mktemp -d "$PEER/apt.XXXXXX")
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts"
signed=""
[ -f "$keyring" ] && signed="[signed-by=$keyring] "
echo "deb-src ${signed}$mirror $codename main" >"$apt_dir/sources.list"

apt_opts=(
	-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	-o "Dir::Etc::SourceParts=$apt_dir/parts"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache=$apt_dir/cache"
	-o "Dir::State::status=/dev/null"
	-o "APT::Sandbox::User=root"
	-o "Debug::NoLocking=1"
)
echo "fetch-crun-tests: crun source from $mirror $codename" >&2
apt-get "${apt_opts[@]}" -q update >&2
work=$(mktemp -d "$PEER/src.XXXXXX")
trap 'rm -rf "$apt_dir" "$work"' EXIT
(cd "$work" && apt-get "${apt_opts[@]}" -q source --download-only crun >&2)
dsc=$(find "$work" -maxdepth 1 -name 'crun_*.dsc' | head -n 1)
# apt-get source checked the files against the Sources index, which the
# Release file's signature covers; the uploader's signature on the .dsc
# needs keyrings that are not installed: not checked again here.
(cd "$work" && dpkg-source --no-check -x "$dsc" unpacked >&2)
version=$(basename "$dsc" .dsc)
version=${version#crun_}
dest="$PEER/crun-${version%%-*}"
rm -rf "$dest"
mv "$work/unpacked" "$dest"
if [ ! -f "$dest/tests/tests_utils.py" ]; then
	echo "fetch-crun-tests: the crun source has no tests/tests_utils.py" >&2
	exit 1
fi
echo "$dest"
