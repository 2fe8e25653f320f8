# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by tests/net/run.sh, last: sessions in the fake internet.
#   - a session's own network (restricted), as psrun run's, across execs,
#     with each exec's counts, and nothing left after destroy or after
#     kill -9 of its supervisor and psrun gc; a session with the name
#     check (names.sh's shared address), each exec with its own refusals;
#   - installs (psrun session install, psrun_install_package) from the fake
#     PyPI and npm registry on their own network (install_network), never
#     widening the session's;
#   - the approval hook: the approver command's yes, no, absence, hang
#     and crash, through the CLI and psrun mcp;
#   - examples/agent_loop.py against the fake index.
# Uses run.sh's helpers (ok, bad, expect, leftovers) and its namespaces.

SROOT=$TMP/sessions
mkdir -m 0700 "$SROOT"
export PSRUN_SESSION_ROOT=$SROOT

inside() { nsenter --net=/run/netns/$OUT "$PSRUN" "$@"; }

# screate OPTIONS...: prints the new session's id; on failure nothing, and
# the failure counts.
# (It runs in a subshell: the failure is written down and counted at the end.)
screate() {
	inside session create "$@" 2>"$TMP/screate.err" && return
	echo "[FAIL] session create $*: $(cat "$TMP/screate.err")" >>"$TMP/screate.failed"
}
sup_of() { awk '/^pid /{print $2}' "$SROOT/$1/info" 2>/dev/null; }
# sprobe ID OUTFILE probe commands...: the probe as one exec (--json on OUTFILE.err)
sprobe() {
	local id=$1 out=$2
	shift 2
	inside session exec --json "$id" -- "$PY" -c "$PROBE" "$@" >"$out" 2>"$out.err"
}
# Every session here takes its addresses from a pool of its own (in the
# benchmark range, apart from the fake internet's hosts), so that a lease
# left in it is this file's leak, whatever other psrun runs on the host do
# with /run/psrun/net meanwhile.
POOL=198.19.128.0/20
pool_leases() { ls /run/psrun/net 2>/dev/null | grep '^198\.19\.1[2-4][0-9]\.' ; }

# Leases, veths and tables left in OUT, past what the psrun run cases
# before left there (their own checks report those).
out_veths() { ip -n $OUT -o link show 2>/dev/null | awk -F': ' '/ psr/ {print $2}' | cut -d@ -f1 | sort; }
out_tables() { ip netns exec $OUT nft list tables 2>/dev/null | grep psrun_ | sort; }
VETHS_BEFORE=$(out_veths)
TABLES_BEFORE=$(out_tables)
sleftovers() {
	local l="" i
	for i in $(seq 30); do
		[ "$(out_veths)" = "$VETHS_BEFORE" ] && break
		sleep 0.1
	done
	[ "$(out_veths)" != "$VETHS_BEFORE" ] && l="$l veth"
	[ "$(out_tables)" != "$TABLES_BEFORE" ] && l="$l nft-table"
	[ -n "$(pool_leases)" ] && l="$l lease:$(pool_leases | tr '\n' ' ')"
	pgrep -f "psnet-leak-$$" >/dev/null && l="$l process"
	echo "$l"
}

# What an ended session left: the network's leftovers, its state directory,
# its supervisor, its cgroups (psrun-<supervisor pid>-N).
session_left() {
	local id=$1 sup=$2 l
	l=$(sleftovers)
	[ -e "$SROOT/$id" ] && l="$l state"
	# (A zombie is gone: it waits for whoever adopted it to reap it.)
	[ -n "$sup" ] && [ -e "/proc/$sup" ] && ! grep -q '^State:.*Z' "/proc/$sup/status" 2>/dev/null &&
		l="$l supervisor"
	[ -n "$sup" ] && [ -n "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "psrun-$sup-*" 2>/dev/null | head -1)" ] &&
		l="$l cgroup"
	echo "$l"
}

# ---- the session's own network (restricted), as psrun run's ----
# The address layer (the fake hosts speak first: see RESTRICTED in run.sh).
S_RESTRICTED=(-o network=restricted -o 'allow_domains=[allowed.test]' -o dns_upstream=[198.18.0.53]
	-o network_pool=$POOL -o name_check=off)
sid=$(screate "${S_RESTRICTED[@]}" -o network_log="$TMP/snetlog")
if [ -z "$sid" ]; then
	bad "session: a restricted session starts" "$(cat "$TMP/screate.err")"
