// A scripted ACP agent built on the official TypeScript SDK's agent side
// (@agentclientprotocol/sdk). The Go tests run it as a real ACP child of
// the `acp` provider; ACP_SCENARIO picks what it does. Every channel that
// is not the agent's answer text (stderr, error messages, session id, tool
// titles, raw input, locations, option names, metadata, unknown enum
// values) carries ACP_CANARY, so the tests can prove none of it leaks.
import { pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const acp = await import(pathToFileURL(process.env.ACP_SDK_PATH).href);
const scenario = process.env.ACP_SCENARIO || "success";
const canary = process.env.ACP_CANARY || "CANARY";
const env = (k, d) => process.env[k] || d;

process.stderr.write(`child stderr: token=${canary}\n`);

if (scenario === "die_before_init") {
  process.exit(Number(env("ACP_EXIT_CODE", "7")));
}
if (scenario === "ignore_term" || scenario === "hang") {
  // Ignore SIGTERM and stdin EOF: only SIGKILL ends this child.
  process.on("SIGTERM", () => {});
  setInterval(() => {}, 1 << 30);
}

let mcpServers = null; // what session/new received (scenario mcp_servers)
let newMeta; // session/new's _meta (scenario trace_meta)
let cancelled = null;
const cancelledPromise = new Promise((resolve) => (cancelled = resolve));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function say(client, sessionId, text) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

async function leakyToolCall(client, sessionId) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: {
      sessionUpdate: "tool_call",
      toolCallId: `call-${canary}`,
      title: `Edit /secret/${canary}.txt`,
      kind: "edit",
      status: "pending",
      rawInput: { path: `/secret/${canary}.txt`, token: canary },
      locations: [{ path: `/secret/${canary}.txt` }],
      _meta: { secret: canary },
    },
  });
}

const permissionOptions = {
  both: [
    { optionId: `allow-${canary}`, name: `Allow ${canary}`, kind: "allow_once" },
    { optionId: `always-${canary}`, name: `Always ${canary}`, kind: "allow_always" },
    { optionId: `reject-${canary}`, name: `Reject ${canary}`, kind: "reject_once" },
  ],
  always_only: [
    { optionId: `always-${canary}`, name: `Always ${canary}`, kind: "allow_always" },
    { optionId: `never-${canary}`, name: `Never ${canary}`, kind: "reject_always" },
  ],
};

async function askPermission(client, sessionId) {
  await leakyToolCall(client, sessionId);
  const kind = env("ACP_PERM_KIND", "");
  const toolCall = {
    toolCallId: `call-${canary}`,
    title: `Edit /secret/${canary}.txt`,
    rawInput: { path: `/secret/${canary}.txt`, token: canary },
    locations: [{ path: `/secret/${canary}.txt` }],
    _meta: { secret: canary },
  };
  if (kind) toolCall.kind = kind;
  const res = await client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall,
    options: permissionOptions[env("ACP_PERM_OPTIONS", "both")],
    _meta: { secret: canary },
  });
  const o = res.outcome;
  return o.outcome === "selected" ? `selected:${o.optionId.split("-")[0]}` : "cancelled";
}

// The history scenario keeps each session's prompts in a file under
// ACP_HISTORY_DIR, as a real agent keeps its conversation: every answer
// lists the prompts the session saw before, and session/load (offered
// with ACP_LOAD=1) replays them as updates, which must not count as the
// next run's output.
const historyFile = (sid) => join(env("ACP_HISTORY_DIR", "/nonexistent"), sid.replace(/[^A-Za-z0-9-]/g, "_") + ".json");
const readHistory = (sid) => { try { return JSON.parse(readFileSync(historyFile(sid), "utf8")); } catch { return []; } };

async function replayHistory(client, sid) {
  for (const h of readHistory(sid)) {
    await client.notify(acp.methods.client.session.update, {
      sessionId: sid,
      update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: h.prompt } },
    });
    await say(client, sid, `REPLAYED ${h.answer}`);
  }
}

