/**
 * What a server or session row counts for in the health rollups (migration 118), as a pure function
 * of the row. A write that changes a row adds `cells(new) − cells(old)`, in the transaction that
 * changed it: so the rollups equal a recount of the rows whatever the order, repetition or overlap
 * of the reports (a revived server, a session ended by the silence job and reopened, errors raised
 * after the end), and a change that moves nothing adds nothing.
 */

export type ServerState = {
  environment: string;
  place_version: string;
  started_at: Date;
  ended_at: Date | null;
  close_reason: string | null;
  lost_at: Date | null;
};

export type SessionState = {
  environment: string;
  place_version: string;
  user_id: string | null;
  started_at: Date;
  ended_at: Date | null;
  /** errors.server + errors.client */
  errors: number;
  crashed: boolean;
  exit_reason: string | null;
};

export const HOUR_FIELDS = [
  "samples",
  "player_minutes",
  "servers_started",
  "servers_ended",
  "servers_oom",
  "servers_abnormal",
  "sessions_started",
  "sessions_ended",
  "sessions_error_free",
] as const;
export type HourField = (typeof HOUR_FIELDS)[number];
export type HourCell = { environment: string; place_version: string; hour: string } & Record<HourField, number>;

export const PLAYER_FIELDS = ["sessions_started", "sessions_ended", "sessions_errored"] as const;
export type PlayerField = (typeof PLAYER_FIELDS)[number];
export type PlayerDayCell = { environment: string; place_version: string; day: string; user_id: string } & Record<PlayerField, number>;

export const hourOf = (t: Date) => new Date(Math.floor(t.getTime() / 3_600_000) * 3_600_000).toISOString();
export const minuteOf = (t: Date) => new Date(Math.floor(t.getTime() / 60_000) * 60_000).toISOString();
export const dayOf = (t: Date) => t.toISOString().slice(0, 10);

/**
 * A player session is error-free when it ended without an error; a session its server's abnormal end
 * closed (ServerLost) or a Sentry session that crashed never is.
 */
export const errorFree = (s: SessionState) => s.ended_at !== null && s.errors === 0 && !s.crashed && s.exit_reason !== "ServerLost";

/** Sums of signed cells by key, zero cells left out. */
export class Cells {
  readonly hours = new Map<string, HourCell>();
  readonly players = new Map<string, PlayerDayCell>();
  /** open sessions per [version, environment] (health_open) */
  readonly open = new Map<string, { environment: string; place_version: string; n: number }>();

  addHour(environment: string, place_version: string, at: Date, field: HourField, n: number) {
    if (n === 0) return;
    const hour = hourOf(at);
    const key = JSON.stringify([place_version, hour, environment]);
    let c = this.hours.get(key);
    if (!c) {
      c = { environment, place_version, hour, ...(Object.fromEntries(HOUR_FIELDS.map((f) => [f, 0])) as Record<HourField, number>) };
      this.hours.set(key, c);
    }
    c[field] += n;
  }

  addPlayer(environment: string, place_version: string, at: Date, user_id: string, field: PlayerField, n: number) {
    if (n === 0) return;
    const day = dayOf(at);
    const key = JSON.stringify([place_version, day, environment, user_id]);
    let c = this.players.get(key);
    if (!c) {
      c = { environment, place_version, day, user_id, sessions_started: 0, sessions_ended: 0, sessions_errored: 0 };
      this.players.set(key, c);
    }
    c[field] += n;
  }

  server(s: ServerState | null, sign: 1 | -1) {
    if (!s) return;
    this.addHour(s.environment, s.place_version, s.started_at, "servers_started", sign);
    if (s.ended_at) {
      this.addHour(s.environment, s.place_version, s.ended_at, "servers_ended", sign);
      if (s.close_reason === "OutOfMemory") this.addHour(s.environment, s.place_version, s.ended_at, "servers_oom", sign);
    } else if (s.lost_at) {
      this.addHour(s.environment, s.place_version, s.lost_at, "servers_abnormal", sign);
    }
  }

  session(s: SessionState | null, sign: 1 | -1) {
    if (!s) return;
    if (!s.ended_at) {
      const key = JSON.stringify([s.place_version, s.environment]);
      const c = this.open.get(key) ?? { environment: s.environment, place_version: s.place_version, n: 0 };
      c.n += sign;
      this.open.set(key, c);
    }
    this.addHour(s.environment, s.place_version, s.started_at, "sessions_started", sign);
    if (s.user_id) this.addPlayer(s.environment, s.place_version, s.started_at, s.user_id, "sessions_started", sign);
    if (!s.ended_at) return;
    this.addHour(s.environment, s.place_version, s.ended_at, "sessions_ended", sign);
    if (errorFree(s)) this.addHour(s.environment, s.place_version, s.ended_at, "sessions_error_free", sign);
    if (s.user_id) {
      this.addPlayer(s.environment, s.place_version, s.ended_at, s.user_id, "sessions_ended", sign);
      if (!errorFree(s)) this.addPlayer(s.environment, s.place_version, s.ended_at, s.user_id, "sessions_errored", sign);
    }
  }

  /** The changed cells, sorted by key (the rollups' lock order), zero ones left out. */
  hourCells(): HourCell[] {
    return [...this.hours.entries()]
      .filter(([, c]) => HOUR_FIELDS.some((f) => c[f] !== 0))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => c);
  }

  openCells(): { environment: string; place_version: string; n: number }[] {
    return [...this.open.entries()]
      .filter(([, c]) => c.n !== 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => c);
  }

  playerCells(): PlayerDayCell[] {
    return [...this.players.entries()]
      .filter(([, c]) => PLAYER_FIELDS.some((f) => c[f] !== 0))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => c);
  }
}

/** Server age buckets of the memory-by-age series, in minutes: [from, to) (to null: and older). */
export const AGE_BUCKETS: readonly [number, number | null][] = [
  [0, 10],
  [10, 30],
  [30, 60],
  [60, 120],
  [120, 240],
  [240, 480],
  [480, null],
];

export function ageBucket(ageMinutes: number): number {
  for (let i = 0; i < AGE_BUCKETS.length; i++) {
    const to = AGE_BUCKETS[i][1];
    if (to === null || ageMinutes < to) return i;
  }
  return AGE_BUCKETS.length - 1;
}

/** Histogram bins are 1% wide (log scale): a value read back from its bin is within 0.5% of it. */
export const BIN_BASE = 1.01;
export const binOf = (v: number) => Math.floor(Math.log(Math.max(v, 0.01)) / Math.log(BIN_BASE));
/** The value a bin stands for: its geometric middle. */
export const binValue = (bin: number) => Math.pow(BIN_BASE, bin + 0.5);
/**
 * Histogram metrics: memory by server age bucket (memory by age), heartbeat (age bucket 0), and the
 * same memory bins without the age split (age bucket 0; migration 131), which the releases list's
 * percentiles read: a seventh of the rows of metric 1 over the same window.
 */
export const METRIC = { memory_mb: 1, heartbeat_ms: 2, memory_mb_any_age: 3 } as const;
