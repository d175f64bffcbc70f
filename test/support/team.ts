import { randomBytes } from "node:crypto";
import type { Sql } from "../../db/client.js";
import { insertMember, type Role } from "../../db/members.js";
import { createUser } from "../../app/accounts/users.server.js";
import { createProject as domainCreateProject } from "../../app/team/projects.server.js";
import type { TestApp } from "./server.js";
import { recordSecretIfAudited as recordSecret } from "./log-audit.js";
import { countersApplied } from "./counters.js";

/** Factories and a small client for the Team API (session cookie, JSON). */
export const PASSWORD = "correct horse battery";

export async function makeUser(sql: Sql, email = `u-${randomBytes(4).toString("hex")}@example.test`) {
  const user = await createUser(sql, { email, password: PASSWORD });
  recordSecret("password", PASSWORD);
  return { id: user.id, email: user.email };
}

/** A project whose owner is `ownerId`, plus optional extra members. */
export async function makeProject(sql: Sql, ownerId: string, members: { userId: string; role: Role }[] = [], name = "Team Game") {
  const { project, api_key, key } = await domainCreateProject(sql, { id: ownerId, email: "" }, { name });
  recordSecret("api key", api_key);
  for (const m of members) await insertMember(sql, project.id, m.userId, m.role);
  return { projectId: project.id, apiKey: api_key, keyId: key.id };
}

export type Reply = { status: number; body: any; headers: Headers };

export async function call(
  app: TestApp,
  method: string,
  pathname: string,
  opts: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(opts.cookie ? { cookie: opts.cookie } : {}) };
  if (method !== "GET") headers["content-type"] = "application/json";
  Object.assign(headers, opts.headers);
  const res = await app.request(pathname, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body),
    redirect: "manual",
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

/** Signs in through POST /api/auth/login and returns the cookie to send back. */
export async function login(app: TestApp, email: string, password = PASSWORD, headers: Record<string, string> = {}): Promise<string> {
  const r = await call(app, "POST", "/api/auth/login", { body: { email, password }, headers });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${JSON.stringify(r.body)}`);
  const set = r.headers.get("set-cookie") ?? "";
  return set.split(";")[0];
}

export async function ingest(app: TestApp, apiKey: string, events: unknown) {
  const r = await call(app, "POST", "/api/ingest", { body: events, headers: { "x-api-key": apiKey } });
  if (r.status !== 200) throw new Error(`ingest failed: ${r.status} ${JSON.stringify(r.body)}`);
  // users, environments, versions and rollups are applied shortly after the write: a test reads them next
  await countersApplied(app.sql);
  return r.body;
}

export type RoleUsers = Record<"owner" | "admin" | "member" | "outsider", { id: string; email: string; cookie: string }>;

/** Four signed-in users: a project's owner, admin and member (see projectWithRoles), and one outside it. */
export async function signedInRoles(app: TestApp): Promise<RoleUsers> {
  const users = {} as RoleUsers;
  for (const who of ["owner", "admin", "member", "outsider"] as const) {
    const u = await makeUser(app.sql);
    users[who] = { ...u, cookie: await login(app, u.email) };
  }
  return users;
}

/** A project of `users.owner` with `users.admin` as admin and `users.member` as member. */
export const projectWithRoles = (sql: Sql, users: RoleUsers) =>
  makeProject(sql, users.owner.id, [
    { userId: users.admin.id, role: "admin" },
    { userId: users.member.id, role: "member" },
  ]);
