#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/image-pull.sh PSRUN
#
# Pulling an image from a registry into an empty store: `psrun image pull`
# (fetch, verify, unpack, record) against `skopeo copy docker://… oci:DIR`
# followed by `umoci unpack`, and against `podman pull` (its own --root and
# --runroot in a scratch directory, vfs storage, --tls-verify=false), in
# interleaved rounds (the order rotates each round); then a second psrun
# pull of the same image, every layer present (target ≤ 50 ms). The image
# is built offline: 5 layers, about 100 MB unpacked (each 14 MB of random,
# incompressible bytes and 6 MB of compressible text), gzip, served by
# Debian's docker-registry over plain HTTP on loopback in a network
# namespace made here; every client runs in that namespace (nsenter --net).
# Prints each row's median and the ratios. Targets: psrun ≤ 1.0× skopeo +
# umoci, ≤ podman.
#
# Environment: BENCH_ROUNDS=5. Root.
set -eu
PSRUN=$(realpath "${1:?usage: bench/image-pull.sh PSRUN}")
ROUNDS=${BENCH_ROUNDS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "image-pull: needs root (a network namespace)"; exit 1; }
for t in ip nsenter docker-registry skopeo umoci podman python3; do
	command -v "$t" >/dev/null || { echo "image-pull: $t not installed"; exit 1; }
done
NS=psbench$$
TMP=$(mktemp -d)
REG=""
cleanup() {
	[ -n "$REG" ] && kill "$REG" 2>/dev/null && wait "$REG" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$NS"
ip -n "$NS" link set lo up
in_ns() { nsenter --net=/run/netns/"$NS" "$@"; }

mkdir -p "$TMP/reg"
cat >"$TMP/reg/config.yml" <<YAML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $TMP/reg/data
http:
  addr: 127.0.0.1:5000
YAML
in_ns docker-registry serve "$TMP/reg/config.yml" >"$TMP/reg/log" 2>&1 &
REG=$!
for _ in $(seq 100); do in_ns bash -c 'exec 3<>/dev/tcp/127.0.0.1/5000' 2>/dev/null && break; sleep 0.1; done

layers=()
for i in 1 2 3 4 5; do
	d=$TMP/tree$i/data$i
	mkdir -p "$d"
	head -c 14M /dev/urandom >"$d/random"
	python3 -c "
import sys
line = ''.join(chr(97 + (j * 7 + $i) % 26) for j in range(100)) + '\n'
sys.stdout.write(line * (6 * 1024 * 1024 // len(line)))" >"$d/text"
	layers+=("$TMP/tree$i")
done
python3 "$HERE/../tests/registry/mklayout.py" "$TMP/layout" v1 amd64 "${layers[@]}" >/dev/null
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$TMP/policy.json"
REF=127.0.0.1:5000/bench/img:v1
in_ns env HOME="$TMP" skopeo --policy "$TMP/policy.json" copy -q --dest-tls-verify=false \
	"oci:$TMP/layout:v1" "docker://$REF"
echo "image: 5 layers, $(du -sh --apparent-size "$TMP/layout/blobs" | cut -f1) compressed, $(du -sch "${layers[@]}" | tail -1 | cut -f1) unpacked"

ms() { # command...: its wall time in ms on stdout
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>"$TMP/err" || { echo "image-pull: failed: $* ($(head -c 300 "$TMP/err"))" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
run_psrun() {
	rm -rf "$TMP/s"
	in_ns "$PSRUN" image pull -q --store "$TMP/s" --insecure 127.0.0.1:5000 "$REF"
}
run_skopeo() {
	rm -rf "$TMP/o" "$TMP/b"
	in_ns env HOME="$TMP" skopeo --policy "$TMP/policy.json" copy -q --src-tls-verify=false \
		"docker://$REF" "oci:$TMP/o:v1" && umoci unpack --image "$TMP/o:v1" "$TMP/b"
}
run_podman() {
	rm -rf "$TMP/p"
	in_ns podman --root "$TMP/p/root" --runroot "$TMP/p/run" --storage-driver vfs \
		--cgroup-manager cgroupfs --events-backend none pull -q --tls-verify=false "$REF"
}
run_again() { in_ns "$PSRUN" image pull -q --store "$TMP/s" --insecure 127.0.0.1:5000 "$REF"; }

P="" S="" D="" A=""
for r in $(seq "$ROUNDS"); do
	case $((r % 3)) in
	0) order="psrun skopeo podman" ;;
	1) order="skopeo podman psrun" ;;
	*) order="podman psrun skopeo" ;;
	esac
	for w in $order; do
		case $w in
		psrun) P="$P $(ms run_psrun)"; A="$A $(ms run_again)" ;;
		skopeo) S="$S $(ms run_skopeo)" ;;
		podman) D="$D $(ms run_podman)" ;;
		esac
	done
	rm -rf "$TMP/p" "$TMP/o" "$TMP/b"
done
python3 - "$P" "$S" "$D" "$A" <<'PY'
import statistics, sys
p, s, d, a = ([int(x) for x in v.split()] for v in sys.argv[1:5])
m = statistics.median
print(f"psrun image pull (empty store)  median {m(p):7.0f} ms  {p}")
print(f"skopeo copy + umoci unpack      median {m(s):7.0f} ms  {s}")
print(f"podman pull (vfs)               median {m(d):7.0f} ms  {d}")
print(f"psrun image pull (all present)  median {m(a):7.0f} ms  {a}  (target 50)")
print(f"ratio psrun / (skopeo + umoci)  {m(p) / m(s):.2f}  (target <= 1.0)")
print(f"ratio psrun / podman            {m(p) / m(d):.2f}  (target <= 1.0)")
PY
