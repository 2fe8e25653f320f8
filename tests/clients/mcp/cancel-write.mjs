// SPDX-License-Identifier: MIT
// A cancelled sandbox_write_file, with the official TypeScript SDK 1.x. The
// server's sandbox gets a small cpu_limit, which holds for the session's
// file writer too (it runs in a cgroup below the session's), so a large
// write takes seconds: long enough to see its temporary file half written
// (through sandbox_list_files, which answers beside it) and to cancel it
// there. After the cancel the temporary file goes, the target is not there
// (no half file, no whole one), and the next write and read are answered.
// Usage: node cancel-write.mjs PSRUN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import { check, finish, waitFor } from "./lib.mjs";

const psrun = process.argv[2];
const SIZE = 96 << 20;

const transport = new StdioClientTransport({
  command: psrun,
  args: ["mcp", "-o", "cpu_limit=0.02", "-o", "disk_limit=256M"],
  stderr: "inherit",
  // The SDK passes on only a few variables: the session root must reach it.
  env: { ...process.env },
});
const client = new Client({ name: "psrun-cancel-write", version: "1.0.0" });
await client.connect(transport);

async function entries() {
  const r = await client.callTool({ name: "sandbox_list_files", arguments: { directory: "/workspace" } },
    undefined, { timeout: 30000 });
  assert.equal(r.isError, false, JSON.stringify(r.content));
  return r.structuredContent.entries;
}
const temps = (es) => es.filter((e) => e.name.startsWith(".psrun-write-"));

await check("a cancelled write stops half way and leaves no file; the next write is answered", async () => {
  // Made once, sent as it is: the session's writer does the slow part.
  const content = Buffer.alloc(SIZE, 0x41).toString("latin1");
  assert.deepEqual(temps(await entries()), [], "a temporary file before the write");
  const ac = new AbortController();
  const call = client.callTool({ name: "sandbox_write_file", arguments: { file_path: "big.txt", content } },
    undefined, { signal: ac.signal, timeout: 120000 });
  let partial = 0;
  await waitFor(async () => {
    const t = temps(await entries());
    partial = t.length ? t[0].size : 0;
    return partial > 0;
  }, 60000, "the write's temporary file to grow");
  assert.ok(partial < SIZE, `the write was already whole (${partial} bytes) before the cancel`);
  ac.abort("test cancels");
  await assert.rejects(call);
  await waitFor(async () => temps(await entries()).length === 0, 10000,
    "the writer to stop and remove its temporary file");
  const names = (await entries()).map((e) => e.name);
  assert.ok(!names.includes("big.txt"), "the cancelled write's file is there");
  const w = await client.callTool({ name: "sandbox_write_file", arguments: { file_path: "small.txt", content: "after" } },
    undefined, { timeout: 30000 });
  assert.equal(w.isError, false, JSON.stringify(w.content));
  const r = await client.callTool({ name: "sandbox_read_file", arguments: { file_path: "small.txt" } },
    undefined, { timeout: 30000 });
  assert.equal(r.structuredContent.content, "after");
});

await client.close();
finish();
