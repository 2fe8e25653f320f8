#!/bin/bash
# SPDX-License-Identifier: MIT
# Run every test tier that is built, then print one closing line
# "N passed, N failed, N skipped". Tiers that need root say so and are
# reported as skipped when not root; they never pass silently.
set -u

# Usage: run-tests.sh BUILD [--vm] [--fuzz]
#   --vm    also the kernel matrix VM stage (scripts/vm-check.sh)
#   --fuzz  also the libFuzzer targets, FUZZ_SECONDS (default 15) each
BUILD=${1:-build}
shift
WITH_VM=
WITH_FUZZ=
for arg in "$@"; do
	case "$arg" in
	--vm) WITH_VM=--vm ;;
	--fuzz) WITH_FUZZ=1 ;;
	*) echo "run-tests.sh: unknown option $arg" >&2; exit 2 ;;
	esac
done
export PSRUN_BUILD=$BUILD
# gvisor: the core integration, hostile and session tests under both
# backends (runsc; its tests skip, saying why, where runsc cannot run).
TIERS="unit kernel integration escape oci session gvisor image"
ROOT_TIERS="kernel integration escape oci session gvisor image"

total_pass=0
total_fail=0
total_skip=0
failed_tiers=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# critest and crictl take minutes to build from source (the cri tier,
# below): start the build now, at the lowest priority, so it overlaps the
# tiers before it instead of adding to them; the cri tier waits for it.
cri_prebuild=""
if [ "$(id -u)" -eq 0 ] && [ -x "$BUILD/psrun" ] && command -v go >/dev/null; then
	nice -n 19 scripts/fetch-cri-tools.sh "$BUILD" >/dev/null 2>"$BUILD/cri-prebuild.log" </dev/null &
	cri_prebuild=$!
fi

