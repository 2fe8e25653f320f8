#!/bin/bash
# SPDX-License-Identifier: MIT
# The net tier: psrun's network modes against a fake internet built from
# network namespaces this script creates (docs/network.md, docs/testing.md).
#
#   OUT  plays the host: psrun runs in it (nsenter --net), so its veths, nft
#        tables and ip_forward are OUT's, never the real host's. It has
#        192.0.2.2, a listener on :8081 (the host's own services) and routes
#        to INET.
#   INET the internet: 192.0.2.1; on lo 198.18.0.10 and .11 (host A, 80 443
#        853, UDP echo on 443), 198.18.0.20 (host B, 80 443), 198.18.0.53
#        (the fake upstream DNS, tests/net/fake_dns.py), 169.254.169.254
#        (metadata, 80) and 10.77.0.1 (a private service, 80).
# A gvisor section runs the key bypass items again with backend: gvisor
# (skipped, saying why, where runsc cannot run).
# No packet leaves these namespaces. Everything is removed on exit, also on
# failure. Prints "net: N passed, N failed, N skipped".
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
PSRUN=$(realpath "$BUILD/psrun" 2>/dev/null || echo "$BUILD/psrun")
pass=0
fail=0
skip=0

ok() { pass=$((pass + 1)); echo "[PASS] $1"; }
bad() { fail=$((fail + 1)); echo "[FAIL] $1${2:+: $2}"; }
summary() { echo "net: $pass passed, $fail failed, $skip skipped"; }

