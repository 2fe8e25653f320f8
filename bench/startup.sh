#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/startup.sh PSRUN
#
# Start-up latency of `psrun run -- true` side by side with the tools a user
# would pick instead, in one interleaved run so that machine noise hits every
# tool alike:
#
#   psrun    psrun run -- true                    (the default sandbox)
#   unshare  unshare --fork --pid --mount --net --uts --ipc --cgroup true
#            (the floor: the namespaces alone; no new root filesystem, no
#            limits, no policy)
#   bwrap    bwrap --unshare-all on a read-only root shaped like psrun's
#   crun     crun run on an OCI bundle shaped like psrun's sandbox
#   runc     runc run on the same bundle
#   psrun-oci  psrun as an OCI runtime (`psrun run --bundle`) on the same
#            bundle: what Docker or containerd would pay with psrun
#   psrun-gvisor  psrun run -o backend=gvisor -- true: the same sandbox under
#            gVisor (runsc inside psrun's cgroups and namespaces)
#   runsc    runsc run on the same bundle (--ignore-cgroups --network=none,
#            on the platform psrun chose): gVisor alone
#   spawn    /usr/bin/true: what the harness itself costs per run
#
# Each round runs every tool once, in an order that rotates from round to
# round; the first BENCH_WARMUP rounds are thrown away. Per tool it prints the
# median, p90 and min wall time, "net" (median minus the spawn row's median:
# the tool's own cost beyond one fork+exec), the peak RSS (GNU time's %M: the
# largest process of the tree), and psrun's ratio to it (of the medians);
# then psrun against the targets (<= 1.3x unshare, <= 1.0x bwrap) as
# PASS/MISS. A miss is a finding, not a failure: the exit status is nonzero
# only when a tool fails to run.
#
# Environment:
#   BENCH_RUNS=200          measured rounds
#   BENCH_WARMUP=10         rounds thrown away first
#   BENCH_MAX_SECONDS=150   stop measuring after this long (fewer rounds)
#   BENCH_TOOLS="psrun unshare bwrap crun runc psrun-oci psrun-gvisor runsc"
#   BENCH_OUT=DIR           keep raw samples (samples.csv), the table
#                           (summary.txt) and the OCI config there
#   BENCH_HYPERFINE=1       afterwards, a non-interleaved cross-check with
#                           hyperfine (exported to BENCH_OUT/hyperfine.json)
#   BENCH_NO_INSTALL=1      don't try to install bwrap/crun/runc/hyperfine
#   PSRUN_BENCH_ARGS=...    extra arguments for `psrun run` (before --)
# shellcheck disable=SC2317 # the run_* functions are called as run_"$tool"
set -u
export LC_ALL=C

