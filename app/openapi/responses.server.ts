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
import type { twoFactorStatus, startEnrollment } from "~/accounts/two-factor.server";
import type { toPublicUser } from "~/accounts/users.server";
import type { keyStatus, startSync, syncStatus } from "~/economy/sync.server";
import type { getRequirementFor } from "~/team/two-factor.server";
import type { ingestClientReport } from "~/ingest/client-report.server";
import type { dispatchFromRequest } from "~/alerts/internal.server";

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

export const SyncStarted = z.object({ job_id: z.string() }).meta({ id: "SyncStarted" });
export const DispatchResult = z.object({ sent: count, failed: count }).meta({ id: "DispatchResult" });

export const HealthAnswer = z.object({ server: z.string(), sessions: count, samples: count }).meta({ id: "HealthAnswer" });
same<Same<z.output<typeof HealthAnswer>, HealthAnswerType>>();

// ---- read API (/api/v1) ----------------------------------------------------------------------------

/** A row of the read API as the database gives it: the listed fields, and more. */
const row = <T extends z.core.$ZodLooseShape>(shape: T) => z.looseObject(shape);
const nullableString = z.string().nullable();
const userId = z.union([z.string(), z.number()]).nullable();

export const Group = row({
  id,
  fingerprint: z.string(),
  message: z.string(),
  title: nullableString,
  level: z.string(),
  status: z.string(),
  count: count,
  user_count: count,
  first_seen: isoTime,
  last_seen: isoTime,
  culprit: nullableString,
}).meta({ id: "Group" });
export const Event = row({ id, group_id: id, message: z.string(), level: z.string(), timestamp: isoTime, user_id: userId.optional() }).meta({ id: "Event" });
const Series = z.array(z.object({ bucket: isoTime, count })).meta({ id: "HourlySeries" });

const page = { total: count, limit: count, offset: count };
/** A list whose total is exact up to 10,000 matches (docs/api.md, "Totals"). */
const cappedPage = { ...page, total_exact: z.boolean() };
export const ErrorList = z
  .object({ data: z.array(z.union([Group, Event])), ...cappedPage, grouped: z.boolean(), search_window_full: z.literal(true).optional() })
  .meta({ id: "ErrorList" });

export const IssueDetail = z
  .object({
    group: Group,
    series: Series,
    events: z.array(Event),
    environments: z.array(row({ environment: z.string(), count })),
    versions: z.array(row({})),
    players: z.array(row({ user_id: userId, last_seen: isoTime })),
    learned_template: z.unknown().nullable(),
  })
  .meta({ id: "IssueDetail" });
export const IssueEvents = z.object({ data: z.array(Event), newer: nullableString, older: nullableString, limit: count }).meta({ id: "IssueEvents" });
export const IssueTags = z
  .object({ sampled: count, tags: z.array(z.object({ key: z.string(), total: count, values: z.array(row({})) })) })
  .meta({ id: "IssueTags" });
export const Stats = z
  .object({
    timeframe: z.string(),
    total_errors: count,
    by_level: z.object({ error: count, warn: count, info: count }),
    open_groups: count,
    affected_users: count,
    top_errors: z.array(row({ id, message: z.string(), title: nullableString, count, level: z.string(), status: z.string(), last_seen: isoTime })),
  })
  .meta({ id: "Stats" });
export const Players = z.object({ data: z.array(row({ user_id: userId, last_seen: isoTime, issues: count })), search: z.string(), limit: count }).meta({ id: "Players" });
export const Player = z
  .object({ player: row({ user_id: userId, last_seen: isoTime }), issues: z.array(row({ id, message: z.string(), status: z.string() })), events: z.array(Event) })
  .meta({ id: "Player" });
export const Trace = z
  .object({ trace: row({ trace_id: z.string(), first_seen: isoTime, last_seen: isoTime, event_count: count, group_ids: z.array(id) }), events: z.array(Event) })
  .meta({ id: "Trace" });
export const Releases = z
  .object({ data: z.array(row({ version: z.string(), occurrences: count, new_issues: count, regressions: count })), ...page, window: z.string(), environment: nullableString })
  .meta({ id: "Releases" });

// ---- economy -----------------------------------------------------------------------------------------

const amount = z.string().describe("a decimal integer as a string (balances exceed 2^53)");
export const EconomyFlows = z
  .object({
    currency: z.string(),
    days: count,
    sources: z.array(row({ source: z.string(), gained: amount, spent: amount, flows: count })).optional(),
    totals: row({ gained: amount, spent: amount, flows: count }).optional(),
    currencies: z.array(row({ currency: z.string() })).optional(),
  })
  .meta({ id: "EconomyFlows" });