skip_all() {
	echo "[SKIP] net: $1"
	skip=$((skip + 1))
	summary
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip_all "needs root (network namespaces, veth, nftables)"
for tool in ip nft nsenter python3; do
	command -v "$tool" >/dev/null || skip_all "$tool not installed"
done
[ -x "$PSRUN" ] || skip_all "no $PSRUN"
PY=$(command -v python3)
# The sandbox runs the host's python3 from /usr; a pyenv shim outside /usr
# would not be there.
case "$(readlink -f "$PY")" in /usr/*) ;; *) PY=/usr/bin/python3 ;; esac
[ -x "$PY" ] || skip_all "no python3 under /usr"

OUT=psnet$$o
INET=psnet$$i
TMP=$(mktemp -d)
PIDS=""
LEASES_BEFORE=$(ls /run/psrun/net 2>/dev/null | sort)

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	# The runs' leases (files in the host's /run/psrun/net) outlive the
	# namespaces: gc from inside OUT removes those of dead runs.
	[ -e /run/netns/$OUT ] && nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
	ip netns del $OUT 2>/dev/null
	ip netns del $INET 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add $OUT || skip_all "cannot create a network namespace"
ip netns add $INET
ip link add ${OUT}x type veth peer name ${INET}x 2>/dev/null || skip_all "no veth support"
if ! msg=$(ip netns exec $OUT nft add table inet psnet_probe 2>&1); then
	skip_all "nftables unavailable in a network namespace: $msg"
fi
ip netns exec $OUT nft delete table inet psnet_probe
ip link set ${OUT}x netns $OUT
ip link set ${INET}x netns $INET
ip -n $OUT addr add 192.0.2.2/24 dev ${OUT}x
ip -n $INET addr add 192.0.2.1/24 dev ${INET}x
for a in 198.18.0.10 198.18.0.11 198.18.0.20 198.18.0.53 169.254.169.254 10.77.0.1; do
	ip -n $INET addr add $a/32 dev lo
done
for ns in $OUT $INET; do
	ip -n $ns link set lo up
done
ip -n $OUT link set ${OUT}x up
ip -n $INET link set ${INET}x up
ip -n $OUT route add default via 192.0.2.1
# The metadata address and the private service are routed to INET, as a
# cloud host's would be.
ip -n $OUT route add 169.254.169.254/32 via 192.0.2.1
ip -n $OUT route add 10.77.0.0/16 via 192.0.2.1

ip netns exec $INET "$PY" "$HERE/fake_dns.py" 198.18.0.53 "$TMP/upstream.log" 2>"$TMP/dns.err" &
PIDS="$PIDS $!"
ip netns exec $INET "$PY" "$HERE/fake_hosts.py" 198.18.0.10:80 198.18.0.10:443 198.18.0.10:853 \
	198.18.0.11:80 198.18.0.20:80 198.18.0.20:443 169.254.169.254:80 10.77.0.1:80 2>"$TMP/hosts.err" &
PIDS="$PIDS $!"
ip netns exec $OUT "$PY" "$HERE/fake_hosts.py" 0.0.0.0:8081 2>"$TMP/host.err" &
PIDS="$PIDS $!"
for _ in $(seq 50); do
	ip netns exec $INET ss -ltn 2>/dev/null | grep -q '198.18.0.53:53' &&
		ip netns exec $INET ss -ltn 2>/dev/null | grep -q '10.77.0.1:80' && break
	sleep 0.1
done

RESTRICTED=(-o network=restricted -o 'allow_domains=[allowed.test, "*.zone.test"]'
	-o dns_upstream=[198.18.0.53])
PROBE=$(cat "$HERE/probe.py")

# sandbox OUTFILE psrun-options... -- probe commands
sandbox() {
	local out=$1
	shift
	local opts=()
	while [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	nsenter --net=/run/netns/$OUT "$PSRUN" run --json "${opts[@]}" -- "$PY" -c "$PROBE" "$@" \
		>"$out" 2>"$out.err"
}

# expect FILE "probe line" RESULT NAME
expect() {
	local got
	got=$(grep -F -- "$2 ->" "$1" | head -1 | sed 's/.* -> //')
	if [ "$got" = "$3" ]; then
		ok "$4"
	else
		bad "$4" "'$2' gave '${got:-nothing}', want '$3' ($(head -c 300 "$1.err" | tr '\n' ' '))"
	fi
}

# ---- 1-5, 7, 9, 10 (restricted), 15: one sandbox ----
sandbox "$TMP/r" "${RESTRICTED[@]}" -o network_log="$TMP/netlog" -- \
	resolve allowed.test -- tcp 198.18.0.10 80 -- tcp 198.18.0.10 443 -- \
	tcp 198.18.0.20 80 -- resolve other.test -- \
	dns 198.18.0.53 allowed.test udp -- dns 198.18.0.53 allowed.test tcp -- \
	tcp 198.18.0.10 853 -- udp 198.18.0.10 443 -- udp GW 5353 -- \
	resolve rebind.zone.test -- resolve a.b.zone.test -- resolve zone.test.evil.test -- \
	resolve cname.zone.test -- resolve big.zone.test -- \
	dns GW allowed.test udp 28 -- dns GW allowed.test udp 16 -- dns GW allowed.test tcp -- \
	tcp GW 8081 -- tcp 192.0.2.2 8081 -- tcp 169.254.169.254 80 -- tcp 10.77.0.1 80 -- \
	tcp 2001:db8::10 80
R=$TMP/r
expect $R "resolve allowed.test" 198.18.0.10 "1: an allowed name resolves"
expect $R "tcp 198.18.0.10 80" ok "1: its address is reachable on 80"
expect $R "tcp 198.18.0.10 443" ok "1: and on 443"
expect $R "tcp 198.18.0.20 80" refused "2: an address never resolved is refused at once"
expect $R "resolve other.test" nxdomain "3: a name not allowed gets NXDOMAIN"
if grep -q '^other.test ' "$TMP/upstream.log" 2>/dev/null; then
	bad "3: the upstream never saw the denied name" "$(grep other.test "$TMP/upstream.log" | head -1)"
else
	ok "3: the upstream never saw the denied name"
fi
expect $R "dns 198.18.0.53 allowed.test udp" refused "4: DNS straight to the upstream (UDP) fails"
expect $R "dns 198.18.0.53 allowed.test tcp" refused "4: DNS straight to the upstream (TCP) fails"
expect $R "tcp 198.18.0.10 853" refused "5: 853/tcp (DoT) to an allowed address is refused"
expect $R "udp 198.18.0.10 443" refused "5: UDP 443 (QUIC) to an allowed address is refused"
expect $R "udp GW 5353" refused "5: UDP to the gateway other than DNS is refused"
expect $R "resolve rebind.zone.test" 198.18.0.10 "9: the wildcard allows a name below it"
expect $R "resolve a.b.zone.test" 198.18.0.10 "9: the wildcard allows a.b.zone.test"
expect $R "resolve zone.test.evil.test" nxdomain "9: the wildcard does not allow zone.test.evil.test"
expect $R "resolve cname.zone.test" again "9: a CNAME to a disallowed name is refused"
expect $R "resolve big.zone.test" 198.18.1.1 "an answer too big for UDP is fetched over TCP"
expect $R "dns GW allowed.test udp 28" rcode0-an0 "6: AAAA gets NODATA (IPv6 is off inside)"
expect $R "dns GW allowed.test udp 16" rcode0-an0 "TXT of an allowed name gets NODATA"
expect $R "dns GW allowed.test tcp" rcode0-an1 "the proxy answers over TCP too"
expect $R "tcp GW 8081" refused "10: the host's services on the gateway are unreachable"
expect $R "tcp 192.0.2.2 8081" refused "10: the host's other addresses are unreachable"
expect $R "tcp 169.254.169.254 80" refused "10: metadata is unreachable"
expect $R "tcp 10.77.0.1 80" refused "private ranges are unreachable"
expect $R "tcp 2001:db8::10 80" enetunreach "6: no IPv6 route out of the sandbox"
if grep -q '"name":"other.test"' "$R.err" && grep -q '"addr":"198.18.0.20","port":80,"proto":"tcp"' "$R.err"; then
	ok "15: the result names the denied name and the refused address"
else
	bad "15: the result names the denied name and the refused address" "$(tail -1 "$R.err")"
fi
if grep -q '"event":"dns","name":"other.test".*"action":"deny"' "$TMP/netlog" 2>/dev/null &&
	grep -q '"event":"connect","addr":"198.18.0.20","port":80' "$TMP/netlog"; then
	ok "15: network_log has the denied name and the refused connection"
else
	bad "15: network_log has the denied name and the refused connection" "$(head -c 300 "$TMP/netlog" 2>/dev/null)"
fi

# ---- 7: rebinding ----
sandbox "$TMP/rb" -o network=restricted -o 'allow_domains=[rebind.test]' \
	-o dns_upstream=[198.18.0.53] -- resolve rebind.test
expect "$TMP/rb" "resolve rebind.test" again "7: an allowed name answering a private address is refused"

# ---- allow_cidrs: an address without a name, on the port given ----
sandbox "$TMP/cidr" "${RESTRICTED[@]}" -o 'allow_cidrs=[198.18.0.20/32:443]' -- \
	tcp 198.18.0.20 443 -- tcp 198.18.0.20 80
expect "$TMP/cidr" "tcp 198.18.0.20 443" ok "allow_cidrs opens its address and port"
expect "$TMP/cidr" "tcp 198.18.0.20 80" refused "allow_cidrs opens no other port"

# ---- 8: a pin ends with its TTL ----
sandbox "$TMP/ttl" "${RESTRICTED[@]}" -o dns_min_ttl=1 -- resolve ttl2.zone.test -- \
	tcp 198.18.0.11 80 -- sleep 3.5 -- tcp 198.18.0.11 80
if grep -q "tcp 198.18.0.11 80 -> ok" "$TMP/ttl" && [ "$(grep -c 'tcp 198.18.0.11 80 -> refused' "$TMP/ttl")" = 1 ]; then
	ok "8: the 2 s pin works, then expires"
else
	bad "8: the 2 s pin works, then expires" "$(tr '\n' ' ' <"$TMP/ttl")"
fi

# ---- 11: no way to change the network from inside ----
nsenter --net=/run/netns/$OUT "$PSRUN" run -o network=restricted -o 'allow_domains=[allowed.test]' \
	-o dns_upstream=[198.18.0.53] -- /bin/sh -c '
	ip route add 198.18.0.0/15 dev eth0 2>/dev/null && echo route-added
	ip addr add 10.213.255.1/32 dev eth0 2>/dev/null && echo addr-added
	nft list ruleset 2>/dev/null | grep -q psrun && echo nft-listed
	nft add table inet x 2>/dev/null && echo nft-changed
	unshare -n true 2>/dev/null && echo netns-created
	echo done' >"$TMP/priv" 2>/dev/null
if [ "$(cat "$TMP/priv")" = done ]; then
	ok "11: no route, address, nft rule or netns can be made inside"
else
	bad "11: no route, address, nft rule or netns can be made inside" "$(tr '\n' ' ' <"$TMP/priv")"
fi
sandbox "$TMP/sock" "${RESTRICTED[@]}" -- sock raw -- sock packet
expect "$TMP/sock" "sock raw" eperm "11: no raw sockets"
expect "$TMP/sock" "sock packet" eperm "11: no packet sockets"

# ---- 12: a spoofed source is dropped ----
# The test (root) gives the sandbox a second address and routes it both ways,
# so without the rule the connection (to a pinned address) would succeed.
nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- "$PY" -c "$PROBE" \
	resolve allowed.test -- sleep 1.5 -- tcp 198.18.0.10 80 10.213.255.77 >"$TMP/spoof" 2>/dev/null &
spid=$!
sleep 0.7
child=$(cat /proc/$spid/task/*/children 2>/dev/null | awk '{print $1}')
veth=$(ip -n $OUT -o link show 2>/dev/null | awk -F': ' '/ psr/ {print $2}' | cut -d@ -f1 | head -1)
if [ -n "$child" ] && [ -n "$veth" ] &&
	nsenter --net=/proc/$child/ns/net ip addr add 10.213.255.77/32 dev eth0 2>/dev/null &&
	ip -n $OUT route add 10.213.255.77/32 dev "$veth" &&
	ip -n $INET route add 10.213.255.77/32 via 192.0.2.2; then
	wait $spid
	ip -n $INET route del 10.213.255.77/32 2>/dev/null
	expect "$TMP/spoof" "tcp 198.18.0.10 80 10.213.255.77" timeout "12: a spoofed source address is dropped"
