/**
 * Client reports (docs/api.md, "Client reports"), modelled on Sentry's client_report item: what an
 * SDK dropped before it could send it, by category and reason, and the SDK's last own warning. One
 * arrives as the optional `client_report` of a native batch, or alone on POST /api/client-reports.
 * It is validated whole (zod) and added per project × UTC day × category × reason; with an
 * Idempotency-Key it is added once however often it is sent (db/client-reports.ts).
 */
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { addClientReport, type ClientReport, type ReportKey } from "../../db/client-reports.js";
import { transaction } from "../../db/transaction.js";
import type { Config } from "~/env.server";
import { conflict, invalidPayload, issuePath, type ErrorDetail } from "~/http.server";
import { withinWriteDeadline } from "~/db-deadline.server";
import { cutText, storable } from "~/text.server";
import { nullsAbsent, safeParse, timestamp } from "./fields.server";

export const MAX_DISCARDED = 100;
export const MAX_QUANTITY = 1_000_000_000;
export const MAX_WARNING_CHARS = 1000;
/** the limit of POST /api/client-reports: a full report is well under 16 KiB */
export const CLIENT_REPORT_MAX_BYTES = 64 * 1024;
/** an `at` further ahead than this is the receive time, as an event's timestamp is */
const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

const NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;
const name = z
  .string({ error: "is required and must be a string" })
  .regex(NAME_RE, "must be 1 to 64 characters: a lowercase letter, then lowercase letters, digits or _");

const discard = z.preprocess(
  nullsAbsent,
  z.object({
    category: name,
    reason: name,
    quantity: z
      .number({ error: "is required and must be a number" })
      .int("must be an integer")
      .min(0, "must not be negative")
      .max(MAX_QUANTITY, `must be at most ${MAX_QUANTITY}`),
  }),
);

const lastWarning = z.preprocess(
  nullsAbsent,
  z.object({
    message: z.string({ error: "is required and must be a string" }).refine((m) => m.trim() !== "", "must not be empty"),
    at: timestamp.optional(),
  }),
);

export const ReportSchema = z.preprocess(
  nullsAbsent,
  z
    .object({
      discarded_events: z
        .array(z.unknown(), { error: "must be an array" })
        .max(MAX_DISCARDED, `must have at most ${MAX_DISCARDED} entries`)
        // the length is checked before any entry is parsed
        .pipe(z.array(discard))
        .optional(),
      last_warning: lastWarning.optional(),
    })
    .refine((r) => (r.discarded_events?.length ?? 0) > 0 || r.last_warning !== undefined, "must have discarded_events entries or a last_warning"),
);

/**
 * A client report read from `input`, or the details of what is wrong with it (paths under `prefix`,
 * such as `client_report`). At most MAX_DISCARDED details: one per bad entry comes first.
 */
export function parseClientReport(input: unknown, prefix: PropertyKey[], receivedAt = Date.now()): { report: ClientReport } | { details: ErrorDetail[] } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { details: [{ path: issuePath(prefix), message: "must be an object with discarded_events and/or last_warning" }] };
  }
  const r = safeParse(ReportSchema, input);
  if (!r.success) {
    const details = r.error.issues.map((issue) => ({ path: issuePath([...prefix, ...issue.path]), message: issue.message }));
    return { details: details.slice(0, MAX_DISCARDED) };
  }
  const w = r.data.last_warning;
  return {
    report: {
      discarded: (r.data.discarded_events ?? []).map((d) => ({ category: d.category, reason: d.reason, quantity: d.quantity })),
      lastWarning: w
        ? {
            message: cutText(storable(w.message), MAX_WARNING_CHARS),
            at: new Date(w.at === undefined || w.at > receivedAt + FUTURE_TOLERANCE_MS ? receivedAt : w.at),
          }
        : null,
    },
  };
}

/** What recording a report uses (the process's Services hold it). */
export type ReportDeps = { sql: Sql; config: Pick<Config, "dbTimeoutMs"> };

/**
 * Adds a report, exactly once under its key: resolves only when the statement that adds it
 * committed (also when the connection was lost around COMMIT), and a key already used with another
 * body is a 409. Bounded like an ingest write: a stalled database answers 503.
 */
export async function recordClientReport(deps: ReportDeps, projectId: string, report: ClientReport, key: ReportKey | null): Promise<void> {
  const deadline = Date.now() + deps.config.dbTimeoutMs;
  const outcome = await withinWriteDeadline(
    deps,
    transaction(deps.sql, (tx) => addClientReport(tx, projectId, report, key), { deadline, attempts: 3 }),
  );
  if (outcome === "conflict") {
    throw conflict("This Idempotency-Key was already used with a different client report; send a new report with a new key.");
  }
}

/** POST /api/client-reports: the body is the report itself. */
export async function ingestClientReport(deps: ReportDeps, projectId: string, body: unknown, key: ReportKey | null): Promise<{ success: true }> {
  const parsed = parseClientReport(body, []);
  if ("details" in parsed) {
    const first = parsed.details[0];
    throw invalidPayload(`Invalid client report: ${first.path} ${first.message}.`, parsed.details);
  }
  await recordClientReport(deps, projectId, parsed.report, key);
  return { success: true };
}
