import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSql } from "../../db/client.js";
import { isAnomaly, type Threshold } from "../../app/economy/thresholds.server.js";
import { getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { PROFILESTORE_MAP } from "../support/economy-maps.js";
import { call, projectWithRoles, signedInRoles, type RoleUsers } from "../support/team.js";

/**
 * Thresholds per currency: learned from the currency's own rises once it has enough of them,
 * overridden per project and currency through the Team API, and applied by the anomalies read.
 */
let app: TestApp;
let users: RoleUsers;
let projectId: string;
let apiKey: string;

const base = () => `/api/team/projects/${projectId}/economy-thresholds`;
const push = (players: { id: number; coins: number; gems: number }[]) =>
  postJson(app, "/api/economy/ingest", { players: players.map((p) => ({ user_id: p.id, profile: { Coins: p.coins, Gems: p.gems } })) }, apiKey);
const anomalies = (q = "") => getJson(app, `/api/v1/economy/anomalies${q}`, apiKey);
const overrides = () => app.sql`select currency, factor::text, min_amount::text, off from economy_threshold_overrides where project_id = ${projectId} order by currency`;

/** The method of docs/economy.md, in plain arithmetic: median and MAD of the logarithms, percentile_cont's interpolation. */
function expectedLearning(rises: [from: number, to: number][]) {
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    const at = p * (s.length - 1);
    const lo = Math.floor(at);
    return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (at - lo);
  };
  const logs = rises.map(([a, b]) => Math.log(b - a));
  const m = pct(logs, 0.5);
  const sigma = Math.max(1.4826 * pct(logs.map((x) => Math.abs(x - m)), 0.5), 0.5);
  const raw = Math.exp(m + 3 * sigma);
  const digits = Math.floor(Math.log10(raw)) - 1;
  const minAmount = Math.round(raw / 10 ** digits) * 10 ** digits;
  const factor = Math.min(5, Math.max(3, Math.round(Math.exp(pct(rises.filter(([a]) => a > 0).map(([a, b]) => Math.log(b / a)), 0.99)) * 100) / 100));
  return { factor, minAmount };
}

beforeAll(async () => {
  app = await startTestApp();
  users = await signedInRoles(app);
}, 60_000);
afterAll(() => app?.close());

/** 60 players, then each earns 11–70 gems (ordinary play), coins unchanged: 60 rises of gems, none of coins. */
const ordinary = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, coins: 500, gems: 100 }));
const earned = ordinary.map((p, i) => ({ ...p, gems: p.gems + 11 + i }));

beforeEach(async () => {
  ({ projectId, apiKey } = await projectWithRoles(app.sql, users));
  expect((await call(app, "PUT", `/api/team/projects/${projectId}/economy-map`, { cookie: users.owner.cookie, body: PROFILESTORE_MAP })).status).toBe(200);
  expect((await push(ordinary)).status).toBe(200);
  expect((await push(earned)).status).toBe(200);
});