// The latereplay scenario is the history scenario with the replay after
// the session/load answer, which ACP says comes last: ACP_REPLAY_AT=after
// (the default) is Gemini CLI 0.61's way — one user_message_chunk before
// the answer, the rest ACP_REPLAY_DELAY ms (50) after it;
// ACP_REPLAY_AT=prompt holds the whole replay until the follow-up prompt
// arrives and streams it before that prompt's answer.
let pendingReplay = null;

async function loadSession({ params, client }) {
  const sid = params.sessionId;
  // ACP_HEARTBEAT_MS: from the load on, a session/update (an empty
  // available_commands_update) every that many ms, forever: a child that
  // never falls silent.
  const beat = Number(env("ACP_HEARTBEAT_MS", "0"));
  if (beat > 0) {
    setInterval(() => client.notify(acp.methods.client.session.update, {
      sessionId: sid,
      update: { sessionUpdate: "available_commands_update", availableCommands: [] },
    }), beat);
  }
  if (scenario !== "latereplay") {
    await replayHistory(client, sid);
    return {};
  }
  if (env("ACP_REPLAY_AT", "after") === "prompt") {
    pendingReplay = () => replayHistory(client, sid);
    return {};
  }
  await client.notify(acp.methods.client.session.update, {
    sessionId: sid,
    update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "<session context>" } },
  });
  setTimeout(() => replayHistory(client, sid), Number(env("ACP_REPLAY_DELAY", "50")));
  return {};
}

