/**
 * `POST /api/health` as the wire contract of issue 41 has it (docs/health.md once the service
 * documents it): a validator answering as the service would, and the figures a recorded run
 * implies, computed the contract's way, so the service's own figures can be checked equal to them.
 *
 * State, not deltas: server and session rows are upserts whose fields only move forward
 * (`ended_at`/`close_reason`/`exit_reason` set once, `errors` the max seen), a sample is keyed by
 * (job_id, at). So `healthFigures` gives the same answer whatever retries or reorderings the run had.
 */

export const CLOSE_REASONS = ["Unknown", "RobloxMaintenance", "DeveloperShutdown", "DeveloperUpdate", "ServerEmpty", "OutOfMemory"];
export const EXIT_REASONS = ["Unknown", "PlatformKick", "CreatorKick", "ServerClosed"];
export const MAX_SESSIONS = 1000;
export const MAX_SAMPLES = 120;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const DECIMAL = /^\d+$/;

export type HealthServer = {
  job_id: string;
  place_id?: string | null;
  place_version: string;
  environment?: string | null;
  started_at: string;
  ended_at?: string;
  close_reason?: string;
};
export type HealthSession = {
  id: string;
  user_id: string;
  started_at: string;
  ended_at?: string;
  exit_reason?: string;
  errors: { server: number; client: number };
};
export type HealthSample = {
  at: string;
  players: number;
  memory_mb: number | null;
  memory_tags: Record<string, number>;
  heartbeat_ms: number | null;
  physics_fps: number | null;
  instances: number | null;
  data_in_kbps: number | null;
  data_out_kbps: number | null;
  ping_ms: { p50: number; p90: number } | null;
  sdk: { queued: number; dropped: number };
  datastore_budget: Record<string, number>;
};
export type HealthReport = { server: HealthServer; sessions: HealthSession[]; samples: HealthSample[] };

const text = (v: unknown, max: number) => typeof v === "string" && v.length >= 1 && v.length <= max;
const count = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
const numberOrNull = (v: unknown) => v === null || (typeof v === "number" && Number.isFinite(v));
const numbers = (v: unknown, max: number) =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length <= max && Object.values(v).every((n) => typeof n === "number" && Number.isFinite(n));

