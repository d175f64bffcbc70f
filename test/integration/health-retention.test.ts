import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHealthRetention } from "../../jobs/retention.js";
import { ensurePartitions } from "../../jobs/partitions.js";
import { createProject, postJson, startTestApp, type TestApp } from "../support/server.js";
import { healthState, playersExact, script, scriptBase } from "../support/health.js";

/** Health samples, sessions, servers and rollups follow RETENTION_DAYS like raw events. */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const DAY = 86_400_000;
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

async function load(name: string) {
  const { apiKey, projectId } = await createProject(app.sql, name);
  for (const r of script(scriptBase())) expect((await postJson(app, "/api/health", r, apiKey)).status).toBe(200);
  return projectId;
}

/** Moves every health row and cell of a project `days` back in time (as if written then). */
async function age(projectId: string, days: number) {
  const i = `${days} days`;
  await app.sql`update health_samples set at = at - ${i}::interval where project_id = ${projectId}`;
  await app.sql`update health_sessions set started_at = started_at - ${i}::interval, ended_at = ended_at - ${i}::interval where project_id = ${projectId}`;
  await app.sql`update health_servers set started_at = started_at - ${i}::interval, ended_at = ended_at - ${i}::interval,
    last_seen = last_seen - ${i}::interval where project_id = ${projectId}`;
  await app.sql`update health_hour set hour = hour - ${i}::interval where project_id = ${projectId}`;
  await app.sql`update health_minute set minute = minute - ${i}::interval where project_id = ${projectId}`;
  await app.sql`update health_hist_hour set hour = hour - ${i}::interval where project_id = ${projectId}`;
  await app.sql`update health_player_days set day = day - ${days}::int where project_id = ${projectId}`;
  await app.sql`update health_hist_day set day = day - ${days}::int where project_id = ${projectId}`;
  await app.sql`update health_player_summary set active_day = active_day - ${days}::int, ended_day = ended_day - ${days}::int,
    errored_day = errored_day - ${days}::int where project_id = ${projectId}`;
  await app.sql`update health_player_counts set active_day = active_day - ${days}::int, ended_day = ended_day - ${days}::int,
    errored_day = errored_day - ${days}::int where project_id = ${projectId}`;
  await app.sql`update health_versions set first_seen = first_seen - ${i}::interval where project_id = ${projectId}`;
}

describe("health retention", () => {
  it("deletes what is older than RETENTION_DAYS, dropping whole sample days, and keeps the rest", async () => {
    const now = Date.now();
    // a partition for the day 40 days back (as if the partitions job had made it then), and one 45 days back left empty
    await app.sql`select ensure_day_partitions('health_samples', 'at', ${dayOf(now - 40 * DAY)}::date, ${dayOf(now - 40 * DAY)}::date)`;
    const old = await load("Old");
    const late = await load("Late");
    const recent = await load("Recent");
    await age(old, 40);
    // samples of a day with no partition sit in the default partition
    await age(late, 50);
    const kept = await healthState(app.sql, recent);
    const [{ n: inDefault }] = await app.sql<{ n: number }[]>`select count(*)::int as n from health_samples_default where project_id = ${late}`;
    expect(inDefault).toBeGreaterThan(0);

    const r = await runHealthRetention(app.sql, 30);
    expect(r.samples).toBe(2 * 5);
    expect(r.sessions).toBe(2 * 5);
    expect(r.servers).toBe(2 * 3);
    for (const p of [old, late]) {
      const s = await healthState(app.sql, p);
      expect(Object.entries(s).filter(([, rows]) => rows.length > 0).map(([k]) => k)).toEqual([]);
      // the open sessions it deleted left the kept open count with them
      expect((await playersExact(app.sql, p)).counted.open).toEqual([]);
      for (const table of ["health_versions", "health_hist_day", "health_player_summary", "health_player_counts"]) {
        expect(await app.sql`select 1 from ${app.sql(table)} where project_id = ${p}`, table).toHaveLength(0);
      }
    }
    const parts = await app.sql<{ name: string }[]>`select relname as name from pg_class where relname like 'health_samples_p%'`;
    expect(parts.map((p) => p.name)).not.toContain(`health_samples_p${dayOf(now - 40 * DAY).replaceAll("-", "")}`);
    expect(await healthState(app.sql, recent)).toEqual(kept);
    // the partitions job keeps health sample days ready like the others
    await ensurePartitions(app.sql);
    const ahead = `health_samples_p${dayOf(now + 7 * DAY).replaceAll("-", "")}`;
    expect((await app.sql`select 1 from pg_class where relname = ${ahead}`).length).toBe(1);
  });
});

describe("health alert states", () => {
  it("a recovered alert's row goes once its rule's cooldown and a day have passed; open ones and recent ones stay", async () => {
    const { projectId } = await createProject(app.sql, "Alert states");
    const [rule] = await app.sql<{ id: string }[]>`
      insert into alert_rules (project_id, name, trigger, threshold_count, window_minutes, cooldown_minutes)
      values (${projectId}, 'oom', 'out_of_memory', 1, 60, 30) returning id`;
    const state = (subject: string, firedAgo: string, recoveredAgo: string | null) => app.sql`
      insert into health_alert_state (project_id, rule_id, subject, fired_at, recovered_at)
      values (${projectId}, ${rule.id}, ${subject}, now() - ${firedAgo}::interval, now() - ${recoveredAgo}::interval)`;
    await state("version:old", "10 days", "9 days");
    // recovered 1 day and 20 minutes ago: within cooldown (30 min) + 1 day
    await state("version:recent", "2 days", "1 day 20 minutes");
    await state("version:open", "40 days", null);
    const r = await runHealthRetention(app.sql, 30);
    expect(r.alert_states).toBe(1);
    const left = await app.sql<{ subject: string }[]>`select subject from health_alert_state where project_id = ${projectId} order by subject`;
    expect(left.map((s) => s.subject)).toEqual(["version:open", "version:recent"]);
  });
});
