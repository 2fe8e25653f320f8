#!/bin/bash
# SPDX-License-Identifier: MIT
# End-to-end checks of psrun as an OCI runtime under real clients: a
# test-owned dockerd (docker.sh), a test-owned containerd driven by ctr
# (containerd.sh), both with the runtime under test in place of runc, and
# podman with the runtime as its --runtime (podman.sh).
#
# Usage: tests/clients/run.sh [BUILD]      (BUILD defaults to "build")
#   PSRUN_RUNTIME=PATH  runtime under test (default BUILD/psrun), e.g.
#                       /usr/sbin/runc to check the harness itself
#   CLIENTS_TRACE=DIR   record every call the clients make to the runtime
#                       (argv, config.json, exec process, update resources)
#                       into DIR, through trace-runtime.py
#   CLIENTS_BUDGET=S    seconds the docker and containerd checks may take
#                       in all (default 180)
#   CLIENTS_PODMAN_BUDGET=S  seconds the podman checks may take (default 60)
#   CLIENTS_STAGES="..."  the stages to run (default "docker containerd podman")
#   CLIENTS_KEEP=1      keep the work directory (logs) after the run
#   CLIENTS_NO_OVERLAY=1  use docker's vfs and containerd's native
#                       snapshotter even where overlay works
#
# Prints "ok - NAME", "not ok - NAME: WHY" (details on '#' lines after it)
# or "skip - NAME: WHY" per check, then "clients: N passed, N failed,
# N skipped"; exits nonzero iff a check failed. Needs root. Everything it
# starts (daemons, shims, containers), mounts or creates (cgroups, files)
# is taken back on exit, on failure too.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# shellcheck source=containerd.sh
. "$HERE/containerd.sh"
# shellcheck source=docker.sh
. "$HERE/docker.sh"
# shellcheck source=podman.sh
. "$HERE/podman.sh"

summary() {
	echo "clients: $PASSED passed, $FAILED failed, $SKIPPED skipped"
}

RUNTIME=${PSRUN_RUNTIME:-$BUILD/psrun}
if [ "$(id -u)" -ne 0 ]; then
	report skip "clients" "needs root (dockerd, containerd, cgroups, mounts)"
	summary
	exit 0
fi
if [ ! -x "$RUNTIME" ] || [ -d "$RUNTIME" ]; then
	report "not ok" "runtime under test" "$RUNTIME is not an executable (build it, or set PSRUN_RUNTIME)"
	summary
	exit 1
fi
RUNTIME=$(realpath "$RUNTIME")

# --- clean-up ----------------------------------------------------------------
cleanup() {
	[ -n "$CLEANED" ] && return 0
	CLEANED=1
	local pids d
	# Clean-up goes through to the end whatever fails on the way.
	set +e
	docker_cleanup || true
	containerd_cleanup || true
	podman_cleanup || true
	# Whatever of this run is still alive: shims, daemons (their command
	# lines name the work directory), processes left in its cgroups.
	# shellcheck disable=SC2046
	pids=$(with_descendants $(pids_mentioning "$WORK"))
	# shellcheck disable=SC2086
	[ -z "$pids" ] || stop_pids 5 $pids
	pids=$(pids_rooted_below "$WORK"; [ -z "$CG_PARENT" ] || cgroup_pids_below "$CG_PARENT")
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	unmount_below "$WORK" || echo "# clean-up: still mounted under $WORK: $(mounts_below "$WORK" | tr '\n' ' ')" >&2
	if [ -z "${CLIENTS_KEEP:-}" ]; then
		rm -rf --one-file-system "$WORK" 2>/dev/null || rm -rf --one-file-system "$WORK" || true
	fi
	# This run's subtree goes whole; the ancestors it had to create one by
	# one, deepest first, each only if empty: a concurrent run (another
	# checkout, CI) may be using them.
	if [ -n "$CG_PARENT" ]; then
		for d in $(cgroup_mounts); do
			rmdir_tree "$d$CG_PARENT"
		done
	fi
	for d in "${CG_ANCESTORS[@]}"; do
		rmdir "$d" 2>/dev/null
	done
	tidy_host_paths
	set -e
	return 0
}

