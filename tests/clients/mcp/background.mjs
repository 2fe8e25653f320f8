// SPDX-License-Identifier: MIT
// Background processes through `psrun mcp`, with the official TypeScript SDK
// 1.x: sandbox_exec {background: true} starts a python3 http.server that a
// following sandbox_exec fetches over the sandbox's loopback; its log is
// read by offset, it is killed, the list shows it ended; errors (an unknown
// id, a bad signal, background_limit reached) are isError results; a wait
// times out without killing and is cancellable; sandbox_destroy kills what
// a sandbox still runs in the background.
// Usage: node background.mjs PSRUN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";
import { check, finish, pidsOf, waitFor } from "./lib.mjs";

const psrun = process.argv[2];

const transport = new StdioClientTransport({
  command: psrun,
  args: ["mcp", "-o", "memory_limit=256M", "-o", "install_network=none", "-o",
    "background_limit=2"],
  stderr: "inherit",
  env: { ...process.env },
});
const client = new Client({ name: "psrun-background", version: "1.0.0" });
await client.connect(transport);
const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);
const ok = (r) => {
  assert.equal(r.isError, false, JSON.stringify(r.content));
  return r;
};

// A port of this run, inside the sandbox's own network namespace.
const port = 20000 + Math.floor(Math.random() * 20000);
let server = 0;

await check("sandbox_exec {background: true} returns the id at once", async () => {
  const r = ok(await call("sandbox_exec", {
    command: `exec python3 -m http.server ${port} --bind 127.0.0.1 --directory /workspace`,
    background: true,
  }));
  server = r.structuredContent.id;
  assert.ok(Number.isInteger(server) && server >= 1, JSON.stringify(r.structuredContent));
  assert.ok(r.structuredContent.pid > 0);
  assert.match(r.content[0].text, new RegExp(`^Started background process ${server} `));
  assert.match(r.content[0].text, /sandbox_process_output/);
});

await check("a following sandbox_exec fetches it over the loopback", async () => {
  ok(await call("sandbox_write_file", { file_path: "hello.txt", content: "hello from bg\n" }));
  const fetch = "import urllib.request,sys;" +
    `sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:${port}/hello.txt').read().decode())`;
  const r = ok(await call("sandbox_exec", {
    command: `for i in $(seq 100); do python3 -c "${fetch}" 2>/dev/null && exit 0; sleep 0.1; done; exit 1`,
  }));
  assert.equal(r.structuredContent.stdout, "hello from bg\n");
});

await check("its log is read by offset: next_offset, then the rest", async () => {
  let r;
  await waitFor(async () => {
    r = ok(await call("sandbox_process_output", { id: server, stream: "stderr" }));
    return /GET \/hello.txt/.test(r.structuredContent.data);
  }, 10000, "the request in the server's log");
  const whole = r.structuredContent.data;
  assert.equal(r.structuredContent.eof, false);
  const a = ok(await call("sandbox_process_output",
    { id: server, stream: "stderr", offset: 0, max_chars: 10 })).structuredContent;
  assert.equal(a.data, whole.slice(0, 10));
  assert.equal(a.next_offset, 10);
  const b = ok(await call("sandbox_process_output",
    { id: server, stream: "stderr", offset: a.next_offset })).structuredContent;
  assert.equal(a.data + b.data, whole);
  assert.equal(b.offset, 10);
  assert.equal(b.next_offset, whole.length);
  assert.equal(r.content[1].text, whole, "the bytes in an item of their own");
});

await check("a wait that times out says it runs on, and does not kill it", async () => {
  const r = ok(await call("sandbox_process_wait", { id: server, timeout: 0.3 }));
  assert.equal(r.structuredContent.running, true);
  const l = ok(await call("sandbox_process_list", {})).structuredContent.processes;
  assert.equal(l.find((p) => p.id === server).state, "running");
});

await check("a cancelled wait leaves the server free", async () => {
  const ac = new AbortController();
  const waiting = call("sandbox_process_wait", { id: server, timeout: 60 }, { signal: ac.signal });
  await sleep(300);
  ac.abort();
  await assert.rejects(waiting);
  const t0 = Date.now();
  ok(await call("sandbox_process_list", {}));
  assert.ok(Date.now() - t0 < 20000);
});

await check("sandbox_process_kill stops it; the list shows it ended", async () => {
  const k = ok(await call("sandbox_process_kill", { id: server }));
  assert.deepEqual(k.structuredContent, { id: server, signal: "TERM", sent: true });
  const w = ok(await call("sandbox_process_wait", { id: server, timeout: 10 }));
  assert.equal(w.structuredContent.running, false);
  assert.equal(w.structuredContent.reason, "signaled");
  assert.equal(w.structuredContent.signal, 15);
  const l = ok(await call("sandbox_process_list", {})).structuredContent.processes;
  const p = l.find((x) => x.id === server);
  assert.ok(p, `process ${server} is not listed: ${JSON.stringify(l)}, wait: ${JSON.stringify(w)}`);
  assert.equal(p.state, "signaled");
  assert.match(p.command, /http\.server/);
  await waitFor(async () => ok(await call("sandbox_process_output",
    { id: server, stream: "stderr", offset: 1 << 20 })).structuredContent.eof, 5000, "eof");
  const again = ok(await call("sandbox_process_kill", { id: server }));
  assert.equal(again.structuredContent.sent, false, "an ended one gets nothing");
});

