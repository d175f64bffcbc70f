/**
 * Node's share of a batch write (db/events.ts): the figures computed from the rows. Before the group
 * upsert, each group row's counters and the inputs of its throttle; after it, which events are kept
 * and the per-key aggregates (users, environments, versions, traces, rollup cells) that the last
 * statement writes. Nothing here talks to the database.
 */
import { addEntries, FRAMES_MAX } from "../app/ingest/frames.server.js";
import { identitiesIn, joinIdentities } from "./identities.js";
import type { GroupKey, Slot } from "./write-resolve.js";
import type { EventRow, Level, UpsertedGroup } from "./write-types.js";

const RANK: Record<Level, number> = { error: 3, warn: 2, info: 1 };
/** When an event happened for its issue's figures: its timestamp, not before the retention window. */
const seenAt = (e: EventRow) => (e.notBefore !== undefined && e.timestamp < e.notBefore ? e.notBefore : e.timestamp);

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Whether an event was reported by a game client (relayed by the Roblox SDK): tagged `origin:client`,
 * or `client` as SDK versions before that tag sent it. A client may be an exploiter, so its text is
 * not trusted (alert rules can leave such issues out).
 */
export const isClientOrigin = (tags: string[] | null) => tags !== null && (tags.includes("origin:client") || tags.includes("client"));

/** One group row's figures from the batch, as the group upsert inserts or adds them. */
export type GroupAgg = {
  project_id: string;
  fingerprint: string;
  message: string;
  level: Level;
  count: number;
  first_seen: number;
  last_seen: number;
  culprit: string | null;
  environment: string;
  /** game version of the earliest and of the latest event that carried one */
  first_version: string | null;
  last_version: string | null;
  first_version_at: number;
  last_version_at: number;
  /** every event of the batch in this group was reported by a game client */
  client_only: boolean;
  /**
   * who the events whose text the row shows name, as far as that text holds them: the batch's first
   * event (whose message a new row takes) and its first event with a culprit (db/identities.ts)
   */
  identities: string[];
  /** the distinct frames of the batch's events, first events first, at most FRAMES_MAX (issue search) */
  frames: string[];
  /** the first event's grouping location and template (a new row keeps them; '' when not grouped by default) */
  grouping_location: string;
  grouping_template: string;
};

/**
 * Reads the rows and their slots; returns per (project, group key): summed counts, first
 * message/culprit, most severe level, latest environment and versions, sorted by project and
 * fingerprint (the order the upsert locks them in). An event counts once in the group it lands in
 * and, when that is a merged issue, once more in the member row of its own fingerprint (which keeps
 * its own counters for an unmerge).
 */
export function aggregateGroups(rows: EventRow[], slotOf: Slot[]): GroupAgg[] {
  const map = new Map<string, GroupAgg>();
  for (let i = 0; i < rows.length; i++) {
    const e = rows[i];
    const ts = seenAt(e);
    for (const { key, fingerprint } of slotOf[i].keys) {
      const g = map.get(key);
      if (!g) {
        map.set(key, {
          project_id: e.projectId,
          fingerprint,
          message: e.message,
          level: e.level,
          count: e.count,
          first_seen: ts,
          last_seen: ts,
          culprit: e.culprit,
          environment: e.environment,
          first_version: e.gameVersion,
          last_version: e.gameVersion,
          first_version_at: ts,
          last_version_at: ts,
          client_only: isClientOrigin(e.tags),
          identities: identitiesIn(e, [e.message, e.culprit]),
          frames: e.frames ? e.frames.slice(0, FRAMES_MAX) : [],
          grouping_location: e.grouping?.location ?? "",
          grouping_template: e.grouping?.template ?? "",
        });
        continue;
      }
      if (e.frames?.length && g.frames.length < FRAMES_MAX) addEntries(g.frames, e.frames);
      g.count += e.count;
      if (g.client_only && !isClientOrigin(e.tags)) g.client_only = false;
      if (RANK[e.level] > RANK[g.level]) g.level = e.level;
      if (ts < g.first_seen) g.first_seen = ts;
      if (ts >= g.last_seen) {
        g.last_seen = ts;
        g.environment = e.environment;
      }
      if (g.culprit === null && e.culprit !== null) {
        g.culprit = e.culprit;
        g.identities = joinIdentities(g.identities, identitiesIn(e, [e.culprit]));
      }
      if (e.gameVersion !== null) {
        if (g.first_version === null || ts < g.first_version_at) [g.first_version, g.first_version_at] = [e.gameVersion, ts];
        if (g.last_version === null || ts >= g.last_version_at) [g.last_version, g.last_version_at] = [e.gameVersion, ts];
      }
    }
  }
  // a fixed lock order (project, fingerprint) keeps concurrent batches from deadlocking
  return [...map.values()].sort((a, b) =>
    a.project_id < b.project_id ? -1 : a.project_id > b.project_id ? 1 : a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0,
  );
}

