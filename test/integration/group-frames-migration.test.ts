import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { createProject, freshDatabaseUrl, startTestApp, type TestApp } from "../support/server.js";
import { list } from "../support/query-fixtures.js";
import { sleep } from "../support/wait.js";

/**
 * Issues from before frames were kept (migration 115) are found by their frames once the service has
 * started: the schema is migrated up to the file before it, issues and events are written the old way,
 * then the service starts (running the remaining migrations and, as a job, the fill from each issue's
 * stored events).
 */
const dir = path.resolve(import.meta.dirname, "../../db/migrations");
let sql: Sql;
let tmp: string;
let app: TestApp;
let apiKey: string;
let projectId: string;
const combat = "6f1c0000-0000-4000-8000-000000000151";
const sentry = "6f1c0000-0000-4000-8000-000000000152";
const noStack = "6f1c0000-0000-4000-8000-000000000153";
const HOUR = 3_600_000;
const now = Date.now();

beforeAll(async () => {
  const url = await freshDatabaseUrl();
  sql = createSql(url, 2);
  tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
  for (const f of readdirSync(dir)) if (f < "115") cpSync(path.join(dir, f), path.join(tmp, f));
  await migrate(sql, tmp);
  // the schema of that time: nothing of what later releases record (the audit log) exists yet
  ({ projectId, apiKey } = await createProject(sql, "Frames"));
  const groups: [string, string, string, string | null][] = [
    [combat, "fc", "attempt to index nil with 'Humanoid'", "ServerScriptService.Combat"],
    [sentry, "fs", "Error: Backpack is full", "ReplicatedStorage.Modules.Inventory"],
    [noStack, "fn", "Data store budget exceeded", null],
  ];
  for (const [id, fp, message, culprit] of groups) {
    await sql`
      insert into error_groups (project_id, id, fingerprint, message, level, first_seen, last_seen, environment, culprit)
      values (${projectId}, ${id}, ${fp}, ${message}, 'error', now(), now(), 'production', ${culprit})`;
  }
  // [group, message, stack, player, hours ago]
  const events: [string, string, string | null, string | null, number][] = [
    [combat, "attempt to index nil with 'Humanoid'", "ServerScriptService.Combat:42 function onTouched\nServerScriptService.RoundRunner:88 function startRound", null, 5],
    // Roblox's own traceback form, from a player's script
    [combat, "attempt to index nil with 'Humanoid'", "Script 'ServerScriptService.Combat', Line 42 - function onTouched\nScript 'Players.Bob.PlayerScripts.Dash', Line 9 - function dashNow\nStack End", "Bob", 4],
    // stored from a Sentry-protocol event: its frames as native lines
    [sentry, "Error: Backpack is full", "ReplicatedStorage.Modules.Inventory:7 function equipTool\nStarterPlayer.StarterPlayerScripts.InputController:77 function onKeyPressed", null, 3],
    [noStack, "Data store budget exceeded", null, null, 2],
  ];
  for (const [group, message, stack, player, ago] of events) {
    const at = new Date(now - ago * HOUR);
    await sql`
      insert into events (project_id, group_id, message, level, stack_trace, player_name, environment, "timestamp", received_at)
      values (${projectId}, ${group}, ${message}, 'error', ${stack}, ${player}, 'production', ${at}, ${at})`;
  }
  app = await startTestApp({ JOBS_ENABLED: "true" }, url);
  // the fill runs as a job at start: wait until no issue is left without frames
  for (;;) {
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from error_groups where frames is null`;
    if (n === 0) break;
    await sleep(50);
  }
}, 60_000);
afterAll(async () => {
  await app?.close();
  await sql?.end();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("frames of issues from before they were kept", () => {
  it("are filled from the stored events, parsed as ingest parses them", async () => {
    const rows = await sql<{ id: string; frames: string }[]>`select id::text, frames from error_groups where project_id = ${projectId}`;
    const of = Object.fromEntries(rows.map((r) => [r.id, r.frames]));
    expect(of[combat].split("\n")).toEqual([
      "ServerScriptService.Combat onTouched",
      "ServerScriptService.RoundRunner startRound",
      "Players.<player>.PlayerScripts.Dash dashNow",
    ]);
    expect(of[sentry].split("\n")).toEqual(["ReplicatedStorage.Modules.Inventory equipTool", "StarterPlayer.StarterPlayerScripts.InputController onKeyPressed"]);
    expect(of[noStack]).toBe("");
  });

  const cases: [string, string[]][] = [
    ["startRound", [combat]],
    ["ServerScriptService.RoundRunner", [combat]],
    ["PlayerScripts.Dash", [combat]],
    ["onKeyPressed", [sentry]],
    ["inputcontroller", [sentry]],
    ["Budget", [noStack]],
  ];
  for (const [query, want] of cases) {
    it(`finds them by their frames through the API (${query})`, async () => {
      const r = await list(app, apiKey, { grouped: true, search: query });
      expect(r.status).toBe(200);
      expect(r.body.data.map((g: any) => g.id), query).toEqual(want);
    });
  }
});
