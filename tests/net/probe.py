# SPDX-License-Identifier: MIT
# Run inside a sandbox by tests/net/run.sh (as `python3 -c "$(cat probe.py)" CMD...`):
# each command prints one line "CMD ARGS -> RESULT". Results: ok, refused
# (a reset or ICMP error: the fast failure), timeout, or the error's name.
import errno
import os
import socket
import struct
import sys
import time


def classify(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, socket.gaierror):
        return {socket.EAI_NONAME: "nxdomain", socket.EAI_AGAIN: "again"}.get(e.errno, "gai%d" % e.errno)
    if isinstance(e, OSError) and e.errno in (errno.ECONNREFUSED, errno.EHOSTUNREACH,
                                             errno.ENETUNREACH, errno.EACCES, errno.EPERM):
        return "refused" if e.errno in (errno.ECONNREFUSED, errno.EHOSTUNREACH) else \
            errno.errorcode[e.errno].lower()
    return type(e).__name__ + (":" + errno.errorcode.get(e.errno, "?") if getattr(e, "errno", None) else "")


def tcp(addr, port, source=None):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(2)
    if source:
        s.bind((source, 0))
    t = time.monotonic()
    try:
        s.connect((addr, int(port)))
        data = s.recv(100)
        return "ok" if data.startswith(b"hello") else "ok-nodata"
    except Exception as e:
        r = classify(e)
        # a refusal must be fast: reset or ICMP at SYN time, not a drop
        if r == "refused" and time.monotonic() - t > 1:
            r = "refused-slow"
        return r


def udp(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    try:
        s.connect((addr, int(port)))
        s.send(b"ping")
        return "ok" if s.recv(100) == b"ping" else "garbage"
    except Exception as e:
        return classify(e)


def query(name, qtype):
    w = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + w + struct.pack(">HH", qtype, 1)


def dns(server, name, proto, qtype=1):
    """rcode and answer count, by a raw query to server."""
    q = query(name, int(qtype))
    try:
        if proto == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(1.5)
            s.connect((server, 53))
            s.send(q)
            r = s.recv(4096)
        else:
            s = socket.create_connection((server, 53), timeout=1.5)
            s.sendall(struct.pack(">H", len(q)) + q)
            n = struct.unpack(">H", s.recv(2))[0]
            r = b""
            while len(r) < n:
                c = s.recv(n - len(r))
                if not c:
                    break
                r += c
        return "rcode%d-an%d" % (r[3] & 0xf, struct.unpack(">H", r[6:8])[0])
    except Exception as e:
        return classify(e)


def dnsraw(server, proto, hexmsg):
    """A hand-made message (garbage, loops, oversize names): the proxy must
    drop it or answer an error, and stay up."""
    msg = bytes.fromhex(hexmsg)
    try:
        if proto == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(1)
            s.connect((server, 53))
            s.send(msg)
            r = s.recv(4096)
        else:
            s = socket.create_connection((server, 53), timeout=1)
            s.sendall(struct.pack(">H", len(msg)) + msg)
            h = s.recv(2)
            if len(h) < 2:
                return "closed"
            r = s.recv(struct.unpack(">H", h)[0])
        return "rcode%d-an%d" % (r[3] & 0xf, struct.unpack(">H", r[6:8])[0])
    except Exception as e:
        return classify(e)


def dnsttl(server, name):
    """The TTL of the first answer record of an A query."""
    q = query(name, 1)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1.5)
        s.connect((server, 53))
        s.send(q)
        r = s.recv(4096)
        if struct.unpack(">H", r[6:8])[0] == 0:
            return "none"
        off = len(q)  # the question is echoed as sent
        return str(struct.unpack(">I", r[off + 6:off + 10])[0])
    except Exception as e:
        return classify(e)


def resolveall(name):
    """Every address of an A lookup, sorted, comma-separated."""
    try:
        return ",".join(sorted(set(ai[4][0] for ai in socket.getaddrinfo(
            name, 80, socket.AF_INET, socket.SOCK_STREAM))))
    except Exception as e:
        return classify(e)


def resolvemany(prefix, n):
    """Looks up n names prefix0.., returns how many gave NXDOMAIN."""
    got = 0
    for i in range(int(n)):
        if resolve("%s%d.test" % (prefix, i)) == "nxdomain":
            got += 1
    return str(got)


def udpbig(addr, port, size):
    """A datagram of size bytes (fragmented past the MTU)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER: IP_PMTUDISC_DONT
    try:
        s.connect((addr, int(port)))
        s.send(b"x" * int(size))
        return "ok" if len(s.recv(65536)) == int(size) else "garbage"
    except Exception as e:
        return classify(e)


def icmp(addr):
    """An echo request through a ping socket (SOCK_DGRAM, IPPROTO_ICMP)."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    except Exception as e:
        return "socket-" + classify(e)
    s.settimeout(1.5)
    s.setsockopt(socket.IPPROTO_IP, 11, 1)  # IP_RECVERR: ICMP errors as errno
    t = time.monotonic()
    try:
        s.connect((addr, 0))
        s.send(struct.pack(">BBHHH", 8, 0, 0, 0, 1) + b"psrun")
        r = s.recv(100)
        return "ok" if r[0] == 0 else "type%d" % r[0]
    except Exception as e:
        r = classify(e)
        if r == "refused" and time.monotonic() - t > 1:
            r = "refused-slow"
        return r


def resolve(name):
    try:
        return socket.gethostbyname(name)
    except Exception as e:
        return classify(e)


