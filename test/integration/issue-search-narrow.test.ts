import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { createSql, type Sql } from "../../db/client.js";
import { listGroups, TOTAL_CAP, type GroupFilter } from "../../db/errors.js";
import { createProject, migratedDatabaseUrl } from "../support/server.js";

/**
 * Grouped search answered from group_search (db/migrations/135_group_search.sql), the narrow copy of
 * each group's texts, status, level and sort keys: the same issues, in the same order and with the
 * same totals as reading error_groups itself, in every sort, filter and page it answers; the copy
 * follows error_groups through its triggers without making an occurrence update non-HOT; and the
 * statement finds its matches through the copy's trigram index.
 */
let url: string;
let sql: Sql;
let projectId: string;
const base = Date.parse("2026-11-01T12:00:00Z");
const at = (seconds: number) => new Date(base + seconds * 1000);

/** The texts of the generated groups: ASCII, and letters whose lower case is not ASCII. */
const TEXTS = [
  "attempt to index nil with 'Damage'",
  "ÄPFEL are not a valid member of Workspace",
  "Straße closed: ΣΊΣΥΦΟΣ pushed the rock",
  "İstanbul server timed out",
  "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"Remotes\")'",
  "100% of the _budget_ spent",
];
const SEARCHES = ["damage", "DAMAGE", "äpfel", "Äpfel", "STRASSE", "straße", "σίσυφος", "ΣΊΣΥΦΟΣ", "istanbul", "İstanbul", "i̇stanbul",
  "Mod1", "Mod12:", "onTouched", "ontouched", "ServerScriptService.Main", "100%", "_budget_", "%", "_", "Remotes\")'", "Player7", "Player1", "7",
  "Gone away", "no such text", "e"];

beforeAll(async () => {
  url = await migratedDatabaseUrl();
  sql = createSql(url, 4);
  ({ projectId } = await createProject(sql));
  // 240 groups: last seen in a few minutes, many in the same minute and some at the very same time
  // (the id breaks the tie), with every fourth group's frames holding `onTouched`
  await sql`
    insert into error_groups (project_id, fingerprint, message, level, status, first_seen, last_seen, environment, culprit, frames, count)
    select ${projectId}, 'f' || g, 'ServerScriptService.Mod' || g || ':' || (10 + g % 7) || ': ' || (${TEXTS}::text[])[1 + g % 6],
      (array['error', 'warn', 'info'])[1 + g % 3], (array['open', 'open', 'resolved', 'ignored'])[1 + g % 4],
      ${at(0)}::timestamptz + make_interval(secs => g * 7), ${at(600)}::timestamptz - make_interval(secs => (g / 3) * 13),
      'production', case when g % 5 = 0 then null else 'ServerScriptService.Mod' || g end,
      case when g % 9 = 0 then null else 'ServerScriptService.Mod' || g || case when g % 4 = 0 then ' onTouched' else ' onMod' || g end
        || E'\\n' || 'ServerScriptService.Main run' end,
      1 + g % 11
    from generate_series(0, 239) g`;
  const groups = await sql<{ id: string; fingerprint: string }[]>`select id, fingerprint from error_groups where project_id = ${projectId}`;
  const id = (g: number) => groups.find((r) => r.fingerprint === `f${g}`)!.id;
  // merged issues: a member's texts find the issue it is merged into
  for (const [member, into] of [[1, 2], [7, 30], [13, 30], [100, 101]]) {
    await sql`update error_groups set merged_into = ${id(into)} where project_id = ${projectId} and id = ${id(member)}`;
  }
  // a stored event's text, and players (by name, and a numeric search by user id)
  await sql`
    insert into event_messages (project_id, group_id, hash, message, stored_count)
    values (${projectId}, ${id(3)}, md5('Gone away')::uuid, 'Gone away', 2), (${projectId}, ${id(13)}, md5('Gone away 2')::uuid, 'Gone away 2', 1),
      (${projectId}, ${id(50)}, md5('Gone away 3')::uuid, 'Gone away 3', 0)`;
  await sql`insert into project_users (project_id, user_id, player_name, last_seen) values (${projectId}, 7, 'Player7', now()), (${projectId}, 12, 'Player12', now())`;
  await sql`insert into group_users (project_id, group_id, user_id) values (${projectId}, ${id(5)}, 7), (${projectId}, ${id(7)}, 7), (${projectId}, ${id(60)}, 12)`;
  await sql`analyze error_groups, group_search`;
});
afterAll(() => sql?.end());

