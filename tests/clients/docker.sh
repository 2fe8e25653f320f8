# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# docker: a test-owned dockerd (on a test-owned containerd) with the runtime
# under test registered as "psrun" and made the default, and the checks
# that drive it through the docker CLI. Sourced by run.sh.

DK_DIR=
DK_PID=
DK_CTD_PID=
DK_DRIVER=
DK_IMAGE=psrun-busybox:test
# Debian's docker.io client; /usr/local/bin/docker may be a newer client.
DOCKER_CLI=${CLIENTS_DOCKER_CLI:-/usr/bin/docker}

# Every client command is bounded (--verbose: a timeout says so on stderr).
dk() {
	timeout --verbose -k 5 "$(budget "$CMD_TIMEOUT")" "$DOCKER_CLI" "$@"
}

# docker run with the runtime under test, never pulling.
drun() {
	dk run --pull never --runtime psrun "$@"
}

dk_state() { # dk_state CONTAINER GO-TEMPLATE
	dk inspect -f "$2" "$1"
}

# dk_pid CONTAINER: sets CPID to the host PID of its init; fails the
# check if it is not running. (Not "$(...)": fail must end the check.)
dk_pid() {
	CPID=$(dk_state "$1" '{{.State.Pid}}') || true
	[ "${CPID:-0}" -gt 0 ] || fail "$1 is not running (State.Pid is '$CPID')"
}

dk_is_running() {
	[ "$(dk_state "$1" '{{.State.Running}}')" = true ]
}

# True once the container's log has a line READY (it set up its traps).
dk_logs_have() { # dk_logs_have CONTAINER LINE
	dk logs "$1" 2>&1 | grep -qx "$2"
}

# The dockerd command line (also in docs/integration.md).
dockerd_args() {
	local driver=$1
	DOCKERD_ARGS=(
		--config-file "$DK_DIR/daemon.json"
		--data-root "$DK_DIR/data"
		--exec-root "$DK_DIR/exec"
		--pidfile "$DK_DIR/dockerd.pid"
		-H "unix://$DK_DIR/docker.sock"
		--containerd "$DK_DIR/containerd/containerd.sock"
		--storage-driver "$driver"
		--exec-opt native.cgroupdriver=cgroupfs
		--cgroup-parent "$CG_PARENT/docker"
		--add-runtime "psrun=$RUNTIME_FOR_CLIENTS"
		--default-runtime psrun
		--iptables=false --ip-forward=false --ip-masq=false
		--bridge=none --userland-proxy=false
	)
	# No firewall rules on the host, and no network at all: --bridge=none
	# gives containers only lo. --ip6tables exists from docker 20.10 on.
	if dockerd --help 2>&1 | grep -q -- '--ip6tables'; then
		DOCKERD_ARGS+=(--ip6tables=false)
	fi
}

dockerd_start() {
	local driver=overlay2
	[ "$STORAGE_OVERLAY" = 1 ] || driver=vfs
	mkdir -p "$DK_DIR/cli"
	# The trust key dockerd 20.10 writes, by default to /etc/docker/key.json.
	printf '{ "deprecated-key-path": "%s" }\n' "$DK_DIR/key.json" >"$DK_DIR/daemon.json"
	containerd_start "$DK_DIR/containerd" || return 1
	DK_CTD_PID=$CONTAINERD_PID
	dockerd_args "$driver"
	dockerd "${DOCKERD_ARGS[@]}" >"$DK_DIR/dockerd.log" 2>&1 </dev/null &
	DK_PID=$!
	# Stopped by PID, not waited for: no "Killed" job report if it needs KILL.
	disown "$DK_PID"
	export DOCKER_HOST="unix://$DK_DIR/docker.sock" DOCKER_CONFIG="$DK_DIR/cli"
	if ! wait_until 60 dk version; then
		echo "dockerd did not answer on $DK_DIR/docker.sock within 60 s"
		tail -n 30 "$DK_DIR/dockerd.log"
		return 1
	fi
	DK_DRIVER=$driver
}

# --- checks ----------------------------------------------------------------

dk_check_runtime_registered() {
	capture dk info --format '{{json .Runtimes}} {{.DefaultRuntime}}'
	expect_rc 0 "docker info"
	grep -q '"psrun"' <<<"$OUT" || fail "docker info does not list the psrun runtime: $(captured)"
	grep -qF "\"$RUNTIME_FOR_CLIENTS\"" <<<"$OUT" || fail "the psrun runtime's path is not $RUNTIME_FOR_CLIENTS: $(captured)"
	[ "${OUT##* }" = psrun ] || fail "default runtime is not psrun: $(captured)"
}

