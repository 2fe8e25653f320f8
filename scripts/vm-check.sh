#!/bin/bash
# SPDX-License-Identifier: MIT
# Kernel matrix (`make check-vm`): run psrun's kernel, integration and escape
# test groups on this host and in a QEMU VM running Debian's cloud kernel with
# pure cgroup v2 and AppArmor, then print a matrix of the results.
#
# Usage: scripts/vm-check.sh [BUILD_DIR]        (default: build)
#
# Needs root (tests and the initramfs' device node), qemu-system-x86 (installed
# through scripts/install-deps.sh when missing) and apt access to fetch two
# packages, which are extracted, never installed: the kernel
# ($VM_KERNEL_PACKAGE) and apparmor (for apparmor_parser). They are cached in
# BUILD_DIR/vm-cache; everything else lives in a temp dir removed on exit.
# The stage is skipped (exit 0, a SKIP: line) only when no emulator can be had.
set -eu
set -o pipefail

# ---- Configuration (environment overrides) ---------------------------------

# Test groups, one a line: <name> <binary under BUILD/tests> <Criterion filter>
# [<jobs> [as=UID]]. The kernel groups run one test at a time (they share
# host objects: cgroups, AppArmor profiles), and so does the session group
# (its memory and time bounds are measured against one test's load in the
# emulated VM); integration, escape and oci run two at a time, as on the host.
# escape_rootless is the escape tier's second runner (tests/rootless): as uid
# 4242 with PSRUN_TEST_ROOTLESS=1, on a cgroup2 host in a subtree delegated
# to it as systemd's user@UID.service is (scripts/vm/run-groups.sh).
VM_GROUPS=${VM_GROUPS:-"
cgroup       kernel       cgroup/*
cgroup_oci   kernel       cgroup_oci/*
seccomp      kernel       seccomp/*
seccomp_notify kernel     seccomp_notify/*
landlock     kernel       landlock/*
apparmor     kernel       apparmor/*
integration  integration  *  2
escape       escape       *  2
escape_rootless escape    *  1  as=4242
oci          oci          *  2
session      session      *
"}
# Groups also run on this host for the matrix's first column (0: VM only).
VM_HOST_COLUMN=${VM_HOST_COLUMN:-1}

VM_KERNEL_PACKAGE=${VM_KERNEL_PACKAGE:-linux-image-cloud-amd64}
# Modules loaded at boot (dependencies follow from modules.dep; nfnetlink_log
# is what a network's NFLOG refusals are read through; before 6.2 the
# named counters' objref expression is nft_objref, a module); the kernel
# can load further ones on demand from those copied in.
VM_MODULES=${VM_MODULES:-"overlay veth dummy tun loop nf_tables nft_chain_nat nft_nat
nft_masq nft_ct nft_reject_inet nft_fib_inet nft_limit nft_log nft_redir nft_quota
nf_log_syslog nfnetlink_log nft_objref"}
# Host programs copied into the VM with their libraries, when installed.
VM_EXTRA_BINS=${VM_EXTRA_BINS:-"bash ip nft setpriv newuidmap newgidmap"}
# Cgroup the tests run in. The root cgroup, because psrun nests its cgroups
# below the caller's and cgroup v2 lets only the root cgroup both hold
# processes and hand controllers to children; a path such as
# /system.slice/psrun-tests.service runs them the way a systemd service (or a
# login session) would, where psrun needs --cgroup-parent.
VM_TEST_CGROUP=${VM_TEST_CGROUP:-/}

VM_ACCEL=${VM_ACCEL:-auto} # auto | kvm | tcg
VM_MEMORY=${VM_MEMORY:-2048}
VM_CPUS=${VM_CPUS:-2}
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-120}  # until the init script starts
VM_RUN_TIMEOUT=${VM_RUN_TIMEOUT:-900}    # qemu start to power-off
VM_GROUP_TIMEOUT=${VM_GROUP_TIMEOUT:-420} # one group, in the VM and on the host
# Appended to the kernel command line (debugging).
VM_CMDLINE_EXTRA=${VM_CMDLINE_EXTRA:-}

# Pure cgroup v2 (no v1 hierarchy can be mounted; the systemd.* switch is
# what a systemd host would be booted with and is harmless here) and the LSM
# stack of Debian's kernel with AppArmor as the major LSM: capability is
# always first, and security= is ignored once lsm= is given, so it is not.
VM_CMDLINE="console=ttyS0 panic=-1 systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all
apparmor=1 lsm=landlock,lockdown,yama,integrity,apparmor,bpf"

# ---- Helpers ------------------------------------------------------------------

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGE_START=$(date +%s)
TMP=""
QEMU_PID=""
SERIAL_LOG=""

say() {
        echo "vm-check: $*"
}

# shellcheck disable=SC2317 # called through the trap
cleanup() {
        if [ -n "$QEMU_PID" ] && kill -0 "$QEMU_PID" 2>/dev/null; then
                kill "$QEMU_PID" 2>/dev/null || true
                wait "$QEMU_PID" 2>/dev/null || true
        fi
        [ -z "$TMP" ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The serial log without carriage returns and terminal escapes.
clean_log() {
        tr -d '\r' <"$1" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g'
}

fail() {
        echo "vm-check: FAIL: $*" >&2
        if [ -n "$SERIAL_LOG" ] && [ -s "$SERIAL_LOG" ]; then
                echo "vm-check: last lines of the serial console:" >&2
                clean_log "$SERIAL_LOG" | tail -n 40 | sed 's/^/  | /' >&2
                save_log
        fi
        exit 1
}

skip() {
        echo "SKIP: vm-check: $*"
        exit 0
}

LOG_SAVED=0
save_log() {
        # Kept for CI artifacts; the temp dir goes away.
        [ "$LOG_SAVED" = 0 ] || return 0
        if clean_log "$SERIAL_LOG" >"$BUILD/vm-check.log" 2>/dev/null; then
                echo "vm-check: serial log saved to $BUILD/vm-check.log" >&2
                LOG_SAVED=1
        fi
}

is_root() {
        [ "$(id -u)" -eq 0 ]
}

# ---- Build dir ----------------------------------------------------------------

BUILD=${1:-build}
[ -d "$BUILD" ] || fail "build dir $BUILD does not exist (run make first)"
BUILD=$(cd "$BUILD" && pwd)
[ -x "$BUILD/psrun" ] || fail "$BUILD/psrun is not built (run make first)"
is_root || fail "needs root (the tests create namespaces and cgroups)"
CACHE="$BUILD/vm-cache"
mkdir -p "$CACHE"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/psrun-vm.XXXXXX")
SERIAL_LOG="$TMP/serial.log"

# The groups as the runner reads them: comments and blank lines dropped.
printf '%s\n' "$VM_GROUPS" | awk 'NF >= 3 && $1 !~ /^#/ { print $1, $2, $3, (NF >= 4 ? $4 : 1), (NF >= 5 ? $5 : "") }' >"$TMP/groups"
[ -s "$TMP/groups" ] || fail "VM_GROUPS names no group"

# ---- Emulator -----------------------------------------------------------------

QEMU=$(command -v qemu-system-x86_64 || true)
if [ -z "$QEMU" ] && command -v apt-get >/dev/null; then
        say "qemu-system-x86_64 missing, installing qemu-system-x86"
        PSRUN_EXTRA_PACKAGES="qemu-system-x86" "$SRC_DIR/scripts/install-deps.sh" ||
                say "could not install qemu-system-x86"
        QEMU=$(command -v qemu-system-x86_64 || true)
fi
[ -n "$QEMU" ] || skip "no emulator: qemu-system-x86_64 is not installed and could not be" \
        "installed (apt-get install qemu-system-x86)"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] || fail "busybox not found (apt-get install busybox-static)"

# ---- Packages: fetched and extracted into the cache, never installed -----------

apt_candidate() {
        apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1
}

# Package name and version for the kernel image and apparmor, resolved once
# per apt index update (apt-cache takes seconds per call).
resolve_packages() {
        local resolved="$CACHE/resolved-$VM_KERNEL_PACKAGE" kpkg
        if [ -s "$resolved" ] && [ "$resolved" -nt /var/lib/apt/lists ]; then
                cat "$resolved"
                return
        fi
        kpkg=$VM_KERNEL_PACKAGE
        if [ -z "$(apt_candidate apparmor)" ]; then
                apt-get update -q >"$TMP/apt.log" 2>&1 || true
        fi
        case "$kpkg" in
        linux-image-[0-9]*) ;;
        *)
                # The meta package only depends on the versioned image.
                kpkg=$(apt-cache depends "$kpkg" 2>/dev/null |
                        awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
                [ -n "$kpkg" ] ||
                        fail "cannot resolve $VM_KERNEL_PACKAGE to a kernel image package"
                ;;
        esac
        {
                echo "$kpkg $(apt_candidate "$kpkg")"
                echo "apparmor $(apt_candidate apparmor)"
        } >"$resolved.tmp"
        awk 'NF != 2 { exit 1 }' "$resolved.tmp" ||
                fail "packages not found in the apt sources: $(tr '\n' ' ' <"$resolved.tmp")"
        mv "$resolved.tmp" "$resolved"
        cat "$resolved"
}

# fetch_extract PACKAGE VERSION: prints the directory it is extracted in.
fetch_extract() {
        local pkg=$1 ver=$2 dir
        dir="$CACHE/$pkg-${ver//:/_}"
        if [ ! -e "$dir/.extracted" ]; then
                rm -rf "$dir" "$CACHE/dl"
                mkdir -p "$CACHE/dl"
                # apt's download sandbox user may not write to the build dir.
                chmod 0777 "$CACHE/dl"
                (cd "$CACHE/dl" && apt-get download -q "$pkg=$ver") >"$TMP/apt.log" 2>&1 ||
                        fail "apt-get download $pkg=$ver failed: $(tail -n 3 "$TMP/apt.log")"
                mkdir -p "$dir"
                dpkg-deb -x "$CACHE"/dl/*.deb "$dir"
                rm -rf "$CACHE/dl"
                touch "$dir/.extracted"
                say "fetched $pkg $ver into $dir" >&2
        fi
        echo "$dir"
}

prep_start=$(date +%s)
resolve_packages >"$TMP/packages"
read -r KPKG KPKG_VER < <(sed -n 1p "$TMP/packages")
read -r _ APPARMOR_VER < <(sed -n 2p "$TMP/packages")
KDIR=$(fetch_extract "$KPKG" "$KPKG_VER")
APPARMOR_DIR=$(fetch_extract apparmor "$APPARMOR_VER")
# Only the packages in use stay: older versions go.
for d in "$CACHE"/*/; do
        d=${d%/}
        [ "$d" = "$KDIR" ] || [ "$d" = "$APPARMOR_DIR" ] || rm -rf "$d"
done

VMLINUZ=""
for f in "$KDIR"/boot/vmlinuz-*; do
        [ -e "$f" ] && VMLINUZ=$f
done
[ -n "$VMLINUZ" ] || fail "no vmlinuz in $KPKG"
KVER=${VMLINUZ##*/vmlinuz-}
KMOD_SRC=""
for d in "$KDIR/lib/modules/$KVER" "$KDIR/usr/lib/modules/$KVER"; do
        [ -d "$d" ] && KMOD_SRC=$d
done
[ -n "$KMOD_SRC" ] || fail "no modules for $KVER in $KPKG"
if [ ! -s "$KMOD_SRC/modules.dep" ]; then
        # The package leaves modules.dep to depmod at install time.
        "$BUSYBOX" depmod -b "${KMOD_SRC%/lib/modules/*}" "$KVER"
fi

# ---- Accelerator: KVM only when a guest really runs under it -----------------

kvm_works() {
        [ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
        # Boot the kernel with no root device: it panics within seconds and,
        # with -no-reboot, qemu exits. Nested KVM can fail only once the guest
        # runs ("KVM internal error ... emulation failure"), leaving qemu
        # paused: that shows as the timeout.
        timeout 30 "$QEMU" -accel kvm -cpu host -m 256 -nodefaults -nographic -serial stdio \
                -monitor none -no-reboot -kernel "$VMLINUZ" \
                -append "console=ttyS0 panic=-1" </dev/null >"$TMP/kvm-probe.log" 2>&1 || true
        grep -aq "Kernel panic" "$TMP/kvm-probe.log" &&
                ! grep -aqi "KVM internal error\|emulation failure" "$TMP/kvm-probe.log"
}

case "$VM_ACCEL" in
kvm) ACCEL=kvm ;;
tcg) ACCEL=tcg ;;
auto)
        if kvm_works; then
                ACCEL=kvm
        else
                ACCEL=tcg
                if [ -e /dev/kvm ]; then
                        say "KVM probe failed ($(grep -ai -m1 'error\|fail' "$TMP/kvm-probe.log" ||
                                echo 'no guest boot within 30s')); using TCG"
                else
                        say "no /dev/kvm; using TCG software emulation"
                fi
        fi
        ;;
