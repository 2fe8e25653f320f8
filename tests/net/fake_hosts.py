#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fake internet's servers (tests/net/run.sh): for each ADDR:PORT given,
a TCP server that writes "hello from ADDR:PORT\\n" and closes, and a UDP
server on the same address and port that echoes. Also a TCP listener on
ADDR:PORT in the host's namespace when run there (the gateway tests)."""
import socket
import sys
import threading


def tcp(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        try:
            c.sendall(f"hello from {addr}:{port}\n".encode())
        except OSError:
            pass
        c.close()


def udp(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((addr, port))
    while True:
        data, peer = s.recvfrom(2048)
        s.sendto(data, peer)


for spec in sys.argv[1:]:
    addr, port = spec.rsplit(":", 1)
    addr = addr.strip("[]")
    threading.Thread(target=tcp, args=(addr, int(port)), daemon=True).start()
    threading.Thread(target=udp, args=(addr, int(port)), daemon=True).start()
threading.Event().wait()
