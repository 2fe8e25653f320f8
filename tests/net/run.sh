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
#        853 8443, UDP echo on 443), 198.18.0.20 (host B, 80 443),
#        198.18.0.53 (the fake upstream DNS, tests/net/fake_dns.py),
#        198.18.0.30 (a PyPI simple index and an npm registry,
#        tests/net/fake_index.py, as pypi.test and npm.test),
#        169.254.169.254 (metadata, 80), 10.77.0.1 (a private service, 80)
#        and 2001:db8::10 (host A over IPv6, 80; OUT reaches it through
#        2001:db8:1::/64).
# Names on each connection (name_check: SNI and Host against the pins) are
# tests/net/names.sh.
# Sessions in this internet (their network, installs, approval, the agent
# loop example) are tests/net/session.sh; floods that would make psrun spend
# the host's CPU for a sandbox, tests/net/flood.sh, last.
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
for tool in ip nft nsenter python3 flock; do
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
	# Sessions still alive (a test that failed half-way): SIGTERM makes a
	# supervisor destroy its session.
	for info in "$TMP"/sessions/*/info; do
		[ -e "$info" ] && kill "$(awk '/^pid /{print $2}' "$info")" 2>/dev/null
	done
	sleep 0.2
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
for a in 198.18.0.10 198.18.0.11 198.18.0.20 198.18.0.30 198.18.0.53 169.254.169.254 10.77.0.1; do
	ip -n $INET addr add $a/32 dev lo
done
ip -n $INET addr add 2001:db8::10/128 dev lo
ip -n $OUT addr add 2001:db8:1::2/64 dev ${OUT}x nodad
ip -n $INET addr add 2001:db8:1::1/64 dev ${INET}x nodad
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
ip -n $OUT -6 route add 2001:db8::10/128 via 2001:db8:1::1

ip netns exec $INET "$PY" "$HERE/fake_dns.py" 198.18.0.53 "$TMP/upstream.log" 2>"$TMP/dns.err" &
PIDS="$PIDS $!"
ip netns exec $INET "$PY" "$HERE/fake_hosts.py" 198.18.0.10:80 198.18.0.10:443 198.18.0.10:853 \
	198.18.0.10:8443 198.18.0.11:80 198.18.0.20:80 198.18.0.20:443 169.254.169.254:80 10.77.0.1:80 \
	[2001:db8::10]:80 2>"$TMP/hosts.err" &
PIDS="$PIDS $!"
ip netns exec $OUT "$PY" "$HERE/fake_hosts.py" 0.0.0.0:8081 2>"$TMP/host.err" &
PIDS="$PIDS $!"
ip netns exec $INET "$PY" "$HERE/fake_index.py" 198.18.0.30 "$TMP/index.log" 2>"$TMP/index.err" &
PIDS="$PIDS $!"
for _ in $(seq 50); do
	ip netns exec $INET ss -ltn 2>/dev/null | grep -q '198.18.0.53:53' &&
		ip netns exec $INET ss -ltn 2>/dev/null | grep -q '10.77.0.1:80' &&
		ip netns exec $INET ss -ltn 2>/dev/null | grep -q '198.18.0.30:80' && break
	sleep 0.1
done

# The address layer: the fake hosts speak first ("hello from ..."), which
# the name check (name_check, tests/net/names.sh) would hold back until the
# probe asked for a name, so these runs check addresses alone.
RESTRICTED=(-o network=restricted -o 'allow_domains=[allowed.test, "*.zone.test"]'
	-o dns_upstream=[198.18.0.53] -o name_check=off)
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
if grep -q '"violations":\[.*{"layer":"network","what":"other.test","count":[1-9]' "$R.err" &&
	grep -q '{"layer":"network","what":"198.18.0.20:80/tcp","count":[1-9]' "$R.err"; then
	ok "violations: the denied name and the refused address are network entries"
else
	bad "violations: the denied name and the refused address are network entries" "$(tail -1 "$R.err")"
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

# ---- beyond the checklist: what else a sandbox could try ----
# Malformed messages (hex): a name that points at itself, a pointer past
# the end, 320 characters of labels, a label holding a dot.
HDR=123401000001000000000000
LOOP=${HDR}c00c00010001
BADPTR=${HDR}c0ff00010001
LONG=$HDR$(for _ in 1 2 3 4 5; do printf '3f'; printf '61%.0s' $(seq 63); done)0000010001
DOT=${HDR}03612e6204746573740000010001
# Two questions (FORMERR), and a well-formed query with an EDNS OPT record.
TWOQ=123401000002000000000000${ALLOWED:=07616c6c6f77656404746573740000010001}$ALLOWED
EDNS=123401000001000000000001${ALLOWED}0000291000000000000000
NOTIMP=123411000001000000000000$ALLOWED
sandbox "$TMP/x" "${RESTRICTED[@]}" -o network_log="$TMP/xlog" -- \
	dns GW tunnel-secret-1.other.test tcp -- resolve alias.other.test -- \
	resolveall extra.zone.test -- tcp 198.18.0.20 80 -- tcp 198.18.0.11 80 -- \
	tcp ::ffff:198.18.0.20 80 -- resolve allowed.test -- tcp ::ffff:198.18.0.10 80 -- \
	tcp 198.18.0.10 8443 -- udpbig 198.18.0.10 443 3000 -- udpbig 198.18.0.53 53 3000 -- \
	udpbig GW 53 3000 -- dnsraw GW udp $LOOP -- dnsraw GW tcp $LOOP -- dnsraw GW udp $BADPTR -- \
	dnsraw GW udp $LONG -- dnsraw GW tcp $LONG -- dnsraw GW udp $DOT -- dnsraw GW udp $TWOQ -- \
	dnsraw GW udp $EDNS -- dnsraw GW udp $NOTIMP -- dns GW allowed.test udp -- \
	dns GW allowed.test tcp -- icmp 198.18.0.10
X=$TMP/x
expect $X "dns GW tunnel-secret-1.other.test tcp" rcode3-an0 "DNS over TCP: a name not allowed gets NXDOMAIN"
if grep -q 'tunnel-secret-1' "$TMP/upstream.log" 2>/dev/null; then
	bad "DNS over TCP: the denied name never reaches the upstream" "$(grep tunnel-secret "$TMP/upstream.log")"
else
	ok "DNS over TCP: the denied name never reaches the upstream"
fi
expect $X "resolve alias.other.test" nxdomain "a disallowed name that CNAMEs to an allowed one is refused"
if grep -q '^alias.other.test ' "$TMP/upstream.log" 2>/dev/null; then
	bad "a disallowed name is not forwarded, whatever it points to" "$(grep alias "$TMP/upstream.log")"
else
	ok "a disallowed name is not forwarded, whatever it points to"
fi
expect $X "resolveall extra.zone.test" 198.18.0.10 "records of other names and the additional section are not passed on"
expect $X "tcp 198.18.0.20 80" refused "an answer-section address of another name is not pinned"
expect $X "tcp 198.18.0.11 80" refused "an additional-section address is not pinned"
expect $X "tcp ::ffff:198.18.0.20 80" refused "a v4-mapped IPv6 address goes through the same rules"
expect $X "tcp ::ffff:198.18.0.10 80" ok "a v4-mapped pinned address is reached as the v4 one"
expect $X "tcp 198.18.0.10 8443" refused "a pinned address on a port not in allow_ports is refused"
expect $X "udpbig 198.18.0.10 443 3000" refused "fragmented UDP to a pinned address is refused"
expect $X "udpbig 198.18.0.53 53 3000" refused "fragmented UDP to the upstream is refused"
expect $X "dnsraw GW udp $LOOP" timeout "a query whose name points at itself is dropped"
expect $X "dnsraw GW udp $BADPTR" timeout "a query whose name points past its end is dropped"
expect $X "dnsraw GW udp $LONG" timeout "a query with a 320-character name is dropped"
expect $X "dnsraw GW udp $DOT" timeout "a query with a dot inside a label is dropped"
expect $X "dnsraw GW udp $TWOQ" rcode1-an0 "a query with two questions gets FORMERR"
expect $X "dnsraw GW udp $EDNS" rcode0-an1 "a query with an EDNS OPT record is answered"
expect $X "dnsraw GW udp $NOTIMP" rcode4-an0 "another opcode gets NOTIMP"
expect $X "dnsraw GW tcp $LOOP" closed "a malformed query over TCP closes the connection"
expect $X "dnsraw GW tcp $LONG" closed "an oversize name over TCP closes the connection"
expect $X "dns GW allowed.test udp" rcode0-an1 "the proxy still answers after garbage (UDP)"
expect $X "dns GW allowed.test tcp" rcode0-an1 "the proxy still answers after garbage (TCP)"
expect $X "icmp 198.18.0.10" socket-eacces "no ICMP socket inside (ping_group_range)"
if grep -q '"name":"extra.zone.test".*"addrs":\["198.18.0.10"\]' "$TMP/xlog" 2>/dev/null; then
	ok "network_log lists only the addresses pinned"
else
	bad "network_log lists only the addresses pinned" "$(grep extra "$TMP/xlog" 2>/dev/null)"
fi

# ---- 8: a pin ends with its TTL ----
sandbox "$TMP/ttl" "${RESTRICTED[@]}" -o dns_min_ttl=1 -- resolve ttl2.zone.test -- \
	tcp 198.18.0.11 80 -- sleep 3.5 -- tcp 198.18.0.11 80
if grep -q "tcp 198.18.0.11 80 -> ok" "$TMP/ttl" && [ "$(grep -c 'tcp 198.18.0.11 80 -> refused' "$TMP/ttl")" = 1 ]; then
	ok "8: the 2 s pin works, then expires"
else
	bad "8: the 2 s pin works, then expires" "$(tr '\n' ' ' <"$TMP/ttl")"
fi

# ---- the keys, one by one ----
# dns_max_ttl cuts a pin (and the TTL the sandbox sees) short; without
# dns_min_ttl a 2 s TTL still pins for the default 30 s; dns_upstream falls
# back to the next server; allow_private in restricted opens only pinned
# answers; network_pool is where the /30 comes from. Run side by side.
sandbox "$TMP/maxttl" "${RESTRICTED[@]}" -o dns_min_ttl=0 -o dns_max_ttl=1 -- resolve allowed.test -- \
	dnsttl GW allowed.test -- tcp 198.18.0.10 80 -- sleep 2.5 -- tcp 198.18.0.10 80 &
k1=$!
sandbox "$TMP/minttl" "${RESTRICTED[@]}" -- resolve ttl2.zone.test -- sleep 3.5 -- tcp 198.18.0.11 80 &
k2=$!
sandbox "$TMP/fallback" -o network=restricted -o 'allow_domains=[allowed.test]' \
	-o 'dns_upstream=[198.18.0.54, 198.18.0.53]' -- resolve allowed.test &
k3=$!
sandbox "$TMP/privr" -o network=restricted -o 'allow_domains=[private.test]' -o dns_upstream=[198.18.0.53] -o name_check=off \
	-o 'allow_private=[10.77.0.0/16]' -- tcp 10.77.0.1 80 -- resolve private.test -- tcp 10.77.0.1 80 &
k4=$!
sandbox "$TMP/pool" "${RESTRICTED[@]}" -o network_pool=198.18.64.0/28 -- gw -- resolve allowed.test -- \
	tcp 198.18.0.10 80 -- sleep 2 &
k5=$!
kp=""
for i in 2 3 4; do
	sandbox "$TMP/pool$i" "${RESTRICTED[@]}" -o network_pool=198.18.64.0/28 -- gw -- sleep 2 &
	kp="$kp $!"
done
# Another pool at the same time: its slots are the same numbers, its
# NFLOG group must not be (it was: "nflog: bind group ...").
sandbox "$TMP/pool6" "${RESTRICTED[@]}" -o network_pool=198.18.80.0/28 -- resolve allowed.test -- \
	tcp 198.18.0.20 80 &
kp="$kp $!"
sleep 1
# The four /30s of the /28 are taken: a fifth fails, one line naming the step.
nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -o network_pool=198.18.64.0/28 -- /bin/true \
	>/dev/null 2>"$TMP/pool5.err"
st5=$?
for k in $k1 $k2 $k3 $k4 $k5 $kp; do wait $k; done
expect "$TMP/maxttl" "dnsttl GW allowed.test" 1 "dns_max_ttl: the sandbox sees the TTL cut to it"
if grep -q "tcp 198.18.0.10 80 -> ok" "$TMP/maxttl" &&
	[ "$(grep -c 'tcp 198.18.0.10 80 -> refused' "$TMP/maxttl")" = 1 ]; then
	ok "dns_max_ttl: the pin of a 60 s answer ends after 1 s"
else
	bad "dns_max_ttl: the pin of a 60 s answer ends after 1 s" "$(tr '\n' ' ' <"$TMP/maxttl")"
fi
expect "$TMP/minttl" "tcp 198.18.0.11 80" ok "dns_min_ttl (30 s by default) keeps a 2 s answer's pin"
expect "$TMP/fallback" "resolve allowed.test" 198.18.0.10 "dns_upstream: a silent server is passed over for the next"
expect "$TMP/privr" "tcp 10.77.0.1 80" refused "allow_private in restricted: a private address without a pin is refused"
if grep -q "resolve private.test -> 10.77.0.1" "$TMP/privr" &&
	[ "$(grep -c 'tcp 10.77.0.1 80 -> ok' "$TMP/privr")" = 1 ]; then
	ok "allow_private in restricted: a private answer it covers is pinned and reached"
else
	bad "allow_private in restricted: a private answer it covers is pinned and reached" "$(tr '\n' ' ' <"$TMP/privr")"
fi
gws=$(for f in "$TMP/pool" "$TMP/pool2" "$TMP/pool3" "$TMP/pool4"; do sed -n 's/^gw -> //p' "$f"; done | sort -t. -k4n | tr '\n' ' ')
if [ "$gws" = "198.18.64.1 198.18.64.5 198.18.64.9 198.18.64.13 " ]; then
	ok "network_pool: each sandbox gets its own /30 of the pool"
else
	bad "network_pool: each sandbox gets its own /30 of the pool" "gateways '$gws'"
fi
expect "$TMP/pool" "tcp 198.18.0.10 80" ok "network_pool: a sandbox from the given pool reaches its pin"
expect "$TMP/pool6" "tcp 198.18.0.20 80" refused "two pools at once: each sandbox has its own NFLOG group"
if grep -q '"addr":"198.18.0.20","port":80' "$TMP/pool6.err"; then
	ok "two pools at once: the refusal is reported to the right sandbox"
else
	bad "two pools at once: the refusal is reported to the right sandbox" "$(tail -c 300 "$TMP/pool6.err")"
fi
if [ $st5 -eq 125 ] && [ "$(wc -l <"$TMP/pool5.err")" = 1 ] &&
	grep -q "^psrun: network: lease: every /30 of the pool is taken" "$TMP/pool5.err"; then
	ok "a full pool stops the sandbox with one line naming the step"
else
	bad "a full pool stops the sandbox with one line naming the step" "exit $st5: $(cat "$TMP/pool5.err")"
fi

# dns_upstream not given: the nameservers of /etc/resolv.conf (a file of
# the test's own, bound over the host's in a mount namespace of its own).
printf 'nameserver 198.18.0.53\n' >"$TMP/resolv.conf"
nsenter --net=/run/netns/$OUT unshare -m sh -c "mount --bind '$TMP/resolv.conf' /etc/resolv.conf &&
	exec '$PSRUN' run -o network=restricted -o 'allow_domains=[allowed.test]' -- '$PY' -c \"\$1\" \
	resolve allowed.test" sh "$PROBE" >"$TMP/hostres" 2>"$TMP/hostres.err"
expect "$TMP/hostres" "resolve allowed.test" 198.18.0.10 "dns_upstream defaults to the host's resolv.conf"
printf '# no nameserver\n' >"$TMP/resolv.conf"
nsenter --net=/run/netns/$OUT unshare -m sh -c "mount --bind '$TMP/resolv.conf' /etc/resolv.conf &&
	exec '$PSRUN' run -o network=full -- /bin/true" >/dev/null 2>"$TMP/nores.err"
st=$?
if [ $st -eq 125 ] && [ "$(wc -l <"$TMP/nores.err")" = 1 ] &&
	grep -q "^psrun: network: dns_upstream: not given, and the host's /etc/resolv.conf names no nameserver" "$TMP/nores.err"; then
	ok "no upstream to be had stops the sandbox with one line naming the key"
else
	bad "no upstream to be had stops the sandbox with one line naming the key" "exit $st: $(cat "$TMP/nores.err")"
fi

# The result lists the first 32 distinct refusals and counts the rest.
sandbox "$TMP/many" "${RESTRICTED[@]}" -- resolvemany denied 40
expect "$TMP/many" "resolvemany denied 40" 40 "40 names not allowed all get NXDOMAIN"
if grep -q '"denied_queries":40,' "$TMP/many.err" &&
	[ "$(grep -o '"name":"denied[0-9]*\.test"' "$TMP/many.err" | wc -l)" = 32 ] &&
	grep -q '"denied_more":8' "$TMP/many.err"; then
	ok "the result lists the first 32 distinct refusals and counts the rest"
else
	bad "the result lists the first 32 distinct refusals and counts the rest" "$(tail -c 300 "$TMP/many.err")"
fi

# psrun policy prints the presets expanded.
pol=$("$PSRUN" policy -o network=restricted -o 'allow_domains=["@pypi", "@npm", "@crates", "@go", "@github"]' 2>&1)
want='"allow_domains": ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "crates.io", "index.crates.io", "static.crates.io", "proxy.golang.org", "sum.golang.org", "github.com", "api.github.com", "codeload.github.com", "objects.githubusercontent.com", "raw.githubusercontent.com"]'
if grep -qF -- "$want" <<<"$pol"; then
	ok "psrun policy prints the presets expanded"
else
	bad "psrun policy prints the presets expanded" "$(grep allow_domains <<<"$pol")"
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

# ---- what the sandbox cannot switch on, switched on from outside ----
# The test (root) does inside the sandbox's namespace what its code cannot:
# ping sockets allowed, IPv6 on (eth0 and the host end, with addresses of
# 2001:db8:5053::/64, routes and neighbours both ways, OUT forwarding
# IPv6), and the /30's network address added to eth0 (its broadcast address
# would not do: a socket bound to it sends from the interface's own). The
# host's rules must still refuse ICMP (but errors) and all IPv6, and drop
# any source but the sandbox's own: INET counts what reaches it from the
# /30's other addresses.
nsenter --net=/run/netns/$OUT "$PSRUN" run --json "${RESTRICTED[@]}" -- "$PY" -c "$PROBE" \
	resolve allowed.test -- sleep 1.5 -- icmp 198.18.0.10 -- icmp GW -- tcp 2001:db8::10 80 -- \
	tcp 198.18.0.10 80 NET -- tcp 198.18.0.10 80 >"$TMP/outside" 2>"$TMP/outside.err" &
opid=$!
sleep 0.7
child=$(cat /proc/$opid/task/*/children 2>/dev/null | awk '{print $1}')
veth=$(ip -n $OUT -o link show 2>/dev/null | awk -F': ' '/ psr/ {print $2}' | cut -d@ -f1 | head -1)
gw=$(ip -n $OUT -4 -o addr show dev "$veth" 2>/dev/null | awk '{print $4}' | cut -d/ -f1)
others=$(echo "$gw" | awk -F. '{printf "%s.%s.%s.%d %s %s.%s.%s.%d", $1, $2, $3, $4 - 1, $0, $1, $2, $3, $4 + 2}')
net=${others%% *}
host_mac=$(ip -n $OUT -o link show dev "$veth" 2>/dev/null | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p')
if [ -n "$child" ] && [ -n "$veth" ] && [ -n "$gw" ] &&
	ip netns exec $INET nft "add table ip psnet_count; add counter ip psnet_count spoofed;
		add chain ip psnet_count pre { type filter hook prerouting priority -300; };
		add rule ip psnet_count pre ip saddr { $(echo $others | tr ' ' ',') } counter name spoofed" &&
	nsenter --net=/proc/$child/ns/net sh -c "
		echo '0 2147483647' > /proc/sys/net/ipv4/ping_group_range &&
		echo 0 > /proc/sys/net/ipv6/conf/eth0/disable_ipv6 &&
		ip -6 addr add 2001:db8:5053::2/64 dev eth0 nodad &&
		ip -6 route add default via 2001:db8:5053::1 dev eth0 &&
		ip -6 neigh add 2001:db8:5053::1 lladdr $host_mac dev eth0 nud permanent &&
		ip addr add $net/32 dev eth0" 2>"$TMP/outside.setup" &&
	sb_mac=$(nsenter --net=/proc/$child/ns/net ip -o link show dev eth0 |
		sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p') &&
	ip netns exec $OUT sh -c "echo 0 > /proc/sys/net/ipv6/conf/$veth/disable_ipv6 &&
		echo 1 > /proc/sys/net/ipv6/conf/all/forwarding" 2>>"$TMP/outside.setup" &&
	ip -n $OUT -6 addr add 2001:db8:5053::1/64 dev "$veth" nodad 2>>"$TMP/outside.setup" &&
	ip -n $OUT -6 neigh add 2001:db8:5053::2 lladdr "$sb_mac" dev "$veth" nud permanent \
		2>>"$TMP/outside.setup" &&
	ip -n $INET -6 route add 2001:db8:5053::/64 via 2001:db8:1::2 2>>"$TMP/outside.setup"; then
	wait $opid
	O=$TMP/outside
	expect $O "icmp 198.18.0.10" refused "ICMP echo to a pinned address is refused (ping sockets on)"
	expect $O "icmp GW" refused "ICMP echo to the gateway is refused"
	expect $O "tcp 2001:db8::10 80" refused "IPv6, switched on inside, is refused by the host's rules"
	# The refusals are psrun's (NFLOG), not the far end's.
	if grep -q '"addr":"2001:db8::10","port":80,"proto":"tcp"' "$O.err" &&
		grep -q '"addr":"198.18.0.10","port":0,"proto":"icmp"' "$O.err"; then
		ok "the result names the refused IPv6 connection and ICMP echo"
	else
		bad "the result names the refused IPv6 connection and ICMP echo" "$(tail -1 "$O.err")"
	fi
	expect $O "tcp 198.18.0.10 80 NET" timeout "the /30's network address as source is dropped"
	expect $O "tcp 198.18.0.10 80" ok "the sandbox's own address still works"
	n=$(ip netns exec $INET nft list counter ip psnet_count spoofed 2>/dev/null | awk '/packets/ {print $2}')
	[ "${n:-x}" = 0 ] && ok "no packet with a spoofed source reached the internet" ||
		bad "no packet with a spoofed source reached the internet" "${n:-no counter} packets"
else
	wait $opid
	bad "the rules hold against what is switched on from outside" \
		"could not set up the sandbox's namespace: $(cat "$TMP/outside.setup" 2>/dev/null)"
fi
ip netns exec $INET nft delete table ip psnet_count 2>/dev/null
ip -n $INET -6 route del 2001:db8:5053::/64 2>/dev/null
ip netns exec $OUT sh -c 'echo 0 > /proc/sys/net/ipv6/conf/all/forwarding'

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
sandbox "$TMP/b" -o network=restricted -o 'allow_domains=[other.test]' -o dns_upstream=[198.18.0.53] -o name_check=off -- \
	resolve other.test -- tcp 198.18.0.20 80 -- tcp 198.18.0.10 80 -- tcp "$a_addr" 80 -- tcp "$a_gw" 53
wait $apid
expect "$TMP/b" "tcp 198.18.0.20 80" ok "14: the second sandbox reaches its own allowed host"
expect "$TMP/b" "tcp 198.18.0.10 80" refused "14: but not the first sandbox's pinned address"
expect "$TMP/b" "tcp $a_addr 80" refused "14: nor the first sandbox itself"
expect "$TMP/b" "tcp $a_gw 53" refused "14: nor the first sandbox's DNS proxy"

# ---- allow_private never opens the pool (other sandboxes) ----
# 10/8 covers the default pool (10.213.0.0/16 here): still, the other
# sandbox, its gateway and the rest of the pool are refused at once.
nsenter --net=/run/netns/$OUT "$PSRUN" run -o network=full -o dns_upstream=[198.18.0.53] -- \
	"$PY" -c "$PROBE" sleep 3 >/dev/null 2>&1 &
apid=$!
sleep 0.8
a_gw=$(ip -n $OUT -4 -o addr show | awk '/ psr/ {print $4}' | head -1 | cut -d/ -f1)
a_addr=$(echo "$a_gw" | awk -F. '{print $1"."$2"."$3"."$4+1}')
sandbox "$TMP/pp" -o network=full -o dns_upstream=[198.18.0.53] -o 'allow_private=[10.0.0.0/8]' -- \
	tcp "$a_addr" 80 -- tcp "$a_gw" 53 -- tcp 10.77.0.1 80
wait $apid
expect "$TMP/pp" "tcp $a_addr 80" refused "allow_private over the pool: another sandbox is still refused"
expect "$TMP/pp" "tcp $a_gw 53" refused "allow_private over the pool: its gateway is still refused"
expect "$TMP/pp" "tcp 10.77.0.1 80" ok "allow_private over the pool: the rest of 10/8 is open"

# ---- the table, as nft lists it, is the ruleset docs/network.md describes ----
# psrun writes its table in nf_tables netlink (netns/nft.c); this is the same
# ruleset in nft's own language. Loaded by nft into a namespace of its own,
# it must list exactly as psrun's does (the same nft prints both).
reference_table() { # id sandbox gateway pool group mode allowpriv-elements relay-port
	local h="psr$1" elements="" forward="    accept" checks="" prerouting="" counter=""
	[ -n "$7" ] && elements=" elements = { $7 }"
	# name_check (the default in restricted): the listener's rules, and
	# the redirect of 80 and 443 to it.
	if [ -n "$8" ]; then
		counter="
  counter checks_dropped { }"
		checks="
    ip saddr $2 ip daddr $3 tcp dport $8 ct state new limit rate over 200/second burst 400 packets counter name \"checks_dropped\" drop
    ip saddr $2 ip daddr $3 tcp dport $8 ct status dnat accept"
		prerouting="
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname \"$h\" ip saddr $2 tcp dport { 80, 443 } ip daddr . tcp dport @pin4 redirect to :$8
  }"
	fi
	[ "$6" = restricted ] && forward="    ip daddr . tcp dport @pin4 accept
    ip daddr 198.18.0.0/24 tcp dport { 80, 443, 8443 } accept
    ip daddr 192.0.2.7/32 tcp dport 8080 accept
    ip daddr 10.77.0.0/30 tcp dport 22 accept"
	cat <<EOF
table inet psrun_$1 {
  counter dns_dropped { }
  counter unlogged { }$counter
  set pin4 { type ipv4_addr . inet_service; flags timeout; }
  set pin6 { type ipv6_addr . inet_service; flags timeout; }
  set allowpriv4 { type ipv4_addr; flags interval; auto-merge;$elements }
  chain input {
    type filter hook input priority -10; policy accept;
    iifname "$h" jump from_sandbox_to_host
  }
  chain from_sandbox_to_host {
    ip saddr $2 ip daddr $3 udp dport 53 limit rate over 250/second burst 500 packets counter name "dns_dropped" drop
    ip saddr $2 ip daddr $3 tcp dport 53 ct state new limit rate over 50/second burst 100 packets counter name "dns_dropped" drop
    ip saddr $2 ip daddr $3 meta l4proto { tcp, udp } th dport 53 accept$checks
    goto refuse
  }
  chain forward {
    type filter hook forward priority -10; policy accept;
    iifname "$h" jump from_sandbox
    oifname "$h" jump to_sandbox
  }
  chain to_sandbox {
    ct state established,related accept
    drop
  }
  chain from_sandbox {
    ip saddr != $2 drop
    meta nfproto ipv6 goto refuse
    ct state established,related accept
    ip daddr { 0.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16, 224.0.0.0/4, 240.0.0.0/4 } goto refuse
    ip daddr $4 goto refuse
    ip daddr { 10.0.0.0/8, 100.64.0.0/10, 172.16.0.0/12, 192.168.0.0/16 } ip daddr != @allowpriv4 goto refuse
$forward
    goto refuse
  }
  chain refuse {
    ct state new jump log_refusal
    meta l4proto tcp reject with tcp reset
    reject with icmpx admin-prohibited
  }
  chain log_refusal {
    limit rate over 50/second burst 100 packets counter name "unlogged" return
    log group $5
  }
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    ip saddr $2 oifname != "$h" masquerade
  }$prerouting
}
EOF
}
same_table() { # NAME mode pool allowpriv-elements psrun-options...
	local name=$1 mode=$2 pool=$3 priv=$4
	shift 4
	nsenter --net=/run/netns/$OUT "$PSRUN" run "$@" -- /bin/sleep 2 >/dev/null 2>"$TMP/st.err" &
	local spid=$! id="" i
	for i in $(seq 30); do
		id=$(ip netns exec $OUT nft list tables 2>/dev/null | sed -n 's/^table inet psrun_//p' | head -1)
		[ -n "$id" ] && ip -n $OUT -4 -o addr show dev "psr$id" 2>/dev/null | grep -q inet && break
		sleep 0.1
	done
	ip netns exec $OUT nft list table inet "psrun_$id" >"$TMP/st.psrun" 2>&1
	local gw sb group relay
	gw=$(ip -n $OUT -4 -o addr show dev "psr$id" | awk '{print $4}' | cut -d/ -f1)
	sb=$(echo "$gw" | awk -F. '{print $1"."$2"."$3"."$4+1}')
	group=$(sed -n 's/.*log group \([0-9]*\).*/\1/p' "$TMP/st.psrun")
	relay=$(sed -n 's/.*redirect to :\([0-9]*\).*/\1/p' "$TMP/st.psrun")
	wait $spid
	local ref=psnet$$t
	ip netns add $ref
	reference_table "$id" "$sb" "$gw" "$pool" "$group" "$mode" "$priv" "$relay" >"$TMP/st.nft"
	ip netns exec $ref nft -f "$TMP/st.nft" 2>"$TMP/st.ref" &&
		ip netns exec $ref nft list table inet "psrun_$id" >"$TMP/st.ref" 2>&1
	ip netns del $ref
	if [ -n "$id" ] && [ -n "$group" ] && { [ "$mode" = full ] || [ -n "$relay" ]; } && diff -u "$TMP/st.ref" "$TMP/st.psrun" >"$TMP/st.diff"; then
		ok "$name"
	else
		bad "$name" "id '$id': $(head -c 800 "$TMP/st.diff") $(cat "$TMP/st.err")"
	fi
}
same_table "restricted: the table is the ruleset docs/network.md describes" restricted 198.19.0.0/20 \
	"10.77.0.0/16, 10.77.1.0/24, 192.168.5.0/24" \
	-o network=restricted -o 'allow_domains=[allowed.test]' -o dns_upstream=[198.18.0.53] \
	-o network_pool=198.19.0.0/20 -o 'allow_ports=[80, 443, 8443]' \
	-o 'allow_private=[10.77.0.0/16, 10.77.1.0/24, 192.168.5.0/24]' \
	-o 'allow_cidrs=[198.18.0.0/24, 192.0.2.7/32:8080, 10.77.0.0/30:22]'
