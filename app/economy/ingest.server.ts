import { setImmediate as nextTurn } from "node:timers/promises";
import type { Sql } from "../../db/client.js";
import { lockPlayers, writeObservationsWithHistoryTx, type Observation } from "../../db/economy.js";
import { reconcileTx, writeFlowsTx } from "../../db/economy-flows.js";
import { putProfileSample } from "../../db/economy-samples.js";
import { claimPushKey, recordPush } from "../../db/idempotency.js";
import { transaction } from "../../db/transaction.js";
import type { Config } from "~/env.server";
import { conflict, invalidPayload, type ErrorDetail } from "~/http.server";
import { withinWriteDeadline } from "~/db-deadline.server";
import { bodyHash, type KeyedRequest } from "~/ingest/idempotency.server";
import { parseUserId } from "./profile.server";
import { readProfileInSlices, SEED, seedFields, type CompiledMap } from "./currency-map.server";
import { loadMap } from "./map.server";
import { flowDetails, flowsAnswer, flowsArray, parseFlows, type FlowsAnswer, type ParsedFlows } from "./flows.server";
import { clipNesting, cutText, isStorable, tooDeep } from "~/text.server";

export const MAX_PLAYERS = 100;
const MAX_NAME = 256;
/** at most this many skipped players and values are listed in a push's answer */
export const MAX_REASONS = 50;
/** the preview's last pushed profile is kept when its JSON is at most this size */
export const MAX_SAMPLE_BYTES = 256 * 1024;
/** and replaced at most this often per project (per process) */
export const SAMPLE_EVERY_MS = 10_000;
/** a push reads its profiles for at most about this long before it lets other requests in */
const READ_SLICE_MS = 10;

type Entry = Omit<Observation, "observedAt" | "revisionTime"> & { profile: unknown };

/** A skipped player (`currency` absent) or a skipped value of a stored player, as the push answers it. */
export type SkippedReason =
  | { index: number; user_id: string | null; reason: string }
  | { index: number; user_id: string; currency: string; path: string; reason: string };

function optionalName(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const s = v.trim();
  return s === "" ? null : cutText(s, MAX_NAME);
}

/**
 * One push entry read through the project's map, or the reason it is skipped (seed rule 1). A profile
 * is read in slices with `turn()` between them, and one the map would read past PLACES_PER_PROFILE
 * places is skipped.
 */
export async function parseEntry(item: unknown, map: CompiledMap, turn: () => Promise<void>): Promise<Entry | string> {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return "must be an object with user_id and profile";
  const e = item as Record<string, unknown>;
  const userId = parseUserId(e.user_id);
  if (!userId) return "user_id must be a positive integer or a string of digits";
  if (e.profile === undefined || e.profile === null) return "profile is missing";
  const r = await readProfileInSlices(map, e.profile, turn);
  if (!r.ok) return r.reason;
  const p = r.profile;
  const seed = seedFields(p.balances);
  const username = optionalName(e.username);
  const displayName = optionalName(e.display_name);
  // a name PostgreSQL cannot store would fail the whole batch's transaction: only this player is skipped
  if (![...p.display_names, username ?? "", displayName ?? ""].every(isStorable)) {
    return "names must not contain NUL characters or unpaired surrogates";
  }
  return {
    userId,
    balances: p.balances,
    total: p.total,
    cash: seed.cash,
    bank: seed.bank,
    darkCoin: seed.dark_coin,
    skippedValues: p.skipped_values,
    skippedCount: p.skipped_count,
    displayNames: p.display_names,
    dataCode: p.data_code,
    // optional metadata of the wrong type is dropped, not the entry
    username,
    displayName,
    profile: e.profile,
  };
}

export type ParsedPush = {
  /** one per player, in the order of each player's last occurrence */
  entries: (Entry & { index: number })[];
  /** entries not stored: bad ones, and earlier occurrences of a player listed twice */
  skipped: number;
  /** why each skipped entry was skipped, in batch order */
  skippedPlayers: { index: number; user_id: string | null; reason: string }[];
};

/**
 * The batch's players and flows (null without a `flows` key); a 400 when the body is not
 * `{players: [...], flows: [...]}` with at most 100 players and 1000 flows, at least one entry in
 * all. Either array may be absent or empty when the other is not.
 */
