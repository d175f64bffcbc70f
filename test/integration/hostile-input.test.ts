import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenCloud, type FakeOpenCloud } from "../support/fake-open-cloud.js";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { countersApplied } from "../support/counters.js";
import { HOSTILE_QUERY, HOSTILE_SEGMENTS, HOSTILE_VALUES, Raw, hostileArbitrary, pathsOf, toJson, withValue } from "../support/hostile.js";
import { appRoutes, uncheckedQueryReads } from "../support/routes.js";

/**
 * Every public endpoint, fed hostile bodies, queries and path ids: the answer is never a 5xx (a
 * retrying client would resend it forever), and an API 4xx carries the one error body.
 * Table-driven (each hostile value in each field of a valid body, each parameter, each path id),
 * then property-based (random combinations, shrunk to the smallest failing body by fast-check).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const INTERNAL_KEY = "fuzz-internal-key-0123456789abcdef";
// requests in flight at once: a request mostly waits on PostgreSQL (its commit), so more than the
// machine's CPUs keep the server busy; endpoints whose state is compared run their cases one at a time
const CONCURRENCY = 8;

let app: TestApp;
let sink: Server;
let openCloud: FakeOpenCloud;
let sinkUrl: string;
const ids: Record<string, string> = {};
let cookie: string;
let apiKey: string;

type Auth = "key" | "session" | "internal" | "none";
/**
 * `values`: labels of HOSTILE_VALUES to use where each accepted-looking request costs a password hash.
 * `encode`: the body text from the (mutated) template, when it is not JSON itself (a Sentry envelope).
 * `marked`: events carry a marker in `message`; a request refused with a 4xx must have stored nothing.
 * `state`: what the endpoint changes; a request refused with a 4xx must leave it as it was (its cases
 * run one at a time).
 */
type BodyEndpoint = {
  method: string;
  path: () => string;
  auth: Auth;
  template: () => unknown;
  values?: string[];
  encode?: (body: unknown) => string;
  contentType?: string;
  marked?: boolean;
  state?: () => Promise<unknown>;
};
const HASHED = ["NUL inside", "lone high surrogate", "lone low surrogate", "70k string", "1e400 literal", "true", "null", "[]", "{}", "object 10,000 deep", "array 10,000 deep", "__proto__"];

const headersFor = (auth: Auth): Record<string, string> =>
  auth === "key" ? { "x-api-key": apiKey } : auth === "session" ? { cookie } : auth === "internal" ? { "x-internal-key": INTERNAL_KEY } : {};

/** One request; the failure message says what was sent. */
async function send(method: string, path: string, auth: Auth, body?: string, form?: boolean, contentType?: string) {
  const res = await app.request(path, {
    method,
    headers: {
      ...headersFor(auth),
      ...(body !== undefined ? { "content-type": contentType ?? (form ? "application/x-www-form-urlencoded" : "application/json") } : {}),
      ...(form ? { origin: app.url } : {}),
    },
    body,
    redirect: "manual",
  });
  const text = await res.text();
  return { status: res.status, text, type: res.headers.get("content-type") ?? "" };
}

function check(r: { status: number; text: string; type: string }, what: string, api: boolean) {
  expect(r.status, `${what} -> ${r.status} ${r.text.slice(0, 300)}`).toBeLessThan(500);
  if (api && r.status >= 400) {
    expect(r.type, what).toContain("application/json");
    const body = JSON.parse(r.text);
    expect(typeof body.error, `${what}: ${r.text.slice(0, 200)}`).toBe("string");
    expect(typeof body.message, `${what}: ${r.text.slice(0, 200)}`).toBe("string");
  }
}

/** Runs `jobs` a few at a time (the server, not the client, is under test). */
async function inParallel<T>(items: T[], fn: (item: T) => Promise<void>, concurrency = CONCURRENCY) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

const P = () => `/api/team/projects/${ids.project}`;

type Envelope = { header: unknown; item: unknown; payload: unknown };
const MARK = "fuzz-mark-";
/** Replaced in each request's body by a number of its own (see `sendChecked`). */
const MARK_ID = "ID";
/**
 * A Sentry event as SDKs send it; its message carries the marker that shows whether it was stored.
 * Envelopes map their event as `/store/` does: they leave out the breadcrumbs `/store/` fuzzes.
 */
const sentryEvent = (crumbs = true) => ({
  // a new id each time: a repeated one is dropped as a duplicate before anything is written
  event_id: randomUUID().replace(/-/g, ""),
  timestamp: new Date().toISOString(),
  platform: "other",
  level: "error",
  logger: "roblox",
  message: `${MARK}${MARK_ID}`,
  exception: { values: [{ type: "Error", value: "attempt to index nil", stacktrace: { frames: [{ filename: "ServerScriptService.Combat", lineno: 12, function: "swing" }] } }] },
  tags: { place_id: "1818", server: "job" },
  user: { id: "261", username: "Builderman" },
  contexts: { game: { version: "42" } },
  environment: "production",
  release: "42",
  extra: { weapon: { name: "sword" } },
  fingerprint: ["{{ default }}", "combat"],
  ...(crumbs && {
    breadcrumbs: {
      values: [{ timestamp: Date.now() / 1000, type: "default", category: "ui.click", level: "info", message: "opened the shop", data: { item: { name: "sword" } } }],
    },
  }),
});
let marks = 0;

/** Envelope header, item header and payload, one per line; a non-object body is sent as it is. */
const encodeEnvelope = (b: unknown) =>
  b !== null && typeof b === "object" && !(b instanceof Raw) && "payload" in b
    ? [(b as Envelope).header, (b as Envelope).item, (b as Envelope).payload].map(toJson).join("\n")
    : toJson(b);

/** The project's issues as merge, unmerge and bulk changes leave them, once earlier writes' counters are applied. */
const triageState = async () => {
  await countersApplied(app.sql);
  return app.sql`
    select id, status, merged_into, count, user_count, snooze_until, snooze_count, resolved_at
    from error_groups where project_id = ${ids.project} order by id`;
};