# The last check: nothing of the run is left on the host.
check_nothing_left() {
	local left d
	left=$(pids_mentioning "$WORK"; pids_rooted_below "$WORK")
	[ -z "$left" ] || fail "processes left: $(xargs -r ps -o pid=,args= -p <<<"$left" | tr '\n' '|')"
	left=$(mounts_below "$WORK")
	[ -z "$left" ] || fail "still mounted: $(tr '\n' ' ' <<<"$left")"
	if [ -z "${CLIENTS_KEEP:-}" ] && [ -e "$WORK" ]; then
		fail "$WORK not removed"
	fi
	for d in $(cgroup_mounts); do
		[ ! -d "$d$CG_PARENT" ] ||
			fail "cgroup left: $d$CG_PARENT ($(find "$d$CG_PARENT" -type d | head -n 5 | tr '\n' ' '))"
	done
	for d in "${CG_ANCESTORS[@]}"; do
		if [ -d "$d" ] && [ -z "$(find "$d" -mindepth 1 -maxdepth 1 -type d)" ]; then
			fail "empty cgroup left: $d"
		fi
	done
	for d in $HOST_PATHS_NEW; do
		[ ! -e "$d" ] || fail "left on the host: $d ($(find "$d" -mindepth 1 | head -n 5 | tr '\n' ' '))"
	done
	[ "$(ip netns list 2>/dev/null || true)" = "$NETNS_BEFORE" ] || fail "ip netns list changed: $(ip netns list 2>&1 | tr '\n' ' ')"
	left=$(comm -13 <(echo "$SHIM_TMP_BEFORE") <(shim_tmp_files))
	[ -z "$left" ] || fail "shim files left in /tmp: $(tr '\n' ' ' <<<"$left")"
}