export const EconomyPlayer = z
  .object({ player: row({ user_id: z.string() }), history: z.array(row({ id, observed_at: isoTime })), flows: z.array(row({ id, currency: z.string(), amount })), unexplained: z.array(row({ id, currency: z.string(), unexplained: amount })) })
  .meta({ id: "EconomyPlayer" });
export const EconomyUnexplained = z
  .object({ data: z.array(row({ id, user_id: z.string(), currency: z.string(), unexplained: amount })), total: count, currency: z.string(), min_amount: amount, days: count, limit: count, offset: count })
  .meta({ id: "EconomyUnexplained" });
export const OpenCloudKey = z
  .object({
    configured: z.boolean(),
    universe_id: nullableString.optional(),
    datastore_name: nullableString.optional(),
    scope: nullableString.optional(),
    key_prefix: nullableString.optional(),
    key_last4: nullableString.optional(),
    updated_at: isoTime.nullable().optional(),
  })
  .meta({ id: "OpenCloudKey" });
export const CurrencyMapAnswer = z
  .object({ map: row({ currencies: z.array(row({ key: z.string(), name: z.string(), paths: z.array(z.string()) })) }), is_default: z.boolean(), updated_at: isoTime.nullable(), layout: nullableString, warnings: z.array(z.unknown()) })
  .meta({ id: "CurrencyMapAnswer" });
export const Threshold = z
  .object({ key: z.string(), name: z.string(), learned: z.unknown().nullable(), override: row({}).nullable(), effective: row({ factor: z.number(), off: z.boolean(), source: z.string() }), rises: count })
  .meta({ id: "Threshold" });

/** `{data: [...]}`, the Team API's lists. */
export const DataList = (name: string, item: z.ZodType = z.looseObject({})) => z.object({ data: z.array(item) }).meta({ id: name });

// ---- the rest of the read API and the economy --------------------------------------------------------

export const Traces = z
  .object({ data: z.array(row({ trace_id: z.string(), first_seen: isoTime, last_seen: isoTime, event_count: count, group_ids: z.array(id) })), ...cappedPage })
  .meta({ id: "Traces" });
export const Servers = z
  .object({ data: z.array(row({ job_id: z.string(), place_id: nullableString, environment: nullableString, state: z.string(), started_at: isoTime, last_seen: isoTime })), ...page })
  .meta({ id: "Servers" });
export const SdkHealth = z
  .object({ days: z.array(row({ day: z.string(), discarded: z.array(row({})) })), totals: z.array(row({})), last_warning: row({ message: z.string(), at: isoTime }).nullable() })
  .meta({ id: "SdkHealth" });
const ReleaseHealth = row({ servers: row({}), players: row({}), sessions: row({}), player_minutes: z.number() });
export const Release = z
  .object({
    version: z.string(),
    window: z.string(),
    environment: nullableString,
    health: ReleaseHealth,
    adoption: z.array(row({ at: isoTime })),
    memory_by_age: z.array(row({})),
    errors_per_1000_player_minutes: z.array(row({ at: isoTime })),
  })
  .meta({ id: "Release" });
export const EconomySummary = z
  .object({
    currency: z.string(),
    currencies: z.array(row({ key: z.string(), name: z.string() })),
    players: count,
    sums: row({}),
    median_total: amount.nullable(),
    p99_total: amount.nullable(),
    median: amount.nullable(),
    p99: amount.nullable(),
    concentration: row({}),
    newcomers: row({ players: count }),
    top_players: z.array(row({ user_id: z.string() })),
    wealth_histogram: z.array(row({ count })),
    money_supply: z.array(row({ day: z.string(), supply: amount })),
  })
  .meta({ id: "EconomySummary" });
export const EconomyPlayers = z
  .object({ data: z.array(row({ user_id: z.string(), total: amount, observed_at: isoTime })), ...page, sort: z.string(), order: z.enum(["asc", "desc"]) })
  .meta({ id: "EconomyPlayers" });
export const EconomyAnomalies = z
  .object({
    data: z.array(row({ user_id: z.string(), currency: z.string(), increase: amount, from_observed_at: isoTime, to_observed_at: isoTime })),
    total: count,
    currency: z.string(),
    factor: z.number().nullable(),
    min_amount: amount.nullable(),
    days: count,
    limit: count,
    offset: count,
    thresholds: z.record(z.string(), row({})),
  })
  .meta({ id: "EconomyAnomalies" });
export const SyncStatus = z
  .object({
    state: z.string(),
    job_id: nullableString,
    scanned: count,
    stored: count,
    skipped: count,
    failed: count,
    pages: count,
    started_at: isoTime.nullable(),
    finished_at: isoTime.nullable(),
    updated_at: isoTime.nullable(),
    error: nullableString,
  })
  .meta({ id: "SyncStatus" });