async function prompt({ params, client }) {
  const sid = params.sessionId;
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("");
  if (pendingReplay) {
    const replay = pendingReplay;
    pendingReplay = null;
    await replay();
  }
  switch (scenario) {
    case "latereplay":
    case "history": {
      const h = readHistory(sid);
      const answer = `turn ${h.length + 1} after [${h.map((x) => x.prompt).join(" | ")}]`;
      h.push({ prompt: text, answer });
      mkdirSync(env("ACP_HISTORY_DIR", "/nonexistent"), { recursive: true });
      writeFileSync(historyFile(sid), JSON.stringify(h));
      await say(client, sid, answer);
      return { stopReason: "end_turn" };
    }
    case "mcp_servers":
      await say(client, sid, JSON.stringify(mcpServers));
      return { stopReason: "end_turn" };
    case "trace_meta": // the trace context reins sent (docs/telemetry.md)
      await say(client, sid, JSON.stringify({ new: newMeta ?? null, prompt: params._meta ?? null, env: env("TRACEPARENT", "") }));
      return { stopReason: "end_turn" };
    case "success":
      await say(client, sid, "Hello, ");
      await say(client, sid, "world");
      return { stopReason: "end_turn", usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 } };
    case "echo": {
      const n = Number(env("ACP_CHUNKS", "5"));
      for (let i = 0; i < n; i++) {
        await say(client, sid, `${text}#${i};`);
        await sleep(1);
      }
      return { stopReason: "end_turn" };
    }
    case "max_tokens":
      await say(client, sid, "partial answer");
      return { stopReason: "max_tokens" };
    case "refusal":
      await say(client, sid, "I will not");
      return { stopReason: "refusal" };
    case "max_turn_requests":
      await say(client, sid, "went around in circles");
      return { stopReason: "max_turn_requests" };
    case "remote_cancelled":
      await say(client, sid, "gave up");
      return { stopReason: "cancelled" };
    case "unknown_stop":
      await say(client, sid, "odd ending");
      return { stopReason: `weird_${canary}` };
    case "error_response":
      await leakyToolCall(client, sid);
      throw new acp.RequestError(-32603, `model failed: ${canary}`, { secret: canary });
    case "flood": {
      // ACP_CHUNKS chunks as fast as the transport takes them, then end_turn
      // (a long answer from a real agent streams thousands).
      const n = Number(env("ACP_CHUNKS", "3000"));
      for (let i = 0; i < n; i++) await say(client, sid, `<${i}>`);
      return { stopReason: "end_turn" };
    }
    case "flood_crash": {
      // ACP_CHUNKS one-byte chunks, then exit ACP_EXIT_CODE (3) without a
      // response: every streamed byte must still reach the parent.
      // ACP_GC_STDIO=inherit: a grandchild holds stdout open after the
      // exit, so the end of the stream never comes.
      if (env("ACP_GC_STDIO", "") === "inherit") spawn("sleep", ["300"], { stdio: "inherit" }).unref();
      const n = Number(env("ACP_CHUNKS", "1000"));
      for (let i = 0; i < n; i++) await say(client, sid, String(i % 10));
      await new Promise((r) => process.stdout.write("", r));
      process.exit(Number(env("ACP_EXIT_CODE", "3")));
    }
    case "silent":
      // end_turn without any output.
      return { stopReason: env("ACP_AFTER", "end_turn") };
    case "crash_exit":
      await say(client, sid, "half of it");
      process.exit(Number(env("ACP_EXIT_CODE", "3")));
    case "crash_signal":
      await say(client, sid, "half of it");
      process.kill(process.pid, "SIGKILL");
      await sleep(1 << 30);
      return { stopReason: "end_turn" };
    case "close_stdout":
      // The transport closes but the process stays: not a process exit.
      await say(client, sid, "leaving");
      await sleep(20);
      closeSync(1);
      await sleep(1 << 30);
      return { stopReason: "end_turn" };
    case "permission": {
      const outcome = await askPermission(client, sid);
      await say(client, sid, `outcome=${outcome}`);
      return { stopReason: env("ACP_AFTER", "end_turn") };
    }
    case "permission_crash": {
      await askPermission(client, sid);
      process.exit(Number(env("ACP_EXIT_CODE", "4")));
    }
    case "leaky": {
      await leakyToolCall(client, sid);
      const outcome = await askPermission(client, sid);
      await say(client, sid, `clean answer (${outcome})`);
      throw new acp.RequestError(-32000, `upstream said ${canary}`, { secret: canary, stderr: canary });
    }
    case "tool_wait": {
      // A tool call announced, then held until the file ACP_WAIT_FILE
      // exists (the test creates it once it saw the call on the parent's
      // screen), then completed: the call is live while the child runs.
      await client.notify(acp.methods.client.session.update, {
        sessionId: sid,
        update: { sessionUpdate: "tool_call", toolCallId: "tw-1", title: "Run the tests", kind: "execute", status: "in_progress" },
      });
      const { existsSync } = await import("node:fs");
      for (let i = 0; i < 12000 && !existsSync(env("ACP_WAIT_FILE", "/nonexistent")); i++) await sleep(10);
      await client.notify(acp.methods.client.session.update, {
        sessionId: sid,
        update: { sessionUpdate: "tool_call_update", toolCallId: "tw-1", status: "completed" },
      });
      await say(client, sid, "tests passed");
      return { stopReason: "end_turn" };
    }
    case "placement": {
      // cmd/reins TestPlacementContract: "ANSWER-<n>" streams an answer of
      // n KiB (lines "%07d\n", the test's own pattern) in 8 KiB chunks;
      // "CANCEL-ME" streams EARLIER-COMPLETE, creates ACP_READY_FILE and
      // waits for session/cancel (then creates ACP_READY_FILE.cancelled).
      const m = /ANSWER-(\d+)/.exec(text);
      if (m) {
        let body = "";
        for (let i = 0; i < Number(m[1]) * 128; i++) body += String(i).padStart(7, "0") + "\n";
        for (let i = 0; i < body.length; i += 8192) await say(client, sid, body.slice(i, i + 8192));
        return { stopReason: "end_turn" };
      }
      if (text.includes("CANCEL-ME")) {
        await say(client, sid, "EARLIER-COMPLETE");
        writeFileSync(env("ACP_READY_FILE", "/nonexistent"), "ready");
        await cancelledPromise;
        writeFileSync(env("ACP_READY_FILE", "/nonexistent") + ".cancelled", "cancelled");
        return { stopReason: "cancelled" };
      }
      await say(client, sid, "no such placement task");
      return { stopReason: "end_turn" };
    }
    case "wait_cancel":
      await say(client, sid, "working");
      await cancelledPromise;
      await say(client, sid, " (stopped)");
      return { stopReason: "cancelled" };
    case "ignore_term":
    case "hang":
      await say(client, sid, "working");
      await sleep(1 << 30);
      return { stopReason: "end_turn" };
    case "exec": {
      // Runs ACP_EXEC with bash as the agent's own action (not through a
      // permission request), the way a real agent runs its tools: the
      // sandbox, not the protocol, must contain it.
      const { spawnSync } = await import("node:child_process");
      const r = spawnSync("bash", ["-c", env("ACP_EXEC", "true")], { stdio: "ignore" });
      await say(client, sid, `exit:${r.status}`);
      return { stopReason: "end_turn" };
    }
    case "edit": {
      // Edits a file in its cwd with its own fs calls (not through a
      // permission request or reins's tools): the prompt's last line is
      // {"path","old","new"}; the first occurrence of old becomes new
      // (testutil.FourEdits, issue 34's four isolated children).
      let answer = "edited";
      try {
        const e = JSON.parse(text.trim().split("\n").pop());
        const body = readFileSync(e.path, "utf8");
        if (!body.includes(e.old)) answer = "no match";
        else writeFileSync(e.path, body.replace(e.old, () => e.new));
      } catch {
        answer = "edit failed";
      }
      await say(client, sid, answer);
      return { stopReason: "end_turn" };
    }
    case "grandchild": {
      // A grandchild in the child's process group that outlives the answer.
      // ACP_GC_STDIO=inherit: it also holds the child's stdout open.
      const g = spawn("sleep", ["300"], { stdio: env("ACP_GC_STDIO", "ignore") });
      g.unref();
      await say(client, sid, `spawned ${g.pid > 0 ? "ok" : "no"}`);
      if (env("ACP_THEN", "") === "crash") process.exit(9);
      if (env("ACP_THEN", "") === "hang") await sleep(1 << 30);
      return { stopReason: "end_turn" };
    }
  }
  return { stopReason: "end_turn" };
}

