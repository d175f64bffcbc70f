/**
 * The Luau SDK's own CPU: per captured occurrence and per flush of a 100-event batch, for the SDK in
 * this tree and for the SDK at a base revision, measured side by side in one run (`npm run bench:sdk`,
 * also the `sdk` scenario of `npm run bench`).
 *
 * Each version runs in a child process of its own (luau-web's memory is fixed per process, and two
 * versions' queues do not fit one), in a luau-web state on the test engine
 * (test/sdk/roblox-mock.luau), with HttpService answered at once in process (200, as the service
 * answers a stored batch), so what is measured is the SDK's work and the engine calls it makes, not
 * the network or the service. Rounds alternate between the two versions (base, this tree, base, …)
 * and each figure is the median of its rounds: CPU time of the child (user + system) while Luau
 * runs, which is where luau-web runs it.
 *
 * A round: 100 distinct errors each captured 20 times (2,000 captures: 100 queued events and 1,900
 * repeats folded into them, as an error storm is), then `Monitor.flush()`, which sends them as one
 * batch of 100 events; then 50 new breadcrumbs and 100 errors never seen before, each captured once
 * with that trail of 50 breadcrumbs (the costliest capture: a new event with a full trail), flushed
 * unmeasured.
 *
 * Env: BENCH_SDK_BASE (a git revision, default the SDK before loss reports), BENCH_SDK_ROUNDS (default 40).
 */
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { LuauState } from "luau-web";
import { bundleSdk, moduleName, SDK_VERSION, type SdkSources } from "../../app/sdk/bundle.js";
import { readSdkSources } from "../../app/sdk/sources.server.js";
import { envInt, fmt, logger, root, type Row } from "./harness.js";

/** The SDK as it was before it reported its losses to the service: the figure the change is held to. */
export const DEFAULT_SDK_BASE = "bffd041";
const DISTINCT = 100;
const REPEATS = 20;

const log = logger("bench-sdk");

/** The SDK's modules as they were at `rev`. */
function sourcesAt(rev: string): SdkSources {
  const dir = "sdk/roblox/src";
  const files = execFileSync("git", ["-C", root, "ls-tree", "--name-only", `${rev}:${dir}`], { encoding: "utf8" })
    .split("\n")
    .filter((f) => f.endsWith(".luau"));
  return Object.fromEntries(files.map((f) => [moduleName(f), execFileSync("git", ["-C", root, "show", `${rev}:${dir}/${f}`], { encoding: "utf8" })]));
}

type Step = "init" | "capture" | "flush" | "fresh";
type Sdk = { label: string; call: (step: Step, round?: number) => Promise<unknown>; requests: () => number; problems: string[] };

/** One version of the SDK initialized on the test engine, its requests answered 200 in process. */
async function loadSdk(label: string, sources: SdkSources): Promise<Sdk> {
  const problems: string[] = [];
  let requests = 0;
  const host = {
    epochMs: Date.now(),
    warn: (message: string) => void problems.push(`warning: ${message}`),
    print: () => undefined,
    threadError: (message: string) => void problems.push(`thread error: ${message}`),
    fireServer: () => undefined,
    request: async () => {
      requests += 1;
      return [true, 200, "OK", JSON.stringify({ "content-type": "application/json" }), '{"success":true,"accepted":100}'];
    },
  };
  const state = await LuauState.createAsync({ __host: host });
  const mockSource = readFileSync(path.join(root, "test/sdk/roblox-mock.luau"), "utf8");
  const [mock] = (await state.loadstring(mockSource, "=RobloxMock", true)()) as [any];
  mock.game.PlaceId = 1818;
  mock.game.PlaceVersion = 42;
  mock.game.JobId = "0b7c2a4e-5f6d-4e3b-9a1c-2d3e4f5a6b7c";
  const sdk = state.loadstring(bundleSdk(sources, SDK_VERSION), "=ReplicatedStorage.RobloxMonitor", true);
  await mock.bind(sdk, "ReplicatedStorage.RobloxMonitor", "ModuleScript");
  const [monitor] = (await sdk()) as [any];
  // the round's steps are loaded once: luau-web's heap is fixed, and each loaded script stays in it
  const chunk = state.loadstring(`local Monitor = ...\n${STEPS}`, "=ServerScriptService.Bench", true);
  await mock.bind(chunk, "ServerScriptService.Bench");
  const [steps] = (await chunk(monitor)) as [any];
  const call = async (step: Step, round = 0) => {
    const [result] = (await mock.spawn(steps[step], round)) as [any];
    for (let waited = 0; !result.done; waited += 0.1) {
      if (waited > 120) throw new Error(`${label}: Luau code still running after 120 simulated seconds`);
      await mock.advance(0.1);
    }
    return result.value;
  };
  // no timer flush during a round: the round flushes itself
  await call("init");
  return { label, call, requests: () => requests, problems };
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function measured(fn: () => Promise<unknown>): Promise<number> {
  const before = cpuMicros();
  await fn();
  return cpuMicros() - before;
}

// the steps of a round, as one script returning them; `fresh` takes the round number, which makes
// its errors and breadcrumbs new
const STEPS = `
local stack = "ServerScriptService.Combat:41: function damage\\nServerScriptService.Combat:88: function onHit\\n"
local steps = {}
function steps.init()
	-- rounds follow each other within seconds of simulated time: the whole request budget
	assert(Monitor.init({ url = "https://errors.example.com", apiKey = "rbx_bench", flushInterval = 3600, maxRequestsPerMinute = 400 }))
end
function steps.capture()
	for _ = 1, ${REPEATS} do
		for i = 1, ${DISTINCT} do
			Monitor.captureException("attempt to index nil with 'Health' (" .. i .. ")", stack, { weapon = "Sword", damage = 12 })
		end
	end
end
function steps.flush()
	assert(Monitor.flush(10), "flush left events behind")
end
function steps.fresh(round)
	for i = 1, 50 do
		Monitor.addBreadcrumb({ category = "shop", message = "round " .. round .. " bought item " .. i, data = { price = i } })
	end
	for i = 1, ${DISTINCT} do
		Monitor.captureException("round " .. round .. ": no spawn for wave " .. i, "ServerScriptService.Spawner:5: function spawn\\n")
	end
end
return steps`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

type Pair = { base: number; head: number };
export type SdkFigures = { base: string; capture: Pair; flush: Pair; newEvent: Pair };

/** A round in a child: the CPU (µs) each measured step took. */
type RoundCpu = { capture: number; flush: number; fresh: number };

/** The child side: loads one version (`BENCH_SDK_CHILD`: a revision, or "tree") and runs the rounds the parent asks for. */
async function child(version: string) {
  const sdk = await loadSdk(version, version === "tree" ? readSdkSources(root) : sourcesAt(version));
  process.on("message", async (round: number) => {
    try {
      const sent = sdk.requests();
      const capture = await measured(() => sdk.call("capture"));
      const flush = await measured(() => sdk.call("flush"));
      if (sdk.requests() - sent !== 1) throw new Error(`a round's 100 events went in ${sdk.requests() - sent} requests, not 1`);
      const fresh = await measured(() => sdk.call("fresh", round));
      await sdk.call("flush");
      if (sdk.problems.length) throw new Error(sdk.problems.slice(0, 3).join(" | "));
      process.send!({ capture, flush, fresh });
    } catch (err) {
      process.send!({ error: String(err) });
    }
  });
  process.send!({ ready: true });
}

/** A child process running one version of the SDK; `round(n)` runs a round there. */
async function spawnVersion(label: string, version: string) {
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_SDK_CHILD: version }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let waiting: { resolve: (value: any) => void; reject: (err: Error) => void } | undefined;
  proc.on("message", (message) => waiting?.resolve(message));
  proc.on("exit", (code) => waiting?.reject(new Error(`${label}: the bench process exited (${code})`)));
  const next = () => new Promise<any>((resolve, reject) => (waiting = { resolve, reject }));
  const ready = await next();
  if (!ready?.ready) throw new Error(`${label}: ${ready?.error ?? "did not start"}`);
  return {
    label,
    round: async (n: number): Promise<RoundCpu> => {
      const answer = next();
      proc.send(n);
      const cpu = await answer;
      if (cpu.error) throw new Error(`${label}: ${cpu.error}`);
      return cpu;
    },
    stop: () => proc.kill(),
  };
}