/** One group row's throttle inputs: traced events landing in it (always stored), untraced events it throttles. */
export type GroupCounts = { traced: number; untraced: number };

/** Reads the rows, their slots and the group rows; returns each group row's counts, by group key. */
export function countGroupRows(rows: EventRow[], slotOf: Slot[], groups: GroupAgg[]): Map<string, GroupCounts> {
  const counts = new Map(groups.map((g) => [`${g.project_id}\u0000${g.fingerprint}`, { traced: 0, untraced: 0 }]));
  for (let i = 0; i < rows.length; i++) {
    const e = rows[i];
    const slot = slotOf[i];
    const origin = counts.get(slot.origin.key)!;
    if (e.traceId) counts.get(slot.target.key)!.traced++;
    else origin.untraced++;
  }
  return counts;
}

/** An environment's or a version's count and first and last time (ms) on one group row. */
type Span = { key: string; count: number; first: number; last: number };

/** The figures of one group row (as origin of events) gathered from the batch's rows. */
type RowAgg = {
  row: UpsertedGroup;
  /** untraced events its throttle still lets in */
  left: number;
  users: Map<string, string[] | null>;
  envs: Map<string, Span>;
  versions: Map<string, Span>;
  /** rollup cells of this origin row by minute and level (its group is fixed) */
  minutes: Map<number, { bucket: number; level: Level; count: number }>;
  /** its stored events per text */
  texts: Map<string, number>;
  moved: number;
  /** the group this row's events land in (itself, or the issue it is merged into) */
  lands: string;
};
type Place = { group: RowAgg; origin: RowAgg; family: string[] | null };

/** A trace's events of the batch: count, first and last time (ms), the groups they landed in. */
export type TraceAgg = { project_id: string; trace_id: string; first: number; last: number; n: number; groups: Set<string> };

/**
 * One group row with the deferred counters the batch adds to it (ids once, not per user or cell;
 * times in ms), as db/counter-deltas.ts applies them; its project is the pending row's.
 */
export type RowDelta = {
  id: string;
  /** the group its events land in */
  g: string;
  /** the members of the merged issue it belongs to, when it does */
  f: string[] | null | undefined;
  u: string[] | undefined;
  e: (string | number)[][] | undefined;
  v: (string | number)[][] | undefined;
  m: (string | number)[][] | undefined;
  /** per text of its stored events ("words"): [message, events] (db/event-messages.ts) */
  w: [string, number][] | undefined;
};

/** One project's deferred counters of a batch: one pending row (db/counter-deltas.ts). */
export type ProjectDelta = {
  p: string;
  d: {
    r: RowDelta[];
    /** per user: [user id, last seen (ms), player name] */
    s: unknown[][];
    /**
     * occurrences per game version: [version, environment, minute (ms), level, count] (rollup_version_hour
     * by their hour; rollup_version_minute, error level only). Rows written before it carry `h`, the
     * same cells by hour.
     */
    vm?: (string | number)[][];
  };
};

