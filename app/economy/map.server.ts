/**
 * A project's currency map as the service uses it: load (the seed's map when none is saved), save and
 * reset (owner/admin), and preview a map against a profile before saving it.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { recordAudit } from "../../db/audit.js";
import type { Sql } from "../../db/client.js";
import { deleteEconomyMap, getEconomyMap, putEconomyMap } from "../../db/economy-maps.js";
import { getProfileSample } from "../../db/economy-samples.js";
import type { Config } from "~/env.server";
import { invalidPayload } from "~/http.server";
import { countOrRefuse } from "~/rate-limit.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";
import { matchWarning, type MatchWarning } from "./map-warnings.server";
import { layoutOf } from "./layouts.server";
import {
  compileMap,
  parseCurrencyMap,
  PLACES_PER_PROFILE,
  ProfileReader,
  readInSlices,
  SEED_MAP,
  tooManyPlaces,
  type CompiledMap,
  type CurrencyMap,
  type ProfileReading,
} from "./currency-map.server";

export type LoadedMap = { map: CurrencyMap; compiled: CompiledMap; is_default: boolean; updated_at: Date | null };

/**
 * The map a project's pushes and scans read through. A stored map that no longer validates (it was
 * saved by an older version with looser rules) is still used as stored: every path in it parsed once.
 */
export async function loadMap(sql: Sql, projectId: string): Promise<LoadedMap> {
  const row = await getEconomyMap(sql, projectId);
  if (!row) return { map: SEED_MAP, compiled: compileMap(SEED_MAP), is_default: true, updated_at: null };
  const map = row.map as CurrencyMap;
  return { map, compiled: compileMap(map), is_default: false, updated_at: row.updated_at };
}

/** What the Team API and the settings page show: the map, whether it is the seed's, and the starting layout it is (unchanged), if any. */
export function mapView(m: LoadedMap) {
  return { map: m.map, is_default: m.is_default, updated_at: m.updated_at, layout: layoutOf(m.map) };
}

/**
 * Whether `map` would skip every profile (map-warnings.server.ts): read against the project's last
 * pushed profile when one was kept, else by the structural rule. One stored profile of at most
 * MAX_SAMPLE_BYTES, read as a push reads it (at most PLACES_PER_PROFILE places): no rate limit.
 */
export async function warningsFor(sql: Sql, projectId: string, map: CurrencyMap): Promise<MatchWarning[]> {
  const w = await matchWarning(map, await getProfileSample(sql, projectId));
  return w ? [w] : [];
}

export async function getMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, user, projectIdParam, EVERYONE, "view the currency map");
  const m = await loadMap(sql, projectId);
  return { ...mapView(m), warnings: await warningsFor(sql, projectId, m.map) };
}

/**
 * PUT: validate (400 naming each bad field, nothing written) and save; applies to the next push or
 * scan. The answer's `warnings` say when the map would skip every profile. With `holdOnWarning` (the
 * settings page's first press of Save), such a map is not saved: `{saved: false, map, warnings}`.
 */
export async function saveMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined, body: unknown, opts: { holdOnWarning?: boolean } = {}) {
  const { projectId } = await authorize(sql, user, projectIdParam, MANAGERS, "change the currency map");
  const map = parseCurrencyMap(body);
  const warnings = await warningsFor(sql, projectId, map);
  if (warnings.length > 0 && opts.holdOnWarning) return { saved: false as const, map, warnings };
  const updatedAt = await putEconomyMap(sql, projectId, map, user.id);
  await recordAudit(sql, { projectId, actorId: user.id, action: "economy_map.saved", target: null, details: { currencies: map.currencies.map((c) => c.key), layout: layoutOf(map) } });
  return { saved: true as const, map, is_default: false, updated_at: updatedAt, layout: layoutOf(map), warnings };
}

/** DELETE: back to the seed's map. */
export async function resetMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, user, projectIdParam, MANAGERS, "change the currency map");
  await deleteEconomyMap(sql, projectId);
  await recordAudit(sql, { projectId, actorId: user.id, action: "economy_map.reset", target: null });
  const m = await loadMap(sql, projectId);
  return { ...mapView(m), warnings: await warningsFor(sql, projectId, m.map) };
}

/**
 * How far a preview reads and what it lists. A member may paste any profile and any map: a map of
 * wildcards over a profile of 100,000 keys is millions of places. The reading goes in slices of
 * `slice` places with a turn of the event loop between them, so other requests are served
 * meanwhile, and stops at `budgetMs` or `maxPlaces`; the answer lists at most `perCurrency` places
 * of each currency and `total` in all, and counts the rest.
 */
