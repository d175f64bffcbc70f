import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { writeReportTx, type HealthReport, type SampleReport, type SessionReport } from "../../db/health.js";
import { claimPushKey, recordPush } from "../../db/idempotency.js";
import { transaction } from "../../db/transaction.js";
import type { Config } from "~/env.server";
import { conflict, invalidPayload } from "~/http.server";
import { withinWriteDeadline } from "~/db-deadline.server";
import { bodyHash } from "~/ingest/idempotency.server";
import { parseOr400 } from "~/input.server";

/** POST /api/health: one game server's state, its player sessions and its health samples (docs/api.md). */

export const MAX_SESSIONS = 1000;
export const MAX_SAMPLES = 120;
export const CLOSE_REASONS = ["Unknown", "RobloxMaintenance", "DeveloperShutdown", "DeveloperUpdate", "ServerEmpty", "OutOfMemory"] as const;
export const EXIT_REASONS = ["Unknown", "PlatformKick", "CreatorKick", "ServerClosed"] as const;
/** A time this far ahead of the receive time is the receive time (as for events). */
export const FUTURE_SKEW_MS = 5 * 60_000;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:?\d{2})$/;
const time = z
  .string()
  .refine((s) => ISO_TIME.test(s.trim()) && !Number.isNaN(new Date(s.trim()).getTime()), "must be an ISO 8601 time such as 2026-11-29T10:00:00.000Z")
  .transform((s) => new Date(s.trim()));
const id = z.string().trim().min(1, "must be 1 to 100 characters").max(100, "must be 1 to 100 characters");
const digits = z.union([z.string().trim().regex(/^\d{1,19}$/, "must be a string of digits"), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)]).transform(String);
const count = z.number().int("must be a whole number").nonnegative("must not be negative").max(2_147_483_647);
const amount = z.number().finite().nonnegative("must not be negative");
const nullable = <T extends z.ZodTypeAny>(t: T) => t.nullish().transform((v) => v ?? null);
const smallMap = (max: number) =>
  z
    .record(z.string().max(100, "keys must be at most 100 characters"), z.number().finite())
    .refine((m) => Object.keys(m).length <= max, `must have at most ${max} entries`);

export const schema = z.object({
  server: z.object({
    job_id: id,
    place_id: nullable(digits),
    place_version: z.union([z.string().trim().min(1, "must not be empty").max(256, "must be at most 256 characters"), z.number().int().nonnegative()]).transform(String),
    environment: nullable(z.string().trim().min(1, "must not be empty").max(256, "must be at most 256 characters")),
    started_at: time,
    ended_at: nullable(time),
    close_reason: nullable(z.enum(CLOSE_REASONS, { message: `must be one of ${CLOSE_REASONS.join(", ")}` })),
  }),
  sessions: z
    .array(
      z.object({
        id,
        user_id: nullable(digits),
        started_at: time,
        ended_at: nullable(time),
        exit_reason: nullable(z.enum(EXIT_REASONS, { message: `must be one of ${EXIT_REASONS.join(", ")}` })),
        errors: nullable(z.object({ server: count.default(0), client: count.default(0) })),
      }),
    )
    .max(MAX_SESSIONS, `must have at most ${MAX_SESSIONS} sessions`)
    .default([]),
  samples: z
    .array(
      z.object({
        at: time,
        players: count,
        // null: the engine did not give it (the SDK reads every measure guarded); the sample still counts
        memory_mb: nullable(amount),
        heartbeat_ms: nullable(amount),
        physics_fps: nullable(amount),
        instances: nullable(count),
        data_in_kbps: nullable(amount),
        data_out_kbps: nullable(amount),
        ping_ms: nullable(z.object({ p50: nullable(amount), p90: nullable(amount) })),
        memory_tags: nullable(smallMap(8)),
        sdk: nullable(z.object({ queued: nullable(count), dropped: nullable(count) })),
        datastore_budget: nullable(smallMap(12)),
      }),
    )
    .max(MAX_SAMPLES, `must have at most ${MAX_SAMPLES} samples`)
    .default([]),
});

export type HealthAnswer = { server: string; sessions: number; samples: number };

/**
 * The body as a report with its clock rules applied (docs/health.md): a time more than 5 minutes
 * ahead of `now` is `now`; a time before the retention window is its start; an end before its start
 * is the start. A session id or sample time repeated in one report is one session or sample (the
 * latest state of a session, the first sample).
 */
