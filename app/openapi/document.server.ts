/**
 * The OpenAPI 3.1 document of the public API, served at `GET /api/openapi.json` (docs/api.md,
 * "OpenAPI"). It is made, once per process, from the zod schemas the endpoints validate their bodies
 * with (exported by their modules) and from the answer schemas of responses.server.ts, with zod's own
 * JSON Schema output (draft 2020-12, the dialect of OpenAPI 3.1). The table below says which path
 * takes which method, credential, parameters, body and answers; the contract audit of the
 * integration suite (test/support/contract-audit.ts) checks every answer the suite receives against
 * it, so an endpoint, a status or a field the table does not describe fails the run.
 */
import { z } from "zod";
import { EventSchema, MAX_BATCH } from "~/ingest/native.server";
import { ReportSchema } from "~/ingest/client-report.server";
import { schema as HealthReportSchema } from "~/health/report.server";
import { KeyBody, SyncInput } from "~/economy/sync.server";
import { currencyMapSchema } from "~/economy/currency-map.server";
import { StatusInput } from "~/share/share.server";
import { Credentials, SecondStep } from "~/accounts/login.server";
import { PasswordChange } from "~/accounts/users.server";
import { CodeInput, DisableInput } from "~/accounts/two-factor.server";
import { CreateInput as ProjectCreateInput, ProjectInput } from "~/team/projects.server";
import { KeyInput as ApiKeyInput } from "~/team/keys.server";
import { KeyChange as DsnKeyChange, KeyInput as DsnKeyInput } from "~/team/dsn-keys.server";
import { AddInput as MemberInput, RoleInput } from "~/team/members.server";
import { Input as TwoFactorRequirementInput } from "~/team/two-factor.server";
import { CreateInput as ShareLinkInput } from "~/team/share-links.server";
import { BulkInput, FilterBulkInput, GroupInput } from "~/team/groups.server";
import { BulkAssignInput, CommentInput } from "~/team/collaboration.server";
import { MergeInput, UnmergeInput } from "~/team/merge.server";
import { OrderInput } from "~/team/grouping-rules.server";
import { RuleInput as GroupingRuleInput, RulePatch as GroupingRulePatch } from "~/ingest/rules.server";
import { ChannelPatch, NewChannel, TestInput as ChannelTestInput } from "~/alerts/channels.server";
import { RuleInput as AlertRuleInput, RulePatch as AlertRulePatch } from "~/alerts/rules.server";
import { DispatchInput } from "~/alerts/internal.server";
import * as R from "./responses.server";

type Method = "get" | "post" | "put" | "patch" | "delete" | "options";
type Security = "apiKey" | "session" | "internalKey" | "sentry" | "sessionOrInternal" | "none";
type Body = { schema: z.ZodType; contentType?: string; optional?: boolean; description?: string };

type Operation = {
  method: Method;
  path: string;
  tag: string;
  summary: string;
  security: Security;
  query?: z.ZodObject;
  body?: Body;
  /** status → answer schema (null: no body) */
  ok: Record<number, z.ZodType | null>;
  /** the error statuses this endpoint answers, beyond those of its credential */
  errors?: number[];
  /** other media types of the 200 (a CSV export) */
  alt200?: Record<string, z.ZodType>;
  deprecated?: boolean;
};

const json = (schema: z.ZodType, extra: Partial<Body> = {}): Body => ({ schema, ...extra });

// ---- query parameters, as the routes read them (app/errors/params.server.ts and beside it) ------------