*) fail "VM_ACCEL must be auto, kvm or tcg" ;;
esac
if [ "$ACCEL" = kvm ]; then
        ACCEL_ARGS=(-accel kvm -cpu host)
else
        # shellcheck disable=SC2054 # qemu's own comma syntax
        ACCEL_ARGS=(-accel tcg,thread=multi -cpu max)
fi

# ---- The initramfs -----------------------------------------------------------------

ROOT="$TMP/root"
mkdir -p "$ROOT"/usr/{bin,sbin,lib,lib64} "$ROOT"/{dev,proc,sys,run,tmp,root,home,etc,opt/psrun}
for d in bin sbin lib lib64; do
        ln -s "usr/$d" "$ROOT/$d" # merged /usr: binding /usr brings everything
done
chmod 1777 "$ROOT/tmp"
chmod 0700 "$ROOT/root"

# add_file HOST_PATH [VM_PATH]: copied dereferenced, through the VM's /lib etc.
# symlinks, so /lib/x/libc.so.6 lands in /usr/lib/x/.
add_file() {
        local dst="$ROOT${2:-$1}"
        mkdir -p "$(dirname "$dst")"
        cp -L "$1" "$dst"
}

# add_libs ELF: every shared library ldd names, and the dynamic loader.
add_libs() {
        local lib
        for lib in $(ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
                                               $1 ~ /^\// { print $1 }'); do
                [ -e "$ROOT$lib" ] || add_file "$lib"
        done
}

add_prog() {
        add_file "$1" "${2:-$1}"
        add_libs "$1"
}

# busybox for the shell and the userland; applets everywhere a script looks.
add_prog "$BUSYBOX" /usr/bin/busybox
for applet in $("$BUSYBOX" --list); do
        [ "$applet" = busybox ] || ln -sf busybox "$ROOT/usr/bin/$applet"
done
for applet in modprobe insmod rmmod depmod switch_root poweroff; do
        ln -sf ../bin/busybox "$ROOT/usr/sbin/$applet"
done
for prog in $VM_EXTRA_BINS; do
        path=$(command -v "$prog" || true)
        if [ -n "$path" ]; then
                rm -f "$ROOT/usr/bin/$prog"
                add_prog "$(readlink -f "$path")" "/usr/bin/$prog"
                # newuidmap and newgidmap are setuid root (cp drops the bit).
                [ ! -u "$path" ] || chmod u+s "$ROOT/usr/bin/$prog"
        fi
done

# psrun and the test binaries, where the tests look for them ($PSRUN_BUILD).
VMBUILD=/opt/psrun/build
add_prog "$BUILD/psrun" "$VMBUILD/psrun"
# libpsrun.so too: the session tier's image suite runs supervisors from it.
[ -f "$BUILD/libpsrun.so" ] && add_prog "$BUILD/libpsrun.so" "$VMBUILD/libpsrun.so"
for bin in $(awk '{ print $2 }' "$TMP/groups" | sort -u); do
        if [ -x "$BUILD/tests/$bin" ]; then
                add_prog "$BUILD/tests/$bin" "$VMBUILD/tests/$bin"
        fi
done
if [ -d "$BUILD/tests/helper" ]; then
        for helper in "$BUILD"/tests/helper/*; do
                [ -f "$helper" ] && [ -x "$helper" ] &&
                        add_prog "$helper" "$VMBUILD/tests/helper/${helper##*/}"
        done