/**
 * Sends a body with a fresh marker; on a 4xx, checks that no event with that marker was stored (a
 * refused request writes nothing). When the mutation replaced the marker itself, there is nothing to find.
 */
async function sendChecked(ep: BodyEndpoint, body: unknown, what: string) {
  const text = (ep.encode ?? toJson)(body);
  const mark = `${MARK}${++marks}-${Date.now()}`;
  const marked = text.includes(MARK + MARK_ID) ? text.replace(MARK + MARK_ID, mark) : null;
  const before = await ep.state?.();
  const r = await send(ep.method, ep.path(), ep.auth, marked ?? text, false, ep.contentType);
  check(r, what, true);
  if (ep.state && r.status >= 400) expect(await ep.state(), `${what} answered ${r.status} but changed the issues`).toEqual(before);
  if (ep.marked && marked && r.status >= 400) {
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${ids.project} and message like ${"%" + mark + "%"}`;
    expect(n, `${what} answered ${r.status} but stored its event`).toBe(0);
  }
  return r;
}

const BODY_ENDPOINTS: Record<string, BodyEndpoint> = {
  "POST /api/ingest": {
    method: "POST",
    path: () => "/api/ingest",
    auth: "key",
    template: () => ({
      message: "ServerScriptService.Combat:12: attempt to index nil",
      level: "error",
      stack_trace: "ServerScriptService.Combat:12",
      user_id: 261,
      player_name: "Builderman",
      trace_id: "{0A1B2C3D-1111-2222-3333-444455556666}",
      job_id: "job",
      place_id: "1818",
      game_version: 42,
      environment: "production",
      context: { weapon: { name: "sword", level: 3 } },
      tags: ["combat"],
      timestamp: new Date().toISOString(),
      count: 2,
      fingerprint: ["{{ default }}", "combat"],
      event_id: "{0A1B2C3D-1111-2222-3333-444455556667}",
      breadcrumbs: [{ timestamp: new Date().toISOString(), level: "warning", category: "ui.click", message: "opened the shop", data: { item: { name: "sword" }, price: 5 } }],
    }),
  },
  "POST /api/ingest (batch)": {
    method: "POST",
    path: () => "/api/ingest",
    auth: "key",
    template: () => ({
      errors: [{ message: "first", level: "warn" }, { message: "second", context: { a: [1] }, breadcrumbs: [{ message: "m", data: { a: [1] } }] }],
      client_report: { discarded_events: [{ reason: "queue_overflow", category: "error", quantity: 3 }], last_warning: { message: "queue full", at: new Date().toISOString() } },
    }),
  },
  "POST /api/client-reports": {
    method: "POST",
    path: () => "/api/client-reports",
    auth: "key",
    template: () => ({
      discarded_events: [
        { reason: "sample_rate", category: "error", quantity: 10 },
        { reason: "too_large", category: "economy", quantity: 1 },
      ],
      last_warning: { message: "a batch was refused", at: new Date().toISOString() },
    }),
  },
  "POST /api/economy/ingest": {
    method: "POST",
    path: () => "/api/economy/ingest",
    auth: "key",
    template: () => ({
      players: [
        {
          user_id: 123,
          username: "bob",
          display_name: "Bob",
          profile: {
            RPCharacterOne: { Name: "Bob", Cash: 100, InATM: 5000, DarkCoin: 1, FirstName: "Bo", LastName: "B" },
            RPCharacterTwo: { DisplayName: "Robert", Cash: 1.5 },
            DataCode: 4,
          },
        },
        { user_id: "456", profile: { Data: { RPCharacterOne: { Cash: 7 } }, MetaData: {} } },
      ],
    }),
  },
  "POST /api/economy/flows": {
    method: "POST",
    path: () => "/api/economy/flows",
    auth: "key",
    template: () => ({
      flows: [
        { user_id: 123, currency: "cash", amount: 50, source: "quest", item: "daily_1", at: "2026-11-29T10:00:00.000Z" },
        { user_id: "456", currency: "Bank", amount: "-12.5", source: "Shop" },
      ],
    }),
  },
  "POST /api/economy/ingest with flows": {
    method: "POST",
    path: () => "/api/economy/ingest",
    auth: "key",
    template: () => ({
      players: [{ user_id: 123, profile: { RPCharacterOne: { Name: "Bob", Cash: 150, InATM: 5000, DarkCoin: 1 } } }],
      flows: [{ user_id: 123, currency: "cash", amount: 50, source: "quest", item: "daily_1", at: "2026-11-29T10:00:00.000Z" }],
    }),
  },
  "POST /api/notifications/dispatch": {
    method: "POST",
    path: () => "/api/notifications/dispatch",
    auth: "internal",
    template: () => ({ project_id: ids.project, fingerprints: [ids.fingerprint] }),
  },
  "POST /api/economy/sync": {
    method: "POST",
    path: () => "/api/economy/sync",
    auth: "internal",
    template: () => ({ project_id: ids.project, restart: false }),
  },
  "PUT /api/economy/key": {
    method: "PUT",
    path: () => "/api/economy/key",
    auth: "session",
    template: () => ({
      project_id: ids.project,
      api_key: openCloud.apiKey,
      universe_id: openCloud.universeId,
      datastore_name: openCloud.datastoreName,
      scope: "global",
      key_prefix: "Player_",
    }),
  },
  "POST /api/auth/login": {
    method: "POST",
    path: () => "/api/auth/login",
    auth: "none",
    template: () => ({ email: "nobody@example.test", password: "not the password" }),
    values: HASHED,
  },
  "POST /api/auth/password": {
    method: "POST",
    path: () => "/api/auth/password",
    auth: "session",
    template: () => ({ current_password: "not the current one", new_password: "a new long password" }),
    values: HASHED,
  },
  "POST /api/auth/two-factor/confirm": {
    method: "POST",
    path: () => "/api/auth/two-factor/confirm",
    auth: "session",
    template: () => ({ code: "123456" }),
    state: () => app.sql`select user_id, enabled_at, last_used_step from user_two_factor order by user_id`,
  },
  "PUT …/two-factor": {
    method: "PUT",
    path: () => `${P()}/two-factor`,
    auth: "session",
    template: () => ({ two_factor_required: "off" }),
    state: () => app.sql`select two_factor_required from projects where id = ${ids.project}`,
  },
  "POST /api/team/projects": { method: "POST", path: () => "/api/team/projects", auth: "session", template: () => ({ name: "Fuzzed Game" }) },
  "PATCH /api/team/projects/:id": { method: "PATCH", path: P, auth: "session", template: () => ({ name: "Renamed Game" }) },
  "POST …/keys": { method: "POST", path: () => `${P()}/keys`, auth: "session", template: () => ({ name: "ci" }) },
  "POST …/members": {
    method: "POST",
    path: () => `${P()}/members`,
    auth: "session",
    template: () => ({ email: "teammate@example.test", role: "member" }),
  },
  "PATCH …/members/:user_id": { method: "PATCH", path: () => `${P()}/members/${ids.member}`, auth: "session", template: () => ({ role: "admin" }) },
  "PATCH …/groups/:group_id": { method: "PATCH", path: () => `${P()}/groups/${ids.group}`, auth: "session", template: () => ({ status: "resolved" }) },
  "POST …/groups/status": {
    method: "POST",
    path: () => `${P()}/groups/status`,
    auth: "session",
    template: () => ({ ids: [ids.group], status: "open" }),
  },
  "POST …/share-links": {
    method: "POST",
    path: () => `${P()}/share-links`,
    auth: "session",
    template: () => ({ group_id: ids.group, role: "viewer", expires_in_days: 7 }),
  },
  "POST …/channels": {
    method: "POST",
    path: () => `${P()}/channels`,
    auth: "session",
    template: () => ({ name: "#errors", kind: "webhook", url: sinkUrl, secret: "a-webhook-secret-1234", enabled: true }),
  },
  "POST …/dsn-keys": { method: "POST", path: () => `${P()}/dsn-keys`, auth: "session", template: () => ({ name: "web", rate_limit_per_minute: 600 }) },
  "PATCH …/dsn-keys/:id": {
    method: "PATCH",
    path: () => `${P()}/dsn-keys/${ids.dsnKey}`,
    auth: "session",
    state: () => app.sql`select * from dsn_keys where project_id = ${ids.project} order by id`,
    template: () => ({ name: "website", rate_limit_per_minute: 1200 }),
  },
  "PATCH …/channels/:id": {
    method: "PATCH",
    path: () => `${P()}/channels/${ids.channel}`,
    auth: "session",
    template: () => ({ name: "#renamed", url: sinkUrl, secret: "another-secret-1234", enabled: true }),
  },
  "POST …/rules": {
    method: "POST",
    path: () => `${P()}/rules`,
    auth: "session",
    template: () => ({
      name: "Spikes",
      trigger: "frequency",
      threshold_count: 5,
      window_minutes: 10,
      levels: ["error"],
      environments: ["production"],
      message_contains: "nil",
      channel_ids: [ids.channel],
      cooldown_minutes: 30,
      enabled: true,
      server_only: true,
      min_players: 3,
    }),
  },
  "PATCH …/rules/:id": {
    method: "PATCH",
    path: () => `${P()}/rules/${ids.rule}`,
    auth: "session",
    template: () => ({
      name: "Renamed rule",
      trigger: "frequency",
      threshold_count: 9,
      window_minutes: 5,
      levels: ["error", "warn"],
      environments: ["staging"],
      message_contains: "x",
      channel_ids: [ids.channel],
      cooldown_minutes: 1,
      enabled: false,
      server_only: false,
      min_players: 0,
    }),
  },
  "POST /api/:project/store/ (Sentry)": {
    method: "POST",
    path: () => `/api/${ids.project}/store/?sentry_key=${apiKey}`,
    auth: "none",
    marked: true,
    template: sentryEvent,
  },
  "POST /api/:project/envelope/ (Sentry)": {
    method: "POST",
    path: () => `/api/${ids.project}/envelope/?sentry_key=${apiKey}`,
    auth: "none",
    marked: true,
    contentType: "application/x-sentry-envelope",
    template: () => ({
      header: { event_id: randomUUID().replace(/-/g, ""), sent_at: new Date().toISOString(), sdk: { name: "sentry.lua", version: "1.0.0" } },
      item: { type: "event", content_type: "application/json" },
      payload: sentryEvent(false),
    }),
    encode: encodeEnvelope,
  },
  "POST /api/:project/envelope/ (Sentry, key in the dsn)": {
    method: "POST",
    path: () => `/api/${ids.project}/envelope/`,
    auth: "none",
    marked: true,
    contentType: "application/x-sentry-envelope",
    template: () => ({
      header: { event_id: randomUUID().replace(/-/g, ""), dsn: `http://${apiKey}@127.0.0.1/${ids.project}` },
      item: { type: "event" },
      payload: sentryEvent(false),
    }),
    encode: encodeEnvelope,
  },
  "POST …/groups/merge": {
    method: "POST",
    path: () => `${P()}/groups/merge`,
    auth: "session",
    state: () => triageState(),
    template: () => ({ ids: [ids.group, ids.group2], target_id: ids.group }),
  },
  "POST …/groups/:group_id/unmerge": {
    method: "POST",
    path: () => `${P()}/groups/${ids.group}/unmerge`,
    auth: "session",
    state: () => triageState(),
    template: () => ({ ids: [ids.group2] }),
  },
  "POST …/groups/bulk": {
    method: "POST",
    path: () => `${P()}/groups/bulk`,
    auth: "session",
    state: () => triageState(),
    template: () => ({
      filter: { status: "open", level: "error", search: "nil", environment: "production", regressed: false, new_in_version: "42" },
      status: "ignored",
      snooze: { until: new Date(Date.now() + 3_600_000).toISOString() },
      dry_run: true,
      as_of: new Date().toISOString(),
    }),
  },
  "PUT …/economy-map": {
    method: "PUT",
    path: () => `${P()}/economy-map`,
    auth: "session",
    state: () => app.sql`select map, updated_at from economy_maps where project_id = ${ids.project}`,
    template: () => ({
      currencies: [
        { key: "cash", name: "Cash", paths: ["RPCharacterOne.Cash", 'Slots[*]["My Coins"]'] },
        { key: "gems", name: "Gems", paths: ["Data.Gems"] },
      ],
      names: ["RPCharacterOne"],
      data_code: "DataCode",
      match: ["RPCharacterOne"],
    }),
  },
  "PUT …/economy-thresholds/:currency": {
    method: "PUT",
    path: () => `${P()}/economy-thresholds/cash`,
    auth: "session",
    state: () => app.sql`select currency, factor, min_amount, off from economy_threshold_overrides where project_id = ${ids.project} order by currency`,
    template: () => ({ factor: 4, min_amount: "2500", off: false }),
  },
  "POST …/economy-map/preview": {
    method: "POST",
    path: () => `${P()}/economy-map/preview`,
    auth: "session",
    template: () => ({
      map: { currencies: [{ key: "cash", name: "Cash", paths: ["RPCharacterOne.Cash"] }], names: ["RPCharacterOne"], data_code: null, match: [] },
      profile: { RPCharacterOne: { Name: "Bo", Cash: 5 }, DataCode: 4 },
    }),
  },
  "POST /api/notifications/test": { method: "POST", path: () => "/api/notifications/test", auth: "session", template: () => ({ channel_id: ids.channel }) },
  "POST /api/share/:token": { method: "POST", path: () => `/api/share/${ids.editorToken}`, auth: "none", template: () => ({ status: "open" }) },
};

