/**
 * (c-alerts) What alert rules cost the ingest: the storm of (c) again once the project has a new_group
 * and a frequency rule on a Discord channel (a local fake that answers like Discord), counting the
 * alert jobs the run enqueued. The rules are disabled afterwards, so later scenarios run without them.
 */
import { loadConfig } from "../../app/env.server.js";
import { seal, maskUrl } from "../../app/alerts/seal.server.js";
import { FakeDiscord } from "../../test/support/fake-discord.js";
import { fmt, health, serviceEnv, sleep, verdict, type Bench, type Measured, type Row } from "./harness.js";

/** Runs `storm` (the load of (c)) with the project's alert rules on. */
export async function stormWithAlerts(b: Bench, projectId: string, storm: () => Promise<Measured>) {
  const { sql } = b;
  const discord = await new FakeDiscord().start();
  const hook = discord.webhookUrl();
  const { appSecret } = loadConfig(serviceEnv(b.databaseUrl, b.workDir));
  const [channel] = await sql<{ id: string }[]>`insert into alert_channels (project_id, name, kind, url_sealed, url_hint)
    values (${projectId}, 'bench', 'discord', ${seal(appSecret, projectId, hook)}, ${maskUrl(hook)}) returning id`;
  await sql`insert into alert_rules (project_id, name, trigger, threshold_count, window_minutes, channel_ids) values
    (${projectId}, 'new', 'new_group', null, null, ${[channel.id]}::uuid[]), (${projectId}, 'spike', 'frequency', 1000, 10, ${[channel.id]}::uuid[])`;
  await sleep(6000); // the server's per-project "has rules" cache lives 5 s
  const jobsBefore = Number((await sql`select count(*)::int as n from pgboss.job where name = 'alerts'`)[0].n);
  const stormAlerts = await b.step("(c-alerts) storm with alert rules enabled", storm);
  const alertJobs = Number((await sql`select count(*)::int as n from pgboss.job where name = 'alerts'`)[0].n) - jobsBefore;
  b.log(`  ${alertJobs} alert jobs, ${discord.messages.length} Discord message(s) during the run`);
  await sql`update alert_rules set enabled = false where project_id = ${projectId}`; // the later scenarios run without alerts
  await discord.close();
  return { stormAlerts, alertJobs };
}

/** The (c-alerts) row: the storm with rules against the storm without. */
export function alertsRow(stormAlerts: Measured, alertJobs: number, storm: Measured): Row {
  return { scenario: "(c-alerts) storm, alert rules on", figure: `${fmt(stormAlerts.rps)} req/s`, detail: `${health(stormAlerts)}, ${alertJobs} alert jobs`, ratio: fmt(stormAlerts.rps / storm.rps, 2), target: ">= 0.9 of (c)", result: verdict(stormAlerts.rps / storm.rps >= 0.9) };
}