fi
# Data the tests read from the source tree, by the path relative to its top
# (the tests' working directory, /opt/psrun).
for d in tests/oci/data; do
        if [ -d "$SRC_DIR/$d" ]; then
                mkdir -p "$ROOT/opt/psrun/$d"
                cp -a "$SRC_DIR/$d/." "$ROOT/opt/psrun/$d/"
        fi
done
missing=$(awk '{ print $2 }' "$TMP/groups" | sort -u | while read -r b; do
        [ -x "$BUILD/tests/$b" ] || printf ' %s' "$b"
done)
[ -z "$missing" ] || say "not built:$missing (their groups report 'missing')"

# apparmor_parser with its configuration and feature ABI files.
add_prog "$APPARMOR_DIR/sbin/apparmor_parser" /usr/sbin/apparmor_parser
for d in etc/apparmor etc/apparmor.d/abi etc/apparmor.d/tunables usr/share/apparmor-features; do
        if [ -d "$APPARMOR_DIR/$d" ]; then
                mkdir -p "$ROOT/$d"
                cp -a "$APPARMOR_DIR/$d/." "$ROOT/$d/"
        fi
done

# Kernel modules: the closure of VM_MODULES from the package's modules.dep,
# then a modules.dep for just those, for busybox modprobe.
KMOD_DST="$ROOT/lib/modules/$KVER"
mkdir -p "$KMOD_DST"
cp "$KMOD_SRC"/modules.builtin "$KMOD_SRC"/modules.order "$KMOD_DST/" 2>/dev/null || true
for m in $VM_MODULES; do
        line=$(awk -v a="/$m.ko:" -v b="/${m//_/-}.ko:" \
                'index($1, a) || index($1, b) || $1 == substr(a, 2) || $1 == substr(b, 2)' \
                "$KMOD_SRC/modules.dep" | head -n 1)
        if [ -z "$line" ]; then
                grep -q "/${m}.ko$" "$KMOD_SRC/modules.builtin" 2>/dev/null ||
                        say "module $m is not in $KPKG"
                continue
        fi
        for ko in $line; do
                ko=${ko%:}
                [ -e "$KMOD_DST/$ko" ] || add_file "$KMOD_SRC/$ko" "/lib/modules/$KVER/$ko"
        done
