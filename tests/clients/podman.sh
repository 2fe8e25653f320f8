# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# podman: Debian's podman (with conmon) driving the runtime under test
# directly (`podman --runtime`), rootful, with its own storage root, run
# root and temporary directory in the work directory, cgroupfs below the
# harness's cgroup, file events, no network. No daemon: podman and conmon
# come and go with each command. Sourced by run.sh.

PM_DIR=
PM_IMAGE=localhost/psrun-busybox:test

# podman with every path of its own under PM_DIR (nothing in
# /var/lib/containers or /run/containers), run from PM_DIR (conmon leaves
# files in its working directory: an "oom" file after an OOM kill), bounded
# like every client command.
pm_argv() {
	PM_ARGV=(podman --root "$PM_DIR/root" --runroot "$PM_DIR/runroot" --tmpdir "$PM_DIR/tmp"
		--storage-driver "$PM_DRIVER" --cgroup-manager cgroupfs --events-backend file
		--runtime "$RUNTIME_FOR_CLIENTS")
}
pm() {
	(cd "$PM_DIR" && timeout --verbose -k 5 "$(budget "$CMD_TIMEOUT")" "${PM_ARGV[@]}" "$@")
}

# podman run with no network and the harness's cgroup parent. podman asks
# for RLIMIT_NOFILE and RLIMIT_NPROC of 1048576, which psrun refuses (fail
# closed) where its bounding set has no CAP_SYS_RESOURCE, as in a
# container: explicit limits below the host's.
prun() {
	pm run --network none --cgroup-parent "$CG_PARENT/podman" \
		--ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$@"
}

pm_state() { # pm_state CONTAINER GO-TEMPLATE
	pm inspect -f "$2" "$1"
}

pm_logs_have() { # pm_logs_have CONTAINER LINE
	pm logs "$1" 2>&1 | grep -qx "$2"
}

# --- checks ----------------------------------------------------------------

pm_in_own_var_lib() {
	(cd "$PM_DIR" && timeout --verbose -k 5 "$(budget "$CMD_TIMEOUT")" \
		unshare --mount --propagation private sh -c \
		'mount -t tmpfs -o size=16m psrun-podman-cache /var/lib && exec "$@"' sh \
		"${PM_ARGV[@]}" "$@")
}

pm_check_import() {
	# An image copy (import, load, pull) updates the blob info cache, which
	# podman 4.3 keeps at /var/lib/containers/cache whatever --root says:
	# the import runs in a mount namespace of its own with a tmpfs there.
	capture pm_in_own_var_lib import --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
		"$WORK/image-rootfs.tar" "$PM_IMAGE"
	expect_rc 0 "podman import"
	capture pm image exists "$PM_IMAGE"
	expect_rc 0 "podman image exists"
}

pm_check_echo() {
	capture prun --rm "$PM_IMAGE" echo hi
	expect_rc 0 "podman run echo hi"
	expect_out hi "podman run echo hi"
}

pm_check_exit_3() {
	capture prun --rm "$PM_IMAGE" sh -c 'exit 3'
	expect_rc 3 "sh -c 'exit 3'"
}

pm_check_tty() {
	capture prun --rm -t "$PM_IMAGE" sh -c 'tty; [ -t 1 ] && echo is-a-tty'
	expect_rc 0 "podman run -t"
	grep -q '^/dev/pts/' <<<"$OUT" || fail "no pty: $(captured)"
	grep -qx is-a-tty <<<"$OUT" || fail "stdout is not a terminal: $(captured)"
}

pm_check_exec_pause_stop() {
	capture prun -d --name p-run "$PM_IMAGE" sh -c "trap 'exit 7' TERM; echo ready; while :; do sleep 0.1; done"
	expect_rc 0 "podman run -d"
	wait_until 20 pm_logs_have p-run ready || fail "container never printed ready"
	capture pm exec p-run sh -c 'echo in-exec; exit 4'
	expect_rc 4 "podman exec"
	expect_out in-exec "podman exec"
	capture pm ps --format '{{.Names}} {{.Status}}'
	expect_out_match '^p-run Up' "podman ps"
	capture pm pause p-run
	expect_rc 0 "podman pause"
	capture pm_state p-run '{{.State.Status}}'
	expect_out paused "State.Status after pause"
	capture pm unpause p-run
	expect_rc 0 "podman unpause"
	capture pm_state p-run '{{.State.Status}}'
	expect_out running "State.Status after unpause"
	# The trap answers TERM at once: no SIGKILL after the grace period.
	capture pm stop -t 10 p-run
	expect_rc 0 "podman stop"
	capture pm_state p-run '{{.State.Status}} {{.State.ExitCode}}'
	expect_out "exited 7" "State after stop"
	pm rm p-run >/dev/null
}

pm_check_kill() {
	capture prun -d --name p-kill "$PM_IMAGE" sh -c 'echo ready; sleep 1000'
	expect_rc 0 "podman run -d"
	wait_until 20 pm_logs_have p-kill ready || fail "container never printed ready"
	capture pm kill p-kill
	expect_rc 0 "podman kill"
	capture pm wait p-kill
	expect_out 137 "podman wait"
	pm rm p-kill >/dev/null
}