else
	ssup=$(sup_of "$sid")
	sprobe "$sid" "$TMP/s1" resolve allowed.test -- tcp 198.18.0.10 80
	expect "$TMP/s1" "resolve allowed.test" 198.18.0.10 "session: an allowed name resolves (first exec)"
	expect "$TMP/s1" "tcp 198.18.0.10 80" ok "session: its address is reachable (first exec)"
	sprobe "$sid" "$TMP/s2" resolve allowed.test -- tcp 198.18.0.10 443 -- resolve other.test -- \
		tcp 198.18.0.20 80 -- tcp 198.18.0.53 53 -- tcp GW 8081
	expect "$TMP/s2" "resolve allowed.test" 198.18.0.10 "session: an allowed name resolves (second exec)"
	expect "$TMP/s2" "tcp 198.18.0.10 443" ok "session: its address is reachable (second exec)"
	expect "$TMP/s2" "resolve other.test" nxdomain "session: a name not allowed gets NXDOMAIN"
	expect "$TMP/s2" "tcp 198.18.0.20 80" refused "session: an address never resolved is refused"
	expect "$TMP/s2" "tcp 198.18.0.53 53" refused "session: the upstream resolver is unreachable"
	expect "$TMP/s2" "tcp GW 8081" refused "session: the host is unreachable"
	if grep -q '"network":{"allowed_queries":[1-9].*"name":"other.test"' "$TMP/s2.err" &&
		grep -q '"addr":"198.18.0.20","port":80,"proto":"tcp"' "$TMP/s2.err"; then
		ok "session: the exec's result names the denied name and the refused address"
	else
		bad "session: the exec's result names the denied name and the refused address" "$(tail -c 400 "$TMP/s2.err")"
	fi
	if grep -q '"network":{"allowed_queries":[1-9][0-9]*,"denied_queries":0,"denied":\[\]' "$TMP/s1.err"; then
		ok "session: each exec counts its own: the first shows no denial"
	else
		bad "session: each exec counts its own: the first shows no denial" "$(tail -c 400 "$TMP/s1.err")"
	fi
	if grep -q '"event":"dns","name":"other.test".*"action":"deny"' "$TMP/snetlog" 2>/dev/null &&
		grep -q '"event":"connect","addr":"198.18.0.20","port":80' "$TMP/snetlog"; then
		ok "session: network_log has the denied name and the refused connection"
	else
		bad "session: network_log has the denied name and the refused connection" "$(head -c 300 "$TMP/snetlog" 2>/dev/null)"
	fi
	inside session destroy "$sid" 2>"$TMP/sd.err" || bad "session: destroy" "$(cat "$TMP/sd.err")"
	l=$(session_left "$sid" "$ssup")
	[ -z "$l" ] && ok "session: nothing left after destroy (veth, table, lease, process, cgroup, state)" ||
		bad "session: nothing left after destroy" "$l"
fi

# The name check (names.sh) in a session: its supervisor runs the relay;
# each exec's result has its own refusals.
if [ -e "$NT/srv.pem" ]; then
	sid=$(screate -o network=restricted -o 'allow_domains=["*.zone.test"]' \
		-o dns_upstream=[198.18.0.53] -o network_pool=$POOL)
	if [ -z "$sid" ]; then
		bad "session: a name-checked session starts" "$(cat "$TMP/screate.err")"
	else
		ssup=$(sup_of "$sid")
		sprobe "$sid" "$TMP/sn1" resolve shared.zone.test -- hello 198.18.0.40 443 shared.zone.test
		sprobe "$sid" "$TMP/sn2" http 198.18.0.40 80 shared.zone.test,other.test -- \
			hello 198.18.0.40 443 other.test
		expect "$TMP/sn1" "hello 198.18.0.40 443 shared.zone.test" ok "session: the name check relays an allowed SNI"
		expect "$TMP/sn2" "http 198.18.0.40 80 shared.zone.test,other.test" hello-shared.zone.test,reset \
			"session: a later exec's kept-alive connection switching Host is cut (the pin of the first exec holds)"
		expect "$TMP/sn2" "hello 198.18.0.40 443 other.test" reset "session: SNI other.test is reset"
		if grep -q '"name":"http host other.test to 198.18.0.40:80"' "$TMP/sn2.err" &&
			grep -q '"name":"tls sni other.test to 198.18.0.40:443"' "$TMP/sn2.err" &&
			! grep -q 'other.test to' "$TMP/sn1.err"; then
			ok "session: each exec's result names its own refused connections"
		else
			bad "session: each exec's result names its own refused connections" "$(tail -c 400 "$TMP/sn2.err")"
		fi
		inside session destroy "$sid" 2>/dev/null
		l=$(session_left "$sid" "$ssup")
		[ -z "$l" ] && ok "session: nothing left of a name-checked session after destroy" ||
			bad "session: nothing left of a name-checked session after destroy" "$l"
	fi
