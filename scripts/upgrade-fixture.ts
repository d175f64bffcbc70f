/**
 * Makes the upgrade test's fixture (test/integration/upgrade.test.ts): a database populated through
 * the real API by this release, dumped as plain SQL, and what the API answered then.
 *
 *   DATABASE_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/upgrade-fixture.ts
 *
 * Run it when a release ships (after `npm run build`): the next releases' migrations are then tested
 * against the data this one left. It writes test/fixtures/upgrade/<last migration>.sql.gz and .json.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { openDatabase } from "../db/connect.js";
import { loadConfig } from "../app/env.server.js";
import { createUser } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { startServer } from "../server.js";

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), "..");
const OUT = path.join(ROOT, "test/fixtures/upgrade");
const admin = process.env.DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const last = readdirSync(path.join(ROOT, "db/migrations")).filter((f) => f.endsWith(".sql")).sort().at(-1)!.replace(/\.sql$/, "");

const name = `upgrade_fixture_${randomBytes(4).toString("hex")}`;
const root = postgres(admin, { max: 1, onnotice: () => {} });
await root.unsafe(`create database ${name}`);
const url = new URL(admin);
url.pathname = `/${name}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), "upgrade-fixture-"));
const config = loadConfig({
  NODE_ENV: "production",
  DATABASE_URL: url.toString(),
  PORT: "0",
  HOST: "127.0.0.1",
  DATA_DIR: dataDir,
  JOBS_ENABLED: "false",
  WEBHOOK_ALLOW_PRIVATE: "true",
});
const database = await openDatabase({ databaseUrl: url.toString(), dataDir, embeddedPort: 0, poolSize: 4, timeoutMs: 10_000 });
const server = await startServer(config, { database });
const sql = database.sql;

async function api(method: string, pathname: string, opts: { key?: string; cookie?: string; body?: unknown } = {}) {
  const res = await fetch(server.url + pathname, {
    method,
    headers: {
      ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(opts.key ? { "x-api-key": opts.key } : {}),
      ...(opts.cookie ? { cookie: opts.cookie, origin: server.url } : {}),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

const email = "owner@upgrade.example";
const password = "correct horse battery staple 7";
const owner = await createUser(sql, { email, password });
const { project, api_key: apiKey } = await createProject(sql, { id: owner.id, email }, { name: "Upgrade Game" });
const login = await api("POST", "/api/auth/login", { body: { email, password } });
const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0];
const P = `/api/team/projects/${project.id}`;

// issues: three errors with known counts, players, versions and environments
const errors = [
  ...Array.from({ length: 5 }, (_, i) => ({ message: "ServerScriptService.Combat:120: attempt to index nil with 'Humanoid'", level: "error", user_id: 100 + i, game_version: "41", environment: "production" })),
  ...Array.from({ length: 3 }, (_, i) => ({ message: "ServerScriptService.Shop:42: Price is not a number", level: "error", user_id: 200 + (i % 2), game_version: "42", environment: "production" })),
  { message: "Workspace.Door:9: door stuck", level: "warn", user_id: 300, game_version: "42", environment: "staging" },
];
await api("POST", "/api/ingest", { key: apiKey, body: { errors } });
// economy: two players through the default map (the seed's layout)
await api("POST", "/api/economy/ingest", {
  key: apiKey,
  body: {
    players: [
      { user_id: 1001, username: "ana", profile: { RPCharacterOne: { Name: "Ana", Cash: 120, InATM: 5000 }, DataCode: 4 } },
      { user_id: 1002, username: "bo", profile: { RPCharacterOne: { Name: "Bo", Cash: 7, InATM: 30 }, DataCode: 4 } },
    ],
  },
});
// release health: one server with two sessions and a sample
const t = Date.now() - 30 * 60_000;
await api("POST", "/api/health", {
  key: apiKey,
  body: {
    server: { job_id: "job-upgrade", place_version: "42", started_at: new Date(t).toISOString() },
    sessions: [
      { id: "job-upgrade/1", user_id: "1001", started_at: new Date(t + 60_000).toISOString(), ended_at: new Date(t + 600_000).toISOString(), exit_reason: "Unknown" },
      { id: "job-upgrade/2", user_id: "1002", started_at: new Date(t + 60_000).toISOString() },
    ],
    samples: [{ at: new Date(t + 120_000).toISOString(), players: 2, memory_mb: 900, heartbeat_ms: 16 }],
  },
});
// the team's settings: a key, a DSN key, a channel and a rule, a share link, a member
const groups = (await api("GET", "/api/v1/errors?grouped=true&sort=count&limit=100", { key: apiKey })).body.data as { id: string; message: string }[];
const shop = groups.find((g) => g.message.includes("Shop"))!;
await api("POST", `${P}/keys`, { cookie, body: { name: "ci" } });
await api("POST", `${P}/dsn-keys`, { cookie, body: { name: "Sentry SDK" } });
const channel = (await api("POST", `${P}/channels`, { cookie, body: { name: "Hook", kind: "webhook", url: "http://127.0.0.1:9/hook", secret: "upgrade-secret-upgrade" } })).body.channel;
await api("POST", `${P}/rules`, { cookie, body: { name: "New issues", trigger: "new_group", channel_ids: [channel.id] } });
const link = (await api("POST", `${P}/share-links`, { cookie, body: { group_id: shop.id, role: "viewer" } })).body;
await api("POST", `${P}/members`, { cookie, body: { email: "teammate@upgrade.example", role: "member" } });

// exact counts are applied by the counter drain: wait until the API says 9 occurrences
for (let i = 0; ; i++) {
  const data = (await api("GET", "/api/v1/errors?grouped=true&sort=count&limit=100", { key: apiKey })).body.data as { count: number }[];
  if (data.reduce((s, g) => s + Number(g.count), 0) === errors.length) break;
  if (i > 200) throw new Error("counts never settled");
  await new Promise((r) => setTimeout(r, 50));
}

const answers = {
  errors: (await api("GET", "/api/v1/errors?grouped=true&sort=count&limit=100", { key: apiKey })).body,
  economy_players: (await api("GET", "/api/v1/economy/players?limit=100", { key: apiKey })).body,
  keys: (await api("GET", `${P}/keys`, { cookie })).body,
  dsn_keys: (await api("GET", `${P}/dsn-keys`, { cookie })).body,
  channels: (await api("GET", `${P}/channels`, { cookie })).body,
  rules: (await api("GET", `${P}/rules`, { cookie })).body,
  members: (await api("GET", `${P}/members`, { cookie })).body,
  share_links: (await api("GET", `${P}/share-links`, { cookie })).body,
  servers: (await api("GET", "/api/v1/servers", { key: apiKey })).body,
};
await server.close();
await database.close();

// plain SQL with one INSERT per row, so the test can load it with any client on any server version
const dump = execFileSync(
  "pg_dump",
  ["--column-inserts", "--no-owner", "--no-privileges", "--exclude-schema=pgboss", url.toString()],
  { maxBuffer: 256 * 1024 * 1024, encoding: "utf8" },
)
  // psql meta-commands (\restrict) are not SQL
  .split("\n")
  .filter((l) => !l.startsWith("\\"))
  .join("\n");
writeFileSync(path.join(OUT, `${last}.sql.gz`), gzipSync(dump, { level: 9 }));
writeFileSync(
  path.join(OUT, `${last}.json`),
  JSON.stringify({ release_migration: last, made_at: new Date().toISOString(), project_id: project.id, email, password, api_key: apiKey, share_token: link.token ?? link.share_link?.token ?? null, share_url: link.url ?? link.share_link?.url ?? null, answers }, null, 2) + "\n",
);
await root.unsafe(`drop database ${name}`);
await root.end();
rmSync(dataDir, { recursive: true, force: true });
console.log(`wrote ${path.join(OUT, last)}.sql.gz and .json`);
