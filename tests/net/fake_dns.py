#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fake internet's upstream DNS server (tests/net/run.sh).

Serves UDP and TCP on ADDR:53 and appends every question it sees to LOG
("name qtype" per line), so a test can prove a name never reached it.
Zones (all addresses are documentation/benchmark ones or, for rebinding,
private):
  allowed.test      A 198.18.0.10, AAAA 2001:db8::10
  other.test        A 198.18.0.20
  rebind.test       A 10.0.0.1
  *.zone.test       A 198.18.0.10
  ttl2.zone.test    A 198.18.0.11, TTL 2 s
  cname.zone.test   CNAME other.test (an allowed name to a disallowed one)
  big.zone.test     100 A records 198.18.1.x: too big for UDP, forces TCP
  extra.zone.test   A 198.18.0.10, and records the proxy must not take: an
                    A 198.18.0.20 of other.test in the answer section, and
                    A 198.18.0.11 (its own) and 198.18.0.20 (ns.other.test)
                    in the additional section
  alias.other.test  CNAME allowed.test (a disallowed name to an allowed one)
  private.test      A 10.77.0.1 (the private service)
  pypi.test, npm.test  A 198.18.0.30 (tests/net/fake_index.py)
  shared.zone.test, www.zone.test  A 198.18.0.40 (tests/net/fake_tls.py: one
                    address serving several names, as a CDN's does)
  cdn.zone.test     CNAME shared.zone.test
anything else: NXDOMAIN.
"""
import socket
import struct
import sys
import threading

ADDR, LOG = sys.argv[1], sys.argv[2]
log_lock = threading.Lock()


def log(name, qtype, proto):
    with log_lock, open(LOG, "a") as f:
        f.write(f"{name} {qtype} {proto}\n")


def rr_a(ip, ttl=60):
    return (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, ttl, 4) + socket.inet_aton(ip))


def rr_aaaa(ip, ttl=60):
    return (b"\xc0\x0c" + struct.pack(">HHIH", 28, 1, ttl, 16) +
            socket.inet_pton(socket.AF_INET6, ip))


def encode_name(name):
    out = b""
    for label in name.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def rr_named(owner, ip, ttl=60):
    return encode_name(owner) + struct.pack(">HHIH", 1, 1, ttl, 4) + socket.inet_aton(ip)


def additional_records(name, qtype):
    if name == "extra.zone.test" and qtype == 1:
        return [rr_a("198.18.0.11"), rr_named("ns.other.test", "198.18.0.20")]
    return []


def answer_records(name, qtype):
    """(rcode, [records])"""
    if name == "extra.zone.test":
        return 0, [rr_a("198.18.0.10"), rr_named("other.test", "198.18.0.20")] if qtype == 1 else []
    if name == "alias.other.test":
        target = encode_name("allowed.test")
        return 0, [b"\xc0\x0c" + struct.pack(">HHIH", 5, 1, 60, len(target)) + target,
                   rr_named("allowed.test", "198.18.0.10")] if qtype == 1 else []
    if name == "private.test":
        return 0, [rr_a("10.77.0.1")] if qtype == 1 else []
    if name == "cname.zone.test":
        target = encode_name("other.test")
        recs = [b"\xc0\x0c" + struct.pack(">HHIH", 5, 1, 60, len(target)) + target]
        if qtype == 1:
            # other.test's address, owned by the CNAME's target (uncompressed)
            recs.append(target + struct.pack(">HHIH", 1, 1, 60, 4) +
                        socket.inet_aton("198.18.0.20"))
        return 0, recs
    if name == "allowed.test":
        return 0, [rr_a("198.18.0.10")] if qtype == 1 else (
            [rr_aaaa("2001:db8::10")] if qtype == 28 else [])
    if name == "other.test":
        return 0, [rr_a("198.18.0.20")] if qtype == 1 else []
    if name in ("pypi.test", "npm.test"):
        return 0, [rr_a("198.18.0.30")] if qtype == 1 else []
    if name == "rebind.test":
        return 0, [rr_a("10.0.0.1")] if qtype == 1 else []
    if name in ("shared.zone.test", "www.zone.test"):
        return 0, [rr_a("198.18.0.40")] if qtype == 1 else []
    if name == "cdn.zone.test":
        target = encode_name("shared.zone.test")
        recs = [b"\xc0\x0c" + struct.pack(">HHIH", 5, 1, 60, len(target)) + target]
        if qtype == 1:
            recs.append(target + struct.pack(">HHIH", 1, 1, 60, 4) +
                        socket.inet_aton("198.18.0.40"))
        return 0, recs
    if name == "ttl2.zone.test":
        return 0, [rr_a("198.18.0.11", ttl=2)] if qtype == 1 else []
    if name == "big.zone.test":
        return 0, [rr_a(f"198.18.1.{i}") for i in range(1, 101)] if qtype == 1 else []
    if name.endswith(".zone.test"):
        return 0, [rr_a("198.18.0.10")] if qtype == 1 else []
    return 3, []


def respond(query, proto, limit):
    if len(query) < 12:
        return None
    qid, flags, qd = struct.unpack(">HHH", query[:6])
    if qd != 1:
        return None
    off, labels = 12, []
    while off < len(query) and query[off]:
        n = query[off]
        labels.append(query[off + 1:off + 1 + n].decode(errors="replace").lower())
        off += 1 + n
    off += 1
    if off + 4 > len(query):
        return None
    qtype, qclass = struct.unpack(">HH", query[off:off + 4])
    question = query[12:off + 4]
    name = ".".join(labels)
    log(name, qtype, proto)
    rcode, recs = answer_records(name, qtype)
    extra = additional_records(name, qtype)
    body = question + b"".join(recs) + b"".join(extra)
    header = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, len(recs), 0, len(extra))
    msg = header + body
    if limit and len(msg) > limit:
        # truncated: header and question only, TC set
        msg = struct.pack(">HHHHHH", qid, 0x8380 | rcode, 1, 0, 0, 0) + question
    return msg


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ADDR, 53))
    while True:
        data, peer = s.recvfrom(4096)
        # EDNS payload size if an OPT record is present, else 512
        limit = 512
        if data[10:12] != b"\0\0":
            limit = 1232
        msg = respond(data, "udp", limit)
        if msg:
            s.sendto(msg, peer)


def tcp_client(c):
    with c:
        try:
            hdr = c.recv(2)
            if len(hdr) < 2:
                return
            n = struct.unpack(">H", hdr)[0]
            data = b""
            while len(data) < n:
                chunk = c.recv(n - len(data))
                if not chunk:
                    return
                data += chunk
            msg = respond(data, "tcp", 0)
            if msg:
                c.sendall(struct.pack(">H", len(msg)) + msg)
        except OSError:
            pass


def tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ADDR, 53))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=tcp_client, args=(c,), daemon=True).start()


threading.Thread(target=tcp, daemon=True).start()
udp()