const int = (d: string) => z.string().regex(/^-?\d+$/).describe(d);
const paging = { limit: int("page size").optional(), offset: int("rows to skip").optional() };
const ErrorListQuery = z.object({
  grouped: z.enum(["true", "false"]).optional().describe("issues (default) or raw events"),
  level: z.string().optional().describe("error, warn (warning) or info"),
  status: z.string().optional().describe("open, resolved or ignored (issues)"),
  search: z.string().optional(),
  environment: z.string().optional(),
  user_id: z.string().optional(),
  place_id: z.string().optional(),
  origin: z.enum(["client", "server"]).optional(),
  sort: z.enum(["last_seen", "first_seen", "count"]).optional(),
  timeframe: z.enum(["1h", "24h", "7d", "30d"]).optional(),
  new_in_version: z.string().optional(),
  regressed: z.string().optional(),
  assignee: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  ...paging,
});
const TimeframeQuery = z.object({ timeframe: z.enum(["1h", "24h", "7d", "30d"]).optional() });
const SearchQuery = z.object({ search: z.string().optional(), ...paging });
const PagingQuery = z.object(paging);
const GroupEventsQuery = z.object({ before: z.string().optional(), after: z.string().optional(), limit: int("page size").optional() });
const ReleasesQuery = z.object({ window: z.enum(["24h", "7d", "30d"]).optional(), environment: z.string().optional(), ...paging });
const ServersQuery = z.object({ state: z.enum(["live", "ended", "abnormal"]).optional(), version: z.string().optional(), ...paging });
const DaysQuery = z.object({ days: int("days back").optional() });
const EconomyQuery = z.object({ days: int("days back").optional(), currency: z.string().optional() });
const EconomyPlayersQuery = z.object({ search: z.string().optional(), sort: z.string().optional(), order: z.enum(["asc", "desc"]).optional(), currency: z.string().optional(), ...paging });
const AnomaliesQuery = z.object({ currency: z.string().optional(), days: int("days back").optional(), factor: z.string().optional(), ...paging });
const UnexplainedQuery = z.object({ currency: z.string().optional(), days: int("days back").optional(), min_amount: z.string().optional(), ...paging });
const ProjectQuery = z.object({ project_id: z.string().describe("the project's id") });
const AuditQuery = z.object({ format: z.enum(["json", "csv"]).optional(), action: z.string().optional(), actor: z.string().optional(), from: z.string().optional(), to: z.string().optional(), ...paging });
const ShareLinksQuery = z.object({ group_id: z.string().optional() });
const DeliveriesQuery = z.object({ ...paging });
const SentryQuery = z.object({ sentry_key: z.string().optional().describe("the DSN's public key (or X-Sentry-Auth)") });

// ---- request bodies made of the endpoints' own schemas --------------------------------------------------

const IngestBody = z.union([
  EventSchema,
  z.object({ errors: z.array(EventSchema).min(1).max(MAX_BATCH), client_report: ReportSchema.optional() }),
]);
/**
 * The economy push and flows are validated entry by entry in app/economy/ingest.server.ts and
 * flows.server.ts (each entry read through the project's currency map, an invalid entry skipped and
 * named in the answer), not by one schema: the document gives their outer shape.
 */
const EconomyPushBody = z.object({
  players: z.array(z.object({ user_id: z.union([z.number(), z.string()]), profile: z.unknown(), name: z.string().optional() }).loose()).min(1).max(100),
  flows: z.array(z.looseObject({})).optional(),
});
const FlowsBody = z.object({
  flows: z.array(z.object({ user_id: z.union([z.number(), z.string()]), currency: z.string(), amount: z.number(), source: z.string() }).loose()).min(1).max(1000),
});
const LoginBody = z.union([Credentials, SecondStep]);
const ThresholdBody = z.looseObject({}).describe("the currency's detection settings (docs/economy.md, Detection)");

const ENVELOPE = "application/x-sentry-envelope";

// ---- the table -------------------------------------------------------------------------------------------

const health: Operation[] = [
  { method: "get", path: "/api/ingest", tag: "Health", summary: "Liveness", security: "none", ok: { 200: R.Liveness } },
  { method: "get", path: "/api/ready", tag: "Health", summary: "Readiness: the database answers; counters and schema state", security: "none", ok: { 200: R.Readiness, 503: R.NotReady } },
  { method: "get", path: "/api/openapi.json", tag: "Health", summary: "This document", security: "none", ok: { 200: z.looseObject({ openapi: z.string() }), 304: null } },
];

const INGEST_ERRORS = [409, 411, 413, 415, 429];
const ingest: Operation[] = [
  { method: "post", path: "/api/ingest", tag: "Ingest", summary: "One event or a batch of 1 to 100", security: "apiKey", body: json(IngestBody), ok: { 200: R.IngestAnswer }, errors: INGEST_ERRORS },
  { method: "post", path: "/api/client-reports", tag: "Ingest", summary: "What an SDK dropped before sending", security: "apiKey", body: json(ReportSchema), ok: { 200: R.Success }, errors: INGEST_ERRORS },
  { method: "post", path: "/api/health", tag: "Ingest", summary: "A game server's state, player sessions and health samples", security: "apiKey", body: json(HealthReportSchema), ok: { 200: R.HealthAnswer }, errors: INGEST_ERRORS },
  { method: "post", path: "/api/economy/ingest", tag: "Economy", summary: "Players' balances, pushed at disconnect", security: "apiKey", body: json(EconomyPushBody), ok: { 200: R.PushAnswer }, errors: INGEST_ERRORS },
  { method: "post", path: "/api/economy/flows", tag: "Economy", summary: "What moved players' balances", security: "apiKey", body: json(FlowsBody), ok: { 200: R.FlowsAnswer }, errors: INGEST_ERRORS },
];

