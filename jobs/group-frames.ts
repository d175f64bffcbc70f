import { asJson, type Sql } from "../db/client.js";
import { addEntries, frameEntries } from "../app/ingest/frames.server.js";

/** How many issues one pass fills, and from how many of each one's stored events. */
const BATCH = 200;
const EVENTS_PER_ISSUE = 20;

/**
 * Fills the frames issue search matches (error_groups.frames, migration 115) of the issues that have
 * none yet: those from before the column, or made by a path that does not parse stacks. Each is filled
 * from its first stored events (at most EVENTS_PER_ISSUE), parsed as ingest parses them; one without
 * stored stacks gets none (''). Only a row still null is written: a row the group upsert has filled is
 * left as it is. Returns how many issues were filled.
 */
export async function fillGroupFrames(sql: Sql, opts: { batch?: number; eventsPerIssue?: number } = {}): Promise<number> {
  const batch = opts.batch ?? BATCH;
  const perIssue = opts.eventsPerIssue ?? EVENTS_PER_ISSUE;
  let filled = 0;
  for (;;) {
    const rows = await sql<{ project_id: string; id: string; stack_trace: string | null; player_name: string | null }[]>`
      with pending as (select project_id, id from error_groups where frames is null order by project_id, id limit ${batch})
      select p.project_id, p.id, e.stack_trace, e.player_name
      from pending p
      left join lateral (
        select stack_trace, player_name from events
        where project_id = p.project_id and group_id = p.id
        order by "timestamp", id limit ${perIssue}
      ) e on true`;
    if (rows.length === 0) return filled;
    const frames = new Map<string, { project_id: string; id: string; entries: string[] }>();
    for (const r of rows) {
      let g = frames.get(r.id);
      if (!g) frames.set(r.id, (g = { project_id: r.project_id, id: r.id, entries: [] }));
      addEntries(g.entries, frameEntries(r.stack_trace, r.player_name));
    }
    const values = [...frames.values()].map((g) => ({ project_id: g.project_id, id: g.id, frames: g.entries.join("\n") }));
    const done = await sql`
      update error_groups g set frames = v.frames
      from json_to_recordset(${asJson(sql, values)}::json) as v(project_id uuid, id uuid, frames text)
      where g.project_id = v.project_id and g.id = v.id and g.frames is null`;
    filled += done.count;
  }
}
