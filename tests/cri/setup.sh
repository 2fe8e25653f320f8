# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# A test-owned containerd with its CRI plugin, set up for the CRI tier
# (tests/cri/run.sh) and the CRI benchmark (bench/cri-pods.sh): psrun and
# runc as two runtime handlers of io.containerd.runc.v2 (BinaryName), a
# CNI bridge in 198.18.0.0/15 with no gateway (no traffic leaves it), the
# pause and busybox images built offline and imported. Everything it starts
# or creates (containerd, shims, containers, cgroups below this shell's
# own, netns, the CNI bridge, WORK) goes in cleanup, trapped on EXIT.
#
# The sourcing script sets BUILD, REPO and HERE (tests/cri) and defines
# ok, not_ok, skip_tier (says why and exits) and summary. Defined here: WORK,
# ID, SOCK, SUBNET, CG_PATH (this run's cgroup, as the pods' parent names
# it), PSRUN, RUNC, TOOLS, CRITEST, CRICTL, IMAGE, PAUSE_IMAGE, and the
# functions cri (crictl on this containerd) and remove_pods.

# shellcheck source=tests/lib/cgroup.sh
. "$HERE/../lib/cgroup.sh"

[ "$(id -u)" -eq 0 ] || skip_tier "needs root (starts containerd and creates pods)"
PSRUN=$(realpath "$BUILD/psrun" 2>/dev/null || true)
if [ ! -x "$PSRUN" ]; then
	not_ok cri "$BUILD/psrun is not built"
	summary
	exit 1
fi
for tool in containerd ctr containerd-shim-runc-v2 runc python3 cc ip; do
	command -v "$tool" >/dev/null || skip_tier "$tool not installed (scripts/install-deps.sh installs it)"
done
RUNC=$(command -v runc)
CNI_BIN=""
for d in /usr/lib/cni /opt/cni/bin; do
	[ -x "$d/bridge" ] && [ -x "$d/host-local" ] && [ -x "$d/loopback" ] && CNI_BIN=$d && break
done
[ -n "$CNI_BIN" ] || skip_tier "no CNI bridge, host-local and loopback plugins (containernetworking-plugins)"
if ! TOOLS=$("$REPO/scripts/fetch-cri-tools.sh" "$BUILD" 2>"$BUILD/cri-fetch.log"); then
	skip_tier "no critest/crictl: $(tail -n 1 "$BUILD/cri-fetch.log")"
fi
# shellcheck disable=SC2034 # critest.sh's
CRITEST=$TOOLS/critest
CRICTL=$TOOLS/crictl

# --- the run's directory, cgroups and clean-up ------------------------------
mkdir -p "$BUILD/cri"
WORK=$(mktemp -d "$(realpath "$BUILD/cri")/run.XXXXXX")
ID=${WORK##*.}
ID=${ID,,}
BRIDGE=pscri$ID
SOCK=$WORK/containerd.sock
CG_PATH="" # this run's cgroup path (the same in every v1 hierarchy)

cri() {
	timeout -k 5 60 "$CRICTL" --runtime-endpoint "unix://$SOCK" --image-endpoint "unix://$SOCK" --timeout 30s "$@"
}

# Pods left (a failed check's): stopped and removed through CRI first, so
# containerd tears down their netns and shims itself.
remove_pods() {
	local p
	[ -S "$SOCK" ] || return 0
	for p in $(cri pods -q 2>/dev/null); do
		cri stopp "$p" >/dev/null 2>&1 || true
		cri rmp -f "$p" >/dev/null 2>&1 || true
	done
}

cleanup() {
	set +e
	local d m pid pids ino
	remove_pods
	pid=$(cat "$WORK/containerd.pid" 2>/dev/null)
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	fi
	cg_leave
	# Shims and containers: all in this run's cgroups, or rooted in WORK.
	for _ in 1 2 3; do
		pids=$(cg_pids)
		pids="$pids $(grep -laF -- "$WORK" /proc/[0-9]*/cmdline 2>/dev/null |
			sed -e 's|^/proc/||' -e 's|/cmdline$||' | grep -vxE "$$|$BASHPID")"
		[ -z "${pids// /}" ] && break
		# shellcheck disable=SC2086 # a list of pids
		kill -KILL $pids 2>/dev/null
		sleep 0.3
	done
	# The netns containerd made for this run's pods and did not remove (a
	# failed RunPodSandbox can leave one): new since containerd started,
	# and no process in it.
	for m in /run/netns/cni-*; do
		[ -e "$m" ] || continue
		grep -qxF "$m" "$WORK/netns.before" 2>/dev/null && continue
		[ "$m" -nt "$WORK/config.toml" ] || continue
		ino=$(stat -L -c %i "$m" 2>/dev/null) || continue
		if ! find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%l\n' 2>/dev/null | grep -qxF "net:[$ino]"; then
			umount "$m" 2>/dev/null
			rm -f "$m"
		fi
	done
	ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
	awk -v d="$WORK" '{ if (index($5, d "/") == 1) print length($5) " " $5 }' /proc/self/mountinfo |
		sort -rn | cut -d' ' -f2- | while read -r m; do umount -l "$m"; done
	# The runtimes resolve the pods' cgroup_parent themselves; where the
	# hierarchy and this shell's cgroup namespace disagree (a host that
	# mounted cgroupfs before entering the namespace), they make this run's
	# name elsewhere in the hierarchy: those directories go too.
	for m in "${CG_MOUNTS[@]}"; do
		while read -r d; do
			CG_DIRS+=("$d")
		done < <(find "$m" -maxdepth 5 -type d -name "psrun-cri-$ID" 2>/dev/null | grep -vxF -f <(printf '%s\n' "${CG_DIRS[@]}"))
	done
	cg_remove 100
	if [ -z "${CRI_KEEP:-}" ]; then
		rm -rf --one-file-system "$WORK"
	else
		echo "# kept: $WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# This shell moves into a new cgroup below its own in every hierarchy;
# containerd, its shims and (through a cgroup_parent or by nesting) every
# container land below it, nowhere else.
cg_enter "psrun-cri-$ID"
for i in "${!CG_MOUNTS[@]}"; do
	case "${CG_MOUNTS[$i]}" in */memory) CG_PATH=${CG_PATHS[$i]} ;; esac