type QueryEndpoint = { path: () => string; auth: Auth; params: string[]; api: boolean };

const QUERY_ENDPOINTS: QueryEndpoint[] = [
  { path: () => "/api/v1/errors", auth: "key", params: ["limit", "offset", "grouped", "level", "user_id", "place_id", "search", "environment"], api: true },
  { path: () => "/api/v1/errors?grouped=true", auth: "key", params: ["limit", "offset", "level", "status", "sort", "search", "environment"], api: true },
  { path: () => "/api/v1/stats", auth: "key", params: ["timeframe"], api: true },
  { path: () => "/api/v1/sdk-health", auth: "key", params: ["days"], api: true },
  { path: () => `/api/v1/errors/${ids.group}`, auth: "key", params: ["limit"], api: true },
  { path: () => "/api/v1/economy/players", auth: "key", params: ["sort", "order", "search", "limit", "offset"], api: true },
  { path: () => "/api/v1/economy/summary", auth: "key", params: ["days"], api: true },
  { path: () => "/api/v1/economy/anomalies", auth: "key", params: ["currency", "factor", "min_amount", "days", "limit", "offset"], api: true },
  { path: () => "/api/v1/economy/flows", auth: "key", params: ["currency", "days"], api: true },
  { path: () => "/api/v1/economy/unexplained", auth: "key", params: ["currency", "min_amount", "days", "limit", "offset"], api: true },
  { path: () => `${P()}/economy-thresholds`, auth: "session", params: ["x"], api: true },
  { path: () => "/api/economy/key", auth: "session", params: ["project_id"], api: true },
  { path: () => "/api/economy/sync", auth: "session", params: ["project_id"], api: true },
  { path: () => "/api/economy/sync", auth: "internal", params: ["project_id"], api: true },
  { path: () => `${P()}/share-links`, auth: "session", params: ["group_id"], api: true },
  { path: () => `${P()}/deliveries`, auth: "session", params: ["limit", "offset", "status", "channel_id", "rule_id"], api: true },
  { path: () => `/projects/${ids.project}`, auth: "session", params: ["timeframe"], api: false },
  { path: () => `/projects/${ids.project}/issues`, auth: "session", params: ["status", "level", "environment", "search", "sort", "page"], api: false },
  { path: () => `/projects/${ids.project}/economy`, auth: "session", params: ["search", "sort", "order", "limit", "offset"], api: false },
  { path: () => `/projects/${ids.project}/deliveries`, auth: "session", params: ["limit", "offset", "status"], api: false },
  { path: () => "/login", auth: "none", params: ["next"], api: false },
  // no parameters of their own: unknown ones are ignored
  { path: () => "/api/ingest", auth: "none", params: ["x"], api: true },
  { path: () => "/api/ready", auth: "none", params: ["x"], api: true },
  { path: () => "/api/auth/me", auth: "session", params: ["x"], api: true },
  { path: () => `${P()}/members`, auth: "session", params: ["x"], api: true },
  { path: () => `/api/share/${ids.editorToken}`, auth: "none", params: ["x"], api: true },
  { path: () => `/share/${ids.editorToken}`, auth: "none", params: ["x"], api: false },
];

