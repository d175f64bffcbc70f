import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { connect, createProject, freshDatabaseUrl, parseJsonText } from "../support/server.js";
import { spawnInstance, stopInstance, waitHealthy, type Instance } from "../support/instance.js";
import { healthState, MIN, playersExact, recount, sample, scriptBase, server, session } from "../support/health.js";

/**
 * Health counts stay exact with two app instances writing one server's reports at once, every
 * report sent twice (once to each instance, concurrently) and retried until answered 200, and the
 * database's connections terminated mid-request: the rollups equal a recount of the rows and the
 * figures the script implies.
 */

type Outcome = { status: number } | { error: string };

async function send(url: string, apiKey: string, body: unknown): Promise<Outcome> {
  try {
    const res = await fetch(`${url}/api/health`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) return { status: res.status, ...(parseJsonText(text) ?? {}) };
    return { status: 200 };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Sends until answered 200 (a 503 or a lost connection is retried with the same body). */
async function deliver(url: string, apiKey: string, body: unknown, tally: Record<string, number>) {
  for (;;) {
    const o = await send(url, apiKey, body);
    const k = "status" in o ? String(o.status) : "network";
    tally[k] = (tally[k] ?? 0) + 1;
    if ("status" in o && o.status === 200) return;
    if ("status" in o && o.status !== 503) throw new Error(`unexpected ${JSON.stringify(o)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const SERVERS = 24;
const MINUTES = 8;
const PLAYERS = 4;

/**
 * Server k (version "1" for even k, "2" for odd) reports once a minute for MINUTES minutes: a sample
 * with k % 5 + 1 players; players join at minute 0 and each ends at minute p + 2, the odd ones with
 * a client error; the server closes (ServerEmpty) in its last report.
 */
function reports(T: number, k: number) {
  const job = `job-${k}`;
  const version = k % 2 === 0 ? "1" : "2";
  const out: unknown[] = [];
  for (let m = 0; m < MINUTES; m++) {
    const last = m === MINUTES - 1;
    const sessions = [];
    for (let p = 0; p < PLAYERS; p++) {
      const end = p + 2;
      if (m === 0 || m === end || (last && end > m)) {
        const ended = m >= end || last;
        sessions.push(session(`${job}/${p}`, k * 10 + p, T, ended ? T + Math.min(end, m) * MIN : null, { server: 0, client: ended && p % 2 === 1 ? 1 : 0 }, "Unknown"));
      }
    }
    out.push({
      server: server(job, version, T, last ? { at: T + m * MIN, reason: "ServerEmpty" } : undefined),
      sessions,
      samples: [sample(T + m * MIN, (k % 5) + 1, 500 + k, 16)],
    });
  }
  return out;
}

describe("health ingest under two instances and connection loss", () => {
  let databaseUrl: string;
  let sql: Sql;
  let instances: Instance[] = [];

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    instances = [await spawnInstance(databaseUrl), await spawnInstance(databaseUrl)];
    await Promise.all(instances.map((i) => waitHealthy(i)));
    sql = connect(databaseUrl);
  });

  afterAll(async () => {
    await Promise.all(instances.map((i) => stopInstance(i)));
    await sql?.end();
  });

  it("every count is exact", async () => {
    const { apiKey, projectId } = await createProject(sql);
    const T = scriptBase();
    const database = new URL(databaseUrl).pathname.slice(1);
    const tally: Record<string, number> = {};
    let loading = true;
    const killer = (async () => {
      let rounds = 0;
      while (loading) {
        await new Promise((r) => setTimeout(r, 150));
        await sql`
          select pg_terminate_backend(pid) from pg_stat_activity
          where datname = ${database} and pid <> pg_backend_pid() and backend_type = 'client backend' and state = 'active'`;
        rounds++;
      }
      return rounds;
    })();
    // each server's reports in order, each sent to both instances at once (a retry racing the first try)
    await Promise.all(
      Array.from({ length: SERVERS }, async (_, k) => {
        for (const r of reports(T, k)) {
          await Promise.all(instances.map((i) => deliver(i.url, apiKey, r, tally)));
        }
      }),
    );
    loading = false;
    const rounds = await killer;
    console.info(`health faults: ${rounds} termination rounds, outcomes ${JSON.stringify(tally)}`);
    for (const i of instances) expect(i.child.exitCode, i.output()).toBeNull();

    const state = await healthState(sql, projectId);
    const nonZero = (rows: any[]) => rows.filter((r) => ["samples", "pm", "ss", "se", "so", "sa", "xs", "xe", "xf"].some((k) => r[k] !== 0));
    expect(nonZero(state.hours)).toEqual(nonZero(await recount(sql, projectId)));
    const playerCounts = await playersExact(sql, projectId);
    expect(playerCounts.counted).toEqual(playerCounts.recounted);
    const sum = (k: string, v: string) => state.hours.filter((h: any) => h.place_version === v).reduce((s: number, h: any) => s + h[k], 0);
    for (const v of ["1", "2"]) {
      const ks = Array.from({ length: SERVERS }, (_, k) => k).filter((k) => (k % 2 === 0 ? "1" : "2") === v);
      expect(sum("samples", v)).toBe(ks.length * MINUTES);
      expect(sum("pm", v)).toBe(ks.reduce((s, k) => s + ((k % 5) + 1) * MINUTES, 0));
      expect(sum("ss", v)).toBe(ks.length);
      expect(sum("se", v)).toBe(ks.length);
      expect(sum("sa", v)).toBe(0);
      expect(sum("xs", v)).toBe(ks.length * PLAYERS);
      expect(sum("xe", v)).toBe(ks.length * PLAYERS);
      expect(sum("xf", v)).toBe(ks.length * (PLAYERS / 2));
    }
    const minutes = state.minutes.reduce((s: number, m: any) => s + m.samples, 0);
    expect(minutes).toBe(SERVERS * MINUTES);
    const bins = state.hist.filter((h: any) => h.metric === 1).reduce((s: number, h: any) => s + h.n, 0);
    expect(bins).toBe(SERVERS * MINUTES);
    const players = state.players.reduce((t: any, p: any) => ({ s: t.s + p.s, e: t.e + p.e, r: t.r + p.r }), { s: 0, e: 0, r: 0 });
    expect(players).toEqual({ s: SERVERS * PLAYERS, e: SERVERS * PLAYERS, r: SERVERS * (PLAYERS / 2) });
  }, 300_000);
});
