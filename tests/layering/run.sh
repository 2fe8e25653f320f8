#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/layering/run.sh [MAKE]
#
# The test of scripts/check-layering.sh: in a copy of the tree (never the
# tree itself) it plants a breach of each wall, one at a time, and expects
# the check to fail naming that file, line and wall, and nothing else new;
# and for things that are no breach (a wall's allowed headers, a marked
# abort), nothing. The tree as it is must give the same answer copied as
# checked in place, and no offence but those listed in KNOWN. Ends with
# "layering: N passed, N failed, N skipped". Needs no root, about a second.
set -u
cd "$(dirname "$0")/../.." || exit 1
MAKE_CMD=${1:-make}
CHECK=$(pwd)/scripts/check-layering.sh

# Offences in the tree today, each being removed elsewhere (file, header,
# wall); an entry here no longer found is fine, one not here is a failure.
KNOWN='
'

tmp=$(mktemp -d "${TMPDIR:-/tmp}/psrun-layering.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
tree=$tmp/tree
mkdir "$tree"

passed=0
failed=0
pass() {
	echo "ok - $1"
	passed=$((passed + 1))
}
fail() {
	echo "FAIL - $1"
	shift
	for l in "$@"; do echo "  | $l"; done
	failed=$((failed + 1))
}

# The tree's files, as the check sees them; copied without .git, so that
# the copy is checked through its other listing (find).
if git rev-parse --show-toplevel >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard
else
	find . \( -name .git -o -name 'build*' \) -prune -o -type f -print
fi | while IFS= read -r f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
	xargs -0 cp --parents -t "$tree" || {
	echo "layering: cannot copy the tree"
	exit 1
}
cp "$tree/Makefile" "$tmp/Makefile.orig"

# check ROOT: the check's offence lines in $out, its status in $status.
check() {
	out=$("$CHECK" "$MAKE_CMD" "$1" 2>&1 >/dev/null)
	status=$?
	out=$(grep -v '^check-layering: FAILED$' <<<"$out")
}

# ---- The tree as it is -----------------------------------------------------
check .
in_place=$out in_place_status=$status
check "$tree"
baseline=$out
if [ "$out" = "$in_place" ] && [ "$status" = "$in_place_status" ]; then
	pass "the tree checked in place and copied: the same answer"
else
	fail "the tree checked in place and copied differ" "in place ($in_place_status): $in_place" \
		"copied ($status): $out"
fi
unknown=""
while IFS= read -r l; do
	[ -n "$l" ] || continue
	known=0
	while read -r kf kh kw; do
		[ -n "$kf" ] || continue
		case "$l" in
		"check-layering: $kf:"[0-9]*": includes $kh: wall \"$kw\":"*) known=1 ;;
		esac
	done <<<"$KNOWN"
	[ "$known" = 1 ] || unknown="$unknown$l"$'\n'
done <<<"$baseline"
if [ -n "$unknown" ]; then
	fail "the tree: offences not in KNOWN" "$unknown"
elif [ -z "$baseline" ] && [ "$status" = 0 ]; then
	pass "the tree passes"
elif [ -n "$baseline" ] && [ "$status" = 1 ]; then
	pass "the tree: only the known offences ($(grep -c . <<<"$baseline"))"
else
	fail "the tree: exit $status with offences:" "$baseline"
fi

