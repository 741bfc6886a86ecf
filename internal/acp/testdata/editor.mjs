// An editor built on the official ACP TypeScript SDK's client side
// (@agentclientprotocol/sdk). It drives `reins acp` the way Zed does and
// prints a transcript (every response, error, update and permission
// request, in order) as one JSON object on stdout; the Go test asserts on
// it.
//
// Env: ACP_SDK_PATH (the SDK's stable entry point), REINS_CMD (a JSON array:
// the command that runs `reins acp`), WORKSPACE (an absolute directory),
// MCP_EVERYTHING (the reference MCP server's entry point, which the editor
// passes as a stdio server).
import { pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";
import { spawn } from "node:child_process";
import { once } from "node:events";

const acp = await import(pathToFileURL(process.env.ACP_SDK_PATH).href);
const [cmd, ...args] = JSON.parse(process.env.REINS_CMD);
const workspace = process.env.WORKSPACE;
const everything = {
  name: "Everything (reference)",
  command: "node",
  args: [process.env.MCP_EVERYTHING, "stdio"],
  env: [{ name: "EVERYTHING_FROM", value: "editor" }],
};

const transcript = { connections: [] };
let current; // the step updates and permission requests are recorded in
let answer = "allow"; // how the next permission request is answered
const waiters = [];

function record(entry) {
  current.events.push(entry);
  for (const w of [...waiters]) {
    if (w.pred(entry)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(entry);
    }
  }
}

function waitFor(pred) {
  const seen = current.events.find(pred);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push({ pred, resolve }));
}

function errorOf(e) {
  return { code: e.code, message: e.message, data: e.data };
}

async function step(conn, name, fn) {
  if (process.env.EDITOR_DEBUG) process.stderr.write(`step ${name}\n`);
  current = { name, events: [] };
  conn.steps.push(current);
  try {
    current.result = await fn();
  } catch (e) {
    current.error = errorOf(e);
  }
}

async function connect(name, op) {
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"], cwd: workspace });
  const conn = { name, steps: [] };
  transcript.connections.push(conn);
  const app = acp
    .client({ name: "reins-test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      record({ kind: "update", sessionId: params.sessionId, update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, agent }) => {
      record({ kind: "permission", params, answer });
      switch (answer) {
        case "allow":
          return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once").optionId } };
        case "reject":
          return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "reject_once").optionId } };
        case "cancel":
          // What an editor does when the user cancels while it is asking:
          // session/cancel, then the pending request answers cancelled.
          await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
          return { outcome: { outcome: "cancelled" } };
      }
    });
  await app.connectWith(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)), (ctx) => op(ctx, conn));
  // Closing the agent's stdin ends the session, as an editor closing a
  // thread does; the agent must exit by itself.
  child.stdin.end();
  const [code, signal] = child.exitCode !== null ? [child.exitCode, child.signalCode] : await once(child, "exit");
  conn.exit = { code, signal };
}

const prompt = (ctx, sessionId, text) =>
  ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

let sessionId;

await connect("first", async (ctx, conn) => {
  await step(conn, "initialize", () =>
    ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "reins-test-editor", version: "1.0.0" },
    }),
  );
  await step(conn, "new-with-sse", () =>
    ctx.request(acp.methods.agent.session.new, {
      cwd: workspace,
      mcpServers: [{ type: "sse", name: "old", url: "http://127.0.0.1:9/sse", headers: [] }],
    }),
  );
  await step(conn, "new-with-mcp", () =>
    ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [everything] }),
  );
  const mcpSession = conn.steps.at(-1).result?.sessionId;
  await step(conn, "mcp-call", () => prompt(ctx, mcpSession, "please-mcp echo"));
  await step(conn, "new-relative-cwd", () => ctx.request(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] }));
  await step(conn, "new", () => ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] }));
  sessionId = conn.steps.at(-1).result.sessionId;

  answer = "allow";
  await step(conn, "edit-allowed", () => prompt(ctx, sessionId, "please-edit the notes"));

  answer = "reject";
  await step(conn, "run-rejected", () => prompt(ctx, sessionId, "please-run the command"));

  await step(conn, "cancel-while-streaming", async () => {
    const p = prompt(ctx, sessionId, "please-stall after reading");
    await waitFor((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call_update" && e.update.status === "completed");
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    return await p;
  });

  answer = "cancel";
  await step(conn, "cancel-while-asking", () => prompt(ctx, sessionId, "please-run the command"));

  await step(conn, "after-cancel", () => prompt(ctx, sessionId, "please-recall what happened"));

  await step(conn, "failing-turn", () => prompt(ctx, sessionId, "please-fail now"));

  await step(conn, "delegate", () => prompt(ctx, sessionId, "please-delegate the count"));

  await step(conn, "unknown-session", () => prompt(ctx, "no-such-session", "hello"));
});

await connect("second", async (ctx, conn) => {
  await step(conn, "initialize", () =>
    ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
  );
  await step(conn, "load-bad-id", () =>
    ctx.request(acp.methods.agent.session.load, { sessionId: "../../etc", cwd: workspace, mcpServers: [] }),
  );
  await step(conn, "load", () =>
    ctx.request(acp.methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [everything] }),
  );
  await step(conn, "prompt-after-load", () => prompt(ctx, sessionId, "please-recall what happened"));
  await step(conn, "mcp-after-load", () => prompt(ctx, sessionId, "please-mcp echo"));
});

// The editor goes away in the middle of a turn: reins must end the turn,
// close its log and exit by itself.
await connect("hangup", async (ctx, conn) => {
  await step(conn, "initialize", () =>
    ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
  );
  await step(conn, "new", () => ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] }));
  const sid = conn.steps.at(-1).result.sessionId;
  await step(conn, "prompt-then-hang-up", async () => {
    prompt(ctx, sid, "please-stall after reading").catch(() => {});
    await waitFor((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call_update" && e.update.status === "completed");
    return { sessionId: sid };
  });
});

process.stdout.write(JSON.stringify(transcript) + "\n");