function batchOf(body: unknown): { players: unknown[]; flows: unknown[] | null } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send an object with a `players` array of {user_id, profile} entries.");
  }
  const raw = body as { players?: unknown; flows?: unknown };
  const flows = raw.flows === undefined ? null : flowsArray(raw.flows);
  const players = raw.players === undefined && flows && flows.length > 0 ? [] : raw.players;
  if (!Array.isArray(players)) {
    throw invalidPayload("`players` must be an array of {user_id, profile} entries.", [{ path: "players", message: "must be an array" }]);
  }
  if (players.length === 0 && !(flows && flows.length > 0)) {
    throw invalidPayload("The batch is empty; send 1 to 100 players.", [{ path: "players", message: "must not be empty" }]);
  }
  if (players.length > MAX_PLAYERS) {
    throw invalidPayload(`The batch holds ${players.length} players; send at most ${MAX_PLAYERS} per request.`, [
      { path: "players", message: `must have at most ${MAX_PLAYERS} players` },
    ]);
  }
  return { players, flows };
}

/**
 * Body `{players: [...]}` with 1..100 entries, each read through the project's map. Bad entries are
 * skipped; the request is a 400 (and nothing is stored) only when the batch is empty, too large, or
 * has no valid entry (seed rule 5). A player listed twice keeps the later entry; the earlier one
 * counts as skipped.
 */
export async function parsePushBody(body: unknown, map: CompiledMap = SEED): Promise<ParsedPush> {
  const { parsed, details } = await parsePlayers(batchOf(body).players, map);
  if (parsed.entries.length === 0) {
    throw invalidPayload(`No entry is a valid player payload: ${details[0].path} ${details[0].message}.`, details.slice(0, 50));
  }
  return parsed;
}

/** Each player of a batch read through the map (none valid is the caller's to judge). */
async function parsePlayers(players: unknown[], map: CompiledMap): Promise<{ parsed: ParsedPush; details: ErrorDetail[] }> {
  const byUser = new Map<string, Entry & { index: number }>();
  const details: ErrorDetail[] = [];
  const skippedPlayers: ParsedPush["skippedPlayers"] = [];
  // each profile's reading is bounded (PLACES_PER_PROFILE); a batch of heavy ones lets other requests in every few ms
  let since = performance.now();
  const turn = async () => {
    if (performance.now() - since < READ_SLICE_MS) return;
    await nextTurn();
    since = performance.now();
  };
  for (let i = 0; i < players.length; i++) {
    await turn();
    const item = players[i];
    const r = await parseEntry(item, map, turn);
    if (typeof r === "string") {
      details.push({ path: `players[${i}]`, message: r });
      const raw = typeof item === "object" && item !== null ? (item as { user_id?: unknown }).user_id : undefined;
      skippedPlayers.push({ index: i, user_id: parseUserId(raw), reason: r });
    } else {
      const earlier = byUser.get(r.userId);
      if (earlier) skippedPlayers.push({ index: earlier.index, user_id: r.userId, reason: `the player is listed again at index ${i}; the later entry is kept` });
      byUser.delete(r.userId); // re-insert so iteration order follows the last occurrence
      byUser.set(r.userId, { ...r, index: i });
    }
  }
  skippedPlayers.sort((a, b) => a.index - b.index);
  return { parsed: { entries: [...byUser.values()], skipped: players.length - byUser.size, skippedPlayers }, details };
}

/** The push's answer: skipped players first, then the skipped values of stored players, 50 in all. */
function skippedReasons(parsed: ParsedPush, stored: Set<string>): { skipped_values: number; skipped_reasons: SkippedReason[] } {
  const reasons: SkippedReason[] = parsed.skippedPlayers.slice(0, MAX_REASONS);
  let count = 0;
  for (const e of [...parsed.entries].sort((a, b) => a.index - b.index)) {
    if (!stored.has(e.userId) || e.skippedCount === 0) continue;
    count += e.skippedCount;
    for (const v of e.skippedValues) {
      if (reasons.length >= MAX_REASONS) break;
      reasons.push({ index: e.index, user_id: e.userId, currency: v.currency, path: v.path, reason: v.reason });
    }
  }
  return { skipped_values: count, skipped_reasons: reasons };
}

/** when each project's profile sample was last written by this process */
const sampledAt = new Map<string, number>();

/** Keeps the first stored entry's profile for the map preview; never fails the push. */
async function keepSample(sql: Sql, projectId: string, entries: Entry[], stored: Set<string>, at: Date): Promise<void> {
  const now = Date.now();
  if (now - (sampledAt.get(projectId) ?? 0) < SAMPLE_EVERY_MS) return;
  const first = entries.find((e) => stored.has(e.userId));
  if (!first) return;
  sampledAt.set(projectId, now);
  if (sampledAt.size > 10_000) {
    for (const [id, t] of sampledAt) if (now - t >= SAMPLE_EVERY_MS) sampledAt.delete(id);
  }
  try {
    if (Buffer.byteLength(JSON.stringify(first.profile)) > MAX_SAMPLE_BYTES) return;
    await putProfileSample(sql, projectId, first.userId, first.profile, at);
  } catch {
    // a profile jsonb cannot hold (a NUL in a string) or a failed write only leaves the older sample
  }
}

