import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabaseUrl, startTestApp, type TestApp } from "../support/server.js";
import { call, login } from "../support/team.js";
import { latestFixture, restoreFixture } from "../support/upgrade-fixtures.js";

/**
 * Deleting a project leaves nothing of it in any table: a project populated by a release through its
 * whole API (issues, events, economy, release health, alerts, share links, members: the upgrade
 * fixture), then used by this one (a comment, an assignment), is deleted by its owner, and every
 * table with a `project_id` column holds no row of it.
 */
const fixture = latestFixture();

let app: TestApp;

beforeAll(async () => {
  const url = await freshDatabaseUrl();
  await restoreFixture(url, fixture);
  app = await startTestApp({}, url);
});
afterAll(() => app?.close());

async function rowsOf(projectId: string): Promise<Record<string, number>> {
  const tables = await app.sql<{ name: string }[]>`
    select format('%I.%I', c.table_schema, c.table_name) as name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.column_name = 'project_id' and c.table_schema = 'public'
      -- partitions are counted through their parent
      and not exists (select 1 from pg_inherits i join pg_class k on k.oid = i.inhrelid where k.relname = c.table_name)
    order by 1`;
  const out: Record<string, number> = {};
  for (const { name } of tables) {
    const [{ n }] = await app.sql.unsafe(`select count(*)::int as n from ${name} where project_id = $1`, [projectId]);
    out[name] = n;
  }
  return out;
}

describe("deleting a project", () => {
  it("removes its rows from every table that has a project_id", async () => {
    const cookie = await login(app, fixture.email, fixture.password);
    const P = `/api/team/projects/${fixture.project_id}`;
    const groups = await call(app, "GET", `/api/v1/errors?grouped=true&limit=10`, { headers: { "x-api-key": fixture.api_key } });
    const groupId = groups.body.data[0].id;
    expect((await call(app, "POST", `${P}/groups/${groupId}/comments`, { cookie, body: { body: "looking" } })).status).toBe(201);
    const me = await call(app, "GET", "/api/auth/me", { cookie });
    expect((await call(app, "PATCH", `${P}/groups/${groupId}`, { cookie, body: { assignee_id: me.body.user.id } })).status).toBe(200);

    const before = await rowsOf(fixture.project_id);
    // the fixture's project has rows in the tables that matter most
    for (const t of ["public.events", "public.error_groups", "public.health_servers", "public.health_sessions", "public.health_hour", "public.economy_snapshots", "public.alert_rules", "public.issue_comments"]) {
      expect(before[t], t).toBeGreaterThan(0);
    }
    const del = await call(app, "DELETE", P, { cookie });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    const after = await rowsOf(fixture.project_id);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
  });
});