/** A search answered from group_search, checked against the same search reading error_groups. */
async function sameAsWide(project: string, f: GroupFilter) {
  const narrow = await listGroups(sql, project, f);
  const wide = await listGroups(sql, project, f, { way: "groups" });
  const what = JSON.stringify(f);
  expect(narrow.data.map((g) => g.id), what).toEqual(wide.data.map((g) => g.id));
  expect(narrow.data, what).toEqual(wide.data);
  expect({ total: narrow.total, totalExact: narrow.totalExact }, what).toEqual({ total: wide.total, totalExact: wide.totalExact });
  return narrow;
}

describe("grouped search from group_search", () => {
  it("lists the same issues, in the same order and with the same total, as reading error_groups", async () => {
    let compared = 0;
    let nonEmpty = 0;
    for (const search of SEARCHES) {
      for (const sort of ["last_seen", "first_seen"] as const) {
        for (const filter of [{}, { status: "open" }, { level: "warn" }, { status: "resolved", level: "error" }]) {
          for (const [limit, offset] of [[50, 0], [7, 0], [7, 7], [5, 33], [10, 500]]) {
            const narrow = await sameAsWide(projectId, { search, sort, limit, offset, ...filter });
            compared++;
            if (narrow.data.length > 0) nonEmpty++;
          }
        }
      }
    }
    // the comparison is of pages that hold issues, most of them
    expect(compared).toBe(SEARCHES.length * 2 * 4 * 5);
    expect(nonEmpty).toBeGreaterThan(compared / 3);
  });

  it("finds non-ASCII text whatever its case, as ILIKE does", async () => {
    const found = async (search: string) => (await listGroups(sql, projectId, { search, sort: "last_seen", limit: 500, offset: 0 })).total;
    // 240 groups, one text in six: 40 hold ÄPFEL, of which Mod1, Mod7 and Mod13 are merged into Mod2
    // and Mod30, which their texts find
    expect(await found("äpfel")).toBe(40 - 3 + 2);
    expect(await found("ÄPFEL")).toBe(40 - 3 + 2);
    expect(await found("σίσυφοσ")).toBe(40);
    // ILIKE folds letter by letter: ß is not SS, and Σ lowers to σ, never to the final ς
    expect(await found("STRASSE")).toBe(0);
    expect(await found("σίσυφος")).toBe(0);
    const [{ same }] = await sql<{ same: boolean }[]>`select lower('İstanbul ΣΊΣΥΦΟΣ Äpfel') like lower('%i̇stanbul σίσυφος äpfel%') = ('İstanbul ΣΊΣΥΦΟΣ Äpfel' ilike '%i̇stanbul σίσυφος äpfel%') as same`;
    expect(same).toBe(true);
  });

  it("sorts by the exact last_seen of issues seen in the same minute, after a new occurrence too", async () => {
    const first = async () => (await listGroups(sql, projectId, { search: "onTouched", sort: "last_seen", limit: 3, offset: 0 })).data.map((g) => g.id);
    const before = await first();
    // an issue last seen in the newest minute's middle moves to the top, a second later, same minute
    const [moved] = await sql<{ id: string }[]>`
      select g.id from error_groups g where g.project_id = ${projectId} and g.merged_into is null and g.frames like '%onTouched%'
      order by g.last_seen desc, g.id desc offset 4 limit 1`;
    await sql`update error_groups set last_seen = ${at(601)} where project_id = ${projectId} and id = ${moved.id}`;
    try {
      const after = await first();
      expect(after).toEqual([moved.id, ...before.slice(0, 2)]);
      const wide = await listGroups(sql, projectId, { search: "onTouched", sort: "last_seen", limit: 3, offset: 0 }, { way: "groups" });
      expect(after).toEqual(wide.data.map((g) => g.id));
    } finally {
      await sql`update error_groups set last_seen = ${at(600)} - interval '52 seconds' where project_id = ${projectId} and id = ${moved.id}`;
    }
  });

  it("answers a search holding the texts' separator from error_groups, as it matches within one text only", async () => {
    const r = await listGroups(sql, projectId, { search: "Workspace\u001fServerScriptService", sort: "last_seen", limit: 50, offset: 0 });
    expect(r).toMatchObject({ data: [], total: 0 });
  });
});