else
	wait $spid
	bad "12: a spoofed source address is dropped" "could not enter the sandbox's netns"
fi

# ---- 13: full and none ----
sandbox "$TMP/full" -o network=full -o dns_upstream=[198.18.0.53] -- \
	tcp 198.18.0.10 80 -- tcp 198.18.0.20 443 -- resolve other.test -- tcp GW 8081 -- \
	tcp 192.0.2.2 8081 -- tcp 169.254.169.254 80 -- tcp 10.77.0.1 80 -- udp 198.18.0.10 443
expect "$TMP/full" "tcp 198.18.0.10 80" ok "13: full reaches host A"
expect "$TMP/full" "tcp 198.18.0.20 443" ok "13: full reaches host B"
expect "$TMP/full" "resolve other.test" 198.18.0.20 "13: full resolves any name"
expect "$TMP/full" "udp 198.18.0.10 443" ok "13: full passes UDP"
expect "$TMP/full" "tcp GW 8081" refused "13: full does not reach the host (gateway)"
expect "$TMP/full" "tcp 192.0.2.2 8081" refused "13: full does not reach the host's other addresses"
expect "$TMP/full" "tcp 169.254.169.254 80" refused "13: full does not reach metadata"
expect "$TMP/full" "tcp 10.77.0.1 80" refused "13: full does not reach private ranges"
sandbox "$TMP/fullp" -o network=full -o dns_upstream=[198.18.0.53] -o 'allow_private=[10.77.0.0/16]' -- \
	tcp 10.77.0.1 80 -- tcp 169.254.169.254 80
