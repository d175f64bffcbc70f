/**
 * Learned templates (migration 116, app/ingest/miner.server.ts): what the miner reads, what it
 * writes, and what ingest and the issue page read back.
 *
 * Invariant: a learned template's fingerprint is an alias of its issue's row (the issue itself, or
 * the member holding the issue's own fingerprint once the issue is merged: the row an event of that
 * fingerprint is counted on, as for any alias). The alias and the template row are written in one
 * transaction under the project's merge lock held exclusively, so an ingest write (which holds it
 * shared) sees both or neither, and never an alias to a row a merge is turning into an aggregate.
 */
import { asJson, type Sql } from "./client.js";
import { mergeLockKey } from "./write-resolve.js";
import type { LearnedTemplate } from "../app/ingest/miner.server.js";

/** At most this many learned templates per project are read (for ingest's cache and for the miner's output). */
export const MAX_TEMPLATES_PER_PROJECT = 2000;
/** At most this many issue rows per project are read by one learning pass (the locations with enough texts only). */
export const MAX_MINED_ROWS = 50_000;

/** An issue row as the miner sees it. */
export type MinedRow = {
  id: string;
  /** the visible issue the row counts in: itself, or the issue it is merged into */
  issue: string;
  location: string;
  template: string;
  created_at: string;
};

/**
 * The rows of the project's issues made by default grouping, at locations holding at least
 * `minValues` distinct templates of one length (fewer cannot learn anything). An issue that holds
 * merged issues is left out: the member holding its own fingerprint has its template.
 */
export function minedRows(sql: Sql, projectId: string, minValues: number) {
  return sql<MinedRow[]>`
    with g as (
      select g.id, coalesce(g.merged_into, g.id) as issue, g.grouping_location as location, g.grouping_template as template,
        g.created_at, cardinality(string_to_array(g.grouping_template, ' ')) as n
      from error_groups g
      where g.project_id = ${projectId} and g.grouping_template <> ''
        and not exists (select 1 from error_groups m where m.project_id = g.project_id and m.merged_into = g.id and m.merged_own)
    ), enough as (
      select location, n from g group by location, n having count(distinct template) >= ${minValues}
    )
    select g.id, g.issue, g.location, g.template, g.created_at::text as created_at
    from g join enough e on e.location = g.location and e.n = g.n
    order by g.created_at, g.id
    limit ${MAX_MINED_ROWS}`;
}

export type StoredTemplate = {
  fingerprint: string;
  location: string;
  template: string;
  token_count: number;
  group_id: string;
  positions: number[];
  samples: string[][];
  covered_texts: number;
  covered_groups: number;
  learned_at: string;
};

/** The project's learned templates as ingest matches them (fewest variables first, then by text). */
export function templatesForIngest(sql: Sql, projectId: string) {
  return sql<{ fingerprint: string; location: string; template: string; token_count: number; variables: number }[]>`
    select fingerprint, location, template, token_count, cardinality(positions) as variables
    from grouping_templates where project_id = ${projectId}
    order by cardinality(positions), template, fingerprint
    limit ${MAX_TEMPLATES_PER_PROJECT}`;
}

/** The learned templates the project has stored, by fingerprint. */
export async function storedTemplates(sql: Sql, projectId: string): Promise<Map<string, { group_id: string; merged_ids: string[] }>> {
  const rows = await sql<{ fingerprint: string; group_id: string; merged_ids: string[] }[]>`
    select fingerprint, group_id, merged_ids::text[] as merged_ids from grouping_templates where project_id = ${projectId}`;
  return new Map(rows.map((r) => [r.fingerprint, r]));
}

/** The learned templates whose issue is `groupId` (the issue page and the issue API), most texts first. */
export function templatesOfGroup(sql: Sql, projectId: string, groupId: string) {
  return sql<StoredTemplate[]>`
    select fingerprint, location, template, token_count, group_id, positions, samples, covered_texts, covered_groups,
      learned_at::text as learned_at
    from grouping_templates where project_id = ${projectId} and group_id = ${groupId}
    order by covered_texts desc, template
    limit 5`;
}

/**
 * Records a learned template with `issueId` as its issue: the template row (new, or its cover
 * figures updated) and its fingerprint as an alias of the issue's row. Returns false when the issue
 * is no longer a visible issue of the project (merged or deleted meanwhile): nothing is written.
 */
