#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/rootless.sh PSRUN [ROUNDS]
#
# `psrun run -- true` rootless against rootful (the same binary, the same
# round) and against `bwrap --unshare-all` as the same user, in interleaved
# rounds whose order rotates; prints each one's median wall time (ms) and
# the ratios of the medians against the goals of docs/rootless.md
# (rootless <= 1.1x rootful, <= 1.0x bwrap). Then `network: full` and
# `restricted`, rootless (router namespace and pasta) against rootful, in
# the same rounds, both inside a network namespace the script makes (a
# veth pair of its own with a default route: nothing is sent), the user's
# /dev/net/tun a node of the script's in a mount namespace of its own.
# Needs root: it makes a user with subordinate ids for the run and removes
# it after; pasta (package passt) for the network rows.
set -u
PSRUN=$(readlink -f "${1:?usage: bench/rootless.sh PSRUN [ROUNDS]}")
ROUNDS=${2:-30}
[ "$(id -u)" -eq 0 ] || { echo "bench/rootless.sh: needs root (it makes a user)" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "bench/rootless.sh: bwrap missing (package bubblewrap)" >&2; exit 2; }
command -v pasta >/dev/null || { echo "bench/rootless.sh: pasta missing (package passt)" >&2; exit 2; }
# A mount namespace of our own: /dev/net/tun as a node the user may open.
if [ -z "${PSRUN_BENCH_NS:-}" ]; then
	PSRUN_BENCH_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
U=psrb$$$RANDOM
NS=psrb$$n
useradd -M -d /nonexistent -s /usr/sbin/nologin "$U" || exit 1
times=$(mktemp)
tun=$(mktemp -d)
trap 'userdel "$U" 2>/dev/null; ip netns del $NS 2>/dev/null; rm -rf "$times" "$times.err" "$tun"' EXIT
mknod "$tun/tun" c 10 200 && chmod 666 "$tun/tun" && mount --bind "$tun/tun" /dev/net/tun || exit 1
ip netns add $NS && ip -n $NS link add d0 type veth peer name d1 && ip -n $NS addr add 192.0.2.2/24 dev d0 &&
	ip -n $NS link set d1 up && ip -n $NS link set d0 up && ip -n $NS link set lo up &&
	ip -n $NS route add default via 192.0.2.1 || exit 1
PASTA_DIR=$(dirname "$(command -v pasta)")
as() { (cd / && exec setpriv --reuid="$U" --regid="$U" --init-groups env -i PATH="$PASTA_DIR:/usr/bin:/bin" "$@"); }
innet() { nsenter --net=/run/netns/$NS "$@"; }
FULL=(-o network=full -o dns_upstream=[192.0.2.1])
RESTRICTED=(-o network=restricted -o 'allow_domains=[example.test]' -o 'allow_ports=[80]'
	-o dns_upstream=[192.0.2.1])
run_one() {
	case $1 in
	rootful) (cd / && "$PSRUN" run -- true) ;;
	rootless) as "$PSRUN" run -- true ;;
	rootful-full) (cd / && innet "$PSRUN" run "${FULL[@]}" -- true) ;;
	rootless-full) cd / && innet setpriv --reuid="$U" --regid="$U" --init-groups \
		env -i PATH="$PASTA_DIR:/usr/bin:/bin" "$PSRUN" run "${FULL[@]}" -- true ;;
	rootful-restricted) (cd / && innet "$PSRUN" run "${RESTRICTED[@]}" -- true) ;;
	rootless-restricted) cd / && innet setpriv --reuid="$U" --regid="$U" --init-groups \
		env -i PATH="$PASTA_DIR:/usr/bin:/bin" "$PSRUN" run "${RESTRICTED[@]}" -- true ;;
	bwrap) as bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp --tmpfs /workspace true ;;
	esac
}
tools=(rootful rootless bwrap rootful-full rootless-full rootful-restricted rootless-restricted)
for ((i = 0; i < ROUNDS + 2; i++)); do
	for ((k = 0; k < ${#tools[@]}; k++)); do
		t=${tools[$(((i + k) % ${#tools[@]}))]}
		s=$(date +%s%N)
		run_one "$t" >/dev/null 2>"$times.err" || { echo "bench/rootless.sh: $t failed: $(cat "$times.err")" >&2; exit 1; }
		e=$(date +%s%N)
		# The first two rounds warm the caches.
		[ "$i" -ge 2 ] && echo "$t $(((e - s) / 1000))" >>"$times"
	done
done
median() { grep "^$1 " "$times" | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
for t in "${tools[@]}"; do
	med[$t]=$(median "$t")
	printf '%-19s median %6.2f ms\n' "$t" "$(awk "BEGIN {print ${med[$t]} / 1000}")"
done
printf 'rootless / rootful %.2fx (goal <= 1.1x)\n' "$(awk "BEGIN {print ${med[rootless]} / ${med[rootful]}}")"
printf 'rootless / bwrap   %.2fx (goal <= 1.0x)\n' "$(awk "BEGIN {print ${med[rootless]} / ${med[bwrap]}}")"
printf 'full rootless / rootful       %.2fx\n' "$(awk "BEGIN {print ${med[rootless-full]} / ${med[rootful-full]}}")"
printf 'restricted rootless / rootful %.2fx\n' \
	"$(awk "BEGIN {print ${med[rootless-restricted]} / ${med[rootful-restricted]}}")"