dk_check_import() {
	capture dk import --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' "$WORK/image-rootfs.tar" "$DK_IMAGE"
	expect_rc 0 "docker import"
	capture dk image inspect -f '{{.Id}}' "$DK_IMAGE"
	expect_rc 0 "docker image inspect"
}

dk_check_echo() {
	capture drun --rm "$DK_IMAGE" echo hi
	expect_rc 0 "docker run echo hi"
	expect_out hi "docker run echo hi"
}

dk_check_runtime_used() {
	capture drun --name d-which "$DK_IMAGE" true
	expect_rc 0 "docker run true"
	capture dk_state d-which '{{.HostConfig.Runtime}}'
	expect_out psrun "HostConfig.Runtime"
	dk rm d-which >/dev/null
}

dk_check_exit_3() {
	capture drun --rm "$DK_IMAGE" sh -c 'exit 3'
	expect_rc 3 "sh -c 'exit 3'"
}

# A container's PID 1 cannot SIGKILL itself (`sh -c 'kill -9 $$'` is
# ignored: the kernel drops signals an init sends itself), so the SIGKILL
# comes from docker kill; 137 = 128 + 9 comes from how the init died.
dk_check_exit_137() {
	capture drun -d --name d-kill9 "$DK_IMAGE" sh -c 'echo ready; sleep 1000'
	expect_rc 0 "docker run -d"
	wait_until 20 dk_logs_have d-kill9 ready || fail "container never printed ready"
	capture dk kill d-kill9
	expect_rc 0 "docker kill (SIGKILL)"
	capture dk wait d-kill9
	expect_out 137 "docker wait"
	capture dk_state d-kill9 '{{.State.ExitCode}} {{.State.OOMKilled}}'
	expect_out "137 false" "State.ExitCode State.OOMKilled"
	dk rm d-kill9 >/dev/null
}

dk_check_read_only() {
	# The options of the mount on / that is on top (the last listed).
	# shellcheck disable=SC2016 # expanded in the container
	capture drun --rm --read-only "$DK_IMAGE" sh -c '
		touch /probe && echo root-writable
		echo x >/dev/shm/probe && echo shm-writable
		awk '\''$5 == "/" { o = $6 } END { print "root-options=" o }'\'' /proc/self/mountinfo'
	expect_rc 0 "docker run --read-only"
	grep -q root-writable <<<"$OUT" && fail "/ is writable with --read-only: $(captured)"
	grep -q "Read-only file system" <<<"$ERR" || fail "writing / did not fail with EROFS: $(captured)"
	grep -q shm-writable <<<"$OUT" || fail "/dev/shm (docker's tmpfs) not writable: $(captured)"
	grep -qE '^root-options=(ro|.*,ro)(,|$)' <<<"$OUT" || fail "/ is not mounted ro: $(captured)"
}

dk_check_network_none() {
	capture drun --rm --network none "$DK_IMAGE" cat /proc/net/dev
	expect_rc 0 "docker run --network none"
	local ifaces
	ifaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' <<<"$OUT" | sort | tr '\n' ' ')
	[ "$ifaces" = "lo " ] || fail "interfaces are '$ifaces', expected only lo: $(captured)"
}

dk_check_oom() {
	# memory-swap = memory: no swap to spill into, the OOM kill comes fast.
	capture drun --name d-oom --memory 32m --memory-swap 32m "$DK_IMAGE" tail /dev/zero
	expect_rc 137 "tail /dev/zero under --memory 32m"
	capture dk_state d-oom '{{.State.OOMKilled}} {{.State.ExitCode}}'
	expect_out "true 137" "State.OOMKilled State.ExitCode"
	dk rm d-oom >/dev/null
}

dk_check_pids_limit() {
	# A subshell forks sleepers until the limit stops it; PID 1 then kills
	# them all with builtins only (no fork left) and exits 0.
	# shellcheck disable=SC2016 # expanded in the container
	capture drun --rm --pids-limit 10 "$DK_IMAGE" sh -c '
		( for i in $(seq 1 30); do sleep 60 & done; wait ) 2>/tmp/err
		echo "loop-status=$?"
		read -r line </tmp/err; echo "$line"
		kill -9 -1; wait; echo done'
	expect_rc 0 "fork loop under --pids-limit 10"
	grep -q "loop-status=[1-9]" <<<"$OUT" || fail "the fork loop did not fail: $(captured)"
	grep -qiE "fork|resource temporarily unavailable" <<<"$OUT" ||
		fail "no fork failure reported: $(captured)"
	grep -qx 'done' <<<"$OUT" || fail "container did not finish cleanly: $(captured)"
}