fi

# full: every name, still not the host.
sid=$(screate -o network=full -o dns_upstream=[198.18.0.53] -o network_pool=$POOL)
if [ -n "$sid" ]; then
	sprobe "$sid" "$TMP/sf" resolve other.test -- tcp 198.18.0.20 80 -- tcp GW 8081
	expect "$TMP/sf" "resolve other.test" 198.18.0.20 "session: full resolves any name"
	expect "$TMP/sf" "tcp 198.18.0.20 80" ok "session: full reaches the internet"
	expect "$TMP/sf" "tcp GW 8081" refused "session: full does not reach the host"
	inside session destroy "$sid" 2>/dev/null
else
	bad "session: a full session starts" "$(cat "$TMP/screate.err")"
fi

# kill -9 of the supervisor, an exec running, then psrun gc.
sid=$(screate "${S_RESTRICTED[@]}")
if [ -n "$sid" ]; then
	ssup=$(sup_of "$sid")
	inside session exec "$sid" -- /bin/sh -c "sleep 30" psnet-leak-$$ >/dev/null 2>&1 &
	epid=$!
	sleep 0.5
	kill -9 "$ssup"
	wait $epid 2>/dev/null
	sleep 0.3
	inside gc >/dev/null 2>&1
	l=$(session_left "$sid" "$ssup")
	[ -z "$l" ] && ok "session: kill -9 of the supervisor, then psrun gc: nothing left" ||
		bad "session: kill -9 of the supervisor, then psrun gc: nothing left" "$l"
else
	bad "session: a restricted session starts" "$(cat "$TMP/screate.err")"
fi

# psrun mcp in a restricted sandbox: the text says what the network refused
# (a Blocked: line of the violations report; with violations off, a
# "Network refused" line instead).
"$PY" "$HERE/mcp_call.py" sandbox_exec '{"command": "getent hosts other.test; exit 0"}' -- \
	nsenter --net=/run/netns/$OUT "$PSRUN" mcp "${S_RESTRICTED[@]}" >"$TMP/mcpx" 2>"$TMP/mcpx.err"
grep -q 'Blocked:\\n- network refused other.test ([0-9]*x): not an allowed destination' "$TMP/mcpx" &&
	grep -q '"denied": \[{"name": "other.test"' "$TMP/mcpx" &&
	ok "session: psrun mcp's sandbox_exec says what the network refused" ||
	bad "session: psrun mcp's sandbox_exec says what the network refused" "$(head -c 600 "$TMP/mcpx") $(tail -c 300 "$TMP/mcpx.err")"
"$PY" "$HERE/mcp_call.py" sandbox_exec '{"command": "getent hosts other.test; exit 0"}' -- \
	nsenter --net=/run/netns/$OUT "$PSRUN" mcp "${S_RESTRICTED[@]}" -o violations=off >"$TMP/mcpx" 2>"$TMP/mcpx.err"
grep -q "Network refused (not allowed by the sandbox's policy): other.test" "$TMP/mcpx" &&
	! grep -q 'Blocked:' "$TMP/mcpx" &&
	ok "session: with violations off, psrun mcp's sandbox_exec still says what the network refused" ||
	bad "session: with violations off, psrun mcp's sandbox_exec still says what the network refused" "$(head -c 600 "$TMP/mcpx") $(tail -c 300 "$TMP/mcpx.err")"

# ---- installs: their own network, from the fake index ----
INSTALL=(-o install_network=restricted -o 'install_allow_domains=[pypi.test, npm.test]'
	-o pip_index_url=http://pypi.test/simple -o npm_registry=http://npm.test/
	-o dns_upstream=[198.18.0.53] -o network_pool=$POOL)
sid=$(screate "${INSTALL[@]}")
if [ -z "$sid" ]; then
	bad "install: a session with an install network starts" "$(cat "$TMP/screate.err")"