const sentry = (endpoint: "store" | "envelope"): Operation => ({
  method: "post",
  path: `/api/{projectId}/${endpoint}/`,
  tag: "Sentry",
  summary: endpoint === "store" ? "Sentry protocol: one event (store endpoint)" : "Sentry protocol: an envelope",
  security: "sentry",
  query: SentryQuery,
  body: endpoint === "store" ? json(z.looseObject({}).describe("a Sentry event")) : { schema: z.string().describe("a Sentry envelope: newline-separated JSON headers and items"), contentType: ENVELOPE },
  ok: { 200: R.SentryAnswer },
  errors: [413, 415, 429],
});

const economy: Operation[] = [
  { method: "get", path: "/api/economy/key", tag: "Economy", summary: "The Open Cloud key's state (never the key)", security: "session", query: ProjectQuery, ok: { 200: R.OpenCloudKey } },
  { method: "put", path: "/api/economy/key", tag: "Economy", summary: "Set the Open Cloud key", security: "session", body: json(KeyBody), ok: { 200: R.OpenCloudKey } },
  { method: "delete", path: "/api/economy/key", tag: "Economy", summary: "Remove the Open Cloud key", security: "session", query: ProjectQuery, ok: { 200: R.Flag("deleted") } },
  { method: "get", path: "/api/economy/sync", tag: "Economy", summary: "The Open Cloud scan's progress", security: "sessionOrInternal", query: ProjectQuery, ok: { 200: R.SyncStatus } },
  { method: "post", path: "/api/economy/sync", tag: "Economy", summary: "Start or resume the Open Cloud scan", security: "sessionOrInternal", body: json(SyncInput), ok: { 202: R.SyncStarted } },
];

const v1: Operation[] = [
  { method: "get", path: "/api/v1/errors", tag: "Read API", summary: "Issues or raw events, filtered and paged", security: "apiKey", query: ErrorListQuery, ok: { 200: R.ErrorList } },
  { method: "get", path: "/api/v1/errors/{groupId}", tag: "Read API", summary: "An issue with its hourly series, latest events and facets", security: "apiKey", ok: { 200: R.IssueDetail } },
  { method: "get", path: "/api/v1/errors/{groupId}/events", tag: "Read API", summary: "A page of an issue's stored events", security: "apiKey", query: GroupEventsQuery, ok: { 200: R.IssueEvents } },
  { method: "get", path: "/api/v1/errors/{groupId}/tags", tag: "Read API", summary: "Top values over an issue's latest events", security: "apiKey", ok: { 200: R.IssueTags } },
  { method: "get", path: "/api/v1/stats", tag: "Read API", summary: "Counts and top errors over a window", security: "apiKey", query: TimeframeQuery, ok: { 200: R.Stats } },
  { method: "get", path: "/api/v1/players", tag: "Read API", summary: "Players who ran into errors", security: "apiKey", query: SearchQuery, ok: { 200: R.Players } },
  { method: "get", path: "/api/v1/players/{userId}", tag: "Read API", summary: "A player with their issues and latest events", security: "apiKey", ok: { 200: R.Player } },
  { method: "get", path: "/api/v1/releases", tag: "Read API", summary: "Game versions with their release health", security: "apiKey", query: ReleasesQuery, ok: { 200: R.Releases } },
  { method: "get", path: "/api/v1/releases/{version}", tag: "Read API", summary: "One version's health with its hourly series", security: "apiKey", query: ReleasesQuery.pick({ window: true, environment: true }), ok: { 200: R.Release } },
  { method: "get", path: "/api/v1/servers", tag: "Read API", summary: "Game servers, live first", security: "apiKey", query: ServersQuery, ok: { 200: R.Servers } },
  { method: "get", path: "/api/v1/sdk-health", tag: "Read API", summary: "What the project's SDKs dropped", security: "apiKey", query: DaysQuery, ok: { 200: R.SdkHealth } },
  { method: "get", path: "/api/v1/traces", tag: "Read API", summary: "Traces, newest first", security: "apiKey", query: PagingQuery, ok: { 200: R.Traces } },
  { method: "get", path: "/api/v1/traces/{traceId}", tag: "Read API", summary: "One trace's events", security: "apiKey", ok: { 200: R.Trace } },
  { method: "get", path: "/api/v1/economy/summary", tag: "Economy", summary: "Supply and movement per currency", security: "apiKey", query: EconomyQuery, ok: { 200: R.EconomySummary } },
  { method: "get", path: "/api/v1/economy/players", tag: "Economy", summary: "Players' balances", security: "apiKey", query: EconomyPlayersQuery, ok: { 200: R.EconomyPlayers } },
  { method: "get", path: "/api/v1/economy/players/{userId}", tag: "Economy", summary: "A player's balance history, flows and unexplained gains", security: "apiKey", ok: { 200: R.EconomyPlayer } },
  { method: "get", path: "/api/v1/economy/flows", tag: "Economy", summary: "Sources and sinks", security: "apiKey", query: EconomyQuery, ok: { 200: R.EconomyFlows } },
  { method: "get", path: "/api/v1/economy/anomalies", tag: "Economy", summary: "Anomalies per currency", security: "apiKey", query: AnomaliesQuery, ok: { 200: R.EconomyAnomalies } },
  { method: "get", path: "/api/v1/economy/unexplained", tag: "Economy", summary: "Gains the game's flows did not explain", security: "apiKey", query: UnexplainedQuery, ok: { 200: R.EconomyUnexplained } },
];

