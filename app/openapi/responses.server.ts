/**
 * The API's answers as zod schemas, one per shape: the OpenAPI document (document.server.ts) is made
 * from them, and the contract audit checks every answer the integration suite receives against that
 * document. An answer whose TypeScript type exists elsewhere is tied to it at compile time
 * (`same<…>()` below), so the code and the document cannot describe two different shapes.
 *
 * Objects are closed (no field beyond the listed ones) where the shape is written out here: a new
 * field then fails the audit until it is documented. Rows of the read APIs whose columns come from
 * the database as they are (`looseObject`) name the fields a client relies on and allow more.
 */
import { z } from "zod";
import type { Accepted } from "~/ingest/accept.server";
import type { PushAnswer as PushAnswerType } from "~/economy/ingest.server";
import type { FlowsAnswer as FlowsAnswerType } from "~/economy/flows.server";
import type { HealthAnswer as HealthAnswerType } from "~/health/report.server";
import type { ErrorDetail } from "~/http.server";

/** Compile-time check that a schema's output is exactly a type the code uses. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(): T | undefined => undefined;

const count = z.number().int().nonnegative();
const isoTime = z.string().describe("ISO 8601 UTC time");
const id = z.string();

// ---- every error -----------------------------------------------------------------------------------

export const ErrorDetailSchema = z.object({ path: z.string(), message: z.string() });
/** The one error body (app/http.server.ts, errorResponse), for every 4xx and 5xx. */
export const ErrorBody = z
  .object({
    error: z.string().describe("a stable code: invalid_payload, invalid_query, unauthorized, forbidden, not_found, method_not_allowed, conflict, payload_too_large, unsupported_media_type, rate_limited, internal, unavailable, …"),
    message: z.string().describe("what went wrong, for a person"),
    details: z.array(ErrorDetailSchema).optional().describe("one entry per invalid field"),
  })
  .meta({ id: "Error" });
same<Same<z.output<typeof ErrorDetailSchema>, ErrorDetail>>();

/** POST /api/auth/login's 401 when the password is right and a second factor is needed. */
export const SecondFactorRequired = z
  .object({ error: z.literal("second_factor_required"), message: z.string(), challenge: z.string(), expires_at: isoTime })
  .meta({ id: "SecondFactorRequired" });

// ---- health ----------------------------------------------------------------------------------------

export const Liveness = z.object({ status: z.literal("ok") }).meta({ id: "Liveness" });

export const Readiness = z
  .object({
    status: z.literal("ok"),
    database: z.literal("ok"),
    counters: z.object({ status: z.enum(["ok", "behind"]), pending: count, oldest_s: z.number().nonnegative() }),
    schema: z.union([z.object({ status: z.literal("current") }), z.object({ status: z.literal("newer"), unknown_migrations: z.array(z.string()) })]),
  })
  .meta({ id: "Readiness" });
export const NotReady = z.object({ status: z.literal("unavailable"), database: z.literal("unreachable") }).meta({ id: "NotReady" });

// ---- ingest ----------------------------------------------------------------------------------------

export const IngestAnswer = z
  .object({
    success: z.literal(true),
    count: count.describe("events accepted"),
    occurrences: count.describe("the sum of their counts"),
    throttled: count.describe("events not stored as raw rows"),
    ignored: count.optional().describe("events dropped by the project's grouping rules"),
  })
  .meta({ id: "IngestAnswer" });
same<Same<Omit<z.output<typeof IngestAnswer>, "success">, Accepted>>();

export const Success = z.object({ success: z.literal(true) }).meta({ id: "Success" });

export const SentryAnswer = z.object({ id: z.string().optional().describe("the event's id (the first event of an envelope), or the envelope's") }).meta({ id: "SentryAnswer" });

export const FlowsAnswer = z
  .object({ stored: count, skipped: count, skipped_reasons: z.array(z.object({ index: count, reason: z.string() })) })
  .meta({ id: "FlowsAnswer" });
same<Same<z.output<typeof FlowsAnswer>, FlowsAnswerType>>();

export const PushAnswer = z
  .object({
    stored: count,
    skipped: count,
    skipped_values: count,
    skipped_reasons: z.array(
      z.union([
        z.object({ index: count, user_id: z.string().nullable(), reason: z.string() }),
        z.object({ index: count, user_id: z.string(), currency: z.string(), path: z.string(), reason: z.string() }),
      ]),
    ),
    flows: FlowsAnswer.optional(),
  })
  .meta({ id: "PushAnswer" });
same<Same<z.output<typeof PushAnswer>, PushAnswerType>>();

export const HealthAnswer = z.object({ server: z.string(), sessions: count, samples: count }).meta({ id: "HealthAnswer" });
same<Same<z.output<typeof HealthAnswer>, HealthAnswerType>>();

// ---- read API (/api/v1) ----------------------------------------------------------------------------

/** A row of the read API as the database gives it: the listed fields, and more. */
const row = <T extends z.core.$ZodLooseShape>(shape: T) => z.looseObject(shape);

export const Group = row({ id, fingerprint: z.string(), message: z.string(), title: z.string(), level: z.string(), status: z.string(), count: z.union([z.number(), z.string()]), first_seen: isoTime, last_seen: isoTime }).meta({ id: "Group" });
export const Event = row({ id, message: z.string(), level: z.string(), timestamp: isoTime }).meta({ id: "Event" });

const page = { total: count, limit: count, offset: count };
export const ErrorList = z
  .object({ data: z.array(z.union([Group, Event])), ...page, grouped: z.boolean(), search_window_full: z.literal(true).optional() })
  .meta({ id: "ErrorList" });

/** An answer whose fields are described in docs/api.md and not yet written out here: any JSON object. */
export const Described = (name: string) => z.looseObject({}).meta({ id: name });

/** `{data: [...]}`, the Team API's lists. */
export const DataList = (name: string) => z.object({ data: z.array(z.looseObject({})) }).meta({ id: name });

// ---- Team API ----------------------------------------------------------------------------------------

export const PublicUser = z.object({ id, email: z.string(), created_at: isoTime, must_change_password: z.boolean() }).meta({ id: "User" });
export const Project = row({ id, name: z.string() }).meta({ id: "Project" });
export const Flag = (field: string) => z.object({ [field]: z.literal(true) }).meta({ id: `${field[0].toUpperCase()}${field.slice(1).replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}` });