export const PREVIEW_LIMITS = { perCurrency: 20, total: 200, maxPlaces: 5_000_000, budgetMs: 2_000, slice: 10_000 };
/** previews are counted per user and project over this window (ECONOMY_PREVIEW_RATE_LIMIT of them) */
export const PREVIEW_WINDOW_SECONDS = 60;

export type Preview = {
  /** the map the profile was read with (the posted one, else the saved one), canonical */
  map: CurrencyMap;
  /** where the profile came from */
  profile_source: "posted" | "last_pushed";
  /** the pushed profile's player and time, when the last pushed one was used */
  sample: { user_id: string; observed_at: Date } | null;
  /** the profile read: balances per currency, names, data code, skipped values, the places summed (listed up to `listed`); or why it is not one */
  result: ProfileReading;
  /** how many places the answer lists at most, per currency and in all */
  listed: { per_currency: number; total: number };
  /** why the reading stopped before the end of the map (its budget), or null when it read all of it */
  stopped: string | null;
  /** why a push of this profile would skip the player when the preview read it anyway (too many places), or null */
  push_skips: string | null;
};

export type PreviewDeps = { sql: Sql; config: Pick<Config, "economyPreviewRateLimit"> };

/** A few previews a minute per user and project, across instances: each may cost a couple of seconds of reading. */
const limitPreviews = ({ sql, config }: PreviewDeps, userId: string, projectId: string) =>
  countOrRefuse(sql, `economy-preview:${userId}:${projectId}`, {
    windowSeconds: PREVIEW_WINDOW_SECONDS,
    limit: config.economyPreviewRateLimit,
    refusal: (retry) => `Too many previews: at most ${config.economyPreviewRateLimit} a minute on this project; try again in ${retry} seconds.`,
  });

/** Reads a profile in slices, yielding between them, until the end of the map or the preview's budget. */
async function readWithinBudget(map: CompiledMap, profile: unknown) {
  const L = PREVIEW_LIMITS;
  const reader = new ProfileReader(map, profile, { perCurrency: L.perCurrency, total: L.total });
  const started = performance.now();
  const end = await readInSlices(reader, { slice: L.slice, maxPlaces: L.maxPlaces, budgetMs: L.budgetMs, turn: nextTurn });
  let stopped: string | null = null;
  if (end !== "done") {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const visited = reader.meter.visited.toLocaleString("en-US");
    stopped = `The preview stopped at its budget (${visited} places read in ${seconds} s): amounts marked partial are the sums so far, and names and data code after them were not read.`;
  }
  const result = reader.result(stopped ?? undefined);
  const over = reader.meter.visited > PLACES_PER_PROFILE || stopped !== null;
  return { result, stopped, push_skips: over ? tooManyPlaces(PLACES_PER_PROFILE) : null };
}

/**
 * POST preview {map?, profile?}: reads a profile through a map without saving either. Without a map,
 * the saved one; without a profile, the project's last pushed one (a 400 when there is none yet).
 * Any member may preview, within ECONOMY_PREVIEW_RATE_LIMIT previews a minute (429 past it,
 * counted before the body is read); only saving needs owner/admin.
 */
export async function previewMapFor(deps: PreviewDeps, user: Actor, projectIdParam: string | undefined, readBody: () => unknown): Promise<Preview> {
  const { sql } = deps;
  const { projectId } = await authorize(sql, user, projectIdParam, EVERYONE, "preview the currency map");
  await limitPreviews(deps, user.id, projectId);
  const body = await readBody();
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send an object with an optional `map` and an optional `profile`.");
  }
  const input = body as { map?: unknown; profile?: unknown };
  const map = input.map === undefined || input.map === null ? (await loadMap(sql, projectId)).map : parseCurrencyMap(input.map);
  let profile = input.profile;
  let sample: Preview["sample"] = null;
  if (profile === undefined || profile === null) {
    const s = await getProfileSample(sql, projectId);
    if (!s) {
      throw invalidPayload("No profile has been pushed to this project yet: paste one to preview the map.", [
        { path: "profile", message: "is required until a profile has been pushed" },
      ]);
    }
    profile = s.profile;
    sample = { user_id: s.user_id, observed_at: s.observed_at };
  }
  const read = await readWithinBudget(compileMap(map), profile);
  return {
    map,
    profile_source: sample ? "last_pushed" : "posted",
    sample,
    ...read,
    listed: { per_currency: PREVIEW_LIMITS.perCurrency, total: PREVIEW_LIMITS.total },
  };
}