# The layering check's own test (tests/layering): a breach of each wall of
# scripts/check-layering.sh planted in a copy of the tree. No root, no build.
echo "== layering: each wall of scripts/check-layering.sh breached in a copy of the tree"
start=$(date +%s)
tests/layering/run.sh </dev/null | grep -v '^ok - ' | tee "$log"
layering_status=${PIPESTATUS[0]}
line=$(grep -E '^layering: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
if [ -n "$line" ]; then
	read -r lp lf lsk <<<"$(sed -E 's/layering: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
	total_pass=$((total_pass + lp))
	total_fail=$((total_fail + lf))
	total_skip=$((total_skip + lsk))
else
	total_fail=$((total_fail + 1))
fi
echo "== layering: ${line:-no summary} ($(($(date +%s) - start)) s)"
if [ "$layering_status" -ne 0 ] || [ -z "$line" ]; then
	failed_tiers="$failed_tiers layering"
fi

for tier in $TIERS; do
	bin="$BUILD/tests/$tier"
	if [ ! -x "$bin" ]; then
		continue
	fi
	if [ "$(id -u)" -ne 0 ] && [[ " $ROOT_TIERS " == *" $tier "* ]]; then
		echo "== $tier: SKIPPED (needs root: namespaces, cgroups, seccomp)"
		total_skip=$((total_skip + 1))
		continue
	fi
	echo "== $tier"
	start=$(date +%s)
	# Criterion runs each test in its own process; -j2 matches these machines.
	"$bin" --jobs=2 --verbose=1 </dev/null >"$log" 2>&1
	status=$?
	grep -vE '^\[(RUN|PASS) \]|^\[----\] +[^ ]+: [^ ]+$' "$log"
	synth=$(grep -E 'Synthesis: Tested: [0-9]+' "$log" | tail -1)
	tested=$(sed -nE 's/.*Tested: ([0-9]+).*/\1/p' <<<"$synth")
	passing=$(sed -nE 's/.*Passing: ([0-9]+).*/\1/p' <<<"$synth")
	failing=$(sed -nE 's/.*Failing: ([0-9]+).*/\1/p' <<<"$synth")
	crashing=$(sed -nE 's/.*Crashing: ([0-9]+).*/\1/p' <<<"$synth")
	skipped=$(grep -cE '^\[SKIP\]' "$log")
	if [ -z "$synth" ]; then
		echo "== $tier: no test summary (exit $status)"
		failed_tiers="$failed_tiers $tier"
		total_fail=$((total_fail + 1))
		continue
	fi
	total_pass=$((total_pass + passing))
	# Criterion's Failing already counts the crashed tests.
	total_fail=$((total_fail + failing))
	total_skip=$((total_skip + skipped))
	echo "== $tier: $tested tested, $passing passed, $failing failed ($crashing crashed), $skipped skipped ($(($(date +%s) - start)) s)"
	if [ "$status" -ne 0 ] || [ "$failing" -ne 0 ]; then
		failed_tiers="$failed_tiers $tier"
	fi
done

# The network modes against a fake internet of network namespaces that the
# tier builds itself (tests/net, docs/network.md).
if [ -x "$BUILD/psrun" ]; then
	echo "== net: network modes in a fake internet of network namespaces"
	start=$(date +%s)
	tests/net/run.sh "$BUILD" </dev/null | tee "$log"
	net_status=${PIPESTATUS[0]}
	line=$(grep -E '^net: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -n "$line" ]; then
		read -r np nf ns <<<"$(sed -E 's/net: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
		total_pass=$((total_pass + np))
		total_fail=$((total_fail + nf))
		total_skip=$((total_skip + ns))
	else
		total_fail=$((total_fail + 1))
	fi
	echo "== net: ${line:-no summary} ($(($(date +%s) - start)) s)"
	if [ "$net_status" -ne 0 ] || [ -z "$line" ]; then
		failed_tiers="$failed_tiers net"
	fi
fi

# psrun run as users with no privileges, made and removed by the tier
# (tests/rootless, docs/rootless.md).
if [ -x "$BUILD/psrun" ]; then
	echo "== rootless: psrun run as users without privileges"
	start=$(date +%s)
	tests/rootless/run.sh "$BUILD" </dev/null | tee "$log"
	rl_status=${PIPESTATUS[0]}
	line=$(grep -E '^rootless: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -n "$line" ]; then
		read -r rp rf rs <<<"$(sed -E 's/rootless: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
		total_pass=$((total_pass + rp))
		total_fail=$((total_fail + rf))
		total_skip=$((total_skip + rs))
	else
		total_fail=$((total_fail + 1))
	fi
	echo "== rootless: ${line:-no summary} ($(($(date +%s) - start)) s)"
	if [ "$rl_status" -ne 0 ] || [ -z "$line" ]; then
		failed_tiers="$failed_tiers rootless"
	fi
fi

# The registry client and the image store against Debian's docker-registry
# in a network namespace the tier creates (tests/registry, docs/images.md).
if [ -x "$BUILD/tests/registry/imgtool" ]; then
	echo "== registry: registry client and store against docker-registry in a network namespace"
	start=$(date +%s)
	tests/registry/run.sh "$BUILD" </dev/null | tee "$log"
	registry_status=${PIPESTATUS[0]}
	line=$(grep -E '^registry: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -n "$line" ]; then
		read -r rg_p rg_f rg_s <<<"$(sed -E 's/registry: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
		total_pass=$((total_pass + rg_p))
		total_fail=$((total_fail + rg_f))
		total_skip=$((total_skip + rg_s))
	else
		total_fail=$((total_fail + 1))
	fi
	echo "== registry: ${line:-no summary} ($(($(date +%s) - start)) s)"
	if [ "$registry_status" -ne 0 ] || [ -z "$line" ]; then
		failed_tiers="$failed_tiers registry"
	fi
fi

# The OCI runtime under a real dockerd and containerd that the harness starts
# itself (tests/clients, docs/integration.md).
if [ -x "$BUILD/psrun" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== clients: SKIPPED (needs root: starts dockerd and containerd)"
		total_skip=$((total_skip + 1))
	else
		echo "== clients: docker and containerd with psrun as their runtime"
		start=$(date +%s)
		tests/clients/run.sh "$BUILD" </dev/null | tee "$log"
		clients_status=${PIPESTATUS[0]}
		line=$(grep -E '^clients: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
		if [ -n "$line" ]; then
			read -r cp cf cs <<<"$(sed -E 's/clients: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
			total_pass=$((total_pass + cp))
			total_fail=$((total_fail + cf))
			total_skip=$((total_skip + cs))
		else
			total_fail=$((total_fail + 1))
		fi
		echo "== clients: ${line:-no summary} ($(($(date +%s) - start)) s)"
		if [ "$clients_status" -ne 0 ] || [ -z "$line" ]; then
			failed_tiers="$failed_tiers clients"
		fi
	fi
fi

# The soak tier, short: load, kill points and the bad-input table
# (tests/soak/soak.sh; `make soak` runs the long version).
if [ -x "$BUILD/psrun" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== soak: SKIPPED (needs root: namespaces, cgroups)"
		total_skip=$((total_skip + 1))
	else
		echo "== soak: runs, OCI cycles, kill points, bad inputs (short)"
		start=$(date +%s)
		tests/soak/soak.sh "$BUILD" --short </dev/null | tee "$log"
		soak_status=${PIPESTATUS[0]}
		line=$(grep -E '^soak: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
		if [ -n "$line" ]; then
			read -r sp sf <<<"$(sed -E 's/soak: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$line")"
			total_pass=$((total_pass + sp))
			total_fail=$((total_fail + sf))
		else
			total_fail=$((total_fail + 1))
		fi
		echo "== soak: ${line:-no summary} ($(($(date +%s) - start)) s)"
		if [ "$soak_status" -ne 0 ] || [ -z "$line" ]; then
			failed_tiers="$failed_tiers soak"
		fi
	fi
fi

# bench/compare.sh, the regression guard of the start paths: its bad inputs
# and one pair of the build against itself (tests/bench/run.sh, ~2 s).
if [ -x "$BUILD/psrun" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== bench: SKIPPED (needs root: starts sandboxes)"
		total_skip=$((total_skip + 1))
	else
		echo "== bench: bench/compare.sh's inputs and one pair"
		start=$(date +%s)
		tests/bench/run.sh "$BUILD" </dev/null | grep -v '^ok - ' | tee "$log"
		bench_status=${PIPESTATUS[0]}
		line=$(grep -E '^bench: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
		if [ -n "$line" ]; then
			read -r bp bf <<<"$(sed -E 's/bench: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$line")"
			total_pass=$((total_pass + bp))
			total_fail=$((total_fail + bf))
		else
			total_fail=$((total_fail + 1))
		fi
		echo "== bench: ${line:-no summary} ($(($(date +%s) - start)) s)"
		if [ "$bench_status" -ne 0 ] || [ -z "$line" ]; then
			failed_tiers="$failed_tiers bench"
		fi
	fi
fi

# psrun mcp under real MCP clients from npm (tests/clients/mcp,
# docs/mcp.md); its npm packages go to $BUILD/npm.
if [ -x "$BUILD/psrun" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== mcp: SKIPPED (needs root: sessions)"
		total_skip=$((total_skip + 1))
	else
		echo "== mcp: MCP clients from npm (SDK 1.x, client 2.x, inspector) against psrun mcp"
		start=$(date +%s)
		tests/clients/mcp/run.sh "$BUILD" </dev/null | tee "$log"
		mcp_status=${PIPESTATUS[0]}
		line=$(grep -E '^mcp: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
		if [ -n "$line" ]; then
			read -r mp mf ms <<<"$(sed -E 's/mcp: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
			total_pass=$((total_pass + mp))
			total_fail=$((total_fail + mf))
			total_skip=$((total_skip + ms))
		else
			total_fail=$((total_fail + 1))
		fi
		echo "== mcp: ${line:-no summary} ($(($(date +%s) - start)) s)"
		if [ "$mcp_status" -ne 0 ] || [ -z "$line" ]; then
			failed_tiers="$failed_tiers mcp"
		fi
	fi
fi

# crun's own test suite with psrun as its runtime (tests/peer, docs/testing.md):
# fetched from Debian's crun source package into $BUILD/peer.
if [ -x "$BUILD/psrun" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== peer: SKIPPED (needs root: crun's tests create containers)"
		total_skip=$((total_skip + 1))
	else
		echo "== peer: crun's tests/*.py with OCI_RUNTIME=psrun"
		start=$(date +%s)
		tests/peer/run.sh "$BUILD" </dev/null | grep -vE '^(ok|skip|xfail) - ' | tee "$log"
		peer_status=${PIPESTATUS[0]}
		line=$(grep -E '^peer: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
		if [ -n "$line" ]; then
			read -r pp pf ps <<<"$(sed -E 's/peer: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
			total_pass=$((total_pass + pp))
			total_fail=$((total_fail + pf))
			total_skip=$((total_skip + ps))
		else
			total_fail=$((total_fail + 1))
		fi
		echo "== peer: ${line:-no summary} ($(($(date +%s) - start)) s)"
		if [ "$peer_status" -ne 0 ] || [ -z "$line" ]; then
			failed_tiers="$failed_tiers peer"
		fi
	fi
fi

# containerd's CRI with psrun and runc as runtime handlers (tests/cri,
# docs/testing.md): a crictl pod life cycle per handler and critest's
# whole non-serial suite side by side (as `make check-cri`).
# critest and crictl are built from cri-tools' vendored sources into
# $BUILD/cri by scripts/fetch-cri-tools.sh (cached; the tier skips, saying
# why, where there is no Go or no source).
if [ -x "$BUILD/psrun" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== cri: SKIPPED (needs root: starts containerd and creates pods)"
		total_skip=$((total_skip + 1))
	else
		echo "== cri: containerd CRI with the psrun and runc handlers (crictl, critest)"
		start=$(date +%s)
		# the build started at the top (its failure is the tier's skip reason)
		[ -z "$cri_prebuild" ] || wait "$cri_prebuild" || true
		tests/cri/run.sh "$BUILD" </dev/null | grep -vE '^(ok|skip) - critest: ' | tee "$log"
		cri_status=${PIPESTATUS[0]}
		line=$(grep -E '^cri: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
		if [ -n "$line" ]; then
			read -r cp cf cs <<<"$(sed -E 's/cri: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
			total_pass=$((total_pass + cp))
			total_fail=$((total_fail + cf))
			total_skip=$((total_skip + cs))
		else
			total_fail=$((total_fail + 1))
		fi
		echo "== cri: ${line:-no summary} ($(($(date +%s) - start)) s)"
		if [ "$cri_status" -ne 0 ] || [ -z "$line" ]; then
			failed_tiers="$failed_tiers cri"
		fi
	fi
fi

# The Python binding (bindings/python, unittest) over $BUILD/libpsrun.so.
if [ -e "$BUILD/libpsrun.so" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "== python: SKIPPED (needs root: sessions)"
		total_skip=$((total_skip + 1))
	else
		echo "== python: the ctypes binding (bindings/python/tests)"
		start=$(date +%s)
		# A SANITIZE=1 library needs its runtime loaded before it.
		asan=$(ldd "$BUILD/libpsrun.so" 2>/dev/null | awk '/libasan/ {print $3}')
		PSRUN_LIBRARY=$BUILD/libpsrun.so \
			env ${asan:+LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0} timeout 120 \
			python3 -m unittest discover -s bindings/python/tests </dev/null >"$log" 2>&1
		py_status=$?
		cat "$log"
		ran=$(sed -nE 's/^Ran ([0-9]+) tests? in .*/\1/p' "$log" | tail -1)
		py_fail=$(sed -nE 's/.*(failures|errors)=([0-9]+).*/\2/p' "$log" | awk '{s += $1} END {print s + 0}')
		py_skip=$(sed -nE 's/.*skipped=([0-9]+).*/\1/p' "$log" | tail -1)
		ran=${ran:-0} py_fail=${py_fail:-0} py_skip=${py_skip:-0}
		if [ "$py_status" -ne 0 ] && [ "$py_fail" -eq 0 ]; then
			py_fail=1
		fi
		total_pass=$((total_pass + ran - py_fail - py_skip))
		total_fail=$((total_fail + py_fail))
		total_skip=$((total_skip + py_skip))
		echo "== python: $ran tested, $py_fail failed, $py_skip skipped ($(($(date +%s) - start)) s)"
		if [ "$py_status" -ne 0 ]; then
			failed_tiers="$failed_tiers python"
		fi
	fi
fi

if [ "$WITH_VM" = "--vm" ]; then
	echo "== vm: the kernel matrix (scripts/vm-check.sh, docs/testing.md)"
	# The host's column is the tiers above, run moments ago: not again.
	VM_HOST_COLUMN=${VM_HOST_COLUMN:-0} scripts/vm-check.sh "$BUILD" | tee "$log"
	vm_status=${PIPESTATUS[0]}
	vm_line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -n "$vm_line" ]; then
		read -r vp vf vs <<<"$(sed -E 's/vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$vm_line")"
		total_pass=$((total_pass + vp))
		total_fail=$((total_fail + vf))
		total_skip=$((total_skip + vs))
	elif grep -q '^SKIP:' "$log"; then
		total_skip=$((total_skip + 1))
	fi
	if [ "$vm_status" -ne 0 ]; then
		failed_tiers="$failed_tiers vm"
	fi
fi

if [ -n "$WITH_FUZZ" ]; then
	echo "== fuzz: the parsers of untrusted text (tests/fuzz, libFuzzer + ASan + UBSan)"
	if make --no-print-directory -s fuzz-build && scripts/run-fuzz.sh build-fuzz "${FUZZ_SECONDS:-15}"; then
		total_pass=$((total_pass + $(ls tests/fuzz/fuzz_*.c | wc -l)))
	else
		total_fail=$((total_fail + 1))
		failed_tiers="$failed_tiers fuzz"
	fi
fi

if [ -n "$failed_tiers" ]; then
	echo "failing tiers:$failed_tiers"
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ -z "$failed_tiers" ]
