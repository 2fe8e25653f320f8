#!/bin/bash
# SPDX-License-Identifier: MIT
# Rootless network: full and restricted (docs/rootless.md#network), run by
# tests/rootless/run.sh as its test users: net.sh BUILD USER [ONE_ID_USER].
# Builds its own fake internet as tests/net/run.sh does (its servers):
#   OUT  plays the host, made here as root: 192.0.2.2 and 198.18.5.5, a
#        listener on :8081 (the host's own services), routes to INET. psrun runs in it as USER
#        (nsenter --net, then setpriv), so pasta's sockets are OUT's.
#   INET 192.0.2.1; on lo 198.18.0.10 (host A, 80), 198.18.0.20 (host B,
#        80), 198.18.0.53 (the fake upstream DNS), 169.254.169.254
#        (metadata, 80), 10.77.0.1 (a private service, 80).
# /dev/net/tun is bound, in a mount namespace of the tier's, to a node the
# user may open (Debian's is 0666; some hosts' 0600), never changed on the
# host. Everything is removed on exit, also on failure. Prints "ok -",
# "FAIL -", "skip -" lines and, last, "rootless-net: P F S".
set -u
BUILD=$1
USER_SUB=$2
USER_ONE=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
NETDIR=$HERE/../net
PSRUN=$(cd "$BUILD" && pwd)/psrun
pass=0 fail=0 skip=0
ok() { echo "ok - net: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - net: $1: $2"; fail=$((fail + 1)); }
skipped() { echo "skip - net: $1: $2"; skip=$((skip + 1)); }
summary() { echo "rootless-net: $pass $fail $skip"; }

for tool in ip nsenter unshare python3 setpriv mknod; do
	command -v "$tool" >/dev/null || { skipped all "$tool not installed"; summary; exit 0; }
done
if ! PASTA=$(command -v pasta); then
	skipped all "pasta is not installed (package passt)"
	summary
	exit 0
fi
[ -c /dev/net/tun ] || { skipped all "no /dev/net/tun (module tun), which pasta needs"; summary; exit 0; }
PY=/usr/bin/python3
[ -x "$PY" ] || { skipped all "no python3 under /usr (the sandbox's)"; summary; exit 0; }

OUT=psrln$$o
INET=psrln$$i
TMP=$(mktemp -d)
chmod 755 "$TMP"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	ip netns del $OUT 2>/dev/null
	ip netns del $INET 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add $OUT || { skipped all "cannot create a network namespace"; summary; exit 0; }
ip netns add $INET
ip link add ${OUT}x type veth peer name ${INET}x 2>/dev/null || { skipped all "no veth"; summary; exit 0; }
ip link set ${OUT}x netns $OUT
ip link set ${INET}x netns $INET
ip -n $OUT addr add 192.0.2.2/24 dev ${OUT}x
ip -n $INET addr add 192.0.2.1/24 dev ${INET}x
for a in 198.18.0.10 198.18.0.20 198.18.0.53 169.254.169.254 10.77.0.1; do
	ip -n $INET addr add $a/32 dev lo
done
for ns in $OUT $INET; do ip -n $ns link set lo up; done
ip -n $OUT link set ${OUT}x up
ip -n $INET link set ${INET}x up
# Another address of the host's, with its services (the listener on
# :8081 is on every address): behind pasta, a destination like any other
# but for psrun's table.
ip -n $OUT addr add 198.18.5.5/32 dev lo
ip -n $OUT route add default via 192.0.2.1
ip -n $OUT route add 169.254.169.254/32 via 192.0.2.1
ip -n $OUT route add 10.77.0.0/16 via 192.0.2.1
ip netns exec $INET "$PY" "$NETDIR/fake_dns.py" 198.18.0.53 "$TMP/upstream.log" 2>"$TMP/dns.err" &
PIDS="$PIDS $!"
ip netns exec $INET "$PY" "$NETDIR/fake_hosts.py" 198.18.0.10:80 198.18.0.20:80 \
	169.254.169.254:80 10.77.0.1:80 2>"$TMP/hosts.err" &