same_table "full: the table is the ruleset docs/network.md describes" full 198.19.0.0/20 "" \
	-o network=full -o dns_upstream=[198.18.0.53] -o network_pool=198.19.0.0/20

# ---- keys that cannot work as written are errors, not silent no-ops ----
bad_key() { # bad_key "WANT" psrun-options...
	local want=$1
	shift
	nsenter --net=/run/netns/$OUT "$PSRUN" run "$@" -- /bin/true >/dev/null 2>"$TMP/bk.err"
	local st=$?
	if [ $st -eq 125 ] && [ "$(wc -l <"$TMP/bk.err")" = 1 ] && grep -qF -- "$want" "$TMP/bk.err"; then
		ok "refused: $want"
	else
		bad "refused: $want" "exit $st: $(cat "$TMP/bk.err")"
	fi
}
bad_key "allow_cidrs[0]: 10.77.0.1/32 is in a private range: list it in allow_private too" \
	"${RESTRICTED[@]}" -o 'allow_cidrs=[10.77.0.1/32:80]'
bad_key "allow_cidrs[1]: 169.254.169.254/32 is never reachable" \
	"${RESTRICTED[@]}" -o 'allow_cidrs=[198.18.0.20/32, 169.254.169.254/32:80]'
bad_key "allow_private[0]: 127.0.0.0/8 is never reachable" -o network=full -o dns_upstream=[198.18.0.53] \
	-o 'allow_private=[127.0.0.0/8]'