const app = acp
  .agent({ name: "scripted-child" })
  .onRequest(acp.methods.agent.initialize, () => scenario === "hang_init" ? new Promise(() => {}) : ({
    protocolVersion: Number(env("ACP_PROTOCOL_VERSION", "1")),
    agentCapabilities: {
      ...(env("ACP_LOAD", "") ? { loadSession: true } : {}),
      mcpCapabilities: { http: env("ACP_MCP_HTTP", "") === "1" },
    },
    authMethods: [],
    agentInfo: { name: `child-${canary}`, version: "0.0.0" },
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    mcpServers = params.mcpServers;
    newMeta = params._meta;
    if (scenario === "reject_new_session") {
      throw new acp.RequestError(-32603, `cannot open ${canary}`, { secret: canary });
    }
    if (scenario === "empty_session") return { sessionId: "" };
    if (scenario === "history" || scenario === "latereplay") return { sessionId: `sess-${canary}-${process.pid}` };
    return { sessionId: `sess-${canary}` };
  })
  .onRequest(acp.methods.agent.session.load, loadSession)
  .onRequest(acp.methods.agent.session.prompt, prompt)
  .onNotification(acp.methods.agent.session.cancel, () => cancelled());

const conn = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await conn.closed;
if (scenario !== "ignore_term" && scenario !== "hang") process.exit(0);
