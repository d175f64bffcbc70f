import type { Sql } from "./client.js";

export type Hit = { count: number; windowStart: Date; retryAfterSeconds: number };

/**
 * Counts one hit on `key` in the current fixed window, atomically across instances: the upsert
 * restarts the count when the stored window is over. Returns the count including this hit.
 */
export async function hit(sql: Sql, key: string, windowSeconds: number): Promise<Hit> {
  const [r] = await sql<{ count: number; window_start: Date; retry_after: number }[]>`
    with w as (
      select to_timestamp(floor(extract(epoch from now()) / ${windowSeconds}) * ${windowSeconds}) as start
    )
    insert into rate_limits as rl (key, window_start, count)
    select ${key}, w.start, 1 from w
    on conflict (key) do update set
      count = case when rl.window_start = excluded.window_start then rl.count + 1 else 1 end,
      window_start = excluded.window_start
    returning count, window_start,
      ceil(extract(epoch from (window_start + make_interval(secs => ${windowSeconds}) - now())))::int as retry_after`;
  return { count: r.count, windowStart: r.window_start, retryAfterSeconds: Math.max(1, r.retry_after) };
}

export type PacedHit = { allowed: true; count: number; windowStart: Date } | { allowed: false; retryAfterSeconds: number };

/**
 * Like `hit`, with growing delays: once `free` attempts are counted in the window, the next one is
 * counted only `2^(count - free)` seconds (at most `capSeconds`) after the last; one that comes
 * sooner is not counted and answers how long to wait. Decided in one statement, so parallel
 * attempts cannot slip through together.
 */
export async function pacedHit(sql: Sql, key: string, windowSeconds: number, free: number, capSeconds: number): Promise<PacedHit> {
  const delay = sql`make_interval(secs => least(${capSeconds}::float8, power(2, rl.count - ${free})))`;
  const [r] = await sql<{ count: number; window_start: Date }[]>`
    with w as (
      select to_timestamp(floor(extract(epoch from now()) / ${windowSeconds}) * ${windowSeconds}) as start
    )
    insert into rate_limits as rl (key, window_start, count, last_at)
    select ${key}, w.start, 1, now() from w
    on conflict (key) do update set
      count = case when rl.window_start = excluded.window_start then rl.count + 1 else 1 end,
      window_start = excluded.window_start,
      last_at = excluded.last_at
    where not (rl.window_start = excluded.window_start and rl.count >= ${free} and rl.last_at + ${delay} > now())
    returning count, window_start`;
  if (r) return { allowed: true, count: r.count, windowStart: r.window_start };
  const [w] = await sql<{ wait: number }[]>`
    select ceil(extract(epoch from (rl.last_at + ${delay} - now())))::int as wait
    from rate_limits rl where key = ${key}`;
  return { allowed: false, retryAfterSeconds: Math.max(1, w?.wait ?? 1) };
}

/** Forgets a key (a sign-in that proved the password clears its own pacing). */
export async function clearRateLimit(sql: Sql, key: string): Promise<void> {
  await sql`delete from rate_limits where key = ${key}`;
}

/** Takes back one hit of the given window (a login that turned out to be right). */
export async function unhit(sql: Sql, key: string, windowStart: Date): Promise<void> {
  await sql`update rate_limits set count = count - 1 where key = ${key} and window_start = ${windowStart} and count > 0`;
}

/** Forgets counters whose window ended long ago. */
export async function pruneRateLimits(sql: Sql, olderThanSeconds = 86_400): Promise<number> {
  const r = await sql`delete from rate_limits where window_start < now() - make_interval(secs => ${olderThanSeconds})`;
  return r.count;
}
