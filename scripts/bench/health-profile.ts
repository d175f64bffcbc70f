/**
 * `npx tsx scripts/bench/health-profile.ts <database url>`: migrates the database, generates one
 * project's 30 days of health data as the bench's (health) reads do (same BENCH_HEALTH_ sizes), and
 * leaves it there, for EXPLAIN (ANALYZE, BUFFERS) of the release health reads (docs/benchmarks.md).
 */
import { createSql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { generateHealth } from "./health.js";

async function main() {
  const sql = createSql(process.argv[2], 4);
  await migrate(sql);
  const [{ id }] = await sql`insert into projects (name) values ('scratch') returning id`;
  const t = Date.now();
  console.log(id, await generateHealth(sql, id), (Date.now() - t) / 1000, "s");
  await sql.end();
}
main();