on_exit() {
	local rc=$?
	if [ -z "$CLEANED" ]; then
		echo "# interrupted (status $rc): cleaning up" >&2
		cleanup
	fi
	rm -rf "$SCRATCH"
}
WORK=$(mktemp -d /tmp/psrun-clients.XXXXXX)
# Check output goes apart from WORK, which the last check sees removed.
SCRATCH=$(mktemp -d /tmp/psrun-clients-out.XXXXXX)
CLEANED=
CG_PARENT=
CG_ANCESTORS=()
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- cgroups -----------------------------------------------------------------
# The containers go below this process's own cgroup in every hierarchy. With
# v1 each hierarchy has its own path, and --cgroup-parent / ctr --cgroup give
# one path for all: take the deepest, which must extend all the others.
cgroup_base() {
	local deepest=/ path
	while IFS=: read -r _ _ path; do
		((${#path} > ${#deepest})) && deepest=$path
	done </proc/self/cgroup
	while IFS=: read -r _ ctrl path; do
		case "$deepest/" in
		"${path%/}/"*) ;;
		*) echo "# cgroups: $ctrl is at $path, not a prefix of $deepest: containers go below $deepest there" >&2 ;;
		esac
	done </proc/self/cgroup
	echo "${deepest%/}"
}
CG_PARENT=$(cgroup_base)/psrun-clients-${WORK##*.}
# Per hierarchy, the directories above CG_PARENT that do not exist yet (with
# v1, /process_api/<hash> exists only in the memory hierarchy): the runtime
# creates them, clean-up removes them again if nobody else uses them.
for m in $(cgroup_mounts); do
	p=
	IFS=/ read -ra parts <<<"${CG_PARENT%/*}"
	for part in "${parts[@]}"; do
		[ -n "$part" ] || continue
		p=$p/$part
		[ -d "$m$p" ] || CG_ANCESTORS=("$m$p" "${CG_ANCESTORS[@]}")
	done
done

note_host_paths
NETNS_BEFORE=$(ip netns list 2>/dev/null || true)
# The runc shim's temporary files (exec process specs, console sockets).
shim_tmp_files() {
	find /tmp -maxdepth 1 \( -name 'runc-process*' -o -name 'pty[0-9]*' \) 2>/dev/null | sort
}
SHIM_TMP_BEFORE=$(shim_tmp_files)

# --- the runtime the clients call -----------------------------------------------
RUNTIME_FOR_CLIENTS=$RUNTIME
if [ -n "${CLIENTS_TRACE:-}" ]; then
	mkdir -p "$CLIENTS_TRACE"
	CLIENTS_TRACE=$(realpath "$CLIENTS_TRACE")
	RUNTIME_FOR_CLIENTS=$WORK/runtime-trace
	# The shims do not pass their environment on: the paths are baked in.
	cat >"$RUNTIME_FOR_CLIENTS" <<EOF
#!/bin/sh
TRACE_DIR='$CLIENTS_TRACE' TRACE_RUNTIME='$RUNTIME' exec '$(command -v python3)' '$HERE/trace-runtime.py' "\$@"
EOF
	chmod 755 "$RUNTIME_FOR_CLIENTS"
	# For trace-summary.py, which replaces these by $WORK and $CG_PARENT.
	printf '# work %s\n# cgroup-parent %s\n' "$WORK" "$CG_PARENT" >>"$CLIENTS_TRACE/invocations.log"
fi

# --- shared set-up -------------------------------------------------------------
echo "# runtime under test: $RUNTIME$([ "$RUNTIME_FOR_CLIENTS" = "$RUNTIME" ] || echo " (traced into $CLIENTS_TRACE)")"
echo "# work directory: $WORK, cgroup parent: $CG_PARENT"

# overlay2 / overlayfs where the kernel and the backing file system allow it,
# else the copying drivers (vfs / native): slower, same checks.
STORAGE_OVERLAY=0
probe_overlay() {
	local d=$WORK/overlay-probe
	mkdir -p "$d/lower" "$d/upper" "$d/work" "$d/merged"
	mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null || return 1
	umount "$d/merged"
	rm -rf "$d"
}
[ -n "${CLIENTS_NO_OVERLAY:-}" ] || ! probe_overlay || STORAGE_OVERLAY=1

stage_wanted() {
	[[ " ${CLIENTS_STAGES:-docker containerd podman} " == *" $1 "* ]]
}

build_images() {
	python3 "$HERE/mkimage.py" rootfs /bin/busybox "$WORK/image-rootfs.tar" &&
		python3 "$HERE/mkimage.py" oci "$WORK/image-rootfs.tar" "$CTR_IMAGE" "$WORK/image-oci.tar"
}
if step "test image from /bin/busybox" build_images; then
	if stage_wanted docker; then
		started=$SECONDS
		DEADLINE=$((SECONDS + BUDGET * 2 / 3))
		docker_stage
		echo "# docker: $((SECONDS - started)) s (dockerd stopped in ${DK_STOP_SECONDS:-?} s)"
	fi
	if stage_wanted containerd; then
		started=$SECONDS
		DEADLINE=$((SECONDS + BUDGET / 3))
		containerd_stage
		echo "# containerd: $((SECONDS - started)) s"
	fi
	# podman has no daemon to start: a budget of its own, at most 60 s.
	if stage_wanted podman; then
		started=$SECONDS
		DEADLINE=$((SECONDS + ${CLIENTS_PODMAN_BUDGET:-60}))
		podman_stage
		echo "# podman: $((SECONDS - started)) s"
	fi
fi

cleanup
DEADLINE=$((SECONDS + 30))
check "clean-up leaves nothing behind" check_nothing_left
slowest_checks 8
summary
[ "$FAILED" -eq 0 ]
