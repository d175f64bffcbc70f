/**
 * (g) The API's reads over data generated in SQL (sql-data.ts), where HTTP could not load enough in
 * time: the queries of (e) plus a group's detail, its events and tags, traces, players and the
 * dashboard pages that show them, at 10,000 and at BENCH_SQL_EVENTS raw events (1,000 groups each, 30
 * days in daily partitions), compared row by row and each held to p50 < 100 ms at the large size; then grouped search over 100,000 groups,
 * and the stats windows of a project with 100,000 groups and two events each over 30 days.
 */
import { compareRows, createProject, fmt, health, measureQueries, signedInUser, verdict, type Bench, type Row } from "./harness.js";
import { QUERIES } from "./http-queries.js";
import { generateEvents, generateGroups } from "./sql-data.js";

const SEARCH_GROUPS = 100_000;
/** The many-groups project: SEARCH_GROUPS groups, each with MANY_GROUPS_EVENTS / SEARCH_GROUPS events over 30 days. */
const MANY_GROUPS_EVENTS = 200_000;
/** The queries held to the size ratio. */
const TARGETED = ["errors raw first page", "errors grouped first page", "group detail", "stats 1h", "stats 24h", "stats 7d", "stats 30d"];

/** BENCH_SQL_QUERIES: a regular expression; only the queries of (g) whose names match it run (all by default). */
const ONLY = process.env.BENCH_SQL_QUERIES ? new RegExp(process.env.BENCH_SQL_QUERIES) : null;
const chosen = <Q extends { name: string }>(qs: Q[]) => qs.filter((q) => !ONLY || ONLY.test(q.name));

/** Who reads the dashboard pages of (g): a member of its projects. */
const READER = "sql-queries-reader@example.test";

/**
 * The queries of (e), the group detail of the project's busiest group (every group holds about the
 * same share of events), every other `/api/v1` read of issues, events, players and traces, and the
 * dashboard pages that read them (their loaders' data, signed in: `cookie`).
 */
