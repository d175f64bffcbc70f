import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, startTestApp, type TestApp } from "../support/server.js";
import { HOUR, MINUTE, ingest, iso } from "../support/query-fixtures.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { groupsHourlyCounts } from "../../db/group-reads.js";
import { countersApplied } from "../support/counters.js";

/**
 * The issues list's per-row 24-hour sparklines (hourly rollups of the page's issues, read in one
 * statement) and which issue a trace started with: the traces list and the trace's page both go by
 * event time, whatever order the events arrived in.
 */
let app: TestApp;
let cookie: string;
let ownerId: string;
beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  ownerId = owner.id;
  cookie = await login(app, owner.email);
});
afterAll(() => app?.close());

const groupIdOf = async (projectId: string, message: string) => {
  const [g] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = ${message}`;
  return g.id;
};
/** Page text without React's markers between adjacent text parts. */
const page = async (path: string) => (await (await app.request(path, { headers: { cookie } })).text()).replaceAll("<!-- -->", "");

describe("issues list sparklines", () => {
  let projectId: string;
  let apiKey: string;
  let hour0: number;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, ownerId, [], "Sparklines"));
    // the database's current hour, which the series ends with
    const [{ h }] = await app.sql<{ h: Date }[]>`select date_trunc('hour', now()) as h`;
    hour0 = h.getTime();
    const at = (hoursAgo: number) => iso(hour0 - hoursAgo * HOUR);
    await ingest(app, apiKey, [
      { message: "Busy error", timestamp: at(0) },
      { message: "Busy error", timestamp: at(1), count: 3 },
      { message: "Busy error", timestamp: at(5) },
      { message: "Busy error", timestamp: at(23) },
      // outside the 24 hours: counted by the issue, not drawn
      { message: "Busy error", timestamp: at(24) },
      { message: "Busy error", timestamp: at(30) },
      { message: "Quiet error", timestamp: at(2) },
      { message: "Old error", timestamp: at(48) },
      { message: "Merged-in error", timestamp: at(3), count: 2 },
    ]);
    await countersApplied(app.sql);
  });

  it("gives each listed issue its occurrences per hour over the last 24 hours, oldest first, merged members included", async () => {
    const busy = await groupIdOf(projectId, "Busy error");
    const quiet = await groupIdOf(projectId, "Quiet error");
    const old = await groupIdOf(projectId, "Old error");
    const merged = await groupIdOf(projectId, "Merged-in error");
    const m = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie, body: { ids: [busy, merged], target_id: busy } });
    expect(m.status, JSON.stringify(m.body)).toBe(200);

    const hourly = await groupsHourlyCounts(app.sql, projectId, [busy, quiet, old]);
    const series = (points: Record<number, number>) => Array.from({ length: 24 }, (_, i) => points[23 - i] ?? 0);
    expect(hourly[busy]).toEqual(series({ 0: 1, 1: 3, 3: 2, 5: 1, 23: 1 }));
    expect(hourly[quiet]).toEqual(series({ 2: 1 }));
    expect(hourly[old]).toEqual(series({}));
    expect(Object.keys(hourly).sort()).toEqual([busy, quiet, old].sort());
    // the group merged away is not listed and has no cells of its own left
    expect((await groupsHourlyCounts(app.sql, projectId, [merged]))[merged]).toEqual(series({}));
    // another project's issues have no cells here
    const other = await makeProject(app.sql, ownerId, [], "Other");
    expect((await groupsHourlyCounts(app.sql, other.projectId, [busy]))[busy]).toEqual(series({}));
    expect(await groupsHourlyCounts(app.sql, projectId, [])).toEqual({});
  });

  it("draws them on the list with a label that says the figures", async () => {
    const html = await page(`/projects/${projectId}/issues?status=all`);
    expect(html).toContain('aria-label="Occurrences per hour, last 24 hours: 8 in total, at most 3 in one hour"');
    expect(html).toContain('aria-label="Occurrences per hour, last 24 hours: 1 in total, at most 1 in one hour"');
    expect(html).toContain('aria-label="Occurrences per hour, last 24 hours: none"');
    expect(html.match(/<svg class="sparkline"/g)).toHaveLength(3);
  });
});

describe("a trace's first issue", () => {
  let projectId: string;
  let apiKey: string;
  const FIRST_A = "0b4e28ba-2fa1-11d2-883f-00000000000a";
  const FIRST_B = "0b4e28ba-2fa1-11d2-883f-00000000000b";
  const EXPIRED = "0b4e28ba-2fa1-11d2-883f-00000000000c";
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, ownerId, [], "Traces"));
    const t = Date.now() - 10 * MINUTE;
    // each trace's later event arrives first; the two traces start with different issues, so
    // whichever of the two issues has the lower id, one trace would be named wrongly by it
    await ingest(app, apiKey, [
      { message: "Shop purchase failed", trace_id: FIRST_A, timestamp: iso(t + 2000) },
      { message: "Inventory save failed", trace_id: FIRST_B, timestamp: iso(t + 4000) },
      { message: "Shop purchase failed", trace_id: EXPIRED, timestamp: iso(t + 6000) },
    ]);
    await ingest(app, apiKey, [
      { message: "Inventory save failed", trace_id: FIRST_A, timestamp: iso(t + 1000) },
      { message: "Shop purchase failed", trace_id: FIRST_B, timestamp: iso(t + 3000) },
      { message: "Inventory save failed", trace_id: EXPIRED, timestamp: iso(t + 5000) },
    ]);
    // retention removed this trace's events; the trace stays
    await app.sql`delete from events where project_id = ${projectId} and trace_id = ${EXPIRED}`;
    await countersApplied(app.sql);
  });

  it("is the issue of the trace's earliest event, in the list and on the trace's page alike", async () => {
    const list = await getJson(app, "/api/v1/traces", apiKey);
    expect(list.status).toBe(200);
    const byId = Object.fromEntries(list.body.data.map((t: any) => [t.trace_id, t]));
    expect(byId[FIRST_A].first_message).toBe("Inventory save failed");
    expect(byId[FIRST_B].first_message).toBe("Shop purchase failed");
    expect(byId[EXPIRED].first_message).toBeNull();
    // newest first by first event
    expect(list.body.data.map((t: any) => t.trace_id)).toEqual([EXPIRED, FIRST_B, FIRST_A]);
    for (const [trace, first] of [[FIRST_A, "Inventory save failed"], [FIRST_B, "Shop purchase failed"]]) {
      const detail = await getJson(app, `/api/v1/traces/${trace}`, apiKey);
      expect(detail.body.events.map((e: any) => e.message)[0]).toBe(first);
      const firstGroup = await groupIdOf(projectId, first);
      expect(detail.body.events[0].group_id).toBe(firstGroup);
    }
  });

  it("shows the same on the dashboard's traces page and trace page", async () => {
    const html = await page(`/projects/${projectId}/traces`);
    const row = (trace: string) => html.slice(html.indexOf(`/traces/${trace}`), html.indexOf("</tr>", html.indexOf(`/traces/${trace}`)));
    expect(row(FIRST_A)).toContain("Inventory save failed");
    expect(row(FIRST_A)).not.toContain("Shop purchase failed");
    expect(row(FIRST_B)).toContain("Shop purchase failed");
    expect(row(FIRST_B)).not.toContain("Inventory save failed");
    const trace = await page(`/projects/${projectId}/traces/${FIRST_A}`);
    const table = trace.slice(trace.indexOf("<tbody>"), trace.indexOf("</tbody>"));
    expect(table.indexOf("Inventory save failed")).toBeLessThan(table.indexOf("Shop purchase failed"));
  });
});
