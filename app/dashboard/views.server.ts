import type { Sql } from "../../db/client.js";
import { groupMessages, hasGroups, listEnvironments, projectSeries } from "../../db/dashboard.js";
import { getGroup, getTrace, groupHourlySeries, latestGroupEvents, listGroups, type GroupSort } from "../../db/errors.js";
import { listApiKeys } from "../../db/projects.js";
import { listShareLinks } from "../../db/share-links.js";
import { windowStats, type Timeframe } from "../../db/stats.js";
import { listMembers } from "../../db/members.js";
import { asUuid } from "~/errors/params.server";
import { notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";

/** What the dashboard pages read. Each starts at the same gate as the Team API. */

export type GroupRow = {
  id: string;
  fingerprint: string;
  message: string;
  level: string;
  status: string;
  count: number;
  user_count: number;
  first_seen: Date;
  last_seen: Date;
  culprit: string | null;
  environment: string;
  regressed_at: Date | null;
  resolved_at: Date | null;
  grouping_version: number;
  merged_into: string | null;
};
export type EventRow = {
  id: string;
  group_id: string;
  message: string;
  level: string;
  stack_trace: string | null;
  user_id: number | string | null;
  player_name: string | null;
  trace_id: string | null;
  job_id: string | null;
  place_id: number | string | null;
  game_version: string | null;
  environment: string;
  context: unknown;
  tags: string[] | null;
  count: number;
  timestamp: Date;
};
type TopError = { id: string; message: string; count: number; last_seen: Date; level: string; status: string };

export const TIMEFRAMES: Timeframe[] = ["1h", "24h", "7d", "30d"];
const pick = <T extends string>(v: string | null, allowed: readonly T[], def: T): T => (allowed.includes(v as T) ? (v as T) : def);

export async function overviewData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const timeframe = pick(q.get("timeframe"), TIMEFRAMES, "24h");
  const [stats, series, any] = await Promise.all([
    windowStats(sql, projectId, timeframe),
    projectSeries(sql, projectId, timeframe),
    hasGroups(sql, projectId),
  ]);
  return { timeframe, stats: { ...stats, top_errors: stats.top_errors as unknown as TopError[] }, series, hasEvents: any };
}

export const PAGE_SIZE = 25;
const STATUS_FILTERS = ["open", "resolved", "ignored", "all"] as const;
const LEVELS = ["", "error", "warn", "info"] as const;
const SORTS: GroupSort[] = ["last_seen", "first_seen", "count"];

export async function issuesData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const filters = {
    status: pick(q.get("status"), STATUS_FILTERS, "open"),
    level: pick(q.get("level"), LEVELS, ""),
    environment: (q.get("environment") ?? "").slice(0, 256),
    search: (q.get("search") ?? "").slice(0, 200),
    sort: pick(q.get("sort"), SORTS, "last_seen"),
  };
  const page = Math.max(1, Math.min(10_000, Number.parseInt(q.get("page") ?? "1", 10) || 1));
  const [{ data, total }, environments] = await Promise.all([
    listGroups(sql, projectId, {
      status: filters.status === "all" ? undefined : filters.status,
      level: filters.level || undefined,
      environment: filters.environment || undefined,
      search: filters.search || undefined,
      sort: filters.sort,
      limit: PAGE_SIZE,
      offset: (page - 1) * PAGE_SIZE,
    }),
    listEnvironments(sql, projectId),
  ]);
  return { filters, page, pageSize: PAGE_SIZE, total, groups: data as unknown as GroupRow[], environments };
}

export async function issueData(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = asUuid(groupIdParam);
  const group = groupId ? await getGroup(sql, projectId, groupId) : undefined;
  if (!groupId || !group) throw notFound("No error group with that id in this project.");
  const [series, events, links] = await Promise.all([
    groupHourlySeries(sql, projectId, groupId),
    latestGroupEvents(sql, projectId, groupId, 20),
    listShareLinks(sql, projectId, groupId),
  ]);
  return {
    role,
    group: group as unknown as GroupRow,
    series: series.map((s) => ({ bucket: s.bucket, count: Number(s.count) })),
    events: events as unknown as EventRow[],
    links,
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
    links: links.map((l) => ({ ...l, message: messages[l.group_id] ?? "" })),
  };
}
