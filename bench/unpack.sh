#!/bin/bash
# SPDX-License-Identifier: MIT
# Layer unpacking, side by side: a ~100 MB, 5-layer image (built offline
# here with umoci from the host's /usr/lib and /usr/share trees) unpacked by
# psrun's unpack_layer (bench/unpack-layer.c; one directory per layer, as
# the store keeps them) and by `umoci unpack` (as root, one rootfs). RUNS
# runs each, alternating; prints the medians and the ratio.
#   bench/unpack.sh [BUILD]   (root; needs umoci, python3)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-5}
command -v umoci >/dev/null || { echo "bench/unpack: umoci is missing" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench/unpack: needs root (owners, whiteouts)" >&2; exit 1; }
TMP=$(mktemp -d /var/tmp/psrun-bench-unpack.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

cc -O2 -std=gnu11 -D_GNU_SOURCE -I. -Iinclude -o "$TMP/unpack-layer" bench/unpack-layer.c \
	"$BUILD/libpsrun-internal.a" $(pkg-config --libs libseccomp libcap yaml-0.1 zlib libzstd) \
	-lm -lpthread

# Five layers of about 20 MB each, real files (many small, some large).
cd "$TMP"
umoci init --layout oci >/dev/null
umoci new --image oci:b >/dev/null
n=0
for src in /usr/lib/x86_64-linux-gnu /usr/share /usr/lib/python3 /usr/bin /usr/include; do
	[ -d "$src" ] || continue
	mkdir -p "l$n"
	# About 20 MB of each tree, its small files first.
	(cd "$src" && find . -type f -size -2M -print0 | head -z -n 4000 |
		tar --null -T - -cf - 2>/dev/null | head -c 20000000 | tar -C "$TMP/l$n" -xf - 2>/dev/null) || true
	umoci insert --image oci:b "l$n" "/layer$n" >/dev/null
	n=$((n + 1))
done
python3 - <<'PY' >layers
import json
m = json.load(open("oci/index.json"))["manifests"][0]
man = json.load(open("oci/blobs/sha256/" + m["digest"].split(":")[1]))
for l in man["layers"]:
    print(l["mediaType"], "oci/blobs/sha256/" + l["digest"].split(":")[1])
PY
unpacked=$(du -sb l? | awk '{s += $1} END {print int(s / 1000000)}')
compressed=$(awk '{print $2}' layers | xargs du -cb | tail -1 | awk '{print int($1 / 1000000)}')
echo "bench/unpack: $(wc -l <layers) layers, $unpacked MB unpacked, $compressed MB gzip"

ours=()
theirs=()
for i in $(seq "$RUNS"); do
	rm -rf u bundle
	mkdir u
	ours+=("$(awk -v d="$TMP/u" '{print $1, $2, d "/L" NR}' layers | "$TMP/unpack-layer")")
	sync
	t0=$(date +%s%N)
	umoci unpack --image oci:b bundle >/dev/null
	t1=$(date +%s%N)
	theirs+=("$(((t1 - t0) / 1000000))")
	sync
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
mo=$(median "${ours[@]}")
mt=$(median "${theirs[@]}")
echo "bench/unpack: psrun unpack_layer median ${mo} ms, umoci unpack median ${mt} ms"
awk -v o="$mo" -v t="$mt" 'BEGIN {printf "bench/unpack: ratio psrun/umoci %.2f\n", o / t}'
