// Runs OpenClaw's own ClawHub install/update/search code (from the oracle's openclaw
// package) against a registry, for tests/distribution/hub/test_real_clients.py.
// stdin: {"dist": "<openclaw>/dist", "op": "install"|"update"|"search", "workspaceDir",
//         "slug", "baseUrl", "version"?, "force"?, "query"? (search; "" = trending)}
// stdout: {"ok": true, "result": <what OpenClaw returned>} or {"ok": false, "error"}.
// The function is found by its export name in the bundle's chunks (their file names
// are hashed), as the oracle harness does.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

// OpenClaw 2026.9 declares Node >= 24; on older Node its dependencies need the ES2025
// Set methods. Define the ones missing (spec semantics for plain Sets) before importing.
const setMethods = {
  union(other) { const out = new Set(this); for (const v of other.keys()) out.add(v); return out; },
  intersection(other) { return new Set([...this].filter((v) => other.has(v))); },
  difference(other) { return new Set([...this].filter((v) => !other.has(v))); },
  symmetricDifference(other) {
    const out = new Set(this);
    for (const v of other.keys()) (this.has(v) ? out.delete(v) : out.add(v));
    return out;
  },
  isSubsetOf(other) { return [...this].every((v) => other.has(v)); },
  isSupersetOf(other) { for (const v of other.keys()) if (!this.has(v)) return false; return true; },
  isDisjointFrom(other) { return [...this].every((v) => !other.has(v)); },
};
for (const [name, impl] of Object.entries(setMethods)) {
  if (typeof Set.prototype[name] !== "function") {
    Object.defineProperty(Set.prototype, name, { value: impl, writable: true, configurable: true });
  }
}

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const wanted = {
  install: "installSkillFromClawHub",
  update: "updateSkillsFromClawHub",
  search: "searchClawHubSkills", // 2026.9 only: the function that drops rows it cannot install
}[input.op];

function findExport(dist, name) {
  const pattern = new RegExp(`\\b${name} as (\\w+)\\b`);
  for (const file of fs.readdirSync(dist).sort()) {
    if (!/\.(m?js)$/.test(file)) continue;
    const text = fs.readFileSync(path.join(dist, file), "utf8");
    if (!text.includes(`async function ${name}(`)) continue;
    const match = text.match(/export \{([^}]*)\}/g)?.map((m) => m.match(pattern)).find(Boolean);
    if (match) return { file: path.join(dist, file), alias: match[1] };
  }
  throw new Error(`${name} not found in ${dist}`);
}

const logs = [];
const logger = {
  info: (m) => logs.push(["info", String(m)]),
  warn: (m) => logs.push(["warn", String(m)]),
  error: (m) => logs.push(["error", String(m)]),
};

try {
  const found = findExport(input.dist, wanted);
  const mod = await import(pathToFileURL(found.file).href);
  const fn = mod[found.alias];
  const params = input.op === "search" ? { baseUrl: input.baseUrl, query: input.query, limit: 20 } : {
    workspaceDir: input.workspaceDir,
    slug: input.slug,
    baseUrl: input.baseUrl,
    logger,
    clawManaged: true,
    ...(input.version ? { version: input.version } : {}),
    ...(input.force ? { force: true } : {}),
  };
  const result = await fn(params);
  process.stdout.write(JSON.stringify({ ok: true, result, logs }));
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, error: String(error?.stack ?? error), logs }));
}
process.exit(0);
