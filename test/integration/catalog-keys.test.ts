import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { freshDatabaseUrl } from "../support/server.js";

/**
 * The path past one PostgreSQL (docs/operations.md, "Capacity and the path beyond"): distributing the
 * tables by `project_id`, Citus-style, needs every table either keyed by project or small enough to
 * copy to every node (a reference table). This reads the migrated catalog and fails when a table
 * breaks that rule: a new table must carry `project_id` in its primary key and in every unique
 * constraint (each node can then enforce them alone), or be listed here as a reference table with
 * the reason. Foreign keys must stay within a project (both sides keyed by it) or point at a
 * reference table; a reference table may not point at a distributed one.
 */
const REFERENCE_TABLES: Record<string, string> = {
  projects: "the tenants themselves, one row each",
  users: "accounts span projects",
  sessions: "sign-in sessions belong to users",
  login_known_addresses: "sign-in protection belongs to users",
  rate_limits: "per-address limits before a project is known",
  schema_migrations: "the migration ledger",
  api_keys: "a key is looked up by its hash before its project is known",
  dsn_keys: "a DSN key is looked up by its public key before its project is known",
  share_links: "a share link is opened by its token before its project is known",
  alert_channels: "a channel is addressed by id from the alert worker's jobs; a few rows per project",
  alert_rules: "rules are addressed by id from the alert worker's jobs; a few rows per project",
  audit_log: "one row per admin change; the instance's rows (accounts, deleted projects) have no project",
  user_identities: "sign-in identities belong to users, looked up by the provider's subject before any project",
  oidc_flows: "a sign-in in progress, before any project is known",
  user_two_factor: "a second factor belongs to a user",
  user_recovery_codes: "recovery codes belong to a user",
  health_compaction: "how far the shard compaction has gone, one row per rollup table",
};

/**
 * Foreign keys known to break the rule, each with what distributing would need. A new one fails the
 * test until it is either fixed or listed here.
 */
const KNOWN_CROSSINGS: Record<string, string> = {
  share_links_project_id_group_id_fkey:
    "share_links is a reference table (opened by its token) but deletes with its issue; distributed, the token would have to name its project",
};

type TableRow = { table: string; has_project: boolean; keys: { name: string; columns: string[] }[] };
type ForeignKey = { name: string; from: string; to: string; from_columns: string[]; to_columns: string[] };

let sql: Sql;
let tables: TableRow[];
let foreignKeys: ForeignKey[];

beforeAll(async () => {
  sql = createSql(await freshDatabaseUrl(), 2);
  await migrate(sql);
  // every table of the schema (partitions are their parent's), with its primary key and unique
  // constraints and unique indexes as column lists (an expression counts as no column)
  tables = await sql<TableRow[]>`
    select c.relname as table,
      exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'project_id' and not a.attisdropped) as has_project,
      coalesce((
        select json_agg(json_build_object('name', i.relname, 'columns', (
          select coalesce(json_agg(a.attname order by k.ord), '[]'::json)
          from unnest(x.indkey) with ordinality k(attnum, ord)
          join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum)))
        from pg_index x join pg_class i on i.oid = x.indexrelid
        where x.indrelid = c.oid and x.indisunique), '[]'::json) as keys
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
    order by 1`;
  foreignKeys = await sql<ForeignKey[]>`
    select con.conname as name, src.relname as from, dst.relname as to,
      (select json_agg(a.attname) from unnest(con.conkey) k join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k) as from_columns,
      (select json_agg(a.attname) from unnest(con.confkey) k join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k) as to_columns
    from pg_constraint con
    join pg_class src on src.oid = con.conrelid join pg_namespace n on n.oid = src.relnamespace
    join pg_class dst on dst.oid = con.confrelid
    where con.contype = 'f' and n.nspname = 'public' and not src.relispartition
    order by 1`;
});

afterAll(async () => {
  await sql?.end();
});

describe("every table is keyed by project or is a reference table", () => {
  it("reads the whole schema", () => {
    // a check over no tables would pass whatever the migrations did
    expect(tables.map((t) => t.table)).toEqual(expect.arrayContaining(["events", "error_groups", "economy_snapshots", "projects"]));
  });

  it("a distributed table has project_id in its primary key and in every unique constraint", () => {
    const problems: string[] = [];
    for (const t of tables) {
      if (t.table in REFERENCE_TABLES) continue;
      if (!t.has_project) {
        problems.push(`${t.table}: no project_id column (add one, or list it as a reference table with the reason)`);
        continue;
      }
      if (t.keys.length === 0) problems.push(`${t.table}: no primary key`);
      for (const k of t.keys) {
        if (!k.columns.includes("project_id")) problems.push(`${t.table}: unique ${k.name} (${k.columns.join(", ") || "an expression"}) leaves out project_id`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("foreign keys stay within a project or point at a reference table", () => {
    const problems: string[] = [];
    for (const fk of foreignKeys) {
      if (fk.name in KNOWN_CROSSINGS) continue;
      const fromReference = fk.from in REFERENCE_TABLES;
      const toReference = fk.to in REFERENCE_TABLES;
      if (toReference) continue;
      if (fromReference) {
        problems.push(`${fk.name}: reference table ${fk.from} points at distributed ${fk.to}`);
      } else if (!fk.from_columns.includes("project_id") || !fk.to_columns.includes("project_id")) {
        problems.push(`${fk.name}: ${fk.from} (${fk.from_columns.join(", ")}) -> ${fk.to} (${fk.to_columns.join(", ")}) crosses projects`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every listed reference table and known crossing exists (a renamed or dropped one leaves the list)", () => {
    const names = new Set(tables.map((t) => t.table));
    expect(Object.keys(REFERENCE_TABLES).filter((t) => !names.has(t))).toEqual([]);
    const keys = new Set(foreignKeys.map((fk) => fk.name));
    expect(Object.keys(KNOWN_CROSSINGS).filter((k) => !keys.has(k))).toEqual([]);
  });
});