dk_check_env() {
	# shellcheck disable=SC2016 # expanded in the container
	capture drun --rm -e FOO=bar "$DK_IMAGE" sh -c 'echo $FOO'
	expect_rc 0
	expect_out bar "-e FOO=bar"
}

dk_check_workdir() {
	capture drun --rm -w /tmp "$DK_IMAGE" pwd
	expect_rc 0
	expect_out /tmp "-w /tmp"
}

dk_check_user() {
	capture drun --rm -u 1000:1000 "$DK_IMAGE" id
	expect_rc 0
	expect_out_match '^uid=1000\(user\) gid=1000\(user\)' "-u 1000:1000"
}

dk_check_cap_drop() {
	capture drun --rm "$DK_IMAGE" grep CapEff /proc/self/status
	expect_rc 0
	grep -qE 'CapEff:[[:space:]]+0+$' <<<"$OUT" && fail "CapEff is already 0 without --cap-drop: $(captured)"
	capture drun --rm --cap-drop ALL "$DK_IMAGE" grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status
	expect_rc 0
	[ "$(grep -cE ':[[:space:]]+0{16}$' <<<"$OUT")" = 3 ] ||
		fail "capabilities left with --cap-drop ALL: $(captured)"
}

dk_check_tty() {
	capture drun --rm -t "$DK_IMAGE" sh -c 'tty; test -t 0 && test -t 1 && echo both-tty'
	expect_rc 0 "docker run -t"
	expect_out_match '^/dev/pts/[0-9]+$' "tty"
	grep -qx both-tty <<<"$OUT" || fail "stdin/stdout not a terminal: $(captured)"
}

# The long-running container the next checks share.
dk_check_detached() {
	capture drun -d --name d-run "$DK_IMAGE" sleep 1000
	expect_rc 0 "docker run -d sleep 1000"
	wait_until 20 dk_is_running d-run ||
		fail "d-run not running within 20 s: $(dk ps -a 2>&1 | tr '\n' '|')"
}

dk_check_cgroup_parent() {
	local pid path bad=
	dk_pid d-run
	pid=$CPID
	while IFS=: read -r _ ctrl path; do
		# The controllers must all be there; name=systemd and the empty v2
		# hierarchy are up to the runtime.
		case "$ctrl" in "" | name=*) continue ;; esac
		case "$path" in
		"$CG_PARENT/docker/"*) ;;
		*) bad="$bad $ctrl:$path" ;;
		esac
	done <"/proc/$pid/cgroup"
	[ -z "$bad" ] || fail "not below --cgroup-parent $CG_PARENT/docker:$bad"
}

dk_check_exec() {
	capture dk exec d-run sh -c 'echo from-exec; exit 5'
	expect_rc 5 "docker exec sh -c 'echo from-exec; exit 5'"
	expect_out from-exec "docker exec"
	capture dk exec d-run sh -c 'test -t 0 && echo tty || echo no-tty'
	expect_out no-tty "docker exec (no -t)"
}

dk_check_exec_tty() {
	capture dk exec -t d-run sh -c 'tty; test -t 1 && echo stdout-tty'
	expect_rc 0 "docker exec -t"
	expect_out_match '^/dev/pts/[0-9]+$' "docker exec -t tty"
	grep -qx stdout-tty <<<"$OUT" || fail "stdout not a terminal: $(captured)"
}

dk_check_pause() {
	local pid cg
	capture dk pause d-run
	expect_rc 0 "docker pause"
	capture dk_state d-run '{{.State.Paused}} {{.State.Status}}'
	expect_out "true paused" "State.Paused State.Status"
	dk_pid d-run
	pid=$CPID
	cg=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$pid/cgroup")
	if [ -n "$cg" ] && [ -e "/sys/fs/cgroup/freezer$cg/freezer.state" ]; then
		grep -qx FROZEN "/sys/fs/cgroup/freezer$cg/freezer.state" ||
			fail "freezer.state is $(cat "/sys/fs/cgroup/freezer$cg/freezer.state") while paused"
	fi
	capture dk unpause d-run
	expect_rc 0 "docker unpause"
	capture dk_state d-run '{{.State.Paused}} {{.State.Status}}'
	expect_out "false running" "State.Paused State.Status after unpause"
	capture dk exec d-run echo alive
	expect_out alive "docker exec after unpause"
}

