import PgBoss from "pg-boss";
import type { Sql } from "../db/client.js";
import { runRetention } from "./retention.js";

export const QUEUES = { retention: "retention" } as const;

/** Starts pg-boss on the same database and registers the workers this process runs. */
export async function startJobs(databaseUrl: string, sql: Sql, opts: { retentionDays: number }): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: databaseUrl, max: 4, schema: "pgboss" });
  boss.on("error", (err) => console.error("[jobs] pg-boss error:", err));
  await boss.start();
  await boss.createQueue(QUEUES.retention);
  // hourly; pg-boss makes sure only one instance runs a scheduled job per slot
  await boss.schedule(QUEUES.retention, "17 * * * *");
  await boss.work(QUEUES.retention, async () => {
    const r = await runRetention(sql, opts.retentionDays);
    if (r.events) console.log(`[jobs] retention deleted ${r.events} raw events`);
  });
  return boss;
}
