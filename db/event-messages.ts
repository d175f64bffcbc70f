/**
 * The distinct texts of stored events (db/migrations/105_event_messages.sql, 106): one row per project,
 * group and message with how many stored events of the group carry it, under a trigram index. The
 * group is the event's own (the one it was written for, before any merge), so merges move no row.
 * Raw search finds the texts holding a term there, takes its total from their counts, and reads the
 * page from the events through their index on the message's hash, so its cost follows the matches it
 * answers, not how many events are stored. Issue search takes the groups of the matching texts
 * (db/errors.ts).
 *
 * The counts follow the stored events: the counter drain adds each batch's (db/counter-deltas.ts),
 * and whatever deletes events takes theirs away here. Every change is an upsert of a sum, so they
 * apply in any order, even a retention run before the drain of the events it drops.
 */
import type { PendingQuery, Row } from "postgres";
import type { Sql, TxSql } from "./client.js";

type Fragment = PendingQuery<Row[]>;

/**
 * The upsert that adds `sums` (rows of `project_id`, `group_id` (the events' own group), `message`,
 * `n`) to their texts' counts, in key order (every writer of the counts takes the rows in that order,
 * so none deadlocks another); a statement of its own or the body of a `with` part.
 */
export const addToMessages = (sql: Sql | TxSql, sums: Fragment) => sql`
  insert into event_messages as m (project_id, group_id, hash, message, stored_count)
  select project_id, group_id, md5(message)::uuid, min(message), sum(n) from (${sums}) s
  group by 1, 2, 3
  order by 1, 2, 3
  on conflict (project_id, group_id, hash) do update set stored_count = m.stored_count + excluded.stored_count`;

/** Removes the texts whose stored events are all gone. */
export async function pruneMessages(sql: Sql | TxSql): Promise<void> {
  await sql`delete from event_messages where stored_count = 0`;
}

/**
 * What starting one text's read costs next to reading one event: its ordered read descends the index of
 * every daily partition (about 40: 30 days kept, a week made ahead, the default one) before it merges them.
 */
const TEXT_READ_COST = 40;

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
 * Up to this many matching texts are handed to the newest-first read as a list of their hashes, so it
 * checks each event against a list instead of finding the texts again; past it (a term in very many
 * texts) the read finds them again itself.
 */
export const LISTED_TEXTS = 1000;

export type SearchReadOptions = {
  /** tests: read the page this way, whatever it costs */
  way?: "per-text" | "newest-first";
  /** tests: hand the newest-first read at most this many texts' hashes (default LISTED_TEXTS) */
  listedTexts?: number;
};

/**
 * A raw search with no other filter, over every stored event: the texts whose message holds the term
 * (`pattern`, a LIKE pattern matched without case) give the total, and the page is read one of two
 * ways, whichever reads less:
 *  - per matching text, its newest `limit + offset` events from the hash index, then merged: costs
 *    a start per text (TEXT_READ_COST) and its events up to the reach; cheap for a term in a few texts,
 *    however old or rare their events;
 *  - the project's events newest first, each checked against the matching texts by hash, stopping
 *    once the page is full: costs (limit + offset) × stored ÷ total events; cheap for a common term.
 *    The statement that sums the texts also answers their hashes (up to LISTED_TEXTS), and this read
 *    checks each event against that list instead of finding the texts again.
 */
export async function searchByMessage(
  sql: Sql,
  projectId: string,
  pattern: string,
  f: { limit: number; offset: number },
  columns: PendingQuery<Row[]>,
  opts: SearchReadOptions = {},
): Promise<MessageSearchPage> {
  // the matching texts' rows (a text has one per group that holds it), then each text over its groups
  const matchingRows = sql`
    select t.hash, t.message, t.stored_count from event_messages t
    where t.project_id = ${projectId} and t.message ilike ${pattern} and t.stored_count > 0`;
  const matching = sql`select hash, min(message) as message, sum(stored_count) as stored_count from (${matchingRows}) r group by hash`;
  const listed = opts.listedTexts ?? LISTED_TEXTS;
  const [m] = await sql<{ total: string; texts: number; stored: string; hashes: string | null }[]>`
    select coalesce(sum(t.stored_count), 0)::bigint as total, count(*)::int as texts,
      (select coalesce(sum(stored_count), 0) from error_groups where project_id = ${projectId})::bigint as stored,
      case when count(*) <= ${listed} then array_agg(t.hash)::text end as hashes
    from (${matching}) t`;
  const total = Number(m.total);
  if (total === 0 || f.offset >= total) return { data: [], total };
  const reach = f.limit + f.offset;
  const perText = (opts.way ?? pageWay(m.texts, total, Number(m.stored), reach)) === "per-text";
  // Per text, the texts are found again: they are few when the cost model picks this read (0.1 ms for
  // one), and a list there (an array, estimated at ten rows) doubled the statement's time.
  const data = perText
    ? await sql`
        select ${columns} from (${matching}) t
        cross join lateral (
          select e.* from events e
          where e.project_id = ${projectId} and md5(e.message)::uuid = t.hash and e.message = t.message
          order by e."timestamp" desc, e.id desc limit ${reach}
        ) e
        order by e."timestamp" desc, e.id desc limit ${f.limit} offset ${f.offset}`
    : // offset 0 keeps the newest-first scan a scan of its own, which the match check filters as it
      // streams; it hashes each event's text once, since a nested loop over the matching texts (the
      // planner's choice for a small project) would otherwise hash it again for every text. A listed
      // match is a check against the array of hashes (a nested loop over the texts compared each event
      // with every text: 44,395 comparisons for a 50-row page).
      await sql`
        select ${columns} from (
          select e.*, md5(e.message)::uuid as text_hash from events e
          where e.project_id = ${projectId} order by e."timestamp" desc, e.id desc offset 0
        ) e
        where ${m.hashes === null ? sql`e.text_hash in (select hash from (${matchingRows}) t)` : sql`e.text_hash = any(${m.hashes}::uuid[])`}
        order by e."timestamp" desc, e.id desc limit ${f.limit} offset ${f.offset}`;
  return { data, total };
}