export const Thresholds = z.object({ currencies: z.array(Threshold) }).meta({ id: "Thresholds" });
export const CurrencyMapPreview = z
  .object({ map: row({}), profile_source: z.string(), sample: row({}).nullable(), result: row({ ok: z.boolean() }), stopped: z.unknown().nullable(), push_skips: z.unknown().nullable(), listed: row({}) })
  .meta({ id: "CurrencyMapPreview" });
export const SignInMethods = z
  .object({ identities: z.array(row({ id, provider: z.string(), created_at: isoTime })), has_password: z.boolean(), providers: z.array(row({})) })
  .meta({ id: "SignInMethods" });
export const GroupingRulePreview = z
  .object({ scanned: count, matched: count, action: z.enum(["group", "ignore"]), issues: z.array(row({ id })), would_merge: count, would_ignore: count })
  .meta({ id: "GroupingRulePreview" });
export const GroupingRuleApplied = z
  .union([
    z.object({ action: z.literal("ignore"), scanned: count, matched: count, ignored: z.array(id) }),
    z.object({ action: z.literal("group"), scanned: count, matched: count, issue: row({ id }).nullable(), merged: z.array(id), skipped: z.array(z.unknown()) }),
  ])
  .meta({ id: "GroupingRuleApplied" });

// ---- share links -------------------------------------------------------------------------------------

const SharedGroup = row({ id, message: z.string(), title: nullableString, level: z.string(), status: z.string(), count, user_count: count, first_seen: isoTime, last_seen: isoTime });
export const SharedIssue = z
  .object({ role: z.enum(["viewer", "editor"]), expires_at: isoTime.nullable(), group: SharedGroup, events: z.array(row({ id, message: z.string(), level: z.string(), timestamp: isoTime })), series: Series })
  .meta({ id: "SharedIssue" });
export const SharedIssueStatus = z.object({ group: SharedGroup }).meta({ id: "SharedIssueStatus" });

// ---- Team API ----------------------------------------------------------------------------------------

export const PublicUser = z.object({ id, email: z.string(), created_at: isoTime, must_change_password: z.boolean() }).meta({ id: "User" });
export const Project = row({ id, name: z.string() }).meta({ id: "Project" });
export const Flag = (field: string) => z.object({ [field]: z.literal(true) }).meta({ id: `${field[0].toUpperCase()}${field.slice(1).replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}` });

export const TwoFactorStatus = z.object({ enabled: z.boolean(), enabled_at: isoTime.nullable(), pending: z.boolean(), recovery_codes_left: count }).meta({ id: "TwoFactorStatus" });
export const TwoFactorEnrollment = z.object({ secret: z.string(), otpauth_url: z.string(), qr_code: z.string() }).meta({ id: "TwoFactorEnrollment" });
export const RecoveryCodes = z.object({ enabled: z.literal(true), recovery_codes: z.array(z.string()) }).meta({ id: "RecoveryCodes" });
export const NewRecoveryCodes = z.object({ recovery_codes: z.array(z.string()) }).meta({ id: "NewRecoveryCodes" });
export const TwoFactorDisabled = z.object({ enabled: z.literal(false) }).meta({ id: "TwoFactorDisabled" });
/** `POST /api/auth/two-factor/{step}`: setup, confirm, recovery-codes or disable, in that order. */
export const TwoFactorStep = z.union([TwoFactorEnrollment, RecoveryCodes, NewRecoveryCodes, TwoFactorDisabled]).meta({ id: "TwoFactorStep" });
export const TwoFactorRequirement = z.object({ two_factor_required: z.enum(["off", "owners_admins", "everyone"]) }).meta({ id: "TwoFactorRequirement" });

export const Notices = z.object({ data: z.array(row({ id, project_id: id, group_id: id, read_at: isoTime.nullable() })), unread: count }).meta({ id: "Notices" });
export const NoticesRead = z.object({ marked_read: count }).meta({ id: "NoticesRead" });
export const AuditPage = z
  .object({ data: z.array(row({ id, at: isoTime, actor: row({}).nullable(), action: z.string(), target: nullableString, details: z.unknown() })), next_before: nullableString })
  .meta({ id: "AuditPage" });
export const Deliveries = z.object({ data: z.array(row({ id: z.union([z.number(), z.string()]), created_at: isoTime, status: z.string() })), next_before: z.number().int().nullable().describe("the id to pass as `before` for the next page") }).meta({ id: "Deliveries" });

