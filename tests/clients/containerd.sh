# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# containerd: a test-owned containerd (also the one dockerd is pointed at,
# see docker.sh), and the checks that drive the runtime through ctr and the
# io.containerd.runc.v2 shim with --runc-binary. Sourced by run.sh.

CTR_NS=psrun-clients
CTR_IMAGE=docker.io/library/psrun-busybox:test

# containerd_config DIR: a config with every path inside DIR. Without it
# containerd would use /var/lib/containerd, /run/containerd and create
# /opt/containerd; the CRI plugin (network, CNI) is not wanted at all.
containerd_config() {
	local dir=$1
	cat <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = [
  "io.containerd.grpc.v1.cri",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$dir/containerd.sock"

[ttrpc]
  address = "$dir/containerd.sock.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
EOF
}

# containerd_start DIR: start containerd with its state in DIR, wait for it
# to answer; sets CONTAINERD_PID. The shims it spawns still put their
# sockets in /run/containerd/s (fixed in containerd 1.6, see lib.sh).
containerd_start() {
	local dir=$1
	mkdir -p "$dir"
	containerd_config "$dir" >"$dir/config.toml"
	containerd --config "$dir/config.toml" --log-level info \
		>"$dir/containerd.log" 2>&1 </dev/null &
	CONTAINERD_PID=$!
	disown "$CONTAINERD_PID"
	echo "$CONTAINERD_PID" >"$dir/containerd.pid"
	if ! wait_until 30 ctr --address "$dir/containerd.sock" version; then
		echo "containerd did not answer on $dir/containerd.sock within 30 s"
		tail -n 30 "$dir/containerd.log"
		return 1
	fi
}

# containerd_stop DIR: SIGTERM, then SIGKILL after a grace period.
containerd_stop() {
	local dir=$1 pid
	pid=$(cat "$dir/containerd.pid" 2>/dev/null) || return 0
	stop_pids 10 "$pid"
	rm -f "$dir/containerd.pid"
}

# --- the ctr stage ---------------------------------------------------------

CT_DIR=
CT_SNAPSHOTTER=overlayfs

ct() {
	timeout --verbose -k 5 "$(budget "$CMD_TIMEOUT")" ctr --address "$CT_DIR/containerd.sock" --namespace "$CTR_NS" "$@"
}

# ct_run ID CTR-RUN-OPTIONS... -- ARGS: ctr run through the runc shim with
# the runtime under test as its runc binary, cgroups below the test's.
ct_run() {
	local id=$1
	shift
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	ct run --snapshotter "$CT_SNAPSHOTTER" --fifo-dir "$CT_DIR/fifo" \
		--runtime io.containerd.runc.v2 --runc-binary "$RUNTIME_FOR_CLIENTS" \
		--runc-root "$CT_DIR/runc" --cgroup "$CG_PARENT/containerd/$id" \
		"${opts[@]}" "$CTR_IMAGE" "$id" "$@"
}

# The STATUS column of `ctr task ls` for one task.
ct_task_status() {
	ct task ls | awk -v id="$1" '$1 == id { print $3 }'
}

ct_task_status_is() {
	[ "$(ct_task_status "$1")" = "$2" ]
}

ct_check_import() {
	capture ct images import --snapshotter "$CT_SNAPSHOTTER" "$WORK/image-oci.tar"
	expect_rc 0 "ctr images import"
	capture ct images ls -q
	grep -qxF "$CTR_IMAGE" <<<"$OUT" || fail "$CTR_IMAGE not listed after import: $(captured)"
}

ct_check_exit_code() {
	capture ct_run c-exit --rm -- sh -c 'echo from-task; exit 3'
	expect_rc 3 "ctr run sh -c 'exit 3'"
	expect_out from-task "ctr run output"
}

ct_check_detached() {
	capture ct_run c-run -d -- sleep 1000
	expect_rc 0 "ctr run -d sleep 1000"
	wait_until 20 ct_task_status_is c-run RUNNING ||
		fail "task c-run not RUNNING within 20 s: $(ct task ls 2>&1 | tr '\n' '|')"
}

ct_check_exec() {
	capture ct task exec --fifo-dir "$CT_DIR/fifo" --exec-id e1 c-run sh -c 'echo from-exec; exit 4'
	expect_rc 4 "ctr task exec"
	expect_out from-exec "ctr task exec output"
}

# The host PID of task $1 (ctr task ls), or nothing.
ct_task_pid() {
	ct task ls | awk -v id="$1" '$1 == id && $2 > 0 { print $2 }'
}

ct_check_cgroup() {
	local pid path bad=
	pid=$(ct_task_pid c-run)
	[ -n "$pid" ] || fail "task c-run is not running"
	while IFS=: read -r _ ctrl path; do
		case "$ctrl" in "" | name=*) continue ;; esac
		[ "$path" = "$CG_PARENT/containerd/c-run" ] || bad="$bad $ctrl:$path"
	done <"/proc/$pid/cgroup"
	[ -z "$bad" ] || fail "not in --cgroup $CG_PARENT/containerd/c-run:$bad"
}

ct_check_ps() {
	local pid
	pid=$(ct_task_pid c-run)
	[ -n "$pid" ] || fail "task c-run is not running"
	capture ct task ps c-run
	expect_rc 0 "ctr task ps"
	grep -qE "^${pid}[[:space:]]" <<<"$OUT" || fail "ctr task ps does not list the task's pid $pid: $(captured)"
}

