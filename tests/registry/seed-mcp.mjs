// SPDX-License-Identifier: MIT
// The seed's dict from an MCP client (tests/registry/seed-dict.sh): the
// official TypeScript SDK (tests/clients/mcp's, installed in BUILD/npm)
// starts `psrun mcp` with the dict's keys as its policy and calls
// sandbox_exec once. Prints the command's stdout; exit 1 with one line
// on stderr when the call fails or is an isError result.
// Usage: node seed-mcp.mjs PSRUN NODE_MODULES COMMAND KEY=VALUE...
const [psrun, modules, command, ...keys] = process.argv.slice(2);
const sdk = `${modules}/@modelcontextprotocol/sdk/dist/esm/client`;
const { Client } = await import(`${sdk}/index.js`);
const { StdioClientTransport } = await import(`${sdk}/stdio.js`);

const transport = new StdioClientTransport({
  command: psrun,
  args: ["mcp", ...keys.flatMap((k) => ["-o", k])],
  stderr: "inherit",
});
const client = new Client({ name: "psrun-seed", version: "1.0.0" });
try {
  await client.connect(transport);
  const r = await client.callTool({ name: "sandbox_exec", arguments: { command } });
  const texts = r.content.map((c) => c.text);
  if (r.isError || !/^Exit code: 0\n/.test(texts[0])) {
    console.error(`seed-mcp: ${texts.join(" | ").replace(/\n/g, " ")}`);
    process.exitCode = 1;
  } else {
    const out = texts.find((t) => t.startsWith("STDOUT:\n"));
    process.stdout.write(out ? out.slice(8) : "");
  }
} catch (e) {
  console.error(`seed-mcp: ${String(e && e.message ? e.message : e).split("\n")[0]}`);
  process.exitCode = 1;
} finally {
  await client.close();
}
