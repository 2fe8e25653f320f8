// SPDX-License-Identifier: MIT
// An old deployed client: the TypeScript SDK 1.0.4 (installed as
// mcp-sdk-1.0.4), which speaks only protocol revision 2024-11-05. The
// server answers in that revision and sends nothing its schema lacks (no
// structuredContent, outputSchema, title, annotations or instructions);
// the tools work, argument errors are isError results, a cut result says so.
// Usage: node client-1.0.mjs PSRUN
import { Client } from "mcp-sdk-1.0.4/client/index.js";
import { StdioClientTransport } from "mcp-sdk-1.0.4/client/stdio.js";
import { CallToolResultSchema } from "mcp-sdk-1.0.4/types.js";
import assert from "node:assert/strict";
import { check, finish } from "./lib.mjs";

const psrun = process.argv[2];

// Every message the server sent, to check what it left out.
const received = [];
const transport = new StdioClientTransport({
  command: psrun,
  args: ["mcp", "-o", "memory_limit=128M", "-o", "install_network=none"],
  stderr: "inherit",
  // the tier's PSRUN_SESSION_ROOT reaches the server: its "no session left
  // behind" check looks there
  env: { ...process.env },
});
const client = new Client({ name: "psrun-old-client", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
const onmessage = transport.onmessage;
transport.onmessage = (m) => {
  received.push(m);
  onmessage(m);
};
const call = (name, args) => client.callTool({ name, arguments: args }, CallToolResultSchema);

await check("SDK 1.0.4 connects: the server answers 2024-11-05", async () => {
  assert.equal(client.getServerVersion().name, "psrun");
  assert.equal(client.getServerVersion().title, undefined);
  assert.ok(client.getServerCapabilities().tools);
});

await check("tools/list in 2024-11-05: name, description, inputSchema only", async () => {
  const { tools } = await client.listTools();
  assert.equal(tools.length, 11);
  for (const t of tools) assert.deepEqual(Object.keys(t).sort(), ["description", "inputSchema", "name"], t.name);
});

await check("sandbox_exec and the file tools work; no structuredContent", async () => {
  let r = await call("sandbox_exec", { command: "echo old; exit 3" });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /^Exit code: 3/);
  assert.equal(r.content[1].text, "STDOUT:\nold\n");
  assert.equal(r.structuredContent, undefined);
  r = await call("sandbox_write_file", { file_path: "a.txt", content: "hi" });
  assert.equal(r.isError, false);
  r = await call("sandbox_read_file", { file_path: "a.txt" });
  assert.equal(r.content[1].text, "hi");
  const last = received.filter((m) => m.result && m.result.content).pop();
  assert.equal("structuredContent" in last.result, false);
});

await check("a bad argument is an isError result here too", async () => {
  const r = await call("sandbox_install_package", { package: "x", tool: "ruby" });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /must be one of python, node, not `ruby`/);
  const last = received.filter((m) => m.result && m.result.content).pop();
  assert.equal("structuredContent" in last.result, false);
});

await check("a background process works in 2024-11-05: its id in the text", async () => {
  let r = await call("sandbox_exec", { command: "echo bg-old; sleep 30", background: true });
  assert.equal(r.isError, false, r.content[0].text);
  const id = Number(/^Started background process (\d+) /.exec(r.content[0].text)[1]);
  assert.equal(r.structuredContent, undefined);
  r = await call("sandbox_process_list", {});
  assert.match(r.content[0].text, new RegExp(`\\n${id} pid \\d+ running `));
  // Its output: poll until the line is there.
  for (let i = 0; i < 100 && !(r.content[1] && r.content[1].text === "bg-old\n"); i++) {
    r = await call("sandbox_process_output", { id });
    assert.equal(r.isError, false, r.content[0].text);
    if (!r.content[1]) await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal(r.content[1].text, "bg-old\n");
  r = await call("sandbox_process_kill", { id, signal: "KILL" });
  assert.equal(r.isError, false, r.content[0].text);
  r = await call("sandbox_process_wait", { id, timeout: 10 });
  assert.match(r.content[0].text, /ended: exit code 137 \(signaled, signal 9/);
  r = await call("sandbox_process_kill", { id, signal: "STOP" });
  assert.equal(r.isError, true);
  const last = received.filter((m) => m.result && m.result.content).pop();
  assert.equal("structuredContent" in last.result, false);
});

await client.close();
finish();
