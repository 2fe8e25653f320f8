#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A token server as Docker Hub's works, for the image tier: GET
/token?service=..&scope=repository:NAME:ACTIONS with Basic credentials
USER:PASS answers {"token": JWT}, the JWT signed RS256 (by the openssl CLI)
with KEY and carrying CERT in x5c, which the registry's `auth: token:`
verifies against its rootcertbundle. Anything else is 401.

token_server.py PORT CERT KEY TLSCERT TLSKEY USER PASS ISSUER
"""
import base64
import http.server
import json
import ssl
import subprocess
import sys
import time
import urllib.parse

PORT, CERT, KEY, TLSCERT, TLSKEY, USER, PASS, ISSUER = sys.argv[1:9]


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


with open(CERT) as f:
    pem = f.read()
der = base64.b64decode("".join(l for l in pem.splitlines() if "-----" not in l))


def sign(claims):
    header = {"alg": "RS256", "typ": "JWT", "x5c": [base64.b64encode(der).decode()]}
    signing = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", KEY], input=signing.encode(),
                         capture_output=True, check=True).stdout
    return signing + "." + b64(sig)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        auth = self.headers.get("Authorization", "")
        want = "Basic " + base64.b64encode(f"{USER}:{PASS}".encode()).decode()
        if url.path != "/token" or auth != want:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        access = []
        for scope in q.get("scope", []):
            parts = scope.split(":")
            if len(parts) == 3 and parts[0] == "repository":
                access.append({"type": "repository", "name": parts[1],
                               "actions": parts[2].split(",")})
        now = int(time.time())
        token = sign({"iss": ISSUER, "sub": USER, "aud": q.get("service", [""])[0],
                      "exp": now + 600, "nbf": now - 10, "iat": now, "jti": str(now),
                      "access": access})
        body = json.dumps({"token": token, "access_token": token}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(TLSCERT, TLSKEY)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