const share: Operation[] = [
  { method: "get", path: "/api/share/{token}", tag: "Share", summary: "The shared issue (the token is the credential)", security: "none", ok: { 200: R.SharedIssue }, errors: [429] },
  { method: "post", path: "/api/share/{token}", tag: "Share", summary: "Change the shared issue's status (an editor link)", security: "none", body: json(StatusInput), ok: { 200: R.SharedIssueStatus }, errors: [403, 413, 415, 429] },
];

const P = "/api/team/projects/{projectId}";
const team: Operation[] = [
  { method: "post", path: "/api/auth/login", tag: "Auth", summary: "Sign in: sets the session cookie", security: "none", body: json(LoginBody), ok: { 200: z.object({ user: R.PublicUser }).meta({ id: "SignedIn" }), 401: z.union([R.SecondFactorRequired, R.ErrorBody]) }, errors: [403, 413, 415, 429] },
  { method: "post", path: "/api/auth/logout", tag: "Auth", summary: "Sign out", security: "session", ok: { 200: R.Flag("signed_out") } },
  { method: "get", path: "/api/auth/me", tag: "Auth", summary: "The signed-in user and their projects", security: "session", ok: { 200: z.object({ user: R.PublicUser, projects: z.array(R.Project) }).meta({ id: "Me" }) } },
  { method: "post", path: "/api/auth/password", tag: "Auth", summary: "Change the password", security: "session", body: json(PasswordChange), ok: { 200: R.Flag("changed") } },
  { method: "get", path: "/api/auth/identities", tag: "Auth", summary: "The user's sign-in methods", security: "session", ok: { 200: R.SignInMethods } },
  { method: "delete", path: "/api/auth/identities/{identityId}", tag: "Auth", summary: "Unlink an identity", security: "session", ok: { 200: R.Flag("unlinked") } },
  { method: "get", path: "/api/auth/two-factor", tag: "Auth", summary: "The user's two-factor state", security: "session", ok: { 200: R.TwoFactorStatus } },
  {
    method: "post",
    path: "/api/auth/two-factor/{step}",
    tag: "Auth",
    summary: "Two-factor, one step per call: `setup` {} (a new secret), `confirm` {code} (turns it on; the recovery codes, once), `recovery-codes` {code} (new ones), `disable` {password, code}",
    security: "session",
    body: json(z.union([DisableInput, CodeInput, z.object({})]), { optional: true }),
    ok: { 200: R.TwoFactorStep },
  },
  { method: "get", path: "/api/team/notifications", tag: "Team", summary: "The user's notices", security: "session", ok: { 200: R.Notices } },
  { method: "post", path: "/api/team/notifications", tag: "Team", summary: "Mark the user's notices read", security: "session", ok: { 200: R.NoticesRead } },
  { method: "get", path: "/api/team/instance/audit", tag: "Team", summary: "The instance's audit log (JSON or CSV)", security: "session", query: AuditQuery, ok: { 200: R.AuditPage }, alt200: { "text/csv": z.string() } },
  { method: "post", path: "/api/notifications/test", tag: "Alerts", summary: "A synthetic alert through a channel", security: "session", body: json(ChannelTestInput), ok: { 200: R.Success }, errors: [502] },
  { method: "get", path: "/api/team/projects", tag: "Team", summary: "The user's projects", security: "session", ok: { 200: R.DataList("Projects", R.Project) } },
  { method: "post", path: "/api/team/projects", tag: "Team", summary: "A new project with its first key (shown once)", security: "session", body: json(ProjectCreateInput), ok: { 201: z.object({ project: R.Project, api_key: z.string(), key_id: z.string() }).meta({ id: "ProjectCreated" }) } },
  { method: "get", path: P, tag: "Team", summary: "A project", security: "session", ok: { 200: R.ProjectAnswer } },
  { method: "patch", path: P, tag: "Team", summary: "Rename a project", security: "session", body: json(ProjectInput), ok: { 200: R.ProjectAnswer } },
  { method: "delete", path: P, tag: "Team", summary: "Delete a project and all its data", security: "session", ok: { 200: R.Flag("deleted") } },
  { method: "get", path: `${P}/audit`, tag: "Team", summary: "The project's audit log (JSON or CSV)", security: "session", query: AuditQuery, ok: { 200: R.AuditPage }, alt200: { "text/csv": z.string() } },
  { method: "get", path: `${P}/keys`, tag: "Team", summary: "API keys", security: "session", ok: { 200: R.DataList("ApiKeys", R.ApiKey) } },
  { method: "post", path: `${P}/keys`, tag: "Team", summary: "A new API key (shown once)", security: "session", body: json(ApiKeyInput, { optional: true }), ok: { 201: R.ApiKeyCreated } },
  { method: "delete", path: `${P}/keys/{keyId}`, tag: "Team", summary: "Revoke an API key", security: "session", ok: { 200: R.Flag("revoked") } },
  { method: "get", path: `${P}/dsn-keys`, tag: "Team", summary: "Sentry DSN keys", security: "session", ok: { 200: R.DataList("DsnKeys", R.DsnKey) } },
  { method: "post", path: `${P}/dsn-keys`, tag: "Team", summary: "A new DSN key", security: "session", body: json(DsnKeyInput, { optional: true }), ok: { 201: R.DsnKey } },
  { method: "patch", path: `${P}/dsn-keys/{keyId}`, tag: "Team", summary: "Rename a DSN key or change its rate limit", security: "session", body: json(DsnKeyChange), ok: { 200: R.DsnKey } },
  { method: "delete", path: `${P}/dsn-keys/{keyId}`, tag: "Team", summary: "Revoke a DSN key", security: "session", ok: { 200: R.Flag("revoked") } },
  { method: "get", path: `${P}/members`, tag: "Team", summary: "Members", security: "session", ok: { 200: R.DataList("Members", R.Member) } },
  { method: "post", path: `${P}/members`, tag: "Team", summary: "Add a member", security: "session", body: json(MemberInput), ok: { 201: R.MemberAdded } },
  { method: "patch", path: `${P}/members/{userId}`, tag: "Team", summary: "Change a member's role", security: "session", body: json(RoleInput), ok: { 200: R.MemberChanged } },
  { method: "delete", path: `${P}/members/{userId}`, tag: "Team", summary: "Remove a member", security: "session", ok: { 200: R.Flag("removed") } },
  { method: "get", path: `${P}/two-factor`, tag: "Team", summary: "The project's two-factor requirement", security: "session", ok: { 200: R.TwoFactorRequirement } },
  { method: "put", path: `${P}/two-factor`, tag: "Team", summary: "Set the project's two-factor requirement", security: "session", body: json(TwoFactorRequirementInput), ok: { 200: R.TwoFactorRequirement } },
  { method: "get", path: `${P}/share-links`, tag: "Share", summary: "The project's share links", security: "session", query: ShareLinksQuery, ok: { 200: R.DataList("ShareLinks", R.ShareLink) } },
  { method: "post", path: `${P}/share-links`, tag: "Share", summary: "A new share link (the token shown once)", security: "session", body: json(ShareLinkInput), ok: { 201: R.ShareLinkCreated } },
  { method: "delete", path: `${P}/share-links/{linkId}`, tag: "Share", summary: "Revoke a share link", security: "session", ok: { 200: R.Flag("revoked") } },
  { method: "patch", path: `${P}/groups/{groupId}`, tag: "Issues", summary: "Change an issue's status or assignee", security: "session", body: json(GroupInput), ok: { 200: R.GroupAnswer } },
  { method: "delete", path: `${P}/groups/{groupId}`, tag: "Issues", summary: "Delete an issue and its events", security: "session", ok: { 200: R.Flag("deleted") } },
  { method: "post", path: `${P}/groups/status`, tag: "Issues", summary: "Change the status of issues by id", security: "session", body: json(BulkInput), ok: { 200: R.BulkStatus } },
  { method: "post", path: `${P}/groups/bulk`, tag: "Issues", summary: "Change the status of the issues a filter matches", security: "session", body: json(FilterBulkInput), ok: { 200: R.BulkFilterStatus } },
  { method: "post", path: `${P}/groups/assign`, tag: "Issues", summary: "Assign issues", security: "session", body: json(BulkAssignInput), ok: { 200: R.BulkAssign } },
  { method: "post", path: `${P}/groups/merge`, tag: "Issues", summary: "Merge issues", security: "session", body: json(MergeInput), ok: { 200: R.Merged } },
  { method: "post", path: `${P}/groups/{groupId}/unmerge`, tag: "Issues", summary: "Unmerge issues", security: "session", body: json(UnmergeInput), ok: { 200: R.Unmerged } },
  { method: "get", path: `${P}/groups/{groupId}/merged`, tag: "Issues", summary: "What was merged into an issue", security: "session", ok: { 200: R.MergedInto } },
  { method: "get", path: `${P}/groups/{groupId}/activity`, tag: "Issues", summary: "An issue's timeline", security: "session", ok: { 200: R.DataList("IssueActivity", R.Activity) } },
  { method: "get", path: `${P}/groups/{groupId}/comments`, tag: "Issues", summary: "An issue's comments", security: "session", ok: { 200: R.DataList("Comments", R.Comment) } },
  { method: "post", path: `${P}/groups/{groupId}/comments`, tag: "Issues", summary: "Comment on an issue", security: "session", body: json(CommentInput), ok: { 201: R.CommentAnswer } },
  { method: "patch", path: `${P}/groups/{groupId}/comments/{commentId}`, tag: "Issues", summary: "Edit a comment", security: "session", body: json(CommentInput), ok: { 200: R.CommentAnswer } },
  { method: "delete", path: `${P}/groups/{groupId}/comments/{commentId}`, tag: "Issues", summary: "Delete a comment", security: "session", ok: { 200: R.Flag("deleted") } },
  { method: "get", path: `${P}/grouping-rules`, tag: "Issues", summary: "Grouping rules", security: "session", ok: { 200: R.GroupingRuleList } },
  { method: "post", path: `${P}/grouping-rules`, tag: "Issues", summary: "A new grouping rule", security: "session", body: json(GroupingRuleInput), ok: { 201: R.GroupingRuleAnswer } },
  { method: "put", path: `${P}/grouping-rules`, tag: "Issues", summary: "Reorder grouping rules", security: "session", body: json(OrderInput), ok: { 200: R.GroupingRules } },
  { method: "post", path: `${P}/grouping-rules/preview`, tag: "Issues", summary: "What a grouping rule would match", security: "session", body: json(GroupingRuleInput), ok: { 200: R.GroupingRulePreview } },
  { method: "get", path: `${P}/grouping-rules/{ruleId}`, tag: "Issues", summary: "A grouping rule", security: "session", ok: { 200: R.GroupingRuleAnswer } },
  { method: "patch", path: `${P}/grouping-rules/{ruleId}`, tag: "Issues", summary: "Edit a grouping rule", security: "session", body: json(GroupingRulePatch), ok: { 200: R.GroupingRuleAnswer } },
  { method: "delete", path: `${P}/grouping-rules/{ruleId}`, tag: "Issues", summary: "Delete a grouping rule", security: "session", ok: { 200: R.Flag("deleted") } },
  { method: "post", path: `${P}/grouping-rules/{ruleId}/apply`, tag: "Issues", summary: "Apply a grouping rule to stored issues", security: "session", ok: { 200: R.GroupingRuleApplied } },
  { method: "get", path: `${P}/rules`, tag: "Alerts", summary: "Alert rules", security: "session", ok: { 200: R.DataList("AlertRules", R.AlertRule) } },
  { method: "post", path: `${P}/rules`, tag: "Alerts", summary: "A new alert rule", security: "session", body: json(AlertRuleInput), ok: { 201: R.AlertRuleAnswer } },
  { method: "patch", path: `${P}/rules/{ruleId}`, tag: "Alerts", summary: "Edit an alert rule", security: "session", body: json(AlertRulePatch), ok: { 200: R.AlertRuleAnswer } },
  { method: "delete", path: `${P}/rules/{ruleId}`, tag: "Alerts", summary: "Delete an alert rule", security: "session", ok: { 200: R.Flag("deleted") } },
  { method: "get", path: `${P}/channels`, tag: "Alerts", summary: "Notification channels", security: "session", ok: { 200: R.DataList("Channels", R.Channel) } },
  { method: "post", path: `${P}/channels`, tag: "Alerts", summary: "A new notification channel", security: "session", body: json(NewChannel), ok: { 201: R.ChannelAnswer } },
  { method: "patch", path: `${P}/channels/{channelId}`, tag: "Alerts", summary: "Edit a channel", security: "session", body: json(ChannelPatch), ok: { 200: R.ChannelAnswer } },
  { method: "delete", path: `${P}/channels/{channelId}`, tag: "Alerts", summary: "Delete a channel", security: "session", ok: { 200: R.Flag("deleted") } },
  { method: "get", path: `${P}/deliveries`, tag: "Alerts", summary: "Alert deliveries", security: "session", query: DeliveriesQuery, ok: { 200: R.Deliveries } },
  { method: "get", path: `${P}/economy-map`, tag: "Economy", summary: "The currency map", security: "session", ok: { 200: R.CurrencyMapAnswer } },
  { method: "put", path: `${P}/economy-map`, tag: "Economy", summary: "Save the currency map", security: "session", body: json(currencyMapSchema), ok: { 200: R.CurrencyMapAnswer } },
  { method: "delete", path: `${P}/economy-map`, tag: "Economy", summary: "Reset the currency map", security: "session", ok: { 200: R.CurrencyMapAnswer } },
  { method: "post", path: `${P}/economy-map/preview`, tag: "Economy", summary: "Read sample profiles through a draft map", security: "session", body: json(z.looseObject({})), ok: { 200: R.CurrencyMapPreview } },
  { method: "get", path: `${P}/economy-thresholds`, tag: "Economy", summary: "Detection thresholds per currency", security: "session", ok: { 200: R.Thresholds } },
  { method: "put", path: `${P}/economy-thresholds/{currency}`, tag: "Economy", summary: "Set a currency's thresholds", security: "session", body: json(ThresholdBody), ok: { 200: R.Threshold } },
  { method: "delete", path: `${P}/economy-thresholds/{currency}`, tag: "Economy", summary: "Reset a currency's thresholds", security: "session", ok: { 200: R.Threshold } },
];

