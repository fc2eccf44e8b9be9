// pi's skill loader as a benchmark peer: loadSkills + formatSkillsForPrompt of
// @mariozechner/pi-coding-agent, timed in-process (its import is not in opMs).
// stdin: {"module": "<path to the package's dist/index.js>", "skillPaths": [...],
//         "cwd": "...", "agentDir": "...", "repeat": N}
// stdout: {"ok": true, "importMs": ..., "runs": [{"opMs", "skills", "promptChars"}], "prompt": "..."}
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const request = JSON.parse(readFileSync(0, "utf8"));
const started = performance.now();
const pi = await import(pathToFileURL(request.module).href);
const importMs = performance.now() - started;
const runs = [];
let prompt = "";
for (let i = 0; i < (request.repeat || 1); i++) {
  const t0 = performance.now();
  const { skills, diagnostics } = pi.loadSkills({
    cwd: request.cwd,
    agentDir: request.agentDir,
    skillPaths: request.skillPaths,
    includeDefaults: false,
  });
  prompt = pi.formatSkillsForPrompt(skills);
  runs.push({
    opMs: performance.now() - t0,
    skills: skills.length,
    diagnostics: diagnostics.length,
    promptChars: prompt.length,
  });
}
process.stdout.write(JSON.stringify({ ok: true, importMs, runs, node: process.version }));
