import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mergeGroups } from "../../db/merge.js";
import { firstGroupId } from "../../db/onboarding.js";
import { generateGroups } from "../../scripts/bench/sql-data.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { ingest, iso, HOUR } from "../support/query-fixtures.js";

/**
 * The overview's onboarding panel links the project's first issue (by first occurrence). It sorted
 * every group of the project on each view; an index on (project, first_seen, id) now answers it as a
 * LIMIT 1 (migration 141), whatever the number of issues.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe("the onboarding panel's first issue", () => {
  it("is the issue first seen, a late event included", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "onboarding-first");
    expect(await firstGroupId(app.sql, projectId)).toBeNull();
    const now = Date.now();
    await ingest(app, apiKey, [{ message: "Onboarding first", timestamp: iso(now - HOUR) }]);
    await ingest(app, apiKey, [{ message: "Onboarding second", timestamp: iso(now) }]);
    const id = async (message: string) => (await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = ${message}`)[0].id;
    expect(await firstGroupId(app.sql, projectId)).toBe(await id("Onboarding first"));
    // a late event of the second issue, older than every other: it is now the first seen
    await ingest(app, apiKey, [{ message: "Onboarding second", timestamp: iso(now - 2 * HOUR) }]);
    expect(await firstGroupId(app.sql, projectId)).toBe(await id("Onboarding second"));
    // merged into the other one, it is no longer listed: the issue it is in is the first, with its sighting
    // (the merge adds a member row with the target's message: its id is taken before)
    const first = await id("Onboarding first");
    await mergeGroups(app.sql, projectId, first, [await id("Onboarding second")]);
    expect(await firstGroupId(app.sql, projectId)).toBe(first);
  });

  it("is read through the index, not by sorting the project's groups", async () => {
    const { projectId } = await createProject(app.sql, "onboarding-many");
    await generateGroups(app.sql, projectId, 20_000, "Onboard");
    await app.sql`analyze error_groups`;
    const [{ id }] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} order by first_seen, id limit 1`;
    expect(await firstGroupId(app.sql, projectId)).toBe(id);
    const plan = (await app.sql<{ "QUERY PLAN": string }[]>`
      explain select id from error_groups where project_id = ${projectId} and merged_into is null order by first_seen, id limit 1`).map((r) => r["QUERY PLAN"]).join("\n");
    expect(plan).toContain("error_groups_first_seen");
    expect(plan).not.toContain("Sort");
  });
});
