/**
 * Deferred counters: what reads can wait for, applied off the ingest transaction.
 *
 * An ingest batch (db/events.ts) writes its group rows, events and traces, and appends one row per
 * project to `counter_deltas` with everything else it adds: distinct users per group row and per
 * project, counts per environment and per version, the minute, hour and day rollup cells, the
 * occurrences per game version and hour (every one, throttled or stored: rollup_version_hour) and
 * the error-level ones per minute (rollup_version_minute), and
 * the stored events per group row and text (db/event-messages.ts). The
 * drain deletes pending rows in id order (`returning` them), sums them in SQL and applies the sums
 * with upserts, all in one statement: a drain that fails or rolls back applies nothing and leaves
 * the rows pending, and a committed one has removed exactly what it applied, so nothing applies twice
 * and a crash (of the drainer or of the writer) loses nothing. Every applied quantity is a sum, a set
 * union, a min or a max, so the order of batches does not change the result: once caught up, the
 * counters are exactly what a write in the ingest transaction would have made them.
 *
 * One drain at a time over the whole database (an advisory lock), whatever the number of service
 * instances; each instance runs a `CounterDrainer` that drains shortly after its own writes and on a
 * periodic sweep (rows of a crashed process, of an instance that lost the lock race). What re-keys
 * these counters (merge, unmerge, a group's or a project's delete, a snooze on a number of players)
 * first applies the project's pending rows in its own transaction under the same lock
 * (`applyPendingOf`), so no delta written before it lands on the wrong row after it.
 *
 * Lock order: the drain lock first, then the rows of the counter tables in key order, then the group
 * rows in (project, fingerprint) order, like ingest, which takes no other lock the drain holds.
 */
import { asJson, type Sql, type TxSql } from "./client.js";
import { addToMessages } from "./event-messages.js";
import { observeDrain } from "./metrics.js";
import { log } from "../log/logger.js";

/** A read sees every event committed this long ago or earlier, while the drain keeps up (docs/operations.md). */
export const STALENESS_BOUND_MS = 2000;
/** How long after a write its instance drains (writes meanwhile share the drain). */
export const DRAIN_DELAY_MS = 100;
/** How often every instance drains whatever is pending, written by it or not. */
export const SWEEP_MS = 1000;
/**
 * The pace of drains under load. A drain's cost is mostly per counter cell (a group row's minute,
 * hour and day cells, its environments and versions, its stats windows), and a cell takes every event
 * of its group row that the drain holds: at 1,000 busy issues, drains 100 ms apart wrote nearly a
 * cell per event (docs/benchmarks.md). So the next drain starts no sooner than `DRAIN_SPACING` times
 * the last one's duration after its start (drains busy the database a quarter of the time at most),
 * a wait capped at `DRAIN_INTERVAL_MS`: an event waits at most that plus one drain,
 * inside the staleness bound. Drains of a few milliseconds (a quiet or lightly loaded service) keep
 * their pace of `DRAIN_DELAY_MS` after a write.
 */
export const DRAIN_INTERVAL_MS = 1000;
export const DRAIN_SPACING = 4;
/** Pending rows (batches) one drain statement takes at most. */
export const DRAIN_BATCHES = 500;
/**
 * How long one drain statement should take. A pending row holds one write's batch, from one event
 * to thousands, so the drainer sizes its next drain by how long the last one took: 500 rows of large
 * batches on a busy database took past the statement timeout, and a drain that times out applies
 * nothing, so a fixed size could fall behind for good.
 */
export const DRAIN_TARGET_MS = 500;

/**
 * The rows the next drain takes, from the last one: `n` rows of `limit` applied in `ms` (n null: the
 * lock was taken), or a statement timeout. Shrinks in proportion when a drain ran past the target (to a
 * quarter on a timeout), doubles when a full drain took under half of it; between 1 and `max`.
 */
export function nextDrainLimit(limit: number, max: number, last: { n: number | null; ms: number } | "timeout"): number {
  if (last === "timeout") return Math.max(1, Math.floor(limit / 4));
  if (last.n === null) return limit;
  if (last.ms > DRAIN_TARGET_MS) return Math.max(1, Math.min(limit, Math.floor((limit * DRAIN_TARGET_MS) / last.ms)));
  if (last.n >= limit && last.ms < DRAIN_TARGET_MS / 2) return Math.min(max, limit * 2);
  return limit;
}