const internal: Operation[] = [
  { method: "post", path: "/api/notifications/dispatch", tag: "Internal", summary: "Evaluate alert rules for fingerprints and send (the service's own jobs)", security: "internalKey", body: json(DispatchInput), ok: { 200: R.DispatchResult } },
];

/** A browser SDK's preflight: 204 with the CORS headers. */
const preflight = (endpoint: "store" | "envelope"): Operation => ({
  method: "options",
  path: `/api/{projectId}/${endpoint}/`,
  tag: "Sentry",
  summary: "CORS preflight",
  security: "none",
  ok: { 204: null },
});

export const OPERATIONS: readonly Operation[] = [...health, ...ingest, sentry("store"), preflight("store"), sentry("envelope"), preflight("envelope"), ...economy, ...v1, ...share, ...team, ...internal];

// ---- the document -------------------------------------------------------------------------------------

const SECURITY: Record<Security, Record<string, string[]>[]> = {
  none: [],
  apiKey: [{ apiKey: [] }],
  session: [{ session: [] }],
  internalKey: [{ internalKey: [] }],
  sessionOrInternal: [{ session: [] }, { internalKey: [] }],
  sentry: [{ sentryKey: [] }, { sentryAuth: [] }, { sentryAuthorization: [] }, { apiKey: [] }],
};

