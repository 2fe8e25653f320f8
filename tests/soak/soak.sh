#!/bin/bash
# SPDX-License-Identifier: MIT
# The soak tier: psrun under load, killed at every point, fed bad input.
#
#   tests/soak/soak.sh BUILD [--short|--long]
#
# 1. a table of bad inputs: each must exit non-zero with one line on stderr
#    (`psrun: ...`, or a runc-style `level=error` line for OCI commands),
#    within a time bound, and leave nothing;
# 2. sequential and 8-way concurrent `psrun run`;
# 3. sequential and 8-way concurrent OCI create/start/kill/delete cycles;
# 4. `psrun create` and `psrun run` SIGKILLed at each named set-up stage
#    (PSRUN_TEST_KILL_AT, common/fault.h), then delete --force or psrun gc;
# 5. the same SIGKILLed at random points.
# After each phase: no cgroup below its own, no entry in its --root, no
# process of its own left. It first moves itself into a fresh cgroup below
# its own in every hierarchy, so other psrun users on the machine do not
# disturb the count. Prints "soak: N passed, N failed" last.
set -u

BUILD=${1:-build}
MODE=${2:---short}
PSRUN=$(realpath "$BUILD/psrun")
case "$MODE" in
--short) SEQ=20 PAR_ROUNDS=2 OCI_SEQ=6 OCI_PAR_ROUNDS=1 RANDOM_KILLS=12 ;;
--long) SEQ=1000 PAR_ROUNDS=125 OCI_SEQ=200 OCI_PAR_ROUNDS=25 RANDOM_KILLS=200 ;;
*)
	echo "usage: soak.sh BUILD [--short|--long]" >&2
	exit 2
	;;
esac
# Seconds any single bad input may take.
BAD_INPUT_TIMEOUT=10

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: the soak tier needs root (namespaces, cgroups)"
	echo "soak: 0 passed, 0 failed"
	exit 0
fi
if [ ! -x "$PSRUN" ]; then
	echo "soak: $PSRUN is not built"
	echo "soak: 0 passed, 1 failed"
	exit 1
fi
# busybox-static (scripts/install-deps.sh): the bundle's whole userland.
BUSYBOX=
for b in /usr/bin/busybox /bin/busybox; do [ -x "$b" ] && BUSYBOX=$b; done
if [ -z "$BUSYBOX" ] || ! command -v python3 >/dev/null; then
	echo "soak: needs busybox (static) and python3: run scripts/install-deps.sh"
	echo "soak: 0 passed, 1 failed"
	exit 1
fi

WORK=$(mktemp -d /tmp/psrun-soak.XXXXXX)
chmod 755 "$WORK"
ROOT=$WORK/state
SOAK_CG=psrun-soak-$$
declare -A CG_HOME=() # hierarchy mount -> our cgroup directory there

# ---- our own cgroup ----

# "mountpoint<TAB>controllers" for every cgroup hierarchy (v1 and v2).
hierarchies() {
	awk '{ for (i = 1; i <= NF; i++) if ($i == "-") break;
	       if ($(i+1) == "cgroup2") print $5 "\t";
	       else if ($(i+1) == "cgroup") print $5 "\t" $(i+3) }' /proc/self/mountinfo
}