await check("an unknown id and a bad signal are isError results", async () => {
  let r = await call("sandbox_process_output", { id: 4242 });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /No background process 4242/);
  r = await call("sandbox_process_kill", { id: server, signal: "STOP" });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /must be one of TERM, KILL, INT, HUP, QUIT, USR1, USR2/);
  r = await call("sandbox_process_wait", { id: 0 });
  assert.equal(r.isError, true);
});

await check("past background_limit: isError naming it; none started", async () => {
  const a = ok(await call("sandbox_exec", { command: "sleep 60", background: true }));
  const b = ok(await call("sandbox_exec", { command: "sleep 60", background: true }));
  const c = await call("sandbox_exec", { command: "sleep 60", background: true });
  assert.equal(c.isError, true);
  assert.match(c.content[0].text, /background_limit/);
  for (const r of [a, b])
    ok(await call("sandbox_process_kill", { id: r.structuredContent.id, signal: "KILL" }));
  const l = ok(await call("sandbox_process_list", {})).structuredContent.processes;
  assert.equal(l.filter((p) => p.state === "running").length, 0);
});

await check("sandbox_destroy kills its background processes", async () => {
  const h = ok(await call("sandbox_create", {})).structuredContent.handle;
  const secs = String(3000 + Math.floor(Math.random() * 5000));
  ok(await call("sandbox_exec", { command: `exec sleep ${secs}`, background: true, handle: h }));
  await waitFor(() => pidsOf(["sleep", secs]).length === 1, 5000, "the sleeper");
  ok(await call("sandbox_destroy", { handle: h }));
  await waitFor(() => pidsOf(["sleep", secs]).length === 0, 5000, "the sleeper's end");
  const r = await call("sandbox_process_list", { handle: h });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /No sandbox with handle/);
});

// The session keeps one waiter a process; two calls waiting at once both
// get its end.
await check("two waits at once for one process both get its end", async () => {
  const id = ok(await call("sandbox_exec", { command: "sleep 1; exit 7", background: true }))
    .structuredContent.id;
  const both = await Promise.all([1, 2].map(() =>
    call("sandbox_process_wait", { id, timeout: 30 })));
  for (const w of both) {
    ok(w);
    assert.equal(w.structuredContent.running, false);
    assert.equal(w.structuredContent.exit_code, 7);
  }
});

// A wait holds its sandbox: a cancel or a sandbox_destroy ends it (a
// wait on for its 600 s would hold the destroy that long; the client's
// request timeout of 60 s catches that).
await check("a cancelled wait, then sandbox_destroy, answer; so does a wait during a destroy",
  async () => {
    const h = ok(await call("sandbox_create", {})).structuredContent.handle;
    const id = ok(await call("sandbox_exec",
      { command: "sleep 300", background: true, handle: h })).structuredContent.id;
    const ac = new AbortController();
    const cancelled = call("sandbox_process_wait", { id, timeout: 600, handle: h },
      { signal: ac.signal, timeout: 60000 });
    await sleep(300);
    ac.abort();
    await assert.rejects(cancelled);
    const pending = call("sandbox_process_wait", { id, timeout: 600, handle: h },
      { timeout: 60000 });
    pending.catch(() => {}); // its failure is the check's, below
    await sleep(300);
    ok(await call("sandbox_destroy", { handle: h }, { timeout: 60000 }));
    const w = await pending;
    assert.equal(w.isError, true);
    assert.match(w.content[0].text, /destroyed/);
  });

await check("tools/list: background_limit named, annotations truthful", async () => {
  const { tools } = await client.listTools();
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.match(by.sandbox_exec.inputSchema.properties.background.description, /background_limit/);
  assert.match(by.sandbox_process_list.description, /background_limit/);
  assert.equal(by.sandbox_process_list.annotations.readOnlyHint, true);
  assert.equal(by.sandbox_process_output.annotations.readOnlyHint, true);
  assert.equal(by.sandbox_process_kill.annotations.destructiveHint, true);
  assert.equal(by.sandbox_process_kill.annotations.readOnlyHint, false);
  for (const n of ["sandbox_process_list", "sandbox_process_output", "sandbox_process_kill",
    "sandbox_process_wait"])
    assert.equal(by[n].outputSchema.type, "object", n);
});

await client.close();
finish();
