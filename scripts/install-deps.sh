#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages psrun builds and tests with, only those missing.
# Idempotent; called by `make check`, `make demo` and `make bench`.
set -eu

# Build and test dependencies (Debian package names). podman and conmon:
# the clients tier; crun and dpkg-dev (dpkg-source): the peer tier, which
# unpacks crun's source package and compares with crun where it runs;
# runsc: the gVisor backend (backend: gvisor) and its tier; umoci: the image
# tier's cross-check of layer unpacking. uidmap (newuidmap, newgidmap),
# passwd (useradd) and bubblewrap: the rootless tier and bench/rootless.sh;
# passt (pasta), slirp4netns (the fallback): rootless network full and
# restricted, and their tests.
# libcurl4 and libssl3 (libcrypto):
# loaded by image/ at the first pull (dlopen), the -dev package for curl.h;
# docker-registry, skopeo, apache2-utils (htpasswd): the registry tier's
# registry, pushes and credentials. containernetworking-plugins (bridge,
# host-local, loopback) and golang-go (builds critest and crictl from
# cri-tools' vendored sources): the CRI tier.
PACKAGES="
build-essential pkg-config clang-format clang libclang-rt-14-dev
libseccomp-dev libcap-dev libyaml-dev zlib1g-dev libzstd-dev
libcriterion-dev
busybox-static python3 iproute2 nftables procps util-linux
uidmap bubblewrap passwd passt slirp4netns
qemu-system-x86
docker.io containerd
podman conmon
crun dpkg-dev
containernetworking-plugins golang-go
umoci
runsc
libcurl4-openssl-dev libcurl4 libssl3 docker-registry skopeo apache2-utils
nodejs npm python3-pip python3-setuptools python3-wheel
"
# Extra packages a particular stage needs, e.g. PSRUN_EXTRA_PACKAGES="bubblewrap crun".
PACKAGES="$PACKAGES ${PSRUN_EXTRA_PACKAGES:-}"

# Packages another package may stand in for, as PACKAGE:COMMAND: nodejs
# from NodeSource bundles npm and conflicts with Debian's npm, so npm counts
# as present when its command is.
PROVIDED_BY_COMMAND="npm:npm"

missing=""
for p in $PACKAGES; do
	provided=""
	for alt in $PROVIDED_BY_COMMAND; do
		if [ "${alt%%:*}" = "$p" ] && command -v "${alt#*:}" >/dev/null 2>&1; then
			provided=yes
		fi
	done
	[ -n "$provided" ] && continue
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "psrun: missing packages:$missing (run as root, or install them with apt-get)" >&2
	exit 1
fi

echo "psrun: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive

# Maintainer scripts start the services they install (docker.io's postinst
# runs `invoke-rc.d docker start`) unless policy-rc.d answers 101. The tests
# start their own daemons (tests/clients/run.sh): nothing may be left
# running. So a policy-rc.d that denies everything stands in for the time of
# the install, and whatever was there before (or nothing) is put back.
policy=/usr/sbin/policy-rc.d
saved=
restore_policy() {
	if [ -n "$saved" ]; then
		mv -f "$saved" "$policy"
	else
		rm -f "$policy"
	fi
}
if [ -e "$policy" ]; then
	saved=$(mktemp "$policy.psrun-saved.XXXXXX")
	cp -p "$policy" "$saved"
fi
trap restore_policy EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rm -f "$policy"
printf '#!/bin/sh\n# Written by psrun scripts/install-deps.sh for the time of an install.\nexit 101\n' >"$policy"
chmod 755 "$policy"

apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