/** The error statuses every endpoint of a kind can answer (docs/api.md, Conventions). */
const COMMON_ERRORS: Record<Security, number[]> = {
  none: [400, 404, 405, 500, 503],
  apiKey: [400, 401, 404, 405, 500, 503],
  sentry: [400, 401, 403, 404, 405, 500, 503],
  session: [400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 503],
  sessionOrInternal: [400, 401, 403, 404, 405, 409, 413, 415, 500, 503],
  internalKey: [400, 401, 404, 405, 413, 415, 500, 503],
};

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No content",
  304: "Not modified (the `ETag` given in `If-None-Match`)",
  400: "Invalid body or query",
  401: "Missing or invalid credentials",
  403: "Not allowed (role, origin or two-factor requirement)",
  404: "Unknown id (or a malformed one)",
  405: "Method not allowed on this path (see `Allow`)",
  409: "Conflict",
  411: "Content-Length required",
  413: "Body too large",
  415: "Unsupported media type or content coding",
  429: "Rate limited (see `Retry-After`)",
  500: "Our fault; no internals in the body",
  502: "An upstream (a notification channel or a sign-in provider) failed",
  503: "Database unavailable or busy (see `Retry-After`)",
};

type JsonSchema = Record<string, unknown>;

/**
 * JSON Schemas of many zod schemas at once, with `.meta({id})` schemas as shared components. Request
 * bodies are described as they are sent (`io: "input"`: a value a transform turns into another is
 * shown as the client sends it), answers as they are sent back.
 */
