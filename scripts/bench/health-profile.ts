/**
 * `npx tsx scripts/bench/health-profile.ts <database url>`: migrates the database, generates one
 * project's 30 days of health data as the bench's (health) reads do (same BENCH_HEALTH_ sizes), and
 * leaves it there, for EXPLAIN (ANALYZE, BUFFERS) of the release health reads and the Release health
 * page's tools (health-page-statements.ts, health-page-cpu.ts; docs/benchmarks.md).
 */
import { createSql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { generateHealth } from "./health.js";

async function main() {
  const sql = createSql(process.argv[2], 4);
  await migrate(sql);
  // named as the bench names its reads' project, with its reader as owner (no password: no sign-in),
  // so health-page-statements.ts and health-page-cpu.ts read it as they read a kept bench database
  const [{ id }] = await sql`insert into projects (name) values ('bench-health-reads') returning id`;
  const [user] = await sql`insert into users (email, password_hash, has_password) values ('health-reader@example.test', '!', false) returning id`;
  await sql`insert into project_members (project_id, user_id, role) values (${id}, ${user.id}, 'owner')`;
  const t = Date.now();
  console.log(id, await generateHealth(sql, id), (Date.now() - t) / 1000, "s");
  await sql.end();
}
main();