/** Paths with one id replaced by each hostile segment (`{}` marks it). */
const PATH_TEMPLATES: { path: () => string; auth: Auth; method: string; api: boolean }[] = [
  { method: "GET", path: () => "/api/v1/errors/{}", auth: "key", api: true },
  { method: "GET", path: () => "/api/v1/traces/{}", auth: "key", api: true },
  { method: "GET", path: () => "/api/v1/economy/players/{}", auth: "key", api: true },
  { method: "GET", path: () => "/api/share/{}", auth: "none", api: true },
  { method: "GET", path: () => "/api/team/projects/{}", auth: "session", api: true },
  { method: "GET", path: () => "/api/team/projects/{}/keys", auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/keys/{}`, auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/members/{}`, auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/groups/{}`, auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/share-links/{}`, auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/channels/{}`, auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/rules/{}`, auth: "session", api: true },
  { method: "PUT", path: () => `${P()}/economy-thresholds/{}`, auth: "session", api: true },
  { method: "DELETE", path: () => `${P()}/economy-thresholds/{}`, auth: "session", api: true },
  { method: "GET", path: () => `/projects/{}`, auth: "session", api: false },
  { method: "GET", path: () => `/projects/${ids.project}/issues/{}`, auth: "session", api: false },
  { method: "GET", path: () => `/projects/${ids.project}/traces/{}`, auth: "session", api: false },
  { method: "GET", path: () => `/projects/${ids.project}/economy/players/{}`, auth: "session", api: false },
  { method: "GET", path: () => "/share/{}", auth: "none", api: false },
];