else
	ssup=$(sup_of "$sid")
	inside session install --json "$sid" psfake >"$TMP/i1" 2>"$TMP/i1.err"
	st=$?
	if [ $st -eq 0 ] && grep -q '"reason":"exited"' "$TMP/i1.err"; then
		ok "install: pip installs a package from the fake index"
	else
		bad "install: pip installs a package from the fake index" "exit $st: $(tail -c 600 "$TMP/i1.err")"
	fi
	grep -q '"network":{"allowed_queries":[1-9]' "$TMP/i1.err" &&
		ok "install: the result carries the install network's counts" ||
		bad "install: the result carries the install network's counts" "$(tail -c 300 "$TMP/i1.err")"
	got=$(inside session exec "$sid" -- python3 -c 'import psfake; print(psfake.VALUE)' 2>&1)
	[ "$got" = 42 ] && ok "install: the next exec imports it with no configuration" ||
		bad "install: the next exec imports it with no configuration" "$got"
	sprobe "$sid" "$TMP/i2" tcp 198.18.0.30 80 -- resolve pypi.test
	expect "$TMP/i2" "tcp 198.18.0.30 80" enetunreach "install: the session's own execs still have no network"
	if grep -q '"network"' "$TMP/i2.err"; then
		bad "install: a network none exec has no network counts" "$(tail -c 300 "$TMP/i2.err")"
	else
		ok "install: a network none exec has no network counts"
	fi
	inside session install --tool node "$sid" psfake-js >"$TMP/i3" 2>&1
	st=$?
	got=$(inside session exec "$sid" -- node -e 'console.log(require("psfake-js"))' 2>&1)
	[ $st -eq 0 ] && [ "$got" = 42 ] && ok "install: npm installs a package from the fake registry; node finds it" ||
		bad "install: npm installs a package from the fake registry; node finds it" "exit $st, got '$got': $(tail -c 400 "$TMP/i3")"
	inside session install "$sid" psfake-nosuch >"$TMP/i4" 2>&1
	st=$?
	[ $st -ne 0 ] && [ $st -ne 125 ] && ok "install: a package the index lacks fails with the installer's status ($st)" ||
		bad "install: a package the index lacks fails with the installer's status" "exit $st"
	for spec in '--index-url=http://evil.test/' 'http://evil.test/x.whl' 'psfake; touch /workspace/owned' \
		'../x' 'psfake @ http://evil.test/x' 'git+https://evil.test/x'; do
		inside session install "$sid" "$spec" >"$TMP/i5" 2>&1
		st=$?
		if [ $st -ne 125 ] || ! grep -q 'psrun: session install: package: ' "$TMP/i5"; then
			bad "install: the spec \`$spec\` is refused" "exit $st: $(cat "$TMP/i5")"
			continue
		fi
		ok "install: the spec \`$spec\` is refused, naming package"
	done
	l=$(sleftovers)
	[ -z "$l" ] && ok "install: every install's network is gone once it ended" ||
		bad "install: every install's network is gone once it ended" "$l"
	inside session destroy "$sid" 2>/dev/null
	l=$(session_left "$sid" "$ssup")
	[ -z "$l" ] && ok "install: nothing left after destroy" || bad "install: nothing left after destroy" "$l"
fi