done
"$BUSYBOX" depmod -b "$ROOT" "$KVER"

# /etc: just enough for root and the tests; psrun synthesizes the sandbox's.
# The user escape_rootless runs as, with a subordinate range as Debian's
# adduser gives one (newuidmap looks the user up by name).
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n%s\n' \
        'psrun-vm-user:x:4242:4242::/nonexistent:/bin/false' >"$ROOT/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\npsrun-vm-user:x:4242:\n' >"$ROOT/etc/group"
echo 'psrun-vm-user:200000:65536' >"$ROOT/etc/subuid"
echo 'psrun-vm-user:200000:65536' >"$ROOT/etc/subgid"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$ROOT/etc/hosts"
mkdir -p "$ROOT/etc/psrun-vm" "$ROOT/usr/lib/psrun-vm"
cp "$TMP/groups" "$ROOT/etc/psrun-vm/groups"
{
        echo "PSRUN_VM_MODULES='$(printf '%s' "$VM_MODULES" | tr -s ' \n\t' ' ')'"
        echo "PSRUN_VM_TEST_CGROUP='$VM_TEST_CGROUP'"
        echo "PSRUN_VM_GROUP_TIMEOUT='$VM_GROUP_TIMEOUT'"
} >"$ROOT/etc/psrun-vm/config"
install -m 0755 "$SRC_DIR/scripts/vm/init" "$ROOT/init"
install -m 0755 "$SRC_DIR/scripts/vm/run-groups.sh" "$ROOT/usr/lib/psrun-vm/run-groups.sh"
# The kernel opens /dev/console for init before anything is mounted.
mknod -m 0600 "$ROOT/dev/console" c 5 1