PIDS="$PIDS $!"
ip netns exec $OUT "$PY" "$NETDIR/fake_hosts.py" 0.0.0.0:8081 2>"$TMP/host.err" &
PIDS="$PIDS $!"
for _ in $(seq 50); do
	ip netns exec $INET ss -ltn 2>/dev/null | grep -q '198.18.0.53:53' &&
		ip netns exec $INET ss -ltn 2>/dev/null | grep -q '10.77.0.1:80' &&
		ip netns exec $OUT ss -ltn 2>/dev/null | grep -q ':8081' && break
	sleep 0.1
done
mknod "$TMP/tun" c 10 200 && chmod 666 "$TMP/tun"
mknod "$TMP/tun600" c 10 200 && chmod 600 "$TMP/tun600"
# A pasta that fails as a broken install would, and a PATH without pasta.
mkdir "$TMP/broken" "$TMP/nopasta"
printf '#!/bin/sh\necho "pasta: broken on purpose" >&2\nexit 1\n' >"$TMP/broken/pasta"
chmod 755 "$TMP/broken/pasta"
ln -s /bin/sh "$TMP/nopasta/sh"

# as USER [TUN] -- CMD...: CMD as USER in OUT, with TUN as /dev/net/tun,
# PATH the system's (pasta's directory first) unless PSPATH says otherwise.
as() {
	local u=$1 tun=$TMP/tun
	shift
	[ "$1" != -- ] && { tun=$1; shift; }
	shift
	unshare -m --propagation private sh -c 'mount --bind "$1" /dev/net/tun && shift && exec "$@"' _ \
		"$tun" nsenter --net=/run/netns/$OUT setpriv --reuid="$u" --regid="$u" --init-groups \
		env -i PATH="${PSPATH:-$(dirname "$PASTA"):/usr/bin:/bin}" "$@"
}
PROBE=$(cat "$NETDIR/probe.py")
# sandbox USER OUTFILE psrun-options... -- probe commands
sandbox() {
	local u=$1 out=$2
	shift 2
	local opts=()
	while [ "$1" != "--" ]; do
		opts+=("$1")
		shift
	done
	shift
	(cd / && as "$u" -- "$PSRUN" run --json "${opts[@]}" -- "$PY" -c "$PROBE" "$@") >"$out" 2>"$out.err"
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
# left USER: what of USER and of its subordinate ids is still running
# (none may be: no router, no pasta, no sandbox; the namespaces have no
# other holder).
left() {
	local range start count
	pgrep -u "$1" -a 2>/dev/null
	range=$(grep "^$1:" /etc/subuid | head -1 | cut -d: -f2,3)
	[ -z "$range" ] && return
	start=${range%%:*} count=${range##*:}
	ps -eo uid=,pid=,args= | awk -v s="$start" -v c="$count" '$1 >= s && $1 < s + c'
}
nothing_left() { # USER NAME
	local l=""
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		l=$(left "$1")
		[ -z "$l" ] && break
		sleep 0.2
	done
	if [ -z "$l" ]; then ok "$2"; else bad "$2" "$(echo "$l" | tr '\n' ' ')"; fi
}
# The address layer's checks: its fake hosts speak first, which the name
# check (a verdict on the client's first bytes) would hold back: off, as in
# the net tier; the name check's own item follows the checklist.
RESTRICTED=(-o network=restricted -o 'allow_domains=[allowed.test]' -o 'allow_ports=[80]'
	-o dns_upstream=[198.18.0.53] -o name_check=off)
U=$USER_SUB

# ---- restricted: the bypass checklist, rootless ----
mkdir "$TMP/mine" && chown "$U" "$TMP/mine"
sandbox "$U" "$TMP/r" "${RESTRICTED[@]}" -o network_log="$TMP/mine/netlog" -- \
	resolve allowed.test -- tcp 198.18.0.10 80 -- tcp 198.18.0.20 80 -- resolve other.test -- \
	dns 198.18.0.53 allowed.test udp -- dns 198.18.0.53 allowed.test tcp -- \
	tcp GW 8081 -- tcp 192.0.2.2 8081 -- tcp 192.0.2.1 80 -- tcp 169.254.169.254 80 -- \
	tcp 10.77.0.1 80 -- tcp 127.0.0.1 8081
R=$TMP/r
expect $R "resolve allowed.test" 198.18.0.10 "restricted: an allowed name resolves"
expect $R "tcp 198.18.0.10 80" ok "restricted: its address is reachable"
expect $R "tcp 198.18.0.20 80" refused "restricted: an address never resolved is refused"
expect $R "resolve other.test" nxdomain "restricted: a name not allowed gets NXDOMAIN"
if grep -q '^other.test ' "$TMP/upstream.log" 2>/dev/null; then
	bad "restricted: the upstream never saw the denied name" "$(grep other.test "$TMP/upstream.log" | head -1)"
else
	ok "restricted: the upstream never saw the denied name"
fi
expect $R "dns 198.18.0.53 allowed.test udp" refused "restricted: DNS straight to the upstream (UDP) fails"
expect $R "dns 198.18.0.53 allowed.test tcp" refused "restricted: DNS straight to the upstream (TCP) fails"
expect $R "tcp GW 8081" refused "restricted: the router namespace's gateway is unreachable"
expect $R "tcp 192.0.2.2 8081" refused "restricted: the host's (and router's) address is unreachable"
expect $R "tcp 192.0.2.1 80" refused "restricted: the host's gateway, never resolved, is refused"
expect $R "tcp 169.254.169.254 80" refused "restricted: metadata is unreachable"
expect $R "tcp 10.77.0.1 80" refused "restricted: private ranges are unreachable"
expect $R "tcp 127.0.0.1 8081" refused "restricted: the sandbox's loopback is its own"
if grep -q '"rootless":true,"identity":"subordinate ids","network":"pasta"' "$R.err" &&
	grep -q '"name":"other.test"' "$R.err" && grep -q '"addr":"198.18.0.20","port":80' "$R.err"; then
	ok "restricted: the result says pasta, and names the denied name and address"
else
	bad "restricted: result" "$(tail -1 "$R.err")"
fi
if grep -q '"event":"dns","name":"other.test".*"action":"deny"' "$TMP/mine/netlog" 2>/dev/null &&
	grep -q '"event":"connect","addr":"198.18.0.20","port":80' "$TMP/mine/netlog" &&
	[ "$(stat -c %U "$TMP/mine/netlog")" = "$U" ]; then
	ok "restricted: network_log (the router writes it, as the user) has the denial and the refusal"
else
	bad "restricted: network_log" "$(ls -l "$TMP/mine/netlog" 2>&1; head -c 300 "$TMP/mine/netlog" 2>/dev/null)"
fi
nothing_left "$U" "restricted: nothing of the user is left (router, pasta, sandbox)"

# ---- the identity behind a router: the host sees the subordinate ids ----
range=$(grep "^$U:" /etc/subuid | head -1 | cut -d: -f2)
if [ -n "$range" ]; then
	as "$U" -- "$PSRUN" run "${RESTRICTED[@]}" -- sh -c 'exec sleep 7' >/dev/null 2>&1 &
	idrun=$!
	got=""
	for _ in $(seq 50); do
		got=$(ps -eo uid=,args= | awk '$2 == "sleep" && $3 == 7 {print $1}' | head -1)
		[ -n "$got" ] && break
		sleep 0.1
	done
	if [ "$got" = $((range + 1000)) ]; then
		ok "identity: the sandbox's uid 1000 is the range's 1000th id on the host, not the user's"
	else
		bad "identity" "host uid '${got:-none}', want $((range + 1000))"
	fi
	pkill -KILL -u "$U" -x psrun 2>/dev/null
	wait "$idrun" 2>/dev/null
	nothing_left "$U" "identity: nothing left"
else
	skipped identity "$U has no subordinate ids"
fi

# ---- the sandbox cannot change its rules ----
# nft from inside: the table is in the router's namespace, and the
# sandbox's own namespace is the router's user namespace's, not its own.
as "$U" -- "$PSRUN" run "${RESTRICTED[@]}" -o user=root -- sh -c \
	'/usr/sbin/nft add table inet psrun_x 2>/dev/null; echo "add $?"; /usr/sbin/nft flush ruleset 2>/dev/null; echo "flush $?"' \
	>"$TMP/nft" 2>"$TMP/nft.err"
if grep -q '^add [1-9]' "$TMP/nft" && grep -q '^flush [1-9]' "$TMP/nft"; then
	ok "nft inside the sandbox fails, as root inside too (no right over its network's namespaces)"
else
	bad "nft inside" "$(cat "$TMP/nft" "$TMP/nft.err" | tr '\n' ' ')"
fi
sandbox "$U" "$TMP/after" "${RESTRICTED[@]}" -o user=root -- tcp 198.18.0.20 80
expect "$TMP/after" "tcp 198.18.0.20 80" refused "restricted, as root inside: still refused"

# ---- full ----
sandbox "$U" "$TMP/f" -o network=full -o dns_upstream=[198.18.0.53] -- \
	tcp 198.18.0.20 80 -- resolve other.test -- tcp 169.254.169.254 80 -- tcp 10.77.0.1 80 -- \
	tcp 192.0.2.2 8081 -- tcp GW 8081 -- tcp 198.18.5.5 8081
F=$TMP/f
expect $F "tcp 198.18.0.20 80" ok "full: the fake host is reachable"
expect $F "resolve other.test" 198.18.0.20 "full: names resolve through the proxy"
expect $F "tcp 169.254.169.254 80" refused "full: metadata is unreachable"
expect $F "tcp 10.77.0.1 80" refused "full: private ranges are unreachable"
expect $F "tcp 192.0.2.2 8081" refused "full: the host's address is unreachable"
expect $F "tcp GW 8081" refused "full: the router namespace's gateway is unreachable"
expect $F "tcp 198.18.5.5 8081" refused "full: the host's other addresses are unreachable through pasta"
if [ -n "$USER_ONE" ]; then
	sandbox "$USER_ONE" "$TMP/one" -o network=full -o dns_upstream=[198.18.0.53] -- tcp 198.18.0.20 80
	expect "$TMP/one" "tcp 198.18.0.20 80" ok "full, one id: the fake host is reachable"
	grep -q '"identity":"one id","network":"pasta"' "$TMP/one.err" &&
		ok "full, one id: layers say so" || bad "one id layers" "$(tail -1 "$TMP/one.err")"
	nothing_left "$USER_ONE" "full, one id: nothing left"
fi

# ---- slirp4netns, where it is on PATH and pasta is not ----
if SLIRP=$(command -v slirp4netns); then
	mkdir "$TMP/slirp" && ln -s "$SLIRP" "$TMP/slirp/slirp4netns"
	PSPATH=$TMP/slirp sandbox "$U" "$TMP/s" -o network=full -o dns_upstream=[198.18.0.53] -- \
		tcp 198.18.0.20 80 -- resolve other.test -- tcp 198.18.5.5 8081 -- tcp 10.0.2.2 8081 -- \
		tcp 192.0.2.2 8081
	S=$TMP/s
	expect $S "tcp 198.18.0.20 80" ok "slirp4netns: full reaches the fake host"
	expect $S "resolve other.test" 198.18.0.20 "slirp4netns: names resolve through the proxy"
	expect $S "tcp 198.18.5.5 8081" refused "slirp4netns: the host's other addresses are unreachable"
	expect $S "tcp 192.0.2.2 8081" refused "slirp4netns: the host's address is unreachable"
	expect $S "tcp 10.0.2.2 8081" refused "slirp4netns: its gateway (the host) is unreachable"
	grep -q '"network":"slirp4netns"' "$S.err" && ok "slirp4netns: layers say so" ||
		bad "slirp4netns layers" "$(tail -1 "$S.err")"
	nothing_left "$U" "slirp4netns: nothing left"
else
	skipped slirp4netns "slirp4netns is not installed"
fi

# ---- what cannot hold without root: one line, nothing left ----
# one_line NAME PATTERN psrun-run-args...: as U, must fail with 125 and
# exactly one line matching PATTERN.
one_line() {
	local name=$1 pat=$2
	shift 2
	local rc
	as "$U" ${TUN:+"$TUN"} -- "$PSRUN" run "$@" -- true >"$TMP/o" 2>"$TMP/e"
	rc=$?
	if [ "$rc" -eq 125 ] && [ "$(wc -l <"$TMP/e")" -eq 1 ] && grep -q -- "$pat" "$TMP/e"; then
		ok "$name"
	else
		bad "$name" "rc $rc: $(cat "$TMP/e" | tr '\n' ' ')"
	fi
	nothing_left "$U" "$name: nothing left"
}
PSPATH=$TMP/broken:/usr/bin:/bin one_line "a failing pasta fails the start" \
	'network: pasta: pasta: broken on purpose' "${RESTRICTED[@]}"
PSPATH=$TMP/nopasta one_line "no pasta on PATH: one line naming passt" \
	'network: restricted without root needs pasta on PATH: install the passt package' "${RESTRICTED[@]}"
TUN=$TMP/tun600 one_line "no access to /dev/net/tun: one line" \
	'network: full without root needs /dev/net/tun' -o network=full -o dns_upstream=[198.18.0.53]
one_line "a resolver on the host's loopback: one line" \
	'dns_upstream: the resolver on the host.s loopback' -o network=full -o dns_upstream=[127.0.0.53]
one_line "a resolver on the host's own address: one line" \
	'dns_upstream: a resolver on an address of the host.s own' -o network=full -o dns_upstream=[192.0.2.2]

# ---- teardown: a timeout, kill -9 of psrun, gc ----
start=$(date +%s)
as "$U" -- "$PSRUN" run "${RESTRICTED[@]}" -o timeout=1s -- sleep 60 >"$TMP/o" 2>"$TMP/e"
rc=$?
if [ "$rc" -ne 0 ] && [ $(($(date +%s) - start)) -lt 20 ]; then
	ok "timeout: the run ends"
else
	bad timeout "rc $rc after $(($(date +%s) - start)) s"
fi
nothing_left "$U" "timeout: nothing left"
as "$U" -- "$PSRUN" run "${RESTRICTED[@]}" -- sleep 60 >/dev/null 2>&1 &
runner=$!
psrun_pid=""
# psrun is pasta's parent (the router is another psrun, its child).
for _ in $(seq 50); do
	pasta_pid=$(pgrep -u "$U" -f '^pasta ' | head -1)
	[ -n "$pasta_pid" ] && psrun_pid=$(ps -o ppid= -p "$pasta_pid" | tr -d ' ') && break
	sleep 0.1
done
if [ -n "$psrun_pid" ] && [ "$(ps -o comm= -p "$psrun_pid")" = psrun ]; then
	kill -9 "$psrun_pid"
	wait "$runner" 2>/dev/null
	nothing_left "$U" "kill -9 of psrun: its router, pasta and sandbox die with it"
else
	bad "kill -9" "the run did not start: $(pgrep -u "$U" -a | tr '\n' ' ')"
	pkill -KILL -u "$U"
	wait "$runner" 2>/dev/null
fi
# (An OCI root and a session root of the user's: the default ones are
# root's, rootless OCI and sessions are other slices.)
mkdir "$TMP/gc" && chown "$U" "$TMP/gc"
if as "$U" -- env PSRUN_SESSION_ROOT="$TMP/gc/sessions" "$PSRUN" --root "$TMP/gc/oci" gc \
	>"$TMP/o" 2>"$TMP/e"; then
	ok "psrun gc as the user: nothing of the network to reap, no error"
else
	bad "gc" "$(cat "$TMP/o" "$TMP/e" | tr '\n' ' ')"
fi
summary
