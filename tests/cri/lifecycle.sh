# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The scripted pod life cycle through crictl, the one docs/integration.md
# shows: runp (a pod with its cgroup_parent below this run's cgroup),
# create, start, exec, logs, stop, rm. Sourced by run.sh, which defines
# cri, ok, not_ok, WORK, CG_PATH, CG_DIRS, IMAGE, SUBNET.

# One step of the life cycle: run it, capture its output in OUT; a failure
# is reported with the command's stderr and ends this handler's cycle.
lc_step() { # lc_step NAME CMD...
	local name=$1
	shift
	if OUT=$("$@" 2>"$WORK/step.err"); then
		return 0
	fi
	not_ok "$LC_HANDLER: $name" "$(tr '\n' ' ' <"$WORK/step.err" | head -c 400)"
	return 1
}

lc_expect() { # lc_expect NAME CONDITION-CMD...
	local name=$1
	shift
	if "$@"; then
		ok "$LC_HANDLER: $name"
	else
		not_ok "$LC_HANDLER: $name" "got: $(printf '%s' "$OUT" | head -c 300 | tr '\n' '|')"
	fi
}

# The memory cgroup of a host pid, relative to the hierarchy.
lc_memcg() {
	awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$1/cgroup"
}

lifecycle() {
	local h=$1 pod cid pid cg ip dir=$WORK/lc-$1
	LC_HANDLER=$h
	mkdir -p "$dir"
	cat >"$dir/pod.json" <<EOF
{
  "metadata": { "name": "lc-$h", "namespace": "psrun-cri", "uid": "lc-$h-$ID", "attempt": 0 },
  "hostname": "lc-$h",
  "log_directory": "$dir/logs",
  "linux": { "cgroup_parent": "$CG_PATH/pods-$h" }
}
EOF
	cat >"$dir/container.json" <<EOF
{
  "metadata": { "name": "agent" },
  "image": { "image": "$IMAGE" },
  "command": [ "sh", "-c", "echo hello-from-$h; exec sleep 1000" ],
  "log_path": "agent.log",
  "linux": { "resources": { "memory_limit_in_bytes": 67108864 } }
}
EOF
	lc_step "crictl runp --runtime $h" cri runp --runtime "$h" "$dir/pod.json" || return 0
	pod=$OUT
	ok "$h: crictl runp --runtime $h"

	OUT=$(cri inspectp -o go-template --template '{{.status.network.ip}}' "$pod" 2>&1 || true)
	ip=$OUT
	lc_expect "pod IP in this run's CNI subnet $SUBNET" \
		test "${ip%.*}.0/24" = "$SUBNET"

	lc_step "crictl create" cri create "$pod" "$dir/container.json" "$dir/pod.json" || return 0
	cid=$OUT
	lc_step "crictl start" cri start "$cid" || return 0
	ok "$h: crictl create and start"

	OUT=""
	for _ in $(seq 1 50); do
		OUT=$(cri logs "$cid" 2>&1 || true)
		[ "$OUT" = "hello-from-$h" ] && break
		sleep 0.1
	done
	lc_expect "crictl logs shows the container's output" test "$OUT" = "hello-from-$h"

	OUT=$(cri exec "$cid" sh -c 'echo from-exec; cat /proc/1/cmdline | tr "\0" " "; exit 0' 2>&1 || true)
	lc_expect "crictl exec runs in the container" grep -q '^from-exec$' <<<"$OUT"

	# crictl exits 1 and names the command's status.
	OUT=$(cri exec "$cid" sh -c 'exit 7' 2>&1 || true)
	lc_expect "crictl exec passes exit status 7 on" grep -q 'exit code 7' <<<"$OUT"

	# The pod's namespaces are shared: the container sees the pause
	# process (pid 1 of the pod) in its pid namespace only if the pod
	# asks for it; by default the network and IPC namespaces are shared.
	OUT=$(cri exec "$cid" hostname 2>&1 || true)
	lc_expect "the container has the pod's hostname (the pause container's UTS namespace)" test "$OUT" = "lc-$h"
	OUT=$(cri exec "$cid" sh -c "ip -4 -o addr show eth0 2>/dev/null | awk '{ print \$4 }'" 2>&1 || true)
	lc_expect "the container has the pod's network namespace (eth0 $ip)" test "${OUT%/*}" = "$ip"

	pid=$(cri inspect -o go-template --template '{{.info.pid}}' "$cid" 2>/dev/null || true)
	cg=""
	[ -n "$pid" ] && [ -e "/proc/$pid" ] && cg=$(lc_memcg "$pid")
	OUT="pid $pid memory cgroup $cg"
	lc_expect "the container's cgroup is below the pod's cgroup_parent $CG_PATH/pods-$h" \
		test "${cg#"$CG_PATH/pods-$h/"}" != "$cg"
	local limit=""
	[ -n "$cg" ] && limit=$(cat "$(lc_memory_root)$cg/memory.limit_in_bytes" 2>/dev/null || true)
	OUT="memory.limit_in_bytes $limit"
	lc_expect "the container's memory limit is the CRI's 64 MiB" test "$limit" = 67108864

	lc_step "crictl stop" cri stop -t 5 "$cid" || return 0
	OUT=$(cri inspect -o go-template --template '{{.status.state}}' "$cid" 2>&1 || true)
	lc_expect "crictl stop leaves the container EXITED" test "$OUT" = CONTAINER_EXITED
	lc_step "crictl rm" cri rm "$cid" || return 0
	lc_step "crictl stopp" cri stopp "$pod" || return 0
	lc_step "crictl rmp" cri rmp "$pod" || return 0
	ok "$h: crictl stop, rm, stopp, rmp"

	OUT=$(for d in "${CG_DIRS[@]}"; do
		[ ! -d "$d/pods-$h" ] || find "$d/pods-$h" -mindepth 1 -type d
	done)
	lc_expect "no container cgroups left below the pod's parent" test -z "$OUT"
	OUT=$(find "$WORK/state-$h" -mindepth 2 2>/dev/null || true)
	lc_expect "no runtime state left in the handler's root" test -z "$OUT"
}

# The memory hierarchy's mount point.
lc_memory_root() {
	awk '{
		for (i = 7; $i != "-"; i++) ;
		if ($(i + 1) == "cgroup" && index("," $(i + 3) ",", ",memory,")) { print $5; exit }
	}' /proc/self/mountinfo
}