class SchemaSet {
  private readonly registry = z.registry<{ id: string }>();
  private readonly pending = new Map<z.ZodType, string>();
  private n = 0;

  constructor(private readonly io: "input" | "output", private readonly prefix: string) {}

  /** A reference to the schema's component (filled in by `components()`). */
  ref(schema: z.ZodType): JsonSchema {
    let name = this.pending.get(schema);
    if (!name) {
      const meta = z.globalRegistry.get(schema) as { id?: string } | undefined;
      name = meta?.id ? `${meta.id}${this.io === "input" ? "Input" : ""}` : `${this.prefix}${++this.n}`;
      this.pending.set(schema, name);
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  components(): Record<string, JsonSchema> {
    for (const [schema, name] of this.pending) this.registry.add(schema, { id: name });
    const out = z.toJSONSchema(this.registry, {
      target: "draft-2020-12",
      io: this.io,
      unrepresentable: "any",
      uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, JsonSchema> };
    // schemas named with `.meta({id})` inside others come out as `__shared`'s $defs: each becomes a
    // component of its own, and every reference points at the component
    const { __shared: shared, ...named } = out.schemas;
    const all = { ...named, ...((shared?.$defs as Record<string, JsonSchema> | undefined) ?? {}) };
    const text = JSON.stringify(all).replaceAll("#/components/schemas/__shared#/$defs/", "#/components/schemas/");
    const result: Record<string, JsonSchema> = {};
    for (const [name, s] of Object.entries(JSON.parse(text) as Record<string, JsonSchema>)) {
      const { $schema: _, $id: _id, id: _name, ...rest } = s;
      result[name] = rest;
    }
    return result;
  }
}

/** `/api/v1/errors/{groupId}` → its parameters' names. */
const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);

/** Path parameters that take a fixed set of values. */
const PATH_ENUMS: Record<string, string[]> = { step: ["setup", "confirm", "recovery-codes", "disable"] };

function queryParameters(query: z.ZodObject): JsonSchema[] {
  const js = z.toJSONSchema(query, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: "query", required: js.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest };
  });
}

