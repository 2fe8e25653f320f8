#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One address of the fake internet serving several names, as a CDN's front
does (tests/net/names.sh): HTTPS on ADDR:443 with CERT/KEY (a certificate
for every name, from a CA the test makes) and plain HTTP on ADDR:80. Each
request, on a kept-alive connection too, is answered "hello NAME" (NAME: its
Host header) and written to LOG as "PROTO HOST PATH". A ClientHello that
arrives but does not make a handshake (the probes' raw ones) is answered by
OpenSSL with its alert: the probe knows its bytes got through."""
import http.server
import socketserver
import ssl
import sys
import threading

ADDR, CERT, KEY, LOG = sys.argv[1:5]
lock = threading.Lock()


class Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        host = (self.headers.get("Host") or "").split(":")[0]
        proto = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        with lock, open(LOG, "a") as f:
            f.write(f"{proto} {host} {self.path}\n")
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        body = f"hello {host}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(CERT, KEY)
tls = Server((ADDR, 443), Hello)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True, do_handshake_on_connect=False)
plain = Server((ADDR, 80), Hello)
threading.Thread(target=tls.serve_forever, daemon=True).start()
plain.serve_forever()