INITRAMFS="$TMP/initramfs.cpio"
# Uncompressed: unpacking gzip costs more under TCG than copying the bytes.
(cd "$ROOT" && find . | "$BUSYBOX" cpio -o -H newc -R 0:0 >"$INITRAMFS" 2>/dev/null)
prep_secs=$(($(date +%s) - prep_start))
say "initramfs $(($(stat -c %s "$INITRAMFS") / 1048576)) MiB, kernel $KVER, $ACCEL, prepared in ${prep_secs}s"

# ---- This host's column -------------------------------------------------------

host_cgroup_mode() {
        if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
                echo v2
        elif [ -d /sys/fs/cgroup/unified ]; then
                echo hybrid
        else
                echo v1
        fi
}
HOST_LABEL="host (cgroup $(host_cgroup_mode), $(uname -r | cut -d- -f1))"
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
        HOST_LABEL="host (cgroup $(host_cgroup_mode) + AppArmor, $(uname -r | cut -d- -f1))"
fi
VM_LABEL="VM (cgroup v2 + AppArmor, ${KVER%%-*})"

: >"$TMP/host.results"
host_secs=0
if [ "$VM_HOST_COLUMN" = 1 ]; then
        host_start=$(date +%s)
        say "running the groups on this host"
        sh "$SRC_DIR/scripts/vm/run-groups.sh" "$BUILD" "$TMP/groups" "$TMP/host-logs" \
                "$VM_GROUP_TIMEOUT" >"$TMP/host.results" || true
        host_secs=$(($(date +%s) - host_start))
        grep '^PSRUN-VM-RESULT' "$TMP/host.results" | sed 's/^PSRUN-VM-RESULT /  host: /'
        grep '^PSRUN-VM-FAIL' "$TMP/host.results" | sed 's/^PSRUN-VM-FAIL /  host failed: /' || true
        grep '^PSRUN-VM-WARN' "$TMP/host.results" | sed 's/^PSRUN-VM-WARN /  host warning: /' || true