/** Dashboard form posts: every field but `intent` gets each hostile text (forms carry only strings). */
const FORMS: { path: () => string; fields: Record<string, string> }[] = [
  { path: () => "/login", fields: { email: "nobody@example.test", password: "not the password" } },
  { path: () => "/setup", fields: { email: "first@example.test", password: "long enough password", confirm: "long enough password" } },
  { path: () => "/projects/new", fields: { name: "Form Game" } },
  { path: () => "/account", fields: { current_password: "not the current one", new_password: "another long password" } },
  { path: () => `/projects/${ids.project}/settings`, fields: { intent: "rename", name: "Form rename" } },
  { path: () => `/projects/${ids.project}/settings`, fields: { intent: "key-create", name: "form key" } },
  { path: () => `/projects/${ids.project}/settings`, fields: { intent: "key-revoke", key_id: "x" } },
  { path: () => `/projects/${ids.project}/settings`, fields: { intent: "member-add", email: "formmate@example.test", role: "member" } },
  { path: () => `/projects/${ids.project}/settings`, fields: { intent: "member-role", user_id: "x", role: "admin" } },
  { path: () => `/projects/${ids.project}/settings`, fields: { intent: "share-revoke", link_id: "x" } },
  { path: () => `/projects/${ids.project}/issues`, fields: { intent: "resolved", ids: "x" } },
  { path: () => `/projects/${ids.project}/issues/${ids.group}`, fields: { intent: "status", status: "open" } },
  { path: () => `/projects/${ids.project}/issues/${ids.group}`, fields: { intent: "share-create", role: "viewer", expires_in_days: "7" } },
  { path: () => `/projects/${ids.project}/alerts`, fields: { intent: "channel-create", name: "form", kind: "webhook", url: "http://127.0.0.1:1/", secret: "" } },
  { path: () => `/projects/${ids.project}/alerts`, fields: { intent: "channel-edit", id: "x", name: "n", url: "http://127.0.0.1:1/" } },
  {
    path: () => `/projects/${ids.project}/alerts`,
    fields: { intent: "rule-create", name: "r", trigger: "frequency", threshold_count: "5", window_minutes: "5", environments: "a, b", message_contains: "m", channel_ids: "x", cooldown_minutes: "3" },
  },
  { path: () => `/projects/${ids.project}/alerts`, fields: { intent: "rule-enable", id: "x", enabled: "true" } },
  { path: () => `/projects/${ids.project}/economy/settings`, fields: { intent: "threshold-save", currency: "cash", factor: "4", min_amount: "2500" } },
  { path: () => `/projects/${ids.project}/economy/settings`, fields: { intent: "save-key", api_key: "k-123456789", universe_id: "1", datastore_name: "d", scope: "global", key_prefix: "p" } },
  { path: () => `/share/${ids.editorToken}`, fields: { status: "open" } },
];
const FORM_VALUES = ["a\u0000b", "x".repeat(5000), "1e309"];
/** Pages render a whole document per request: they get the values that reach SQL or parsing */
const PAGE_QUERY = ["%00", "a%00b", "%ED%A0%80", "%FF%FE", "%", "9".repeat(400), "-1", "1e309", "x".repeat(5000)];