def sock(kind):
    fams = {"raw": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP),
            "packet": (socket.AF_PACKET, socket.SOCK_RAW, 0)}
    try:
        socket.socket(*fams[kind]).close()
        return "ok"
    except Exception as e:
        return classify(e)


def gateway():
    with open("/proc/net/route") as f:
        for line in f.readlines()[1:]:
            p = line.split()
            if p[1] == "00000000":
                return socket.inet_ntoa(struct.pack("<I", int(p[2], 16)))
    return "none"


def client_hello(sni, pad=0, ech=False):
    """A TLS 1.3 ClientHello, by hand (no TLS library here sends a chosen
    SNI, ECH or size), in records of at most 16 KiB."""
    def ext(t, d):
        return struct.pack(">HH", t, len(d)) + d
    exts = b""
    if sni:
        n = sni.encode()
        exts += ext(0, struct.pack(">HBH", len(n) + 3, 0, len(n)) + n)
    exts += ext(0x2b, b"\x02\x03\x04")  # supported_versions: 1.3
    exts += ext(0x0a, b"\x00\x02\x00\x1d")  # supported_groups: x25519
    exts += ext(0x0d, b"\x00\x04\x04\x03\x08\x04")  # signature_algorithms
    exts += ext(0x33, b"\x00\x24\x00\x1d\x00\x20" + os.urandom(32))  # key_share
    if ech:  # an outer ECH extension (as GREASE ECH looks)
        exts += ext(0xfe0d, b"\x00\x00\x01\x00\x01\x2a\x00\x20" + os.urandom(32) +
                    b"\x00\x40" + os.urandom(64))
    if pad:
        exts += ext(0x15, bytes(pad))
    body = (b"\x03\x03" + os.urandom(32) + b"\x20" + os.urandom(32) +
            b"\x00\x02\x13\x01" + b"\x01\x00" + struct.pack(">H", len(exts)) + exts)
    hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
    return b"".join(b"\x16\x03\x01" + struct.pack(">H", len(hs[i:i + 16384])) + hs[i:i + 16384]
                    for i in range(0, len(hs), 16384))


def hello(addr, port, sni, *opts):
    """Sends a ClientHello for sni ("-": none); options seg1 (a byte per
    segment), pad=N, ech, stall (half of it, then nothing). ok: the server's
    answer came back (a TLS record); reset: the connection was cut (with
    the seconds it took for stall)."""
    o = dict(x.split("=", 1) if "=" in x else (x, "1") for x in opts)
    msg = client_hello(None if sni == "-" else sni, int(o.get("pad", 0)), "ech" in o)
    s = socket.create_connection((addr, int(port)), timeout=4)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = time.monotonic()
    try:
        if "stall" in o:
            s.sendall(msg[:len(msg) // 2])
            s.settimeout(15)
        elif "seg1" in o:
            for i in range(len(msg)):
                s.send(msg[i:i + 1])
                time.sleep(0.0005)
        else:
            s.sendall(msg)
        data = s.recv(5)
        if data[:1] in (b"\x15", b"\x16"):
            return "ok"
        r = "reset" if not data else "garbage"
    except (ConnectionResetError, BrokenPipeError):
        r = "reset"
    except Exception as e:
        return classify(e)
    return r + ("-%ds" % round(time.monotonic() - t) if "stall" in o else "")


def http(addr, port, hosts):
    """Requests on one kept-alive connection, one per comma-separated Host:
    each answer's body ("hello NAME"), or reset once the connection is cut."""
    s = socket.create_connection((addr, int(port)), timeout=4)
    f = s.makefile("rb")
    out = []
    try:
        for h in hosts.split(","):
            s.sendall(b"GET / HTTP/1.1\r\nHost: " + h.encode() + b"\r\n\r\n")
            status = f.readline()
            if not status:
                out.append("reset")
                break
            n = 0
            while True:
                line = f.readline().strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":")[1])
            out.append(f.read(n).decode().strip().replace(" ", "-"))
    except (ConnectionResetError, BrokenPipeError):
        out.append("reset")
    except Exception as e:
        out.append(classify(e))
    return ",".join(out)


def run(cmd, args):
    if cmd == "gw":
        return gateway()
    if cmd == "sleep":
        time.sleep(float(args[0]))
        return "ok"
    return {"tcp": tcp, "udp": udp, "dns": dns, "resolve": resolve, "sock": sock,
            "dnsraw": dnsraw, "dnsttl": dnsttl, "resolveall": resolveall,
            "resolvemany": resolvemany, "udpbig": udpbig, "icmp": icmp,
            "hello": hello, "http": http}[cmd](*args)


# Commands separated by "--": tcp 1.2.3.4 80 -- resolve a.test -- ...
argv, cmds, cur = sys.argv[1:], [], []
for a in argv:
    if a == "--":
        cmds.append(cur)
        cur = []
    else:
        cur.append(a)
cmds.append(cur)
for c in cmds:
    if not c:
        continue
    # GW: the sandbox's gateway (.1 of its /30); NET and BCAST: the /30's
    # first and last address (neither is the sandbox's own).
    gw = gateway()
    n = struct.unpack(">I", socket.inet_aton(gw))[0] if gw != "none" else 1
    names = {"GW": gw, "NET": socket.inet_ntoa(struct.pack(">I", n - 1)),
             "BCAST": socket.inet_ntoa(struct.pack(">I", n + 2))}
    args = [names.get(a, a) for a in c[1:]]
    print(" ".join([c[0]] + c[1:]), "->", run(c[0], args), flush=True)