usage() {
	echo "usage: $0 PATH/TO/psrun" >&2
	exit 2
}
[ $# -eq 1 ] || usage
PSRUN=$1
case "$PSRUN" in /*) ;; *) PSRUN=$PWD/$PSRUN ;; esac
[ -x "$PSRUN" ] || {
	echo "bench: $PSRUN is not an executable" >&2
	exit 2
}

RUNS=${BENCH_RUNS:-200}
WARMUP=${BENCH_WARMUP:-10}
BUDGET=${BENCH_MAX_SECONDS:-150}
TOOLS=${BENCH_TOOLS:-"psrun unshare bwrap crun runc psrun-oci psrun-gvisor runsc"}
OUT=${BENCH_OUT:-}
read -r -a PSRUN_ARGS <<<"${PSRUN_BENCH_ARGS:-}"
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)

# The sandbox's ids outside, as psrun maps them (runtime/run.h).
ID_BASE=1879048192 # 0x70000000
ID_COUNT=65536

log() { echo "bench: $*" >&2; }

# ---- tools ----

if [ -z "${BENCH_NO_INSTALL:-}" ]; then
	need=""
	for t in bwrap crun runc hyperfine runsc; do
		command -v "$t" >/dev/null 2>&1 || need="$need $t"
	done
	if [ -n "$need" ] && [ -x "$SRCDIR/scripts/install-deps.sh" ]; then
		log "installing what is missing:$need"
		PSRUN_EXTRA_PACKAGES="bubblewrap crun runc hyperfine runsc" "$SRCDIR/scripts/install-deps.sh" ||
			log "could not install them; measuring without"
	fi
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/psrun-bench.XXXXXX")
chmod 0755 "$TMP" # the bundle's rootfs is read by a mapped, unprivileged uid
HELPER_PID=""
ID_PREFIX="psrun-bench-$$"

cleanup() {
	local rt id
	for rt in crun runc; do
		command -v "$rt" >/dev/null 2>&1 || continue
		for id in $("$rt" list -q 2>/dev/null | grep "^$ID_PREFIX-"); do
			"$rt" delete -f "$id" >/dev/null 2>&1
		done
	done
	if command -v runsc >/dev/null 2>&1 && [ -d "$TMP/runsc-state" ]; then
		for id in $(runsc --root "$TMP/runsc-state" list -q 2>/dev/null); do
			runsc --root "$TMP/runsc-state" delete -f "$id" >/dev/null 2>&1
		done
	fi
	[ -n "$HELPER_PID" ] && kill "$HELPER_PID" 2>/dev/null && wait "$HELPER_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

has() {
	case " $TOOLS " in *" $1 "*) command -v "$2" >/dev/null 2>&1 ;; *) return 1 ;; esac
}

# psrun's synthesized /etc files (rootfs/etc.c), for bwrap and the bundle.
ETC=$TMP/etc
mkdir -p "$ETC"
printf 'root:x:0:0:root:/workspace:/bin/sh\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$ETC/passwd"
printf 'root:x:0:\ntty:x:5:\nsandbox:x:1000:\nnogroup:x:65534:\n' >"$ETC/group"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandbox\n' >"$ETC/hosts"
printf 'sandbox\n' >"$ETC/hostname"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$ETC/nsswitch.conf"
printf '# no DNS in this sandbox\n' >"$ETC/resolv.conf"
ETC_FILES="passwd group hosts hostname nsswitch.conf resolv.conf"
# Host files psrun carries over read-only (rootfs/etc.c).
HOST_ETC="/etc/ld.so.cache /etc/ld.so.conf /etc/ld.so.conf.d /etc/alternatives /etc/ssl/certs
/etc/localtime /etc/os-release /etc/protocols /etc/services /etc/mime.types"
SYSTEM_DIRS="/usr /bin /sbin /lib /lib32 /lib64 /libx32"

# bwrap: psrun's root, built the bwrap way. What bwrap does not do at all
# (cgroups and limits, seccomp, Landlock, masked /proc paths) it skips.
BWRAP=(bwrap --unshare-all --die-with-parent --new-session --uid 1000 --gid 1000
	--hostname sandbox --clearenv --setenv PATH /usr/local/bin:/usr/bin:/bin
	--setenv HOME /workspace)
for d in $SYSTEM_DIRS $HOST_ETC; do
	if [ -L "$d" ]; then
		BWRAP+=(--symlink "$(readlink "$d")" "$d")
	elif [ -e "$d" ]; then
		BWRAP+=(--ro-bind "$d" "$d")
	fi
done
fd=10
for f in $ETC_FILES; do
	BWRAP+=(--perms 0644 --file "$fd" "/etc/$f")
	fd=$((fd + 1))
done
BWRAP+=(--tmpfs /workspace --tmpfs /tmp --proc /proc --dev /dev --chdir /workspace
	--remount-ro / true)

# The OCI bundle: the same /usr, bind-mounted read-only into a root of
# symlinks and psrun's /etc files, so every runtime execs the same dynamically
# linked /usr/bin/true. The spec's own defaults stay where psrun has the
# equivalent (masked and read-only /proc paths, /dev with pts and shm); added:
# a user namespace mapped like psrun's, uid 1000, no capabilities, the same
# limits, a seccomp allowlist and tmpfs /tmp and /workspace.
ROOTFS=$TMP/rootfs
make_rootfs() {
	local d f
	mkdir -p "$ROOTFS/etc" "$ROOTFS/proc" "$ROOTFS/dev" "$ROOTFS/tmp" "$ROOTFS/workspace"
	for d in $SYSTEM_DIRS; do
		if [ -L "$d" ]; then
			ln -s "$(readlink "$d")" "$ROOTFS$d"
		elif [ -d "$d" ]; then
			mkdir -p "$ROOTFS$d"
		fi
	done
	for f in $ETC_FILES; do cp "$ETC/$f" "$ROOTFS/etc/"; done
	if [ -f /etc/ld.so.cache ]; then cp /etc/ld.so.cache "$ROOTFS/etc/"; fi
}
# $TMP/<runtime>/config.json from `<runtime> spec`, edited.
make_config() {
	local rt=$1
	mkdir -p "$TMP/$rt"
	local spec=("$rt" spec)
	[ "$rt" = psrun-oci ] && spec=("$PSRUN" spec)
	(cd "$TMP/$rt" && "${spec[@]}") || return 1
	python3 - "$TMP/$rt/config.json" "$ROOTFS" "$SYSTEM_DIRS" "$ID_BASE" "$ID_COUNT" <<'EOF' || return 1
import json, os, sys
path, rootfs, system_dirs = sys.argv[1], sys.argv[2], sys.argv[3].split()
id_base, id_count = int(sys.argv[4]), int(sys.argv[5])
c = json.load(open(path))
p = c["process"]
p.update(terminal=False, args=["true"], cwd="/workspace", user={"uid": 1000, "gid": 1000},
         env=["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/workspace"], noNewPrivileges=True)
p["capabilities"] = {k: [] for k in ("bounding", "effective", "permitted", "inheritable", "ambient")}
c["root"] = {"path": rootfs, "readonly": True}
c["hostname"] = "sandbox"
# psrun has no /sys and no mqueue.
mounts = [m for m in c["mounts"] if m["destination"] not in ("/sys", "/sys/fs/cgroup", "/dev/mqueue")]
for d in system_dirs:
    if os.path.isdir(d) and not os.path.islink(d):
        mounts.append({"destination": d, "type": "bind", "source": d,
                       "options": ["rbind", "ro", "nosuid", "nodev"]})
mounts.append({"destination": "/workspace", "type": "tmpfs", "source": "tmpfs",
               "options": ["nosuid", "nodev", "mode=0755", "size=1g", "uid=1000", "gid=1000"]})
mounts.append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
               "options": ["nosuid", "nodev", "mode=1777", "size=128m"]})
c["mounts"] = mounts
lx = c["linux"]
lx["namespaces"] = [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount", "cgroup", "user")]
lx["uidMappings"] = [{"containerID": 0, "hostID": id_base, "size": id_count}]
lx["gidMappings"] = [{"containerID": 0, "hostID": id_base, "size": id_count}]
lx["resources"] = {"devices": [{"allow": False, "access": "rwm"}],
                   "memory": {"limit": 512 << 20, "swap": 512 << 20},
                   "pids": {"limit": 257}, "cpu": {"quota": 100000, "period": 100000}}
lx["maskedPaths"] = [m for m in lx.get("maskedPaths", []) if not m.startswith("/sys")]
# An allowlist of the size a default container profile has: the ordinary
# syscalls of x86-64 programs; mount, ptrace, bpf, keyctl, namespaces,
# modules, io_uring and the like fail with EPERM.
allowed = """
read write open close stat fstat lstat poll lseek mmap mprotect munmap brk rt_sigaction
rt_sigprocmask rt_sigreturn ioctl pread64 pwrite64 readv writev access pipe select
sched_yield mremap msync mincore madvise shmget shmat shmctl dup dup2 pause nanosleep
getitimer alarm setitimer getpid sendfile socket connect accept sendto recvfrom sendmsg
recvmsg shutdown bind listen getsockname getpeername socketpair setsockopt getsockopt
clone fork vfork execve exit wait4 kill uname semget semop semctl shmdt msgget msgsnd
msgrcv msgctl fcntl flock fsync fdatasync truncate ftruncate getdents getcwd chdir fchdir
rename mkdir rmdir creat link unlink symlink readlink chmod fchmod chown fchown lchown
umask gettimeofday getrlimit getrusage sysinfo times getuid getgid setuid setgid geteuid
getegid setpgid getppid getpgrp setsid setreuid setregid getgroups setgroups setresuid
getresuid setresgid getresgid getpgid setfsuid setfsgid getsid capget capset
rt_sigpending rt_sigtimedwait rt_sigqueueinfo rt_sigsuspend sigaltstack utime
personality statfs fstatfs getpriority setpriority sched_setparam sched_getparam
sched_setscheduler sched_getscheduler sched_get_priority_max sched_get_priority_min
sched_rr_get_interval mlock munlock mlockall munlockall prctl arch_prctl setrlimit sync
gettid readahead setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr listxattr
llistxattr flistxattr removexattr lremovexattr fremovexattr tkill time futex
sched_setaffinity sched_getaffinity io_setup io_destroy io_getevents io_submit io_cancel
epoll_create getdents64 set_tid_address restart_syscall semtimedop fadvise64
timer_create timer_settime timer_gettime timer_getoverrun timer_delete clock_gettime
clock_getres clock_nanosleep exit_group epoll_wait epoll_ctl tgkill utimes mbind
set_mempolicy get_mempolicy mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify
mq_getsetattr waitid inotify_init inotify_add_watch inotify_rm_watch openat mkdirat
mknodat fchownat futimesat newfstatat unlinkat renameat linkat symlinkat readlinkat
fchmodat faccessat pselect6 ppoll set_robust_list get_robust_list splice tee
sync_file_range vmsplice utimensat epoll_pwait signalfd timerfd_create eventfd fallocate
timerfd_settime timerfd_gettime accept4 signalfd4 eventfd2 epoll_create1 dup3 pipe2
inotify_init1 preadv pwritev rt_tgsigqueueinfo recvmmsg prlimit64 syncfs sendmmsg getcpu
sched_setattr sched_getattr renameat2 getrandom memfd_create execveat membarrier mlock2
copy_file_range preadv2 pwritev2 pkey_mprotect pkey_alloc pkey_free statx rseq
pidfd_send_signal pidfd_open close_range openat2 pidfd_getfd faccessat2 epoll_pwait2
futex_waitv
""".split()
lx["seccomp"] = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
                 "architectures": ["SCMP_ARCH_X86_64"],
                 "syscalls": [{"names": allowed, "action": "SCMP_ACT_ALLOW"},
                              {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]}
json.dump(c, open(path, "w"), indent=1)
EOF
	if [ -n "$OUT" ]; then cp "$TMP/$rt/config.json" "$OUT/config-$rt.json"; fi
}

# One function per tool; the harness times the call. WRAP is empty while
# timing and GNU time for the peak-RSS runs. Output goes nowhere; errors go
# to a file shown if the run fails.
WRAP=()
SEQ=0
CRUN_PREFIX=()
run_spawn() { "${WRAP[@]}" /usr/bin/true; }
run_psrun() { "${WRAP[@]}" "$PSRUN" run "${PSRUN_ARGS[@]}" -- true; }
run_unshare() { "${WRAP[@]}" unshare --fork --pid --mount --net --uts --ipc --cgroup true; }
run_bwrap() {
	"${WRAP[@]}" "${BWRAP[@]}" 10<"$ETC/passwd" 11<"$ETC/group" 12<"$ETC/hosts" \
		13<"$ETC/hostname" 14<"$ETC/nsswitch.conf" 15<"$ETC/resolv.conf"
}
run_crun() {
	SEQ=$((SEQ + 1))
	"${WRAP[@]}" "${CRUN_PREFIX[@]}" crun run --bundle "$TMP/crun" "$ID_PREFIX-$SEQ"
}
run_runc() {
	SEQ=$((SEQ + 1))
	"${WRAP[@]}" runc run --bundle "$TMP/runc" "$ID_PREFIX-$SEQ"
}
run_psrun-oci() {
	SEQ=$((SEQ + 1))
	"${WRAP[@]}" "$PSRUN" --root "$TMP/psrun-oci-state" run --bundle "$TMP/psrun-oci" "$ID_PREFIX-$SEQ"
}
run_nsenter() { "${WRAP[@]}" "${CRUN_PREFIX[@]}" /usr/bin/true; }
run_psrun-gvisor() { "${WRAP[@]}" "$PSRUN" run -o backend=gvisor "${PSRUN_ARGS[@]}" -- true; }
# runsc on its own: no cgroups of its own (as under psrun), no network.
RUNSC_PLATFORM=ptrace
run_runsc() {
	SEQ=$((SEQ + 1))
	"${WRAP[@]}" runsc --root "$TMP/runsc-state" --ignore-cgroups --network=none \
		--platform="$RUNSC_PLATFORM" run --bundle "$TMP/runsc" "$ID_PREFIX-$SEQ"
}

if [ -n "$OUT" ]; then mkdir -p "$OUT"; fi
ERRORS=0
NOTES=()
declare -A FAILS FIRST_ERROR SAMPLES

fail() { # tool message
	FAILS[$1]=$((${FAILS[$1]:-0} + 1))
	[ -z "${FIRST_ERROR[$1]:-}" ] && FIRST_ERROR[$1]=$2
	ERRORS=1
}

# Time a copy: a rebuild of the tree's binary in the middle of the run must
# not make psrun fail or change under the measurement.
# If it is being rebuilt right now, wait for it (a minute at most).
for _ in $(seq 30); do
	if cp "$PSRUN" "$TMP/psrun" 2>/dev/null && "$TMP/psrun" version >/dev/null 2>&1; then
		PSRUN=$TMP/psrun
		break
	fi
	sleep 2
done

ACTIVE=(spawn)
has psrun "$PSRUN" && ACTIVE+=(psrun)
has unshare unshare && ACTIVE+=(unshare)
has bwrap bwrap && ACTIVE+=(bwrap)
if has psrun-gvisor runsc; then
	ACTIVE+=(psrun-gvisor)
	# runsc alone runs on the platform psrun detected (its cache names it).
	"$PSRUN" run -o backend=gvisor -- true >/dev/null 2>&1
	p=$(awk '$2 == "ok" { print $1; exit }' /run/psrun-gvisor/platforms 2>/dev/null)
	[ -n "$p" ] && RUNSC_PLATFORM=$p
fi
if has crun crun || has runc runc || has psrun-oci "$PSRUN" || has runsc runsc; then
	if ! command -v python3 >/dev/null 2>&1; then
		log "python3 is needed to write the OCI bundle; crun and runc are skipped"
	else
		make_rootfs
		for rt in crun runc psrun-oci runsc; do
			if [ "$rt" = psrun-oci ]; then
				has psrun-oci "$PSRUN" || continue
			else
				has "$rt" "$rt" || continue
			fi
			ACTIVE+=("$rt")
			make_config "$rt" >/dev/null 2>"$TMP/err" ||
				fail "$rt" "writing the bundle: $(head -c 400 "$TMP/err")"
		done
	fi
fi

# crun 1.8 refuses a hybrid host whose cgroup2 hierarchy owns a controller
# (hugetlb, typically): "cgroups in hybrid mode not supported". There it runs
# in a mount namespace of its own without the cgroup2 mount (so on cgroup v1
# alone), entered with nsenter; the nsenter row measures that wrapper.
crun_hybrid_workaround() {
	unshare --mount --propagation private sleep 100000 &
	HELPER_PID=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(readlink "/proc/$HELPER_PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.05
	done
	nsenter -t "$HELPER_PID" -m umount /sys/fs/cgroup/unified || return 1
	CRUN_PREFIX=(nsenter -t "$HELPER_PID" -m)
	NOTES+=("crun runs through nsenter in a mount namespace without the cgroup2 mount: $(crun --version | head -1) refuses this hybrid host (its cgroup2 owns a controller), so it uses cgroup v1 alone; the nsenter row is the wrapper's own cost")
	ACTIVE+=(nsenter)
}

# A sanity run of each tool: one that can't run at all is reported, not timed.
for t in "${ACTIVE[@]}"; do
	[ -n "${FAILS[$t]:-}" ] && continue
	run_"$t" >/dev/null 2>"$TMP/err" && continue
	if [ "$t" = crun ] && grep -q "hybrid mode not supported" "$TMP/err" &&
		crun_hybrid_workaround 2>>"$TMP/err" && run_crun >/dev/null 2>"$TMP/err"; then
		continue
	fi
	log "$t fails: $(head -c 400 "$TMP/err")"
	fail "$t" "$(head -c 400 "$TMP/err")"
done
RUNNING=()
for t in "${ACTIVE[@]}"; do
	[ -z "${FAILS[$t]:-}" ] && RUNNING+=("$t")
done

# ---- the interleaved loop ----

n=${#RUNNING[@]}
log "timing ${RUNNING[*]}: $WARMUP warm-up + $RUNS rounds, at most ${BUDGET}s"
start=$SECONDS
rounds=0
for ((r = 0; r < WARMUP + RUNS; r++)); do
	if ((SECONDS - start > BUDGET)); then
		log "time budget of ${BUDGET}s used up after $rounds measured rounds"
		break
	fi
	for ((k = 0; k < n; k++)); do
		t=${RUNNING[$(((r + k) % n))]} # the order rotates every round
		((${FAILS[$t]:-0} >= 5)) && continue
		t0=$EPOCHREALTIME
		run_"$t" >/dev/null 2>"$TMP/err"
		rc=$?
		t1=$EPOCHREALTIME
		if ((rc != 0)); then
			fail "$t" "exit $rc: $(head -c 400 "$TMP/err")"
			continue
		fi
		((r < WARMUP)) || SAMPLES[$t]+="$((${t1/./} - ${t0/./})) "
	done
	((r < WARMUP)) || rounds=$((rounds + 1))
done
elapsed=$((SECONDS - start))

# ---- peak RSS: a few runs under GNU time, the largest ----

declare -A RSS
if [ -x /usr/bin/time ]; then
	for t in "${RUNNING[@]}"; do
		max=0
		for _ in 1 2 3; do
			WRAP=(/usr/bin/time -f %M -o "$TMP/rss")
			run_"$t" >/dev/null 2>&1
			WRAP=()
			m=$(tail -1 "$TMP/rss" 2>/dev/null)
			[[ "$m" =~ ^[0-9]+$ ]] && ((m > max)) && max=$m
		done
		RSS[$t]=$max
	done
fi

# ---- the table ----

stats() { # "median p90 min" in ms, of the µs samples on stdin
	tr ' ' '\n' | grep . | sort -n | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "- - -"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			i = int(NR * 0.9 + 0.999999)
			printf "%.2f %.2f %.2f\n", m / 1000, v[i] / 1000, v[1] / 1000
		}'
}

declare -A MED P90 MIN CNT
for t in "${RUNNING[@]}"; do
	read -r "MED[$t]" "P90[$t]" "MIN[$t]" < <(echo "${SAMPLES[$t]:-}" | stats)
	CNT[$t]=$(echo "${SAMPLES[$t]:-}" | wc -w)
done

ratio() { # psrun's median over the tool's
	awk -v a="${MED[psrun]:--}" -v b="${MED[$1]:--}" \
		'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f\n", a / b }'
}

machine() {
	local mode=legacy cpu t
	if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		mode="v2 (unified)"
	elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		mode="hybrid (v1 controllers; cgroup2 at /sys/fs/cgroup/unified owns: $(paste -sd' ' /sys/fs/cgroup/unified/cgroup.controllers))"
	fi
	cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
	echo "machine: $(nproc) cpus ($cpu), kernel $(uname -r), cgroups $mode"
	echo "psrun: $("$PSRUN" version 2>/dev/null | head -1)${PSRUN_BENCH_ARGS:+ (run ${PSRUN_BENCH_ARGS})}"
	for t in bwrap crun runc runsc; do
		command -v "$t" >/dev/null 2>&1 && echo "$t: $("$t" --version 2>/dev/null | head -1)"
	done
	[ -n "${MED[runsc]:-}" ] && echo "runsc platform: $RUNSC_PLATFORM"
}

target() { # tool limit
	local r
	r=$(ratio "$1")
	if [ "$r" = - ]; then
		printf 'target psrun <= %sx %s: not measured\n' "$2" "$1"
	else
		printf 'target psrun <= %sx %s: %sx %s\n' "$2" "$1" "$r" \
			"$(awk -v r="$r" -v l="$2" 'BEGIN { print (r <= l) ? "PASS" : "MISS" }')"
	fi
}

net() { # the tool's median minus the harness's own
	awk -v a="${MED[$1]:--}" -v b="${MED[spawn]:--}" \
		'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f\n", a - b }'
}

report() {
	local t r n note
	machine
	echo "rounds: $rounds measured after $WARMUP warm-up, interleaved, in ${elapsed}s"
	echo
	printf '%-12s %5s %10s %8s %8s %8s %9s %11s\n' tool runs "median ms" "p90 ms" "min ms" \
		"net ms" "RSS KiB" "psrun/tool"
	for t in "${RUNNING[@]}"; do
		case $t in psrun | spawn | nsenter) r="" ;; *) r=$(ratio "$t") ;; esac
		case $t in spawn) n=- ;; *) n=$(net "$t") ;; esac
		printf '%-12s %5s %10s %8s %8s %8s %9s %11s\n' "$t" "${CNT[$t]}" "${MED[$t]}" \
			"${P90[$t]}" "${MIN[$t]}" "$n" "${RSS[$t]:--}" "$r"
	done
	for t in "${ACTIVE[@]}"; do
		[ -n "${FIRST_ERROR[$t]:-}" ] &&
			echo "error: $t: ${FAILS[$t]} failed run(s), the first: ${FIRST_ERROR[$t]}"
	done
	for note in "${NOTES[@]}"; do echo "note: $note"; done
	echo
	target unshare 1.3
	target bwrap 1.0
	if [ -n "${MED[psrun-gvisor]:-}" ]; then
		echo
		for t in runsc crun psrun; do
			awk -v a="${MED[psrun-gvisor]}" -v b="${MED[$t]:--}" -v t="$t" 'BEGIN {
				if (b != "-" && b > 0) printf "gvisor: psrun-gvisor/%s %.2fx\n", t, a / b }'
		done
	fi
}

report | tee "$TMP/summary.txt"
if [ -n "$OUT" ]; then
	cp "$TMP/summary.txt" "$OUT/summary.txt"
	{
		echo "tool,us"
		for t in "${RUNNING[@]}"; do
			for v in ${SAMPLES[$t]:-}; do echo "$t,$v"; done
		done
	} >"$OUT/samples.csv"
fi

# ---- optional cross-check: hyperfine, one tool after the other ----

if [ -n "${BENCH_HYPERFINE:-}" ]; then
	if command -v hyperfine >/dev/null 2>&1; then
		hf=("$PSRUN run ${PSRUN_BENCH_ARGS:-} -- true"
			"unshare --fork --pid --mount --net --uts --ipc --cgroup true")
		hyperfine -N --warmup 5 --runs "$((RUNS < 100 ? RUNS : 100))" \
			--export-json "${OUT:-$TMP}/hyperfine.json" "${hf[@]}" || ERRORS=1
	else
		log "BENCH_HYPERFINE: hyperfine is not installed"
	fi
fi

exit $((ERRORS ? 1 : 0))
