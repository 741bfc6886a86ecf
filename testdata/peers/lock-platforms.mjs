// Completes package-lock.json with the platform packages the registry
// reachable here lacks (only the linux/x64 builds of some agents are
// mirrored): `npm install --package-lock-only` leaves out an optional
// dependency it cannot fetch, and `npm ci` then refuses the lock
// ("Missing: @cline/cli-darwin-arm64@ from lock file"). Each missing
// optional dependency gets an entry beside its sibling that was resolved,
// with the version its parent pins and the os/cpu/libc its name states,
// so npm ci on this platform skips it and on its own platform fetches it.
// Run after `npm install --package-lock-only`:
//   node lock-platforms.mjs
import fs from "node:fs";

const file = new URL("./package-lock.json", import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, "utf8"));
const pkgs = lock.packages;

// platform reads os, cpu and libc from a platform package's name.
function platform(name) {
  const n = name.split("/").pop();
  const os = /darwin/.test(n) ? "darwin" : /win32|windows/.test(n) ? "win32" : /linux/.test(n) ? "linux" : null;
  const cpu = /arm64/.test(n) ? "arm64" : /x64/.test(n) ? "x64" : null;
  if (!os || !cpu) return null;
  const p = { os: [os], cpu: [cpu] };
  if (/musl/.test(n)) p.libc = ["musl"];
  else if (os === "linux" && /gnu/.test(n)) p.libc = ["glibc"];
  return p;
}

// resolved says where node would find name from the package at loc.
function resolved(loc, name) {
  for (let dir = loc; ; ) {
    const at = (dir ? dir + "/" : "") + "node_modules/" + name;
    if (pkgs[at]) return at;
    if (!dir) return null;
    const i = dir.lastIndexOf("/node_modules/");
    dir = i < 0 ? "" : dir.slice(0, i);
  }
}

let added = 0;
for (const [loc, meta] of Object.entries(pkgs)) {
  const opt = meta.optionalDependencies || {};
  for (const [name, version] of Object.entries(opt)) {
    if (resolved(loc, name)) continue;
    const plat = platform(name);
    if (!plat) throw new Error(`${loc}: optional ${name} missing and not a platform package`);
    // Beside a sibling that was resolved (the same parent's other
    // optional platform packages), else under the parent itself.
    let dir = loc + "/node_modules/";
    for (const sib of Object.keys(opt)) {
      const at = resolved(loc, sib);
      if (at) { dir = at.slice(0, at.length - sib.length); break; }
    }
    pkgs[dir + name] = { version, optional: true, ...plat };
    added++;
  }
}
const sorted = {};
for (const k of Object.keys(pkgs).sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b, "en")))) sorted[k] = pkgs[k];
lock.packages = sorted;
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n");
console.log(`lock-platforms: ${added} platform entries added`);
