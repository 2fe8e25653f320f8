// SPDX-License-Identifier: MIT
// @modelcontextprotocol/inspector's CLI mode (what `npx
// @modelcontextprotocol/inspector --cli` runs) against `psrun mcp`:
// tools/list and a tools/call in the 2026-07-28 era, and a tools/call in its
// default (2025 handshake) era. One line per check, then
// "mcp: P passed, F failed, 0 skipped".
// Usage: node inspector.mjs PSRUN  (from the directory holding node_modules)
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { check, finish } from "./lib.mjs";

const psrun = process.argv[2];

// The inspector keeps a catalog and secrets under $HOME: a home of its own,
// removed at the end.
const home = mkdtempSync(join(tmpdir(), "psrun-mcp-inspector."));

// Runs the inspector; resolves with its JSON result when it exits with
// `status` (0, or 5: the tool's result had isError, said on stderr).
function inspector(args, status = 0) {
  return new Promise((resolve, reject) => {
    execFile("npx", ["--no", "--offline", "@modelcontextprotocol/inspector", "--cli",
      "--format", "json", psrun, "mcp", ...args],
    { env: { ...process.env, HOME: home }, timeout: 60000, maxBuffer: 1 << 24 },
    (err, stdout, stderr) => {
      const code = err ? err.code : 0;
      if (code !== status)
        return reject(new Error(`inspector ${args.join(" ")}: exit ${code}, not ${status}: ${stderr}`));
      if (status === 5 && !/"tool_is_error"/.test(stderr))
        return reject(new Error(`inspector exit 5 without tool_is_error: ${stderr}`));
      try {
        resolve(JSON.parse(stdout).result);
      } catch (e) {
        reject(new Error(`inspector printed no JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

try {
  await check("inspector --cli, 2026-07-28: tools/list", async () => {
    const r = await inspector(["--protocol-era", "modern", "--method", "tools/list"]);
    const names = r.tools.map((t) => t.name);
    for (const n of ["sandbox_exec", "sandbox_read_file", "sandbox_write_file",
      "sandbox_list_files", "sandbox_create", "sandbox_destroy"])
      assert.ok(names.includes(n), `${n} missing from ${names.join(", ")}`);
  });

  await check("inspector --cli, 2026-07-28: tools/call sandbox_exec", async () => {
    const r = await inspector(["--protocol-era", "modern", "--method", "tools/call",
      "--tool-name", "sandbox_exec", "--tool-arg", "command=echo from the inspector"]);
    assert.match(r.content[0].text, /^Exit code: 0\nDuration: /);
    assert.equal(r.content[1].text, "STDOUT:\nfrom the inspector\n");
    assert.equal(r.content[2].text, "STDERR: (empty)");
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.exit_code, 0);
    assert.equal(r._meta["io.modelcontextprotocol/serverInfo"].name, "psrun");
  });

  await check("inspector --cli, 2025 handshake: tools/call with a timeout", async () => {
    const r = await inspector(["--method", "tools/call", "--tool-name", "sandbox_exec",
      "--tool-arg", "command=sleep 30", "--tool-arg", "timeout=0.5"], 5);
    assert.match(r.content[0].text, /Killed: timeout \(after 0\.50s\)/);
    assert.equal(r.structuredContent.reason, "timeout");
    assert.equal(r.isError, true);
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}

finish();
