/**
 * The currency-map preview at its worst: 20 currencies of `*` over a pasted profile of 100,000 keys
 * (about 1 MB), through the settings page's form and through the Team API. For each: the time to
 * answer, the answer's size, the server's peak RSS, and the latency of `GET /api/ready` asked every
 * 50 ms meanwhile (what every other request waits). Also a push of 100 such profiles through a map of
 * `*` paths. Run after `npx remix vite:build`:
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/bench/preview.ts
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fmt, freshDatabase, logger, root, serviceEnv, sleep, startService, stopService } from "./harness.js";

const log = logger("preview");
const workDir = path.join(os.tmpdir(), `rbx-preview-${process.pid}`);
const db = await freshDatabase({ workDir, name: `bench_preview_${process.pid}`, keep: false, log });
const tsx = path.join(root, "node_modules/.bin/tsx");
const cli = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(tsx, ["scripts/cli.ts", ...args], { cwd: root, env: serviceEnv(db.url, workDir) });
  return JSON.parse(stdout.trim().split("\n").pop()!);
};

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);

/** Runs `fn` while asking /api/ready every 50 ms and sampling the server's RSS. */
async function measured(url: string, pid: number, name: string, fn: () => Promise<{ status: number; bytes: number }>) {
  const before = rssKb(pid);
  let peak = before;
  const waits: number[] = [];
  let done = false;
  let failures = 0;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, rssKb(pid));
      await sleep(20);
    }
  })();
  const poller = (async () => {
    while (!done) {
      const t = performance.now();
      // a connection the server reset while it was blocked counts as a wait as long as it took
      const ok = await fetch(`${url}/api/ready`).then((r) => r.text().then(() => r.ok), () => false);
      waits.push(performance.now() - t);
      if (!ok) failures++;
      await sleep(50);
    }
  })();
  const t = performance.now();
  const r = await fn().catch((err) => ({ status: 0, bytes: 0, error: String(err) }));
  const ms = performance.now() - t;
  done = true;
  if ("error" in r) log(`${name}: failed: ${r.error}`);
  await Promise.all([sampler, poller]);
  waits.sort((a, b) => a - b);
  log(
    `${name}: ${r.status} in ${fmt(ms)} ms, answer ${fmt(r.bytes / 1024)} KB, RSS ${fmt(before / 1024)} -> ${fmt(peak / 1024)} MB, ` +
      `/api/ready meanwhile: ${waits.length} asked, p50 ${fmt(waits[Math.floor(waits.length / 2)] ?? NaN, 1)} ms, max ${fmt(waits.at(-1) ?? NaN, 1)} ms, ${failures} failed`,
  );
}

const { url, child } = await startService(db.url, { workDir, log, jobs: false, logFile: path.join(os.tmpdir(), `rbx-preview-${process.pid}.log`) });
try {
  const email = "owner@example.test";
  const password = "preview bench password 42";
  await cli("user:create", "--email", email, "--password", password);
  const { project_id: projectId, api_key: apiKey } = await cli("project:create", "--name", "Preview", "--owner", email);
  const login = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0];

  const profile: Record<string, number> = {};
  for (let i = 0; i < 100_000; i++) profile[i.toString(36)] = i % 10;
  const profileText = JSON.stringify(profile);
  const currencies = Array.from({ length: 20 }, (_, i) => ({ key: `c${i}`, name: `C${i}`, paths: ["*"] }));
  log(`profile: ${fmt(profileText.length / 1024)} KB, 100,000 keys; map: 20 currencies of *`);

  const form = new URLSearchParams({ intent: "preview-map", names: "", data_code: "", match: "", profile: profileText });
  currencies.forEach((c, i) => {
    form.set(`currencies[${i}].key`, c.key);
    form.set(`currencies[${i}].name`, c.name);
    form.set(`currencies[${i}].paths`, c.paths.join("\n"));
  });
  const page = async (suffix: string) => {
    const res = await fetch(`${url}/projects/${projectId}/economy/settings${suffix}`, {
      method: "POST",
      headers: { cookie, origin: url, "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    });
    return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
  };
  const team = async () => {
    const res = await fetch(`${url}/api/team/projects/${projectId}/economy-map/preview`, {
      method: "POST",
      headers: { cookie, origin: url, "content-type": "application/json" },
      body: JSON.stringify({ map: { currencies }, profile }),
    });
    return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
  };
  await measured(url, child.pid!, "page form (document POST)", () => page(""));
  await measured(url, child.pid!, "page form (fetch, .data)", () => page(".data"));
  await measured(url, child.pid!, "Team API preview", team);

  // the push path: the same map saved, 100 players of a 80 KB profile each (8,000 keys)
  const put = await fetch(`${url}/api/team/projects/${projectId}/economy-map`, {
    method: "PUT",
    headers: { cookie, origin: url, "content-type": "application/json" },
    body: JSON.stringify({ currencies: currencies.map((c) => ({ ...c, paths: ["*", "*.*", "[*]"] })) }),
  });
  if (put.status !== 200) throw new Error(`map not saved: ${put.status}`);
  const small: Record<string, number> = {};
  for (let i = 0; i < 8_000; i++) small[i.toString(36)] = i % 10;
  const players = Array.from({ length: 100 }, (_, i) => ({ user_id: i + 1, profile: small }));
  const pushBody = JSON.stringify({ players });
  log(`push: ${fmt(pushBody.length / 1024)} KB, 100 players of 8,000 keys; map: 20 currencies of *, *.*, [*]`);
  await measured(url, child.pid!, "push of 100 players", async () => {
    const res = await fetch(`${url}/api/economy/ingest`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body: pushBody });
    const text = await res.text();
    log(`push answer: ${text.slice(0, 300)}`);
    return { status: res.status, bytes: text.length };
  });
} finally {
  await stopService(child);
  await db.drop();
}