export function parseReport(body: unknown, now: Date, retentionDays: number): { report: HealthReport; answer: HealthAnswer } {
  const b = parseOr400(schema, body);
  const oldest = now.getTime() - retentionDays * 86_400_000;
  const clamp = (t: Date) => new Date(Math.max(oldest, t.getTime() > now.getTime() + FUTURE_SKEW_MS ? now.getTime() : t.getTime()));
  const after = (t: Date | null, start: Date) => (t === null ? null : new Date(Math.max(clamp(t).getTime(), start.getTime())));
  const startedAt = clamp(b.server.started_at);
  const sessions = new Map<string, SessionReport>();
  for (const s of b.sessions) {
    const started = clamp(s.started_at);
    const next: SessionReport = {
      id: s.id,
      userId: s.user_id,
      startedAt: started,
      endedAt: after(s.ended_at, started),
      exitReason: s.exit_reason,
      errorsServer: s.errors?.server ?? 0,
      errorsClient: s.errors?.client ?? 0,
    };
    const prev = sessions.get(s.id);
    sessions.set(
      s.id,
      prev
        ? {
            ...prev,
            endedAt: prev.endedAt ?? next.endedAt,
            exitReason: prev.endedAt ? prev.exitReason : next.exitReason,
            errorsServer: Math.max(prev.errorsServer, next.errorsServer),
            errorsClient: Math.max(prev.errorsClient, next.errorsClient),
          }
        : next,
    );
  }
  const samples = new Map<number, SampleReport>();
  for (const s of b.samples) {
    const at = clamp(s.at);
    if (samples.has(at.getTime())) continue;
    samples.set(at.getTime(), {
      at,
      players: s.players,
      memoryMb: s.memory_mb,
      heartbeatMs: s.heartbeat_ms,
      physicsFps: s.physics_fps,
      instances: s.instances,
      dataInKbps: s.data_in_kbps,
      dataOutKbps: s.data_out_kbps,
      pingP50Ms: s.ping_ms?.p50 ?? null,
      pingP90Ms: s.ping_ms?.p90 ?? null,
      sdkQueued: s.sdk?.queued ?? null,
      sdkDropped: s.sdk?.dropped ?? null,
      memoryTags: s.memory_tags,
      datastoreBudget: s.datastore_budget,
    });
  }
  const report: HealthReport = {
    server: {
      jobId: b.server.job_id,
      placeId: b.server.place_id,
      placeVersion: b.server.place_version,
      environment: b.server.environment ?? "production",
      startedAt,
      endedAt: after(b.server.ended_at, startedAt),
      closeReason: b.server.ended_at ? (b.server.close_reason ?? "Unknown") : null,
    },
    sessions: [...sessions.values()],
    samples: [...samples.values()],
  };
  return { report, answer: { server: b.server.job_id, sessions: b.sessions.length, samples: b.samples.length } };
}

export type HealthDeps = { sql: Sql; config: Pick<Config, "dbTimeoutMs" | "retentionDays"> };

/**
 * POST /api/health. Every field is state, so a retry is exact with or without an Idempotency-Key;
 * with one, a reuse with another body is a 409 like every keyed ingest.
 */
export async function postHealth(deps: HealthDeps, projectId: string, body: unknown, key: string | null = null): Promise<HealthAnswer> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send an object with `server`, and `sessions` and `samples` arrays.");
  }
  const { report, answer } = parseReport(body, new Date(), deps.config.retentionDays);
  const hash = key === null ? null : bodyHash({ health_endpoint: body });
  const deadline = Date.now() + deps.config.dbTimeoutMs;
  return withinWriteDeadline(
    deps,
    transaction(
      deps.sql,
      async (tx) => {
        const recorded = key !== null && hash && (await claimPushKey(tx, projectId, key, hash));
        if (recorded && !recorded.sameBody) throw conflict("This Idempotency-Key was already used with a different body; send a new report with a new key.");
        if (recorded) return recorded.answer as HealthAnswer;
        await writeReportTx(tx, projectId, report, new Date());
        if (key !== null && hash) await recordPush(tx, projectId, key, hash, answer);
        return answer;
      },
      { deadline, attempts: 3 },
    ),
  );
}
