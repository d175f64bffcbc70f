import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countGroups, TOTAL_CAP } from "../../db/errors.js";
import { addToMessages } from "../../db/event-messages.js";
import { getJson, startTestApp, type TestApp } from "../support/server.js";
import { list } from "../support/query-fixtures.js";
import { login, makeProject, makeUser } from "../support/team.js";

/**
 * A list's total is exact up to 10,000 matches; past that it answers 10,000 with `total_exact: false`
 * and the dashboard shows "10,000+" (docs/api.md, "Totals"). Every list with a total does so: issues
 * (searched or not), raw events (every way they are counted) and traces. Counts that are not a list's
 * total (a bulk action's count, occurrences) stay exact. The rows are generated in SQL: ingesting
 * 10,001 of them through the API would take most of the test's time.
 */
let app: TestApp;
let cookie: string;
/** The grouped lists every issue total is checked on: unfiltered, searched, filtered. */
const GROUPED: Record<string, string | boolean>[] = [{ grouped: true }, { grouped: true, search: "boundary" }, { grouped: true, status: "open", level: "error" }];
let ownerId: string;
beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  ownerId = owner.id;
  cookie = await login(app, owner.email);
});
afterAll(() => app?.close());

/** Page text without React's markers between adjacent text parts. */
const page = async (path: string) => (await (await app.request(path, { headers: { cookie } })).text()).replaceAll("<!-- -->", "");

/** Groups `from`..`to` named "<prefix> failure <n>": the higher n, the more recently seen. */
async function addGroups(projectId: string, prefix: string, from: number, to: number) {
  await app.sql`
    insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, count)
    select ${projectId}, md5(${prefix} || n), ${prefix} || ' failure ' || n, 'error',
      now() - interval '2 days', now() - interval '1 day' + make_interval(secs => n), 'production', 1
    from generate_series(${from}::int, ${to}::int) n`;
}

/** `n` stored events of one group, one a second over the last hours, with their texts and the group's counters. */
async function addEvents(projectId: string, message: string, level: string, n: number) {
  const [{ id }] = await app.sql<{ id: string }[]>`
    insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment)
    values (${projectId}, md5(${message} || ${level}), ${message}, ${level}, now() - interval '3 hours', now(), 'production')
    on conflict (project_id, fingerprint) do update set last_seen = excluded.last_seen returning id`;
  await app.sql`select ensure_day_partitions('events', 'timestamp', (now() at time zone 'UTC')::date - 1, (now() at time zone 'UTC')::date)`;
  await app.sql`
    insert into events (project_id, group_id, message, level, environment, count, "timestamp", received_at)
    select ${projectId}, ${id}, ${message}, ${level}, 'production', 1, now() - make_interval(secs => i), now()
    from generate_series(1, ${n}::int) i`;
  await app.sql`${addToMessages(app.sql, app.sql`select ${projectId}::uuid as project_id, ${id}::uuid as group_id, ${message}::text as message, ${n}::bigint as n`)}`;
  await app.sql`update error_groups set count = count + ${n}, stored_count = stored_count + ${n} where project_id = ${projectId} and id = ${id}`;
}

