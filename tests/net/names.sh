# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by tests/net/run.sh: names on each connection (name_check,
# docs/network.md). One address of the fake internet, 198.18.0.40, serves
# several names (tests/net/fake_tls.py, HTTPS with a certificate from a CA
# made here, and HTTP), as a CDN's front does: shared.zone.test and
# www.zone.test resolve to it, cdn.zone.test is a CNAME of shared.zone.test;
# other.test (not allowed) and allowed.test (allowed, but resolving
# elsewhere) are asked of it anyway, by SNI and Host. Then the parser's
# hostile cases over a real connection (raw ClientHellos from the probe:
# 1-byte segments, 64 KiB, one that never completes, ECH, an IP literal, no
# SNI), name_check: off, the result and the log, gvisor, and nothing left.
# Uses run.sh's helpers (ok, bad, expect, sandbox) and its namespaces.

NAMES=(-o network=restricted -o 'allow_domains=[allowed.test, "*.zone.test"]'
	-o dns_upstream=[198.18.0.53])
NT=$TMP/names
mkdir -p "$NT"
if ! openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=psrun-test-ca \
	-keyout "$NT/ca.key" -out "$NT/ca.pem" -addext basicConstraints=critical,CA:TRUE \
	>/dev/null 2>&1 ||
	! openssl req -newkey rsa:2048 -nodes -subj /CN=shared.zone.test -keyout "$NT/srv.key" \
		-out "$NT/srv.csr" >/dev/null 2>&1 ||
	! printf 'subjectAltName=DNS:shared.zone.test,DNS:www.zone.test,DNS:cdn.zone.test,DNS:allowed.test,DNS:other.test\n' \
		>"$NT/san.ext" ||
	! openssl x509 -req -in "$NT/srv.csr" -CA "$NT/ca.pem" -CAkey "$NT/ca.key" \
		-CAcreateserial -days 1 -extfile "$NT/san.ext" -out "$NT/srv.pem" >/dev/null 2>&1; then
	echo "[SKIP] names: openssl cannot make the test's CA and certificate"
	skip=$((skip + 1))
