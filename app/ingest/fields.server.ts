/**
 * Field rules shared by the native protocol's parsers (events in native.server.ts, client reports in
 * client-report.server.ts).
 */
import { z } from "zod";
import { MIN_TIMESTAMP_MS } from "./accept.server";

const ISO_RE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * Treat JSON null like an absent field: Luau's JSON encoder never sends nil, other clients may send
 * null. Done once per object (a copy without its null fields, only when it has one) rather than by a
 * preprocess step on each field, which every field paid on every event.
 */
export function nullsAbsent(v: unknown): unknown {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  let out: Record<string, unknown> | undefined;
  for (const k in v) {
    if ((v as Record<string, unknown>)[k] !== null) continue;
    out ??= { ...(v as Record<string, unknown>) };
    delete out[k];
  }
  return out ?? v;
}

// before the Unix epoch is refused (year 0000 is not a date PostgreSQL accepts); the future is clamped in accept
export const timestamp = z.string().transform((v, ctx) => {
  const ms = ISO_RE.test(v.trim()) ? Date.parse(v.trim()) : NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: "custom", message: "must be an ISO 8601 date-time such as 2026-11-22T10:00:00.000Z" });
    return z.NEVER;
  }
  if (ms < MIN_TIMESTAMP_MS) {
    ctx.addIssue({ code: "custom", message: "must not be before 1970-01-01T00:00:00Z" });
    return z.NEVER;
  }
  return ms;
});

/**
 * zod's safeParse with its plain error class: the same issues, without the stack trace the default
 * (an Error) captures, which only the issues are read from.
 */
export const safeParse = z.core._safeParse(z.core.$ZodError) as <T extends z.ZodType>(schema: T, value: unknown) => z.ZodSafeParseResult<z.output<T>>;