/** The contract's 400 details for a body (empty: valid). */
export function healthProblems(body: any): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const bad = (path: string, message: string) => void problems.push({ path, message });
  if (typeof body !== "object" || body === null) return [{ path: "", message: "must be an object" }];
  const s = body.server;
  if (typeof s !== "object" || s === null) bad("server", "is required");
  else {
    if (!text(s.job_id, 100)) bad("server.job_id", "must be 1 to 100 characters");
    if (s.place_id != null && !(typeof s.place_id === "string" && DECIMAL.test(s.place_id))) bad("server.place_id", "must be a decimal string");
    if (!text(s.place_version, 256)) bad("server.place_version", "is required");
    if (s.environment != null && !text(s.environment, 256)) bad("server.environment", "must be a string");
    if (!(typeof s.started_at === "string" && ISO.test(s.started_at))) bad("server.started_at", "must be an ISO time");
    if (s.ended_at !== undefined && !(typeof s.ended_at === "string" && ISO.test(s.ended_at))) bad("server.ended_at", "must be an ISO time");
    if (s.close_reason !== undefined && !CLOSE_REASONS.includes(s.close_reason)) bad("server.close_reason", "must be a CloseReason");
    if ((s.ended_at === undefined) !== (s.close_reason === undefined)) bad("server.close_reason", "goes with ended_at");
  }
  if (!Array.isArray(body.sessions)) bad("sessions", "must be an array");
  else if (body.sessions.length > MAX_SESSIONS) bad("sessions", `must have at most ${MAX_SESSIONS} entries`);
  else
    body.sessions.forEach((x: any, i: number) => {
      const at = `sessions[${i}]`;
      if (!text(x?.id, 100)) bad(`${at}.id`, "must be 1 to 100 characters");
      if (!(typeof x?.user_id === "string" && DECIMAL.test(x.user_id))) bad(`${at}.user_id`, "must be a decimal string");
      if (!(typeof x?.started_at === "string" && ISO.test(x.started_at))) bad(`${at}.started_at`, "must be an ISO time");
      if (x?.ended_at !== undefined && !(typeof x.ended_at === "string" && ISO.test(x.ended_at))) bad(`${at}.ended_at`, "must be an ISO time");
      if (x?.exit_reason !== undefined && !EXIT_REASONS.includes(x.exit_reason)) bad(`${at}.exit_reason`, "must be a PlayerExitReason or ServerClosed");
      if (!(count(x?.errors?.server) && count(x?.errors?.client))) bad(`${at}.errors`, "must be {server, client} counts");
    });
  if (!Array.isArray(body.samples)) bad("samples", "must be an array");
  else if (body.samples.length > MAX_SAMPLES) bad("samples", `must have at most ${MAX_SAMPLES} entries`);
  else
    body.samples.forEach((x: any, i: number) => {
      const at = `samples[${i}]`;
      if (!(typeof x?.at === "string" && ISO.test(x.at))) bad(`${at}.at`, "must be an ISO time");
      if (!count(x?.players)) bad(`${at}.players`, "must be a count");
      for (const k of ["memory_mb", "heartbeat_ms", "physics_fps", "instances", "data_in_kbps", "data_out_kbps"])
        if (!numberOrNull(x?.[k])) bad(`${at}.${k}`, "must be a number or null");
      if (!numbers(x?.memory_tags, 8)) bad(`${at}.memory_tags`, "must be an object of at most 8 numbers");
      if (x?.ping_ms !== null && !(typeof x?.ping_ms?.p50 === "number" && typeof x?.ping_ms?.p90 === "number")) bad(`${at}.ping_ms`, "must be {p50, p90} or null");
      if (!(count(x?.sdk?.queued) && count(x?.sdk?.dropped))) bad(`${at}.sdk`, "must be {queued, dropped} counts");
      if (!numbers(x?.datastore_budget, 12)) bad(`${at}.datastore_budget`, "must be an object of at most 12 numbers");
    });
  return problems;
}

/** The contract's answer to a body: 200 with what was received, or 400 naming each bad field. */
export function healthAnswer(body: any): { status: number; body: unknown } {
  const problems = healthProblems(body);
  if (problems.length > 0) return { status: 400, body: { error: "invalid_payload", message: "The health report is invalid.", details: problems } };
  return { status: 200, body: { server: body.server.job_id, sessions: body.sessions.length, samples: body.samples.length } };
}

/** The state a series of accepted reports leaves, applied as the contract says (forward-only upserts). */
export function applyReports(reports: HealthReport[]) {
  const servers = new Map<string, HealthServer>();
  const sessions = new Map<string, HealthSession & { job_id: string; place_version: string }>();
  const samples = new Map<string, HealthSample & { job_id: string; place_version: string }>();
  for (const r of reports) {
    const was = servers.get(r.server.job_id);
    // ended_at / close_reason are set once
    servers.set(r.server.job_id, was ? { ...was, ...r.server, ended_at: was.ended_at ?? r.server.ended_at, close_reason: was.close_reason ?? r.server.close_reason } : { ...r.server });
    for (const s of r.sessions) {
      const before = sessions.get(s.id);
      sessions.set(s.id, {
        ...s,
        job_id: r.server.job_id,
        place_version: r.server.place_version,
        ended_at: before?.ended_at ?? s.ended_at,
        exit_reason: before?.exit_reason ?? s.exit_reason,
        errors: {
          server: Math.max(before?.errors.server ?? 0, s.errors.server),
          client: Math.max(before?.errors.client ?? 0, s.errors.client),
        },
      });
    }
    for (const x of r.samples) samples.set(`${r.server.job_id}\u0000${x.at}`, { ...x, job_id: r.server.job_id, place_version: r.server.place_version });
  }
  return { servers, sessions, samples };
}

