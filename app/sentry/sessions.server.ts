import { createHash } from "node:crypto";
import type { Sql } from "../../db/client.js";
import { writeExternalSessionsTx, type ExternalSession } from "../../db/health.js";
import { transaction } from "../../db/transaction.js";
import { FUTURE_SKEW_MS } from "~/health/report.server";
import { isStorable } from "~/text.server";

/**
 * Sentry release health (Relay's `session` and `sessions` payloads) as player sessions of release
 * health (docs/sentry.md "Sessions", docs/health.md). Like Relay, an invalid session is dropped
 * without failing the envelope; what fits is kept:
 *
 * - `session` (one session, sent again on each change): `sid` → the session's id, `did` → user id
 *   when it is a string of digits (a Roblox user id; other ids are dropped), `attrs.release` → place
 *   version (required, as Relay requires it), `attrs.environment` (default production), `started`,
 *   `status` and `errors`. `ok` is an open session; `exited` ends it at `started + duration` (or
 *   `timestamp`); `errored` ends it with at least one error; `crashed` and `abnormal` end it never
 *   error-free. `seq`, `init`, `ip_address`, `user_agent` are dropped.
 * - `sessions` (request-mode aggregates per started minute: `exited`, `errored`, `abnormal`,
 *   `crashed` counts, optional `did`): each count becomes that many ended sessions of that minute,
 *   with ids derived from the item (the envelope's `sent_at` or the payload's hash), so a resent
 *   envelope is counted once. Their players are unknown (no user id unless `did` is digits).
 *
 * Exit reasons of these sessions: `Exited`, `Errored`, `Crashed`, `Abnormal`. They have no game
 * server (no JobId), so they count in sessions and players, never in servers or samples.
 */

/** Synthetic sessions one `sessions` item may stand for at most (the rest of its counts are dropped). */
export const MAX_AGGREGATE_SESSIONS = 10_000;

const TERMINAL: Record<string, { exit: string; crashed: boolean; minErrors: number }> = {
  exited: { exit: "Exited", crashed: false, minErrors: 0 },
  errored: { exit: "Errored", crashed: false, minErrors: 1 },
  crashed: { exit: "Crashed", crashed: true, minErrors: 0 },
  abnormal: { exit: "Abnormal", crashed: true, minErrors: 0 },
};

const str = (v: unknown, max = 256) => (typeof v === "string" && v.trim() !== "" && v.length <= max && isStorable(v) ? v.trim() : null);
const digits = (v: unknown) => (typeof v === "string" && /^\d{1,19}$/.test(v) ? v : typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : null);
const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.min(Math.floor(v), MAX_AGGREGATE_SESSIONS) : 0);

function time(v: unknown, now: number, oldest: number): Date | null {
  if (typeof v !== "string" && typeof v !== "number") return null;
  const t = typeof v === "number" ? v * 1000 : Date.parse(v);
  if (!Number.isFinite(t)) return null;
  return new Date(Math.max(oldest, t > now + FUTURE_SKEW_MS ? now : t));
}

const object = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

function parse(payload: Buffer): Record<string, unknown> | null {
  try {
    return object(JSON.parse(payload.toString("utf8")));
  } catch {
    return null;
  }
}

/** One `session` payload, or null when it cannot be one (dropped). */
export function mapSession(payload: Buffer, now: number, oldest: number): ExternalSession | null {
  const s = parse(payload);
  if (!s) return null;
  const attrs = object(s.attrs) ?? {};
  const sid = str(s.sid, 100);
  const release = str(attrs.release);
  const started = time(s.started, now, oldest);
  if (!sid || !release || !started) return null;
  const status = typeof s.status === "string" ? s.status : "ok";
  const terminal = TERMINAL[status];
  if (!terminal && status !== "ok") return null;
  const errors = count(s.errors);
  let endedAt: Date | null = null;
  if (terminal) {
    const duration = typeof s.duration === "number" && Number.isFinite(s.duration) && s.duration >= 0 ? s.duration : null;
    endedAt = duration !== null ? new Date(Math.min(started.getTime() + duration * 1000, now)) : (time(s.timestamp, now, oldest) ?? started);
  }
  return {
    id: `sentry:${sid}`,
    userId: digits(s.did),
    placeVersion: release,
    environment: str(attrs.environment) ?? "production",
    startedAt: started,
    endedAt,
    exitReason: terminal?.exit ?? null,
    errors: Math.max(errors, terminal?.minErrors ?? 0),
    crashed: terminal?.crashed ?? false,
  };
}

/** One `sessions` payload as ended sessions (empty when it holds none it can read). */
export function mapAggregates(payload: Buffer, sentAt: string | null, now: number, oldest: number): ExternalSession[] {
  const p = parse(payload);
  if (!p || !Array.isArray(p.aggregates)) return [];
  const attrs = object(p.attrs) ?? {};
  const release = str(attrs.release);
  if (!release) return [];
  const environment = str(attrs.environment) ?? "production";
  const origin = sentAt ?? createHash("sha256").update(payload).digest("hex");
  const out: ExternalSession[] = [];
  for (const raw of p.aggregates) {
    const a = object(raw);
    const started = a && time(a.started, now, oldest);
    if (!a || !started) continue;
    const userId = digits(a.did);
    const key = createHash("sha256").update(JSON.stringify([origin, release, environment, a.started, a.did ?? null])).digest("hex").slice(0, 32);
    for (const [status, t] of Object.entries(TERMINAL)) {
      const n = count(a[status]);
      for (let i = 0; i < n && out.length < MAX_AGGREGATE_SESSIONS; i++) {
        out.push({
          id: `sentry-aggregate:${key}:${status}:${i}`,
          userId,
          placeVersion: release,
          environment,
          startedAt: started,
          endedAt: started,
          exitReason: t.exit,
          errors: t.minErrors,
          crashed: t.crashed,
        });
      }
    }
  }
  return out;
}

/** The sessions of an envelope's `session`/`sessions` items. */
export function mapSentrySessions(
  items: { type: "session" | "sessions"; payload: Buffer }[],
  header: Record<string, unknown>,
  retentionDays: number,
  now = Date.now(),
): ExternalSession[] {
  const oldest = now - retentionDays * 86_400_000;
  const sentAt = typeof header.sent_at === "string" ? header.sent_at : null;
  const byId = new Map<string, ExternalSession>();
  for (const item of items) {
    const sessions = item.type === "session" ? [mapSession(item.payload, now, oldest)] : mapAggregates(item.payload, sentAt, now, oldest);
    // a session updated twice in one envelope: its last update, which the upsert merges forward anyway
    for (const s of sessions) if (s) byId.set(s.id, s);
  }
  return [...byId.values()].slice(0, MAX_AGGREGATE_SESSIONS);
}

/** Writes them (one transaction; forward-only like a game server's sessions). */
export async function writeSentrySessions(deps: { sql: Sql; config: { dbTimeoutMs: number } }, projectId: string, sessions: ExternalSession[]): Promise<void> {
  if (sessions.length === 0) return;
  await transaction(deps.sql, (tx) => writeExternalSessionsTx(tx, projectId, sessions), {
    deadline: Date.now() + deps.config.dbTimeoutMs,
    attempts: 3,
  });
}
