import { writeObservations, type Observation } from "../../db/economy.js";
import { invalidPayload, type ErrorDetail } from "~/http.server";
import type { Services } from "~/services.server";
import { parseUserId } from "./profile.server";
import { readProfile, SEED, seedFields } from "./currency-map.server";
import { cutText, isStorable } from "~/text.server";

export const MAX_PLAYERS = 100;
const MAX_NAME = 256;

type Entry = Omit<Observation, "observedAt" | "revisionTime">;

function optionalName(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const s = v.trim();
  return s === "" ? null : cutText(s, MAX_NAME);
}

/** One push entry, or the reason it is skipped (seed rule 1). */
export function parseEntry(item: unknown): Entry | string {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return "must be an object with user_id and profile";
  const e = item as Record<string, unknown>;
  const userId = parseUserId(e.user_id);
  if (!userId) return "user_id must be a positive integer or a string of digits";
  if (e.profile === undefined || e.profile === null) return "profile is missing";
  const r = readProfile(SEED, e.profile);
  if (!r.ok) return r.reason;
  const p = { ...r.profile, ...seedFields(r.profile.balances) };
  const username = optionalName(e.username);
  const displayName = optionalName(e.display_name);
  // a name PostgreSQL cannot store would fail the whole batch's transaction: only this player is skipped
  if (![...p.display_names, username ?? "", displayName ?? ""].every(isStorable)) {
    return "names must not contain NUL characters or unpaired surrogates";
  }
  return {
    userId,
    cash: p.cash,
    bank: p.bank,
    darkCoin: p.dark_coin,
    displayNames: p.display_names,
    dataCode: p.data_code,
    // optional metadata of the wrong type is dropped, not the entry
    username,
    displayName,
  };
}

/**
 * Body `{players: [...]}` with 1..100 entries. Bad entries are skipped; the request is a 400 (and
 * nothing is stored) only when the batch is empty, too large, or has no valid entry (seed rule 5).
 * A player listed twice keeps the later entry; the earlier one counts as skipped.
 */
export function parsePushBody(body: unknown): { entries: Entry[]; skipped: number } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send an object with a `players` array of {user_id, profile} entries.");
  }
  const players = (body as { players?: unknown }).players;
  if (!Array.isArray(players)) {
    throw invalidPayload("`players` must be an array of {user_id, profile} entries.", [{ path: "players", message: "must be an array" }]);
  }
  if (players.length === 0) {
    throw invalidPayload("The batch is empty; send 1 to 100 players.", [{ path: "players", message: "must not be empty" }]);
  }
  if (players.length > MAX_PLAYERS) {
    throw invalidPayload(`The batch holds ${players.length} players; send at most ${MAX_PLAYERS} per request.`, [
      { path: "players", message: `must have at most ${MAX_PLAYERS} players` },
    ]);
  }
  const byUser = new Map<string, Entry>();
  const details: ErrorDetail[] = [];
  players.forEach((item, i) => {
    const r = parseEntry(item);
    if (typeof r === "string") details.push({ path: `players[${i}]`, message: r });
    else {
      byUser.delete(r.userId); // re-insert so iteration order follows the last occurrence
      byUser.set(r.userId, r);
    }
  });
  if (byUser.size === 0) {
    throw invalidPayload(`No entry is a valid player payload: ${details[0].path} ${details[0].message}.`, details.slice(0, 50));
  }
  return { entries: [...byUser.values()], skipped: players.length - byUser.size };
}

/** POST /api/economy/ingest: validate, then write every valid entry in one transaction. */
export async function pushBalances(services: Services, projectId: string, body: unknown): Promise<{ stored: number; skipped: number }> {
  const { entries, skipped } = parsePushBody(body);
  const now = new Date();
  const rows: Observation[] = entries.map((e) => ({ ...e, observedAt: now, revisionTime: null }));
  const stored = await writeObservations(services.sql, projectId, "push", rows, Date.now() + services.config.dbTimeoutMs);
  return { stored: stored.size, skipped };
}
