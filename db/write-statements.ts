/**
 * The statements of a batch write (db/events.ts) after the merge lock and the group resolution: the
 * aliases of upgraded fingerprints, the group upsert that decides the throttle, and one statement for
 * the events, traces and the pending row of deferred counters (db/counter-deltas.ts). Each locks its
 * rows in key order.
 */
import { asJson, type TxSql } from "./client.js";
import { IDENTITY_CAP } from "./identities.js";
import { FRAMES_MAX } from "../app/ingest/frames.server.js";
import { iso, type BatchWrites, type GroupAgg, type GroupCounts } from "./write-aggregate.js";
import type { Resolved } from "./write-resolve.js";
import type { ThrottleRule, TouchedGroup, UpsertedGroup } from "./write-types.js";

/**
 * Reads the resolved fingerprints; records as aliases those that joined a group through the
 * previous grouping version's fingerprint. No statement when there are none.
 */
export async function insertAliases(tx: TxSql, res: Map<string, Resolved>): Promise<void> {
  const aliases = [...res.values()]
    .filter((r) => r.via === 3)
    .map((r) => ({ project_id: r.project_id, fingerprint: r.fp, group_id: r.row_id }))
    .sort((a, b) => (a.project_id + a.fingerprint < b.project_id + b.fingerprint ? -1 : 1));
  if (aliases.length > 0) {
    await tx`
      insert into group_aliases (project_id, fingerprint, group_id)
      select project_id, fingerprint, group_id
      from json_to_recordset(${asJson(tx, aliases)}::json) as t(project_id uuid, fingerprint text, group_id uuid)
      order by project_id, fingerprint
      on conflict do nothing`;
  }
}

/**
 * The row's kept names and ids followed by the batch's new ones, without repeats, at most
 * IDENTITY_CAP (db/identities.ts): the first ones stay.
 */
const joinedIdentities = (tx: TxSql) => tx`nullif(array(
  select x from unnest(coalesce(g.identities, '{}') || coalesce(excluded.identities, '{}')) with ordinality u(x, o)
  group by x order by min(o) limit ${IDENTITY_CAP}), '{}')`;

/**
 * The group upsert: reads each group row's figures and counts (db/write-aggregate.ts); inserts or adds
 * them in project and fingerprint order, decides each row's throttle on the locked row, and returns
 * the rows (ids, status, receive time, untraced events let in).
 *
 * `n` (untraced events, at most the limit: no more can be let in) and `traced` reach the conflict
 * branch through the proposed row: its throttle_times hold n entries and its stored_count is
 * traced + n. A member of a merged issue stores nothing itself: its events are stored in the
 * issue, whose stored_count gets the member's kept events in the second statement. A row the
 * upsert creates starts with no users: they are counted when the batch's deferred counters are
 * applied (db/counter-deltas.ts).
 */