else
	ip -n $INET addr add 198.18.0.40/32 dev lo
	ip netns exec $INET "$PY" "$HERE/fake_tls.py" 198.18.0.40 "$NT/srv.pem" "$NT/srv.key" \
		"$NT/served.log" 2>"$NT/tls.err" &
	PIDS="$PIDS $!"
	for _ in $(seq 50); do
		ip netns exec $INET ss -ltn 2>/dev/null | grep -q '198.18.0.40:443' && break
		sleep 0.1
	done

	# ---- one address, several names ----
	sandbox "$NT/r" "${NAMES[@]}" -o network_log="$NT/netlog" -- \
		resolve shared.zone.test -- \
		http 198.18.0.40 80 shared.zone.test -- http 198.18.0.40 80 other.test -- \
		http 198.18.0.40 80 shared.zone.test,shared.zone.test,other.test,shared.zone.test -- \
		http 198.18.0.40 80 allowed.test -- http 198.18.0.40 80 198.18.0.40 -- \
		hello 198.18.0.40 443 shared.zone.test -- hello 198.18.0.40 443 other.test -- \
		hello 198.18.0.40 443 allowed.test -- hello 198.18.0.40 443 www.zone.test -- \
		resolve cdn.zone.test -- hello 198.18.0.40 443 cdn.zone.test -- \
		hello 198.18.0.40 443 shared.zone.test seg1 -- \
		hello 198.18.0.40 443 shared.zone.test pad=65000 -- \
		hello 198.18.0.40 443 shared.zone.test pad=65400 -- \
		hello 198.18.0.40 443 shared.zone.test stall -- \
		hello 198.18.0.40 443 other.test ech -- hello 198.18.0.40 443 shared.zone.test ech -- \
		hello 198.18.0.40 443 198.18.0.40 -- hello 198.18.0.40 443 - -- \
		udp 198.18.0.40 443
	R=$NT/r
	expect $R "resolve shared.zone.test" 198.18.0.40 "names: an allowed name of the shared address resolves"
	expect $R "http 198.18.0.40 80 shared.zone.test" hello-shared.zone.test "names: HTTP with its Host is relayed"
	expect $R "http 198.18.0.40 80 other.test" reset "names: HTTP with Host other.test to the same address is cut"
	expect $R "http 198.18.0.40 80 shared.zone.test,shared.zone.test,other.test,shared.zone.test" \
		hello-shared.zone.test,hello-shared.zone.test,reset "names: a kept-alive connection that switches Host is cut"
	expect $R "http 198.18.0.40 80 allowed.test" reset "names: an allowed name the address was not pinned for is cut (HTTP)"
	expect $R "http 198.18.0.40 80 198.18.0.40" reset "names: an IP-literal Host is cut"
	expect $R "hello 198.18.0.40 443 shared.zone.test" ok "names: a ClientHello with its SNI is relayed"
	expect $R "hello 198.18.0.40 443 other.test" reset "names: SNI other.test to the same address is reset"
	expect $R "hello 198.18.0.40 443 allowed.test" reset "names: an allowed name the address was not pinned for is reset (TLS)"
	expect $R "hello 198.18.0.40 443 www.zone.test" reset "names: an allowed name of the address not yet resolved is reset"
	expect $R "hello 198.18.0.40 443 cdn.zone.test" ok "names: the name asked, through its CNAME chain, is the address's"
	expect $R "hello 198.18.0.40 443 shared.zone.test seg1" ok "names: a ClientHello in 1-byte segments"
	expect $R "hello 198.18.0.40 443 shared.zone.test pad=65000" ok "names: a 64 KiB ClientHello"
	expect $R "hello 198.18.0.40 443 shared.zone.test pad=65400" reset "names: a ClientHello past 64 KiB is reset"
	got=$(grep -F -- "hello 198.18.0.40 443 shared.zone.test stall ->" "$R" | sed 's/.* -> //')
	case "$got" in
	reset-[4-7]s) ok "names: a ClientHello that never completes is reset in bounded time ($got)" ;;
	*) bad "names: a ClientHello that never completes is reset in bounded time" "got '$got'" ;;
	esac
	expect $R "hello 198.18.0.40 443 other.test ech" reset "names: ECH whose outer name is not allowed is reset"
	expect $R "hello 198.18.0.40 443 shared.zone.test ech" ok "names: ECH (as GREASE) with an allowed outer name is relayed"
	expect $R "hello 198.18.0.40 443 198.18.0.40" reset "names: an IP-literal SNI is reset"
	expect $R "hello 198.18.0.40 443 -" reset "names: a ClientHello without SNI is reset"
	expect $R "udp 198.18.0.40 443" refused "names: UDP 443 (QUIC) stays refused"
	if grep -q '"name":"other.test"' "$NT/served.log" 2>/dev/null ||
		grep -q ' other.test \| allowed.test \| 198.18.0.40 ' "$NT/served.log" 2>/dev/null; then
		bad "names: the server never saw a refused request" "$(grep -v shared "$NT/served.log" | head -3)"
	else
		ok "names: the server never saw a refused request"
	fi
	if grep -q '{"layer":"network","what":"tls sni other.test to 198.18.0.40:443","count":[1-9]' "$R.err" &&
		grep -q '{"layer":"network","what":"http host other.test to 198.18.0.40:80","count":[1-9]' "$R.err" &&
		grep -q '"what":"tls no sni to 198.18.0.40:443"' "$R.err" &&
		grep -q '"name":"tls sni allowed.test to 198.18.0.40:443"' "$R.err"; then
		ok "names: the result's violations name what each refused connection asked for"
	else
		bad "names: the result's violations name what each refused connection asked for" "$(tail -c 1500 "$R.err")"
	fi
	if grep -q '"event":"name","proto":"tls","name":"other.test","addr":"198.18.0.40","port":443,"action":"reject","reason":"not allowed"' "$NT/netlog" &&
		grep -q '"event":"name","proto":"tls","name":"allowed.test","addr":"198.18.0.40","port":443,"action":"reject","reason":"not pinned for the name"' "$NT/netlog" &&
		grep -q '"event":"name","proto":"http","name":"shared.zone.test","addr":"198.18.0.40","port":80,"action":"allow","reason":"allowed"' "$NT/netlog"; then
		ok "names: network_log has each verdict with its reason"
	else
		bad "names: network_log has each verdict with its reason" "$(grep '"name"' "$NT/netlog" | head -3)"
	fi

	# ---- curl, with the CA made here ----
	CURL='printf "%s\n" "$0" >/tmp/ca.pem
for u in "https://shared.zone.test/" "--resolve other.test:443:198.18.0.40 https://other.test/" \
	"--resolve allowed.test:443:198.18.0.40 https://allowed.test/"; do
	out=$(curl -sS --max-time 5 --cacert /tmp/ca.pem $u 2>&1)
	echo "curl $u -> rc=$? $out"
