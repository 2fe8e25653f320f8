# SPDX-License-Identifier: MIT
# Run inside a sandbox by tests/net/run.sh (as `python3 -c "$(cat flood.py)" ...`):
# a hostile sandbox making psrun, outside its cgroup, work for it.
#
#   flood.py WAIT dns SECONDS [ALLOWED]
#       after WAIT seconds, queries for random names (none allowed) to the
#       gateway's proxy over UDP as fast as it can for SECONDS, a TCP
#       connection to it now and then; then ALLOWED looked up (once the
#       flood is over, as a client would after it).
#   flood.py WAIT udp SECONDS [ALLOWED]
#       the same with UDP datagrams to refused addresses and ports (each
#       one a new flow the firewall refuses, and so logs).
#   flood.py WAIT conn SECONDS NAME
#       NAME resolved (its address pinned), then new connections to it on
#       443 as fast as they go, each sending a byte that is not TLS: a
#       connection for the name check (tests/net/names.sh) to refuse.
#   flood.py WAIT trickle SECONDS NAME
#       60 connections to NAME's address on 443 held open, each sent a
#       ClientHello one byte at a time, round robin, as fast as it goes: a
#       read of the name check's per byte.
# Prints "sent N", "tcp N", and "resolve ALLOWED -> ADDRESS in MS ms".
import os
import socket
import struct
import sys
import time


def gateway():
    with open("/proc/net/route") as f:
        for line in f.readlines()[1:]:
            p = line.split()
            if p[1] == "00000000":
                return socket.inet_ntoa(struct.pack("<I", int(p[2], 16)))
    raise SystemExit("no default route")


def query(name):
    w = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + w + struct.pack(">HH", 1, 1)


def flood_dns(gw, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setblocking(False)
    s.connect((gw, 53))
    # Distinct names, so that nothing psrun keeps per name can absorb them.
    names = [query("f%s.flood.test" % os.urandom(6).hex()) for _ in range(4096)]
    sent = tcp = i = 0
    end = time.monotonic() + seconds
    while True:
        for _ in range(256):
            try:
                s.send(names[i & 4095])
                sent += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass
            i += 1
            try:
                while True:
                    s.recv(512)
            except (BlockingIOError, ConnectionRefusedError):
                pass
        if i % 4096 == 0:
            # DNS over TCP too: a new connection, one query.
            try:
                t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                t.setblocking(False)
                t.connect_ex((gw, 53))
                t.close()
                tcp += 1
            except OSError:
                pass
        if time.monotonic() >= end:
            break
    return sent, tcp


def flood_udp(seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setblocking(False)
    sent = i = 0
    end = time.monotonic() + seconds
    while True:
        for _ in range(256):
            # Addresses of the fake internet no pin opens, many ports.
            addr = "198.18.%d.%d" % (2 + (i >> 8) % 8, i % 250 + 1)
            try:
                s.sendto(b"x", (addr, 1024 + i % 50000))
                sent += 1
            except OSError:
                pass
            i += 1
        if time.monotonic() >= end:
            break
    return sent, 0


def flood_conn(name, seconds):
    addr = socket.gethostbyname(name)
    sent = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(0.2)
        try:
            s.connect((addr, 443))
            s.send(b"x")
            sent += 1
        except OSError:
            pass
        s.close()
    return sent, 0


def flood_trickle(name, seconds):
    addr = socket.gethostbyname(name)
    hello = bytes([0x16, 3, 1, 0x40, 0]) + os.urandom(16384)
    conns = []
    for _ in range(60):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(0.5)
        try:
            s.connect((addr, 443))
            s.setblocking(False)
            conns.append(s)
        except OSError:
            s.close()
    sent = i = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end and conns:
        for s in conns:
            try:
                s.send(hello[i % len(hello):i % len(hello) + 1])
                sent += 1
            except OSError:
                pass
        i += 1
    for s in conns:
        s.close()
    return sent, len(conns)


wait, kind, seconds = float(sys.argv[1]), sys.argv[2], float(sys.argv[3])
allowed = sys.argv[4] if len(sys.argv) > 4 else None
gw = gateway()
time.sleep(wait)
print("flooding", flush=True)
if kind in ("conn", "trickle"):
    sent, tcp = (flood_conn if kind == "conn" else flood_trickle)(sys.argv[4], seconds)
    sys.argv = sys.argv[:4]
else:
    sent, tcp = flood_dns(gw, seconds) if kind == "dns" else flood_udp(seconds)
print("sent", sent, flush=True)
print("tcp", tcp, flush=True)
if allowed:
    # As a client would look a name up after the flood (its own queries
    # share the sandbox's rate: one sent in the flood's last millisecond
    # could find no token).
    time.sleep(0.2)
    t = time.monotonic()
    try:
        got = socket.gethostbyname(allowed)
    except OSError as e:
        got = "error:%s" % e
    print("resolve %s -> %s in %d ms" % (allowed, got, (time.monotonic() - t) * 1000), flush=True)