dk_check_update() {
	local pid cg host
	capture dk update --memory 64m --memory-swap 64m d-run
	expect_rc 0 "docker update --memory 64m --memory-swap 64m"
	capture dk_state d-run '{{.HostConfig.Memory}}'
	expect_out 67108864 "HostConfig.Memory"
	dk_pid d-run
	pid=$CPID
	cg=$(awk -F: '$2 == "memory" { print $3 }' "/proc/$pid/cgroup")
	host=/sys/fs/cgroup/memory$cg/memory.limit_in_bytes
	if [ -e "$host" ]; then
		[ "$(cat "$host")" = 67108864 ] || fail "$host is $(cat "$host"), expected 67108864"
	elif [ -e "/sys/fs/cgroup/unified$cg/memory.max" ]; then
		[ "$(cat "/sys/fs/cgroup/unified$cg/memory.max")" = 67108864 ] ||
			fail "memory.max is $(cat "/sys/fs/cgroup/unified$cg/memory.max")"
	else
		fail "no memory cgroup file for the container ($cg)"
	fi
}

dk_check_top() {
	capture dk top d-run
	expect_rc 0 "docker top"
	grep -q 'sleep 1000' <<<"$OUT" || fail "docker top does not list 'sleep 1000': $(captured)"
}

dk_check_stats() {
	capture dk stats --no-stream --format '{{.Name}} {{.MemUsage}}' d-run
	expect_rc 0 "docker stats --no-stream"
	expect_out_match '^d-run [0-9.]*[1-9][0-9.]*[KMG]?i?B / ' "docker stats memory usage"
}

dk_check_stop_kill_after_grace() {
	local t0 t1
	capture drun -d --name d-stubborn "$DK_IMAGE" sh -c 'trap "" TERM; echo ready; sleep 1000'
	expect_rc 0 "docker run -d"
	wait_until 20 dk_logs_have d-stubborn ready || fail "container never printed ready: $(dk logs d-stubborn 2>&1 | tr '\n' '|')"
	t0=$(now_ms)
	capture dk stop -t 2 d-stubborn
	t1=$(now_ms)
	expect_rc 0 "docker stop -t 2"
	capture dk_state d-stubborn '{{.State.Running}} {{.State.ExitCode}}'
	expect_out "false 137" "State.Running State.ExitCode"
	echo "stopped in $((t1 - t0)) ms"
	(((t1 - t0) >= 1800)) || fail "stopped after $((t1 - t0)) ms, before the 2 s grace"
	(((t1 - t0) <= 15000)) || fail "stopped after $((t1 - t0)) ms, far past the 2 s grace"
	dk rm d-stubborn >/dev/null
}

dk_check_stop_term() {
	local t0 t1
	capture drun -d --name d-polite "$DK_IMAGE" sh -c 'trap "exit 42" TERM; echo ready; sleep 1000 & wait'
	expect_rc 0 "docker run -d"
	wait_until 20 dk_logs_have d-polite ready || fail "container never printed ready: $(dk logs d-polite 2>&1 | tr '\n' '|')"
	t0=$(now_ms)
	capture dk stop -t 10 d-polite
	t1=$(now_ms)
	expect_rc 0 "docker stop -t 10"
	capture dk_state d-polite '{{.State.Running}} {{.State.ExitCode}}'
	expect_out "false 42" "State.Running State.ExitCode (the TERM trap exits 42)"
	(((t1 - t0) < 8000)) || fail "stop took $((t1 - t0)) ms for a container that exits on TERM (grace 10 s)"
	dk rm d-polite >/dev/null
}

dk_check_kill_usr1() {
	capture drun -d --name d-usr1 "$DK_IMAGE" sh -c 'trap "echo got-usr1; exit 10" USR1; echo ready; sleep 1000 & wait'
	expect_rc 0 "docker run -d"
	wait_until 20 dk_logs_have d-usr1 ready || fail "container never printed ready: $(dk logs d-usr1 2>&1 | tr '\n' '|')"
	capture dk kill -s USR1 d-usr1
	expect_rc 0 "docker kill -s USR1"
	capture dk wait d-usr1
	expect_out 10 "docker wait (the USR1 trap exits 10)"
	capture dk logs d-usr1
	grep -qx got-usr1 <<<"$OUT" || fail "the trap did not run: $(captured)"
	dk rm d-usr1 >/dev/null
}

dk_check_failing_entrypoint() {
	capture drun --name d-noent "$DK_IMAGE" /nonexistent
	# docker's convention: 127 when the runtime's error says the command
	# is not there ("no such file or directory" / "executable file not found").
	expect_rc 127 "docker run IMG /nonexistent"
	grep -q /nonexistent <<<"$ERR" || fail "the runtime's error does not name /nonexistent: $(captured)"
	echo "stderr: $ERR"
	capture dk_state d-noent '{{.State.ExitCode}}'
	expect_out 127 "State.ExitCode"
	dk rm d-noent >/dev/null
}

