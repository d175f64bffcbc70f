import { describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";

/** The client relay's fair share of the server budget, in real Luau against the real service. */

const t = sdkSuite();

const report = (player: string, line: number, text: string) => ({
  message: `Players.${player}.PlayerGui.Hud:${line}: ${text}`,
  stack: `Players.${player}.PlayerGui.Hud:${line}\n`,
  script: `Players.${player}.PlayerGui.Hud`,
});

describe("Roblox SDK client relay", () => {
  it("keeps each player's share of the server budget: 12 accounts at their limit do not starve 3 honest players", async () => {
    await t.start();
    const attackers = Array.from({ length: 12 }, (_, i) => 900 + i);
    const honest = [101, 102, 103];
    for (const id of attackers) await t.rbx.addPlayer(id, `Exploiter${id}`);
    for (const id of honest) await t.rbx.addPlayer(id, `Honest${id}`);
    // 15 players, a server budget of 30 at once and 120 a minute: each share is 2 at once and 8 a
    // minute. Each honest player sends 2 distinct errors at once (its share's burst), then a third
    // 25 s later (its share has refilled). The attackers fire 20 a second each, every second, before
    // the honest players; attacker i starts at second i, so that between them they hold a fresh
    // token of their own every second (without shares, they take every token the server refills).
    for (let second = 0; second < 60; second++) {
      for (const [i, id] of attackers.entries()) if (second >= i) await t.rbx.fireRemote(id, report(`Exploiter${id}`, 1, "spam"), 20);
      for (const [i, id] of honest.entries()) {
        if (second === 20) {
          await t.rbx.fireRemote(id, report(`Honest${id}`, 10 + i, "attempt to index nil with 'Health'"));
          await t.rbx.fireRemote(id, report(`Honest${id}`, 20 + i, "Infinite yield possible on 'Backpack'"));
        }
        if (second === 45) await t.rbx.fireRemote(id, report(`Honest${id}`, 30 + i, "attempt to call a nil value"));
      }
      await t.rbx.advance(1);
    }
    await t.rbx.advance(15);

    const rows = await t.app.sql<{ user_id: string; message: string; count: number; tags: string[] }[]>`
      select user_id::text, message, count, tags from events where project_id = ${t.projectId} order by id`;
    const [{ attackerOccurrences }] = await t.app.sql<{ attackerOccurrences: number }[]>`
      select coalesce(sum(count), 0)::int as "attackerOccurrences" from error_groups
      where project_id = ${t.projectId} and message like '%spam'`;
    // every honest report got through, once, as its player
    const fromHonest = rows.filter((e) => honest.includes(Number(e.user_id)));
    expect(fromHonest.map((e) => `${e.user_id} ${e.message.replace(/^Players\.\w+\.PlayerGui\.Hud:/, "")} x${e.count}`).sort()).toEqual(
      honest.flatMap((id, i) => [
        `${id} ${10 + i}: attempt to index nil with 'Health' x1`,
        `${id} ${20 + i}: Infinite yield possible on 'Backpack' x1`,
        `${id} ${30 + i}: attempt to call a nil value x1`,
      ]).sort(),
    );
    // the attackers together stay within the server budget (30 at once, 120 a minute, one more for
    // the boundary), and they got what the honest players left unused
    expect(attackerOccurrences).toBeLessThanOrEqual(30 + 120 + 1 - fromHonest.length);
    expect(attackerOccurrences).toBeGreaterThanOrEqual(100);
    expect(rows.filter((e) => !e.tags?.includes("origin:client"))).toEqual([]);
    // the service marks what only clients reported
    const marks = await t.app.sql<{ client_only: boolean }[]>`select client_only from error_groups where project_id = ${t.projectId}`;
    expect(marks.length).toBe(10);
    expect(marks.every((g) => g.client_only)).toBe(true);
  });
});
