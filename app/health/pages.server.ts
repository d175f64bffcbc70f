import type { Sql } from "../../db/client.js";
import { HEALTH_WINDOWS, releaseDetails, releasesWithHealth, type HealthWindow } from "./releases.server";
import { servers } from "./servers.server";
import { issueTitle } from "~/errors/title.server";
import { SERIES_STEP_HOURS } from "~/components/health/format";

export { SERIES_STEP_HOURS };
import { authorize, EVERYONE, type Actor } from "~/team/access.server";

/**
 * What the Release health and Live servers pages read, beside the release health module's own reads
 * (releasesWithHealth, releaseDetail, servers): the page's choices made safe (a bad window or version
 * in an address is the default, not an error page), whether the project ever sent a health report,
 * the environments to filter by, and one server's errors (the issues API has no job_id filter).
 */

export const RELEASES_PAGE_SIZE = 20;

export const WINDOWS = Object.keys(HEALTH_WINDOWS) as HealthWindow[];

export type ReleaseHealthChoices = { window: HealthWindow; environment: string; page: number; a: string; b: string };

export function releaseHealthChoices(q: URLSearchParams): ReleaseHealthChoices {
  const w = q.get("window") ?? "";
  const environment = (q.get("environment") ?? "").trim();
  return {
    window: (WINDOWS as string[]).includes(w) ? (w as HealthWindow) : "24h",
    environment: environment.length <= 256 ? environment : "",
    page: Math.min(10_000, Math.max(1, Number.parseInt(q.get("page") ?? "1", 10) || 1)),
    a: (q.get("a") ?? "").trim().slice(0, 256),
    b: (q.get("b") ?? "").trim().slice(0, 256),
  };
}

/** Whether any game server of the project ever reported its health (else the page says how to turn it on). */
export async function hasHealthReports(sql: Sql, projectId: string): Promise<boolean> {
  const [row] = await sql`select 1 from health_versions where project_id = ${projectId} limit 1`;
  return Boolean(row);
}

/** The environments game servers reported from in the last 30 days (the longest window), for the filter. */
export async function healthEnvironments(sql: Sql, projectId: string): Promise<string[]> {
  const rows = await sql<{ environment: string }[]>`
    select distinct environment from health_hour
    where project_id = ${projectId} and hour >= now() - interval '30 days'
    order by environment limit 50`;
  return rows.map((r) => r.environment);
}

/**
 * The Release health page: every version's health over the window (a page of them, newest first,
 * with their error figures) and two versions side by side with their series. Unless the address names
 * them, the two compared are the newest two on the page shown (the newest two overall on page 1).
 */
export async function releaseHealthData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const c = releaseHealthChoices(q);
  const hq = new URLSearchParams({ window: c.window, limit: String(RELEASES_PAGE_SIZE), offset: String((c.page - 1) * RELEASES_PAGE_SIZE) });
  if (c.environment) hq.set("environment", c.environment);
  const [list, any, environments] = await Promise.all([releasesWithHealth(sql, projectId, hq), hasHealthReports(sql, projectId), healthEnvironments(sql, projectId)]);
  const versions = list.data.map((r) => r.version);
  const a = c.a || versions[0] || "";
  const b = c.b || versions.find((v) => v !== a) || "";
  // the versions of the list shown have their health read already (same window and environment); a
  // version named in the address that the project does not know compares as absent
  const known = new Map(list.data.map((r) => [r.version, r.health]));
  const compare = await releaseDetails(sql, projectId, [a, b].filter(Boolean), hq, known, SERIES_STEP_HOURS[c.window]);
  return {
    choices: { ...c, a, b },
    hasHealth: any,
    environments: c.environment && !environments.includes(c.environment) ? [...environments, c.environment] : environments,
    releases: list.data,
    total: list.total,
    pageSize: RELEASES_PAGE_SIZE,
    compare,
  };
}

export type ServerIssue = { id: string; title: string; level: string; status: string; occurrences: number; last_seen: Date };
export type ServerErrors = { job_id: string; known: boolean; from: Date; issues: ServerIssue[]; occurrences: number };

/**
 * The issues one game server (JobId) met: its events grouped by issue, most occurrences first. The
 * events are read over the server's life only (from its start to its end or now; the last 24 hours
 * for a JobId without a health report), so the read is bounded by the events index on time.
 */
export async function serverErrors(sql: Sql, projectId: string, jobId: string): Promise<ServerErrors> {
  const [server] = await sql<{ started_at: Date; until: Date }[]>`
    select started_at, coalesce(ended_at, case when lost_at is not null then last_seen end, now()) + interval '5 minutes' as until
    from health_servers where project_id = ${projectId} and job_id = ${jobId}`;
  const from = server ? new Date(server.started_at.getTime() - 60_000) : new Date(Date.now() - 86_400_000);
  const until = server?.until ?? new Date(Date.now() + 300_000);
  const rows = await sql<{ id: string; message: string; level: string; status: string; occurrences: number; last_seen: Date }[]>`
    select g.id, g.message, g.level, g.status, sum(e.count)::float8 as occurrences, max(e."timestamp") as last_seen
    from events e join error_groups g on g.project_id = e.project_id and g.id = e.group_id
    where e.project_id = ${projectId} and e."timestamp" >= ${from} and e."timestamp" <= ${until} and e.job_id = ${jobId}
    group by g.id, g.message, g.level, g.status
    order by occurrences desc, last_seen desc, g.id
    limit 50`;
  return {
    job_id: jobId,
    known: Boolean(server),
    from,
    issues: rows.map((r) => ({ id: r.id, title: issueTitle(r.message), level: r.level, status: r.status, occurrences: r.occurrences, last_seen: r.last_seen })),
    occurrences: rows.reduce((s, r) => s + r.occurrences, 0),
  };
}

export const SERVERS_PAGE_SIZE = 50;
export const ABNORMAL_SHOWN = 20;

/** The Live servers page: servers running now (a page of them), the latest abnormal ends, and one server's errors when asked. */
export async function liveServersData(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const page = Math.min(10_000, Math.max(1, Number.parseInt(q.get("page") ?? "1", 10) || 1));
  const job = (q.get("job") ?? "").trim();
  const [live, abnormal, any, errors] = await Promise.all([
    servers(sql, projectId, new URLSearchParams({ state: "live", limit: String(SERVERS_PAGE_SIZE), offset: String((page - 1) * SERVERS_PAGE_SIZE) })),
    servers(sql, projectId, new URLSearchParams({ state: "abnormal", limit: String(ABNORMAL_SHOWN) })),
    hasHealthReports(sql, projectId),
    job && job.length <= 100 ? serverErrors(sql, projectId, job) : Promise.resolve(null),
  ]);
  return { page, pageSize: SERVERS_PAGE_SIZE, live: live.data, liveTotal: live.total, abnormal: abnormal.data, abnormalTotal: abnormal.total, hasHealth: any, errors };
}