# Once every container is removed: no container processes, cgroups, shims
# or runtime state are left.
dk_check_nothing_left() {
	local left
	capture dk ps -aq
	[ -z "$OUT" ] || fail "containers left: $(captured)"
	left=$(cgroup_pids_below "$CG_PARENT/docker"; pids_rooted_below "$DK_DIR")
	[ -z "$left" ] || fail "container processes left: $(xargs -r ps -o pid=,args= -p <<<"$left" | tr '\n' '|')"
	wait_until 15 dk_no_shims ||
		fail "shims left: $(dk_shims | xargs -r ps -o pid=,args= -p | tr '\n' '|')"
	left=$(cgroup_dirs_below "$CG_PARENT/docker")
	[ -z "$left" ] || fail "cgroups left after docker rm: $(tr '\n' ' ' <<<"$left")"
	left=$(find "$DK_DIR"/exec/runtime-* -mindepth 2 2>/dev/null)
	[ -z "$left" ] || fail "runtime state left in --root: $(tr '\n' ' ' <<<"$left")"
}

# Processes of this dockerd other than dockerd and its containerd.
dk_shims() {
	pids_mentioning "$DK_DIR" | grep -vxE "${DK_PID:-x}|${DK_CTD_PID:-x}" || true
}

dk_no_shims() {
	[ -z "$(dk_shims)" ]
}

docker_remove_all() {
	local ids
	[ -S "$DK_DIR/docker.sock" ] || return 0
	ids=$(dk ps -aq 2>/dev/null) || return 0
	trace_mark "docker rm -f of the remaining containers (harness clean-up)"
	# shellcheck disable=SC2086
	[ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
}

docker_stage() {
	DK_DIR=$WORK/docker
	if ! command -v dockerd >/dev/null || [ ! -x "$DOCKER_CLI" ]; then
		report skip "docker" "dockerd or $DOCKER_CLI not installed (scripts/install-deps.sh installs docker.io)"
		return 0
	fi
	step "docker daemon starts" dockerd_start || return 0
	echo "# dockerd $(dk version -f '{{.Server.Version}}' 2>/dev/null), storage driver $DK_DRIVER"
	check "docker info lists the psrun runtime" dk_check_runtime_registered
	check "docker import the busybox image" dk_check_import
	check "docker run echo" dk_check_echo
	check "docker inspect HostConfig.Runtime is psrun" dk_check_runtime_used
	check "docker run exit code 3" dk_check_exit_3
	check "docker kill gives exit code 137" dk_check_exit_137
	check "docker run --read-only" dk_check_read_only
	check "docker run --network none" dk_check_network_none
	check "docker run --memory OOM kill" dk_check_oom
	check "docker run --pids-limit" dk_check_pids_limit
	check "docker run -e" dk_check_env
	check "docker run -w" dk_check_workdir
	check "docker run -u with uid and gid 1000" dk_check_user
	check "docker run --cap-drop ALL" dk_check_cap_drop
	check "docker run -t" dk_check_tty
	check "docker run -d" dk_check_detached
	check "docker container cgroups below --cgroup-parent" dk_check_cgroup_parent
	check "docker exec" dk_check_exec
	check "docker exec -t" dk_check_exec_tty
	check "docker pause and unpause" dk_check_pause
	check "docker update --memory" dk_check_update
	check "docker top" dk_check_top
	check "docker stats --no-stream" dk_check_stats
	check "docker stop kills after the grace period" dk_check_stop_kill_after_grace
	check "docker stop of a container that exits on TERM" dk_check_stop_term
	check "docker kill -s USR1" dk_check_kill_usr1
	check "docker run failing entrypoint" dk_check_failing_entrypoint
	docker_remove_all
	check "docker leaves no container state" dk_check_nothing_left
	docker_cleanup
}

docker_cleanup() {
	[ -n "$DK_DIR" ] && [ -d "$DK_DIR" ] || return 0
	local t0=$SECONDS
	if [ -n "$DK_PID" ]; then
		DEADLINE=$((SECONDS + 10)) docker_remove_all
		stop_pids 10 "$DK_PID"
		DK_PID=
	fi
	if [ -e "$DK_DIR/containerd/containerd.pid" ]; then
		containerd_stop "$DK_DIR/containerd"
	fi
	# shellcheck disable=SC2034 # reported by run.sh
	DK_STOP_SECONDS=$((SECONDS - t0))
	unset DOCKER_HOST DOCKER_CONFIG
}