# ---- Each wall breached ----------------------------------------------------
# plant NAME FILE TEXT EXPECT...: FILE (new, in the copy) holds TEXT; the
# check must fail and print, beyond the tree's own, exactly one line per
# EXPECT ("LINE WALL": FILE:LINE: ... wall "WALL"), or none and pass when
# there is no EXPECT.
plant() {
	local name=$1 file=$2 text=$3
	shift 3
	mkdir -p "$(dirname "$tree/$file")"
	printf '%s\n' "$text" >"$tree/$file"
	check "$tree"
	rm -f "$tree/$file"
	local new
	new=$(comm -13 <(sort <<<"$baseline") <(sort <<<"$out") | grep .)
	local want=$# got
	got=$(grep -c . <<<"$new")
	local missing=""
	for e in "$@"; do
		local line=${e%% *} wall=${e#* }
		grep -qF "check-layering: $file:$line: " <<<"$new" &&
			grep -F "check-layering: $file:$line: " <<<"$new" | grep -qF "wall \"$wall\"" ||
			missing="$missing $file:$line ($wall)"
	done
	if [ -n "$missing" ] || [ "$got" != "$want" ]; then
		fail "$name" "expected$missing, got $got new line(s):" "$new"
	elif [ "$want" -gt 0 ] && [ "$status" != 1 ]; then
		fail "$name" "named, but the check exited $status"
	elif [ "$want" = 0 ] && [ -z "$baseline" ] && [ "$status" != 0 ]; then
		fail "$name" "no breach, but the check exited $status"
	else
		pass "$name"
	fi
}

plant "the spine includes runtime/oci/" runtime/plant.h \
	'#include "runtime/oci/state.h"' "1 spine"
plant "the spine includes runtime/session/ and runtime/gvisor/" runtime/plant.c \
	$'#include "runtime/run.h"\n#include "runtime/session/session.h"\n#include <runtime/gvisor/gvisor.h>' \
	"2 spine" "3 spine"
plant "runtime/gvisor/ includes runtime/session/ and runtime/oci/" runtime/gvisor/plant.h \
	$'#include "runtime/run.h"\n#include "runtime/session/session.h"\n#include "runtime/oci/config.h"' \
	"2 gvisor" "3 gvisor"
plant "runtime/oci/ includes runtime/session/ and runtime/gvisor/" runtime/oci/plant.h \
	$'#include "runtime/oci/state.h"\n#include "runtime/session/session.h"\n#include "runtime/gvisor/gvisor.h"' \
	"2 oci" "3 oci"
plant "cli/mcp/ includes runtime/ and rootfs/ (psrun.h, cli/, common/ it may)" cli/mcp/plant.c \
	$'#include <psrun.h>\n#include "psrun.h"\n#include "cli/cli.h"\n#include "cli/mcp/json.h"\n#include "common/error.h"\n#include <stdio.h>\n#include "runtime/run.h"\n#include "rootfs/mounts.h"' \
	"7 mcp" "8 mcp"
plant "cli/mcp/ includes another file of the tree by a relative path" cli/mcp/plant.h \
	'#include "../../policy/caps.h"' "1 mcp"
plant "common/ includes policy/ and runtime/cgroup/ (itself, psrun.h it may)" common/plant.h \
	$'#include "common/error.h"\n#include <psrun.h>\n#include "policy/caps.h"\n#include "runtime/cgroup/cgroup.h"' \
	"3 common" "4 common"
plant "common/ includes cli/" common/plant.c '#include "cli/cli.h"' "1 common" "1 library"
plant "policy/ includes rootfs/ and netns/" policy/plant.h \
	$'#include "policy/caps.h"\n#include "rootfs/mounts.h"\n#include "netns/stats.h"' \
	"2 siblings" "3 siblings"
plant "policy/ includes image/ (by ../ too)" policy/plant.c \
	$'#include "policy/policy.h"\n#include "image/reference.h"\n#include "../image/store.h"' \
	"2 policy-image" "3 policy-image"
plant "rootfs/ includes policy/ and netns/" rootfs/plant.c \
	$'#include "rootfs/mounts.h"\n#include "policy/caps.h"\n#include <netns/stats.h>' \
	"2 siblings" "3 siblings"
plant "netns/ includes policy/ (by ../) and rootfs/" netns/plant.h \
	$'#include "netns/stats.h"\n#include "../policy/caps.h"\n#include "rootfs/mounts.h"' \
	"2 siblings" "3 siblings"
plant "image/ includes policy/ and netns/ (common/ it may)" image/plant.h \
	$'#include "common/error.h"\n#include "policy/policy.h"\n#include "netns/netns.h"\n#include "runtime/plan.h"' \
	"2 image" "3 image" "4 subsystems"
plant "a subsystem includes runtime/" policy/plant.h \
	$'#include "runtime/result.h"\n#include "runtime/cgroup/cgroup.h"' "1 subsystems" "2 subsystems"
plant "runtime/cgroup/ includes runtime/ (its own it may)" runtime/cgroup/plant.h \
	$'#include "runtime/cgroup/internal.h"\n#include "runtime/result.h"' "2 cgroup"
plant "a session's client half includes its supervisor half" runtime/session/exec.c \
	$'#include "runtime/session/session.h"\n#include "runtime/session/proto.h"\n#include "runtime/session/supervisor.h"\n#include "runtime/session/net.h"' \
	"3 session-client" "4 session-client"
plant "a session's supervisor half includes its client half" runtime/session/supervisor-plant.c \
	$'#include "runtime/session/supervisor.h"\n#include "runtime/session/proto.h"\n#include "runtime/session/package.h"\n#include "runtime/session/session.h"' \
	"4 session-supervisor"
plant "runtime/session/ includes cli/" runtime/session/plant.h '#include "cli/cli.h"' "1 library"
plant "include/ includes a header of the tree" include/plant.h '#include "common/error.h"' \
	"1 public"
plant "library code prints or exits" netns/plant.c \
	$'static void f(void)\n{\n\tprintf("x");\n\tfprintf(stderr, "x");\n\texit(1);\n\t_exit(1);\n}' \
	"3 prints" "4 prints" "5 prints"
plant "library code aborts unmarked; a marker of another kind does not do" runtime/gvisor/plant.c \
	$'static void f(void)\n{\n\tabort();\n\tabort(); /* layering: a program\'s entry */\n}' \
	"3 aborts" "4 aborts"
plant "a fail-closed abort, marked, is no breach; the marker does not excuse exit" rootfs/plant.c \
	$'static void f(void)\n{\n\tabort(); /* layering: fail closed */\n\texit(1); /* layering: fail closed */\n}' \
	"4 prints"
plant "the allowed includes of each wall are no breach" runtime/session/plant.c \
	$'#include "runtime/session/session.h"\n#include "runtime/gvisor/gvisor.h"\n#include "runtime/run.h"\n#include "policy/policy.h"\n#include "common/error.h"\n#include <psrun.h>\n#include <sys/stat.h>'

# libpsrun's composition: a C file the Makefile leaves out, cli/ put in.
mkdir -p "$tree/runtime/newdir"
echo 'int plant;' >"$tree/runtime/newdir/plant.c"
check "$tree"
rm -r "$tree/runtime/newdir"
if grep -q '^check-layering: Makefile: LIB_SRCS: runtime/newdir/plant.c: wall "libpsrun"' <<<"$out" &&
	[ "$status" = 1 ]; then
	pass "a library C file left out of LIB_SRCS"
else
	fail "a library C file left out of LIB_SRCS: not named (exit $status)" "$out"
fi
echo 'LIB_SRCS += cli/cli.c' >>"$tree/Makefile"
check "$tree"
cp "$tmp/Makefile.orig" "$tree/Makefile"
if grep -q '^check-layering: Makefile: LIB_SRCS: cli/cli.c: wall "libpsrun"' <<<"$out" &&
	[ "$status" = 1 ]; then
	pass "cli/ in LIB_SRCS"
else
	fail "cli/ in LIB_SRCS: not named (exit $status)" "$out"
fi

echo "layering: $passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]
