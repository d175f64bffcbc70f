import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { windowStats } from "../../db/stats.js";
import { freshDatabaseUrl } from "../support/server.js";

/**
 * The migration that adds daily rollups fills them from the hourly rollups kept before it: the schema
 * is migrated up to the file before it, hourly cells are written the old way (two groups, one holding
 * a merged member's cells, on both sides of UTC midnights), then the remaining migrations run.
 */
const dir = path.resolve(import.meta.dirname, "../../db/migrations");
let sql: Sql;
let tmp: string;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = Date.now();
const today = Math.floor(now / DAY) * DAY;
const project = "6f1c0000-0000-4000-8000-000000000011";
const a = "6f1c0000-0000-4000-8000-000000000012";
const b = "6f1c0000-0000-4000-8000-000000000013";
const member = "6f1c0000-0000-4000-8000-000000000014";
// [group, origin, level, hour bucket, count]: 23:00 and 00:00 around two midnights, and today
const cells: [string, string, string, number, number][] = [
  [a, a, "error", today - 10 * DAY - HOUR, 2],
  [a, a, "error", today - 10 * DAY, 3],
  [a, a, "warn", today - 10 * DAY + 5 * HOUR, 1],
  [a, member, "error", today - 10 * DAY + 6 * HOUR, 4],
  [b, b, "info", today - 3 * DAY - HOUR, 7],
  [b, b, "info", today - 3 * DAY, 5],
  [a, a, "error", today, 6],
];

beforeAll(async () => {
  sql = createSql(await freshDatabaseUrl(), 2);
  tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
  for (const f of readdirSync(dir)) if (f < "080") cpSync(path.join(dir, f), path.join(tmp, f));
  await migrate(sql, tmp);
  await sql`insert into projects (id, name) values (${project}, 'Before daily rollups')`;
  for (const [id, fp] of [[a, "fa"], [b, "fb"], [member, "fm"]]) {
    await sql`
      insert into error_groups (project_id, id, fingerprint, message, level, first_seen, last_seen, environment, merged_into)
      values (${project}, ${id}, ${fp}, ${`Group ${fp}`}, 'error', now(), now(), 'production', ${id === member ? a : null})`;
  }
  for (const [group, origin, level, bucket, count] of cells) {
    await sql`
      insert into rollup_hour (project_id, bucket, group_id, level, origin_id, count)
      values (${project}, ${new Date(bucket)}, ${group}, ${level}, ${origin}, ${count})`;
  }
  await migrate(sql, dir);
});
afterAll(async () => {
  await sql?.end();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("daily rollups migration", () => {
  it("sums the hourly cells per UTC day, group, level and origin", async () => {
    const days = await sql`
      select bucket, group_id, level, origin_id, count::int from rollup_day order by bucket, group_id, level, origin_id`;
    const day = (ms: number) => new Date(Math.floor(ms / DAY) * DAY);
    expect(days).toEqual([
      { bucket: day(today - 11 * DAY), group_id: a, level: "error", origin_id: a, count: 2 },
      { bucket: day(today - 10 * DAY), group_id: a, level: "error", origin_id: a, count: 3 },
      { bucket: day(today - 10 * DAY), group_id: a, level: "error", origin_id: member, count: 4 },
      { bucket: day(today - 10 * DAY), group_id: a, level: "warn", origin_id: a, count: 1 },
      { bucket: day(today - 4 * DAY), group_id: b, level: "info", origin_id: b, count: 7 },
      { bucket: day(today - 3 * DAY), group_id: b, level: "info", origin_id: b, count: 5 },
      { bucket: day(today), group_id: a, level: "error", origin_id: a, count: 6 },
    ]);
  });

  it("answers the 30d window from them as the hourly cells would", async () => {
    const stats = await windowStats(sql, project, "30d");
    expect(stats.by_level).toEqual({ error: 15, warn: 1, info: 12 });
    expect(stats.top_errors.map((t) => [t.id, t.count])).toEqual([[a, 16], [b, 12]]);
  });
});
