#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/rootless.sh PSRUN [ROUNDS]
#
# `psrun run -- true` rootless against rootful (the same binary, the same
# round) and against `bwrap --unshare-all` as the same user, in interleaved
# rounds whose order rotates; prints each one's median wall time (ms) and
# the ratios of the medians against the goals of docs/rootless.md
# (rootless <= 1.1x rootful, <= 1.0x bwrap). Needs root: it makes a user
# with subordinate ids for the run and removes it after.
set -u
PSRUN=$(readlink -f "${1:?usage: bench/rootless.sh PSRUN [ROUNDS]}")
ROUNDS=${2:-30}
[ "$(id -u)" -eq 0 ] || { echo "bench/rootless.sh: needs root (it makes a user)" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "bench/rootless.sh: bwrap missing (package bubblewrap)" >&2; exit 2; }
U=psrb$$$RANDOM
useradd -M -d /nonexistent -s /usr/sbin/nologin "$U" || exit 1
times=$(mktemp)
trap 'userdel "$U" 2>/dev/null; rm -f "$times"' EXIT
as() { (cd / && exec setpriv --reuid="$U" --regid="$U" --init-groups env -i PATH=/usr/bin:/bin "$@"); }
run_one() {
	case $1 in
	rootful) (cd / && "$PSRUN" run -- true) ;;
	rootless) as "$PSRUN" run -- true ;;
	bwrap) as bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp --tmpfs /workspace true ;;
	esac
}
tools=(rootful rootless bwrap)
for ((i = 0; i < ROUNDS + 2; i++)); do
	for ((k = 0; k < ${#tools[@]}; k++)); do
		t=${tools[$(((i + k) % ${#tools[@]}))]}
		s=$(date +%s%N)
		run_one "$t" >/dev/null 2>&1 || { echo "bench/rootless.sh: $t failed" >&2; exit 1; }
		e=$(date +%s%N)
		# The first two rounds warm the caches.
		[ "$i" -ge 2 ] && echo "$t $(((e - s) / 1000))" >>"$times"
	done
done
median() { grep "^$1 " "$times" | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
for t in "${tools[@]}"; do
	med[$t]=$(median "$t")
	printf '%-9s median %6.2f ms\n' "$t" "$(awk "BEGIN {print ${med[$t]} / 1000}")"
done
printf 'rootless / rootful %.2fx (goal <= 1.1x)\n' "$(awk "BEGIN {print ${med[rootless]} / ${med[rootful]}}")"
printf 'rootless / bwrap   %.2fx (goal <= 1.0x)\n' "$(awk "BEGIN {print ${med[rootless]} / ${med[bwrap]}}")"
