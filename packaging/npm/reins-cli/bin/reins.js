#!/usr/bin/env node
// The reins-cli launcher: it runs the reins binary of the platform package
// npm installed for this machine (an optionalDependency of reins-cli, the
// way esbuild and biome ship), passing arguments, standard streams and the
// exit status through. Nothing is downloaded.
//
// Signals (docs/cli.md#the-npm-launcher): SIGINT, SIGTERM and SIGHUP sent
// to the launcher are passed to reins, and the launcher waits for it, so
// reins's last line comes before the shell's prompt and its exit status is
// the launcher's. reins killed by a signal, the launcher kills itself with
// the same one (status 128+N). The launcher names its pid in
// REINS_LAUNCHER_PID: reins ends when its launcher dies, even by SIGKILL
// (internal/parentwatch).
"use strict";
const { spawn } = require("child_process");
const path = require("path");
const { constants } = require("os");

const os = process.platform; // linux, darwin, win32
const cpu = process.arch; // x64, arm64
const pkg = `reins-cli-${os}-${cpu}`;
const exe = os === "win32" ? "reins.exe" : "reins";

let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch {
  console.error(`reins-cli: no reins binary for ${os} ${cpu}: the package ${pkg} is not installed.`);
  console.error("reins-cli: reinstall without --no-optional (or --omit=optional), or build from source: go install github.com/reinsdev/reins/cmd/reins@latest");
  process.exit(1);
}

const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const child = spawn(bin, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, REINS_LAUNCHER_PID: String(process.pid) },
});
// A terminal's Ctrl-C reaches reins too (one process group): reins takes a
// second SIGINT as the first.
const pass = (sig) => {
  try {
    child.kill(sig);
  } catch {}
};
for (const sig of forwarded) {
  process.on(sig, pass);
}
child.on("error", (err) => {
  console.error(`reins-cli: could not run ${bin}: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal === null) {
    process.exit(code === null ? 1 : code);
  }
  // Die of the same signal: its default action back, then raised.
  for (const sig of forwarded) {
    process.removeListener(sig, pass);
  }
  const status = 128 + (constants.signals[signal] || 0);
  try {
    process.kill(process.pid, signal);
  } catch {}
  // A signal whose default is not to end the process (or windows).
  setTimeout(() => process.exit(status), 1000).unref();
});