expect "$TMP/fullp" "tcp 10.77.0.1 80" ok "13: allow_private opens its range"
expect "$TMP/fullp" "tcp 169.254.169.254 80" refused "13: allow_private never opens metadata"
sandbox "$TMP/none" -- tcp 198.18.0.10 80 -- resolve allowed.test
expect "$TMP/none" "tcp 198.18.0.10 80" enetunreach "13: none reaches nothing"

# ---- 14: two sandboxes, two allowlists ----
nsenter --net=/run/netns/$OUT "$PSRUN" run -o network=restricted -o 'allow_domains=[allowed.test]' \
	-o dns_upstream=[198.18.0.53] -- "$PY" -c "$PROBE" resolve allowed.test -- sleep 3 \
	>"$TMP/a" 2>/dev/null &
apid=$!
sleep 0.8
a_gw=$(ip -n $OUT -4 -o addr show | awk '/ psr/ {print $4}' | head -1 | cut -d/ -f1)
a_addr=$(echo "$a_gw" | awk -F. '{print $1"."$2"."$3"."$4+1}')
sandbox "$TMP/b" -o network=restricted -o 'allow_domains=[other.test]' -o dns_upstream=[198.18.0.53] -- \
	resolve other.test -- tcp 198.18.0.20 80 -- tcp 198.18.0.10 80 -- tcp "$a_addr" 80 -- tcp "$a_gw" 53