/**
 * A term in more issues than TOTAL_CAP: the total is a floor, and a page within WALK_REACH is found by
 * walking the issues in its order (db/errors.ts, searchNarrowWalk) instead of reading every match.
 * 17,000 issues, seven in eight holding `Damage`; last seen three at a time at the same second and
 * about twenty-five to a minute, first seen two at a time; the newest 4,500 are `info`, so a search
 * for `error` walks past its budget and reads every match instead.
 */
describe("a dense search (more own matches than TOTAL_CAP)", () => {
  let dense: string;
  /** which parts of the statement ran: the walk (its index read), and the read of every match */
  const parts = async (f: GroupFilter) => {
    const captured: { query: string; parameters: unknown[] }[] = [];
    const tracing = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, query, parameters) => captured.push({ query, parameters }) }) as unknown as Sql;
    try {
      await listGroups(tracing, dense, f);
    } finally {
      await tracing.end();
    }
    const statement = captured.find((c) => c.query.includes("group_search"))!;
    const [{ "QUERY PLAN": plan }] = await sql.unsafe(`explain (analyze, format json) ${statement.query}`, statement.parameters as never[]);
    type Node = { "Node Type": string; "Index Name"?: string; "CTE Name"?: string; "Actual Loops": number; Plans?: Node[] };
    const nodes: Node[] = [];
    const visit = (n: Node) => (nodes.push(n), n.Plans?.forEach(visit));
    visit((plan as { Plan: Node }[])[0].Plan);
    const ran = (test: (n: Node) => boolean) => nodes.some((n) => test(n) && n["Actual Loops"] > 0);
    return {
      walked: ran((n) => n["Index Name"] === "group_search_order_seen" || n["Index Name"] === "group_search_first_seen"),
      readAll: ran((n) => n["Node Type"] === "CTE Scan" && n["CTE Name"] === "matched"),
    };
  };

  beforeAll(async () => {
    ({ projectId: dense } = await createProject(sql, "Dense"));
    await sql`
      insert into error_groups (project_id, fingerprint, message, level, status, first_seen, last_seen, environment, culprit, frames, count)
      select ${dense}, 'd' || g,
        'ServerScriptService.Dense' || g || ': ' || case when g % 8 = 7 then 'quiet text' else 'attempt to index nil with Damage' end,
        case when g < 4500 then 'info' else 'error' end, case when g % 10 = 3 then 'resolved' else 'open' end,
        ${at(0)}::timestamptz - interval '30 days' + make_interval(secs => g / 2), ${at(600)}::timestamptz - make_interval(secs => (g / 3) * 7),
        'production', 'ServerScriptService.Dense' || g,
        'ServerScriptService.Dense' || g || case when g % 3 = 0 then ' onTouched' else ' onDense' || g end,
        1 + g % 5
      from generate_series(0, 16999) g`;
    const id = async (g: number) => (await sql<{ id: string }[]>`select id from error_groups where project_id = ${dense} and fingerprint = ${`d${g}`}`)[0].id;
    // issues whose own texts do not hold the term, near the top: found through a member's text
    // (30 into 39), a member's stored text (63 into 71), a stored text (15) and a player (23)
    await sql`update error_groups set merged_into = ${await id(39)} where project_id = ${dense} and id = ${await id(30)}`;
    await sql`update error_groups set merged_into = ${await id(71)} where project_id = ${dense} and id = ${await id(63)}`;
    await sql`
      insert into event_messages (project_id, group_id, hash, message, stored_count)
      values (${dense}, ${await id(15)}, md5('Gone Damage away')::uuid, 'Gone Damage away', 1), (${dense}, ${await id(63)}, md5('Damage report')::uuid, 'Damage report', 3)`;
    await sql`insert into project_users (project_id, user_id, player_name, last_seen) values (${dense}, 4242, 'DamageDealer', now())`;
    await sql`insert into group_users (project_id, group_id, user_id) values (${dense}, ${await id(23)}, 4242)`;
    await sql`analyze error_groups, group_search, group_search_order`;
  });

  it("lists the same issues, in the same order and with the same total, as reading error_groups", async () => {
    let compared = 0;
    for (const search of ["damage", "DAMAGE", "onTouched"]) {
      for (const sort of ["last_seen", "first_seen"] as const) {
        for (const filter of [{}, { status: "open" }, { level: "error" }]) {
          for (const [limit, offset] of [[50, 0], [7, 7], [20, 480], [1, 499], [10, 600], [25, 10990]]) {
            await sameAsWide(dense, { search, sort, limit, offset, ...filter });
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(3 * 2 * 3 * 6);
  });

  it("says the total is a floor, and puts the issues found other than by their own texts on the page", async () => {
    const r = await listGroups(sql, dense, { search: "Damage", sort: "last_seen", limit: 80, offset: 0 });
    expect({ total: r.total, totalExact: r.totalExact }).toEqual({ total: TOTAL_CAP, totalExact: false });
    const fingerprints = r.data.map((g) => g.fingerprint);
    // 15 (a stored text), 23 (a player), 39 (a member's text) and 71 (a member's stored text) hold
    // `quiet text`; 7, 31, 47 and 55, also quiet, are not found; the members themselves are not listed
    expect(fingerprints).toEqual(expect.arrayContaining(["d15", "d23", "d39", "d71"]));
    for (const absent of ["d7", "d31", "d47", "d55", "d30", "d63"]) expect(fingerprints).not.toContain(absent);
  });

  it("walks a shallow page, and reads every match for a deep page, a term under TOTAL_CAP or a walk past its budget", async () => {
    expect(await parts({ search: "Damage", sort: "last_seen", limit: 50, offset: 0 })).toEqual({ walked: true, readAll: false });
    expect(await parts({ search: "Damage", sort: "first_seen", limit: 20, offset: 480 })).toEqual({ walked: true, readAll: false });
    expect(await parts({ search: "Damage", sort: "last_seen", limit: 50, offset: 0, status: "open" })).toEqual({ walked: true, readAll: false });
    // past the walk's reach
    expect(await parts({ search: "Damage", sort: "last_seen", limit: 10, offset: 600 })).toEqual({ walked: false, readAll: true });
    // fewer own matches than TOTAL_CAP (5,667): the total must be exact
    expect(await parts({ search: "onTouched", sort: "last_seen", limit: 50, offset: 0 })).toEqual({ walked: false, readAll: true });
    // the newest 4,500 issues are `info`: the walk gives up after WALK_ROWS of them
    expect(await parts({ search: "Damage", sort: "last_seen", limit: 50, offset: 0, level: "error" })).toEqual({ walked: true, readAll: true });
  });

  it("plans the walk by the keys' index, cheaply enough to stay under jit_above_cost", async () => {
    const [{ jit }] = await sql<{ jit: string }[]>`select current_setting('jit_above_cost') as jit`;
    for (const sort of ["last_seen", "first_seen"] as const) {
      const captured: { query: string; parameters: unknown[] }[] = [];
      const tracing = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, query, parameters) => captured.push({ query, parameters }) }) as unknown as Sql;
      try {
        await listGroups(tracing, dense, { search: "Damage", sort, limit: 50, offset: 450 });
      } finally {
        await tracing.end();
      }
      const walk = captured.find((c) => c.query.includes("walk as materialized"))!;
      const [{ "QUERY PLAN": plan }] = await sql.unsafe(`explain (format json) ${walk.query}`, walk.parameters as never[]);
      expect(JSON.stringify(plan)).toContain(sort === "last_seen" ? "group_search_order_seen" : "group_search_first_seen");
      expect((plan as { Plan: { "Total Cost": number } }[])[0].Plan["Total Cost"], sort).toBeLessThan(Number(jit));
    }
  });
});

