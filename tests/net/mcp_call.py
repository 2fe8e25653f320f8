#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One MCP tool call through `psrun mcp` over stdio (tests/net/session.sh):
the initialize handshake, tools/call TOOL with ARGS (a JSON object), then
EOF. Prints the call's result as JSON (json.dumps).
Usage: mcp_call.py TOOL ARGS -- COMMAND... (the server's command line)."""
import json
import subprocess
import sys

tool, args = sys.argv[1], json.loads(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(msg):
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()


def answer(want_id):
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == want_id:
            return msg
    raise SystemExit("psrun mcp ended without answering")


send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                 "clientInfo": {"name": "psrun-tests", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {"name": tool, "arguments": args}})
reply = answer(2)
p.stdin.close()
p.wait(timeout=60)
print(json.dumps(reply.get("result", reply)))