export async function upsertGroups(
  tx: TxSql,
  groups: GroupAgg[],
  counts: Map<string, GroupCounts>,
  throttle: ThrottleRule,
  groupingVersion: number,
): Promise<UpsertedGroup[]> {
  // a snoozed (ignored) group reopens on the first occurrence past its time or its occurrence target
  const snoozeOver = tx`(g.status = 'ignored' and (g.snooze_until <= now() or g.snooze_count <= g.count + excluded.count))`;
  const window = tx`make_interval(secs => ${throttle.windowSeconds})`;
  // the first version is the version of the earliest event that carried one, whatever the arrival order
  const earlierVersion = tx`(excluded.first_version is not null and (g.first_version is null or excluded.first_version_at < g.first_version_at))`;
  const upserted = await tx<UpsertedGroup[]>`
    insert into error_groups as g
      (project_id, fingerprint, message, level, count, first_seen, last_seen, culprit, environment, first_version, last_version,
       first_version_at, grouping_version, throttle_times, received_at, stored_count, user_count, client_only, identities, frames,
       grouping_location, grouping_template)
    select t.project_id, t.fingerprint, t.message, t.level, t.count, to_timestamp(t.first_seen / 1000), to_timestamp(t.last_seen / 1000), t.culprit, t.environment,
      t.first_version, t.last_version, to_timestamp(t.first_version_at / 1000), ${groupingVersion}, array_fill(c.at, array[t.n]), c.at, t.traced + t.n, 0,
      t.client_only, nullif(array(select jsonb_array_elements_text(t.identities)), '{}'), t.frames,
      t.grouping_location, t.grouping_template
    from json_to_recordset(${asJson(
      tx,
      // one literal of a fixed shape per row (a spread of the aggregate, then its times as text,
      // was most of the Node time of a small transaction's upsert); times go as whole ms since epoch
      // (as a Date truncates them), which to_timestamp turns back exactly (it rounds to the microsecond)
      groups.map((g) => {
        const c = counts.get(`${g.project_id}\u0000${g.fingerprint}`)!;
        return {
          project_id: g.project_id, fingerprint: g.fingerprint, message: g.message, level: g.level, count: g.count,
          first_seen: Math.trunc(g.first_seen), last_seen: Math.trunc(g.last_seen), culprit: g.culprit, environment: g.environment,
          first_version: g.first_version, last_version: g.last_version,
          first_version_at: g.first_version === null ? null : Math.trunc(g.first_version_at),
          n: Math.min(c.untraced, throttle.limit), traced: c.traced, client_only: g.client_only, identities: g.identities,
          frames: g.frames.join("\n"), grouping_location: g.grouping_location, grouping_template: g.grouping_template,
        };
      }),
    )}::json)
      as t(project_id uuid, fingerprint text, message text, level text, count bigint,
           first_seen float8, last_seen float8, culprit text, environment text, first_version text, last_version text,
           first_version_at float8, n int, traced int, client_only boolean, identities jsonb, frames text,
           grouping_location text, grouping_template text)
    cross join lateral (select clock_timestamp() as at, t.fingerprint offset 0) c
    order by t.project_id, t.fingerprint
    on conflict (project_id, fingerprint) do update set
      count = g.count + excluded.count,
      first_seen = least(g.first_seen, excluded.first_seen),
      last_seen = greatest(g.last_seen, excluded.last_seen),
      environment = case when excluded.last_seen >= g.last_seen then excluded.environment else g.environment end,
      level = case when level_rank(excluded.level) > level_rank(g.level) then excluded.level else g.level end,
      culprit = coalesce(g.culprit, excluded.culprit),
      -- who the shown text names: a row's message never changes after its insert, its culprit is set once
      identities = case when g.culprit is null and excluded.culprit is not null then ${joinedIdentities(tx)} else g.identities end,
      client_only = g.client_only and excluded.client_only,
      -- the frames issue search matches (app/ingest/frames.server.ts): new ones are added up to the cap.
      -- Mostly they are known already and the row is left as it was, so the update stays HOT. A row
      -- still to be filled from its stored events (null: the job in jobs/group-frames.ts) stays null.
      frames = case
        when g.frames is null or excluded.frames = '' or g.frames = excluded.frames
          or string_to_array(excluded.frames, E'\n') <@ string_to_array(g.frames, E'\n')
          or cardinality(string_to_array(g.frames, E'\n')) >= ${FRAMES_MAX} then g.frames
        else (select string_agg(u.f, E'\n' order by u.o) from (
          select f, min(o) as o from unnest(string_to_array(g.frames || E'\n' || excluded.frames, E'\n')) with ordinality as x(f, o)
          where f <> '' group by f order by min(o) limit ${FRAMES_MAX}) u)
      end,
      first_version = case when ${earlierVersion} then excluded.first_version else g.first_version end,
      first_version_at = case when ${earlierVersion} then excluded.first_version_at else g.first_version_at end,
      last_version = case when excluded.last_version is not null and (g.last_version is null or excluded.last_seen >= g.last_seen)
        then excluded.last_version else g.last_version end,
      -- a member of a merged issue keeps its status: the issue it is merged into has the live one
      status = case when g.merged_into is null and (g.status = 'resolved' or ${snoozeOver}) then 'open' else g.status end,
      regressed_at = case when g.status = 'resolved' and g.merged_into is null then now() else g.regressed_at end,
      regressed_version = case when g.status = 'resolved' and g.merged_into is null then excluded.last_version else g.regressed_version end,
      resolved_at = case when g.status = 'resolved' and g.merged_into is null then null else g.resolved_at end,
      snooze_until = case when ${snoozeOver} then null else g.snooze_until end,
      snooze_count = case when ${snoozeOver} then null else g.snooze_count end,
      snooze_users = case when ${snoozeOver} then null else g.snooze_users end,
      -- the throttle (see writeEvents, db/events.ts): the clock is read per row (the subquery names the
      -- row, so it runs again for each one) once its lock is granted
      (throttle_times, received_at, stored_count) = (
        select case when k.kept = 0 then g.throttle_times else g.throttle_times[w.old + 1:] || array_fill(c.at, array[k.kept]) end, c.at,
          g.stored_count + excluded.stored_count - cardinality(excluded.throttle_times) + case when g.merged_into is null then k.kept else 0 end
        from (select clock_timestamp() as at, g.id offset 0) c
        -- the times are in ascending order: those up to the window's start are a prefix (binary search)
        cross join lateral (select width_bucket(c.at - ${window}, g.throttle_times) as old) w
        cross join lateral (
          select least(cardinality(excluded.throttle_times), greatest(0, ${throttle.limit} - (cardinality(g.throttle_times) - w.old))) as kept) k)
    returning project_id, fingerprint, id, (xmax = 0) as created,
      coalesce(regressed_at = now(), false) as regressed, status, merged_into, received_at::text as received,
      cardinality(throttle_times) - width_bucket(received_at - interval '1 microsecond', throttle_times) as kept`;
  return upserted;
}

