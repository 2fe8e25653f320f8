# SPDX-License-Identifier: MIT
# Sourced by tests/rootless/run.sh: the escape tier's second runner,
# build/tests/escape as a user with no privileges (PSRUN_TEST_ROOTLESS=1:
# a test that needs root, or a cgroup this user has none of, skips saying
# why; the rest run as in root's run). Its counts join the tier's.
ESCAPE=$(cd "$BUILD" && pwd)/tests/escape
eu=$ONE
[ -n "$sub_start" ] && command -v newuidmap >/dev/null && eu=$SUB
if [ ! -x "$ESCAPE" ]; then
	skipped escape "$ESCAPE is not built (make tests)"
else
	ex=$(mktemp -d)
	chmod 755 "$ex"
	install -d -m 700 -o "$eu" -g "$eu" "$ex/run"
	total=$("$ESCAPE" --list | grep -c '^[├└]')
	as "$eu" env PSRUN_TEST_ROOTLESS=1 PSRUN_BUILD="$(cd "$BUILD" && pwd)" XDG_RUNTIME_DIR="$ex/run" \
		"$ESCAPE" -j1 --verbose >"$out" 2>&1
	rc=$?
	line=$(grep 'Synthesis: Tested' "$out" | tail -1)
	tested=$(echo "$line" | sed -n 's/.*Tested: \([0-9]*\).*/\1/p')
	passing=$(echo "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
	if [ -z "$tested" ] || [ -z "$total" ] || [ "$total" -eq 0 ]; then
		bad escape "no synthesis (rc $rc): $(tail -5 "$out")"
	else
		grep '^\[SKIP\]' "$out" | grep -v 'Test is disabled' | sed 's/^\[SKIP\] /skip - escape rootless: /' | cut -c1-300
		grep -E '^\[FAIL\]' "$out" | sed 's/^/FAIL - escape rootless: /'
		pass=$((pass + passing))
		fail=$((fail + tested - passing))
		skip=$((skip + total - tested))
		echo "escape as $eu (rootless): $passing of $tested passed, $((total - tested)) skipped, rc $rc"
		[ "$rc" -eq 0 ] || [ "$tested" -ne "$passing" ] || bad escape "rc $rc: $(tail -5 "$out")"
	fi
	rm -rf "$ex"
fi