export type VersionFigures = {
  servers: { started: number; ended: number; out_of_memory: number; open: number };
  sessions: { open: number; ended: number; error_free: number; error_free_rate: number | null };
  players: { distinct: number; error_free: number; error_free_rate: number | null };
  player_minutes: number;
};

/**
 * The figures the service must show for a run (design 41, "Decisions"), by place version:
 * sessions that ended and those error-free (errors.server + errors.client = 0), error-free players
 * (distinct users with an ended session, none of whose ended sessions met an error), player-minutes
 * (the sum of samples' players), servers started/ended/out of memory. `adoption` per minute
 * (`YYYY-MM-DDTHH:MM`): each version's share of the servers with a sample in that minute and of
 * their players.
 */
export function healthFigures(reports: HealthReport[]) {
  const { servers, sessions, samples } = applyReports(reports);
  const versions = new Map<string, VersionFigures>();
  const of = (v: string) => {
    let f = versions.get(v);
    if (!f)
      versions.set(
        v,
        (f = {
          servers: { started: 0, ended: 0, out_of_memory: 0, open: 0 },
          sessions: { open: 0, ended: 0, error_free: 0, error_free_rate: null },
          players: { distinct: 0, error_free: 0, error_free_rate: null },
          player_minutes: 0,
        }),
      );
    return f;
  };
  for (const s of servers.values()) {
    const f = of(s.place_version);
    f.servers.started += 1;
    if (s.ended_at) f.servers.ended += 1;
    else f.servers.open += 1;
    if (s.close_reason === "OutOfMemory") f.servers.out_of_memory += 1;
  }
  const usersByVersion = new Map<string, Map<string, boolean>>();
  for (const s of sessions.values()) {
    const f = of(s.place_version);
    if (!s.ended_at) {
      f.sessions.open += 1;
      continue;
    }
    const clean = s.errors.server + s.errors.client === 0;
    f.sessions.ended += 1;
    if (clean) f.sessions.error_free += 1;
    const users = usersByVersion.get(s.place_version) ?? new Map<string, boolean>();
    usersByVersion.set(s.place_version, users);
    users.set(s.user_id, (users.get(s.user_id) ?? true) && clean);
  }
  for (const [v, users] of usersByVersion) {
    const f = of(v);
    f.players.distinct = users.size;
    f.players.error_free = [...users.values()].filter(Boolean).length;
  }
  for (const x of samples.values()) of(x.place_version).player_minutes += x.players;
  for (const f of versions.values()) {
    f.sessions.error_free_rate = f.sessions.ended === 0 ? null : f.sessions.error_free / f.sessions.ended;
    f.players.error_free_rate = f.players.distinct === 0 ? null : f.players.error_free / f.players.distinct;
  }
  const minutes = new Map<string, { servers: Map<string, number>; players: Map<string, number> }>();
  for (const x of samples.values()) {
    const minute = x.at.slice(0, 16);
    const m = minutes.get(minute) ?? { servers: new Map(), players: new Map() };
    minutes.set(minute, m);
    m.servers.set(x.place_version, (m.servers.get(x.place_version) ?? 0) + 1);
    m.players.set(x.place_version, (m.players.get(x.place_version) ?? 0) + x.players);
  }
  const adoption: Record<string, Record<string, { servers_share: number; players_share: number | null }>> = {};
  for (const [minute, m] of [...minutes].sort(([a], [b]) => a.localeCompare(b))) {
    const serverTotal = [...m.servers.values()].reduce((a, b) => a + b, 0);
    const playerTotal = [...m.players.values()].reduce((a, b) => a + b, 0);
    adoption[minute] = Object.fromEntries(
      [...m.servers.keys()].sort().map((v) => [v, { servers_share: m.servers.get(v)! / serverTotal, players_share: playerTotal === 0 ? null : m.players.get(v)! / playerTotal }]),
    );
  }
  return { versions: Object.fromEntries([...versions].sort(([a], [b]) => a.localeCompare(b))), adoption, servers, sessions, samples };
}