# Our own cgroup path in the hierarchy with these mount options.
own_path() {
	local opts=$1 line ctrls
	while IFS= read -r line; do
		ctrls=${line#*:}
		ctrls=${ctrls%%:*}
		if [ -z "$opts" ] && [ -z "$ctrls" ]; then
			echo "${line#*::}"
			return
		fi
		if [ -n "$opts" ] && [ -n "$ctrls" ]; then
			local c found=1
			for c in ${ctrls//,/ }; do
				[[ ",$opts," == *",$c,"* ]] || found=0
			done
			[ "$found" = 1 ] && {
				echo "${line#*:*:}"
				return
			}
		fi
	done </proc/self/cgroup
}

enter_own_cgroup() {
	local mp opts own dir
	while IFS=$'\t' read -r mp opts; do
		[[ ",$opts," == *",name="* ]] && continue
		own=$(own_path "$opts")
		[ -n "$own" ] || continue
		[ "$own" = / ] && own=
		dir=$mp$own/$SOAK_CG
		mkdir -p "$dir" 2>/dev/null || continue
		# cpuset: a new cgroup starts without CPUs, and no task may join.
		if [ -f "$dir/cpuset.cpus" ]; then
			cat "$mp$own/cpuset.cpus" >"$dir/cpuset.cpus"
			cat "$mp$own/cpuset.mems" >"$dir/cpuset.mems"
		fi
		CG_HOME[$mp]=$mp$own
		echo $$ >"$dir/cgroup.procs" || return 1
	done < <(hierarchies)
}

leave_own_cgroup() {
	local mp
	for mp in "${!CG_HOME[@]}"; do
		echo $$ >"${CG_HOME[$mp]}/cgroup.procs" 2>/dev/null
	done
	for mp in "${!CG_HOME[@]}"; do
		find "${CG_HOME[$mp]}/$SOAK_CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
}

# Directories below our soak cgroup other than the harness leaf.
cgroup_leftovers() {
	local mp
	for mp in "${!CG_HOME[@]}"; do
		find "${CG_HOME[$mp]}/$SOAK_CG" -mindepth 1 -type d 2>/dev/null
	done
}

# Processes in our cgroups that are not this shell or its children.
is_ours() {
	local pid=$1 i ppid
	for ((i = 0; i < 64 && pid > 1; i++)); do
		[ "$pid" = $$ ] && return 0
		ppid=$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null) || return 1
		pid=$ppid
	done
	return 1
}

process_leftovers() {
	local mp f pid
	for mp in "${!CG_HOME[@]}"; do
		for f in $(find "${CG_HOME[$mp]}/$SOAK_CG" -name cgroup.procs 2>/dev/null); do
			while read -r pid; do
				is_ours "$pid" || echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
			done <"$f"
		done
	done | sort -u
}

# Everything the phase may have left; $1 names the phase.
check_clean() {
	local what=$1 left
	# A container's last process may take a moment to go after delete.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		left="$(cgroup_leftovers)$(process_leftovers)$(ls -A "$ROOT" 2>/dev/null)"
		[ -z "$left" ] && break
		sleep 0.2
	done
	if [ -z "$left" ]; then
		ok
	else
		bad "$what: left behind: $(cgroup_leftovers | head -3 | tr '\n' ' ')" \
			"$(process_leftovers | head -3 | tr '\n' ' ')" "root: $(ls -A "$ROOT" 2>/dev/null | tr '\n' ' ')"
		# Clean up so that the next phase is judged on its own.
		for id in $(ls "$ROOT" 2>/dev/null); do "$PSRUN" --root "$ROOT" delete --force "$id" >/dev/null 2>&1; done
		"$PSRUN" --root "$ROOT" gc >/dev/null 2>&1
	fi
}

cleanup() {
	local id
	for id in $(ls "$ROOT" 2>/dev/null); do
		"$PSRUN" --root "$ROOT" delete --force "$id" >/dev/null 2>&1
	done
	"$PSRUN" --root "$ROOT" gc >/dev/null 2>&1
	wait 2>/dev/null
	leave_own_cgroup
	rm -rf "$WORK"
}
trap cleanup EXIT

enter_own_cgroup
if [ ${#CG_HOME[@]} -eq 0 ]; then
	echo "soak: could not make a cgroup of its own"
	echo "soak: 0 passed, 1 failed"
	exit 1
fi

# ---- a busybox bundle ----

BUNDLE=$WORK/bundle
mkdir -p "$BUNDLE/rootfs"/{bin,proc,dev,sys,tmp,etc}
cp "$BUSYBOX" "$BUNDLE/rootfs/bin/busybox"
for a in sh sleep true cat echo; do ln -s busybox "$BUNDLE/rootfs/bin/$a"; done
(cd "$BUNDLE" && "$PSRUN" spec)
# A process that waits, no terminal, and a cgroup named after the id.
sed -i -e 's/"terminal": true/"terminal": false/' \
	-e 's/^\t\t\t"sh"$/\t\t\t"sleep", "1000"/' "$BUNDLE/config.json"
config_for() { # id -> bundle config.json path (its own copy)
	local dir=$WORK/b-$1
	mkdir -p "$dir"
	ln -sfn "$BUNDLE/rootfs" "$dir/rootfs"
	sed -e "s|\"linux\": {|\"linux\": {\n\t\t\"cgroupsPath\": \"oci-$1\",|" "$BUNDLE/config.json" >"$dir/config.json"
	echo "$dir"
}

oci() { "$PSRUN" --root "$ROOT" "$@"; }
OCI=("$PSRUN" --root "$ROOT")

# ---- 1. bad inputs ----

# one line on stderr, psrun's or a runc-style log line
one_line_error() {
	local err=$1
	[ "$(wc -l <"$err")" -eq 1 ] || return 1
	grep -qE '^psrun: |^time="[^"]*" level=error msg=' "$err"
}

# expect_bad NAME CMD...: non-zero, one line, bounded time, nothing left.
expect_bad() {
	local name=$1
	shift
	local start=$SECONDS status
	timeout -s KILL "$BAD_INPUT_TIMEOUT" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
	status=$?
	if [ "$status" -eq 0 ]; then
		bad "bad input '$name': exit 0"
	elif [ "$status" -eq 137 ]; then
		bad "bad input '$name': still running after ${BAD_INPUT_TIMEOUT}s"
	elif ! one_line_error "$WORK/err"; then
		bad "bad input '$name': not one error line: $(head -c 300 "$WORK/err" | tr '\n' '|')"
	elif [ "$(wc -c <"$WORK/err")" -gt 600 ]; then
		bad "bad input '$name': a $(wc -c <"$WORK/err")-byte message"
	elif [ -n "$(ls -A "$ROOT" 2>/dev/null | grep -vx live)" ]; then
		bad "bad input '$name': left $(ls -A "$ROOT" | grep -vx live | tr '\n' ' ') in the root"
	else
		ok
	fi
	return 0
}

bad_inputs() {
	local b=$WORK/bad v
	mkdir -p "$b"
	oci create --bundle "$(config_for live)" live >/dev/null 2>&1 </dev/null
	oci start live >/dev/null 2>&1
	# Never a number: refused by every numeric option.
	local never=(-1 0x3e8 1e3 65536x "" " 1" "1 " "+1" "1.0")
	# Numbers past every range below.
	local big=(4294967296 4294967295 99999999999 18446744073709551616)
	for v in "${never[@]}" "${big[@]}"; do
		expect_bad "exec --user $v" "${OCI[@]}" exec --user "$v" live true
		expect_bad "exec --user 0:$v" "${OCI[@]}" exec --user "0:$v" live true
		expect_bad "exec --preserve-fds $v" "${OCI[@]}" exec --preserve-fds "$v" live true
		expect_bad "create --preserve-fds $v" "${OCI[@]}" create --preserve-fds "$v" --bundle "$(config_for pf)" pf
		[ -n "$v" ] && expect_bad "kill $v" "${OCI[@]}" kill live "$v"
		expect_bad "update --cpu-shares $v" "${OCI[@]}" update --cpu-shares "$v" live
		expect_bad "update --cpu-period $v" "${OCI[@]}" update --cpu-period "$v" live
		expect_bad "update --blkio-weight $v" "${OCI[@]}" update --blkio-weight "$v" live
		[ "$v" != 1.0 ] && expect_bad "events --interval $v" "${OCI[@]}" events --stats --interval "$v" live
		expect_bad "run --result-fd $v" "$PSRUN" run --result-fd "$v" -- true
	done
	for v in "${never[@]}"; do
		[ "$v" = -1 ] && continue # unlimited
		expect_bad "update --pids-limit $v" "${OCI[@]}" update --pids-limit "$v" live
		expect_bad "update --cpu-quota $v" "${OCI[@]}" update --cpu-quota "$v" live
		expect_bad "update --memory $v" "${OCI[@]}" update --memory "$v" live
		expect_bad "update --memory-swap $v" "${OCI[@]}" update --memory-swap "$v" live
		[ "$v" != 1.0 ] && expect_bad "update --memory-reservation $v" "${OCI[@]}" update --memory-reservation "$v" live
	done
	# The policy's numeric keys take the same values through -o (1.0 and
	# big numbers are sizes, CPUs or durations there: not in this list).
	for k in pids_limit memory_limit disk_limit cpu_limit timeout idle_timeout lifetime \
		output_limit pty_limit inotify_limit inotify_watch_limit fanotify_limit \
		fanotify_mark_limit namespace_limit sigpending_limit msgqueue_limit; do
		for v in -1 0x3e8 1e3 65536x "" +1 18446744073709551616; do
			expect_bad "-o $k=$v" "$PSRUN" policy -o "$k=$v"
		done
	done
	expect_bad "update --memory 1 G" "${OCI[@]}" update --memory "1 G" live
	# Hostile --pid-file and --console-socket: a missing directory, a
	# directory, a file that is no socket, a listener that never accepts.
	expect_bad "--pid-file in a missing dir" "${OCI[@]}" create --pid-file "$WORK/no/such/dir/pid" --bundle "$(config_for pf)" pf
	expect_bad "--pid-file a directory" "${OCI[@]}" create --pid-file "$WORK" --bundle "$(config_for pf)" pf
	local tty_dir stuck
	tty_dir=$(config_for tty)
	sed -i 's/"terminal": false/"terminal": true/' "$tty_dir/config.json"
	expect_bad "--console-socket missing" "${OCI[@]}" create --console-socket "$WORK/no-such.sock" --bundle "$tty_dir" tty
	expect_bad "--console-socket a file" "${OCI[@]}" create --console-socket "$BUNDLE/config.json" --bundle "$tty_dir" tty
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(0)
fill = []
for _ in range(8):  # until the backlog is full
    c = socket.socket(socket.AF_UNIX)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
    except OSError:
        break
    fill.append(c)
open(sys.argv[1] + ".ready", "w").close()
time.sleep(30)
' "$WORK/stuck.sock" &
	stuck=$!
	for _ in $(seq 100); do [ -e "$WORK/stuck.sock.ready" ] && break; sleep 0.05; done
	expect_bad "--console-socket nobody accepts" "${OCI[@]}" create --console-socket "$WORK/stuck.sock" --bundle "$tty_dir" tty
	kill "$stuck" 2>/dev/null
	wait "$stuck" 2>/dev/null
	oci delete --force live >/dev/null 2>&1

	expect_bad "help bogus" "$PSRUN" help bogus
	expect_bad "version extra" "$PSRUN" version extra
	expect_bad "gc extra" "$PSRUN" gc extra
	expect_bad "gc --cgroup-parent missing" "$PSRUN" gc --cgroup-parent /psrun-soak-no-such-parent
	expect_bad "--rootless maybe" "$PSRUN" --rootless maybe list
	expect_bad "--log-format xml" "$PSRUN" --root "$ROOT" --log-format xml list
	expect_bad "--log in a missing dir" "$PSRUN" --root "$ROOT" --log "$WORK/no/such/dir/log" list
	expect_bad "pause -dash" "${OCI[@]}" pause -dash
	expect_bad "kill -dash" "${OCI[@]}" kill -dash
	expect_bad "run --policy without value" "$PSRUN" run --policy
	expect_bad "3000-char command" "$PSRUN" "$(head -c 3000 /dev/zero | tr '\0' x)"
	expect_bad "3000-char option" "$PSRUN" run "--$(head -c 3000 /dev/zero | tr '\0' x)" -- true
	expect_bad "1 G" "$PSRUN" run -o "memory_limit=1 G" -- true
	# A bare psrun prints its usage: not one line, but on stderr, non-zero.
	"$PSRUN" >"$WORK/out" 2>"$WORK/err" </dev/null
	if [ $? -ne 0 ] && [ ! -s "$WORK/out" ] && grep -q Usage "$WORK/err"; then ok; else bad "bare psrun"; fi

	# Policy documents: garbage, deep, huge, NUL bytes, long keys and values, tags.
	printf 'network: [none\n' >"$b/garbage.yaml"
	python3 -c "print('env: ' + '['*100000 + ']'*100000)" >"$b/deep.yaml"
	python3 -c "print('env:\n' + ''.join(' '*i + 'k:\n' for i in range(1, 1200)))" >"$b/deep-block.yaml"
	head -c 2000000 /dev/zero | tr '\0' '#' >"$b/huge.yaml"
	printf 'hostname: a\0b\n' >"$b/nul.yaml"
	python3 -c "print('k' * 100000 + ': 1')" >"$b/longkey.yaml"
	python3 -c "print('hostname: ' + 'h' * 100000)" >"$b/longvalue.yaml"
	printf 'timeout: !custom 5\n' >"$b/tag.yaml"
	printf '\xff\xfe\n' >"$b/binary.yaml"
	for f in garbage deep deep-block huge nul longkey longvalue tag binary; do
		expect_bad "policy $f.yaml" "$PSRUN" run --policy "$b/$f.yaml" -- true
		expect_bad "policy check $f.yaml" "$PSRUN" policy --policy "$b/$f.yaml"
	done
	# The same as JSON policies (read by the same parser).
	printf '{"network": ' >"$b/garbage.json"
	python3 -c "print('{\"env\": ' + '{\"a\": ' * 100000 + '1' + '}' * 100001)" >"$b/deep.json"
	printf '{"hostname": "a\\u0000b"}' >"$b/nul.json"
	printf '{"hostname": "a", "hostname": "b"}' >"$b/duplicate.json"
	for f in garbage deep nul duplicate; do
		expect_bad "policy $f.json" "$PSRUN" policy --policy "$b/$f.json"
	done
	expect_bad "-o deep" "$PSRUN" policy -o "env=$(python3 -c "print('{a: '*20000 + '1' + '}'*20000)")"
	expect_bad "-o long key" "$PSRUN" policy -o "$(head -c 100000 /dev/zero | tr '\0' k)=1"

	# OCI configs: garbage, deep, NUL bytes, oversize annotations, duplicates.
	local d
	for f in garbage deep nul annotations duplicate; do
		d=$WORK/c-$f
		mkdir -p "$d"
		ln -sfn "$BUNDLE/rootfs" "$d/rootfs"
	done
	printf '{"ociVersion": ' >"$WORK/c-garbage/config.json"
	python3 -c "print('{\"a\":' * 10000 + '1' + '}' * 10000)" >"$WORK/c-deep/config.json"
	printf '{"ociVersion": "1.2.0\0"}' >"$WORK/c-nul/config.json"
	python3 - "$BUNDLE/config.json" "$WORK/c-annotations/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["annotations"] = {"org.example/k%06d" % i: "v" * 100 for i in range(45000)}
json.dump(c, open(sys.argv[2], "w"))
EOF
	sed -e 's|"ociVersion"|"hostname": "a", "hostname"|' "$BUNDLE/config.json" >"$WORK/c-duplicate/config.json"
	for f in garbage deep nul annotations duplicate; do
		expect_bad "config.json $f" "${OCI[@]}" create --bundle "$WORK/c-$f" "bad-$f"
	done
	expect_bad "bad id" "${OCI[@]}" create --bundle "$BUNDLE" "../escape"
	expect_bad "long id" "${OCI[@]}" create --bundle "$BUNDLE" "$(head -c 3000 /dev/zero | tr '\0' i)"
	check_clean "bad inputs"
}

# ---- 2. psrun run ----

run_one() { # -> 0 when the sandbox ran and said hello
	local out
	out=$("$PSRUN" run -- sh -c 'echo hello' 2>"$WORK/run-err.$BASHPID") || return 1
	[ "$out" = hello ] && [ ! -s "$WORK/run-err.$BASHPID" ]
}

runs() {
	local i j failed=0 pids
	for ((i = 0; i < SEQ; i++)); do
		run_one || failed=$((failed + 1))
	done
	[ "$failed" -eq 0 ] && ok || bad "sequential runs: $failed of $SEQ failed"
	failed=0
	for ((i = 0; i < PAR_ROUNDS; i++)); do
		pids=()
		for ((j = 0; j < 8; j++)); do
			run_one &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	done
	[ "$failed" -eq 0 ] && ok || bad "8-way concurrent runs: $failed of $((PAR_ROUNDS * 8)) failed"
	rm -f "$WORK"/run-err.*
	check_clean "psrun run"
}

# ---- 3. OCI cycles ----

oci_cycle() { # id
	local id=$1 dir
	dir=$(config_for "$id")
	oci create --bundle "$dir" "$id" </dev/null >/dev/null 2>&1 || return 1
	oci start "$id" >/dev/null 2>&1 || return 1
	[ "$(oci state "$id" 2>/dev/null | sed -n 's/.*"status": "\([a-z]*\)".*/\1/p')" = running ] || return 1
	oci kill "$id" KILL >/dev/null 2>&1 || return 1
	for _ in $(seq 50); do
		oci state "$id" 2>/dev/null | grep -q '"status": "stopped"' && break
		sleep 0.05
	done
	oci delete "$id" >/dev/null 2>&1
}

oci_cycles() {
	local i j failed=0 pids
	for ((i = 0; i < OCI_SEQ; i++)); do
		oci_cycle "seq$i" || failed=$((failed + 1))
	done
	[ "$failed" -eq 0 ] && ok || bad "sequential OCI cycles: $failed of $OCI_SEQ failed"
	failed=0
	for ((i = 0; i < OCI_PAR_ROUNDS; i++)); do
		pids=()
		for ((j = 0; j < 8; j++)); do
			oci_cycle "par$i-$j" &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	done
	[ "$failed" -eq 0 ] && ok || bad "8-way OCI cycles: $failed of $((OCI_PAR_ROUNDS * 8)) failed"
	check_clean "OCI cycles"
}

# ---- 4. named kill points ----

CREATE_STAGES="create:temp create:state create:planned create:cgroups create:cloned create:pid create:released create:ready"
RUN_STAGES="run:cgroup run:cloned run:confined run:released"

kill_points() {
	local stage n=0 status dir
	for stage in $CREATE_STAGES; do
		for how in delete gc; do
			n=$((n + 1))
			dir=$(config_for "k$n")
			PSRUN_TEST_KILL_AT=$stage oci create --bundle "$dir" "k$n" </dev/null >/dev/null 2>&1
			status=$?
			[ "$status" -eq 137 ] || bad "$stage: create exited $status, not killed"
			if [ "$how" = delete ]; then
				oci delete --force "k$n" >/dev/null 2>"$WORK/err" || bad "$stage: delete --force: $(cat "$WORK/err")"
			else
				oci gc >/dev/null 2>"$WORK/err" || bad "$stage: gc: $(cat "$WORK/err")"
			fi
			check_clean "create killed at $stage, then $how"
		done
	done
	for stage in $RUN_STAGES; do
		# (The group's stderr: bash's own "Killed" line.)
		{ PSRUN_TEST_KILL_AT=$stage "$PSRUN" run -- sleep 1000 </dev/null >/dev/null 2>&1; } 2>/dev/null
		status=$?
		[ "$status" -eq 137 ] || bad "$stage: run exited $status, not killed"
		"$PSRUN" gc >/dev/null 2>"$WORK/err" || bad "$stage: gc: $(cat "$WORK/err")"
		check_clean "run killed at $stage, then gc"
	done
}

# ---- 5. random kills ----

random_kills() {
	local i pid dir delay
	for ((i = 0; i < RANDOM_KILLS; i++)); do
		delay=$(printf '0.%03d' $((RANDOM % 120)))
		if ((i % 2)); then
			"$PSRUN" run -- sleep 1000 </dev/null >/dev/null 2>&1 &
			pid=$!
			sleep "$delay"
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			"$PSRUN" gc >/dev/null 2>&1
		else
			dir=$(config_for "r$i")
			"${OCI[@]}" create --bundle "$dir" "r$i" </dev/null >/dev/null 2>&1 &
			pid=$!
			sleep "$delay"
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			if ((i % 4)); then
				oci delete --force "r$i" >/dev/null 2>&1
			else
				oci gc >/dev/null 2>&1
				# gc leaves a container whose create finished: its owner's.
				oci delete --force "r$i" >/dev/null 2>&1
			fi
		fi
	done
	check_clean "$RANDOM_KILLS random SIGKILLs of run and create"
}

start=$SECONDS
for phase in bad_inputs runs oci_cycles kill_points random_kills; do
	t=$SECONDS
	before=$fail
	$phase
	echo "soak: $phase: $((SECONDS - t)) s$([ "$fail" -gt "$before" ] && echo ", $((fail - before)) failed")"
done
echo "soak: $MODE took $((SECONDS - start)) s"
echo "soak: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