wait $apid
expect "$TMP/b" "tcp 198.18.0.20 80" ok "14: the second sandbox reaches its own allowed host"
expect "$TMP/b" "tcp 198.18.0.10 80" refused "14: but not the first sandbox's pinned address"
expect "$TMP/b" "tcp $a_addr 80" refused "14: nor the first sandbox itself"
expect "$TMP/b" "tcp $a_gw 53" refused "14: nor the first sandbox's DNS proxy"

# ---- fail closed: a set-up step that fails stops the sandbox, names the step ----
nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -o network_log="$TMP" -- /bin/true \
	>/dev/null 2>"$TMP/fc.err"
st=$?
if [ $st -eq 125 ] && grep -q "psrun: network: network_log: open" "$TMP/fc.err"; then
	ok "a failing set-up step stops the sandbox and names the step"
else
	bad "a failing set-up step stops the sandbox and names the step" "exit $st: $(cat "$TMP/fc.err")"
fi

# ---- gVisor: the key bypass items with the sentry's own netstack ----
# runsc takes the veth psrun put in its namespace; the rules stay on the
# host side, so the same refusals must hold (docs/security.md).
gv_err=$(nsenter --net=/run/netns/$OUT "$PSRUN" run -o backend=gvisor -- true 2>&1)
gv_st=$?
if [ $gv_st -ne 0 ] && { [[ "$gv_err" == *"runsc not found"* ]] || [[ "$gv_err" == *"no platform"* ]]; }; then
	echo "[SKIP] gvisor: runsc cannot run here: $gv_err"
	skip=$((skip + 1))
elif [ $gv_st -ne 0 ]; then
	bad "gvisor: a sandbox starts in OUT" "$gv_err"
