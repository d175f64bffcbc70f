import { compareVersions } from "~/components/version-order";
import type { Sql } from "../../db/client.js";
import { groupMessages, hasGroups, issueEnvironments, listEnvironments, projectSeries } from "../../db/dashboard.js";
import { getGroup, listGroups, type EventRow, type GroupRow, type GroupSort } from "../../db/errors.js";
import { groupHourlySeries, groupsHourlyCounts, groupTagBreakdown, latestGroupEvents } from "../../db/group-reads.js";
import { getTrace } from "../../db/traces.js";
import { listApiKeys } from "../../db/projects.js";
import { readSdkHealth } from "../../db/client-reports.js";
import { listShareLinks } from "../../db/share-links.js";
import { windowStats, type Timeframe } from "../../db/stats.js";
import { listMembers } from "../../db/members.js";
import { listVersionNames } from "../../db/versions.js";
import { getPlayer as getEconomyPlayer } from "../../db/economy.js";
import { groupEventsOf, groupFacets, player, players, traces } from "~/errors/triage.server";
import { asUuid } from "~/input.server";
import { text } from "~/errors/params.server";
import { cutText } from "~/text.server";
import { issueTitle, withTitle } from "~/errors/title.server";
import { notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";

/** What the dashboard pages read. Each starts at the same gate as the Team API. */

/** A group as the pages show it: the stored row with its title (see issueTitle). */
type IssueRow = GroupRow & { title: string };
type TopError = { id: string; message: string; title: string; count: number; last_seen: Date; level: string; status: string };

export const TIMEFRAMES: Timeframe[] = ["1h", "24h", "7d", "30d"];
const pick = <T extends string>(v: string | null, allowed: readonly T[], def: T): T => (allowed.includes(v as T) ? (v as T) : def);

export async function overviewData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const timeframe = pick(q.get("timeframe"), TIMEFRAMES, "24h");
  const [stats, series, any, sdkHealth] = await Promise.all([
    windowStats(sql, projectId, timeframe),
    projectSeries(sql, projectId, timeframe),
    hasGroups(sql, projectId),
    readSdkHealth(sql, projectId, SDK_HEALTH_PANEL_DAYS),
  ]);
  return { timeframe, stats: { ...stats, top_errors: stats.top_errors.map((t) => withTitle(t)) as unknown as TopError[] }, series, hasEvents: any, sdkHealth, sdkHealthDays: SDK_HEALTH_PANEL_DAYS };
}

/** The overview's SDK health panel covers this many UTC days, today included. */
export const SDK_HEALTH_PANEL_DAYS = 14;

export const PAGE_SIZE = 25;
const STATUS_FILTERS = ["open", "resolved", "ignored", "all"] as const;
const ORIGIN_FILTERS = ["", "client", "server"] as const;
const LEVELS = ["", "error", "warn", "info"] as const;
const SORTS: GroupSort[] = ["last_seen", "first_seen", "count"];

export async function issuesData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const filters = issueFilters(q);
  const requested = Math.max(1, Number.parseInt(q.get("page") ?? "1", 10) || 1);
  const page = Math.min(10_000, requested);
  const [{ data, total, totalExact }, seenEnvironments, seenVersions, teammates] = await Promise.all([
    listGroups(sql, projectId, { ...matchOf(filters, actor), sort: filters.sort, limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE }),
    listEnvironments(sql, projectId),
    listVersionNames(sql, projectId),
    listMembers(sql, projectId),
  ]);
  const groups = data as unknown as GroupRow[];
  const environmentsOf = await issueEnvironments(sql, projectId, groups.map((g) => g.id));
  // a value in the address that the lists do not hold (past their limit, or never seen) is still offered,
  // so the form shows it selected and Apply keeps it
  const withCurrent = (list: string[], current: string) => (current && !list.includes(current) ? [current, ...list] : list);
  // each listed issue's last 24 hours, for the rows' sparklines: one statement for the page
  const hourly = await groupsHourlyCounts(sql, projectId, groups.map((g) => String(g.id)));
  return {
    filters,
    page: requested,
    pageSize: PAGE_SIZE,
    total,
    /** false: more than `total` (10,000) issues match; the page shows "10,000+" */
    totalExact,
    groups: groups.map((g) => ({ ...withTitle(g), environments: environmentsOf[g.id] ?? [] })),
    environments: withCurrent(seenEnvironments, filters.environment),
    versions: withCurrent([...seenVersions].sort((a, b) => compareVersions(b, a)), filters.version),
    hourly,
    /** who issues can be assigned to (and who the assignees are) */
    teammates: teammates.map((m) => ({ id: m.user_id, email: m.email })),
    me: actor.id,
  };
}

/** The issues-list filter from a query string; unknown values fall back to the defaults. */
export function issueFilters(q: URLSearchParams) {
  return {
    status: pick(q.get("status"), STATUS_FILTERS, "open"),
    level: pick(q.get("level"), LEVELS, ""),
    environment: cutText(text(q, "environment") ?? "", 256),
    search: cutText(text(q, "search") ?? "", 200),
    sort: pick(q.get("sort"), SORTS, "last_seen"),
    regressed: q.get("regressed") === "1" || q.get("regressed") === "true",
    version: cutText(text(q, "version") ?? "", 256),
    /** "me", "none", a member's user id, or "" (anyone) */
    assigned: assignedOf(q.get("assigned")),
    origin: pick(q.get("origin"), ORIGIN_FILTERS, ""),
  };
}
const assignedOf = (v: string | null) => (v === "me" || v === "none" || (v && asUuid(v)) ? (v === "me" || v === "none" ? v : asUuid(v)!) : "");
export type IssueFilters = ReturnType<typeof issueFilters>;

