// SPDX-License-Identifier: MIT
// A cancelled sandbox_install_package, with the official TypeScript SDK
// 1.x: the installer is a fake that never ends (a `python3` of this test's,
// first on the server policy's PATH, that starts a child and sleeps), so no
// package index is needed. The cancel kills it and its child, frees the
// install's own network (its resolv-* file in the session's state
// directory), and the next call is answered.
// Usage: node cancel-install.mjs PSRUN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";
import { check, finish, waitFor } from "./lib.mjs";

const psrun = process.argv[2];
const root = process.env.PSRUN_SESSION_ROOT;
const marker = `fakepip-${process.pid}`;

// Host processes of the fake installer: itself and its child (the server's
// own command line names the marker too, in its PATH).
function marked() {
  let n = 0;
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, "latin1");
      if (cmd.includes(`${marker}/python3`) || cmd.includes(`${marker}-child`)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

// The install networks alive in this server's sessions.
function installNets() {
  let n = 0;
  for (const s of readdirSync(root))
    try {
      n += readdirSync(`${root}/${s}`).filter((f) => f.startsWith("resolv-")).length;
    } catch {
      // not a session directory
    }
  return n;
}

const transport = new StdioClientTransport({
  command: psrun,
  args: ["mcp", "-o", "memory_limit=128M", "-o", `env={PATH: /workspace/${marker}:/usr/bin:/bin}`],
  stderr: "inherit",
  // The SDK passes on only a few variables: the session root must reach it.
  env: { ...process.env },
});
const client = new Client({ name: "psrun-cancel-install", version: "1.0.0" });
await client.connect(transport);

await check("a cancelled install is killed with its network; the next call is answered", async () => {
  const fake = `mkdir -p /workspace/${marker} && printf '#!/bin/sh\\nsh -c "sleep 600; true" ` +
    `${marker}-child &\\nsleep 600\\ntrue\\n' > /workspace/${marker}/python3 && ` +
    `chmod 755 /workspace/${marker}/python3`;
  const w = await client.callTool({ name: "sandbox_exec", arguments: { command: fake } });
  assert.equal(w.isError, false, JSON.stringify(w.content));
  const ac = new AbortController();
  const call = client.callTool({ name: "sandbox_install_package", arguments: { package: "psfake" } },
    undefined, { signal: ac.signal, timeout: 60000 });
  await waitFor(() => marked() >= 2, 20000, "the installer and its child to start");
  assert.equal(installNets(), 1, "the install has no network of its own");
  ac.abort("test cancels");
  await assert.rejects(call);
  await waitFor(() => marked() === 0, 5000, "the installer's processes to die");
  await waitFor(() => installNets() === 0, 5000, "the install's network to go");
  const r = await client.callTool({ name: "sandbox_exec", arguments: { command: "echo after" } },
    undefined, { timeout: 10000 });
  assert.equal(r.structuredContent.stdout, "after\n");
});

await client.close();
finish();
