/**
 * A project's currency map as the service uses it: load (the seed's map when none is saved), save and
 * reset (owner/admin), and preview a map against a profile before saving it.
 */
import type { Sql } from "../../db/client.js";
import { deleteEconomyMap, getEconomyMap, putEconomyMap } from "../../db/economy-maps.js";
import { getProfileSample } from "../../db/economy-samples.js";
import { invalidPayload } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";
import { compileMap, parseCurrencyMap, readProfile, SEED_MAP, type CompiledMap, type CurrencyMap, type Match, type ReadProfile } from "./currency-map.server";

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

/** What the Team API and the settings page show: the map, whether it is the seed's, and the currencies' names. */
export function mapView(m: LoadedMap) {
  return { map: m.map, is_default: m.is_default, updated_at: m.updated_at };
}

export async function getMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, user, projectIdParam, EVERYONE, "view the currency map");
  return mapView(await loadMap(sql, projectId));
}

/** PUT: validate (400 naming each bad field, nothing written) and save; applies to the next push or scan. */
export async function saveMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined, body: unknown) {
  const { projectId } = await authorize(sql, user, projectIdParam, MANAGERS, "change the currency map");
  const map = parseCurrencyMap(body);
  const updatedAt = await putEconomyMap(sql, projectId, map, user.id);
  return { map, is_default: false, updated_at: updatedAt };
}

/** DELETE: back to the seed's map. */
export async function resetMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, user, projectIdParam, MANAGERS, "change the currency map");
  await deleteEconomyMap(sql, projectId);
  return mapView(await loadMap(sql, projectId));
}

export type Preview = {
  /** the map the profile was read with (the posted one, else the saved one), canonical */
  map: CurrencyMap;
  /** where the profile came from */
  profile_source: "posted" | "last_pushed";
  /** the pushed profile's player and time, when the last pushed one was used */
  sample: { user_id: string; observed_at: Date } | null;
  /** the profile read: balances per currency, names, data code, skipped values; or why it is not one */
  result: { ok: true; profile: ReadProfile; matches: Match[] } | { ok: false; reason: string };
};

/**
 * POST preview {map?, profile?}: reads a profile through a map without saving either. Without a map,
 * the saved one; without a profile, the project's last pushed one (a 400 when there is none yet).
 * Any member may preview; only saving needs owner/admin.
 */
export async function previewMapFor(sql: Sql, user: Actor, projectIdParam: string | undefined, body: unknown): Promise<Preview> {
  const { projectId } = await authorize(sql, user, projectIdParam, EVERYONE, "preview the currency map");
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
  return { map, profile_source: sample ? "last_pushed" : "posted", sample, result: readProfile(compileMap(map), profile, true) };
}