bad_key "allow_private[0]: 198.18.0.0/15 is not a private range" -o network=full \
	-o dns_upstream=[198.18.0.53] -o 'allow_private=[198.18.0.0/15]'
bad_key "allow_private[0]: IPv6 is off inside the sandbox" -o network=full -o dns_upstream=[198.18.0.53] \
	-o 'allow_private=[fc00::/7]'
bad_key "allow_ports: empty, so no name of allow_domains could be reached" "${RESTRICTED[@]}" \
	-o 'allow_ports=[]'
bad_key "allow_cidrs[0]: 198.18.0.20/32 has no port, and allow_ports is empty" -o network=restricted \
	-o dns_upstream=[198.18.0.53] -o 'allow_ports=[]' -o 'allow_cidrs=[198.18.0.20/32]'
sandbox "$TMP/cp" "${RESTRICTED[@]}" -o 'allow_private=[10.77.0.0/16]' -o 'allow_cidrs=[10.77.0.1/32:80]' -- \
	tcp 10.77.0.1 80
expect "$TMP/cp" "tcp 10.77.0.1 80" ok "allow_cidrs in a range allow_private opens is reachable"

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
# NETLINK_NETFILTER (12) sockets in OUT, of every process.
nfnl_sockets() {
	ip netns exec $OUT awk '$2 == 12' /proc/net/netlink | wc -l
}
NFNL_BEFORE=$(nfnl_sockets)
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
	# psrun leaves its nf_tables sockets' last close to the kernel's
	# AF_UNIX garbage collector (netns/netlink.c): they must be freed soon.
	for i in $(seq 30); do
		[ "$(nfnl_sockets)" -le "$NFNL_BEFORE" ] && break
		sleep 0.1
	done
	[ "$(nfnl_sockets)" -le "$NFNL_BEFORE" ] || l="$l nf_tables-sockets:$(nfnl_sockets)"
	# A lease is a leak if nobody holds its lock (its run is dead); the
	# live leases of other psrun users on this host are theirs.
	local f
	for f in /run/psrun/net/*; do
		[ -e "$f" ] || continue
		grep -qxF "${f##*/}" <<<"$LEASES_BEFORE" && continue
		# On an fd opened for reading: flock(1) given the name would create
		# a lease (empty, unreadable to gc, for good) that a gc removed
		# since the glob.
		{ flock -n -x 9 && l="$l lease:${f##*/}"; } 9<"$f" 2>/dev/null
	done
	# Nothing of the proxies may still listen in OUT (the fake host's 8081 is
	# the test's own).
	ip netns exec $OUT ss -Hlntu 2>/dev/null | grep -q ':53 ' && l="$l socket"
	pgrep -f "psnet-leak-$$" >/dev/null && l="$l process"
	echo "$l"
}
# psrun_run() in the caller's own process (the library): when it returns,
# the table and the lease are gone, though the grace period the kernel
# takes to free the table is not over (its socket's last close is left to
# the kernel's AF_UNIX garbage collector).
LIBRUN='
import ctypes, os, subprocess, sys
lib = ctypes.CDLL(sys.argv[1])
lib.psrun_policy_new.restype = ctypes.c_void_p
pol = ctypes.c_void_p(lib.psrun_policy_new())
err = ctypes.create_string_buffer(4096)
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    if lib.psrun_policy_set(pol, k.encode(), v.encode(), err) != 0:
        sys.exit("set " + k + ": " + err.raw[4:].split(b"\0")[0].decode())
