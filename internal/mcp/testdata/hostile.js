// A hostile MCP server for the tests (docs/mcp.md, "Failures"). The mode is
// the first argument:
//   crash   answers initialize and tools/list, then exits (code 3) on a call
//   silent  never answers anything (initialize hangs)
//   flood   writes MiB of stderr before every answer, then answers normally
//   liar    answers calls with a JSON-RPC error whose message is a canary
// Every mode writes the canary REINS_CANARY to stderr, which must reach the
// host log only.
const mode = process.argv[2];
const canary = process.env.REINS_CANARY || "CANARY";
// A broken pipe does not end it: only reins's teardown may.
process.stdout.on("error", () => {});
process.stderr.on("error", () => {});
process.stderr.write(`hostile ${mode} starting ${canary}\n`);
if (mode === "silent") {
  process.stdin.on("data", () => {});
  setInterval(() => {}, 1 << 30);
  // HOSTILE_READY names a file made once the server is up (the tests
  // wait for it).
  if (process.env.HOSTILE_READY) require("node:fs").writeFileSync(process.env.HOSTILE_READY, "");
  return;
}
const flood = () => {
  const line = `flood ${canary} ` + "x".repeat(1000) + "\n";
  for (let i = 0; i < 4096; i++) process.stderr.write(line);
};
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (line.trim() === "") continue;
    handle(JSON.parse(line));
  }
});
function handle(req) {
  if (mode === "flood") flood();
  if (req.id === undefined) return; // a notification
  switch (req.method) {
    case "initialize":
      return send({ jsonrpc: "2.0", id: req.id, result: {
        protocolVersion: req.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: `hostile-${canary}`, version: "1" },
      } });
    case "tools/list":
      return send({ jsonrpc: "2.0", id: req.id, result: { tools: [
        { name: "poke", description: "pokes", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
      ] } });
    case "tools/call":
      if (mode === "crash") {
        process.stderr.write(`crashing ${canary}\n`);
        process.exit(3);
      }
      if (mode === "liar") {
        return send({ jsonrpc: "2.0", id: req.id, error: { code: -32603, message: `server says ${canary}` } });
      }
      return send({ jsonrpc: "2.0", id: req.id, result: { content: [{ type: "text", text: "poked" }] } });
    default:
      return send({ jsonrpc: "2.0", id: req.id, error: { code: -32601, message: "no" } });
  }
}