describe("issue totals", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, ownerId, [], "Ten thousand issues"));
    await addGroups(projectId, "Boundary", 1, TOTAL_CAP);
    await app.sql`analyze error_groups`;
  });

  it("is exact at exactly 10,000 matches, searched or not, and the page shows the figure", async () => {
    expect(TOTAL_CAP).toBe(10_000);
    for (const params of GROUPED) {
      const r = await list(app, apiKey, params);
      expect(r.status).toBe(200);
      expect([r.body.total, r.body.total_exact], JSON.stringify(params)).toEqual([10_000, true]);
    }
    const html = await page(`/projects/${projectId}/issues`);
    expect(html).toContain('data-testid="issue-total">10,000 issues<');
    expect(html).toContain("Page 1 of 400<");
  });

  it("past 10,000 answers 10,000, not exact, with every page still reachable and in order", async () => {
    await addGroups(projectId, "Boundary", TOTAL_CAP + 1, TOTAL_CAP + 1);
    for (const params of GROUPED) {
      const r = await list(app, apiKey, params);
      expect([r.body.total, r.body.total_exact], JSON.stringify(params)).toEqual([10_000, false]);
      // the page is still the newest of all 10,001 matches
      expect(r.body.data[0].message).toBe("Boundary failure 10001");
    }
    // the last match, past the counted ones
    const last = await list(app, apiKey, { grouped: true, search: "boundary", limit: 10, offset: 10_000 });
    expect(last.body.data.map((g: { message: string }) => g.message)).toEqual(["Boundary failure 1"]);
    expect([last.body.total, last.body.total_exact]).toEqual([10_000, false]);
    // fewer matches are counted exactly: 42, 420..429 and 4200..4299
    const few = await list(app, apiKey, { grouped: true, search: "failure 42" });
    expect([few.body.total, few.body.total_exact]).toEqual([111, true]);
    // a bulk action's count is not a list's total: it stays exact
    expect(await countGroups(app.sql, projectId, { search: "boundary" })).toBe(10_001);
  });

  it("the issues page shows 10,000+, offers the next page, and lists the issues past 10,000", async () => {
    const html = await page(`/projects/${projectId}/issues?search=boundary`);
    expect(html).toContain('data-testid="issue-total">10,000+ issues<');
    expect(html).toContain("All 10,000+ issues matching:");
    expect(html).toContain("Page 1 of 400+<");
    expect(html).toContain("Next →");
    const confirm = await page(`/projects/${projectId}/issues?search=boundary&confirm=resolved`);
    expect(confirm).toContain("Resolve all 10,000+ issues matching these filters?");
    // page 401 holds the 10,001st issue: shown, not "no such page"
    const past = await page(`/projects/${projectId}/issues?search=boundary&page=401`);
    expect(past).not.toContain('data-testid="no-such-page"');
    const [oldest] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = 'Boundary failure 1'`;
    expect(past).toContain(`/issues/${oldest.id}"`);
    expect(past).toContain("Page 401 of 401+<");
    expect(past).not.toContain("Next →");
    const beyond = await page(`/projects/${projectId}/issues?search=boundary&page=402`);
    expect(beyond).toContain('data-testid="no-such-page"');
  });
});

describe("raw event totals", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, ownerId, [], "Ten thousand events"));
    await addEvents(projectId, "Spill in ServerScriptService.Tank", "warn", TOTAL_CAP);
    await addEvents(projectId, "Other error", "error", 5);
    await app.sql`analyze events`;
  });

  const totalOf = async (params: Record<string, string | number | boolean>) => {
    const r = await list(app, apiKey, params);
    expect(r.status).toBe(200);
    return [r.body.total, r.body.total_exact];
  };

  it("is exact up to 10,000 and a floor past it, however the events are counted", async () => {
    // filtered by level: counted among the events; searched alone: from the stored texts; searched with a filter: in the window
    expect(await totalOf({ level: "warn" })).toEqual([10_000, true]);
    expect(await totalOf({ search: "spill" })).toEqual([10_000, true]);
    expect(await totalOf({ search: "spill", level: "warn" })).toEqual([10_000, true]);
    expect(await totalOf({ level: "error" })).toEqual([5, true]);
    // unfiltered: from the groups' stored counts
    expect(await totalOf({})).toEqual([10_000, false]);

    await addEvents(projectId, "Spill in ServerScriptService.Tank", "warn", 1);
    expect(await totalOf({ level: "warn" })).toEqual([10_000, false]);
    expect(await totalOf({ search: "spill" })).toEqual([10_000, false]);
    expect(await totalOf({ search: "spill", level: "warn" })).toEqual([10_000, false]);
    expect(await totalOf({ search: "other" })).toEqual([5, true]);
    // the group's own figures stay exact
    const groups = await list(app, apiKey, { grouped: true, search: "spill" });
    expect([groups.body.total, groups.body.total_exact, Number(groups.body.data[0].count)]).toEqual([1, true, 10_001]);
  });
});

describe("trace totals", () => {
  it("counts traces up to 10,000, and the traces page offers the pages past them", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, ownerId, [], "Many traces");
    await app.sql`
      insert into traces (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
      select ${projectId}, gen_random_uuid(), now() - make_interval(secs => i), now() - make_interval(secs => i), 1, '{}'
      from generate_series(1, ${TOTAL_CAP}::int) i`;
    const exact = await getJson(app, "/api/v1/traces?limit=1", apiKey);
    expect([exact.status, exact.body.total, exact.body.total_exact]).toEqual([200, 10_000, true]);
    expect(await page(`/projects/${projectId}/traces`)).toContain("Page 1 of 400<");

    await app.sql`
      insert into traces (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
      values (${projectId}, gen_random_uuid(), now() - interval '1 day', now() - interval '1 day', 1, '{}')`;
    const floor = await getJson(app, "/api/v1/traces?limit=1", apiKey);
    expect([floor.body.total, floor.body.total_exact]).toEqual([10_000, false]);
    const html = await page(`/projects/${projectId}/traces?page=401`);
    expect(html).toContain("Page 401 of 401+<");
    expect(html).not.toContain('data-testid="no-such-page"');
  });
});