/** Per-capture and per-flush CPU (µs, medians) of the base SDK and this tree's, and the rows to print. */
export async function runSdkBench(base = process.env.BENCH_SDK_BASE ?? DEFAULT_SDK_BASE, rounds = envInt("BENCH_SDK_ROUNDS", 40)) {
  const versions = [await spawnVersion(`base ${base}`, base), await spawnVersion("this tree", "tree")];
  const capture: number[][] = [[], []];
  const flush: number[][] = [[], []];
  const fresh: number[][] = [[], []];
  try {
    // one unmeasured round each: the first calls compile and warm luau-web
    for (let round = -1; round < rounds; round++) {
      for (const [i, sdk] of versions.entries()) {
        const cpu = await sdk.round(round + 2);
        if (round < 0) continue;
        capture[i].push(cpu.capture / (DISTINCT * REPEATS));
        flush[i].push(cpu.flush);
        fresh[i].push(cpu.fresh / DISTINCT);
      }
    }
  } finally {
    for (const sdk of versions) sdk.stop();
  }
  const figures: SdkFigures = {
    base,
    capture: { base: median(capture[0]), head: median(capture[1]) },
    flush: { base: median(flush[0]), head: median(flush[1]) },
    newEvent: { base: median(fresh[0]), head: median(fresh[1]) },
  };
  const rows: Row[] = [
    {
      scenario: "(sdk) capture",
      figure: `${fmt(figures.capture.head, 1)} µs`,
      detail: `per captured occurrence (5% new events, 95% folded repeats); base ${base}: ${fmt(figures.capture.base, 1)} µs`,
      ratio: fmt(figures.capture.head / figures.capture.base, 2),
      target: "",
      result: "",
    },
    {
      scenario: "(sdk) new event",
      figure: `${fmt(figures.newEvent.head, 1)} µs`,
      detail: `per error never seen before, with a trail of 50 new breadcrumbs; base ${base}: ${fmt(figures.newEvent.base, 1)} µs`,
      ratio: fmt(figures.newEvent.head / figures.newEvent.base, 2),
      target: "",
      result: "",
    },
    {
      scenario: "(sdk) flush",
      figure: `${fmt(figures.flush.head, 0)} µs`,
      detail: `per flush of a 100-event batch; base ${base}: ${fmt(figures.flush.base, 0)} µs`,
      ratio: fmt(figures.flush.head / figures.flush.base, 2),
      target: "",
      result: "",
    },
  ];
  return { rows, results: { sdk: figures } };
}

if (process.env.BENCH_SDK_CHILD) {
  child(process.env.BENCH_SDK_CHILD).catch((err) => {
    process.send!({ error: String(err) });
    process.exit(1);
  });
} else if (import.meta.url === `file://${process.argv[1]}`) {
  runSdkBench().then(
    ({ rows }) => {
      for (const r of rows) log(`${r.scenario}: ${r.figure} (${r.detail}), ratio to base ${r.ratio}`);
      process.exit(0);
    },
    (err) => {
      console.error("bench crashed:", err);
      process.exit(1);
    },
  );
}