done
[ -n "$CG_PATH" ] || skip_tier "no cgroup v1 memory hierarchy to give the pods a parent in"

# --- images, CNI, containerd ---------------------------------------------------
PAUSE_IMAGE=psrun.test/pause:1
IMAGE=psrun.test/busybox:1
# critest's default container image, built from the same busybox.
CRITEST_IMAGE=registry.k8s.io/e2e-test-images/busybox:1.29-2
if ! cc -static -O2 -Wall -Wextra -o "$WORK/pause" "$HERE/pause.c" 2>"$WORK/pause.log"; then
	skip_tier "cannot build a static pause binary (cc -static: $(head -n 1 "$WORK/pause.log"); glibc's libc.a is in libc6-dev)"
fi
python3 "$HERE/mkimage.py" pause "$WORK/pause" "$PAUSE_IMAGE" "$WORK/pause.tar"
python3 "$HERE/mkimage.py" busybox /bin/busybox "$IMAGE,$CRITEST_IMAGE" "$WORK/busybox.tar"

SNAPSHOTTER=overlayfs
probe_overlay() {
	local d=$WORK/overlay-probe
	mkdir -p "$d/lower" "$d/upper" "$d/work" "$d/merged"
	mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null || return 1
	umount "$d/merged"
	rm -rf "$d"
}
probe_overlay || SNAPSHOTTER=native

# A /24 of 198.18.0.0/15 for this run; the bridge has no address and no
# gateway (so the bridge plugin neither routes nor turns on forwarding),
# and no masquerade: pods reach each other and nothing else.
SUBNET=198.18.$((RANDOM % 256)).0/24
mkdir -p "$WORK/cni" "$WORK/cni-ipam" "$WORK/logs"
cat >"$WORK/cni/10-psrun-cri.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "psrun-cri-$ID",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$SUBNET" }]],
        "dataDir": "$WORK/cni-ipam"
      }
    }
  ]
}
EOF

# The configuration the docs show (docs/integration.md, "Kubernetes"),
# with every path inside WORK.
runtime_entry() { # NAME BINARY
	cat <<EOF
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$1]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$1.options]
        BinaryName = "$2"
        Root = "$WORK/state-$1"
EOF
}
# The pause container asks for oom_score_adj -998, which only a holder
# of CAP_SYS_RESOURCE may set: where this process lacks it (a container
# host), containerd is told to clamp the pods' values at its own instead.
restrict_oom() {
	local eff
	eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
	(((0x$eff >> 24) & 1)) || echo "  restrict_oom_score_adj = true"
}
cat >"$WORK/config.toml" <<EOF
version = 2
root = "$WORK/root"
state = "$WORK/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$WORK/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
$(restrict_oom)
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$SNAPSHOTTER"
    default_runtime_name = "runc"
$(runtime_entry runc "$RUNC")
$(runtime_entry psrun "$PSRUN")
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$WORK/cni"
    max_conf_num = 1
EOF

ls -d /run/netns/cni-* >"$WORK/netns.before" 2>/dev/null || true
containerd --config "$WORK/config.toml" --log-level info >"$WORK/containerd.log" 2>&1 </dev/null &
echo $! >"$WORK/containerd.pid"
up=""
for _ in $(seq 1 300); do
	if cri version >/dev/null 2>&1; then
		up=1
		break
	fi
	sleep 0.1
done
if [ -z "$up" ]; then
	not_ok "containerd with CRI starts" "no answer on its socket within 30 s"
	tail -n 20 "$WORK/containerd.log" | sed 's/^/#   /'
	summary
	exit 1
fi
ok "containerd with CRI starts ($(containerd --version | awk '{ print $3 }'), snapshotter $SNAPSHOTTER, critest $(cat "$TOOLS/tag"))"
imported=1
for t in pause busybox; do
	timeout 60 ctr --address "$SOCK" -n k8s.io images import --snapshotter "$SNAPSHOTTER" "$WORK/$t.tar" >"$WORK/import.log" 2>&1 || imported=""
done
for i in "$PAUSE_IMAGE" "$IMAGE" "$CRITEST_IMAGE"; do
	cri inspecti "$i" >/dev/null 2>&1 || imported=""
done
if [ -n "$imported" ]; then
	ok "pause and busybox images imported (ctr -n k8s.io images import)"
else
	not_ok "pause and busybox images imported" "$(tail -n 1 "$WORK/import.log")"
	summary
	exit 1
fi