beforeAll(async () => {
  sink = createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
  openCloud = await startFakeOpenCloud({ entries: [{ id: "Player_1", value: { RPCharacterOne: { Cash: 1 } }, revisionCreateTime: new Date().toISOString() }] });
  // jobs on, so the scan and alert endpoints run their real path (against local fakes)
  app = await startTestApp({
    JOBS_ENABLED: "true",
    OPEN_CLOUD_BASE_URL: openCloud.url,
    OPEN_CLOUD_REQUESTS_PER_MINUTE: "60000",
    NOTIFICATION_SECRET: INTERNAL_KEY,
    WEBHOOK_ALLOW_PRIVATE: "true",
    SHARE_RATE_LIMIT: "10000",
    // the sweep previews currency maps far more often than a person would; every preview must reach validation
    ECONOMY_PREVIEW_RATE_LIMIT: "1000000",
  });
  const owner = await makeUser(app.sql);
  const member = await makeUser(app.sql);
  const project = await makeProject(app.sql, owner.id, [{ userId: member.id, role: "member" }]);
  ids.project = project.projectId;
  ids.member = member.id;
  apiKey = project.apiKey;
  cookie = await login(app, owner.email);
  await ingest(app, apiKey, { message: "attempt to index nil", user_id: 5, trace_id: "0a1b2c3d-1111-2222-3333-444455556666" });
  const [g] = await app.sql<{ id: string; fingerprint: string }[]>`select id, fingerprint from error_groups where project_id = ${ids.project}`;
  ids.group = g.id;
  ids.fingerprint = g.fingerprint;
  // a second issue, for merge and unmerge
  await ingest(app, apiKey, { message: "Workspace.Door:3: attempt to call a nil value" });
  const [g2] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${ids.project} and id <> ${ids.group}`;
  ids.group2 = g2.id;
  const channel = await call(app, "POST", `${P()}/channels`, { cookie, body: { name: "sink", kind: "webhook", url: sinkUrl } });
  ids.channel = channel.body.id ?? channel.body.channel?.id;
  const rule = await call(app, "POST", `${P()}/rules`, { cookie, body: { name: "new", trigger: "new_group", channel_ids: [ids.channel] } });
  ids.rule = rule.body.id ?? rule.body.rule?.id;
  const dsnKey = await call(app, "POST", `${P()}/dsn-keys`, { cookie, body: { name: "sentry" } });
  ids.dsnKey = dsnKey.body.id;
  const link = await call(app, "POST", `${P()}/share-links`, { cookie, body: { group_id: ids.group, role: "editor" } });
  ids.editorToken = link.body.token;
  const key = await call(app, "PUT", "/api/economy/key", { cookie, body: BODY_ENDPOINTS["PUT /api/economy/key"].template() });
  expect(key.status).toBe(200);
  for (const [name, v] of Object.entries(ids)) expect(v, name).toBeTruthy();
}, 120_000);

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => sink?.close(resolve));
  await openCloud?.close();
});

describe("hostile bodies, table-driven: each value in each field of a valid body", () => {
  for (const [name, ep] of Object.entries(BODY_ENDPOINTS)) {
    it(`${name} never answers 5xx`, { timeout: 600_000 }, async () => {
      const template = ep.template();
      const paths = [[], ...pathsOf(template), ["unknown_field"]];
      const values = ep.values ? HOSTILE_VALUES.filter(([label]) => ep.values!.includes(label)) : HOSTILE_VALUES;
      expect(values.length).toBe(ep.values?.length ?? HOSTILE_VALUES.length);
      const cases = paths.flatMap((path) => values.map(([label, value]) => ({ path, label, value })));
      const one = ({ path, label, value }: (typeof cases)[number]) =>
        sendChecked(ep, withValue(ep.template(), path, value), `${name} with ${path.join(".") || "(body)"} = ${label}`);
      await inParallel(cases, async (c) => void (await one(c)), ep.state ? 1 : CONCURRENCY);
    });
  }
});

describe("hostile bodies, property-based: random values at random places, several at once", () => {
  for (const [name, ep] of Object.entries(BODY_ENDPOINTS)) {
    it(`${name} never answers 5xx`, { timeout: 600_000 }, async () => {
      const paths = [[], ...pathsOf(ep.template())];
      const mutation = fc.array(fc.tuple(fc.constantFrom(...paths), hostileArbitrary), { minLength: 1, maxLength: 3 });
      await fc.assert(
        fc.asyncProperty(mutation, async (changes) => {
          const body = changes.reduce<unknown>((b, [path, value]) => withValue(b, path, value), ep.template());
          await sendChecked(ep, body, `${name} with ${(ep.encode ?? toJson)(body).slice(0, 300)}`);
        }),
        { numRuns: RUNS },
      );
    });
  }
});

describe("hostile queries and path ids", () => {
  it("no query parameter of an API or page answers 5xx", { timeout: 600_000 }, async () => {
    const cases = QUERY_ENDPOINTS.flatMap((ep) =>
      ep.params.flatMap((param) => [
        ...(ep.api ? HOSTILE_QUERY : PAGE_QUERY).map((value) => ({ ep, query: `${param}=${value}` })),
        { ep, query: `${param}=1&${param}=2` },
        { ep, query: `${param}%5B%5D=1` },
      ]),
    );
    await inParallel(cases, async ({ ep, query }) => {
      const base = ep.path();
      const url = `${base}${base.includes("?") ? "&" : "?"}${query}`;
      check(await send("GET", url, ep.auth), `GET ${url.slice(0, 200)} (${ep.auth})`, ep.api);
    });
  });

  it("no hostile id in a path answers 5xx", { timeout: 600_000 }, async () => {
    const cases = PATH_TEMPLATES.flatMap((t) => HOSTILE_SEGMENTS.map((segment) => ({ t, segment })));
    await inParallel(cases, async ({ t, segment }) => {
      const url = t.path().replace("{}", segment);
      const r = await send(t.method, url, t.auth, t.method === "DELETE" ? "" : undefined);
      check(r, `${t.method} ${url.slice(0, 200)}`, t.api);
    });
  });

  it("no hostile credential or content-type header answers 5xx", { timeout: 600_000 }, async () => {
    const junk = ["", "%00", "\u00ff\u00fe", "x".repeat(8000), "rbx_" + "0".repeat(48), "; ; ;", "=", "\"quoted\""];
    const targets: { method: string; path: string; body?: string; api: boolean }[] = [
      { method: "POST", path: "/api/ingest", body: '{"message":"h"}', api: true },
      { method: "GET", path: "/api/v1/errors", api: true },
      { method: "POST", path: "/api/economy/ingest", body: '{"players":[]}', api: true },
      { method: "POST", path: "/api/economy/flows", body: '{"flows":[]}', api: true },
      { method: "POST", path: "/api/client-reports", body: '{"discarded_events":[]}', api: true },
      { method: "GET", path: "/api/v1/sdk-health", api: true },
      { method: "POST", path: "/api/notifications/dispatch", body: "{}", api: true },
      { method: "GET", path: "/api/economy/sync?project_id=x", api: true },
      { method: "GET", path: "/api/team/projects", api: true },
      { method: "POST", path: "/api/team/projects", body: '{"name":"h"}', api: true },
      { method: "GET", path: "/projects", api: false },
    ];
    const variants = junk.flatMap((v): Record<string, string>[] => [
      { "x-api-key": v },
      { "x-internal-key": v },
      { cookie: `rm_session=${v}` },
      { cookie: v },
      { "content-type": v },
      { "content-type": `application/json; charset=${v}` },
    ]);
    const cases = targets.flatMap((t) => variants.map((headers) => ({ t, headers })));
    await inParallel(cases, async ({ t, headers }) => {
      const res = await app.request(t.path, {
        method: t.method,
        headers: { ...(t.body ? { "content-type": "application/json" } : {}), ...headers },
        body: t.body,
        redirect: "manual",
      });
      const text = await res.text();
      check({ status: res.status, text, type: res.headers.get("content-type") ?? "" }, `${t.method} ${t.path} with ${JSON.stringify(headers).slice(0, 80)}`, t.api);
    });
  });

  it("no dashboard form field answers 5xx", { timeout: 600_000 }, async () => {
    const cases = FORMS.flatMap((f) =>
      Object.keys(f.fields)
        .filter((k) => k !== "intent")
        .flatMap((field) => FORM_VALUES.map((value) => ({ f, field, value }))),
    );
    await inParallel(cases, async ({ f, field, value }) => {
      const form = new URLSearchParams({ ...f.fields, [field]: value }).toString();
      const r = await send("POST", f.path(), "session", form, true);
      check(r, `POST ${f.path()} with ${field} = ${JSON.stringify(value.slice(0, 20))}`, false);
    });
  });
});

/** What a request can write directly (background jobs aside): a refused one must leave it as it was. */
const writeState = async () =>
  (
    await app.sql`
      select (select count(*) from events where project_id = ${ids.project})::int as events,
             (select coalesce(sum(count), 0) from error_groups where project_id = ${ids.project})::bigint::text as occurrences,
             (select count(*) from projects)::int as projects,
             (select count(*) from api_keys)::int as api_keys,
             (select count(*) from dsn_keys)::int as dsn_keys,
             (select count(*) from share_links)::int as share_links,
             (select count(*) from project_members)::int as members,
             (select count(*) from alert_channels)::int as channels,
             (select count(*) from alert_rules)::int as rules,
             (select count(*) from economy_open_cloud_keys)::int as open_cloud_keys,
             (select count(*) from economy_maps)::int as economy_maps`
  )[0];

/**
 * Content-Encoding layers are the sender's to choose and cost the server one decompression each, so
 * a request may name one coding. A body gzip'ed three times and a header naming 50 codings over a
 * small body are refused on every route that reads a body (the APIs and the dashboard's forms), with
 * the error body and before anything is written.
 */
describe("stacked content-codings on every body-reading route", () => {
  const FIFTY = Array.from({ length: 50 }, (_, i) => ["gzip", "deflate", "br", "x-gzip", "identity"][i % 5]).join(", ");
  const coded = (text: string) => [
    { encoding: "gzip, gzip, gzip", body: gzipSync(gzipSync(gzipSync(text))) },
    { encoding: FIFTY, body: Buffer.from(text) },
  ];
  const sendCoded = async (method: string, path: string, headers: Record<string, string>, encoding: string, body: Buffer) => {
    const res = await app.request(path, { method, headers: { ...headers, "content-encoding": encoding }, body: new Uint8Array(body), redirect: "manual" });
    return { status: res.status, text: await res.text(), type: res.headers.get("content-type") ?? "" };
  };

  it("APIs: 4xx with the error body, nothing written", { timeout: 600_000 }, async () => {
    for (const [name, ep] of Object.entries(BODY_ENDPOINTS)) {
      const mark = `${MARK}coded-${++marks}-${Date.now()}`;
      const text = (ep.encode ?? toJson)(ep.template()).replace(MARK + MARK_ID, mark);
      for (const { encoding, body } of coded(text)) {
        const what = `${name} with Content-Encoding ${encoding.slice(0, 40)}`;
        const before = [await writeState(), await ep.state?.()];
        const r = await sendCoded(ep.method, ep.path(), { ...headersFor(ep.auth), "content-type": ep.contentType ?? "application/json" }, encoding, body);
        check(r, what, true);
        expect(r.status, `${what} -> ${r.status} ${r.text.slice(0, 200)}`).toBe(415);
        expect([await writeState(), await ep.state?.()], `${what} answered ${r.status} but wrote`).toEqual(before);
      }
      if (ep.marked) {
        const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${ids.project} and message like ${"%" + mark + "%"}`;
        expect(n, `${name}: a coded body stored its event`).toBe(0);
      }
    }
  });

  it("dashboard forms: 415, nothing written", { timeout: 600_000 }, async () => {
    for (const f of FORMS) {
      for (const { encoding, body } of coded(new URLSearchParams(f.fields).toString())) {
        const what = `POST ${f.path()} (${f.fields.intent ?? "form"}) with Content-Encoding ${encoding.slice(0, 40)}`;
        const before = await writeState();
        const r = await sendCoded("POST", f.path(), { cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" }, encoding, body);
        check(r, what, false);
        expect(r.status, `${what} -> ${r.status} ${r.text.slice(0, 200)}`).toBe(415);
        expect(await writeState(), `${what} answered ${r.status} but wrote`).toEqual(before);
      }
    }
  });
});

