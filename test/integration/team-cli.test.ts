import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabaseUrl, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login } from "../support/team.js";
import { runCli } from "../support/cli.js";

let databaseUrl: string;
let app: TestApp;

const cli = (...args: string[]) => runCli(databaseUrl, ...args);

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({}, databaseUrl);
});
afterAll(() => app?.close());

describe("CLI: user:create and project:create --owner", () => {
  it("creates a user who can sign in, and a project they own whose key ingests", async () => {
    const user = await cli("user:create", "--email", "Ops@Studio.test", "--password", "long enough password");
    expect(user.code).toBe(0);
    expect(user.out).toEqual({ user_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const project = await cli("project:create", "--name", "Headless Game", "--owner", "ops@studio.test");
    expect(project.code).toBe(0);
    expect(project.out).toEqual({ project_id: expect.any(String), api_key: expect.stringMatching(/^rbx_/), economy_layout: "seed" });

    const cookie = await login(app, "ops@studio.test", "long enough password");
    const me = await call(app, "GET", "/api/auth/me", { cookie });
    expect(me.body.user.id).toBe(user.out.user_id);
    expect(me.body.projects).toEqual([expect.objectContaining({ id: project.out.project_id, name: "Headless Game", role: "owner" })]);
    await ingest(app, project.out.api_key, { message: "from the CLI project" });

    const key = await cli("key:create", "--project", project.out.project_id);
    expect(key.code).toBe(0);
    const revoked = await cli("key:revoke", "--key-id", key.out.key_id);
    expect(revoked.out).toEqual({ revoked: true });
  });

  it("refuses a taken email, a short password and an unknown owner with exit code 2 and a JSON error", async () => {
    await cli("user:create", "--email", "taken@studio.test", "--password", "long enough password");
    const taken = await cli("user:create", "--email", "TAKEN@studio.test", "--password", "long enough password");
    expect(taken).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("already exists") } });
    const short = await cli("user:create", "--email", "short@studio.test", "--password", "short");
    expect(short).toMatchObject({ code: 2, out: { error: "usage" } });
    const noOwner = await cli("project:create", "--name", "Orphan", "--owner", "nobody@studio.test");
    expect(noOwner).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("nobody@studio.test") } });
    const [{ n }] = await app.sql`select count(*)::int as n from projects where name = 'Orphan'`;
    expect(n).toBe(0);
  });

  it("refuses repetitive, sequential and context passwords with a message that says why, and creates nothing", async () => {
    for (const [email, password, why] of [
      ["seq@studio.test", "abcdefgh", /repeats or runs through one character sequence/],
      ["seq@studio.test", "aaaaaaaa", /repeats or runs through one character sequence/],
      ["nina.berg@studio.test", "ninaberg99", /product's name or your own email/],
      ["seq@studio.test", "robloxmonitor", /product's name or your own email/],
    ] as const) {
      const r = await cli("user:create", "--email", email, "--password", password);
      expect(r, password).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringMatching(why) } });
    }
    const [{ n }] = await app.sql`select count(*)::int as n from users where email in ('seq@studio.test', 'nina.berg@studio.test')`;
    expect(n).toBe(0);
  });

  it("still creates an ownerless project without --owner", async () => {
    const project = await cli("project:create", "--name", "No Owner Yet");
    expect(project.code).toBe(0);
    const members = await app.sql`select 1 from project_members where project_id = ${project.out.project_id}`;
    expect(members).toHaveLength(0);
  });
});

describe("CLI: user:password (an operator's reset)", () => {
  it("sets a temporary password, ends the user's sessions, and the user must change it at sign-in", async () => {
    await cli("user:create", "--email", "forgot@studio.test", "--password", "long enough password");
    const before = await login(app, "forgot@studio.test", "long enough password");

    const reset = await cli("user:password", "--email", "Forgot@Studio.test");
    expect(reset.code).toBe(0);
    expect(reset.out).toEqual({ user_id: expect.any(String), temporary_password: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/) });
    expect((await call(app, "GET", "/api/auth/me", { cookie: before })).status).toBe(401);
    expect((await call(app, "POST", "/api/auth/login", { body: { email: "forgot@studio.test", password: "long enough password" } })).status).toBe(401);

    const cookie = await login(app, "forgot@studio.test", reset.out.temporary_password);
    expect((await call(app, "GET", "/api/team/projects", { cookie })).status).toBe(403);
    const changed = await call(app, "POST", "/api/auth/password", { cookie, body: { current_password: reset.out.temporary_password, new_password: "back in business" } });
    expect(changed.status).toBe(200);
    expect((await call(app, "GET", "/api/team/projects", { cookie })).status).toBe(200);
  });

  it("takes a chosen password under the same rules, and refuses an unknown email with exit code 2", async () => {
    await cli("user:create", "--email", "chosen@studio.test", "--password", "long enough password");
    const weak = await cli("user:password", "--email", "chosen@studio.test", "--password", "password1");
    expect(weak).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("most common") } });
    const sequential = await cli("user:password", "--email", "chosen@studio.test", "--password", "mnopqrstuvw");
    expect(sequential).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("repeats or runs through") } });
    const own = await cli("user:password", "--email", "chosen@studio.test", "--password", "chosen@studio.test");
    expect(own).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("your own email") } });
    const ok = await cli("user:password", "--email", "chosen@studio.test", "--password", "handed over by phone");
    expect(ok).toMatchObject({ code: 0, out: { temporary_password: "handed over by phone" } });
    const unknown = await cli("user:password", "--email", "ghost@studio.test");
    expect(unknown).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("ghost@studio.test") } });
  });
});
