/**
 * The distinct texts of stored events (db/migrations/105_event_messages.sql): one row per project and
 * message with how many stored events carry it, under a trigram index. Raw search finds the texts
 * holding a term there, takes its total from their counts, and reads the page from the events
 * through their index on the message's hash, so its cost follows the matches it answers, not how many
 * events are stored.
 *
 * The counts follow the stored events: the counter drain adds each batch's (db/counter-deltas.ts),
 * and whatever deletes events takes theirs away here. Every change is an upsert of a sum, so they
 * apply in any order, even a retention run before the drain of the events it drops.
 */
import type { PendingQuery, Row } from "postgres";
import type { Sql, TxSql } from "./client.js";

type Fragment = PendingQuery<Row[]>;

/**
 * The upsert that adds `sums` (rows of `project_id`, `message`, `n`) to their texts' counts, in key
 * order (every writer of the counts takes the rows in that order, so none deadlocks another); a
 * statement of its own or the body of a `with` part.
 */
export const addToMessages = (sql: Sql | TxSql, sums: Fragment) => sql`
  insert into event_messages as m (project_id, hash, message, stored_count)
  select project_id, md5(message)::uuid, min(message), sum(n) from (${sums}) s
  group by 1, 2
  order by 1, 2
  on conflict (project_id, hash) do update set stored_count = m.stored_count + excluded.stored_count`;

/** Removes the texts (of one project, or of all) whose stored events are all gone. */
export async function pruneMessages(sql: Sql | TxSql, projectId?: string): Promise<void> {
  await sql`delete from event_messages where stored_count = 0 ${projectId ? sql`and project_id = ${projectId}` : sql``}`;
}

/**
 * What starting one text's read costs next to reading one event: its ordered read descends the index of
 * every daily partition (about 40: 30 days kept, a week made ahead, the default one) before it merges them.
 */
const TEXT_READ_COST = 40;

/** The most events one step of the newest-first read takes (it doubles from its first guess). */
const MAX_STEP = 20_000;

/**
 * The newest `reach` events of the project whose text is one of `matching`, as keys (id and timestamp
 * as text, exact to the microsecond: sent back as text too, since a timestamp parameter goes through
 * a JavaScript Date, which keeps milliseconds), newest first. Reads the project's events newest first in steps,
 * each a LIMIT on the timestamp index, so the read stops near the page whatever the planner thinks of
 * the project's size; the first step takes about twice the `expected` events the page needs.
 */
async function newestMatches(sql: Sql, projectId: string, matching: PendingQuery<Row[]>, reach: number, expected: number) {
  const found: { id: string; ts: string }[] = [];
  let after: { id: string; ts: string } | null = null;
  let step = Math.min(MAX_STEP, Math.max(200, Math.ceil(expected * 2)));
  for (;;) {
    const rows: { id: string | null; ts: string | null; hit: boolean; ord: number; n: number }[] = await sql`
      with w as materialized (
        select e.id, e."timestamp", md5(e.message)::uuid as h from events e
        where e.project_id = ${projectId}
          ${after ? sql`and (e."timestamp", e.id) < (${after.ts}::text::timestamptz, ${after.id}::bigint)` : sql``}
        order by e."timestamp" desc, e.id desc limit ${step}
      ), n as (select count(*)::int as n from w)
      select x.id::text, x."timestamp"::text as ts, x.hit, x.ord, n.n from n left join (
        (select id, "timestamp", true as hit, row_number() over (order by "timestamp" desc, id desc)::int as ord
          from w where h in (select hash from (${matching}) t)
          order by "timestamp" desc, id desc limit ${reach - found.length})
        union all
        -- the oldest event read: where the next step starts
        (select id, "timestamp", false, 0 from w order by "timestamp", id limit 1)
      ) x on true`;
    const hits = rows.filter((r) => r.hit).sort((a, b) => a.ord - b.ord);
    for (const r of hits) found.push({ id: r.id!, ts: r.ts! });
    const edge = rows.find((r) => !r.hit && r.id);
    if (found.length >= reach || rows[0].n < step || !edge) break;
    after = { id: edge.id!, ts: edge.ts! };
    step = Math.min(MAX_STEP, step * 2);
  }
  return found;
}

export type MessageSearchPage = { data: Record<string, unknown>[]; total: number };

/**
 * How a search's page is read (see `searchByMessage`): from `texts` matching texts carrying `total`
 * events of the project's `stored`, the page reaching `reach` (limit + offset) matches deep.
 */
export function pageWay(texts: number, total: number, stored: number, reach: number): "per-text" | "newest-first" {
  const perText = texts * TEXT_READ_COST + Math.min(total, texts * reach);
  const newestFirst = TEXT_READ_COST + (reach * Math.max(stored, total)) / total;
  return perText <= newestFirst ? "per-text" : "newest-first";
}

/**
 * A raw search with no other filter, over every stored event: the texts whose message holds the term
 * (`pattern`, a LIKE pattern matched without case) give the total, and the page is read one of two
 * ways, whichever reads less:
 *  - per matching text, its newest `limit + offset` events from the hash index, then merged: costs
 *    a start per text (TEXT_READ_COST) and its events up to the reach; cheap for a term in a few texts,
 *    however old or rare their events;
 *  - the project's events newest first, each checked against the matching texts by hash, stopping
 *    once the page is full: costs (limit + offset) × stored ÷ total events; cheap for a common term.
 */
export async function searchByMessage(
  sql: Sql,
  projectId: string,
  pattern: string,
  f: { limit: number; offset: number },
  columns: PendingQuery<Row[]>,
  /** tests: read the page this way, whatever it costs */
  way?: "per-text" | "newest-first",
): Promise<MessageSearchPage> {
  const matching = sql`
    select t.hash, t.message, t.stored_count from event_messages t
    where t.project_id = ${projectId} and t.message ilike ${pattern} and t.stored_count > 0`;
  const [m] = await sql<{ total: string; texts: number; stored: string }[]>`
    select coalesce(sum(t.stored_count), 0)::bigint as total, count(*)::int as texts,
      (select coalesce(sum(stored_count), 0) from error_groups where project_id = ${projectId})::bigint as stored
    from (${matching}) t`;
  const total = Number(m.total);
  if (total === 0 || f.offset >= total) return { data: [], total };
  const reach = f.limit + f.offset;
  const stored = Number(m.stored);
  const perText = (way ?? pageWay(m.texts, total, stored, reach)) === "per-text";
  if (perText) {
    const data = await sql`
      select ${columns} from (${matching}) t
      cross join lateral (
        select e.* from events e
        where e.project_id = ${projectId} and md5(e.message)::uuid = t.hash and e.message = t.message
        order by e."timestamp" desc, e.id desc limit ${reach}
      ) e
      order by e."timestamp" desc, e.id desc limit ${f.limit} offset ${f.offset}`;
    return { data, total };
  }
  const keys = (await newestMatches(sql, projectId, matching, reach, (reach * Math.max(stored, total)) / total)).slice(f.offset);
  if (keys.length === 0) return { data: [], total };
  const data = await sql`
    select ${columns} from events e
    join unnest(${keys.map((k) => k.id)}::bigint[], ${keys.map((k) => k.ts)}::text[]::timestamptz[]) k(id, ts)
      on e.project_id = ${projectId} and e.id = k.id and e."timestamp" = k.ts
    order by e."timestamp" desc, e.id desc`;
  return { data, total };
}