fi

# ---- The VM ---------------------------------------------------------------------

cmdline="$(printf '%s' "$VM_CMDLINE" | tr '\n' ' ') $VM_CMDLINE_EXTRA"
say "booting $KVER ($ACCEL, ${VM_CPUS} vCPUs, ${VM_MEMORY} MiB)"
vm_start=$(date +%s)
"$QEMU" "${ACCEL_ARGS[@]}" -smp "$VM_CPUS" -m "$VM_MEMORY" -nodefaults -no-user-config \
        -nographic -serial stdio -monitor none -no-reboot \
        -kernel "$VMLINUZ" -initrd "$INITRAMFS" -append "$cmdline" \
        </dev/null >"$SERIAL_LOG" 2>"$TMP/qemu.stderr" &
QEMU_PID=$!

boot_secs=""
shown=0
show_progress() {
        # Echo the harness's own lines as they arrive.
        local lines
        lines=$(grep -ao 'PSRUN-VM-[A-Z]*[ =].*' "$SERIAL_LOG" | tr -d '\r' |
                grep -v '^PSRUN-VM-\(FAIL\|SKIP\|DENIAL\)' || true)
        [ -n "$lines" ] || return 0
        printf '%s\n' "$lines" | tail -n +$((shown + 1)) | sed 's/^/  vm: /'
        shown=$(printf '%s\n' "$lines" | wc -l)
}

stop_qemu() {
        kill "$QEMU_PID" 2>/dev/null || true
        wait "$QEMU_PID" 2>/dev/null || true
        QEMU_PID=""
}

while kill -0 "$QEMU_PID" 2>/dev/null; do
        elapsed=$(($(date +%s) - vm_start))
        if [ -z "$boot_secs" ] && grep -aq 'PSRUN-VM-INIT' "$SERIAL_LOG"; then
                boot_secs=$elapsed
        fi
        show_progress
        if grep -aq 'Kernel panic' "$SERIAL_LOG"; then
                sleep 2 # let the panic message finish
                stop_qemu
                break
        fi
        if [ -z "$boot_secs" ] && [ "$elapsed" -ge "$VM_BOOT_TIMEOUT" ]; then
                stop_qemu
                fail "VM did not boot: no init within ${VM_BOOT_TIMEOUT}s (VM_BOOT_TIMEOUT)"
        fi
        if [ "$elapsed" -ge "$VM_RUN_TIMEOUT" ]; then
                stop_qemu
                fail "VM tests timed out after ${VM_RUN_TIMEOUT}s (VM_RUN_TIMEOUT)"
        fi
        sleep 1
done
qemu_rc=0
[ -z "$QEMU_PID" ] || wait "$QEMU_PID" || qemu_rc=$?
QEMU_PID=""
vm_secs=$(($(date +%s) - vm_start))
show_progress
save_log

panic=$(clean_log "$SERIAL_LOG" | grep -a -m1 'Kernel panic' || true)
[ -z "$panic" ] || fail "kernel panic in the VM: ${panic#*] }"
oops=$(clean_log "$SERIAL_LOG" |
        grep -a -m1 -E 'Oops:|kernel BUG at|BUG: unable to handle|BUG: kernel NULL pointer|general protection fault' ||
        true)
[ -z "$oops" ] || fail "kernel oops in the VM: ${oops#*] }"
if ! grep -aq 'PSRUN-VM-EXIT' "$SERIAL_LOG"; then
        fail "the VM never reported (no PSRUN-VM-EXIT; qemu exit status $qemu_rc:" \
                "$(head -c 300 "$TMP/qemu.stderr" | tr '\n' ' '))"
fi
[ -n "$boot_secs" ] || boot_secs="?"
clean_log "$SERIAL_LOG" | grep -a 'PSRUN-VM-' | sed 's/^.*\(PSRUN-VM-\)/\1/' >"$TMP/vm.results"

