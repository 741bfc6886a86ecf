#!/usr/bin/env node
// The reins-cli launcher: it runs the reins binary of the platform package
// npm installed for this machine (an optionalDependency of reins-cli, the
// way esbuild and biome ship), passing arguments, standard streams and the
// exit status through. Nothing is downloaded.
"use strict";
const { spawnSync } = require("child_process");
const path = require("path");

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
const r = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  console.error(`reins-cli: could not run ${bin}: ${r.error.message}`);
  process.exit(1);
}
if (r.signal) {
  process.kill(process.pid, r.signal);
}
process.exit(r.status === null ? 1 : r.status);