export async function queriesOf(b: Bench, projectId: string, cookie: string) {
  const [g] = await b.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} order by count desc, id limit 1`;
  const [t] = await b.sql<{ trace_id: string }[]>`select trace_id from traces where project_id = ${projectId} order by first_seen desc limit 1`;
  const [u] = await b.sql<{ user_id: string }[]>`select user_id::text from project_users where project_id = ${projectId} order by last_seen desc limit 1`;
  const pages = `/projects/${projectId}`;
  return chosen([
    ...QUERIES.filter((q) => TARGETED.includes(q.name)),
    { name: "group detail", path: `/api/v1/errors/${g.id}` },
    { name: "errors raw search", path: "/api/v1/errors?search=Damage" },
    // one group's text of the 1,000: its events are a thousandth of the stored ones, spread over 30 days
    { name: "errors raw search, 1 text matches", path: "/api/v1/errors?search=Gen421:" },
    // also finds issues by their stored events' texts and their players' names
    { name: "errors grouped search", path: "/api/v1/errors?grouped=true&search=Damage" },
    // a quarter of the events: the total is counted up to 10,000 (docs/api.md, "Totals")
    { name: "errors raw, one environment", path: "/api/v1/errors?environment=staging" },
    { name: "errors grouped, one environment", path: "/api/v1/errors?grouped=true&environment=staging" },
    { name: "group events page", path: `/api/v1/errors/${g.id}/events` },
    { name: "group tags", path: `/api/v1/errors/${g.id}/tags` },
    { name: "traces first page", path: "/api/v1/traces" },
    ...(t ? [{ name: "trace detail", path: `/api/v1/traces/${t.trace_id}` }] : []),
    { name: "players search", path: "/api/v1/players?search=Player42" },
    ...(u ? [{ name: "player detail", path: `/api/v1/players/${u.user_id}` }] : []),
    { name: "page: overview", path: `${pages}.data`, cookie },
    { name: "page: issues", path: `${pages}/issues.data`, cookie },
    { name: "page: issues search", path: `${pages}/issues.data?search=Damage`, cookie },
    { name: "page: issue", path: `${pages}/issues/${g.id}.data`, cookie },
    { name: "page: traces", path: `${pages}/traces.data`, cookie },
    ...(t ? [{ name: "page: trace", path: `${pages}/traces/${t.trace_id}.data`, cookie }] : []),
    { name: "page: players", path: `${pages}/players.data?search=Player42`, cookie },
    ...(u ? [{ name: "page: player", path: `${pages}/players/${u.user_id}.data`, cookie }] : []),
  ]);
}

export async function runSqlQueries(b: Bench, sqlEvents: number) {
  const { sql } = b;
  const cookie = await signedInUser(b, READER);
  const smallSql = await createProject(b, "bench-sql-small", READER);
  const bigSql = await createProject(b, "bench-sql-large", READER);
  await b.step("(g) generating 10,000 raw events in SQL", async () => {
    await generateGroups(sql, smallSql.project_id, 1000, "Gen");
    await generateEvents(sql, smallSql.project_id, 10_000);
    await sql`vacuum analyze`;
  });
  const gqSmall = await queriesOf(b, smallSql.project_id, cookie);
  const gSmall = await b.step("(g) queries at 10,000 SQL-generated events", () => measureQueries(b, smallSql.api_key, gqSmall));
  const started = performance.now();
  await b.step(`(g) generating ${fmt(sqlEvents)} raw events in SQL`, async () => {
    await generateGroups(sql, bigSql.project_id, 1000, "Gen");
    await generateEvents(sql, bigSql.project_id, sqlEvents, (done) => b.log(`  ${fmt(done)} generated`));
    await sql`vacuum analyze`;
  });
  b.log(`  generated in ${fmt((performance.now() - started) / 1000, 0)} s`);
  const gBig = await b.step(`(g) queries at ${fmt(sqlEvents)} SQL-generated events`, async () => measureQueries(b, bigSql.api_key, await queriesOf(b, bigSql.project_id, cookie)));
  const rows: Row[] = compareRows(`(g) 10k -> ${fmt(sqlEvents)}:`, gqSmall.map((q) => q.name), gSmall, gBig, (name) => TARGETED.includes(name));
  // every read at the large size against the absolute bound (issue 44: at 10,000,000 events)
  for (const [name, m] of Object.entries(gBig)) {
    rows.push({ scenario: `(g) at ${fmt(sqlEvents)}: ${name}`, figure: `p50 ${fmt(m.p50, 1)} ms`, detail: health(m), ratio: "", target: "p50 < 100 ms", result: verdict(m.p50 < 100 && m.non2xx + m.errors === 0) });
  }

  const searchQueries = chosen([
    { name: "grouped search, 1 in 4 groups match", path: "/api/v1/errors?grouped=true&search=Damage" },
    { name: "grouped search, 1 group matches", path: "/api/v1/errors?grouped=true&search=Mod4242:" },
    { name: "grouped search by function, 1 in 4 groups match", path: "/api/v1/errors?grouped=true&search=onTouched" },
    { name: "grouped search by function, 11 groups match", path: "/api/v1/errors?grouped=true&search=onMod4242" },
  ]);
  let searches: Awaited<ReturnType<typeof measureQueries>> = {};
  if (searchQueries.length > 0) {
    const searchProject = await createProject(b, "bench-search");
    await b.step(`(g) generating ${fmt(SEARCH_GROUPS)} groups in SQL`, async () => {
      await generateGroups(sql, searchProject.project_id, SEARCH_GROUPS, "Mod");
      // group_search_order too, which a dense search walks: its statistics were otherwise taken
      // before this project's keys were in it (by the vacuum above, or by an autovacuum while they were
      // being inserted), and when that left no page all-visible the walk was planned for a few dozen
      // keys: every run of that plan read all 100,000 through a bitmap and sorted them (p50 353 ms)
      await sql`vacuum analyze error_groups, group_search, group_search_order`;
    });
    searches = await b.step("(g) grouped search over 100,000 groups", () => measureQueries(b, searchProject.api_key, searchQueries));
  }
  for (const [name, m] of Object.entries(searches)) {
    rows.push({ scenario: `(g) ${name}`, figure: `p50 ${fmt(m.p50, 1)} ms`, detail: health(m), ratio: "", target: "p50 < 50 ms", result: verdict(m.p50 < 50 && m.non2xx + m.errors === 0) });
  }

  // stats read the groups with occurrences in their window, not all of a project's groups: 1h and
  // 24h hold a few hundred and a few thousand of these 100,000, 7d and 30d most of them
  const statsNames = TARGETED.filter((name) => name.startsWith("stats "));
  const statsQueries = chosen(QUERIES.filter((q) => statsNames.includes(q.name)));
  let manyStats: Awaited<ReturnType<typeof measureQueries>> = {};
  if (statsQueries.length > 0) {
    const manyGroups = await createProject(b, "bench-many-groups");
    await b.step(`(g) generating ${fmt(SEARCH_GROUPS)} groups and ${fmt(MANY_GROUPS_EVENTS)} events in SQL`, async () => {
      await generateGroups(sql, manyGroups.project_id, SEARCH_GROUPS, "Many");
      await generateEvents(sql, manyGroups.project_id, MANY_GROUPS_EVENTS);
      await sql`vacuum analyze`;
    });
    manyStats = await b.step(`(g) stats over ${fmt(SEARCH_GROUPS)} groups`, () => measureQueries(b, manyGroups.api_key, statsQueries));
  }
  for (const [name, m] of Object.entries(manyStats)) {
    const base = gSmall[name] ?? m;
    rows.push({
      scenario: `(g) ${name}, ${fmt(SEARCH_GROUPS)} groups, ${fmt(MANY_GROUPS_EVENTS)} events`,
      figure: `p50 ${fmt(m.p50, 1)} ms`,
      detail: `${health(m)}; ${fmt(m.p50 / base.p50, 2)}x the 1,000-group 10k-event project's p50`,
      ratio: "",
      target: "",
      result: "",
    });
  }
  return { rows, results: { sqlEvents, gSmall, gBig, searches, manyStats } };
}