# ---- Matrix ---------------------------------------------------------------------

# cell RESULTS_FILE GROUP: "pass/fail/skip" or the status when it is not a count.
cell() {
        local line status
        line=$(grep "^PSRUN-VM-RESULT group=$2 " "$1" | tail -n 1 || true)
        if [ -z "$line" ]; then
                echo "-"
                return
        fi
        field() { printf '%s\n' "$line" | sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p"; }
        status=$(field status)
        case "$status" in
        ok | failed)
                if [ "$(field tested)" = 0 ] && [ "$(field skip)" = 0 ]; then
                        echo "no tests"
                else
                        echo "$(field pass)/$(field fail)/$(field skip)$([ "$status" = ok ] ||
                                echo ' FAILED')"
                fi
                ;;
        *) echo "$status" ;;
        esac
}

echo
echo "Kernel matrix (pass/fail/skip per group)"
printf '  %-14s %-36s %s\n' group "$HOST_LABEL" "$VM_LABEL"
while read -r name _; do
        host_cell=$(cell "$TMP/host.results" "$name")
        [ "$VM_HOST_COLUMN" = 1 ] || host_cell="(the tiers above)"
        printf '  %-14s %-36s %s\n' "$name" "$host_cell" "$(cell "$TMP/vm.results" "$name")"
done <"$TMP/groups"
echo

if grep -q '^PSRUN-VM-\(FAIL\|ERROR\)' "$TMP/vm.results"; then
        echo "Failures in the VM:"
        grep '^PSRUN-VM-\(FAIL\|ERROR\)' "$TMP/vm.results" | sed 's/^PSRUN-VM-[A-Z]* /  /'
fi
if grep -q '^PSRUN-VM-WARN' "$TMP/vm.results"; then
        echo "Warnings in the VM:"
        grep '^PSRUN-VM-WARN' "$TMP/vm.results" | sed 's/^PSRUN-VM-WARN /  /'
fi
if grep -q '^PSRUN-VM-SKIP' "$TMP/vm.results"; then
        echo "Skipped in the VM:"
        grep '^PSRUN-VM-SKIP' "$TMP/vm.results" | sed 's/^PSRUN-VM-SKIP /  /'
fi
total_secs=$(($(date +%s) - STAGE_START))
say "timings: prepare ${prep_secs}s, host groups ${host_secs}s, VM boot ${boot_secs}s," \
        "VM total ${vm_secs}s, stage ${total_secs}s"

rc=0
vm_exit=$(sed -n 's/^PSRUN-VM-EXIT \([0-9]*\).*/\1/p' "$TMP/vm.results" | tail -n 1)
bad_vm=$(grep '^PSRUN-VM-RESULT' "$TMP/vm.results" | grep -v 'status=\(ok\|missing\)' || true)
bad_host=$(grep '^PSRUN-VM-RESULT' "$TMP/host.results" | grep -v 'status=\(ok\|missing\)' || true)
ran_vm=$(grep '^PSRUN-VM-RESULT' "$TMP/vm.results" | grep -v 'status=missing' || true)
if [ -z "$ran_vm" ]; then
        echo "vm-check: FAIL: no test group ran in the VM (none of their binaries is built)" >&2
        rc=1
fi
if [ -n "$bad_vm" ] || [ "${vm_exit:-1}" != 0 ]; then
        echo "vm-check: FAIL: test groups failed in the VM (exit ${vm_exit:-?})" >&2
        rc=1
fi
if [ -n "$bad_host" ]; then
        echo "vm-check: FAIL: test groups failed on this host" >&2
        for log in "$TMP"/host-logs/*.log; do
                grep -aq '^\[FAIL\]' "$log" 2>/dev/null || continue
                echo "--- $(basename "$log" .log) (host), failing tests:" >&2
                grep -a -B8 '^\[FAIL\]' "$log" | head -n 60 >&2
        done
        rc=1
fi
[ "$rc" != 0 ] || say "OK"
# Totals of the VM column, for scripts/run-tests.sh's closing line.
awk '/^PSRUN-VM-RESULT/ {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        p += v["pass"]; f += v["fail"]; s += v["skip"]
} END { printf "vm: %d passed, %d failed, %d skipped\n", p, f, s }' "$TMP/vm.results"
exit "$rc"