/**
 * A term with more than TOTAL_CAP own matches is remembered as such at its project's version
 * (db/migrations/142_group_search_dense.sql), and the next search walks to its page without counting.
 * Every change that can lower a term's own matches bumps the version: a search after it counts again
 * and answers an exact total when the matches fell to TOTAL_CAP. 10,001 issues hold `Damage`, all open
 * `error`s, and one more holds something else.
 */
describe("a dense term remembered", () => {
  let project: string;
  const ten = { search: "Damage", sort: "last_seen" as const, limit: 50, offset: 0 };
  const remembered = () =>
    sql<{ pattern: string; filters: string; version: string }[]>`select pattern, filters, version::text from group_search_dense where project_id = ${project} order by filters`;
  const version = () => sql<{ version: string }[]>`select version::text from group_search_version where project_id = ${project}`.then((r) => r[0]?.version ?? "0");
  /**
   * Whether the search counts the own matches (reads the texts matching it) or takes them as
   * remembered: its statement (captured in a transaction rolled back, so that nothing is remembered
   * yet) explained, then the search itself.
   */
  const counted = async (f: GroupFilter) => {
    const captured: { query: string; parameters: unknown[] }[] = [];
    const tracing = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, query, parameters) => captured.push({ query, parameters }) }) as unknown as Sql;
    try {
      await tracing.begin(async (tx) => {
        await listGroups(tx as unknown as Sql, project, f);
        throw new Error("rolled back");
      }).catch((e: Error) => expect(e.message).toBe("rolled back"));
    } finally {
      await tracing.end();
    }
    // the search's statements: the walk alone for a term this process saw dense, then the whole one
    const statements = captured.filter((c) => c.query.includes("group_search_dense") && c.query.includes("walk as materialized"));
    expect(statements.length).toBeGreaterThan(0);
    type Node = { "Subplan Name"?: string; "Actual Loops": number; Plans?: Node[] };
    const nodes: Node[] = [];
    const visit = (n: Node) => (nodes.push(n), n.Plans?.forEach(visit));
    for (const statement of statements) {
      const [{ "QUERY PLAN": plan }] = await sql.unsafe(`explain (analyze, format json) ${statement.query}`, statement.parameters as never[]);
      visit((plan as { Plan: Node }[])[0].Plan);
    }
    const read = nodes.some((n) => n["Subplan Name"] === "CTE texts" && n["Actual Loops"] > 0);
    await listGroups(sql, project, f);
    return read;
  };
  /** a search past TOTAL_CAP, and the same search once it has one own match fewer, against reading error_groups */
  const floorThenExact = async (f: GroupFilter, lower: () => Promise<unknown>, restore: () => Promise<unknown>) => {
    expect(await sameAsWide(project, f)).toMatchObject({ total: TOTAL_CAP, totalExact: false });
    expect(await sameAsWide(project, f)).toMatchObject({ total: TOTAL_CAP, totalExact: false });
    const before = await version();
    await lower();
    expect(Number(await version())).toBeGreaterThan(Number(before));
    expect(await sameAsWide(project, f)).toMatchObject({ total: TOTAL_CAP, totalExact: true });
    await restore();
    expect(await sameAsWide(project, f)).toMatchObject({ total: TOTAL_CAP, totalExact: false });
  };
  const one = () => sql<{ id: string }[]>`select id from error_groups where project_id = ${project} and fingerprint = 'r77'`.then((r) => r[0].id);

  beforeAll(async () => {
    ({ projectId: project } = await createProject(sql, "Remembered"));
    await sql`
      insert into error_groups (project_id, fingerprint, message, level, status, first_seen, last_seen, environment, culprit, frames, count)
      select ${project}, 'r' || g, 'ServerScriptService.Rem' || g || ': ' || case when g = 10001 then 'quiet text' else 'attempt to index nil with Damage' end,
        'error', 'open', ${at(0)}::timestamptz - interval '30 days' + make_interval(secs => g), ${at(600)}::timestamptz - make_interval(secs => g * 3),
        'production', 'ServerScriptService.Rem' || g, 'ServerScriptService.Rem' || g || ' onRem' || g, 1
      from generate_series(0, 10001) g`;
    await sql`analyze error_groups, group_search, group_search_order`;
  });

  it("is remembered at the project's version by the first search, and the next one does not count", async () => {
    expect(await remembered()).toEqual([]);
    expect(await counted(ten)).toBe(true);
    expect(await remembered()).toEqual([{ pattern: "%damage%", filters: "|", version: await version() }]);
    expect(await counted(ten)).toBe(false);
    expect(await counted({ ...ten, search: "DAMAGE" })).toBe(false);
    // seen dense, the term is searched by the walk alone: one statement, without the texts, the same page
    const statements: string[] = [];
    const tracing = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, query) => statements.push(query) }) as unknown as Sql;
    try {
      const walked = await listGroups(tracing, project, ten);
      const wide = await listGroups(sql, project, ten, { way: "groups" });
      expect(walked.data.map((g) => g.id)).toEqual(wide.data.map((g) => g.id));
      expect({ total: walked.total, totalExact: walked.totalExact }).toEqual({ total: wide.total, totalExact: wide.totalExact });
    } finally {
      await tracing.end();
    }
    const searched = statements.filter((q) => q.includes("group_search"));
    expect(searched).toHaveLength(1);
    expect(searched[0]).not.toContain("texts as materialized");
    // each filter is its own term; an occurrence, a new minute or a new issue changes nothing
    expect(await counted({ ...ten, status: "open" })).toBe(true);
    expect(await counted({ ...ten, status: "open" })).toBe(false);
    const before = await version();
    await sql`update error_groups set last_seen = ${at(900)}, count = count + 1 where project_id = ${project} and id = ${await one()}`;
    await sql`
      insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, culprit)
      values (${project}, 'r-new', 'More Damage', 'error', ${at(0)}, ${at(950)}, 'production', 'ServerScriptService.New')`;
    expect(await version()).toBe(before);
    expect(await counted(ten)).toBe(false);
    await sql`delete from error_groups where project_id = ${project} and fingerprint = 'r-new'`;
  });

  it("is counted again after a status change", async () => {
    const id = await one();
    await floorThenExact({ ...ten, status: "open" },
      () => sql`update error_groups set status = 'resolved' where project_id = ${project} and id = ${id}`,
      () => sql`update error_groups set status = 'open' where project_id = ${project} and id = ${id}`);
  });

  it("is counted again after a level change", async () => {
    const id = await one();
    await floorThenExact({ ...ten, level: "error" },
      () => sql`update error_groups set level = 'warn' where project_id = ${project} and id = ${id}`,
      () => sql`update error_groups set level = 'error' where project_id = ${project} and id = ${id}`);
  });

  it("is counted again after a merge", async () => {
    const id = await one();
    const [into] = await sql<{ id: string }[]>`select id from error_groups where project_id = ${project} and fingerprint = 'r5'`;
    await floorThenExact(ten,
      () => sql`update error_groups set merged_into = ${into.id} where project_id = ${project} and id = ${id}`,
      () => sql`update error_groups set merged_into = null where project_id = ${project} and id = ${id}`);
  });

  it("is counted again after a text change", async () => {
    const id = await one();
    await floorThenExact(ten,
      () => sql`update error_groups set message = 'ServerScriptService.Rem77: quiet now' where project_id = ${project} and id = ${id}`,
      () => sql`update error_groups set message = 'ServerScriptService.Rem77: attempt to index nil with Damage' where project_id = ${project} and id = ${id}`);
  });

  it("is not bumped by what only adds text: a first culprit, frames appended after the kept ones", async () => {
    const [g] = await sql<{ id: string }[]>`
      insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment)
      values (${project}, 'r-adds', 'Adds text', 'error', ${at(0)}, ${at(10)}, 'production') returning id`;
    const before = await version();
    await sql`update error_groups set culprit = 'ServerScriptService.Adds' where id = ${g.id} and project_id = ${project}`;
    await sql`update error_groups set frames = 'ServerScriptService.Adds onAdd' where id = ${g.id} and project_id = ${project}`;
    await sql`update error_groups set frames = frames || E'\n' || 'ServerScriptService.Adds onMore' where id = ${g.id} and project_id = ${project}`;
    expect(await version()).toBe(before);
    // frames rewritten (not appended to) can drop a match
    await sql`update error_groups set frames = 'ServerScriptService.Adds onMore' where id = ${g.id} and project_id = ${project}`;
    expect(Number(await version())).toBe(Number(before) + 1);
    await sql`delete from error_groups where project_id = ${project} and id = ${g.id}`;
  });

  it("is bumped as a change commits, once a transaction, so two changing transactions never wait on each other mid-way", async () => {
    const [a, b] = await sql<{ id: string }[]>`
      select id from error_groups where project_id = ${project} and fingerprint in ('r10', 'r11') order by fingerprint`;
    const before = await version();
    const other = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`update error_groups set status = 'resolved' where project_id = ${project} and id in (${a.id}, ${b.id})`;
        // still open: another transaction changing a third issue of the project neither waits for
        // this one's version row nor locks it for the rest of its own statements
        await other.begin(async (t) => {
          await t`set local lock_timeout = '2s'`;
          await t`update error_groups set status = 'ignored' where project_id = ${project} and fingerprint = 'r12'`;
        });
        expect(Number(await version())).toBe(Number(before) + 1);
      });
      // the open one's two changes: one bump at its commit
      expect(Number(await version())).toBe(Number(before) + 2);
      await sql`update error_groups set status = 'open' where project_id = ${project} and fingerprint in ('r10', 'r11', 'r12')`;
    } finally {
      await other.end();
    }
  });

  it("is counted again after a delete", async () => {
    const [row] = await sql`select * from error_groups where project_id = ${project} and fingerprint = 'r77'`;
    await floorThenExact(ten,
      () => sql`delete from error_groups where project_id = ${project} and id = ${row.id}`,
      () => sql`insert into error_groups ${sql(row)}`);
  });

  it("searches a term it last found with at most TOTAL_CAP own matches without the walk, and answers exactly once it has more", async () => {
    /** the statements a search sends that read group_search, and its answer */
    const traced = async (f: GroupFilter) => {
      const statements: string[] = [];
      const tracing = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, query) => statements.push(query) }) as unknown as Sql;
      try {
        const r = await listGroups(tracing, project, f);
        const wide = await listGroups(sql, project, f, { way: "groups" });
        expect(r.data.map((g) => g.id)).toEqual(wide.data.map((g) => g.id));
        expect({ total: r.total, totalExact: r.totalExact }).toEqual({ total: wide.total, totalExact: wide.totalExact });
        return { searched: statements.filter((q) => q.includes("group_search")), total: r.total, totalExact: r.totalExact };
      } finally {
        await tracing.end();
      }
    };
    const quiet = { ...ten, search: "quiet text" };
    expect((await traced(quiet)).searched.some((q) => q.includes("walk as materialized"))).toBe(true);
    // found in one issue: the next search sends one statement, without the walk or the remembered terms
    const again = await traced(quiet);
    expect(again).toMatchObject({ total: 1, totalExact: true });
    expect(again.searched).toHaveLength(1);
    expect(again.searched[0]).not.toContain("walk as materialized");
    expect(again.searched[0]).not.toContain("group_search_dense");
    // a term in no issue, then in 10,001 of them: the statement without the walk answers the floor,
    // and the next search walks again
    const resolved = { ...ten, status: "resolved" };
    expect(await traced(resolved)).toMatchObject({ total: 0, totalExact: true });
    expect((await traced(resolved)).searched.some((q) => q.includes("walk as materialized"))).toBe(false);
    await sql`update error_groups set status = 'resolved' where project_id = ${project} and status = 'open'`;
    try {
      const grown = await traced(resolved);
      expect(grown).toMatchObject({ total: TOTAL_CAP, totalExact: false });
      expect(grown.searched.some((q) => q.includes("walk as materialized"))).toBe(false);
      const walks = await traced(resolved);
      expect(walks).toMatchObject({ total: TOTAL_CAP, totalExact: false });
      expect(walks.searched.some((q) => q.includes("walk as materialized"))).toBe(true);
    } finally {
      await sql`update error_groups set status = 'open' where project_id = ${project} and status = 'resolved'`;
    }
  });
});

