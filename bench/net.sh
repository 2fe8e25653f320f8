#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/net.sh PSRUN [BEFORE]
#
# The network modes side by side, in one interleaved run, inside a fake
# internet of network namespaces built here (as tests/net/run.sh does; no
# packet leaves them, nothing of the host's network changes):
#
#   none, full, restricted   start-to-exit of `psrun run -o network=X -- true`
#   dns-direct               one A query from psrun's namespace straight to
#                            the fake upstream (a Python client, UDP)
#   dns-proxy                the same query from inside a restricted sandbox
#                            through psrun's proxy (which forwards and pins)
#   tcp-loopback             TCP throughput, client and sink on the fake
#                            internet's loopback (MB/s; the same client below)
#   tcp-host                 from psrun's namespace to the sink: the test
#                            topology's own veth, no psrun
#   tcp-sandbox              from inside a `full` sandbox to the sink: the
#                            sandbox's veth, psrun's forward rules and NAT,
#                            then the same topology veth
#   dl-host                  a 1 GiB HTTP download from the fake internet
#                            (MB/s), from psrun's namespace: no psrun
#   dl-direct                the same from a `restricted` sandbox with
#                            name_check: off (the forward path)
#   dl-checked               the same through the name check (the Host read,
#                            then splice(2) in psrun's relay)
#   ttfb-direct, ttfb-checked  connect, one small request, its first byte
#                            (microseconds, a new connection each)
#
# The start-up rows run in a new random order each round: a fixed order
# would hand one mode a systematic edge (on hybrid hosts a cgroup.procs
# write waits for an RCU grace period unless another one happened a few
# tens of milliseconds before, so the run after a quick one starts faster).
# With BEFORE, another psrun binary, its none, full and restricted rows run
# in the same rounds (before-none, ...), so a change is measured side by
# side with what it changes.
#
# Prints median, p90 and min per row, and the differences the targets of
# docs/benchmarks.md are about. Not a test: it never fails on a miss.
#
#   BENCH_RUNS=100   rounds of the start-up rows; DNS: 5 x BENCH_RUNS queries
#   BENCH_TCP=5      rounds of the TCP rows (2 s each, interleaved)
set -u
export LC_ALL=C
[ $# -eq 1 ] || [ $# -eq 2 ] || {
	echo "usage: $0 PATH/TO/psrun [PATH/TO/psrun-before]" >&2
	exit 2
}
PSRUN=$(realpath "$1")
BEFORE=$([ $# -eq 2 ] && realpath "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${BENCH_RUNS:-100}
[ "$(id -u)" -eq 0 ] || {
	echo "bench: needs root" >&2
	exit 2
}
PY=/usr/bin/python3
OUT=psbench$$o
INET=psbench$$i
TMP=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	[ -e /run/netns/$OUT ] && nsenter --net=/run/netns/$OUT "$PSRUN" gc >/dev/null 2>&1
	ip netns del $OUT 2>/dev/null
	ip netns del $INET 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add $OUT && ip netns add $INET || exit 1
ip link add ${OUT}x type veth peer name ${INET}x
ip link set ${OUT}x netns $OUT
ip link set ${INET}x netns $INET
ip -n $OUT addr add 192.0.2.2/24 dev ${OUT}x
ip -n $INET addr add 192.0.2.1/24 dev ${INET}x
ip -n $INET addr add 198.18.0.53/32 dev lo
ip -n $INET addr add 198.18.0.30/32 dev lo
for ns in $OUT $INET; do ip -n $ns link set lo up; done
ip -n $OUT link set ${OUT}x up
ip -n $INET link set ${INET}x up
ip -n $OUT route add default via 192.0.2.1
ip netns exec $INET "$PY" "$HERE/../tests/net/fake_dns.py" 198.18.0.53 /dev/null &
PIDS="$PIDS $!"
# The TCP sink: reads everything, then says how many bytes it got.
SINK='
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.0.30", 5001))
s.listen(8)
def serve(c):
    n = 0
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        n += len(b)
    c.sendall(str(n).encode())
    c.close()
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()
'
ip netns exec $INET "$PY" -c "$SINK" &
PIDS="$PIDS $!"
# An HTTP server: GET /N answers N zero bytes (kept alive).
WEB='
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.0.30", 80))
s.listen(64)
chunk = bytes(1 << 20)
def serve(c):
    try:
        answer(c)
    except OSError:
        pass  # the first-byte client closes with the answer unread
    c.close()
def answer(c):
    f = c.makefile("rb")
    while True:
        line = f.readline()
        if not line:
            break
        n = int(line.split()[1][1:])
        while f.readline() not in (b"\r\n", b""):
            pass
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
        while n > 0:
            c.sendall(chunk[:min(n, len(chunk))])
            n -= min(n, len(chunk))
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()
'
ip netns exec $INET "$PY" -c "$WEB" &
PIDS="$PIDS $!"
sleep 0.5

POL_full=(-o network=full -o dns_upstream=[198.18.0.53])
POL_restricted=(-o network=restricted -o 'allow_domains=[allowed.test]' -o dns_upstream=[198.18.0.53])
POL_none=()
ms() { echo $(($(date +%s%N) / 1000)); }
ROWS="none full restricted${BEFORE:+ before-none before-full before-restricted}"
for ((i = 0; i < RUNS + 5; i++)); do
	# shellcheck disable=SC2086
	for row in $(shuf -e $ROWS); do
		mode=${row#before-}
		bin=$PSRUN
		[ "$mode" != "$row" ] && bin=$BEFORE
		declare -n pol=POL_$mode
		t=$(ms)
		nsenter --net=/run/netns/$OUT "$bin" run "${pol[@]}" -- /bin/true 2>/dev/null
		[ $i -ge 5 ] && echo $(($(ms) - t)) >>"$TMP/$row"
	done
done

# N queries, one at a time; prints the microseconds of each.
CLIENT='
import socket, struct, sys, time
server, n = sys.argv[1], int(sys.argv[2])
if server == "GW":
    for line in open("/proc/net/route").readlines()[1:]:
        p = line.split()
        if p[1] == "00000000":
            server = socket.inet_ntoa(struct.pack("<I", int(p[2], 16)))
q = struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\7allowed\4test\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((server, 53))
s.settimeout(2)
for i in range(n):
    t = time.perf_counter_ns()
    s.send(q)
    s.recv(512)
    print((time.perf_counter_ns() - t) // 1000)
'
NQ=$((RUNS * 5))
nsenter --net=/run/netns/$OUT "$PY" -c "$CLIENT" 198.18.0.53 $NQ >"$TMP/dns-direct"
nsenter --net=/run/netns/$OUT "$PSRUN" run "${POL_restricted[@]}" -- "$PY" -c "$CLIENT" GW $NQ \
	>"$TMP/dns-proxy" 2>/dev/null

# Sends for SECONDS in 1 MiB writes; prints MB/s as the sink counted it.
TCPCLIENT='
import socket, sys, time
secs = float(sys.argv[1])
buf = b"x" * (1 << 20)
s = socket.create_connection(("198.18.0.30", 5001), timeout=10)
t = time.monotonic()
while time.monotonic() - t < secs:
    s.sendall(buf)
s.shutdown(socket.SHUT_WR)
n = int(s.recv(64))
print(int(n / (time.monotonic() - t) / 1e6))
'
for ((i = 0; i < ${BENCH_TCP:-5}; i++)); do
	ip netns exec $INET "$PY" -c "$TCPCLIENT" 2 >>"$TMP/tcp-loopback"
	nsenter --net=/run/netns/$OUT "$PY" -c "$TCPCLIENT" 2 >>"$TMP/tcp-host"
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${POL_full[@]}" -- "$PY" -c "$TCPCLIENT" 2 \
		>>"$TMP/tcp-sandbox" 2>/dev/null
done

# GET /SIZE from pypi.test (198.18.0.30) as its own name, MODE dl: once, MB/s;
# ttfb: N times, a new connection each, the microseconds to the first byte.
WEBCLIENT='
import socket, struct, sys, time
mode, arg = sys.argv[1], int(sys.argv[2])
addr = socket.gethostbyname("pypi.test") if sys.argv[3] == "name" else "198.18.0.30"
def get(size):
    s = socket.create_connection((addr, 80), timeout=10)
    s.sendall(b"GET /%d HTTP/1.1\r\nHost: pypi.test\r\n\r\n" % size)
    return s
if mode == "dl":
    s = get(arg)
    buf = bytearray(1 << 20)
    t = time.monotonic()
    got = 0
    while got < arg:
        n = s.recv_into(buf)
        if not n:
            break
        got += n
    print(int(got / (time.monotonic() - t) / 1e6))
else:
    for _ in range(arg):
        t = time.perf_counter_ns()
        s = get(1)
        s.recv(1)
        print((time.perf_counter_ns() - t) // 1000)
        s.close()
'
POL_checked=(-o network=restricted -o 'allow_domains=[pypi.test]' -o dns_upstream=[198.18.0.53])
POL_direct=("${POL_checked[@]}" -o name_check=off)
GIB=$((1 << 30))
for ((i = 0; i < ${BENCH_TCP:-5}; i++)); do
	nsenter --net=/run/netns/$OUT "$PY" -c "$WEBCLIENT" dl $GIB addr >>"$TMP/dl-host"
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${POL_direct[@]}" -- "$PY" -c "$WEBCLIENT" dl $GIB \
		name >>"$TMP/dl-direct" 2>/dev/null
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${POL_checked[@]}" -- "$PY" -c "$WEBCLIENT" dl $GIB \
		name >>"$TMP/dl-checked" 2>/dev/null
done
for ((i = 0; i < 5; i++)); do
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${POL_direct[@]}" -- "$PY" -c "$WEBCLIENT" ttfb \
		$((RUNS / 5 + 1)) name >>"$TMP/ttfb-direct" 2>/dev/null
	nsenter --net=/run/netns/$OUT "$PSRUN" run "${POL_checked[@]}" -- "$PY" -c "$WEBCLIENT" ttfb \
		$((RUNS / 5 + 1)) name >>"$TMP/ttfb-checked" 2>/dev/null
done

stats() { # file -> "median p90 min"
	sort -n "$1" | awk '{v[NR]=$1} END {printf "%d %d %d", v[int((NR+1)/2)], v[int(NR*0.9)], v[1]}'
}
printf "%-18s %10s %10s %10s   (%s)\n" row median p90 min "microseconds"
for row in $ROWS dns-direct dns-proxy; do
	read -r med p90 min <<<"$(stats "$TMP/$row")"
	printf "%-18s %10d %10d %10d\n" "$row" "$med" "$p90" "$min"
	eval "med_${row//-/_}=$med"
done
ms_of() { awk -v d="$1" 'BEGIN {printf "%.1f", d / 1000}'; }
echo "full - none:        $(ms_of $((med_full - med_none))) ms (target <= 5 ms)"
echo "restricted - none:  $(ms_of $((med_restricted - med_none))) ms (target <= 5 ms)"
if [ -n "$BEFORE" ]; then
	echo "before: full - none:        $(ms_of $((med_before_full - med_before_none))) ms"
	echo "before: restricted - none:  $(ms_of $((med_before_restricted - med_before_none))) ms"
fi
echo "proxy - direct:     $((med_dns_proxy - med_dns_direct)) us (target <= 500 us)"
printf "%-18s %10s %10s %10s   (%s)\n" row median min max "MB/s, ${BENCH_TCP:-5} x 2 s"
for row in tcp-loopback tcp-host tcp-sandbox; do
	read -r med p90 min <<<"$(stats "$TMP/$row")"
	printf "%-18s %10d %10d %10d\n" "$row" "$med" "$min" "$(sort -n "$TMP/$row" | tail -1)"
	eval "med_${row//-/_}=$med"
done
echo "sandbox / loopback: $(awk -v a="$med_tcp_sandbox" -v b="$med_tcp_loopback" 'BEGIN {printf "%.2f", a / b}') (target >= 0.8)"
echo "sandbox / host:     $(awk -v a="$med_tcp_sandbox" -v b="$med_tcp_host" 'BEGIN {printf "%.2f", a / b}')"
printf "%-18s %10s %10s %10s   (%s)\n" row median min max "MB/s, ${BENCH_TCP:-5} x 1 GiB"
for row in dl-host dl-direct dl-checked; do
	read -r med p90 min <<<"$(stats "$TMP/$row")"
	printf "%-18s %10d %10d %10d\n" "$row" "$med" "$min" "$(sort -n "$TMP/$row" | tail -1)"
	eval "med_${row//-/_}=$med"
done
echo "checked / direct: $(awk -v a="$med_dl_checked" -v b="$med_dl_direct" 'BEGIN {printf "%.2f", a / b}') (target >= 0.9)"
echo "checked / host:   $(awk -v a="$med_dl_checked" -v b="$med_dl_host" 'BEGIN {printf "%.2f", a / b}')"
printf "%-18s %10s %10s %10s   (%s)\n" row median p90 min "microseconds to the first byte"
for row in ttfb-direct ttfb-checked; do
	read -r med p90 min <<<"$(stats "$TMP/$row")"
	printf "%-18s %10d %10d %10d\n" "$row" "$med" "$p90" "$min"
	eval "med_${row//-/_}=$med"
done
echo "name check adds: $(awk -v d=$((med_ttfb_checked - med_ttfb_direct)) 'BEGIN {printf "%.2f", d / 1000}') ms to the first byte (target <= 0.3)"