export function buildOpenApiDocument(version: string) {
  const requests = new SchemaSet("input", "Body");
  const answers = new SchemaSet("output", "Answer");
  const errorRef = answers.ref(R.ErrorBody);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(op.ok)) {
      const content: Record<string, unknown> = schema ? { "application/json": { schema: answers.ref(schema) } } : {};
      if (status === "200" && op.alt200) for (const [type, s] of Object.entries(op.alt200)) content[type] = { schema: answers.ref(s) };
      responses[status] = { description: STATUS_TEXT[Number(status)] ?? "Answer", ...(schema || op.alt200 ? { content } : {}) };
    }
    const errors = [...new Set([...COMMON_ERRORS[op.security], ...(op.errors ?? [])])].sort((a, b) => a - b);
    for (const status of errors) {
      if (responses[status]) continue;
      responses[status] = { description: STATUS_TEXT[status], content: { "application/json": { schema: errorRef } } };
    }
    const parameters = [
      ...pathParams(op.path).map((name) => ({ name, in: "path", required: true, schema: { type: "string", ...(PATH_ENUMS[name] ? { enum: PATH_ENUMS[name] } : {}) } })),
      ...(op.query ? queryParameters(op.query) : []),
    ];
    const operation: Record<string, unknown> = {
      operationId: `${op.method}${op.path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      tags: [op.tag],
      summary: op.summary,
      security: SECURITY[op.security],
      ...(parameters.length ? { parameters } : {}),
      ...(op.body
        ? { requestBody: { required: !op.body.optional, content: { [op.body.contentType ?? "application/json"]: { schema: requests.ref(op.body.schema) } } } }
        : {}),
      responses,
    };
    (paths[op.path] ??= {})[op.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Roblox monitor API",
      version,
      description:
        "Errors, economy and health of Roblox games. Every error answers one body (`Error`). Conventions, limits and examples: docs/api.md, docs/sentry.md, docs/economy.md, docs/health.md.",
    },
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    tags: [...new Set(OPERATIONS.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...answers.components(), ...requests.components() },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The project's API key (`rbx_…`): ingest and the read API." },
        sentryKey: { type: "apiKey", in: "query", name: "sentry_key", description: "A DSN's public key in the query string (Sentry protocol)." },
        sentryAuth: { type: "apiKey", in: "header", name: "X-Sentry-Auth", description: "`Sentry sentry_version=7, sentry_client=…, sentry_key=…`; also taken from `Authorization: Sentry …` and an envelope header's `dsn`." },
        sentryAuthorization: { type: "apiKey", in: "header", name: "Authorization", description: "`Sentry sentry_key=…` (as `X-Sentry-Auth`)." },
        session: { type: "apiKey", in: "cookie", name: "rm_session", description: "The session cookie set by `POST /api/auth/login`. Mutations also need a same-origin `Origin` and a JSON content type." },
        internalKey: { type: "apiKey", in: "header", name: "x-internal-key", description: "The instance's internal secret (`NOTIFICATION_SECRET`), for its own jobs and cron." },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

let made: { text: string; etag: string } | undefined;

/** The document as served: made on first use, then the same text for the life of the process. */
export function openApiText(version: string): { text: string; etag: string } {
  if (!made) {
    const text = JSON.stringify(buildOpenApiDocument(version));
    let h = 0;
    for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
    made = { text, etag: `"${(h >>> 0).toString(36)}-${text.length.toString(36)}"` };
  }
  return made;
}