before = set(os.listdir("/run/psrun/net")) if os.path.isdir("/run/psrun/net") else set()
res = ctypes.create_string_buffer(65536)
argv = (ctypes.c_char_p * 2)(b"/bin/true", None)
r = lib.psrun_run(pol, argv, None, res, err)
tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
leases = set(os.listdir("/run/psrun/net")) - before
print(r, "table" if "psrun_" in tables else "no-table", "leases:%d" % len(leases))
lib.psrun_result_free(res)
'
if [ -e "$BUILD/libpsrun.so" ]; then
	# A SANITIZE=1 build's library needs its runtime loaded first.
	asan=$(ldd "$BUILD/libpsrun.so" 2>/dev/null | awk '/libasan/ {print $3}')
	got=$(nsenter --net=/run/netns/$OUT env ${asan:+LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0} \
		"$PY" -c "$LIBRUN" "$(realpath "$BUILD/libpsrun.so")" \
		network=restricted 'allow_domains=[allowed.test]' 'dns_upstream=[198.18.0.53]' 2>&1)
	[ "$got" = "0 no-table leases:0" ] &&
		ok "psrun_run() returns with its table and lease gone" ||
		bad "psrun_run() returns with its table and lease gone" "$got"
else
	skip=$((skip + 1))
	echo "[SKIP] psrun_run() returns with its table and lease gone: no $BUILD/libpsrun.so"