describe("the five 500s of issue reports, each one request, answer 400 and write nothing", () => {
  const refused = async (r: { status: number; text: string; type: string }, what: string, code: string) => {
    expect(r.status, `${what}: ${r.text.slice(0, 200)}`).toBe(400);
    expect(JSON.parse(r.text).error, what).toBe(code);
  };

  it("POST /api/:project/store/?sentry_key=%00, and a NUL in an envelope header's dsn", async () => {
    for (const [path, body, contentType] of [
      [`/api/${ids.project}/store/?sentry_key=%00`, toJson(sentryEvent()), "application/json"],
      [`/api/${ids.project}/store/?sentry_key=rbx_%00`, toJson(sentryEvent()), "application/json"],
      [
        `/api/${ids.project}/envelope/`,
        encodeEnvelope({ header: { dsn: `http://%00@127.0.0.1/${ids.project}` }, item: { type: "event" }, payload: sentryEvent() }),
        "application/x-sentry-envelope",
      ],
    ]) {
      const before = await writeState();
      const r = await send("POST", path, "none", body, false, contentType);
      await refused(r, `POST ${path}`, path.includes("envelope") ? "invalid_payload" : "invalid_query");
      expect(await writeState(), path).toEqual(before);
    }
  });

  it("bulk triage with as_of in year 0000 (or 0001 before UTC, or 99999)", async () => {
    const template = BODY_ENDPOINTS["POST …/groups/bulk"].template() as Record<string, unknown>;
    for (const as_of of ["0000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "99999-01-01T00:00:00Z"]) {
      for (const dry_run of [true, false]) {
        const before = [await writeState(), await triageState()];
        const r = await send("POST", `${P()}/groups/bulk`, "session", toJson({ ...template, dry_run, as_of }));
        await refused(r, `bulk with as_of ${as_of}`, "invalid_payload");
        expect([await writeState(), await triageState()]).toEqual(before);
      }
    }
    // the first instant PostgreSQL and the API both hold is fine
    const ok = await send("POST", `${P()}/groups/bulk`, "session", toJson({ ...template, as_of: "0001-01-01T00:00:00Z" }));
    expect(ok.status, ok.text).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ matched: 0, as_of: "0001-01-01T00:00:00.000Z" });
  });

  it("GET /api/v1/errors?grouped=true&new_in_version=%00, /api/v1/players?search=%00", async () => {
    for (const [path, param] of [
      ["/api/v1/errors?grouped=true&new_in_version=%00", "new_in_version"],
      ["/api/v1/players?search=%00", "search"],
      ["/api/v1/players?search=a%00b", "search"],
    ]) {
      const r = await send("GET", path, "key");
      await refused(r, path, "invalid_query");
      expect(JSON.parse(r.text).details[0].path).toBe(param);
    }
  });

  it("GET /projects/:id/players?search=%00 is a 400 page", async () => {
    const r = await send("GET", `/projects/${ids.project}/players?search=%00`, "session");
    expect(r.status, r.text.slice(0, 200)).toBe(400);
    expect(r.type).toContain("text/html");
    expect(r.text).toContain("search must not contain NUL characters");
  });
});

