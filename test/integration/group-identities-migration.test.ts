import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { freshDatabaseUrl } from "../support/server.js";

/**
 * The migration that keeps who an issue's shown text names fills it for existing issues from what
 * is still stored: the schema is migrated up to the file before it, issues and events are written
 * the old way, then the remaining migrations run.
 */
const dir = path.resolve(import.meta.dirname, "../../db/migrations");
let sql: Sql;
let tmp: string;
const project = "6f1c0000-0000-4000-8000-000000000107";
const kicked = "6f1c0000-0000-4000-8000-000000000101";
const member = "6f1c0000-0000-4000-8000-000000000102";
const pathOnly = "6f1c0000-0000-4000-8000-000000000103";
const nobody = "6f1c0000-0000-4000-8000-000000000104";
const other = "6f1c0000-0000-4000-8000-000000000105";
const HOUR = 3_600_000;
const now = Date.now();

beforeAll(async () => {
  sql = createSql(await freshDatabaseUrl(), 2);
  tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
  for (const f of readdirSync(dir)) if (f < "107") cpSync(path.join(dir, f), path.join(tmp, f));
  await migrate(sql, tmp);
  await sql`insert into projects (id, name) values (${project}, 'Before kept identities')`;
  const groups: [string, string, string, string | null, string | null][] = [
    [kicked, "fk", "Kicked HiddenFirstKid for flying", null, null],
    [member, "fm", "Kicked MemberKid (1234567) for flying", null, kicked],
    [pathOnly, "fp", "Players.PathKid.PlayerGui.Hud:5: attempt to index nil (Players.LocalPlayer)", "Players.CulpritKid.Backpack.Tool", null],
    [nobody, "fn", "Data store budget exceeded", null, null],
    [other, "fo", "Kicked HiddenFirstKid for flying", null, null],
  ];
  for (const [id, fp, message, culprit, into] of groups) {
    await sql`
      insert into error_groups (project_id, id, fingerprint, message, level, first_seen, last_seen, environment, culprit, merged_into)
      values (${project}, ${id}, ${fp}, ${message}, 'error', now(), now(), 'production', ${culprit}, ${into})`;
  }
  // [group, origin, message, player, user id, hours ago]
  const events: [string, string | null, string, string | null, number | null, number][] = [
    // the issue's own text: its earliest stored events with that text name their players; later ones do not count
    [kicked, null, "Kicked HiddenFirstKid for flying", "HiddenFirstKid", 31415926, 30],
    [kicked, null, "Kicked HiddenFirstKid for flying", null, null, 29],
    [kicked, null, "Kicked OtherKid for flying", "OtherKid", 2718281, 40],
    // a merged member's events are in the issue it is merged into, marked with where they came from
    [kicked, member, "Kicked MemberKid (1234567) for flying", "MemberKid", 1234567, 20],
    // the same text in another issue names nobody of this one; what the text does not hold is not kept
    [other, null, "Kicked HiddenFirstKid for flying", "SomeoneElse", 7654321, 50],
    [nobody, null, "Data store budget exceeded", null, null, 1],
  ];
  for (const [group, origin, message, player, userId, ago] of events) {
    const at = new Date(now - ago * HOUR);
    await sql`
      insert into events (project_id, group_id, origin_group_id, message, level, player_name, user_id, environment, "timestamp", received_at)
      values (${project}, ${group}, ${origin}, ${message}, 'error', ${player}, ${userId}, 'production', ${at}, ${at})`;
  }
  await migrate(sql, dir);
});
afterAll(async () => {
  await sql?.end();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("kept identities migration", () => {
  it("keeps the names and ids of each issue's first stored events with its text that the text holds, and the players its paths name", async () => {
    const rows = await sql<{ id: string; identities: string[] | null }[]>`
      select id, identities from error_groups where project_id = ${project}`;
    const of = Object.fromEntries(rows.map((r) => [r.id, r.identities]));
    // the user id is not in the text: it is not kept
    expect(of[kicked]).toEqual(["HiddenFirstKid"]);
    expect(of[member]).toEqual(["MemberKid", "1234567"]);
    expect(of[pathOnly]?.sort()).toEqual(["CulpritKid", "PathKid"]);
    expect(of[nobody]).toBeNull();
    expect(of[other]).toBeNull();
  });
});