ct_check_pause() {
	capture ct task pause c-run
	expect_rc 0 "ctr task pause"
	wait_until 10 ct_task_status_is c-run PAUSED ||
		fail "task not PAUSED after pause: $(ct task ls 2>&1 | tr '\n' '|')"
	capture ct task resume c-run
	expect_rc 0 "ctr task resume"
	wait_until 10 ct_task_status_is c-run RUNNING ||
		fail "task not RUNNING after resume: $(ct task ls 2>&1 | tr '\n' '|')"
	capture ct task exec --fifo-dir "$CT_DIR/fifo" --exec-id e2 c-run echo alive
	expect_out alive "exec after resume"
}

ct_check_kill() {
	capture ct task kill -s KILL c-run
	expect_rc 0 "ctr task kill -s KILL"
	wait_until 20 ct_task_status_is c-run STOPPED ||
		fail "task not STOPPED within 20 s of SIGKILL: $(ct task ls 2>&1 | tr '\n' '|')"
	# ctr 1.6 reports the exit status of the deleted task as a warning
	# ("task ID exit with non-zero exit code N"); later ctr exit with it.
	capture ct task delete c-run
	if [ "$RC" != 137 ] && ! grep -q "exit code 137" <<<"$ERR"; then
		fail "ctr task delete does not report exit status 137: $(captured)"
	fi
	capture ct container delete c-run
	expect_rc 0 "ctr container delete"
}

ct_check_failing_entrypoint() {
	capture ct_run c-fail --rm -- /nonexistent
	[ "$RC" -ne 0 ] || fail "ctr run /nonexistent succeeded: $(captured)"
	grep -q /nonexistent <<<"$ERR" || fail "the runtime's error does not name /nonexistent: $(captured)"
	ct container delete c-fail >/dev/null 2>&1 || true
}

# Once everything is deleted: no task processes, no container cgroups, no
# runtime state and no shim left.
ct_check_nothing_left() {
	local left
	left=$(cgroup_pids_below "$CG_PARENT/containerd"; pids_rooted_below "$CT_DIR")
	[ -z "$left" ] || fail "container processes left: $(xargs -r ps -o pid=,args= -p <<<"$left" | tr '\n' '|')"
	wait_until 15 ct_no_shims ||
		fail "processes left: $(ct_shims | xargs -r ps -o pid=,args= -p | tr '\n' '|')"
	left=$(cgroup_dirs_below "$CG_PARENT/containerd")
	[ -z "$left" ] || fail "cgroups left after delete: $(tr '\n' ' ' <<<"$left")"
	left=$(find "$CT_DIR/runc" -mindepth 2 2>/dev/null)
	[ -z "$left" ] || fail "runtime state left in --root: $(tr '\n' ' ' <<<"$left")"
}

# Processes of this containerd other than containerd itself (shims).
ct_shims() {
	pids_mentioning "$CT_DIR" | grep -vx "${CONTAINERD_PID:-x}" || true
}

ct_no_shims() {
	[ -z "$(ct_shims)" ]
}

containerd_stage() {
	CT_DIR=$WORK/containerd
	if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null ||
		! command -v containerd-shim-runc-v2 >/dev/null; then
		report skip "containerd" "containerd, ctr or containerd-shim-runc-v2 not installed (scripts/install-deps.sh installs containerd)"
		return 0
	fi
	[ "$STORAGE_OVERLAY" = 1 ] || CT_SNAPSHOTTER=native
	step "containerd starts" containerd_start "$CT_DIR" || return 0
	echo "# containerd $(ctr --address "$CT_DIR/containerd.sock" version 2>/dev/null |
		awk '/^Server:/ { s = 1 } s && $1 == "Version:" { print $2; exit }'), snapshotter $CT_SNAPSHOTTER"
	check "containerd image import" ct_check_import
	check "containerd run exit code 3" ct_check_exit_code
	check "containerd run detached task" ct_check_detached
	check "containerd task cgroups at ctr run --cgroup" ct_check_cgroup
	check "containerd task exec" ct_check_exec
	check "containerd task ps" ct_check_ps
	check "containerd task pause and resume" ct_check_pause
	check "containerd task kill KILL gives 137" ct_check_kill
	check "containerd run failing entrypoint" ct_check_failing_entrypoint
	containerd_remove_all
	check "containerd leaves no container state" ct_check_nothing_left
	containerd_cleanup
}

# Kill and delete every task and container of the namespace.
containerd_remove_all() {
	local id
	[ -S "$CT_DIR/containerd.sock" ] || return 0
	trace_mark "containerd kill and delete of the remaining tasks (harness clean-up)"
	for id in $(ct task ls -q 2>/dev/null); do
		ct task kill -s KILL "$id" >/dev/null 2>&1 || true
		wait_until 10 ct_task_status_is "$id" STOPPED || true
		ct task delete "$id" >/dev/null 2>&1 || true
	done
	for id in $(ct container ls -q 2>/dev/null); do
		ct container delete "$id" >/dev/null 2>&1 || true
	done
}

containerd_cleanup() {
	[ -n "$CT_DIR" ] && [ -d "$CT_DIR" ] || return 0
	if [ -e "$CT_DIR/containerd.pid" ]; then
		DEADLINE=$((SECONDS + 10)) containerd_remove_all
		containerd_stop "$CT_DIR"
	fi
}
