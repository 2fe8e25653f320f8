// SPDX-License-Identifier: MIT
// What an agent loop does to `psrun mcp`, with the official TypeScript SDK
// 1.x: tool calls in parallel (answered at once, in any order; at most
// --max-execs per sandbox, the others waiting; sandboxes independent), a
// cancel that kills the command and leaves the server free, and a silent
// command outliving a short client timeout through progress heartbeats
// (resetTimeoutOnProgress). Order is read from the sandbox's own clock
// (`date` before and after), never from timings on this side.
// Usage: node agent-loop.mjs PSRUN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";
import { check, finish, pidsOf, waitFor } from "./lib.mjs";

const psrun = process.argv[2];

const transport = new StdioClientTransport({
  command: psrun,
  args: ["mcp", "-o", "memory_limit=128M", "-o", "install_network=none", "--max-execs", "3",
    "--progress-interval", "1s"],
  stderr: "inherit",
  // the tier's PSRUN_SESSION_ROOT reaches the server: its "no session left
  // behind" check looks there
  env: { ...process.env },
});
const client = new Client({ name: "psrun-agent-loop", version: "1.0.0" });
await client.connect(transport);

// A command that says when (by the sandbox's clock) it started and ended.
const timed = (secs, handle) => ({
  name: "sandbox_exec",
  arguments: { command: `date +%s.%N; sleep ${secs}; date +%s.%N`, ...(handle ? { handle } : {}) },
});
const span = (r) => {
  assert.equal(r.isError, false, JSON.stringify(r.content));
  const [start, end] = r.structuredContent.stdout.trim().split("\n").map(Number);
  return { start, end };
};

await check("parallel execs in one sandbox run at once", async () => {
  const spans = (await Promise.all([1, 2, 3].map(() => client.callTool(timed(1))))).map(span);
  const lastStart = Math.max(...spans.map((s) => s.start));
  const firstEnd = Math.min(...spans.map((s) => s.end));
  assert.ok(lastStart < firstEnd, `one ran after another: ${JSON.stringify(spans)}`);
});

await check("past --max-execs a call waits for a free slot", async () => {
  const spans = (await Promise.all([1, 2, 3, 4].map(() => client.callTool(timed(1))))).map(span);
  spans.sort((a, b) => a.start - b.start);
  const firstEnd = Math.min(...spans.slice(0, 3).map((s) => s.end));
  assert.ok(spans[2].start < firstEnd, `three did not overlap: ${JSON.stringify(spans)}`);
  assert.ok(spans[3].start >= firstEnd - 0.05, `a fourth ran at once: ${JSON.stringify(spans)}`);
});

await check("sandboxes are independent: a full one does not hold back another", async () => {
  const c = await client.callTool({ name: "sandbox_create", arguments: {} });
  const handle = c.structuredContent.handle;
  const calls = [1, 2, 3].map(() => client.callTool(timed(1)));
  calls.push(client.callTool(timed(1, handle)));
  const spans = (await Promise.all(calls)).map(span);
  const other = spans.pop();
  assert.ok(other.start < Math.min(...spans.map((s) => s.end)),
    `the other sandbox waited: ${JSON.stringify({ spans, other })}`);
  await client.callTool({ name: "sandbox_destroy", arguments: { handle } });
});

await check("a cancel kills the command; the next call is answered meanwhile", async () => {
  const a = ["sleep", "3011.5"];
  const ac = new AbortController();
  const call = client.callTool({ name: "sandbox_exec", arguments: { command: a.join(" ") } },
    undefined, { signal: ac.signal });
  await waitFor(() => pidsOf(a).length, 10000, "the command to start");
  // Another call while it runs: answered while the first is still there.
  const r = await client.callTool({ name: "sandbox_exec", arguments: { command: "echo beside" } });
  assert.equal(r.structuredContent.stdout, "beside\n");
  assert.ok(pidsOf(a).length, "the long command still runs");
  ac.abort("test cancels");
  await assert.rejects(call);
  await waitFor(() => !pidsOf(a).length, 5000, "the command to die");
});

await check("progress heartbeats keep a short client timeout alive over a silent command", async () => {
  const seen = [];
  const r = await client.callTool({ name: "sandbox_exec", arguments: { command: "sleep 5; echo built" } },
    undefined, { timeout: 2000, resetTimeoutOnProgress: true, onprogress: (p) => seen.push(p) });
  assert.equal(r.structuredContent.stdout, "built\n");
  const beats = seen.filter((p) => /^still running/.test(p.message || ""));
  assert.ok(beats.length >= 3, `only ${beats.length} heartbeats: ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
});

await check("without resetTimeoutOnProgress the same client times out (and cancels)", async () => {
  const a = ["sleep", "3013.5"];
  await assert.rejects(client.callTool({ name: "sandbox_exec", arguments: { command: a.join(" ") } },
    undefined, { timeout: 1500, onprogress: () => {} }), (e) => /timed out/i.test(e.message));
  await waitFor(() => !pidsOf(a).length, 5000, "the timed-out command to die");
});

await check("a long output is shortened for the model to 30,000 characters, start and end", async () => {
  const r = await client.callTool({ name: "sandbox_exec", arguments: { command: "seq 1 200000" } });
  const out = r.content[1].text;
  assert.ok(out.length <= 30000, `${out.length} characters`);
  assert.match(out, /^STDOUT:\n1\n2\n3\n/);
  assert.match(out, /\n200000\n$/);
  assert.match(out, /\[\.\.\. \d+ bytes omitted \.\.\.\]/);
  assert.match(r.content[0].text, /Shortened: STDOUT was \d+ bytes, more than this server shows a model \(30000\).*sandbox_read_file/);
  assert.ok(r.structuredContent.stdout.length > out.length, "structuredContent keeps more");
});

await check("tools carry outputSchema, truthful annotations and the effective limits", async () => {
  const { tools } = await client.listTools();
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(by.sandbox_read_file.annotations,
    { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  assert.equal(by.sandbox_exec.annotations.readOnlyHint, false);
  assert.equal(by.sandbox_exec.annotations.destructiveHint, true);
  assert.equal(by.sandbox_list_files.annotations.readOnlyHint, true);
  // Every tool returns structuredContent, so each has an outputSchema (the
  // SDK validates every result against it).
  for (const t of tools) assert.equal(t.outputSchema.type, "object", t.name);
  assert.equal(by.sandbox_read_file.outputSchema.properties.size.type, "integer");
  assert.match(by.sandbox_exec.description, /timeout \d+m?s .*memory 128M.*shown 30000 characters; network none/);
});

await check("a failed file operation has its error in structuredContent", async () => {
  const r = await client.callTool({ name: "sandbox_read_file", arguments: { file_path: "no/such" } });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.error, r.content[0].text);
  assert.match(r.structuredContent.error, /Cannot read the file/);
});

await client.close();
finish();
