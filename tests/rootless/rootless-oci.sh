# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The OCI runtime rootless (docs/rootless.md#oci-mode), sourced by run.sh:
# its users SUB (subordinate ids) and ONE (none), its `as` helper and
# counters. Busybox bundles made from the host's static busybox; each user
# gets its own XDG_RUNTIME_DIR under one temporary directory, which the
# trap removes with every process of the users (podman's pause process and
# conmon too) and the one root container it makes.

OCI_TMP=$(mktemp -d /tmp/psrun-rloci.XXXXXX)
chmod 755 "$OCI_TMP"
ROOT_CID=
oci_cleanup() {
	local u
	for u in "$SUB" "$ONE"; do
		pkill -KILL -u "$u" 2>/dev/null
	done
	[ -n "$ROOT_CID" ] && "$PSRUN" delete --force "$ROOT_CID" >/dev/null 2>&1
	rm -rf "$OCI_TMP"
}
trap 'oci_cleanup; cleanup; rm -f "$out" "$err"' EXIT

BUSYBOX=$(command -v busybox)
# ldd fails on a static binary: the bundles have no libraries.
if [ -z "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	skipped oci "needs a static busybox (package busybox-static) for its bundles"
	return 0
fi

# oas USER CMD...: as USER with its own XDG_RUNTIME_DIR.
oas() {
	local u=$1
	shift
	as "$u" XDG_RUNTIME_DIR="$OCI_TMP/xdg-$u" "$@"
}
# A busybox bundle of USER's: config.json from `psrun spec --rootless`,
# no terminal, the process given; EDIT (python, on config `c`) after that.
mkbundle() { # mkbundle USER DIR EDIT ARGS...
	local u=$1 dir=$2 edit=$3
	shift 3
	mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/sys" "$dir/rootfs/tmp"
	cp "$BUSYBOX" "$dir/rootfs/bin/busybox"
	local a
	for a in $("$BUSYBOX" --list); do
		[ "$a" = busybox ] || ln -sf busybox "$dir/rootfs/bin/$a"
	done
	chown -R "$u" "$dir"
	oas "$u" "$PSRUN" spec --rootless --bundle "$dir" || return 1
	python3 - "$dir/config.json" "$edit" "$@" <<'EOF' || return 1
import json, sys
path, edit, args = sys.argv[1], sys.argv[2], sys.argv[3:]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = args
exec(edit)
json.dump(c, open(path, "w"))
EOF
	chown "$u" "$dir/config.json"
}
one_line() { [ "$(wc -l <"$err")" -eq 1 ] && grep -q "$1" "$err"; }
state_of() { # state_of USER ID
	oas "$1" "$PSRUN" state "$2" 2>/dev/null | sed -n 's/.*"status": "\([a-z]*\)".*/\1/p'
}

for u in "$SUB" "$ONE"; do
	mkdir -m 700 "$OCI_TMP/xdg-$u" && chown "$u" "$OCI_TMP/xdg-$u"
done
SUB_ROOT=$OCI_TMP/xdg-$SUB/psrun/oci
ONE_ROOT=$OCI_TMP/xdg-$ONE/psrun/oci
long=86$RANDOM # a sleep only this tier starts

# --- ONE: its own id, a container's whole life with no cgroup ---
B1=$OCI_TMP/b-one
if ! mkbundle "$ONE" "$B1" "" sleep 300 >"$err" 2>&1; then
	bad "oci bundle" "$(cat "$err")"
else
	if oas "$ONE" "$PSRUN" create --bundle "$B1" o1 >"$out" 2>"$err" && [ "$(state_of "$ONE" o1)" = created ] &&
		[ -d "$ONE_ROOT/o1" ] && [ "$(stat -c '%U %a' "$OCI_TMP/xdg-$ONE/psrun")" = "$ONE 700" ] &&
		[ "$(stat -c '%U %a' "$ONE_ROOT")" = "$ONE 700" ]; then
		ok "oci one id: create as the user, state in \$XDG_RUNTIME_DIR/psrun/oci (0700, the user's)"
	else
		bad "oci one id create" "$(cat "$out" "$err")"
	fi
	if oas "$ONE" "$PSRUN" start o1 2>"$err" && [ "$(state_of "$ONE" o1)" = running ] &&
		oas "$ONE" "$PSRUN" exec o1 sh -c 'id -u; cat /proc/self/uid_map' >"$out" 2>>"$err" &&
		[ "$(head -1 "$out")" = 0 ] && read -r a b c < <(sed -n 2p "$out") && [ "$a $b $c" = "0 $one_uid 1" ]; then
		ok "oci one id: start, exec as root inside, only the user's uid mapped"
	else
		bad "oci one id start/exec" "$(cat "$out" "$err" | tr '\n' ' ')"
	fi
	# A process exec'd in the background, daemonized: ps finds it through
	# the pid namespace; delete --force kills it with init (no cgroup).
	oas "$ONE" "$PSRUN" exec o1 sh -c "setsid sleep $long >/dev/null 2>&1 &" 2>"$err"
	sleep 0.2
	if oas "$ONE" "$PSRUN" ps --format json o1 >"$out" 2>>"$err" &&
		[ "$(tr ',' '\n' <"$out" | grep -c '[0-9]')" -eq 2 ]; then
		ok "oci one id: ps without a cgroup lists init and the daemonized exec (pid namespace)"
	else
		bad "oci one id ps" "$(cat "$out" "$err")"
	fi
	# kill --all with a signal other than SIGKILL: to each process of the
	# pid namespace (init, a sleep as pid 1, ignores SIGTERM).
	if oas "$ONE" "$PSRUN" kill --all o1 TERM 2>"$err" && sleep 0.3 && ! pgrep -f "sleep $long" >/dev/null &&
		[ "$(state_of "$ONE" o1)" = running ]; then
		ok "oci one id: kill --all TERM without a cgroup reaches the daemonized exec"
	else
		bad "oci one id kill --all TERM" "left: $(pgrep -af "sleep $long") $(cat "$err")"
	fi
	oas "$ONE" "$PSRUN" exec o1 sh -c "setsid sleep $long >/dev/null 2>&1 &" 2>"$err"
	sleep 0.2
	if oas "$ONE" "$PSRUN" delete --force o1 2>"$err" && sleep 0.3 && ! pgrep -f "sleep $long" >/dev/null &&
		[ ! -e "$ONE_ROOT/o1" ]; then
		ok "oci one id: delete --force kills the whole container, the daemonized process too, and its state"
	else
		bad "oci one id delete" "left: $(pgrep -af "sleep $long") $(cat "$err")"
		pkill -KILL -f "sleep $long"
	fi
fi

# --- SUB: its /etc/subuid range through newuidmap ---
if ! command -v newuidmap >/dev/null; then
	skipped "oci subids" "newuidmap is not installed (package uidmap)"
elif [ -z "$sub_start" ]; then
	skipped "oci subids" "useradd gave $SUB no /etc/subuid range"
else
	B2=$OCI_TMP/b-sub
	map="c['linux']['uidMappings'] = c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $sub_start, 'size': 65536}]"
	mkbundle "$SUB" "$B2" "$map" sleep 300 >"$err" 2>&1 || bad "oci sub bundle" "$(cat "$err")"
	if oas "$SUB" "$PSRUN" run -d --bundle "$B2" s1 >"$out" 2>"$err" &&
		oas "$SUB" "$PSRUN" exec s1 cat /proc/self/uid_map >"$out" 2>>"$err" &&
		read -r a b c <"$out" && [ "$a $b $c" = "0 $sub_start 65536" ] &&
		[ "$(state_of "$SUB" s1)" = running ]; then
		ok "oci subids: run -d and exec, exactly the /etc/subuid range mapped by newuidmap"
	else
		bad "oci subids run" "$(cat "$out" "$err" | tr '\n' ' ')"
	fi
	oas "$SUB" "$PSRUN" exec s1 sh -c "setsid sleep $long >/dev/null 2>&1 &" 2>"$err"
	sleep 0.2
	if oas "$SUB" "$PSRUN" kill --all s1 KILL 2>"$err" && sleep 0.3 && [ "$(state_of "$SUB" s1)" = stopped ] &&
		! pgrep -f "sleep $long" >/dev/null; then
		ok "oci subids: kill --all without a cgroup kills init and a daemonized exec"
	else
		bad "oci subids kill --all" "left: $(pgrep -af "sleep $long") $(cat "$err")"
		pkill -KILL -f "sleep $long"
	fi
	oas "$SUB" "$PSRUN" delete s1 2>"$err" && [ ! -e "$SUB_ROOT/s1" ] &&
		ok "oci subids: delete of the stopped container removes its state" || bad "oci subids delete" "$(cat "$err")"

	# Hostile: ids outside the user's range. newuidmap refuses; psrun says
	# so, for the pid it ran for, and leaves nothing.
	other=$((sub_start + 65536))
	B3=$OCI_TMP/b-range
	mkbundle "$SUB" "$B3" "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $other, 'size': 65536}]; c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $sub_start, 'size': 65536}]" true >"$err" 2>&1
	if oas "$SUB" "$PSRUN" create --bundle "$B3" s2 >"$out" 2>"$err"; then
		bad "oci subids range" "ids past /etc/subuid were mapped"
	elif one_line 'identity: newuidmap [1-9][0-9]* refused: .*(check /etc/subuid)' && [ ! -e "$SUB_ROOT/s2" ]; then
		ok "hostile: oci ids outside the /etc/subuid range: newuidmap refuses, psrun says so in one line"
	else
		bad "oci subids range" "$(cat "$err")"
	fi
fi

# --- refusals ---
user=$SUB
[ -z "$sub_start" ] && user=$ONE
B4=$OCI_TMP/b-refuse
mkbundle "$user" "$B4" "" sh -c 'ulimit -v' >"$err" 2>&1 || bad "oci refusal bundle" "$(cat "$err")"
cfg() { # cfg NAME EDIT: a variant of B4's config.json
	python3 - "$B4/config.json" "$B4/$1" "$2" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"))
EOF
	chown "$user" "$B4/$1"
}
cfg limits.json "c['linux']['resources'] = {'memory': {'limit': 104857600}, 'pids': {'limit': 64}}"
cfg best.json "c['linux']['resources'] = {'memory': {'limit': 104857600}}; c['annotations'] = {'run.psrun.limits': 'best_effort'}"
cfg nouser.json "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'user']; del c['linux']['uidMappings'], c['linux']['gidMappings']"
cfg hostpid.json "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'pid']"
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	skipped "oci limits" "cgroup v2 host: the refusal is for hosts where the user cannot write a cgroup"
else
	if oas "$user" "$PSRUN" create --bundle "$B4" --config limits.json r1 >"$out" 2>"$err"; then
		bad "oci limits strict" "a memory limit was taken with no cgroup"
	elif one_line 'linux.resources.memory: a limit needs a cgroup.*run.psrun.limits=best_effort' &&
		[ ! -e "$OCI_TMP/xdg-$user/psrun/oci/r1" ]; then
		ok "oci limits: a memory limit with no cgroup is refused in one line, nothing left"
	else
		bad "oci limits strict" "$(cat "$err")"
	fi
	if oas "$user" "$PSRUN" run --bundle "$B4" --config best.json r2 >"$out" 2>"$err" &&
		[ "$(cat "$out")" = 102400 ] && grep -q 'memory.limit: RLIMIT_AS' "$err"; then
		ok "oci limits: run.psrun.limits=best_effort makes memory.limit RLIMIT_AS and says so"
	else
		bad "oci limits best_effort" "$(cat "$out" "$err")"
	fi
	if oas "$user" "$PSRUN" create --bundle "$B4" --config hostpid.json r3 >"$out" 2>"$err"; then
		bad "oci host pid ns" "a container it could not kill whole was made"
		oas "$user" "$PSRUN" delete --force r3
	elif one_line 'needs a new pid namespace'; then
		ok "oci: a rootless container without a cgroup and its own pid namespace is refused"
	else
		bad "oci host pid ns" "$(cat "$err")"
	fi
fi
if oas "$user" "$PSRUN" create --bundle "$B4" --config nouser.json r4 >"$out" 2>"$err"; then
	bad "oci no userns" "created"
elif one_line 'linux.namespaces: a rootless container needs a user namespace'; then
	ok "oci: a rootless config without a user namespace is refused in one line"
else
	bad "oci no userns" "$(cat "$err")"
fi

# --- the state root: never another user's, a link, a shared directory ---
state_refused() { # state_refused NAME PATTERN XDG
	if as "$ONE" ${3:+XDG_RUNTIME_DIR="$3"} "$PSRUN" list >"$out" 2>"$err"; then
		bad "oci state root $1" "accepted: $(cat "$out")"
	elif one_line "$2"; then
		ok "oci state root: $1 is refused in one line"
	else
		bad "oci state root $1" "$(cat "$err")"
	fi
}
mkdir -m 755 "$OCI_TMP/foreign" && chown "$SUB" "$OCI_TMP/foreign"
state_refused "another user's XDG_RUNTIME_DIR" "owned by uid $sub_uid, not by this user" "$OCI_TMP/foreign"
mkdir -m 700 "$OCI_TMP/xdg-link" && chown "$ONE" "$OCI_TMP/xdg-link" && ln -s "$OCI_TMP/foreign" "$OCI_TMP/xdg-link/psrun"
state_refused "a psrun directory that is a symbolic link" "is a symbolic link; refusing it" "$OCI_TMP/xdg-link"
mkdir -m 1777 "$OCI_TMP/shared" && chown "$ONE" "$OCI_TMP/shared"
state_refused "a group/world writable XDG_RUNTIME_DIR" "writable by group or others" "$OCI_TMP/shared"
made=$(find "$OCI_TMP/foreign" "$OCI_TMP/shared" -mindepth 1)
[ -z "$made" ] && ok "oci state root: nothing was made in a refused directory" || bad "oci state root" "made: $made"
state_refused "no XDG_RUNTIME_DIR" "set XDG_RUNTIME_DIR.*or pass --root" ""

# --- one user's containers are out of another's reach; gc its own only ---
mkbundle "$SUB" "$OCI_TMP/b-victim" "" sleep 300 >"$err" 2>&1
oas "$SUB" "$PSRUN" run -d --bundle "$OCI_TMP/b-victim" v1 >/dev/null 2>"$err" || bad "oci victim" "$(cat "$err")"
vpid=$(oas "$SUB" "$PSRUN" state v1 2>/dev/null | sed -n 's/.*"pid": \([0-9]*\).*/\1/p')
if [ -n "$vpid" ] && ! oas "$ONE" "$PSRUN" list 2>/dev/null | grep -q v1 &&
	! oas "$ONE" "$PSRUN" --root "$SUB_ROOT" state v1 >/dev/null 2>&1 &&
	! oas "$ONE" "$PSRUN" --root "$SUB_ROOT" kill v1 KILL >/dev/null 2>&1 &&
	! oas "$ONE" "$PSRUN" --root "$SUB_ROOT" delete --force v1 >/dev/null 2>&1 &&
	! oas "$ONE" "$PSRUN" --root "$SUB_ROOT" exec v1 true >/dev/null 2>&1 &&
	! oas "$ONE" "$PSRUN" --root "$SUB_ROOT" create --bundle "$B1" intruder >/dev/null 2>&1 &&
	[ ! -e "$SUB_ROOT/intruder" ] &&
	! as "$ONE" kill -KILL "$vpid" 2>/dev/null && sleep 0.2 && [ "$(state_of "$SUB" v1)" = running ]; then
	ok "hostile: another user cannot see, kill, delete or exec into a user's container, nor create in its root"
else
	bad "oci other user" "pid '$vpid', state $(state_of "$SUB" v1)"
fi
oas "$SUB" "$PSRUN" delete --force v1 2>/dev/null

# A create killed halfway leaves a container "creating": the owner's gc
# removes it; the other user's gc and root's containers are left alone.
oas "$SUB" PSRUN_TEST_KILL_AT=create:pid "$PSRUN" create --bundle "$OCI_TMP/b-victim" stale >/dev/null 2>&1
mkdir -p "$OCI_TMP/b-root/rootfs" && cp -a "$OCI_TMP/b-victim/rootfs/." "$OCI_TMP/b-root/rootfs/" &&
	(cd "$OCI_TMP/b-root" && "$PSRUN" spec && sed -i 's/"terminal": true/"terminal": false/' config.json)
ROOT_CID=psrl-oci-$suffix
"$PSRUN" create --bundle "$OCI_TMP/b-root" "$ROOT_CID" >/dev/null 2>"$err" || bad "oci root container" "$(cat "$err")"
if [ "$(state_of "$SUB" stale)" != creating ]; then
	bad "oci gc" "the killed create left state '$(state_of "$SUB" stale)'"
elif oas "$ONE" "$PSRUN" gc >"$out" 2>"$err" && [ -d "$SUB_ROOT/stale" ] &&
	oas "$SUB" "$PSRUN" gc >"$out" 2>>"$err" && grep -q '1 OCI container ' "$out" && [ ! -e "$SUB_ROOT/stale" ] &&
	"$PSRUN" state "$ROOT_CID" 2>/dev/null | grep -q '"status": "created"'; then
	ok "oci gc as a user: removes its own dead create only, not another user's nor root's"
else
	bad "oci gc" "$(cat "$out" "$err" | tr '\n' ' ')"
fi
"$PSRUN" delete --force "$ROOT_CID" >/dev/null 2>&1 && ROOT_CID=

# --- rootless podman: its default rootless configuration, psrun as runtime ---
if ! command -v podman >/dev/null; then
	skipped "oci podman" "podman is not installed"
elif ! command -v newuidmap >/dev/null || [ -z "$sub_start" ]; then
	skipped "oci podman" "rootless podman needs newuidmap and a /etc/subuid range for $SUB"
elif ! python3 "$(dirname "${BASH_SOURCE[0]}")/../clients/mkimage.py" rootfs "$BUSYBOX" "$OCI_TMP/image.tar" >"$err" 2>&1; then
	bad "oci podman image" "$(cat "$err")"
else
	chmod 644 "$OCI_TMP/image.tar"
	PM_HOME=$OCI_TMP/home-$SUB
	mkdir -m 700 "$PM_HOME" && chown "$SUB" "$PM_HOME"
	PM_DRIVER=()
	pmu() { # podman as SUB: its storage under PM_HOME, its run root in its XDG_RUNTIME_DIR
		(cd / && timeout -k 5 90 setpriv --reuid="$SUB" --regid="$SUB" --init-groups env -i PATH=/usr/bin:/bin \
			HOME="$PM_HOME" XDG_RUNTIME_DIR="$OCI_TMP/xdg-$SUB" \
			podman "${PM_DRIVER[@]}" --cgroup-manager cgroupfs --events-backend file --runtime "$PSRUN" "$@")
	}
	if ! pmu import "$OCI_TMP/image.tar" localhost/psrun-busybox:rl >/dev/null 2>"$err"; then
		# overlay (fuse-overlayfs or the kernel's) is not usable here.
		PM_DRIVER=(--storage-driver vfs)
		rm -rf "$PM_HOME/.local/share/containers"
		pmu import "$OCI_TMP/image.tar" localhost/psrun-busybox:rl >/dev/null 2>"$err"
	fi
	if pmu run --rm --network none localhost/psrun-busybox:rl sh -c 'echo hi; cat /proc/self/uid_map' >"$out" 2>>"$err" &&
		[ "$(head -1 "$out")" = hi ] && grep -q "^ *1 *$sub_start *65536" "$out"; then
		ok "oci podman: rootless podman run --runtime psrun (its user namespace, the subordinate range)"
	else
		bad "oci podman run" "$(cat "$out" "$err" | tr '\n' ' ')"
	fi
	pmu run -d --name pm1 --network none localhost/psrun-busybox:rl sleep $((long + 1)) >"$out" 2>"$err"
	cid=$(cat "$out")
	pmu exec pm1 sh -c 'echo in-exec; exit 4' >"$out" 2>>"$err"
	rc=$?
	if [ "$rc" = 4 ] && [ "$(cat "$out")" = in-exec ] && [ -n "$cid" ] && [ -d "$SUB_ROOT/$cid" ]; then
		ok "oci podman: run -d and exec (status 4), the container in the user's psrun state root"
	else
		bad "oci podman exec" "rc $rc cid '$cid' $(cat "$out" "$err" | tr '\n' ' ')"
	fi
	if pmu stop -t 1 pm1 >/dev/null 2>"$err" && pmu rm pm1 >/dev/null 2>>"$err" &&
		[ -n "$cid" ] && [ ! -e "$SUB_ROOT/$cid" ] && ! pgrep -f "sleep $((long + 1))" >/dev/null; then
		ok "oci podman: stop and rm leave no container, state or process"
	else
		bad "oci podman stop/rm" "$(cat "$err" | tr '\n' ' ')"
	fi
	# Rootless podman leaves its pause process (the holder of its user
	# namespace, named "podman pause") behind, and conmon's late `podman container cleanup` may
	# start it again: ended here until none has been seen for 0.5 s, so
	# that the checks after this file (net.sh, sessions.sh: nothing of the
	# user left) see only their own.
	quiet=0
	for _ in $(seq 50); do
		pkill -KILL -u "$SUB" '^(podman|conmon)' 2>/dev/null
		sleep 0.1
		if pgrep -u "$SUB" '^(podman|conmon)' >/dev/null; then
			quiet=0
		else
			quiet=$((quiet + 1))
			[ "$quiet" -lt 5 ] || break
		fi
	done
fi