fi
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
	# -F: nsenter forks otherwise, and the kill would miss psrun.
	nsenter -F --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- /bin/sh -c "sleep 20" psnet-leak-$$ \
		>/dev/null 2>&1 &
	kpid=$!
	sleep $delay
	kill -9 $kpid 2>/dev/null
	wait $kpid 2>/dev/null
done
sleep 0.3
nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
l=$(leftovers)
[ -z "$l" ] && ok "kill -9 of psrun at four moments of set-up, then psrun gc: nothing left" ||
	bad "kill -9 of psrun at four moments of set-up, then psrun gc: nothing left" "$l"
# A gc in another network namespace leaves a dead run's lease alone: only
# a gc where the run was can delete its table (it took the lease, and left
# the table for good, before).
(PSRUN_TEST_KILL_AT=net:veth nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- \
	/bin/true >/dev/null 2>&1) 2>/dev/null
nsenter --net=/run/netns/$INET "$PSRUN" gc >/dev/null 2>&1
l=$(leftovers)
case "$l" in
*nft-table*lease:*) ok "psrun gc in another namespace leaves the dead run's lease and table alone" ;;
*) bad "psrun gc in another namespace leaves the dead run's lease and table alone" "left:${l:- nothing}" ;;
esac
nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
l=$(leftovers)
[ -z "$l" ] && ok "psrun gc in the run's namespace then removes both" ||
	bad "psrun gc in the run's namespace then removes both" "$l"