describe("learned thresholds", () => {
  it("learns a currency with enough rises from them, and keeps the default for one without", async () => {
    const r = await call(app, "GET", base(), { cookie: users.member.cookie });
    expect(r.status).toBe(200);
    const [coins, gems] = r.body.currencies;
    const want = expectedLearning(earned.map((p) => [100, p.gems]));
    expect(gems).toMatchObject({
      key: "gems",
      name: "Gems",
      learned: { factor: want.factor, min_amount: String(want.minAmount), rises: 60, window_days: 30 },
      override: null,
      effective: { factor: want.factor, min_amount: String(want.minAmount), off: false, source: "learned" },
      rises: 60,
    });
    // coins never rose: the configured factor, and the median coins held (500) as the minimum
    expect(coins).toMatchObject({ key: "coins", learned: null, override: null, effective: { factor: 10, min_amount: "500", off: false, source: "default" }, rises: 0 });
  });

  it("the anomalies read finds a dupe under the learned threshold and not the ordinary rises", async () => {
    // player 1 dupes gems 111 -> 5,550 (50×); player 2 earns an ordinary 40 more
    expect((await push([{ id: 1, coins: 500, gems: 5_550 }, { id: 2, coins: 500, gems: 152 }])).status).toBe(200);
    const r = await anomalies();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ currency: "all", total: 1, thresholds: { gems: { source: "learned", off: false }, coins: { source: "default" } } });
    expect(r.body.data[0]).toMatchObject({ user_id: "1", currency: "gems", from_amount: "111", to_amount: "5550", threshold: { source: "learned" } });
    // the request's own figures apply to every currency for this request
    const loose = await anomalies("?factor=1.05&min_amount=0");
    expect(loose.body.thresholds.gems).toMatchObject({ factor: 1.05, min_amount: "0", source: "request" });
    expect(loose.body.total).toBe(62);
  });

  it("learns again once stale, once across concurrent reads, and never waits for a learning in progress", async () => {
    await call(app, "GET", base(), { cookie: users.member.cookie });
    const computedAt = async () =>
      (await app.sql<{ at: Date }[]>`select computed_at as at from economy_learned_thresholds where project_id = ${projectId} and currency = 'gems'`)[0].at.getTime();
    const first = await computedAt();
    await call(app, "GET", base(), { cookie: users.member.cookie });
    expect(await computedAt()).toBe(first); // fresh: read, not learned again

    // another session is learning gems right now (holds its lock): reads answer at once with the figures they have
    await app.sql`update economy_learned_thresholds set computed_at = now() - interval '2 hours', min_amount = 12345 where project_id = ${projectId}`;
    const other = createSql(app.databaseUrl, 1);
    try {
      const reserved = await other.reserve();
      await reserved`select pg_advisory_lock(hashtextextended('economy-thresholds:' || ${projectId}::text || ':gems', 0))`;
      const held = await call(app, "GET", base(), { cookie: users.member.cookie });
      expect(held.status).toBe(200);
      expect(held.body.currencies[1].effective).toMatchObject({ min_amount: "12345", source: "learned" });
      await reserved`select pg_advisory_unlock_all()`;
      reserved.release();
    } finally {
      await other.end();
    }
    // released: concurrent reads learn it again, one row, the learned figure back
    const replies = await Promise.all(Array.from({ length: 8 }, () => anomalies()));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const rows = await app.sql<{ min_amount: string; computed_at: Date }[]>`
      select min_amount::text, computed_at from economy_learned_thresholds where project_id = ${projectId} and currency = 'gems'`;
    expect(rows).toHaveLength(1);
    expect(rows[0].min_amount).toBe(String(expectedLearning(earned.map((p) => [100, p.gems])).minAmount));
    expect(rows[0].computed_at.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe("the learning's cost", () => {
  it("reads the currency's latest rises of the window from their index, newest first, and stops at the sample", async () => {
    await app.sql`vacuum analyze economy_rises`;
    const plan = await app.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(
        `explain select ln(amount - prev_amount) from economy_rises
         where project_id = $1 and currency = 'gems' and observed_at >= now() - make_interval(days => 30)
         order by observed_at desc limit 5000`,
        [projectId],
      );
    });
    const text = plan.map((r: any) => r["QUERY PLAN"]).join("\n");
    expect(text).toMatch(/Limit[\s\S]*Index Only Scan using economy_rises_recent/);
    expect(text).not.toMatch(/Sort/);
  });
});

describe("Team API: /economy-thresholds", () => {
  it("owners and admins override a currency; members read; DELETE goes back to learned", async () => {
    const member = await call(app, "PUT", `${base()}/gems`, { cookie: users.member.cookie, body: { factor: 4 } });
    expect(member.status).toBe(403);
    expect((await call(app, "GET", base(), { cookie: users.outsider.cookie })).status).toBe(404);
    expect(await overrides()).toEqual([]);

    const put = await call(app, "PUT", `${base()}/GEMS`, { cookie: users.admin.cookie, body: { min_amount: "2500.5" } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      key: "gems",
      override: { factor: null, min_amount: "2500.5", off: false },
      effective: { min_amount: "2500.5", off: false, source: "override" },
    });
    // the factor not set stays the learned one
    expect(put.body.effective.factor).toBe(put.body.learned.factor);
    expect(await overrides()).toEqual([{ currency: "gems", factor: null, min_amount: "2500.5", off: false }]);
    const listed = (await call(app, "GET", base(), { cookie: users.member.cookie })).body.currencies[1];
    expect(listed).toEqual(put.body);

    // a 2,000 rise is under the overridden minimum now
    await push([{ id: 1, coins: 500, gems: 2_111 }]);
    expect((await anomalies("?currency=gems")).body).toMatchObject({ total: 0, thresholds: { gems: { min_amount: "2500.5", source: "override" } } });
    await call(app, "PUT", `${base()}/gems`, { cookie: users.owner.cookie, body: { factor: 2, min_amount: 1_000 } });
    expect((await anomalies("?currency=gems")).body).toMatchObject({ total: 1, data: [{ user_id: "1", threshold: { factor: 2, min_amount: "1000", source: "override" } }] });

    const del = await call(app, "DELETE", `${base()}/gems`, { cookie: users.owner.cookie });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ override: null, effective: { source: "learned" } });
    expect(await overrides()).toEqual([]);
  });

  it("off leaves the currency out of every anomalies read", async () => {
    await push([{ id: 1, coins: 50_000, gems: 5_550 }]);
    expect((await anomalies()).body.data.map((a: any) => a.currency).sort()).toEqual(["coins", "gems"]);
    const off = await call(app, "PUT", `${base()}/coins`, { cookie: users.owner.cookie, body: { off: true } });
    expect(off.body.effective).toMatchObject({ off: true, source: "override" });
    const r = (await anomalies()).body;
    expect(r.data.map((a: any) => a.currency)).toEqual(["gems"]);
    expect(r.thresholds.coins).toMatchObject({ off: true, source: "override" });
    expect((await anomalies("?currency=coins&factor=2&min_amount=1")).body.total).toBe(0);
  });

  it("refuses bad input with a 400 naming each field, an unknown currency with a 404, and writes nothing", async () => {
    await call(app, "PUT", `${base()}/gems`, { cookie: users.owner.cookie, body: { factor: 4 } });
    const before = await overrides();
    const bad = await call(app, "PUT", `${base()}/gems`, { cookie: users.owner.cookie, body: { factor: 1, min_amount: -5, off: "yes", colour: "red" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_payload");
    expect(bad.body.details).toEqual([
      { path: "colour", message: "is not a field of a threshold (factor, min_amount, off)" },
      { path: "factor", message: "must be greater than 1" },
      { path: "min_amount", message: "must be at least 0" },
      { path: "off", message: "must be true or false" },
    ]);
    for (const body of [[], "x", null, { factor: "lots" }, { factor: 1e7 }, { min_amount: "1e999" }, { min_amount: {} }, { factor: Number.MAX_VALUE }]) {
      const r = await call(app, "PUT", `${base()}/gems`, { cookie: users.owner.cookie, body: JSON.stringify(body) });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(app, "PUT", `${base()}/diamonds`, { cookie: users.owner.cookie, body: { factor: 4 } })).status).toBe(404);
    expect((await call(app, "DELETE", `${base()}/diamonds`, { cookie: users.owner.cookie })).status).toBe(404);
    // CSRF: a mutation must be JSON from the same origin
    expect((await call(app, "PUT", `${base()}/gems`, { cookie: users.owner.cookie, body: "factor=9", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(415);
    expect(await overrides()).toEqual(before);
  });
});

describe("isAnomaly", () => {
  const t = (factor: number, minAmount: string): Threshold => ({ factor, minAmount, off: false, source: "learned" });
  it("compares decimal amounts exactly, past 2^53 and in fractions", () => {
    // 9007199254740993 is 2^53 + 1: as doubles both sides would read 9007199254740992
    expect(isAnomaly(t(1.5, "0"), "9007199254740992", "9007199254740993")).toBe(false);
    expect(isAnomaly(t(1.5, "0"), "6004799503160661", "9007199254740993")).toBe(true); // just over 1.5×
    expect(isAnomaly(t(1.5, "0"), "6004799503160662", "9007199254740993")).toBe(false); // exactly 1.5× is not more
    expect(isAnomaly(t(2, "0.1"), "0.1", "0.3")).toBe(true); // +0.2 (doubles: 0.30000000000000004)
    expect(isAnomaly(t(3, "0.1"), "0.1", "0.3")).toBe(false); // 3× exactly
    expect(isAnomaly(t(10, "100"), "0", "100")).toBe(false); // the minimum is exclusive
    expect(isAnomaly(t(10, "100"), "-5", "96")).toBe(true); // from debt, +101
    expect(isAnomaly(t(10, "99999999999999999999"), "1", "100000000000000000001")).toBe(true);
    expect(isAnomaly(t(10, "99999999999999999999"), "1", "100000000000000000000")).toBe(false);
    expect(isAnomaly({ ...t(2, "0"), off: true }, "1", "1000")).toBe(false);
    expect(isAnomaly(t(1e21, "0"), "1", "1000000000000000000001")).toBe(true); // a factor spelled with an exponent
  });
});