describe("group_search follows error_groups", () => {
  const row = (id: string) =>
    sql<{ xmin: string; status: string; level: string; merged_into: string | null; seen_minute: Date; search_text: string }[]>`
      select xmin::text, status, level, merged_into, seen_minute, search_text from group_search where project_id = ${projectId} and group_id = ${id}`.then((r) => r[0]);

  const order = (id: string) =>
    sql<{ xmin: string; seen_minute: Date }[]>`select xmin::text, seen_minute from group_search_order where project_id = ${projectId} and group_id = ${id}`.then((r) => r[0]);

  it("is written when a group is created, and not at an occurrence in the same minute, which stays HOT", async () => {
    const [g] = await sql<{ id: string }[]>`
      insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, culprit)
      values (${projectId}, 'follow-1', 'Kept in step', 'error', ${at(0)}, ${at(1000)}, 'production', 'ServerScriptService.Step')
      returning id`;
    const created = await row(g.id);
    expect(created).toMatchObject({ status: "open", level: "error", merged_into: null, seen_minute: new Date(at(960).getTime()), search_text: "kept in step\u001fserverscriptservice.step\u001f" });
    const ordered = await order(g.id);
    expect(ordered.seen_minute).toEqual(at(960));

    // occurrences within the minute: error_groups is updated HOT, group_search not at all
    const hot = await sql.begin(async (tx) => {
      // the backend's counts not yet reported include earlier transactions': the difference is this one's
      const counts = () => tx<{ hot: number; updated: number }[]>`
        select pg_stat_get_xact_tuples_hot_updated('error_groups'::regclass)::int as hot, pg_stat_get_xact_tuples_updated('error_groups'::regclass)::int as updated`.then((r) => r[0]);
      const before = await counts();
      for (const s of [1010, 1015, 1019]) await tx`update error_groups set last_seen = ${at(s)}, count = count + 1 where project_id = ${projectId} and id = ${g.id}`;
      const after = await counts();
      return { hot: after.hot - before.hot, updated: after.updated - before.updated };
    });
    expect(hot).toEqual({ hot: 3, updated: 3 });
    expect((await row(g.id)).xmin).toBe(created.xmin);
    expect((await order(g.id)).xmin).toBe(ordered.xmin);

    // the next minute, a status, a level, new frames, a merge: each reaches the copy
    // the copy's minute changes HOT (its first_seen index is not touched); the keys get a new row
    const copyHot = await sql.begin(async (tx) => {
      const counts = () => tx<{ hot: number; updated: number }[]>`
        select pg_stat_get_xact_tuples_hot_updated('group_search'::regclass)::int as hot, pg_stat_get_xact_tuples_updated('group_search'::regclass)::int as updated`.then((r) => r[0]);
      const before = await counts();
      await tx`update error_groups set last_seen = ${at(1021)} where project_id = ${projectId} and id = ${g.id}`;
      const after = await counts();
      return { hot: after.hot - before.hot, updated: after.updated - before.updated };
    });
    expect(copyHot).toEqual({ hot: 1, updated: 1 });
    expect((await row(g.id)).seen_minute).toEqual(at(1020));
    expect((await order(g.id)).seen_minute).toEqual(at(1020));
    // a status, a level or new frames in the same minute leave the keys alone
    const moved = await order(g.id);
    await sql`update error_groups set status = 'resolved', level = 'warn', frames = 'ServerScriptService.Step onStep' where project_id = ${projectId} and id = ${g.id}`;
    expect(await row(g.id)).toMatchObject({ status: "resolved", level: "warn", search_text: "kept in step\u001fserverscriptservice.step\u001fserverscriptservice.step onstep" });
    expect((await order(g.id)).xmin).toBe(moved.xmin);
    const [into] = await sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and fingerprint = 'f200'`;
    await sql`update error_groups set merged_into = ${into.id} where project_id = ${projectId} and id = ${g.id}`;
    expect((await row(g.id)).merged_into).toBe(into.id);
    const found = await listGroups(sql, projectId, { search: "onStep", sort: "last_seen", limit: 5, offset: 0 });
    expect(found.data.map((x) => x.id)).toEqual([into.id]);

    await sql`delete from error_groups where project_id = ${projectId} and id = ${g.id}`;
    expect(await row(g.id)).toBeUndefined();
    expect(await order(g.id)).toBeUndefined();
  });
});

describe("the search statement", () => {
  it("finds the matches through group_search's trigram index and reads error_groups only by key", async () => {
    // a project of 20,000 issues, where reading all of them would cost more than the index
    const { projectId: big } = await createProject(sql, "Many issues");
    await sql`
      insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, culprit)
      select ${big}, 'f' || g, 'ServerScriptService.Big' || g || ':10: ' || md5(g::text), 'error', ${at(0)}, ${at(0)}::timestamptz + make_interval(secs => g), 'production', 'ServerScriptService.Big' || g
      from generate_series(1, 20000) g`;
    await sql`analyze error_groups, group_search`;
    const captured: { query: string; parameters: unknown[] }[] = [];
    const tracing = postgres(url, { max: 1, onnotice: () => {}, debug: (_c, query, parameters) => captured.push({ query, parameters }) }) as unknown as Sql;
    try {
      const r = await listGroups(tracing, big, { search: "Big4242:", sort: "last_seen", limit: 10, offset: 0, status: "open" });
      expect(r.total).toBe(1);
      const statement = captured.find((c) => c.query.includes("group_search"));
      expect(statement).toBeDefined();
      const plan = await sql.begin(async (tx) => {
        await tx`set local enable_seqscan = off`;
        return tx.unsafe(`explain ${statement!.query}`, statement!.parameters as never[]);
      });
      const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text).toContain("Bitmap Index Scan on group_search_text_trgm");
      expect(text).not.toMatch(/Seq Scan on error_groups|Bitmap Heap Scan on error_groups/);
    } finally {
      await tracing.end();
    }
  });
});
