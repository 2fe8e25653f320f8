// SPDX-License-Identifier: MIT
// What the sandbox plants costs the MCP server only a bounded amount, and
// what the server answers a model is bounded too (issue 28, class 1): the
// official TypeScript SDK's client (1.x) drives `psrun mcp` while the
// sandbox plants 100,000 files with control-byte names, a deep tree of
// long names, a 3 GiB sparse file and an output flood of control bytes.
// At the end the server's peak RSS (VmHWM in /proc/PID/status) must be
// under RSS_MAX and no JSON-RPC line it wrote over LINE_MAX.
// One line per check ("ok NAME" / "not ok NAME: why"), then
// "mcp: P passed, F failed, 0 skipped".
// Usage: node hostile.mjs PSRUN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { check, finish } from "./lib.mjs";

const psrun = process.argv[2];
const RSS_MAX = 64 << 20; // the server's peak RSS, docs/mcp.md
const LINE_MAX = 10 << 20; // one JSON-RPC line, docs/mcp.md

// A stdio transport of our own (the SDK's Transport interface), so that the
// test sees every line the server writes as bytes, and its pid.
class LineTransport {
  constructor(command, args) {
    this.command = command;
    this.args = args;
    this.longest = 0;
    this.lines = 0;
  }
  async start() {
    this.proc = spawn(this.command, this.args, { stdio: ["pipe", "pipe", "inherit"] });
    this.pid = this.proc.pid;
    let pending = [];
    this.proc.stdout.on("data", (chunk) => {
      let start = 0;
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, start)) {
        pending.push(chunk.subarray(start, i));
        const line = Buffer.concat(pending);
        pending = [];
        start = i + 1;
        this.lines++;
        this.longest = Math.max(this.longest, line.length);
        try {
          this.onmessage?.(JSON.parse(line.toString("utf8")));
        } catch (e) {
          this.onerror?.(e);
        }
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    });
    this.proc.on("exit", () => this.onclose?.());
  }
  async send(message) {
    this.proc.stdin.write(JSON.stringify(message) + "\n");
  }
  async close() {
    this.proc.stdin.end();
    await new Promise((res) => (this.proc.exitCode !== null ? res() : this.proc.on("exit", res)));
  }
}

function peakRss(pid) {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  assert.ok(m, "no VmHWM");
  return Number(m[1]) * 1024;
}

const mib = (n) => `${(n / (1 << 20)).toFixed(1)} MiB`;

const transport = new LineTransport(psrun, ["mcp", "-o", "memory_limit=512M",
  "-o", "disk_limit=2G", "-o", "timeout=600s"]);
const client = new Client({ name: "psrun-hostile", version: "1.0.0" });
await client.connect(transport);
const call = (name, args) => client.callTool({ name, arguments: args }, undefined,
  { timeout: 600000 });
const exec = (command) => call("sandbox_exec", { command });
// Every text content item, and the total of them.
const texts = (r) => r.content.map((c) => c.text);
const textBytes = (r) => texts(r).reduce((n, t) => n + Buffer.byteLength(t), 0);

await check("plant: 100,000 control-byte names, a deep tree, a 3 GiB sparse file", async () => {
  const r = await exec(`python3 - <<'EOF'
import os
os.mkdir("many")
for i in range(100000):
    open("many/" + "\\x1b\\x07\\x01\\x7f" * 60 + str(i), "w").close()
os.mkdir("deep")
os.chdir("deep")
for level in range(48):
    for k in range(4):
        open(("f%d" % k) * 60 + "x" * 10, "w").close()
    d = chr(ord("a") + level % 26) * 255
    os.mkdir(d)
    os.chdir(d)
os.chdir("/workspace")
with open("big", "wb") as f:
    f.truncate(3 << 30)
print("planted")
EOF`);
  assert.equal(r.isError, false, texts(r).join("|"));
  assert.match(texts(r).join("\n"), /planted/);
});

await check("sandbox_list_files of 100,000 control-byte names is cut, and says so", async () => {
  const r = await call("sandbox_list_files", { directory: "many" });
  assert.equal(r.structuredContent.truncated, true);
  const shown = r.structuredContent.entries.length;
  assert.ok(shown > 0 && shown <= 1000, `${shown} entries`);
  assert.match(texts(r)[0], /^Truncated: \d+ entries of \/workspace\/many shown/);
  assert.ok(textBytes(r) < 1 << 20, `${textBytes(r)} bytes of text`);
  // No raw control byte reaches the model's text.
  assert.doesNotMatch(texts(r).join(""), /[\x00-\x08\x0b-\x1f\x7f]/);
});

await check("sandbox_list_files in a deep tree of long names is bounded", async () => {
  let dir = "deep";
  for (let level = 0; level < 12; level++) dir += "/" + String.fromCharCode(97 + level % 26).repeat(255);
  const r = await call("sandbox_list_files", { directory: dir });
  assert.equal(r.isError, false, texts(r)[0].slice(0, 200));
  assert.equal(r.structuredContent.entries.length, 5);
  assert.ok(textBytes(r) < 64 << 10, `${textBytes(r)} bytes of text`);
});

await check("sandbox_read_file of a 3 GiB sparse file gives a part, and says how to page", async () => {
  let r = await call("sandbox_read_file", { file_path: "big" });
  assert.equal(r.isError, false, texts(r)[0]);
  const s = r.structuredContent;
  assert.equal(s.size, 3 * 2 ** 30);
  assert.equal(s.offset, 0);
  assert.equal(s.truncated, true);
  assert.ok(s.len > 0 && s.len <= 256 << 10, `len ${s.len}`);
  assert.match(texts(r)[0], new RegExp(`3221225472 bytes.*offset: ${s.len}`, "s"));
  assert.ok(textBytes(r) < 1 << 20, `${textBytes(r)} bytes of text`);
  // Past 2 GiB, where a 32-bit length would have wrapped.
  r = await call("sandbox_read_file", { file_path: "big", offset: 3 * 2 ** 30 - 10, length: 100 });
  assert.equal(r.structuredContent.len, 10);
  assert.equal(r.structuredContent.truncated, false);
});

await check("sandbox_exec: a flood of control bytes is bounded as escaped JSON", async () => {
  const r = await exec("head -c 50000000 /dev/zero | tr '\\0' '\\033'; head -c 50000000 /dev/zero | tr '\\0' '\\001' >&2");
  assert.equal(r.structuredContent.stdout_truncated, true);
  assert.equal(r.structuredContent.stdout_bytes, 50000000);
  assert.match(texts(r)[0], /Truncated: stdout was 50000000 bytes/);
  assert.ok(textBytes(r) < 6 << 20, `${textBytes(r)} bytes of text`);
});

await check(`the server's peak RSS stays under ${mib(RSS_MAX)}, no line over ${mib(LINE_MAX)}`, async () => {
  const rss = peakRss(transport.pid);
  console.log(`# server VmHWM ${mib(rss)}, longest line ${mib(transport.longest)} of ${transport.lines}`);
  assert.ok(rss < RSS_MAX, `VmHWM ${mib(rss)}`);
  assert.ok(transport.longest < LINE_MAX, `a line of ${mib(transport.longest)}`);
});

await client.close();
finish();