/** What the statement after the group upsert writes (db/write-statements.ts writeEventsAndCounters). */
export type BatchWrites = {
  /** per row of the batch, whether it is stored as an event */
  storedRows: boolean[];
  /** the stored events, as the events insert reads them */
  events: object[];
  traces: Map<string, TraceAgg>;
  /** events kept by a merged member's throttle and stored in its issue, per issue */
  moved: { p: string; id: string; s: number }[];
  deltas: ProjectDelta[];
};

/**
 * Node's half of the write: reads the rows, their slots and the upserted group rows (ids, receive
 * time, how many untraced events each let in); returns which events are kept (traced ones always,
 * untraced ones in arrival order up to what their origin row let in) and the per-key aggregates of
 * all of them. Each distinct fingerprint is placed once; the aggregates hang off the group and origin
 * rows, so the per-event work is a few lookups by short keys.
 */
export function keepAndAggregate(rows: EventRow[], slotOf: Slot[], upserted: UpsertedGroup[]): BatchWrites {
  const byKey = new Map(upserted.map((g) => [`${g.project_id}\u0000${g.fingerprint}`, g]));
  const aggs = new Map<string, RowAgg>(
    upserted.map((g) => [g.id, { row: g, left: g.kept, users: new Map(), envs: new Map(), versions: new Map(), minutes: new Map(), texts: new Map(), moved: 0, lands: g.id }]),
  );
  // the slot caches its place: the first event of a fingerprint finds it, the others reuse it
  const placeOf = (slot: Slot & { place?: Place }): Place => {
    if (!slot.place) {
      const group = aggs.get(byKey.get(slot.target.key)!.id)!;
      const origin = aggs.get(byKey.get(slot.origin.key)!.id)!;
      origin.lands = group.row.id;
      slot.place = { group, origin, family: slot.r.family };
    }
    return slot.place;
  };
  const LEVEL = { error: 0, warn: 1, info: 2 } as const;
  const spanOf = (m: Map<string, Span>, key: string, e: EventRow) => {
    const x = m.get(key);
    const ts = seenAt(e);
    if (!x) return void m.set(key, { key, count: e.count, first: ts, last: ts });
    x.count += e.count;
    if (ts < x.first) x.first = ts;
    if (ts > x.last) x.last = ts;
  };
  const storedRows: boolean[] = [];
  const events: object[] = [];
  // keyed by project first, then by the parts as they are (no key string built per event)
  type UserAgg = { project_id: string; user_id: string; last_seen: number; player_name: string | null; named_at: number };
  const users = new Map<string, Map<string, UserAgg>>();
  const traces = new Map<string, TraceAgg>();
  // per project, version, environment, then hour and level: every occurrence, kept or throttled
  type VersionCell = [string, string, number, string, number];
  const versionMinutes = new Map<string, Map<string, Map<string, Map<number, VersionCell>>>>();
  const inner = <K, V>(m: Map<K, V>, k: K, make: () => V): V => {
    let v = m.get(k);
    if (v === undefined) m.set(k, (v = make()));
    return v;
  };
  for (let i = 0; i < rows.length; i++) {
    const e = rows[i];
    const { group, origin, family } = placeOf(slotOf[i]);
    const ts = e.timestamp;
    const keep = e.traceId !== null || origin.left > 0;
    storedRows.push(keep);
    if (keep) {
      if (e.traceId === null) {
        origin.left--;
        // kept by a merged member's throttle: stored in the issue, counted there
        if (origin.row.merged_into !== null) group.moved++;
      }
      const stored: Record<string, unknown> = {
        project_id: e.projectId, group_id: group.row.id, origin_id: origin === group ? null : origin.row.id, message: e.message,
        level: e.level, stack_trace: e.stackTrace, user_id: e.userId, player_name: e.playerName, trace_id: e.traceId, job_id: e.jobId,
        place_id: e.placeId, game_version: e.gameVersion, environment: e.environment, context: e.context ?? null, tags: e.tags,
        count: e.count, ts: iso(ts), received: origin.row.received,
      };
      // only when present: an event without breadcrumbs or an id sends the statement nothing more
      if (e.breadcrumbs) stored.breadcrumbs = e.breadcrumbs;
      if (e.storedEventId) stored.event_id = e.storedEventId;
      events.push(stored);
      origin.texts.set(e.message, (origin.texts.get(e.message) ?? 0) + 1);
    }
    if (e.userId !== null) {
      origin.users.set(e.userId, family);
      const byUser = inner(users, e.projectId, () => new Map<string, UserAgg>());
      let u = byUser.get(e.userId);
      if (!u) byUser.set(e.userId, (u = { project_id: e.projectId, user_id: e.userId, last_seen: ts, player_name: null, named_at: -Infinity }));
      if (ts > u.last_seen) u.last_seen = ts;
      if (e.playerName !== null && ts >= u.named_at) [u.player_name, u.named_at] = [e.playerName, ts];
    }
    // per origin row, like users and rollup cells: a merged issue's figures are its members' sums
    // (db/versions.ts), so an unmerge leaves each member exactly its own
    spanOf(origin.envs, e.environment, e);
    if (e.gameVersion !== null) spanOf(origin.versions, e.gameVersion, e);
    if (e.traceId !== null) {
      const k = `${e.projectId}\u0000${e.traceId}`;
      let t = traces.get(k);
      if (!t) traces.set(k, (t = { project_id: e.projectId, trace_id: e.traceId, first: ts, last: ts, n: 0, groups: new Set<string>() }));
      t.n++;
      if (ts < t.first) t.first = ts;
      if (ts > t.last) t.last = ts;
      t.groups.add(group.row.id);
    }
    const bucket = ts - (ts % 60_000);
    const cell = bucket * 4 + LEVEL[e.level];
    const m = origin.minutes.get(cell);
    if (m) m.count += e.count;
    else origin.minutes.set(cell, { bucket, level: e.level, count: e.count });
    if (e.gameVersion !== null) {
      const cells = inner(inner(inner(versionMinutes, e.projectId, () => new Map()), e.gameVersion, () => new Map()), e.environment, () => new Map<number, VersionCell>());
      const vm = cells.get(cell);
      if (vm) vm[4] += e.count;
      else cells.set(cell, [e.gameVersion, e.environment, bucket, e.level, e.count]);
    }
  }
  // one entry per group row with everything of it (ids once, not per user or cell; times in ms)
  const spanList = (m: Map<string, Span>) => (m.size === 0 ? undefined : [...m.values()].map((x) => [x.key, x.count, x.first, x.last]));
  const deltas = new Map<string, ProjectDelta>();
  const deltaOf = (p: string) => {
    let d = deltas.get(p);
    if (!d) deltas.set(p, (d = { p, d: { r: [], s: [] } }));
    return d.d;
  };
  const moved: BatchWrites["moved"] = [];
  for (const a of aggs.values()) {
    if (a.moved > 0) moved.push({ p: a.row.project_id, id: a.row.id, s: a.moved });
    if (a.users.size === 0 && a.envs.size === 0 && a.minutes.size === 0) continue;
    deltaOf(a.row.project_id).r.push({
      id: a.row.id,
      g: a.lands,
      f: a.users.size > 0 ? a.users.values().next().value : undefined,
      u: a.users.size > 0 ? [...a.users.keys()] : undefined,
      e: spanList(a.envs),
      v: spanList(a.versions),
      m: a.minutes.size === 0 ? undefined : [...a.minutes.values()].map((c) => [c.bucket, c.level, c.count]),
      w: a.texts.size === 0 ? undefined : [...a.texts],
    });
  }
  for (const byUser of users.values()) for (const u of byUser.values()) deltaOf(u.project_id).s.push([u.user_id, u.last_seen, u.player_name]);
  for (const [p, byVersion] of versionMinutes)
    for (const byEnv of byVersion.values()) for (const cells of byEnv.values()) for (const cell of cells.values()) (deltaOf(p).vm ??= []).push(cell);
  return { storedRows, events, traces, moved, deltas: [...deltas.values()] };
}
