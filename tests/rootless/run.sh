#!/bin/bash
# SPDX-License-Identifier: MIT
# The rootless tier (docs/rootless.md): psrun run as users with no
# privileges, made for the tier and removed after it, even on failure: one
# with subordinate ids (the full map through newuidmap/newgidmap) and one
# without (the one-id map). The network modes full and restricted are
# tests/rootless/net.sh, run from here as the same users. Prints
# "rootless: N passed, N failed, N skipped".
set -u
BUILD=${1:-build}
PSRUN=$(cd "$BUILD" && pwd)/psrun
pass=0 fail=0 skip=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1: $2"; fail=$((fail + 1)); }
skipped() { echo "skip - $1: $2"; skip=$((skip + 1)); }
summary() { echo "rootless: $pass passed, $fail failed, $skip skipped"; }

if [ "$(id -u)" -ne 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
	skipped all "needs root, useradd and setpriv to make its test users"
	summary
	exit 0
fi
suffix=$$$RANDOM
SUB=psrs$suffix # with subordinate ids
ONE=psro$suffix # without
# userdel refuses while a process of the user is still exiting: retry, and
# say so if the user stays.
cleanup() {
	local u i
	for u in "$SUB" "$ONE"; do
		id "$u" >/dev/null 2>&1 || continue
		pkill -KILL -u "$u" 2>/dev/null
		for i in 1 2 3 4 5 6 7 8 9 10; do
			userdel "$u" 2>/dev/null && break
			sleep 0.2
		done
		id "$u" >/dev/null 2>&1 && echo "rootless: could not remove test user $u" >&2
	done
}
trap cleanup EXIT
useradd -M -d /nonexistent -s /usr/sbin/nologin "$SUB" || { bad setup "useradd $SUB"; summary; exit 1; }
useradd -M -d /nonexistent -s /usr/sbin/nologin "$ONE" || { bad setup "useradd $ONE"; summary; exit 1; }
# useradd gives ranges where /etc/login.defs says so: make SUB's sure and
# ONE's absent.
range=$(grep "^$ONE:" /etc/subuid | cut -d: -f2,3)
if [ -n "$range" ]; then
	start=${range%%:*} count=${range##*:}
	usermod --del-subuids "$start-$((start + count - 1))" --del-subgids "$start-$((start + count - 1))" "$ONE"
fi
as() { # USER CMD...: in / with a clean environment, no supplementary groups of root's
	local u=$1
	shift
	(cd / && exec setpriv --reuid="$u" --regid="$u" --init-groups env -i PATH=/usr/bin:/bin "$@")
}
out=$(mktemp) && err=$(mktemp)
trap 'cleanup; declare -F images_cleanup >/dev/null && images_cleanup; rm -f "$out" "$err"' EXIT
sub_start=$(grep "^$SUB:" /etc/subuid | cut -d: -f2)
sub_uid=$(id -u "$SUB")
one_uid=$(id -u "$ONE")

# --- with subordinate ids ---
if ! command -v newuidmap >/dev/null; then
	skipped subids "newuidmap is not installed (package uidmap)"
elif [ -z "$sub_start" ]; then
	skipped subids "useradd gave $SUB no /etc/subuid range"
else
	if as "$SUB" "$PSRUN" run --json -- sh -c 'id -u; cat /proc/self/uid_map' >"$out" 2>"$err" &&
		[ "$(head -1 "$out")" = 1000 ] &&
		read -r a b c < <(sed -n 2p "$out") && [ "$a $b $c" = "0 $sub_start 65536" ]; then
		ok "subids: uid 1000 inside, exactly the /etc/subuid range mapped"
	else
		bad subids "$(cat "$out" "$err" | tr '\n' ' ')"
	fi
	grep -q '"rootless":true,"identity":"subordinate ids"' "$err" &&
		ok "subids: layers say rootless and the identity" || bad "subids layers" "$(cat "$err")"
	# No capability in the initial user namespace, none inside either.
	if as "$SUB" "$PSRUN" run -- sh -c 'grep CapEff /proc/self/status' >"$out" 2>"$err" &&
		grep -q '0000000000000000' "$out"; then
		ok "subids: no capabilities"
	else
		bad "subids caps" "$(cat "$out" "$err")"
	fi
	# Read-only root, writable workspace.
	if as "$SUB" "$PSRUN" run -- sh -c 'touch /usr/x 2>/dev/null && exit 9; echo a > /workspace/f && cat /workspace/f' >"$out" 2>"$err" &&
		[ "$(cat "$out")" = a ]; then
		ok "subids: read-only root, writable /workspace"
	else
		bad "subids rootfs" "$(cat "$out" "$err")"
	fi
	# The user's other processes are invisible and unsignalable.
	as "$SUB" sleep 30 >/dev/null 2>&1 &
	victim=$!
	sleep 0.2
	if as "$SUB" "$PSRUN" run -- sh -c "kill -0 $victim 2>/dev/null && exit 9; ls /proc | grep -c '^[0-9]'" >"$out" 2>"$err" &&
		[ "$(cat "$out")" -le 4 ] && kill -0 "$victim"; then
		ok "subids: the host's processes are out of sight and reach"
	else
		bad "subids pidns" "$(cat "$out" "$err")"
	fi
	kill "$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
	# $! is as()'s subshell, not the sleep it forked: that too.
	pkill -u "$SUB" -x sleep 2>/dev/null
fi

# --- one id ---
if as "$ONE" "$PSRUN" run --json -- sh -c 'id -u; cat /proc/self/uid_map' >"$out" 2>"$err" &&
	[ "$(head -1 "$out")" = 1000 ] &&
	read -r a b c < <(sed -n 2p "$out") && [ "$a $b $c" = "1000 $one_uid 1" ]; then
	ok "one id: the user as 1000 inside, nothing else mapped"
else
	bad "one id" "$(cat "$out" "$err" | tr '\n' ' ')"
fi
grep -q '"identity":"one id"' "$err" && ok "one id: layers say so" || bad "one id layers" "$(cat "$err")"

# --- limits on this host: no delegated subtree on cgroup v1 ---
user=$SUB
[ -z "$sub_start" ] && user=$ONE
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	skipped "limits strict" "cgroup v2 host: the refusal is for hosts with no delegated subtree"
else
	if as "$user" "$PSRUN" run -o memory_limit=100M -- true >"$out" 2>"$err"; then
		bad "limits strict" "a memory limit ran without a cgroup"
	elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'limits: memory_limit needs a cgroup.*best_effort' "$err"; then
		ok "limits: strict refuses an asked memory limit in one line"
	else
		bad "limits strict" "$(cat "$err")"
	fi
	if as "$user" "$PSRUN" run --json -o memory_limit=100M -o limits=best_effort -- sh -c 'ulimit -v' >"$out" 2>"$err" &&
		[ "$(cat "$out")" = 102400 ] && grep -q '"memory":"rlimit_as"' "$err"; then
		ok "limits: best_effort makes memory_limit RLIMIT_AS and says so"
	else
		bad "limits best_effort" "$(cat "$out" "$err")"
	fi
fi

# --- timeout and kill-the-whole-tree with no cgroup ---
# A daemonizing grandchild (setsid, parent exits) must die with the
# sandbox: pid 1 of the pid namespace takes every process down.
marker=psrl-daemon-$suffix
start=$(date +%s)
as "$user" "$PSRUN" run -o timeout=1s -- sh -c "setsid sh -c 'exec -a $marker sleep 60' & sleep 60" >"$out" 2>"$err"
rc=$?
sleep 0.3
if [ "$rc" -ne 0 ] && [ $(($(date +%s) - start)) -lt 30 ] && ! pgrep -f "$marker" >/dev/null; then
	ok "timeout: the sandbox and a daemonized process in it are gone"
else
	bad timeout "rc $rc, left: $(pgrep -af "$marker")"
	pkill -f "$marker" 2>/dev/null
fi

# --- hostile: another user's workspace and psrun's maps ---
# A sandbox of SUB cannot reach a file only ONE may read (its host ids are
# SUB's subordinate ones, or SUB's).
secret=$(mktemp -d)
chown "$ONE" "$secret" && chmod 700 "$secret" && echo s >"$secret/f" && chown "$ONE" "$secret/f"
if as "$user" "$PSRUN" run -o "mounts=[$secret:/workspace/s]" -- cat /workspace/s/f >"$out" 2>"$err"; then
	bad "other user's files" "read $(cat "$out")"
else
	ok "hostile: another user's private directory is not readable (bind refused or EACCES)"
fi
rm -rf "$secret"

# --- the OCI runtime as these users, and rootless podman ---
. "$(dirname "$0")/rootless-oci.sh"

# --- images: a user's own store (tests/rootless/images.sh) ---
. "$(dirname "$0")/images.sh"

# --- network: full and restricted through a router namespace and pasta ---
# (tests/rootless/net.sh: its own fake internet, the bypass checklist)
one_user=$ONE
[ "$user" = "$ONE" ] && one_user=""
while IFS= read -r line; do
	case $line in
	"rootless-net: "*)
		read -r _ p f s <<<"$line"
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		;;
	*) echo "$line" ;;
	esac
done < <(bash "$(dirname "$0")/net.sh" "$BUILD" "$user" $one_user)

# --- sessions, psrun mcp and the Python binding as these users ---
. "$(dirname "$0")/sessions.sh"
. "$(dirname "$0")/escape.sh"
summary
[ "$fail" -eq 0 ]