/**
 * The sweep derived from the source: every route (from app/routes), every query parameter its code
 * reads (see test/support/routes.ts), each of text PostgreSQL cannot hold and dates it cannot store.
 * A switch that opens more parameters (`grouped=true`) is tried on and off.
 */
const SWEEP_VALUES = ["%00", "a%00b", "%ED%A0%80", "0000-01-01T00:00:00Z", "99999-01-01T00:00:00Z"];
const SWITCHES = ["grouped", "regressed"];

describe("every query parameter of every route, from the source", () => {
  const routes = appRoutes();
  const pathOf = (pattern: string) =>
    pattern.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (name === "userId") return pattern.includes("/members/") ? ids.member : "5";
      const id = { projectId: ids.project, groupId: ids.group, traceId: "0a1b2c3d-1111-2222-3333-444455556666", channelId: ids.channel, ruleId: ids.rule, token: ids.editorToken }[name];
      return id ?? "00000000-0000-0000-0000-000000000000";
    });
  const queriesOf = (params: string[]) => {
    const bases = ["", ...SWITCHES.filter((s) => params.includes(s)).map((s) => `${s}=true&`)];
    return [...params, "x"].flatMap((param) => bases.flatMap((base) => SWEEP_VALUES.map((value) => `${base}${param}=${value}`)));
  };

  it("the source reads every query through queryOf, and the derivation finds the parameters", () => {
    expect(uncheckedQueryReads()).toEqual([]);
    const find = (pattern: string) => routes.find((r) => r.pattern === pattern)?.params;
    expect(find("/api/v1/errors")).toEqual(expect.arrayContaining(["grouped", "new_in_version", "search", "limit", "user_id"]));
    expect(find("/api/v1/players")).toContain("search");
    expect(find("/projects/{projectId}/players")).toContain("search");
    expect(find("/api/{projectId}/store")).toContain("sentry_key");
    expect(routes.filter((r) => r.loader).length).toBeGreaterThan(50);
  });

  it("GET: no route answers 5xx (API errors carry the error body)", { timeout: 600_000 }, async () => {
    // with both credentials: each route takes the one it knows
    const cases = routes.filter((r) => r.loader).flatMap((r) => queriesOf(r.params).map((query) => ({ r, query })));
    await inParallel(cases, async ({ r, query }) => {
      const base = pathOf(r.pattern);
      const url = r.pattern.startsWith("/api/{projectId}/") ? `${base}/?sentry_key=${apiKey}&${query}` : `${base}?${query}`;
      const res = await app.request(url, { headers: { "x-api-key": apiKey, cookie }, redirect: "manual" });
      check({ status: res.status, text: await res.text(), type: res.headers.get("content-type") ?? "" }, `GET ${url} (${r.file})`, r.pattern.startsWith("/api/"));
    });
  });

  it("POST to the API routes that read their query: no 5xx, and a refused request writes nothing", { timeout: 600_000 }, async () => {
    const writers = routes.filter((r) => r.action && r.params.length > 0 && r.pattern.startsWith("/api/"));
    expect(writers.map((r) => r.pattern)).toEqual(expect.arrayContaining(["/api/{projectId}/store", "/api/{projectId}/envelope"]));
    for (const r of writers) {
      const sentry = r.pattern.startsWith("/api/{projectId}/");
      for (const query of queriesOf(r.params)) {
        // a Sentry route gets the key unless the key is what is under test, and a real event
        const url = `${pathOf(r.pattern)}${sentry ? "/" : ""}?${sentry && !query.startsWith("sentry_key=") ? `sentry_key=${apiKey}&` : ""}${query}`;
        const event = sentryEvent();
        const body = !sentry ? "{}" : r.pattern.endsWith("envelope") ? encodeEnvelope({ header: {}, item: { type: "event" }, payload: event }) : toJson(event);
        const before = await writeState();
        const res = await app.request(url, {
          method: "POST",
          headers: { "x-api-key": apiKey, cookie, origin: app.url, "content-type": r.pattern.endsWith("envelope") ? "application/x-sentry-envelope" : "application/json" },
          body,
          redirect: "manual",
        });
        const text = await res.text();
        check({ status: res.status, text, type: res.headers.get("content-type") ?? "" }, `POST ${url}`, true);
        if (res.status >= 400) expect(await writeState(), `POST ${url} answered ${res.status} but wrote`).toEqual(before);
      }
    }
  });
});

