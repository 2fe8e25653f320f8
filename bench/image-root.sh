#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/image-root.sh PSRUN
#
# Start-up of `psrun run -- true` on an image root against the host-/usr
# root, in interleaved pairs (the order alternates) so that machine noise
# hits both alike. The image holds the host's own dynamically linked
# /usr/bin/true with its libc and loader (one gzip layer, written by
# tests/integration/mkimage.py), so both rows run the same binary and the
# difference is the root alone: the store lookup, the hold, the overlay the
# parent mounts and its top layer, against the binds of the host's /usr.
# The image is imported into a scratch store before the first pair.
#
# Environment: BENCH_PAIRS=40, BENCH_WARMUP=5. Root.
set -eu
PSRUN=${1:?usage: bench/image-root.sh PSRUN}
PAIRS=${BENCH_PAIRS:-40}
WARMUP=${BENCH_WARMUP:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/psrun-bench-image.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

tree=$TMP/tree
mkdir -p "$tree/usr/bin" "$tree/etc"
for f in /usr/bin/true $(ldd /usr/bin/true | grep -o '/[^ ]*'); do
	real=$(readlink -f "$f")
	mkdir -p "$tree$(dirname "$f")"
	cp "$real" "$tree$f"
done
# Merged /usr as the host has it: /lib64, /lib as links when they are.
for l in /bin /lib /lib64 /sbin; do
	if [ -L "$l" ] && [ ! -e "$tree$l" ]; then ln -s "$(readlink "$l")" "$tree$l"; fi
done
python3 "$HERE/../tests/integration/mkimage.py" "$TMP/layout" v1 "$tree" \
	'{"Env": ["PATH=/usr/bin"]}' >/dev/null
IMG=(-o "image=oci:$TMP/layout:v1" -o "image_store=$TMP/store")
"$PSRUN" run "${IMG[@]}" -- true # imports it

ms() { # run the command, print its wall time in ms
	local t0=$EPOCHREALTIME
	"$@" >/dev/null
	local t1=$EPOCHREALTIME
	echo "$t0 $t1" | awk '{printf "%.3f\n", ($2 - $1) * 1000}'
}
host=() image=()
for ((i = 0; i < WARMUP + PAIRS; i++)); do
	if ((i % 2)); then
		a=$(ms "$PSRUN" run "${IMG[@]}" -- true)
		b=$(ms "$PSRUN" run -- true)
	else
		b=$(ms "$PSRUN" run -- true)
		a=$(ms "$PSRUN" run "${IMG[@]}" -- true)
	fi
	if ((i >= WARMUP)); then
		image+=("$a")
		host+=("$b")
	fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mh=$(median "${host[@]}")
mi=$(median "${image[@]}")
# The median of the pairs' differences, too: less noise than a difference
# of medians.
diffs=()
for ((i = 0; i < PAIRS; i++)); do
	diffs+=("$(echo "${image[i]} ${host[i]}" | awk '{printf "%.3f", $1 - $2}')")
done
md=$(median "${diffs[@]}")
printf 'pairs %d\nhost root   median %.2f ms\nimage root  median %.2f ms\n' "$PAIRS" "$mh" "$mi"
printf 'difference  median of pairs %+.2f ms (target <= +1 ms): %s\n' "$md" \
	"$(awk -v d="$md" 'BEGIN {print (d <= 1.0) ? "PASS" : "MISS"}')"
