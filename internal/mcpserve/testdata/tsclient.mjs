// The official MCP TypeScript SDK's client against `reins mcp serve`
// (cmd/reins TestMCPServeTypeScriptClient): list, run, reply, a failure,
// progress, a cancel that leaves no process, parallel calls, the end of
// stdin, and a child's question put to a client that declared elicitation. It asserts as it goes and prints one JSON summary line.
//
//   MCP_SDK_DIR=…/node_modules/@modelcontextprotocol/sdk REINS=… node tsclient.mjs
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = process.env.MCP_SDK_DIR;
const { Client } = await import(pathToFileURL(join(sdk, "dist/esm/client/index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "dist/esm/client/stdio.js")).href);

const transport = new StdioClientTransport({
  command: process.env.REINS,
  args: ["mcp", "serve", "-m", "mock/echo"],
  cwd: process.env.WORKSPACE,
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "reins-ts-test", version: "1.0.0" });
await client.connect(transport);
const summary = {};
const long = { timeout: 120_000 };

// list: five tools, the result contract declared as run's outputSchema.
const { tools } = await client.listTools();
summary.tools = tools.map((t) => t.name).sort();
assert.deepEqual(summary.tools, ["child_output", "job_kill", "job_output", "reply", "run"]);
const run = tools.find((t) => t.name === "run");
assert.ok(run.outputSchema?.properties?.stopReason, "run declares the contract");

// run and reply: the client validates structuredContent against the schema.
let r = await client.callTool({ name: "run", arguments: { prompt: "hello from ts" } }, undefined, long);
assert.equal(r.isError ?? false, false);
assert.equal(r.structuredContent.stopReason, "completed");
assert.equal(r.structuredContent.output, "mock: hello from ts");
assert.match(r.content[0].text, /^mock: hello from ts\nchild: child-[0-9a-f]+$/);
const child = r.structuredContent.child;
summary.sessionId = r.structuredContent.sessionId;
r = await client.callTool({ name: "reply", arguments: { child, prompt: "a follow-up" } }, undefined, long);
assert.equal(r.structuredContent.stopReason, "completed");
assert.equal(r.structuredContent.output, "mock: a follow-up");
assert.equal(r.structuredContent.child, child);

// failure: an empty answer is isError with EMPTY_RESPONSE.
r = await client.callTool({ name: "run", arguments: { prompt: "EMPTY-PLEASE" } }, undefined, long);
assert.equal(r.isError, true);
assert.equal(r.structuredContent.stopReason, "error");
assert.match(r.structuredContent.diagnostic, /EMPTY_RESPONSE/);
summary.emptyDiagnostic = r.structuredContent.diagnostic;

// progress: the first names the child, a later one what it did.
const notes = [];
r = await client.callTool({ name: "run", arguments: { prompt: "GLOB-PLEASE" } }, undefined, {
  ...long,
  onprogress: (p) => notes.push(p.message),
});
assert.equal(r.structuredContent.stopReason, "completed");
assert.ok(notes.length >= 2, `progress ${JSON.stringify(notes)}`);
assert.ok(notes[0].startsWith(`child ${r.structuredContent.child} started`), notes[0]);
assert.ok(notes.slice(1).some((m) => m.startsWith(`child ${r.structuredContent.child}: `)), JSON.stringify(notes));
summary.progress = notes;

// cancel: aborting the request sends notifications/cancelled; the reins
// child's processes are torn down; the server keeps serving.
const mark = process.env.REINS_TEST_MARK;
const children = () =>
  readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      return env.includes(`REINS_TEST_MARK=${mark}`) && cmd.includes("sdk");
    } catch {
      return false;
    }
  });
const ac = new AbortController();
let started;
const stalled = client
  .callTool({ name: "run", arguments: { prompt: "STALL-PLEASE", agent: "helper" } }, undefined, {
    ...long,
    signal: ac.signal,
    onprogress: (p) => {
      if (!started && / started /.test(p.message)) started = p.message;
    },
  })
  .then(
    () => "resolved",
    (e) => `rejected: ${e.name}`,
  );
const until = async (cond, what) => {
  for (const end = Date.now() + 60_000; !cond(); ) {
    if (Date.now() > end) throw new Error(`never: ${what}`);
    await new Promise((res) => setTimeout(res, 25));
  }
};
await until(() => started && children().length > 0, "the stalled reins child running");
ac.abort();
summary.cancelled = await stalled;
assert.match(summary.cancelled, /^rejected/);
await until(() => children().length === 0, "the cancelled child's processes gone");
r = await client.callTool({ name: "run", arguments: { prompt: "after the cancel" } }, undefined, long);
assert.equal(r.structuredContent.output, "mock: after the cancel");

// parallel: two calls at once; each reply waits for the other's request
// (the mock's barrier), so both complete only when they run together.
const both = await Promise.all(
  [1, 2].map(() => client.callTool({ name: "run", arguments: { prompt: "BARRIER-PLEASE" } }, undefined, long)),
);
summary.parallel = both.map((x) => x.structuredContent.output);
assert.deepEqual(summary.parallel, ["met", "met"]);
assert.notEqual(both[0].structuredContent.child, both[1].structuredContent.child);

await client.close();

// elicitation: a client that declares it (this SDK speaks a protocol
// before 2026-07-28, so the server sends elicitation/create while the
// call is open) is asked whether the child's command that failed on the
// read-only .git may run again with .git writable; its yes lets it.
const { ElicitRequestSchema } = await import(pathToFileURL(join(sdk, "dist/esm/types.js")).href);
const asker = new Client({ name: "reins-ts-elicit", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
const questions = [];
asker.setRequestHandler(ElicitRequestSchema, async (req) => {
  questions.push(req.params.message);
  assert.equal(req.params.requestedSchema.properties.allow.type, "boolean");
  return { action: "accept", content: { allow: true } };
});
await asker.connect(
  new StdioClientTransport({
    command: process.env.REINS,
    args: ["mcp", "serve", "-m", "mock/echo"],
    cwd: process.env.WORKSPACE,
    env: process.env,
    stderr: "inherit",
  }),
);
r = await asker.callTool({ name: "run", arguments: { prompt: "GIT-PLEASE" } }, undefined, long);
assert.equal(r.structuredContent.output, "git written");
assert.equal(questions.length, 1, JSON.stringify(questions));
assert.ok(questions[0].includes(`reins child ${r.structuredContent.child} ran a command that failed because .git is read-only`), questions[0]);
summary.question = questions[0];
await asker.close();
console.log(JSON.stringify(summary));
