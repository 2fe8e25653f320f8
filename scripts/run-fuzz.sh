#!/bin/bash
# SPDX-License-Identifier: MIT
# Run every libFuzzer target in BUILD for SECONDS each, from its seed corpus
# in tests/fuzz/corpus/<target>/. Inputs the fuzzer finds stay in a temp dir;
# a crash, leak or sanitizer report fails the run and prints the input, and
# so does an input that takes more than FUZZ_TIMEOUT seconds (default 1):
# the parsers must be linear and bounded, and libFuzzer's -timeout makes a
# slow input a finding like a crash.
set -u
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-20}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for target in "$BUILD"/fuzz_*; do
	[ -x "$target" ] || continue
	name=$(basename "$target")
	mkdir -p "$tmp/$name"
	echo "== fuzz: $name for ${SECONDS_EACH}s"
	if ! "$target" -max_total_time="$SECONDS_EACH" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 \
		-artifact_prefix="$tmp/$name-" -print_final_stats=1 \
		"$tmp/$name" "tests/fuzz/corpus/$name" >"$tmp/$name.log" 2>&1; then
		echo "== fuzz: $name FAILED"
		grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written|timeout after" "$tmp/$name.log" |
			head -20
		for a in "$tmp/$name"-*; do
			[ -f "$a" ] || continue
			echo "-- input $(basename "$a") (base64):"
			base64 "$a" | head -20
		done
		status=1
	else
		grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$tmp/$name.log" |
			sed "s/^/   /"
	fi
done
exit "$status"