else
	sandbox "$TMP/gv" -o backend=gvisor "${RESTRICTED[@]}" -- \
		resolve allowed.test -- tcp 198.18.0.10 80 -- tcp 198.18.0.20 80 -- resolve other.test -- \
		dns 198.18.0.53 gvdirect.test udp -- dns 198.18.0.53 gvdirect.test tcp -- \
		tcp 169.254.169.254 80 -- tcp GW 8081 -- tcp 10.77.0.1 80
	G=$TMP/gv
	expect $G "resolve allowed.test" 198.18.0.10 "gvisor: an allowed name resolves"
	expect $G "tcp 198.18.0.10 80" ok "gvisor: its address is reachable"
	expect $G "tcp 198.18.0.20 80" refused "gvisor: an address never resolved is refused"
	expect $G "resolve other.test" nxdomain "gvisor: a name not allowed gets NXDOMAIN"
	# The nft rule rejects the datagram with an ICMP error, which this
	# runsc's netstack does not report to a UDP socket: the query times out
	# instead of failing at once. What matters is that it never arrives.
	expect $G "dns 198.18.0.53 gvdirect.test udp" timeout "gvisor: DNS straight to the upstream (UDP) gets no answer"
	expect $G "dns 198.18.0.53 gvdirect.test tcp" refused "gvisor: DNS straight to the upstream (TCP) fails"
	if grep -q 'gvdirect.test' "$TMP/upstream.log" 2>/dev/null; then
		bad "gvisor: the upstream never saw the direct queries" "$(grep gvdirect "$TMP/upstream.log" | head -1)"
	else
		ok "gvisor: the upstream never saw the direct queries"
	fi
	expect $G "tcp 169.254.169.254 80" refused "gvisor: metadata is unreachable"
	expect $G "tcp GW 8081" refused "gvisor: the host's services on the gateway are unreachable"
	expect $G "tcp 10.77.0.1 80" refused "gvisor: private ranges are unreachable"
	if grep -q '"backend":"gvisor"' "$G.err" && grep -q '"name":"other.test"' "$G.err"; then
		ok "gvisor: the result names the backend and the denied name"
	else
		bad "gvisor: the result names the backend and the denied name" "$(tail -1 "$G.err")"
	fi
	sandbox "$TMP/gvf" -o backend=gvisor -o network=full -o dns_upstream=[198.18.0.53] -- \
		tcp 198.18.0.20 443 -- resolve other.test -- tcp 169.254.169.254 80 -- tcp 192.0.2.2 8081
	expect "$TMP/gvf" "tcp 198.18.0.20 443" ok "gvisor: full reaches host B"
	expect "$TMP/gvf" "resolve other.test" 198.18.0.20 "gvisor: full resolves any name"
	expect "$TMP/gvf" "tcp 169.254.169.254 80" refused "gvisor: full does not reach metadata"
	expect "$TMP/gvf" "tcp 192.0.2.2 8081" refused "gvisor: full does not reach the host"
	# The sentry's own netstack has only lo: no route (EHOSTUNREACH).
	sandbox "$TMP/gvn" -o backend=gvisor -- tcp 198.18.0.10 80
	expect "$TMP/gvn" "tcp 198.18.0.10 80" refused "gvisor: none reaches nothing"
	l=$(ls /run/psrun-gvisor 2>/dev/null | grep -v '^platforms$' | while read -r d; do
		kill -0 "${d%%-*}" 2>/dev/null || echo "$d"; done)
	[ -z "$l" ] && ok "gvisor: no state of these runs is left" || bad "gvisor: no state of these runs is left" "$l"
fi

# ---- leaks: 50 in a row, 8 at once, kill -9 then gc ----
leftovers() {
	local l="" i
	# A veth goes with its sandbox's namespace, which the kernel frees in
	# the background after the run: give it a moment.
	for i in $(seq 30); do
		ip -n $OUT -o link show 2>/dev/null | grep -q ' psr' || break
		sleep 0.1
	done
	ip -n $OUT -o link show 2>/dev/null | grep -q ' psr' && l="$l veth"
	ip netns exec $OUT nft list tables 2>/dev/null | grep -q psrun_ && l="$l nft-table"
	[ "$(ls /run/psrun/net 2>/dev/null | sort)" != "$LEASES_BEFORE" ] && l="$l lease"
	pgrep -f "psnet-leak-$$" >/dev/null && l="$l process"
	echo "$l"
}
start=$(date +%s%N)
for i in $(seq 50); do
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- /bin/true psnet-leak-$$ 2>/dev/null
done
ms=$((($(date +%s%N) - start) / 50000000))
l=$(leftovers)
[ -z "$l" ] && ok "50 restricted runs in a row leave nothing (${ms} ms each)" ||
	bad "50 restricted runs in a row leave nothing" "$l"
many=""
for i in $(seq 8); do
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- /bin/sleep 0.5 2>/dev/null &
	many="$many $!"
done
for p in $many; do wait "$p"; done
l=$(leftovers)
[ -z "$l" ] && ok "8 restricted runs at once leave nothing" || bad "8 restricted runs at once leave nothing" "$l"
for delay in 0.005 0.02 0.05 0.5; do
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- /bin/sleep 20 psnet-leak-$$ \
		>/dev/null 2>&1 &
	kpid=$!
	sleep $delay
	kill -9 $kpid 2>/dev/null
	wait $kpid 2>/dev/null
done
sleep 0.3
nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
l=$(leftovers)
[ -z "$l" ] && ok "kill -9 of psrun at four set-up stages, then psrun gc: nothing left" ||
	bad "kill -9 of psrun at four set-up stages, then psrun gc: nothing left" "$l"

summary
[ $fail -eq 0 ]
