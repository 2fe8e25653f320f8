// SPDX-License-Identifier: MIT
// What every MCP client script of the mcp tier shares: its checks printed
// as "ok NAME" / "not ok NAME: why", the closing line run.sh reads
// ("mcp: P passed, F failed, 0 skipped"), and the host's view of processes.
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

let passed = 0, failed = 0;

export async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${name}: ${String(e && e.message ? e.message : e).split("\n")[0]}`);
  }
}

// The closing line, and the exit status run.sh checks beside it.
export function finish() {
  console.log(`mcp: ${passed} passed, ${failed} failed, 0 skipped`);
  process.exit(failed ? 1 : 0);
}

// The host's processes whose whole command line is argv.
export function pidsOf(argv) {
  const want = argv.join("\0") + "\0";
  const found = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "latin1") === want) found.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

// Polls cond (plain or async) every 50 ms until it holds, for at most ms.
export async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