pm_check_memory() {
	# --memory-swap = --memory: no swap to spill into, the OOM kill is fast.
	capture prun --rm --memory 32m --memory-swap 32m "$PM_IMAGE" sh -c \
		'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max'
	expect_rc 0 "podman run --memory 32m"
	expect_out 33554432 "the container's memory limit"
	capture prun --name p-oom --memory 32m --memory-swap 32m "$PM_IMAGE" tail /dev/zero
	expect_rc 137 "tail /dev/zero under --memory 32m"
	capture pm_state p-oom '{{.State.ExitCode}}'
	expect_out 137 "State.ExitCode"
	# (State.OOMKilled stays false: conmon's v1 OOM watch does not see this
	# kill; docker's shim does. Not checked here.)
	pm rm p-oom >/dev/null
}

pm_check_pids_limit() {
	# As the docker check: forks until the limit refuses, then PID 1 kills
	# them with builtins only.
	# shellcheck disable=SC2016 # expanded in the container
	capture prun --rm --pids-limit 10 "$PM_IMAGE" sh -c '
		( for i in $(seq 1 30); do sleep 60 & done; wait ) 2>/tmp/err
		echo "loop-status=$?"
		read -r line </tmp/err; echo "$line"
		kill -9 -1; wait; echo done'
	expect_rc 0 "fork loop under --pids-limit 10"
	grep -q "loop-status=[1-9]" <<<"$OUT" || fail "the fork loop did not fail: $(captured)"
	grep -qx 'done' <<<"$OUT" || fail "container did not finish cleanly: $(captured)"
}

pm_check_inspect() {
	capture prun --name p-inspect "$PM_IMAGE" true
	expect_rc 0 "podman run true"
	capture pm_state p-inspect '{{.OCIRuntime}} {{.State.ExitCode}}'
	expect_out "$RUNTIME_FOR_CLIENTS 0" "podman inspect .OCIRuntime .State.ExitCode"
	capture pm ps -a --format '{{.Names}} {{.Status}}'
	expect_out_match '^p-inspect Exited \(0\)' "podman ps -a"
	pm rm p-inspect >/dev/null
}

# What podman keeps outside --root whatever it is told.
pm_host_state() {
	{ find /var/lib/containers /run/containers /run/libpod -printf '%p %s %T@\n' 2>/dev/null || true; } | sort
	ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null || true
}

pm_check_nothing_left() {
	local left
	[ "$(pm_host_state)" = "$PM_HOST_BEFORE" ] ||
		fail "podman changed the host: $(diff <(echo "$PM_HOST_BEFORE") <(pm_host_state) | tr '\n' ' ')"
	capture pm ps -aq
	[ -z "$OUT" ] || fail "containers left: $(captured)"
	left=$(cgroup_pids_below "$CG_PARENT/podman"; pids_rooted_below "$PM_DIR"; pids_mentioning "$PM_DIR")
	[ -z "$left" ] || fail "processes left: $(xargs -r ps -o pid=,args= -p <<<"$left" | tr '\n' '|')"
	# podman (cgroupfs) puts conmon in <cgroup-parent>/conmon and never
	# removes that directory: podman's, not the runtime's (empty, checked
	# above; the harness removes the subtree).
	left=$(cgroup_dirs_below "$CG_PARENT/podman" | grep -v '/podman/conmon$' || true)
	[ -z "$left" ] || fail "cgroups left after podman rm: $(tr '\n' ' ' <<<"$left")"
}

podman_remove_all() {
	[ -d "$PM_DIR/root" ] || return 0
	trace_mark "podman rm -f of the remaining containers (harness clean-up)"
	pm rm -af >/dev/null 2>&1 || true
}

podman_stage() {
	PM_DIR=$WORK/podman
	if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
		report skip "podman" "podman or conmon not installed (scripts/install-deps.sh installs them)"
		return 0
	fi
	PM_DRIVER=overlay
	[ "$STORAGE_OVERLAY" = 1 ] || PM_DRIVER=vfs
	pm_argv
	PM_HOST_BEFORE=$(pm_host_state)
	mkdir -p "$PM_DIR/tmp"
	echo "# podman $(podman --version | awk '{ print $3 }'), conmon $(conmon --version | awk 'NR == 1 { print $3 }'), storage driver $PM_DRIVER"
	check "podman import the busybox image" pm_check_import
	check "podman run echo" pm_check_echo
	check "podman run exit code 3" pm_check_exit_3
	check "podman run -t" pm_check_tty
	check "podman exec, ps, pause, unpause, stop" pm_check_exec_pause_stop
	check "podman kill gives exit code 137" pm_check_kill
	check "podman run --memory OOM kill" pm_check_memory
	check "podman run --pids-limit" pm_check_pids_limit
	check "podman inspect and ps -a" pm_check_inspect
	podman_remove_all
	check "podman leaves no container state" pm_check_nothing_left
	podman_cleanup
}

podman_cleanup() {
	[ -n "$PM_DIR" ] && [ -d "$PM_DIR" ] && [ -n "${PM_ARGV[*]:-}" ] || return 0
	DEADLINE=$((SECONDS + 10)) podman_remove_all
	# The image store's own mounts (overlay layers, a container's shm).
	unmount_below "$PM_DIR" || true
}
