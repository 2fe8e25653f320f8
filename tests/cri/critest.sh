# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# critest (cri-tools' conformance suite) against the same containerd, once
# with the psrun handler and once with runc, compared by compare.py with
# known-failures.txt. Sourced by run.sh, which defines MODE, FOCUS,
# SKIP_RE, CRITEST, SOCK, WORK, KNOWN and the result counters.

critest_run() { # critest_run HANDLER
	local h=$1 args
	args=(-runtime-endpoint "unix://$SOCK" -image-endpoint "unix://$SOCK"
		-runtime-handler "$h" -ginkgo.skip "$SKIP_RE" -ginkgo.no-color
		-ginkgo.json-report "$WORK/critest-$h.json" -ginkgo.timeout 20m)
	[ "$MODE" = full ] || args+=(-ginkgo.focus "$FOCUS")
	# Its exit status only says something failed; the report says what.
	timeout -k 10 1300 "$CRITEST" "${args[@]}" >"$WORK/critest-$h.log" 2>&1 </dev/null || true
	remove_pods
}

critest_side_by_side() {
	local h t0 line p f s
	if [ "$MODE" = off ]; then
		skipped critest "CRI_CRITEST=off"
		return 0
	fi
	for h in psrun runc; do
		t0=$SECONDS
		critest_run "$h"
		echo "# critest --runtime-handler $h: $((SECONDS - t0)) s"
	done
	for h in psrun runc; do
		if [ ! -s "$WORK/critest-$h.json" ]; then
			not_ok "critest --runtime-handler $h" "no report: $(tail -n 1 "$WORK/critest-$h.log")"
			return 0
		fi
	done
	python3 "$HERE/compare.py" "$KNOWN" "$MODE" "$WORK/critest-psrun.json" "$WORK/critest-runc.json" \
		>"$WORK/compare.out" || true
	grep -v '^counts ' "$WORK/compare.out" || true
	line=$(grep '^counts ' "$WORK/compare.out" || true)
	if [ -z "$line" ]; then
		not_ok "critest comparison" "compare.py printed no counts"
		return 0
	fi
	read -r _ p f s <<<"$line"
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	SKIPPED=$((SKIPPED + s))
}