/** Reads the upserted rows; returns the groups the caller sees as touched (merged members left out). */
export const touchedGroups = (upserted: UpsertedGroup[]): TouchedGroup[] =>
  upserted.filter((g) => g.merged_into == null).map(({ merged_into: _, received: _r, kept: _k, ...g }) => g);

/**
 * Reads the batch's writes (db/write-aggregate.ts keepAndAggregate) and writes them; returns the ids
 * of the pending counter rows it appended (db/counter-deltas.ts applies them).
 *
 * One statement, after the group upsert's locks: the kept events with their origin row's receive
 * time, the traces (locked in key order), one pending row per project with the counters reads can
 * wait for (distinct users, environments, versions, rollup cells), and the stored_count of a merged
 * issue that stored events kept by a member's throttle (its row is already locked by the upsert).
 * The events, traces and stored-count parts are left out of the statement when the batch has none
 * (all throttled, no trace ids: the usual small batch of an error storm); even empty, starting them
 * costs the server ~170 µs per transaction (bench:write).
 */
export async function writeEventsAndCounters(tx: TxSql, { deltas, moved, events, traces }: BatchWrites): Promise<string[]> {
  // one parameter per project's payload, stored as it arrives: the server checks the JSON once. A
  // single array of them, split in SQL, was parsed four times over (the array, its elements, and
  // each element's two fields)
  const pending = deltas.reduce<ReturnType<TxSql> | null>(
    (list, d) => (list ? tx`${list}, (${d.p}::uuid, ${asJson(tx, d.d)})` : tx`(${d.p}::uuid, ${asJson(tx, d.d)})`),
    null,
  );
  const rows = await tx<{ id: string }[]>`
    with deltas as (
      ${pending ? tx`insert into counter_deltas (project_id, payload) values ${pending} returning id` : tx`select null::bigint as id where false`}
    )${events.length === 0 ? tx`` : tx`, stored as (
      insert into events (project_id, group_id, origin_group_id, message, level, stack_trace, user_id, player_name, trace_id,
        job_id, place_id, game_version, environment, context, tags, count, "timestamp", received_at, breadcrumbs, event_id)
      select project_id, group_id, origin_id, message, level, stack_trace, user_id, player_name, trace_id,
        job_id, place_id, game_version, environment, context,
        case when tags is null then null else array(select jsonb_array_elements_text(tags)) end,
        count, ts, received, breadcrumbs, event_id
      from json_to_recordset(${asJson(tx, events)}::json) as t(
        project_id uuid, group_id uuid, origin_id uuid, message text, level text, stack_trace text,
        user_id bigint, player_name text, trace_id uuid, job_id text, place_id bigint, game_version text, environment text,
        context jsonb, tags jsonb, count int, ts timestamptz, received timestamptz, breadcrumbs jsonb, event_id uuid)
    )`}${traces.size === 0 ? tx`` : tx`, traced as (
      insert into traces as tr (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
      select project_id, trace_id, first, last, n, array(select distinct x from unnest(group_ids) x order by x)
      from json_to_recordset(${asJson(tx, [...traces.values()].map((t) => ({ ...t, first: iso(t.first), last: iso(t.last), group_ids: [...t.groups], groups: undefined })))}::json)
        as t(project_id uuid, trace_id uuid, first timestamptz, last timestamptz, n int, group_ids uuid[])
      order by 1, 2
      on conflict (project_id, trace_id) do update set
        first_seen = least(tr.first_seen, excluded.first_seen),
        last_seen = greatest(tr.last_seen, excluded.last_seen),
        event_count = tr.event_count + excluded.event_count,
        group_ids = array(select distinct x from unnest(tr.group_ids || excluded.group_ids) x order by x)
    )`}${moved.length === 0 ? tx`` : tx`, moved as (
      update error_groups g set stored_count = g.stored_count + t.s
      from json_to_recordset(${asJson(tx, moved)}::json) as t(p uuid, id uuid, s int)
      where g.project_id = t.p and g.id = t.id
    )`}
    select id::text from deltas`;
  return rows.map((r) => r.id);
}
