#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fake internet's package indexes (tests/net/run.sh): on ADDR:80 a
PyPI simple index (PEP 503) at /simple/ and an npm registry everywhere
else, serving packages this script builds itself at start, offline:

  psfake 1.0         a pure-Python wheel: `import psfake; psfake.VALUE == 42`
  psfake-slow 1.0    the same, but its file is served after SLOW seconds
                     (a test kills psrun meanwhile)
  psfake-js 1.0.0    an npm tarball: `require("psfake-js") === 42`

Anything else is 404. Every request is appended to LOG ("METHOD PATH").
Usage: fake_index.py ADDR LOG [SLOW]
"""
import base64
import hashlib
import http.server
import io
import json
import socketserver
import sys
import tarfile
import time
import zipfile

ADDR, LOG = sys.argv[1], sys.argv[2]
SLOW = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0


def wheel(name, module):
    """A py3-none-any wheel with a RECORD that pip checks."""
    dist = f"{name.replace('-', '_')}-1.0.dist-info"
    files = {
        f"{module}/__init__.py": b"VALUE = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: psrun-tests\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(data)}\n"
    record += f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, data in files.items():
            z.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return f"{name.replace('-', '_')}-1.0-py3-none-any.whl", buf.getvalue()


def npm_tarball(name):
    files = {
        "package/package.json": json.dumps({"name": name, "version": "1.0.0",
                                            "main": "index.js"}).encode(),
        "package/index.js": b"module.exports = 42;\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = 1577836800
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


WHEELS = {}  # project name -> (file name, bytes)
for project, module in (("psfake", "psfake"), ("psfake-slow", "psfake_slow")):
    WHEELS[project] = wheel(project, module)
TARBALL = npm_tarball("psfake-js")


def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="text/html"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log(f"GET {self.path} {self.headers.get('Host', '')}")
        host = self.headers.get("Host", "pypi.test")
        path = self.path.split("?", 1)[0]
        if path in ("/simple", "/simple/"):
            links = "".join(f'<a href="/simple/{p}/">{p}</a>\n' for p in WHEELS)
            return self.send(200, f"<html><body>{links}</body></html>".encode())
        if path.startswith("/simple/"):
            project = path[len("/simple/"):].strip("/").lower().replace("_", "-")
            if project not in WHEELS:
                return self.send(404, b"not found")
            fname, data = WHEELS[project]
            digest = hashlib.sha256(data).hexdigest()
            body = (f'<html><body><a href="/files/{fname}#sha256={digest}">{fname}</a>'
                    "</body></html>").encode()
            return self.send(200, body)
        if path.startswith("/files/"):
            for project, (fname, data) in WHEELS.items():
                if path == f"/files/{fname}":
                    if project == "psfake-slow":
                        time.sleep(SLOW)
                    return self.send(200, data, "application/octet-stream")
            return self.send(404, b"not found")
        # The npm registry: GET /NAME (metadata), GET /NAME/-/FILE.tgz.
        if path == "/psfake-js":
            tarball = f"http://{host}/psfake-js/-/psfake-js-1.0.0.tgz"
            integrity = "sha512-" + base64.b64encode(hashlib.sha512(TARBALL).digest()).decode()
            meta = {
                "name": "psfake-js",
                "dist-tags": {"latest": "1.0.0"},
                "versions": {"1.0.0": {
                    "name": "psfake-js", "version": "1.0.0", "main": "index.js",
                    "dist": {"tarball": tarball, "shasum": hashlib.sha1(TARBALL).hexdigest(),
                             "integrity": integrity}}},
            }
            return self.send(200, json.dumps(meta).encode(), "application/json")
        if path == "/psfake-js/-/psfake-js-1.0.0.tgz":
            return self.send(200, TARBALL, "application/octet-stream")
        return self.send(404, b'{"error": "not found"}', "application/json")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server((ADDR, 80), Handler).serve_forever()