done'
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${NAMES[@]}" -- /bin/sh -c "$CURL" \
		"$(cat "$NT/ca.pem")" >"$NT/curl" 2>"$NT/curl.err"
	grep -q '^curl https://shared.zone.test/ -> rc=0 hello shared.zone.test$' "$NT/curl" &&
		ok "names: curl https://shared.zone.test works through the check" ||
		bad "names: curl https://shared.zone.test works through the check" "$(cat "$NT/curl" "$NT/curl.err" | head -5)"
	grep -q '^curl --resolve other.test:443:198.18.0.40 https://other.test/ -> rc=[1-9]' "$NT/curl" &&
		ok "names: curl --resolve other.test to the same address is refused" ||
		bad "names: curl --resolve other.test to the same address is refused" "$(grep other "$NT/curl")"
	grep -q '^curl --resolve allowed.test:443:198.18.0.40 https://allowed.test/ -> rc=[1-9]' "$NT/curl" &&
		ok "names: curl --resolve allowed.test to an address it did not resolve to is refused" ||
		bad "names: curl --resolve allowed.test to an address it did not resolve to is refused" "$(grep allowed "$NT/curl")"

	# ---- name_check: off keeps the address check alone ----
	sandbox "$NT/off" "${NAMES[@]}" -o name_check=off -- resolve shared.zone.test -- \
		resolve allowed.test -- http 198.18.0.40 80 other.test -- tcp 198.18.0.10 443 -- \
		tcp 198.18.0.20 443
	expect "$NT/off" "http 198.18.0.40 80 other.test" hello-other.test "names: name_check: off lets any Host reach a pinned address"
	expect "$NT/off" "tcp 198.18.0.20 443" refused "names: name_check: off still refuses an address never resolved"
	# With the check, a server that speaks first is not reached until the
	# client has asked for a name: documented, and what off is for.
	sandbox "$NT/on" "${NAMES[@]}" -- resolve allowed.test -- tcp 198.18.0.10 443
	expect "$NT/on" "tcp 198.18.0.10 443" timeout "names: with the check, a server that speaks first hears nothing until a name is asked"
	expect "$NT/off" "tcp 198.18.0.10 443" ok "names: name_check: off reaches a server that speaks first"

	# ---- gVisor: the same refusals with the sentry's netstack ----
	if nsenter --net=/run/netns/$OUT "$PSRUN" run -o backend=gvisor -- true >/dev/null 2>&1; then
		sandbox "$NT/gv" -o backend=gvisor "${NAMES[@]}" -- resolve shared.zone.test -- \
			http 198.18.0.40 80 shared.zone.test,other.test -- \
			hello 198.18.0.40 443 shared.zone.test -- hello 198.18.0.40 443 other.test -- \
			hello 198.18.0.40 443 - -- hello 198.18.0.40 443 shared.zone.test seg1
		G=$NT/gv
		expect $G "http 198.18.0.40 80 shared.zone.test,other.test" hello-shared.zone.test,reset "names: gvisor: a kept-alive connection that switches Host is cut"
		expect $G "hello 198.18.0.40 443 shared.zone.test" ok "names: gvisor: a ClientHello with its SNI is relayed"
		expect $G "hello 198.18.0.40 443 other.test" reset "names: gvisor: SNI other.test to the same address is reset"
		expect $G "hello 198.18.0.40 443 -" reset "names: gvisor: no SNI is reset"
		expect $G "hello 198.18.0.40 443 shared.zone.test seg1" ok "names: gvisor: 1-byte segments"
		grep -q '"what":"tls sni other.test to 198.18.0.40:443"' "$G.err" &&
			ok "names: gvisor: the result names the refused SNI" ||
			bad "names: gvisor: the result names the refused SNI" "$(tail -c 600 "$G.err")"
	else
		echo "[SKIP] names: gvisor: runsc cannot run here"
		skip=$((skip + 1))
	fi

	# ---- nothing left: no listener, no relayed socket ----
	sleep 0.3
	l=$(ip netns exec $OUT ss -Htan 2>/dev/null | grep -v ':8081 ' | grep -v 'TIME-WAIT')
	[ -z "$l" ] && ok "names: no listener or relayed connection is left in psrun's namespace" ||
		bad "names: no listener or relayed connection is left in psrun's namespace" "$l"
	# Every relayed connection ended, on both of its legs: conntrack has
	# none of them established (what is left is closing or TIME_WAIT, which
	# the kernel expires).
	if [ -r /proc/net/nf_conntrack ]; then
		l=$(ip netns exec $OUT grep ' ESTABLISHED ' /proc/net/nf_conntrack 2>/dev/null | grep '198.18.0.40')
		[ -z "$l" ] && ok "names: conntrack holds no established connection of the relay's" ||
			bad "names: conntrack holds no established connection of the relay's" "$(echo "$l" | head -3)"
	else
		echo "[SKIP] names: no /proc/net/nf_conntrack to read conntrack from"
		skip=$((skip + 1))
	fi
fi