# An index off install_allow_domains: denied, and the result says so.
sid=$(screate -o install_network=restricted -o 'install_allow_domains=[npm.test]' \
	-o pip_index_url=http://pypi.test/simple -o dns_upstream=[198.18.0.53] -o network_pool=$POOL)
if [ -n "$sid" ]; then
	inside session install --json --timeout 60s "$sid" psfake >"$TMP/i6" 2>"$TMP/i6.err"
	st=$?
	if [ $st -ne 0 ] && grep -q '"denied":\[{"name":"pypi.test"' "$TMP/i6.err"; then
		ok "install: a name off install_allow_domains is denied, and the result names it"
	else
		bad "install: a name off install_allow_domains is denied, and the result names it" "exit $st: $(tail -c 400 "$TMP/i6.err")"
	fi
	inside session destroy "$sid" 2>/dev/null
fi

# A restricted session: the install network does not widen the session's.
sid=$(screate "${S_RESTRICTED[@]}" "${INSTALL[@]}")
if [ -n "$sid" ]; then
	inside session install "$sid" psfake >"$TMP/i7" 2>&1
	st=$?
	sprobe "$sid" "$TMP/i8" resolve pypi.test -- tcp 198.18.0.30 80 -- resolve allowed.test
	[ $st -eq 0 ] && ok "install: a restricted session installs through its install network" ||
		bad "install: a restricted session installs through its install network" "exit $st: $(tail -c 400 "$TMP/i7")"
	expect "$TMP/i8" "resolve pypi.test" nxdomain "install: the session's own allowlist is not widened (name)"
	expect "$TMP/i8" "tcp 198.18.0.30 80" refused "install: the session's own allowlist is not widened (address)"
	expect "$TMP/i8" "resolve allowed.test" 198.18.0.10 "install: the session's own network still works"
	inside session destroy "$sid" 2>/dev/null
fi

# No network at all: the install says why, and runs nothing.
sid=$(screate -o install_network=none)
if [ -n "$sid" ]; then
	inside session install "$sid" psfake >"$TMP/i9" 2>&1
	st=$?
	[ $st -eq 125 ] && grep -q 'cannot be installed: the session has no network' "$TMP/i9" &&
		ok "install: with network none and install_network none, it says why" ||
		bad "install: with network none and install_network none, it says why" "exit $st: $(cat "$TMP/i9")"
	inside session destroy "$sid" 2>/dev/null
fi

# kill -9 of the supervisor while an install downloads, then psrun gc.
sid=$(screate "${INSTALL[@]}")
if [ -n "$sid" ]; then
	ssup=$(sup_of "$sid")
	inside session install "$sid" psfake-slow >/dev/null 2>&1 &
	ipid=$!
	for _ in $(seq 100); do
		grep -q 'GET /files/psfake_slow' "$TMP/index.log" 2>/dev/null && break
		sleep 0.1
	done
	if grep -q "^net " "$SROOT/$sid/info" && [ "$(grep -c '^net ' "$SROOT/$sid/info")" -ge 1 ]; then
		ok "install: the install network is recorded for gc"
	else
		bad "install: the install network is recorded for gc" "$(cat "$SROOT/$sid/info" 2>/dev/null)"
	fi
	kill -9 "$ssup"
	wait $ipid 2>/dev/null
	sleep 0.3
	inside gc >/dev/null 2>&1
	l=$(session_left "$sid" "$ssup")
	[ -z "$l" ] && ok "install: kill -9 of the supervisor mid-install, then psrun gc: nothing left" ||
		bad "install: kill -9 of the supervisor mid-install, then psrun gc: nothing left" "$l"
fi

# ---- approval ----
sid=$(screate "${INSTALL[@]}" -o approve=[install])
if [ -n "$sid" ]; then
	# approve_case NAME EXPECT-EXIT GREP-TEXT install-options...
	approve_case() {
		local name=$1 want=$2 text=$3 start st took
		shift 3
		start=$(date +%s%N)
		inside session install "$@" "$sid" psfake >"$TMP/ap" 2>&1
		st=$?
		took=$((($(date +%s%N) - start) / 1000000))
		if [ $st -eq "$want" ] && grep -qF -- "$text" "$TMP/ap"; then
			ok "approve: $name (${took} ms)"
		else
			bad "approve: $name" "exit $st: $(tail -c 400 "$TMP/ap")"
		fi
	}
	approve_case "with no approver, a gated install is denied" 125 \
		'was denied: the policy gates installs (`approve: [install]`) and no approver is set'
	approve_case "an approver's no is a denial naming it" 125 \
		'denied by the approver: the approver command `false` refused (exit 1)' --approve-cmd false
	approve_case "the approver gets the action as JSON; its first line is the reason" 125 \
		'refused (exit 3): not psfake today' \
		--approve-cmd "cat >'$TMP/approval.json'; echo 'not psfake today'; exit 3"
	if grep -q '"action": "install", "session": "'"$sid"'", "tool": "python", "package": "psfake", "index": "http://pypi.test/simple", "command": \["python3", ' "$TMP/approval.json" &&
		grep -q '"--index-url", "http://pypi.test/simple", "--trusted-host", "pypi.test", "--", "psfake"\]}' "$TMP/approval.json"; then
		ok "approve: the action JSON names action, session, tool, package, the index and the command"
	else
		bad "approve: the action JSON names action, session, tool, package, the index and the command" "$(cat "$TMP/approval.json")"
	fi
	approve_case "a hanging approver is denied in bounded time" 125 \
		'did not answer within 1 s' --approve-cmd 'sleep 30' --approve-timeout 1s
	pgrep -f 'sleep 30$' >/dev/null && bad "approve: a timed-out approver is killed" "$(pgrep -af 'sleep 30$')" ||
		ok "approve: a timed-out approver is killed with its children"
	approve_case "a crashing approver is denied" 125 'was killed by signal 11' --approve-cmd 'kill -SEGV $$'
	approve_case "an approver's yes installs" 0 "" --approve-cmd true
	got=$(inside session exec "$sid" -- python3 -c 'import psfake; print(psfake.VALUE)' 2>&1)
	[ "$got" = 42 ] && ok "approve: the approved package is there" || bad "approve: the approved package is there" "$got"

	# psrun mcp --approve-cmd: the tool's result says who denied what.
	mcp_install() {
		"$PY" "$HERE/mcp_call.py" sandbox_install_package '{"package": "psfake"}' -- nsenter --net=/run/netns/$OUT "$PSRUN" mcp \
			"$@" "${INSTALL[@]}" -o approve=[install] >"$TMP/mcp" 2>"$TMP/mcp.err"
	}
	mcp_install --approve-cmd 'echo "ask later"; exit 1'
	if grep -q '"isError": true' "$TMP/mcp" && grep -q 'denied by the approver: the approver command .* refused (exit 1): ask later' "$TMP/mcp"; then
		ok "approve: psrun mcp --approve-cmd's no is a clean tool result saying who denied what"
	else
		bad "approve: psrun mcp --approve-cmd's no is a clean tool result" "$(head -c 600 "$TMP/mcp") $(tail -c 300 "$TMP/mcp.err")"
	fi
	mcp_install
	grep -q '"isError": true' "$TMP/mcp" && grep -q 'no approver is set' "$TMP/mcp" &&
		ok "approve: psrun mcp without --approve-cmd denies a gated install" ||
		bad "approve: psrun mcp without --approve-cmd denies a gated install" "$(head -c 600 "$TMP/mcp")"
	mcp_install --approve-cmd true
	grep -q '"isError": false' "$TMP/mcp" && grep -q 'Successfully installed psfake' "$TMP/mcp" &&
		ok "approve: psrun mcp --approve-cmd's yes installs" ||
		bad "approve: psrun mcp --approve-cmd's yes installs" "$(head -c 800 "$TMP/mcp") $(tail -c 300 "$TMP/mcp.err")"
	inside session destroy "$sid" 2>/dev/null
fi

# ---- examples/agent_loop.py, the scripted agent, against the fake index ----
if [ -r "$HERE/../../examples/agent_loop.py" ]; then
	# A SANITIZE=1 build's library (and the supervisor it runs as) needs its
	# runtime loaded first, as run.sh's psrun_run() check does.
	lib=$(dirname "$PSRUN")/libpsrun.so
	asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ {print $3}')
	PSRUN_LIBRARY=$lib AGENT_LOOP_INDEX=http://pypi.test/simple \
		AGENT_LOOP_DNS=198.18.0.53 AGENT_LOOP_KEYS="{\"network_pool\": \"$POOL\"}" \
		nsenter --net=/run/netns/$OUT env ${asan:+LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0} \
		"$PY" "$HERE/../../examples/agent_loop.py" >"$TMP/agent" 2>&1
	st=$?
	if [ $st -eq 0 ] && grep -q 'reason=timeout' "$TMP/agent" && grep -q 'reason=oom' "$TMP/agent" &&
		grep -q 'installed psfake' "$TMP/agent" && grep -q 'contained:' "$TMP/agent"; then
		ok "examples/agent_loop.py: every step, the install from the fake index included"
	else
		bad "examples/agent_loop.py" "exit $st: $(grep -A2 -B4 '!!' "$TMP/agent" | head -c 1500) $(tail -c 300 "$TMP/agent")"
	fi
fi
l=$(sleftovers)
[ -z "$l" ] && [ -z "$(ls -A "$SROOT")" ] && ok "sessions: nothing left at the end" ||
	bad "sessions: nothing left at the end" "$l $(ls -A "$SROOT")"
if [ -s "$TMP/screate.failed" ]; then
	cat "$TMP/screate.failed"
	fail=$((fail + $(wc -l <"$TMP/screate.failed")))
fi