export type PushAnswer = { stored: number; skipped: number; skipped_values: number; skipped_reasons: SkippedReason[]; flows?: FlowsAnswer };

/** What a push uses (the process's Services hold all of it). */
export type PushDeps = { sql: Sql; config: Pick<Config, "dbTimeoutMs" | "retentionDays">; economyAlerts?: { add(projectId: string): void } };

/**
 * POST /api/economy/ingest: read each entry through the project's map, then write every valid one in
 * one transaction, under the write deadline: the request's flows first, then the balances, then each
 * new history row reconciled with the flows since the player's previous observation. With an Idempotency-Key, the first complete push's
 * answer is recorded in that transaction: a retry of the same body answers it and writes nothing,
 * another body under the key is a 409, and concurrent duplicates wait for each other.
 */
export async function pushBalances(deps: PushDeps, projectId: string, body: unknown, key: string | null = null): Promise<PushAnswer> {
  batchOf(body); // a malformed batch costs no query
  // entries are read leniently, but the body as a whole is hashed (Idempotency-Key) and a profile kept
  // as the preview's sample: serializing either recurses once per level
  const { cut } = clipNesting(body);
  if (cut) throw tooDeep(cut);
  return withinWriteDeadline(deps, push(deps, projectId, body, key));
}

async function push(deps: PushDeps, projectId: string, body: unknown, key: string | null): Promise<PushAnswer> {
  // the map's read is part of the push: it waits for a pool connection like the write does
  const deadline = Date.now() + deps.config.dbTimeoutMs;
  const { compiled, map } = await loadMap(deps.sql, projectId);
  const batch = batchOf(body);
  const { parsed, details } = await parsePlayers(batch.players, compiled);
  const flows: ParsedFlows | null = batch.flows && parseFlows(batch.flows, map);
  if (parsed.entries.length === 0 && !flows?.flows.length) {
    const all = [...details, ...(flows ? flowDetails(flows) : [])];
    const what = flows ? "player payload or flow" : "player payload";
    throw invalidPayload(`No entry is a valid ${what}: ${all[0].path} ${all[0].message}.`, all.slice(0, 50));
  }
  const now = new Date();
  // flows older than the retention period may be gone: a gain since an observation that old is not reconciled
  const keptSince = new Date(now.getTime() - deps.config.retentionDays * 86_400_000);
  const rows: Observation[] = parsed.entries.map(({ profile: _, index: __, ...e }) => ({ ...e, observedAt: now, revisionTime: null }));
  const keyed: KeyedRequest | null = key === null ? null : { key, bodyHash: bodyHash(body) };
  const { answer, stored } = await transaction(
    deps.sql,
    async (tx) => {
      const recorded = keyed && (await claimPushKey(tx, projectId, keyed.key, keyed.bodyHash));
      if (recorded && !recorded.sameBody) {
        throw conflict("This Idempotency-Key was already used with a different body; send a new push with a new key.");
      }
      if (recorded) return { answer: recorded.answer as PushAnswer, stored: null };
      if (flows && flows.flows.length > 0) {
        // every player of the request locked at once, in the writer's order, then the flows written
        // first: received with the push, they count towards its reconciliation
        await lockPlayers(tx, projectId, [...rows.map((r) => r.userId), ...flows.flows.map((f) => f.userId)]);
        await writeFlowsTx(tx, projectId, flows.flows, now);
      }
      const { stored, historyIds } = await writeObservationsWithHistoryTx(tx, projectId, "push", rows);
      await reconcileTx(tx, projectId, historyIds, keptSince);
      const answer: PushAnswer = { stored: stored.size, skipped: parsed.skipped, ...skippedReasons(parsed, stored) };
      if (flows) answer.flows = flowsAnswer(flows);
      if (keyed) await recordPush(tx, projectId, keyed.key, keyed.bodyHash, answer);
      return { answer, stored };
    },
    // exactly once: resolves only if committed, even when the connection is lost around COMMIT
    { deadline, attempts: 3 },
  );
  if (stored) await keepSample(deps.sql, projectId, parsed.entries, stored, now);
  if (stored?.size) deps.economyAlerts?.add(projectId); // after commit; memory only, never throws
  return answer;
}