export const matchOf = (f: IssueFilters, actor: Actor) => ({
  status: f.status === "all" ? undefined : f.status,
  level: f.level || undefined,
  environment: f.environment || undefined,
  search: f.search || undefined,
  regressed: f.regressed || undefined,
  newInVersion: f.version || undefined,
  assignee: f.assigned === "" ? undefined : f.assigned === "none" ? null : f.assigned === "me" ? actor.id : f.assigned,
  origin: f.origin || undefined,
});

/** The same filter as the Team API's bulk body takes it. */
export const filterBody = (f: IssueFilters) => {
  const { newInVersion, assignee: _a, ...match } = matchOf(f, { id: "", email: "" });
  return { ...match, new_in_version: newInVersion, ...(f.assigned ? { assignee: f.assigned } : {}) };
};

export async function issueData(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, q = new URLSearchParams()) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = asUuid(groupIdParam);
  const group = groupId ? await getGroup(sql, projectId, groupId) : undefined;
  if (!groupId || !group) throw notFound("No error group with that id in this project.");
  const paging = new URLSearchParams();
  for (const k of ["before", "after"]) if (/^\d{1,18}$/.test(q.get(k) ?? "")) paging.set(k, q.get(k)!);
  const [series, page, links, facets, tags, latest, container] = await Promise.all([
    groupHourlySeries(sql, projectId, group),
    groupEventsOf(sql, projectId, group, paging),
    listShareLinks(sql, projectId, groupId),
    groupFacets(sql, projectId, groupId),
    groupTagBreakdown(sql, projectId, group),
    // the first page starts with the newest event: read apart only when paging
    paging.size > 0 ? latestGroupEvents(sql, projectId, group, 1) : undefined,
    // the issue a merged-away group is in, to name and link it
    group.merged_into ? getGroup(sql, projectId, group.merged_into) : undefined,
  ]);
  const newest = (latest ?? page.data)[0] as unknown as EventRow | undefined;
  return {
    /** the project (access checked) and the group as read: the page's other reads start from these */
    scope: { projectId, group: group as unknown as GroupRow },
    role,
    group: withTitle(group) as unknown as IssueRow,
    series: series.map((s) => ({ bucket: s.bucket, count: Number(s.count) })),
    events: page.data as unknown as EventRow[],
    newer: page.newer,
    older: page.older,
    paged: paging.size > 0,
    latestStack: newest?.stack_trace ?? null,
    /** the newest event's message as it was sent (the title is the first one's, in its grouping form) */
    latestMessage: newest?.message ?? null,
    links,
    ...facets,
    tags,
    mergedInto: container ? { id: container.id, message: String(container.message), title: issueTitle(String(container.message)) } : null,
  };
}

export async function playersData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const search = (q.get("search") ?? "").slice(0, 256);
  return players(sql, projectId, new URLSearchParams({ search, limit: "50" }));
}

export async function playerData(sql: Sql, actor: Actor, projectIdParam: string | undefined, userIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const found = await player(sql, projectId, userIdParam);
  const economy = await getEconomyPlayer(sql, projectId, found.player.user_id);
  return {
    ...found,
    issues: found.issues as unknown as (IssueRow & { regressed_at: Date | null })[],
    events: found.events as unknown as EventRow[],
    hasEconomy: Boolean(economy),
  };
}

export async function tracesData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const page = Math.max(1, Number.parseInt(q.get("page") ?? "1", 10) || 1);
  const r = await traces(sql, projectId, new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(Math.min(page - 1, 40_000) * PAGE_SIZE) }));
  return {
    page,
    pageSize: PAGE_SIZE,
    total: r.total,
    totalExact: r.total_exact,
    traces: (r.data as unknown as { trace_id: string; first_seen: Date; last_seen: Date; event_count: number; group_ids: string[]; first_message: string | null }[]).map((t) => ({
      ...t,
      first_title: t.first_message === null ? null : issueTitle(t.first_message),
    })),
  };
}

export async function traceData(sql: Sql, actor: Actor, projectIdParam: string | undefined, traceIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const traceId = asUuid(traceIdParam);
  const found = traceId ? await getTrace(sql, projectId, traceId) : undefined;
  if (!found) throw notFound("No trace with that id in this project.");
  return {
    trace: found.trace as unknown as { trace_id: string; first_seen: Date; last_seen: Date; event_count: number; group_ids: string[] },
    events: found.events as unknown as EventRow[],
  };
}

export async function settingsData(sql: Sql, actor: Actor, projectIdParam: string | undefined) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const manager = MANAGERS.includes(role);
  const [keys, members, links] = await Promise.all([
    manager ? listApiKeys(sql, projectId) : Promise.resolve([]),
    listMembers(sql, projectId),
    listShareLinks(sql, projectId),
  ]);
  const messages = await groupMessages(sql, projectId, [...new Set(links.map((l) => l.group_id))]);
  return {
    role,
    keys: keys.map(({ project_id: _p, ...k }) => k),
    members,
    links: links.map((l) => ({ ...l, message: messages[l.group_id] ?? "", title: issueTitle(messages[l.group_id] ?? "") })),
  };
}
