import type { Sql } from "./client.js";
import { ROLLUP_TABLES } from "./stats.js";
import { announceKeysChanged } from "./key-events.js";
import { recordAudit } from "./audit.js";
import { discardPendingOf } from "./counter-deltas.js";

export type Project = { id: string; name: string; created_at: Date };
export type ApiKeyRow = {
  id: string;
  project_id: string;
  name: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

export async function insertProject(sql: Sql, name: string): Promise<Project> {
  const [p] = await sql<Project[]>`insert into projects (name) values (${name}) returning id, name, created_at`;
  return p;
}

export async function getProject(sql: Sql, id: string): Promise<Project | undefined> {
  const [p] = await sql<Project[]>`select id, name, created_at from projects where id = ${id}`;
  return p;
}

export async function insertApiKey(
  sql: Sql,
  projectId: string,
  key: { prefix: string; hash: Buffer; name?: string | null },
): Promise<ApiKeyRow> {
  const [k] = await sql<ApiKeyRow[]>`
    insert into api_keys (project_id, prefix, key_hash, name)
    values (${projectId}, ${key.prefix}, ${key.hash}, ${key.name ?? null})
    returning id, project_id, name, prefix, created_at, last_used_at, revoked_at`;
  return k;
}

export async function listApiKeys(sql: Sql, projectId: string): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`
    select id, project_id, name, prefix, created_at, last_used_at, revoked_at
    from api_keys where project_id = ${projectId} order by created_at, id`;
}

/**
 * Revokes a key and tells every instance to forget cached keys. Returns false if no active key had
 * that id (in `by.projectId`, when given). Every revocation is audited (`api_key.revoked`) in the
 * revoking transaction, whoever revokes: a user (`by.actorId`) or the command line (actor null,
 * `via: "cli"`), so no way of revoking can skip the row.
 */
export async function revokeApiKey(
  sql: Sql,
  keyId: string,
  by: { projectId?: string; actorId: string | null; via?: string } = { actorId: null },
): Promise<boolean> {
  const revoked = await sql.begin(async (tx) => {
    const [k] = await tx<Pick<ApiKeyRow, "id" | "project_id" | "name" | "prefix">[]>`
      update api_keys set revoked_at = now()
      where id = ${keyId} and revoked_at is null ${by.projectId ? tx`and project_id = ${by.projectId}` : tx``}
      returning id, project_id, name, prefix`;
    if (!k) return false;
    await recordAudit(tx, {
      projectId: k.project_id,
      actorId: by.actorId,
      action: "api_key.revoked",
      target: k.id,
      details: { name: k.name, prefix: k.prefix, via: by.via },
    });
    await tx`select pg_notify('api_keys_changed', ${keyId})`;
    return true;
  });
  if (revoked) announceKeysChanged();
  return revoked;
}

export async function findActiveKey(sql: Sql, hash: Buffer): Promise<{ id: string; project_id: string } | undefined> {
  const [k] = await sql<{ id: string; project_id: string }[]>`
    select id, project_id from api_keys where key_hash = ${hash} and revoked_at is null`;
  return k;
}

export async function touchApiKey(sql: Sql, keyId: string): Promise<void> {
  await sql`update api_keys set last_used_at = now() where id = ${keyId}`;
}

/**
 * A project, its owner's membership, a first key and, unless it starts on the seed's map
 * (`economyMap` null), its currency map: in one transaction.
 */
export async function insertProjectWithOwner(
  sql: Sql,
  name: string,
  ownerId: string | null,
  key: { prefix: string; hash: Buffer; name?: string | null },
  economyMap: unknown = null,
): Promise<{ project: Project; key: ApiKeyRow }> {
  return sql.begin(async (tx) => {
    const [project] = await tx<Project[]>`insert into projects (name) values (${name}) returning id, name, created_at`;
    if (ownerId) await tx`insert into project_members (project_id, user_id, role) values (${project.id}, ${ownerId}, 'owner')`;
    const [k] = await tx<ApiKeyRow[]>`
      insert into api_keys (project_id, prefix, key_hash, name)
      values (${project.id}, ${key.prefix}, ${key.hash}, ${key.name ?? null})
      returning id, project_id, name, prefix, created_at, last_used_at, revoked_at`;
    if (economyMap !== null) {
      await tx`insert into economy_maps (project_id, map, updated_by) values (${project.id}, ${tx.json(economyMap as never)}, ${ownerId})`;
    }
    await recordAudit(tx, { projectId: project.id, actorId: ownerId, action: "project.created", target: project.name });
    await recordAudit(tx, { projectId: project.id, actorId: ownerId, action: "api_key.created", target: k.id, details: { name: k.name, prefix: k.prefix } });
    return { project, key: k };
  });
}

export async function renameProject(sql: Sql, id: string, name: string): Promise<Project | undefined> {
  const [p] = await sql<Project[]>`update projects set name = ${name} where id = ${id} returning id, name, created_at`;
  return p;
}

/**
 * Deletes a project and all its data in one transaction. The hot ingest tables carry no foreign
 * keys, so their rows are deleted explicitly; the rest goes by cascade. Locks first, in the order
 * ingest takes them: the project's groups by fingerprint (an in-flight ingest finishes before, a
 * later one waits and then fails on the vanished project), then the project row (an ingest creating
 * a new group holds a key-share lock on it through the foreign key). So no event lands after the
 * delete has read the events table.
 */
/** Release health's rows of a project (migration 118 and after); none has a foreign key to it. */
const HEALTH_TABLES = [
  "health_samples",
  "health_sessions",
  "health_servers",
  "health_versions",
  "health_hour",
  "health_minute",
  "health_hist_hour",
  "health_hist_day",
  "health_player_days",
  "health_player_summary",
  "health_player_counts",
  "health_open",
] as const;

export async function deleteProject(sql: Sql, id: string, actorId: string | null = null): Promise<boolean> {
  const deleted = await sql.begin(async (tx) => {
    // first, before any row lock (db/counter-deltas.ts): no drain then writes the project's counters back
    await discardPendingOf(tx, id);
    await tx`select 1 from error_groups where project_id = ${id} order by fingerprint for update`;
    const [p] = await tx<{ id: string; name: string }[]>`select id, name from projects where id = ${id} for update`;
    if (!p) return false;
    // the project's own audit rows go with it; this one is the instance's
    await recordAudit(tx, { projectId: null, actorId, action: "project.deleted", target: p.name, details: { project_id: id } });
    await tx`delete from events where project_id = ${id}`;
    await tx`delete from event_messages where project_id = ${id}`;
    await tx`delete from group_users where project_id = ${id}`;
    await tx`delete from group_environments where project_id = ${id}`;
    await tx`delete from group_versions where project_id = ${id}`;
    await tx`delete from project_users where project_id = ${id}`;
    await tx`delete from traces where project_id = ${id}`;
    await tx`delete from sdk_discards where project_id = ${id}`;
    await tx`delete from sdk_last_warnings where project_id = ${id}`;
    await tx`delete from client_report_keys where project_id = ${id}`;
    for (const t of ROLLUP_TABLES) await tx`delete from ${tx(t)} where project_id = ${id}`;
    await tx`delete from rollup_version_hour where project_id = ${id}`;
    await tx`delete from rollup_version_minute where project_id = ${id}`;
    for (const t of HEALTH_TABLES) await tx`delete from ${tx(t)} where project_id = ${id}`;
    await tx`delete from projects where id = ${id}`;
    return true;
  });
  // the project's keys went with it: every instance must forget them now
  if (deleted) {
    announceKeysChanged();
    await sql`select pg_notify('api_keys_changed', ${id})`;
  }
  return deleted;
}