const DRAIN_LOCK = "counter-deltas";
const lockKey = (tx: TxSql) => tx`hashtextextended(${DRAIN_LOCK}, 0)`;

/**
 * Waits for the drain lock in `tx`. For what writes rows the drain also writes (retention's texts and
 * stored-row counts): taken before any of them, it keeps the lock order above, where a transaction
 * holding a group row while it waits for a text row the drain holds would deadlock with it.
 */
export async function holdDrainLock(tx: TxSql): Promise<void> {
  await tx`select pg_advisory_xact_lock(${lockKey(tx)})`;
}

/**
 * Waits for the drain lock in `tx` and applies every pending row of `projectId`. For what re-keys
 * the project's counters: call it first in the transaction, before any row lock (the drain holds
 * this lock while it waits for group rows), after the project's merge lock when taking it (the
 * drain never takes that one).
 */
export async function applyPendingOf(tx: TxSql, projectId: string): Promise<void> {
  await holdDrainLock(tx);
  while ((await applyDeltas(tx, DRAIN_BATCHES, projectId)) === DRAIN_BATCHES);
}

/** Waits for the drain lock in `tx` and drops the project's pending rows (the project is being deleted). */
export async function discardPendingOf(tx: TxSql, projectId: string): Promise<void> {
  await holdDrainLock(tx);
  await tx`delete from counter_deltas where project_id = ${projectId}`;
}

/**
 * One drain: in one transaction, takes the drain lock if free and applies up to `limit` pending
 * rows. Returns how many it applied, or null when another drain holds the lock.
 */
