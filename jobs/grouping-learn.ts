/**
 * Learning templates (app/ingest/miner.server.ts) from a project's issues, and making the issues a
 * learned template covers one issue.
 *
 * One pass per project at a time, whichever instance runs it (a session advisory try-lock: a pass
 * that finds it taken does nothing, the running one will see the same issues or newer). A pass reads
 * the project's issue templates, mines them, and for each learned template: its issue is the one it
 * had (still visible), else the oldest issue it covers; its fingerprint becomes an alias of that issue
 * (db/grouping-templates.ts recordTemplate), and every other issue it covers is merged into it with
 * the same merge as by hand (db/merge.ts), so counts stay exact and an unmerge gives each back its own.
 * A pass is idempotent: run again on the same issues it changes nothing.
 */
import type { Sql } from "../db/client.js";
import { defaultFingerprint, defaultFingerprintV2, defaultFingerprintV3, groupingParts } from "../app/ingest/fingerprint.server.js";
import { matches, MIN_VALUES, mine, tokens } from "../app/ingest/miner.server.js";
import { GROUPING_LEARN_QUEUE, templatesChanged } from "../app/ingest/learned-templates.server.js";
import { mergeGroups, MergeRefused } from "../db/merge.js";
import {
  fillGroupings,
  MAX_TEMPLATES_PER_PROJECT,
  minedRows,
  addMerged,
  pendingGroupings,
  recordTemplate,
  storedTemplates,
  type MinedRow,
} from "../db/grouping-templates.js";

export { GROUPING_LEARN_QUEUE };
/** How many issues one backfill step fills, and how many steps one run takes at most (the next run goes on). */
const BACKFILL_BATCH = 500;
const BACKFILL_STEPS = 20;

export type LearnResult = { templates: number; merged: number };

const lockKey = (projectId: string) => `grouping-learn:${projectId}`;

/**
 * One learning pass over a project; null when another pass holds the project. `merged` counts the
 * issues merged into learned templates' issues by this pass.
 */
export async function learnProject(sql: Sql, projectId: string): Promise<LearnResult | null> {
  const conn = await sql.reserve();
  try {
    const [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(hashtextextended(${lockKey(projectId)}, 0)) as locked`;
    if (!locked) return null;
    try {
      return await learnLocked(sql, projectId);
    } finally {
      await conn`select pg_advisory_unlock(hashtextextended(${lockKey(projectId)}, 0))`;
    }
  } finally {
    conn.release();
  }
}

async function learnLocked(sql: Sql, projectId: string): Promise<LearnResult> {
  const rows = await minedRows(sql, projectId, MIN_VALUES);
  const learned = mine(rows).slice(0, MAX_TEMPLATES_PER_PROJECT);
  if (learned.length === 0) return { templates: 0, merged: 0 };
  const stored = await storedTemplates(sql, projectId);
  const byBucket = new Map<string, { row: MinedRow; tokens: string[] }[]>();
  for (const row of rows) {
    const t = tokens(row.template);
    const k = `${row.location}\u0000${t.length}`;
    byBucket.set(k, [...(byBucket.get(k) ?? []), { row, tokens: t }]);
  }
  let merged = 0;
  let changed = false;
  for (const t of learned) {
    const tt = tokens(t.template);
    const covered = (byBucket.get(`${t.location}\u0000${t.tokenCount}`) ?? []).filter((c) => matches(tt, c.tokens)).map((c) => c.row);
    // rows come oldest first: the first covered row's issue is the oldest covered issue
    const issues = [...new Set(covered.map((r) => r.issue))];
    if (issues.length === 0) continue;
    const before = stored.get(t.fingerprint);
    // its issue so far (or the issue that one was merged into since), else the oldest covered issue
    let issue = before ? (rows.find((r) => r.id === before.group_id)?.issue ?? before.group_id) : issues[0];
    const cover = { texts: new Set(covered.map((r) => r.template)).size, groups: covered.length };
    if (!(await recordTemplate(sql, projectId, t, issue, cover))) {
      // its issue was deleted since: the oldest covered issue takes the template
      if (issue === issues[0] || !(await recordTemplate(sql, projectId, t, (issue = issues[0]), cover))) continue;
    }
    changed = true;
    // issues it merged before and a studio unmerged since stay apart
    const done = new Set(before?.merged_ids ?? []);
    const sources = issues.filter((id) => id !== issue && !done.has(id));
    if (sources.length === 0) continue;
    const ids = await mergeInto(sql, projectId, issue, sources);
    if (ids.length > 0) await addMerged(sql, projectId, t.fingerprint, ids);
    merged += ids.length;
  }
  if (changed) templatesChanged(projectId);
  return { templates: learned.length, merged };
}

/** Merges what may be merged: a source holding merged issues (merged by hand) is left as it is. */
async function mergeInto(sql: Sql, projectId: string, issue: string, sources: string[]): Promise<string[]> {
  try {
    return await mergeGroups(sql, projectId, issue, sources, { actorId: null, via: "learned_template" });
  } catch (err) {
    if (!(err instanceof MergeRefused)) throw err;
    const refused = "ids" in err.refusal ? new Set(err.refusal.ids) : new Set<string>();
    const ok = sources.filter((id) => !refused.has(id));
    if (refused.has(issue) || ok.length === 0 || ok.length === sources.length) return [];
    return mergeInto(sql, projectId, issue, ok);
  }
}

/**
 * Fills the grouping location and template of issues from before migration 116 from their latest
 * stored event: at most BACKFILL_STEPS x `batch` issues per run. An issue not made by default grouping
 * (its fingerprint is none of the event's default ones: a client fingerprint) or without stored events
 * gets '' (nothing to learn from). Returns the projects whose issues were filled.
 */
export async function fillGroupingTemplates(sql: Sql, batch = BACKFILL_BATCH): Promise<Set<string>> {
  const projects = new Set<string>();
  for (let step = 0; step < BACKFILL_STEPS; step++) {
    const pending = await pendingGroupings(sql, batch);
    if (pending.length === 0) break;
    const values = pending.map((p) => {
      if (p.message === null) return { project_id: p.project_id, id: p.id, location: "", template: "" };
      const defaults = [
        defaultFingerprint(p.message, p.stack_trace, p.player_name, p.user_id),
        defaultFingerprintV3(p.message, p.stack_trace, p.player_name, p.user_id),
        defaultFingerprintV2(p.message, p.stack_trace, p.player_name),
      ];
      if (!defaults.includes(p.fingerprint)) return { project_id: p.project_id, id: p.id, location: "", template: "" };
      projects.add(p.project_id);
      const { location, template } = groupingParts(p.message, p.stack_trace, p.player_name, p.user_id);
      return { project_id: p.project_id, id: p.id, location, template };
    });
    await fillGroupings(sql, values);
    if (pending.length < batch) break;
  }
  return projects;
}