# Each named stage (common/fault.h): the lease and cgroup taken, the table
# added, the veth made, the proxy listening, the sandbox released.
for stage in run:cgroup net:table net:veth run:confined run:released; do
	(PSRUN_TEST_KILL_AT=$stage nsenter --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- \
		/bin/sleep 20 psnet-leak-$$ >/dev/null 2>&1) 2>/dev/null
	st=$?
	sleep 0.2
	nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
	l=$(leftovers)
	if [ $st -eq 137 ] && [ -z "$l" ]; then
		ok "kill -9 of psrun at $stage, then psrun gc: nothing left"
	else
		bad "kill -9 of psrun at $stage, then psrun gc: nothing left" "exit $st;$l"
	fi
done

# A gc in another namespace (INET plays a neighbour) leaves a dead run's
# lease to the gc of the namespace its table is in: removing it there would
# leave that table for good.
nsenter -F --net=/run/netns/$OUT "$PSRUN" run "${RESTRICTED[@]}" -- /bin/sh -c "sleep 20" psnet-leak-$$ \
	>/dev/null 2>&1 &
kpid=$!
sleep 0.7
kill -9 $kpid 2>/dev/null
wait $kpid 2>/dev/null
kid=$(ip netns exec $OUT nft list tables 2>/dev/null | sed -n 's/^table inet psrun_//p' | head -1)
klease=$(grep -l "^$kid\$" /run/psrun/net/* 2>/dev/null | head -1)
ip netns exec $INET "$PSRUN" gc >/dev/null 2>&1
if [ -n "$kid" ] && [ -e "$klease" ] && ip netns exec $OUT nft list tables | grep -q "psrun_$kid"; then
	nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
	l=$(leftovers)
	[ -z "$l" ] && [ ! -e "$klease" ] && ok "gc in another namespace leaves the lease to the table's own namespace's gc" ||
		bad "gc in another namespace leaves the lease to the table's own namespace's gc" "left: $l"
else
	bad "gc in another namespace leaves the lease to the table's own namespace's gc" \
		"id '$kid', lease '$klease' ($(cat "$klease" 2>/dev/null | tr '\n' ' '))"
fi

. "$HERE/names.sh"
. "$HERE/session.sh"
. "$HERE/flood.sh"

summary
[ $fail -eq 0 ]