export const ApiKey = row({ id, name: nullableString, prefix: z.string(), created_at: isoTime, active: z.boolean() }).meta({ id: "ApiKey" });
export const ApiKeyCreated = z.object({ key: ApiKey, api_key: z.string().describe("the key, shown once") }).meta({ id: "ApiKeyCreated" });
export const DsnKey = row({ id, name: nullableString, public_key: z.string(), dsn: z.string(), created_at: isoTime, active: z.boolean(), rate_limit_per_minute: count.nullable() }).meta({ id: "DsnKey" });
export const Member = row({ project_id: id, user_id: id, role: z.enum(["owner", "admin", "member"]), email: z.string() }).meta({ id: "Member" });
export const MemberAdded = z.object({ member: Member, temporary_password: z.string().optional().describe("for a new account, shown once") }).meta({ id: "MemberAdded" });
export const MemberChanged = z.object({ member: Member }).meta({ id: "MemberChanged" });
export const ShareLink = row({ id, project_id: id, group_id: id, role: z.enum(["viewer", "editor"]), created_at: isoTime, expires_at: isoTime.nullable(), active: z.boolean() }).meta({ id: "ShareLink" });
export const ShareLinkCreated = ShareLink.extend({ token: z.string().describe("shown once"), url: z.string() }).meta({ id: "ShareLinkCreated" });

export const GroupAnswer = z.object({ group: Group }).meta({ id: "GroupAnswer" });
export const BulkStatus = z.object({ updated: count, ids: z.array(id), status: z.string() }).meta({ id: "BulkStatus" });
export const BulkFilterStatus = z
  .union([
    z.object({ matched: count.describe("issues the filter matches (dry_run)"), as_of: isoTime, status: z.string() }),
    z.object({ updated: count, as_of: isoTime, status: z.string() }),
  ])
  .meta({ id: "BulkFilterStatus" });
export const BulkAssign = z.object({ updated: count, ids: z.array(id), assignee_id: id.nullable() }).meta({ id: "BulkAssign" });
export const Merged = z.object({ group: Group, merged: z.array(id) }).meta({ id: "Merged" });
export const Unmerged = z.object({ group: Group, unmerged: z.array(id) }).meta({ id: "Unmerged" });
export const MergedInto = z.object({ members: z.array(Group), learned: z.unknown().nullable() }).meta({ id: "MergedInto" });
export const Comment = row({ id, group_id: id, author_id: id.nullable(), body: z.string(), created_at: isoTime, edited_at: isoTime.nullable() }).meta({ id: "Comment" });
export const CommentAnswer = z.object({ comment: Comment }).meta({ id: "CommentAnswer" });
export const Activity = row({ type: z.string(), at: isoTime }).meta({ id: "Activity" });

export const GroupingRule = row({ id, position: count, name: nullableString, match: row({}), action: z.enum(["group", "ignore"]), hits: count }).meta({ id: "GroupingRule" });
export const GroupingRuleAnswer = z.object({ rule: GroupingRule }).meta({ id: "GroupingRuleAnswer" });
export const GroupingRules = z.object({ data: z.array(GroupingRule) }).meta({ id: "GroupingRules" });
export const GroupingRuleList = z.object({ data: z.array(GroupingRule), max: count.describe("rules a project may have") }).meta({ id: "GroupingRuleList" });

export const AlertRule = row({ id, name: z.string(), trigger: z.string(), channel_ids: z.array(id), enabled: z.boolean(), created_at: isoTime, updated_at: isoTime }).meta({ id: "AlertRule" });
export const AlertRuleAnswer = z.object({ rule: AlertRule }).meta({ id: "AlertRuleAnswer" });
export const Channel = row({ id, name: z.string(), kind: z.string(), enabled: z.boolean(), has_secret: z.boolean(), created_at: isoTime, updated_at: isoTime }).meta({ id: "Channel" });
export const ChannelAnswer = z.object({ channel: Channel, secret: z.string().optional().describe("a webhook's signing secret, shown once when made") }).meta({ id: "ChannelAnswer" });
export const ProjectAnswer = z.object({ project: Project }).meta({ id: "ProjectAnswer" });

// ---- answers whose producers the code types: what they return, once JSON, fits its schema ----------------

/** A value as `JSON.stringify` sends it: a Date becomes its ISO string. */
type Jsonified<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Jsonified<U>[]
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T;
type Fits<Returned, Schema extends z.ZodType> = [Jsonified<Awaited<Returned>>] extends [z.output<Schema>] ? true : false;

same<Fits<ReturnType<typeof twoFactorStatus>, typeof TwoFactorStatus>>();
same<Fits<ReturnType<typeof startEnrollment>, typeof TwoFactorEnrollment>>();
same<Fits<ReturnType<typeof syncStatus>, typeof SyncStatus>>();
same<Fits<ReturnType<typeof keyStatus>, typeof OpenCloudKey>>();
same<Fits<ReturnType<typeof startSync>, typeof SyncStarted>>();
same<Fits<ReturnType<typeof getRequirementFor>, typeof TwoFactorRequirement>>();
same<Fits<ReturnType<typeof toPublicUser>, typeof PublicUser>>();
same<Fits<ReturnType<typeof ingestClientReport>, typeof Success>>();
same<Fits<ReturnType<typeof dispatchFromRequest>, typeof DispatchResult>>();
