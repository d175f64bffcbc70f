/**
 * The V8 CPU profiles of a service's main thread read load by load: for each span that request-pairs.ts
 * wrote to phases.jsonl (BENCH_CPU_PROF), in whichever profile covers it, the self time of the busiest functions in µs per answered request,
 * side by side, and for the functions named in PROF_CALLERS the stacks that reached them.
 *
 *   npx tsx scripts/bench/profile-phases.ts <dir with the .cpuprofile files and phases.jsonl> [top=40]
 *
 * Env: PROF_CALLERS=name,name (the callers of these functions, 6 frames up, µs per request),
 * PROF_LOADS=b,s (which loads, in that order; default every load in the file).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
};
type Phase = { load: string; from: number; to: number; requests: number };

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 40);
// the main thread's (thread 0; the others are the module loader's)
const files = readdirSync(dir).filter((f) => /\.0\.\d+\.cpuprofile$/.test(f));
if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
const phases = readFileSync(path.join(dir, "phases.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as Phase);
const loads = process.env.PROF_LOADS?.split(",") ?? [
  ...new Set(phases.map((p) => p.load)),
];

const nameOf = (n: Node) => {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url
        .replace(/^.*node_modules\//, "")
        .replace(/^file:\/\/.*?\/(app|db|server|build)\//, "$1/")}:${
        f.lineNumber + 1
      }`
    : "";
  return `${f.functionName || "(anonymous)"} ${where}`.trim();
};

// µs of self time per function name, per load (summed over that load's spans), and the callers' stacks
const self = new Map<string, Map<string, number>>();
const callers = new Map<string, Map<string, number>>();
const watched = new Set(
  (process.env.PROF_CALLERS ?? "").split(",").filter(Boolean)
);
const busy = new Map<string, number>();
const requests = new Map<string, number>();
for (const p of phases)
  requests.set(p.load, (requests.get(p.load) ?? 0) + p.requests);

for (const file of files) {
  const prof = JSON.parse(
    readFileSync(path.join(dir, file), "utf8")
  ) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes)
    for (const c of n.children ?? []) parent.set(c, n.id);
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i];
    const dt = prof.timeDeltas[i + 1] ?? 0;
    const phase = phases.find((p) => t >= p.from && t < p.to);
    if (!phase) continue;
    const node = byId.get(prof.samples[i])!;
    const name = nameOf(node);
    const m = self.get(phase.load) ?? new Map<string, number>();
    self.set(phase.load, m);
    m.set(name, (m.get(name) ?? 0) + dt);
    if (name !== "(idle)" && name !== "(program)")
      busy.set(phase.load, (busy.get(phase.load) ?? 0) + dt);
    if (watched.has(node.callFrame.functionName)) {
      const stack: string[] = [];
      for (
        let id = parent.get(node.id), k = 0;
        id !== undefined && k < 6;
        id = parent.get(id), k++
      )
        stack.push(nameOf(byId.get(id)!));
      const key = `${node.callFrame.functionName} <- ${stack.join(" <- ")}`;
      const c = callers.get(phase.load) ?? new Map<string, number>();
      callers.set(phase.load, c);
      c.set(key, (c.get(key) ?? 0) + dt);
    }
  }
}

const per = (load: string, us: number) =>
  us / Math.max(1, requests.get(load) ?? 1);
const head = loads.map((l) => `${l} µs/req`).join(" | ");
console.log(
  `${files.length} profiles: ${loads
    .map(
      (l) =>
        `${l} ${requests.get(l)} requests, busy ${per(
          l,
          busy.get(l) ?? 0
        ).toFixed(1)} µs/req`
    )
    .join("; ")}`
);
console.log(`| function | ${head} |`);
const total = new Map<string, number>();
for (const l of loads)
  for (const [k, v] of self.get(l) ?? [])
    total.set(k, (total.get(k) ?? 0) + per(l, v));
for (const [name] of [...total].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(
    `| ${name} | ${loads
      .map((l) => per(l, self.get(l)?.get(name) ?? 0).toFixed(1))
      .join(" | ")} |`
  );
}
for (const l of loads) {
  const c = callers.get(l);
  if (!c) continue;
  console.log(`\ncallers in ${l}:`);
  for (const [k, v] of [...c].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`  ${per(l, v).toFixed(2)} µs/req  ${k}`);
}