export async function drainOnce(sql: Sql, limit = DRAIN_BATCHES): Promise<number | null> {
  return sql.begin(async (tx) => {
    const [{ locked }] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${lockKey(tx)}) as locked`;
    if (!locked) return null;
    return applyDeltas(tx, limit);
  });
}

/** Rows still pending, all or the oldest's age in ms (by the database clock): for tests and health. */
export async function pendingDeltas(sql: Sql | TxSql): Promise<{ rows: number; oldestMs: number | null }> {
  const [r] = await sql<{ rows: number; oldest: number | null }[]>`
    select count(*)::int as rows, (extract(epoch from now() - min(created_at)) * 1000)::float8 as oldest from counter_deltas`;
  return { rows: r.rows, oldestMs: r.oldest };
}

/**
 * Deletes up to `limit` pending rows (of one project, or all) in id order and applies their sums;
 * returns how many rows it took. The caller holds the drain lock.
 *
 * Per group row: the users new to it (group_users) raise its user_count; for a merged issue, the
 * users new to all its members raise the issue's (the family written with the delta: merges apply
 * pending rows first, so it is still the family), and the member row holding the issue's own
 * fingerprint, whose users are kept under the issue's id, by the users new to that id. A group snoozed until N more players reopens when
 * the N-th arrives, so now at drain time. project_users keeps each user's latest occurrence (and the
 * name of the latest occurrence that carried one). Environments, versions, texts and rollup cells add up,
 * and the minute cells are added to the kept stats windows (db/migrations/104_stats_windows_by_drain.sql).
 */
async function applyDeltas(tx: TxSql, limit: number, projectId?: string): Promise<number> {
  // the planner cannot know how small the json inputs are: its estimates make the statement look
  // costly enough to compile (JIT), which takes far longer than running it. It is planned afresh each
  // time: a generic plan kept from when the tables were nearly empty (and not replaced while they have
  // no statistics) looked group rows up by project alone, a read of the whole project per group
  // (docs/architecture.md, "Deferred counters"). The statement adds its cells to the stats windows
  // itself, so the rollups' triggers stand aside for it (migration 104).
  await tx`select set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true),
    set_config('monitor.drain_applies_windows', 'on', true)`;
  const usersOver = tx`(g.status = 'ignored' and g.snooze_users <= g.user_count + p.users)`;
  // occurrences per environment and per version: [key, count, first ms, last ms] spans of each input row
  const spans = (table: "group_environments" | "group_versions", key: "environment" | "version", field: "e" | "v") => tx`
      insert into ${tx(table)} as s (project_id, group_id, ${tx(key)}, count, first_seen, last_seen)
      select i.p, i.id, x->>0, sum((x->>1)::bigint), min(to_timestamp((x->>2)::float8 / 1000)), max(to_timestamp((x->>3)::float8 / 1000))
      from input i cross join lateral jsonb_array_elements(i.${tx(field)}) x
      group by 1, 2, 3
      order by 1, 2, 3
      on conflict (project_id, group_id, ${tx(key)}) do update set
        count = s.count + excluded.count,
        first_seen = least(s.first_seen, excluded.first_seen),
        last_seen = greatest(s.last_seen, excluded.last_seen)`;
  const [{ n, projects, legacy }] = await tx<{ n: number; projects: string[] | null; legacy: unknown[] | null }[]>`
    with taken as (
      delete from counter_deltas d
      where d.id in (
        select id from counter_deltas ${projectId ? tx`where project_id = ${projectId}` : tx``} order by id limit ${limit})
      -- parsed once here: every -> and ->> on a json value parses its text again, and the statement
      -- reads each payload's parts and each element's fields separately (a sixth less time per drain)
      returning d.project_id, d.payload::jsonb as payload
    ), input as materialized (
      -- the project is the pending row's: its payload does not repeat it per group row or user
      select taken.project_id as p, t.* from taken cross join lateral jsonb_to_recordset(taken.payload->'r')
        as t(id uuid, g uuid, f uuid[], u bigint[], e jsonb, v jsonb, m jsonb, w jsonb)
    ), pairs as (
      select distinct i.p as project_id, i.g as group_id, i.id as origin_id, i.f as family, x.user_id
      from input i cross join lateral unnest(i.u) as x(user_id)
    ), new_pairs as (
      -- a plain insert of the pairs not stored yet: only the drain inserts group_users, one drain at
      -- a time under the drain lock taken before this statement's snapshot, so none can appear
      -- meanwhile. ON CONFLICT would insert each row speculatively (a heap record more and a probe
      -- per row), and nearly every pair of a batch is new to its group
      insert into group_users (project_id, group_id, user_id)
      select distinct p.project_id, p.origin_id, p.user_id from pairs p
      where not exists (
        select 1 from group_users x where x.project_id = p.project_id and x.group_id = p.origin_id and x.user_id = p.user_id)
      order by 1, 2, 3
      returning project_id, group_id as origin_id, user_id
    ), new_users as (
      -- per group an event lands in: users new to it; per member row: users new to that member
      select i.project_id, i.group_id as id, count(distinct np.user_id) filter (
          where i.family is null or not exists (
            select 1 from group_users x
            where x.project_id = i.project_id and x.group_id = any(i.family) and x.user_id = np.user_id)) as n
      from new_pairs np
      join (select distinct project_id, group_id, origin_id, family from pairs) i
        on i.project_id = np.project_id and i.origin_id = np.origin_id
      group by 1, 2
      union all
      select np.project_id, np.origin_id, count(*) from new_pairs np
      where exists (select 1 from pairs i where i.project_id = np.project_id and i.origin_id = np.origin_id and i.group_id <> i.origin_id)
      group by 1, 2
      union all
      -- the member holding a merged issue's own fingerprint keeps its users under the issue's id
      -- (db/merge.ts): users new there are new to that member row
      select m.project_id, m.id, count(*) from new_pairs np
      join (select distinct project_id, origin_id from pairs where family is not null and group_id = origin_id) i
        on i.project_id = np.project_id and i.origin_id = np.origin_id
      join error_groups m on m.project_id = i.project_id and m.merged_into = i.origin_id and m.merged_own
      group by 1, 2
    ), seen_users as (
      -- only the users that are new or whose row changes: a conflicting row is locked (a WAL record
      -- and a dirtied page) even when the update's condition then leaves it alone, and most users of
      -- a batch were seen within the minute. The drain is the only writer of project_users (a
      -- project's delete holds the drain lock), so what this reads stays true until the upsert
      insert into project_users as pu (project_id, user_id, last_seen, player_name)
      select s.project_id, s.user_id, s.last_seen, s.player_name
      from (
        select project_id, user_id, max(last_seen) as last_seen,
          (array_agg(player_name order by last_seen desc) filter (where player_name is not null))[1] as player_name
        from (
          select taken.project_id, (x->>0)::bigint as user_id, to_timestamp((x->>1)::float8 / 1000) as last_seen, x->>2 as player_name
          from taken cross join lateral jsonb_array_elements(taken.payload->'s') x
        ) s
        group by 1, 2
      ) s
      left join project_users o on o.project_id = s.project_id and o.user_id = s.user_id
      where o.user_id is null or o.last_seen < s.last_seen - interval '1 minute'
        or (s.player_name is not null and o.player_name is distinct from s.player_name)
      order by 1, 2
      on conflict (project_id, user_id) do update set
        last_seen = greatest(pu.last_seen, excluded.last_seen),
        player_name = coalesce(excluded.player_name, pu.player_name)
      where pu.last_seen < excluded.last_seen - interval '1 minute'
        or (excluded.player_name is not null and pu.player_name is distinct from excluded.player_name)
    ), texts as (${addToMessages(tx, tx`
      select i.p as project_id, i.id as group_id, x->>0 as message, (x->>1)::bigint as n
      from input i cross join lateral jsonb_array_elements(i.w) x`)}
    ), by_environment as (${spans("group_environments", "environment", "e")}
    ), by_version as (${spans("group_versions", "version", "v")}
    ), minutes as (
      -- many batches of one minute and group collapse into one cell: where the drain saves its writes
      select i.p as project_id, to_timestamp((x->>0)::float8 / 1000) as bucket, i.g as group_id, x->>1 as level,
        i.id as origin_id, sum((x->>2)::bigint) as count
      from input i cross join lateral jsonb_array_elements(i.m) x
      group by 1, 2, 3, 4, 5
    ), by_minute as (
      insert into rollup_minute as r (project_id, bucket, group_id, level, origin_id, count)
      select project_id, bucket, group_id, level, origin_id, count from minutes
      order by 1, 2, 3, 4, 5
      on conflict (project_id, bucket, group_id, level, origin_id) do update set count = r.count + excluded.count
    ), by_hour as (
      insert into rollup_hour as r (project_id, bucket, group_id, level, origin_id, count)
      select project_id, date_trunc('hour', bucket), group_id, level, origin_id, sum(count) from minutes
      group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
      on conflict (project_id, bucket, group_id, level, origin_id) do update set count = r.count + excluded.count
    ), by_day as (
      insert into rollup_day as r (project_id, bucket, group_id, level, origin_id, count)
      select project_id, date_trunc('day', bucket, 'UTC'), group_id, level, origin_id, sum(count) from minutes
      group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
      on conflict (project_id, bucket, group_id, level, origin_id) do update set count = r.count + excluded.count
    ), version_cells as (
      -- every occurrence per game version, environment, minute (ms) and level, throttled ones included
      select taken.project_id, x->>0 as version, x->>1 as environment, (x->>2)::bigint as at, x->>3 as level, (x->>4)::bigint as count
      from taken cross join lateral jsonb_array_elements(taken.payload->'vm') x
    ), by_version_hour as (
      -- by hour (migration 120): the release health error rate's numerator and its hourly series;
      -- rows pending from before migration 146 carry their cells by hour already (h)
      insert into rollup_version_hour as r (project_id, version, environment, bucket, level, count)
      select project_id, version, environment, to_timestamp(at / 3600000 * 3600), level, sum(count) from (
        select project_id, version, environment, at, level, count from version_cells
        union all
        select taken.project_id, x->>0, x->>1, (x->>2)::bigint, x->>3, (x->>4)::bigint
        from taken cross join lateral jsonb_array_elements(taken.payload->'h') x
      ) c
      group by 1, 2, 3, 4, 5
      order by 1, 2, 4, 3, 5
      on conflict (project_id, version, bucket, environment, level) do update set count = r.count + excluded.count
    ), by_version_minute as (
      -- error-level ones by minute (migration 146): what the error-rate alert divides over its window
      insert into rollup_version_minute as r (project_id, version, environment, bucket, count)
      select project_id, version, environment, to_timestamp(at / 1000), sum(count) from version_cells
      where level = 'error'
      group by 1, 2, 3, 4
      order by 1, 2, 4, 3
      on conflict (project_id, version, bucket, environment) do update set count = r.count + excluded.count
    ), windows as (
      -- all four windows at once from the minute cells: a 7d or 30d window starts on the hour, so a
      -- minute cell is in it iff its hour cell is
      select stats_window_apply(cells, array['1h', '24h', '7d', '30d']) from (
        select array_agg((project_id, group_id, level, bucket, count)::stats_window_cell) as cells from minutes) c
      where cells is not null
    ), per_row as (
      select project_id, id, sum(n) as users from new_users group by 1, 2 having sum(n) > 0
    ), locked as (
      -- in ingest's order (project, fingerprint): the drain and ingest cannot deadlock on group rows
      select g.project_id, g.id, p.users from error_groups g
      join per_row p on g.project_id = p.project_id and g.id = p.id
      order by g.project_id, g.fingerprint
      for update of g
    ), counted as (
      update error_groups g set
        user_count = g.user_count + p.users,
        -- a group snoozed until N more players reopens when the N-th new player's event is applied
        status = case when ${usersOver} then 'open' else g.status end,
        snooze_until = case when ${usersOver} then null else g.snooze_until end,
        snooze_count = case when ${usersOver} then null else g.snooze_count end,
        snooze_users = case when ${usersOver} then null else g.snooze_users end
      from locked p
      where g.project_id = p.project_id and g.id = p.id
    )
    select (select count(*)::int from taken) as n, (select array_agg(distinct project_id) from minutes) as projects,
      (select count(*) from windows) as windows,
      -- a pending row written by an instance of a version before migration 106 carries its texts per project
      (select json_agg(json_build_object('p', taken.project_id, 'm', x->>0, 'n', (x->>1)::bigint))
        from taken cross join lateral jsonb_array_elements(taken.payload->'t') x) as legacy`;
  // each of those texts goes to the own group of its newest stored event: a statement of its own, so
  // a drain plans no read of the events (and takes no lock on their partitions) unless it has some.
  // Only the drain and what holds its lock write the texts, so their order here cannot deadlock.
  if (legacy) {
    await tx`${addToMessages(tx, tx`
      select l.p as project_id, own.group_id, l.m as message, l.n
      from json_to_recordset(${asJson(tx, legacy)}) as l(p uuid, m text, n bigint)
      cross join lateral (
        select coalesce(e.origin_group_id, e.group_id) as group_id from events e
        where e.project_id = l.p and md5(e.message)::uuid = md5(l.m)::uuid and e.message = l.m
        order by e."timestamp" desc, e.id desc limit 1
      ) own`)}`;
  }
  await tx`select set_config('monitor.drain_applies_windows', 'off', true)`;
  // as the triggers do after a write: the windows of these projects that fell a unit behind move on
  if (projects) {
    await tx`
      select stats_window_move(project_id, timeframe) from stats_window_marks
      where project_id = any(${projects}::uuid[]) and since < stats_window_target(timeframe)
      order by project_id, timeframe`;
  }
  return n;
}

type Waiter = { ids: string[]; fn: () => void };

/**
 * Drains in this process: `DRAIN_DELAY_MS` after a write (`kick`) and every `SWEEP_MS` whatever was
 * written, but under load at the pace `DRAIN_SPACING` sets; again at once while a drain took a full
 * load (a backlog), and again later when another instance held the lock.
 * `whenApplied` runs a callback once given pending rows are gone (applied here or by another
 * instance): the alert trigger waits for it, so rules on counts and players read applied figures.
 * Errors are logged; the rows stay pending and the next drain applies them.
 */
export class CounterDrainer {
  private timer: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private waiters: Waiter[] = [];
  private stopped = false;
  private readonly maxLimit: number;
  private limit: number;
  /** performance.now() of the last drain's start, and how long it took */
  private lastStart = -Infinity;
  private lastMs = 0;

  constructor(
    private readonly sql: Sql,
    private readonly opts: { delayMs?: number; sweepMs?: number; intervalMs?: number; spacing?: number; batches?: number } = {},
  ) {
    this.maxLimit = this.limit = opts.batches ?? DRAIN_BATCHES;
  }

  start(): this {
    this.stopped = false;
    this.sweep = setInterval(() => this.schedule(0), this.opts.sweepMs ?? SWEEP_MS);
    this.sweep.unref();
    // rows left by a process that stopped before draining them
    this.kick();
    return this;
  }

  /** Drains soon (writes within the delay, or within the interval under load, share one drain). */
  kick(): void {
    this.schedule(this.opts.delayMs ?? DRAIN_DELAY_MS);
  }

  /** Drains `delayMs` from now, or later as the pace under load asks (see `DRAIN_SPACING`). */
  private schedule(delayMs: number): void {
    if (this.timer || this.stopped) return;
    const gap = Math.min(this.opts.intervalMs ?? DRAIN_INTERVAL_MS, (this.opts.spacing ?? DRAIN_SPACING) * this.lastMs);
    const wait = Math.max(delayMs, this.lastStart + gap - performance.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, wait);
    this.timer.unref();
  }

  /** Runs `fn` once the pending rows `ids` have been applied. */
  whenApplied(ids: string[], fn: () => void): void {
    if (ids.length === 0) return fn();
    this.waiters.push({ ids, fn });
    // a database that does not drain must not hold memory: past this, callbacks run unapplied
    if (this.waiters.length > 10_000) this.release(this.waiters.splice(0, this.waiters.length - 10_000));
    this.kick();
  }

  /** Stops the timers and waits for a drain in progress (shutdown; what is pending stays for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweep) clearInterval(this.sweep);
    this.timer = this.sweep = null;
    await this.running;
  }

  /** Drains until nothing is left that this process can see (for tests and shutdown). */
  async drainNow(): Promise<void> {
    for (;;) {
      await this.running;
      const { n, limit } = await this.step();
      if (n === null) await new Promise((r) => setTimeout(r, 10));
      else if (n < limit) break;
    }
    await this.settleWaiters();
  }

  /** One drain of the current size; sizes the next one by how long it took (nextDrainLimit). */
  private async step(): Promise<{ n: number | null; limit: number }> {
    const limit = this.limit;
    const started = (this.lastStart = performance.now());
    try {
      const n = await drainOnce(this.sql, limit);
      const ms = (this.lastMs = performance.now() - started);
      observeDrain(n, ms);
      if (n) log.debug({ rows: n, limit, ms: Math.round(ms) }, `[counters] drain applied ${n} pending rows`);
      this.limit = nextDrainLimit(limit, this.maxLimit, { n, ms });
      return { n, limit };
    } catch (err) {
      if ((err as { code?: string }).code === "57014") this.limit = nextDrainLimit(limit, this.maxLimit, "timeout");
      throw err;
    }
  }

  private run(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop()
      .catch((err) => {
        // the pool was closed under it (shutdown): what is pending waits for the next start
        const code = (err as { code?: string }).code;
        if (this.stopped || code === "CONNECTION_ENDED" || code === "CONNECTION_DESTROYED") return;
        // a drain that timed out is tried again at once, smaller (see step)
        if (code === "57014") this.again = true;
        log.error(`[counters] drain failed, pending rows stay for the next one: ${(err as Error).message}`);
      })
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async loop(): Promise<void> {
    for (;;) {
      this.again = false;
      const { n, limit } = await this.step();
      // another instance is draining: what this one wrote since that drain began is not in it
      if (n === null) {
        this.again = true;
        break;
      }
      if (n < limit) break;
    }
    await this.settleWaiters();
  }

  private async settleWaiters(): Promise<void> {
    if (this.waiters.length === 0) return;
    const waiting = this.waiters;
    const ids = [...new Set(waiting.flatMap((w) => w.ids))];
    const left = new Set(
      (await this.sql<{ id: string }[]>`select id::text from counter_deltas where id = any(${ids}::bigint[])`).map((r) => r.id),
    );
    const done = waiting.filter((w) => w.ids.every((id) => !left.has(id)));
    this.waiters = this.waiters.filter((w) => !done.includes(w));
    this.release(done);
    if (this.waiters.length > 0) this.again = true;
  }

  private release(done: Waiter[]): void {
    for (const w of done) {
      try {
        w.fn();
      } catch (err) {
        log.error(`[counters] callback failed: ${(err as Error).message}`);
      }
    }
  }
}
