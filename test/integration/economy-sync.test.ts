import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openKey } from "../../app/economy/crypto.server.js";
import { startFakeOpenCloud, type FakeEntry, type FakeOpenCloud } from "../support/fake-open-cloud.js";
import { postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";

const APP_SECRET = "economy-sync-test-app-secret-0123456789";
const INTERNAL = "economy-sync-internal-key-0123456789";

let app: TestApp;
let fake: FakeOpenCloud;
let projectId: string;
let apiKey: string;
const cookies: Record<"owner" | "admin" | "member" | "outsider", string> = {} as never;

const profile = (cash: number, bank = 0) => ({ RPCharacterOne: { Name: "Scanned", Cash: cash, InATM: bank, DarkCoin: 0 } });
const internal = { "x-internal-key": INTERNAL };
const status = async () => (await call(app, "GET", `/api/economy/sync?project_id=${projectId}`, { headers: internal })).body;
const keyBody = (over: Record<string, unknown> = {}) => ({
  project_id: projectId,
  api_key: fake.apiKey,
  universe_id: fake.universeId,
  datastore_name: fake.datastoreName,
  ...over,
});

async function waitFor(pred: (s: any) => boolean, ms = 60_000) {
  const until = Date.now() + ms;
  for (;;) {
    const s = await status();
    if (pred(s)) return s;
    if (Date.now() > until) throw new Error(`timed out; last status ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  const entries: FakeEntry[] = [
    { id: "____PS", value: "probe" },
    { id: "Player_1", value: profile(100, 5), revisionCreateTime: "2026-11-01T00:00:00.000Z" },
    { id: "2", value: { Data: profile(200), MetaData: { LastUpdate: 1, SessionLoadCount: 2 } }, revisionCreateTime: "2026-11-01T00:00:00.000Z" },
    { id: "Player_3", value: { Settings: {} } },
    { id: "GlobalConfig", value: { motd: "hi" } },
    // 4 was pushed after this revision: the push stays. 5's snapshot is older: the scan replaces it.
    { id: "Player_4", value: profile(999), revisionCreateTime: "2026-01-01T00:00:00.000Z" },
    { id: "Player_5", value: profile(50), revisionCreateTime: "2026-11-01T00:00:00.000Z" },
  ];
  for (let i = 10; i < 40; i++) entries.push({ id: `Player_${i}`, value: profile(i), revisionCreateTime: "2026-11-01T00:00:00.000Z" });
  fake = await startFakeOpenCloud({ entries });
  app = await startTestApp({
    JOBS_ENABLED: "true",
    OPEN_CLOUD_BASE_URL: fake.url,
    OPEN_CLOUD_REQUESTS_PER_MINUTE: "60000",
    APP_SECRET,
    NOTIFICATION_SECRET: INTERNAL,
  });
  const users = {
    owner: await makeUser(app.sql),
    admin: await makeUser(app.sql),
    member: await makeUser(app.sql),
    outsider: await makeUser(app.sql),
  };
  ({ projectId, apiKey } = await makeProject(app.sql, users.owner.id, [
    { userId: users.admin.id, role: "admin" },
    { userId: users.member.id, role: "member" },
  ]));
  await makeProject(app.sql, users.outsider.id);
  for (const who of Object.keys(users) as (keyof typeof users)[]) cookies[who] = await login(app, users[who].email);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

describe("/api/economy/key", () => {
  it("needs a session, and an owner or admin of the project", async () => {
    expect((await call(app, "PUT", "/api/economy/key", { body: keyBody() })).status).toBe(401);
    expect((await call(app, "PUT", "/api/economy/key", { body: keyBody(), headers: internal })).status).toBe(401);
    expect((await call(app, "PUT", "/api/economy/key", { body: keyBody(), cookie: cookies.member })).status).toBe(403);
    expect((await call(app, "PUT", "/api/economy/key", { body: keyBody(), cookie: cookies.outsider })).status).toBe(404);
    expect((await call(app, "GET", `/api/economy/key?project_id=${projectId}`, { cookie: cookies.member })).status).toBe(403);
    expect((await call(app, "GET", `/api/economy/key?project_id=${projectId}`, { cookie: cookies.admin })).body.configured).toBe(false);
  });

  it("validates the body", async () => {
    for (const body of [keyBody({ universe_id: "abc" }), keyBody({ datastore_name: "" }), keyBody({ api_key: undefined })]) {
      const r = await call(app, "PUT", "/api/economy/key", { body, cookie: cookies.owner });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
    }
  });

  it("stores the key encrypted and never returns it", async () => {
    const put = await call(app, "PUT", "/api/economy/key", { body: keyBody({ api_key: "wrong-key-abcd" }), cookie: cookies.admin });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ configured: true, universe_id: fake.universeId, datastore_name: "PlayerData", key_last4: "abcd", scope: "global" });
    const get = await call(app, "GET", `/api/economy/key?project_id=${projectId}`, { cookie: cookies.owner });
    expect(get.body).toEqual({ ...put.body });
    expect(JSON.stringify(get.body)).not.toContain("wrong-key");
    const [row] = await app.sql`select key_ciphertext, key_iv, key_tag from economy_open_cloud_keys where project_id = ${projectId}`;
    expect(Buffer.from(row.key_ciphertext).toString("latin1")).not.toContain("wrong-key");
    expect(openKey(APP_SECRET, projectId, { ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag })).toBe("wrong-key-abcd");
    expect(() => openKey("another-secret-another-secret-0123456", projectId, { ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag })).toThrow();
  });
});

describe("/api/economy/sync", () => {
  it("refuses a bad internal key and a member session", async () => {
    const bad = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: { "x-internal-key": "nope" } });
    expect(bad.status).toBe(401);
    const member = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, cookie: cookies.member });
    expect(member.status).toBe(403);
    expect((await call(app, "GET", `/api/economy/sync?project_id=${projectId}`)).status).toBe(401);
    // credentials are checked before the body is read
    expect((await call(app, "POST", "/api/economy/sync", { body: "{not json" })).status).toBe(401);
    expect((await call(app, "PUT", "/api/economy/key", { body: "{not json" })).status).toBe(401);
    expect((await status()).state).toBe("idle");
  });

  it("ends in a clear failed state on 401 from Open Cloud", async () => {
    const r = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: internal });
    expect(r.status).toBe(202);
    expect(r.body.job_id).toMatch(/^[0-9a-f-]{36}$/);
    const s = await waitFor((s) => s.state === "failed");
    expect(s.error).toMatch(/401 Invalid API Key/);
    expect(s.finished_at).not.toBeNull();
  });

  it("ends in a clear failed state on 403 from Open Cloud", async () => {
    await call(app, "PUT", "/api/economy/key", { body: keyBody(), cookie: cookies.owner });
    fake.forbid = true;
    try {
      expect((await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, cookie: cookies.owner })).status).toBe(202);
      const s = await waitFor((s) => s.state === "failed");
      expect(s.error).toMatch(/403 PERMISSION_DENIED/);
    } finally {
      fake.forbid = false;
    }
  });

  it("scans: skips, unwraps, newer revision wins, push wins, 429 and 5xx retried, 409 while running", async () => {
    await app.sql`
      insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, observed_at, source, revision_time)
      values (${projectId}, 5, 1, 1, 1, '2026-06-01T00:00:00Z', 'scan', '2026-06-01T00:00:00Z')`;
    const pushed = await postJson(app, "/api/economy/ingest", { players: [{ user_id: 4, profile: profile(7) }] }, apiKey);
    expect(pushed.body.stored).toBe(1);
    const before = fake.arrivals.length;
    fake.inject(503, before + 3);
    fake.inject(429, before + 6, { "x-ratelimit-reset": "1" });
    const r = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, cookie: cookies.admin });
    expect(r.status).toBe(202);
    const again = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: internal });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("conflict");
    const s = await waitFor((s) => s.state !== "queued" && s.state !== "running");
    expect(s).toMatchObject({ state: "succeeded", job_id: r.body.job_id, scanned: 37, stored: 33, skipped: 4, failed: 0, error: null });
    expect(fake.log.filter((l) => l.status === 429 || l.status === 503)).toHaveLength(2);
    expect(fake.log.some((l) => /maxPageSize=256/.test(l.path))).toBe(true);

    const snaps = await app.sql<{ user_id: string; cash: string; source: string }[]>`
      select user_id::text, cash::text, source from economy_snapshots where project_id = ${projectId} order by user_id`;
    expect(snaps).toHaveLength(34);
    const by = Object.fromEntries(snaps.map((s) => [s.user_id, s]));
    expect(by["1"]).toMatchObject({ cash: "100", source: "scan" });
    expect(by["2"]).toMatchObject({ cash: "200", source: "scan" });
    expect(by["3"]).toBeUndefined();
    expect(by["4"]).toMatchObject({ cash: "7", source: "push" });
    expect(by["5"]).toMatchObject({ cash: "50", source: "scan" });
    const hist = await app.sql`select total::text, source from economy_history where project_id = ${projectId} and user_id = 5 order by id`;
    expect(hist).toEqual([{ total: "50", source: "scan" }]);
  });

  it("starts over after a finished scan, and a second scan changes nothing it already saw", async () => {
    const r = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: internal });
    expect(r.status).toBe(202);
    const s = await waitFor((s) => s.state === "succeeded" && s.job_id === r.body.job_id);
    // same revisions as before: none is newer than its snapshot
    expect(s).toMatchObject({ scanned: 37, stored: 0, skipped: 37 });
  });

  it("resumes a failed scan from its cursor, and starts over on restart: true", async () => {
    const big = await startFakeOpenCloud({
      entries: Array.from({ length: 600 }, (_, i) => ({ id: `Player_${5000 + i}`, value: profile(i), revisionCreateTime: "2026-11-02T00:00:00.000Z" })),
    });
    const owner = await makeUser(app.sql);
    const p = await makeProject(app.sql, owner.id, [], "Resume Game");
    const cookie = await login(app, owner.email);
    const st = async () => (await call(app, "GET", `/api/economy/sync?project_id=${p.projectId}`, { headers: internal })).body;
    const until = async (pred: (s: any) => boolean) => {
      for (let i = 0; i < 600; i++) {
        const s = await st();
        if (pred(s)) return s;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("timed out");
    };
    try {
      // the scan reads through this fake; the key row points at it by base URL only through config,
      // so swap the shared fake's store for the duration: same universe and data store names
      const saved = new Map(fake.entries);
      fake.entries.clear();
      for (const [k, v] of big.entries) fake.entries.set(k, v);
      try {
        await call(app, "PUT", "/api/economy/key", { body: { ...keyBody(), project_id: p.projectId }, cookie });
        // list page 1 + 256 reads + list page 2, then a 403 in the middle of page 2's reads
        fake.inject(403, fake.arrivals.length + 300);
        await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId }, headers: internal });
        const failed = await until((s) => s.state === "failed");
        expect(failed).toMatchObject({ scanned: 256, stored: 256 });
        expect(failed.error).toMatch(/403/);
        const [row] = await app.sql`select cursor from economy_sync where project_id = ${p.projectId}`;
        expect(row.cursor).not.toBeNull();

        const before = fake.arrivals.length;
        await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId }, headers: internal });
        const done = await until((s) => s.state === "succeeded");
        expect(done).toMatchObject({ scanned: 600, stored: 600, skipped: 0, failed: 0, error: null });
        // resumed at page 2 of 3: two lists + 344 reads, not the whole store again
        expect(fake.arrivals.length - before).toBe(2 + 344);

        await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId, restart: true }, headers: internal });
        const again = await until((s) => s.state === "succeeded" && s.scanned === 600 && s.stored === 0);
        expect(again).toMatchObject({ skipped: 600 });
      } finally {
        fake.entries.clear();
        for (const [k, v] of saved) fake.entries.set(k, v);
      }
    } finally {
      await big.close();
    }
  });

  it("skips a scanned player whose name PostgreSQL cannot store (NUL, lone surrogate); the rest of the page is stored", async () => {
    const owner = await makeUser(app.sql);
    const p = await makeProject(app.sql, owner.id, [], "Hostile Names Game");
    const cookie = await login(app, owner.email);
    const at = "2026-11-03T00:00:00.000Z";
    const named = (name: string, cash: number) => ({ RPCharacterOne: { Name: name, Cash: cash } });
    const saved = new Map(fake.entries);
    fake.entries.clear();
    for (const e of [
      { id: "Player_7001", value: named("Fine Name", 1), revisionCreateTime: at },
      { id: "Player_7002", value: named("Bad\u0000Name", 2), revisionCreateTime: at },
      { id: "Player_7003", value: named("Half\ud800", 3), revisionCreateTime: at },
    ]) fake.entries.set(e.id, e);
    try {
      await call(app, "PUT", "/api/economy/key", { body: { ...keyBody(), project_id: p.projectId }, cookie });
      const r = await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId }, headers: internal });
      expect(r.status).toBe(202);
      let s: any;
      for (let i = 0; i < 600; i++) {
        s = (await call(app, "GET", `/api/economy/sync?project_id=${p.projectId}`, { headers: internal })).body;
        if (s.state === "succeeded" || s.state === "failed") break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(s).toMatchObject({ state: "succeeded", scanned: 3, stored: 1, skipped: 2, failed: 0 });
      const rows = await app.sql`select user_id::text from economy_snapshots where project_id = ${p.projectId}`;
      expect(rows.map((r) => r.user_id)).toEqual(["7001"]);
    } finally {
      fake.entries.clear();
      for (const [k, v] of saved) fake.entries.set(k, v);
    }
  });

  it("reads scanned entries through the project's currency map: balances, skipped values, players the map does not match", async () => {
    const owner = await makeUser(app.sql);
    const p = await makeProject(app.sql, owner.id, [], "Gem Game");
    const cookie = await login(app, owner.email);
    const map = { currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }, { key: "gems", name: "Gems", paths: ["Slots[*].Gems"] }], match: ["Slots[*]"] };
    expect((await call(app, "PUT", `/api/team/projects/${p.projectId}/economy-map`, { body: map, cookie })).status).toBe(200);
    const at = "2026-11-04T00:00:00.000Z";
    const saved = new Map(fake.entries);
    fake.entries.clear();
    for (const e of [
      { id: "Player_8001", value: { Data: { Coins: 10, Slots: [{ Gems: 3 }, { Gems: 4 }] }, MetaData: { LastUpdate: 1 } }, revisionCreateTime: at },
      { id: "Player_8002", value: { Coins: "NaN", Slots: [{ Gems: 1e20 }] }, revisionCreateTime: at },
      { id: "Player_8003", value: profile(500), revisionCreateTime: at },
    ]) fake.entries.set(e.id, e);
    try {
      await call(app, "PUT", "/api/economy/key", { body: { ...keyBody(), project_id: p.projectId }, cookie });
      expect((await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId }, headers: internal })).status).toBe(202);
      let s: any;
      for (let i = 0; i < 600; i++) {
        s = (await call(app, "GET", `/api/economy/sync?project_id=${p.projectId}`, { headers: internal })).body;
        if (s.state === "succeeded" || s.state === "failed") break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // 8003 has the seed's layout, which this map does not match: skipped, not stored as zeros
      expect(s).toMatchObject({ state: "succeeded", scanned: 3, stored: 2, skipped: 1, failed: 0 });
      const rows = await app.sql`
        select user_id::text, balances, total::text, cash::text, skipped_values, skipped_count, source
        from economy_snapshots where project_id = ${p.projectId} order by user_id`;
      expect(rows).toEqual([
        { user_id: "8001", balances: { coins: "10", gems: "7" }, total: "17", cash: "0", skipped_values: null, skipped_count: 0, source: "scan" },
        {
          user_id: "8002",
          balances: { coins: "0", gems: "100000000000000000000" },
          total: "100000000000000000000",
          cash: "0",
          skipped_values: [{ currency: "coins", path: "Coins", reason: "is NaN" }],
          skipped_count: 1,
          source: "scan",
        },
      ]);
      const hist = await app.sql`select user_id::text, balances from economy_history where project_id = ${p.projectId} order by user_id`;
      expect(hist.map((h) => h.balances)).toEqual([{ coins: "10", gems: "7" }, { coins: "0", gems: "100000000000000000000" }]);
    } finally {
      fake.entries.clear();
      for (const [k, v] of saved) fake.entries.set(k, v);
    }
  });

  it("lets a new scan replace one whose process died (no progress for 30 minutes)", async () => {
    const owner = await makeUser(app.sql);
    const p = await makeProject(app.sql, owner.id, [], "Crashed Game");
    const cookie = await login(app, owner.email);
    await call(app, "PUT", "/api/economy/key", { body: { ...keyBody(), project_id: p.projectId }, cookie });
    await app.sql`
      insert into economy_sync (project_id, scan_id, state, cursor, updated_at)
      values (${p.projectId}, gen_random_uuid(), 'running', 'tok', now() - interval '10 minutes')`;
    expect((await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId }, headers: internal })).status).toBe(409);
    await app.sql`update economy_sync set updated_at = now() - interval '31 minutes' where project_id = ${p.projectId}`;
    // it resumes from the dead scan's cursor: this one is not a token Open Cloud issued, so it fails clearly
    const resumed = await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId }, headers: internal });
    expect(resumed.status).toBe(202);
    for (let i = 0; ; i++) {
      const s = (await call(app, "GET", `/api/economy/sync?project_id=${p.projectId}`, { headers: internal })).body;
      if (s.state === "failed") {
        expect(s.error).toMatch(/400 INVALID_ARGUMENT/);
        break;
      }
      if (i > 300) throw new Error("scan did not fail");
      await new Promise((res) => setTimeout(res, 100));
    }
    const r = await call(app, "POST", "/api/economy/sync", { body: { project_id: p.projectId, restart: true }, headers: internal });
    expect(r.status).toBe(202);
    for (let i = 0; i < 300; i++) {
      const s = (await call(app, "GET", `/api/economy/sync?project_id=${p.projectId}`, { headers: internal })).body;
      if (s.state === "succeeded") {
        expect(s).toMatchObject({ job_id: r.body.job_id, scanned: 37 });
        return;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error("scan did not finish");
  });

  it("answers 409 when no key is configured, and 404 for an unknown project", async () => {
    const del = await call(app, "DELETE", `/api/economy/key?project_id=${projectId}`, { cookie: cookies.owner });
    expect(del.body).toEqual({ deleted: true });
    expect((await call(app, "GET", `/api/economy/key?project_id=${projectId}`, { cookie: cookies.owner })).body.configured).toBe(false);
    expect((await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: internal })).status).toBe(409);
    const unknown = await call(app, "POST", "/api/economy/sync", { body: { project_id: "00000000-0000-4000-8000-000000000000" }, headers: internal });
    expect(unknown.status).toBe(404);
  });
});