export async function recordTemplate(
  sql: Sql,
  projectId: string,
  t: LearnedTemplate,
  issueId: string,
  cover: { texts: number; groups: number },
): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${mergeLockKey(projectId)}, 0))`;
    // the row events of the issue's own fingerprint are counted on: the issue, or its own member once merged
    const [row] = await tx<{ id: string }[]>`
      select coalesce((select m.id from error_groups m where m.project_id = g.project_id and m.merged_into = g.id and m.merged_own), g.id) as id
      from error_groups g where g.project_id = ${projectId} and g.id = ${issueId} and g.merged_into is null`;
    if (!row) return false;
    await tx`
      insert into group_aliases (project_id, fingerprint, group_id) values (${projectId}, ${t.fingerprint}, ${row.id})
      on conflict (project_id, fingerprint) do nothing`;
    await tx`
      insert into grouping_templates as gt (project_id, fingerprint, location, template, token_count, group_id, positions, samples,
        covered_texts, covered_groups)
      values (${projectId}, ${t.fingerprint}, ${t.location}, ${t.template}, ${t.tokenCount}, ${issueId}, ${t.positions}::int[],
        ${asJson(tx, t.samples)}::jsonb, ${cover.texts}, ${cover.groups})
      on conflict (project_id, fingerprint) do update set
        positions = excluded.positions, samples = excluded.samples, covered_texts = excluded.covered_texts,
        covered_groups = excluded.covered_groups, group_id = excluded.group_id, updated_at = now()
      where (gt.samples, gt.covered_texts, gt.covered_groups, gt.group_id)
        is distinct from (excluded.samples, excluded.covered_texts, excluded.covered_groups, excluded.group_id)`;
    return true;
  });
}

/** The learned template merged these issues into its issue: they are never merged by it again (an unmerge stays). */
export async function addMerged(sql: Sql, projectId: string, fingerprint: string, ids: string[]): Promise<void> {
  await sql`
    update grouping_templates set merged_ids = (select array_agg(distinct x) from unnest(merged_ids || ${ids}::uuid[]) x)
    where project_id = ${projectId} and fingerprint = ${fingerprint}`;
}

/** Issues whose grouping location and template are still to be filled (from before migration 116), with their latest stored event. */
export function pendingGroupings(sql: Sql, batch: number) {
  return sql<{ project_id: string; id: string; fingerprint: string; message: string | null; stack_trace: string | null; player_name: string | null; user_id: string | null }[]>`
    with pending as (
      select project_id, id, fingerprint, merged_into, merged_own from error_groups where grouping_template is null
      order by project_id, id limit ${batch}
    )
    select p.project_id, p.id, p.fingerprint, e.message, e.stack_trace, e.player_name, e.user_id::text as user_id
    from pending p
    left join lateral (
      select message, stack_trace, player_name, user_id from events
      where project_id = p.project_id and group_id = coalesce(p.merged_into, p.id)
        and origin_group_id is not distinct from (case when p.merged_into is not null and not p.merged_own then p.id end)
      order by "timestamp" desc, id desc limit 1
    ) e on true`;
}

/** Fills the grouping location and template of issues still without them ('' for one not made by default grouping). */
export async function fillGroupings(sql: Sql, values: { project_id: string; id: string; location: string; template: string }[]): Promise<number> {
  if (values.length === 0) return 0;
  const done = await sql`
    update error_groups g set grouping_location = v.location, grouping_template = v.template
    from json_to_recordset(${asJson(sql, values)}::json) as v(project_id uuid, id uuid, location text, template text)
    where g.project_id = v.project_id and g.id = v.id and g.grouping_template is null`;
  return done.count;
}

/** Projects with issues made in the last `sinceSeconds`: the periodic pass learns them again. */
export async function projectsWithNewGroups(sql: Sql, sinceSeconds: number): Promise<string[]> {
  const rows = await sql<{ project_id: string }[]>`
    select distinct project_id from error_groups where created_at > now() - make_interval(secs => ${sinceSeconds})`;
  return rows.map((r) => r.project_id);
}

/** A learned template as the issue API and the issue page show it. */
export type LearnedTemplateView = {
  template: string;
  /** each learned position (0-based word index of the template) with a few of the values seen there */
  variables: { position: number; samples: string[] }[];
  /** how many distinct texts and how many issues it covered when last learned */
  texts: number;
  issues: number;
  learned_at: string;
};

/** The learned template whose issue is `groupId` (the one covering the most texts), or null. */
export async function learnedTemplateOf(sql: Sql, projectId: string, groupId: string): Promise<LearnedTemplateView | null> {
  const [t] = await templatesOfGroup(sql, projectId, groupId);
  if (!t) return null;
  return {
    template: t.template,
    variables: t.positions.map((position, i) => ({ position, samples: t.samples[i] ?? [] })),
    texts: t.covered_texts,
    issues: t.covered_groups,
    learned_at: new Date(t.learned_at).toISOString(),
  };
}
