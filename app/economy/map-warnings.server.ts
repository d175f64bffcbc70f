/**
 * Whether a currency map's `match` paths would skip every profile: the mistake a renamed map makes
 * when it keeps the old layout's match paths (the seed's RPCharacterOne after moving to Coins and
 * Gems), which otherwise only shows as every push answering "skipped".
 *
 * - With a pushed profile at hand (the project's last one), the answer is that profile's: read
 *   through the map, is it skipped, and why.
 * - Without one, the rule is structural: a match path is supported when it leads to a table some
 *   currency, name or data-code path goes through, i.e. it is a proper prefix of one of them, step by
 *   step, a wildcard (`*`, `[*]`) agreeing with any step. A profile holding the map's currencies has
 *   a table there, so it matches. When no match path is supported, a profile that holds the
 *   currencies but not the old tables is skipped: the map warns. A match path equal to a currency
 *   path is never supported: a currency holds a number, and a match path must reach a table.
 *
 * A warning never blocks the Team API's PUT (it is returned with the saved map); the settings page
 * asks for a second press before it saves a map that warns.
 */
import { parsePath, readProfileInSlices, compileMap, type CurrencyMap, type Step } from "./currency-map.server";
import { setImmediate as nextTurn } from "node:timers/promises";
import { ago } from "~/components/format";

export type MatchWarning =
  | { kind: "last_pushed"; user_id: string; observed_at: Date; reason: string; message: string }
  | { kind: "match_paths"; paths: string[]; message: string };

const agrees = (a: Step, b: Step) =>
  a.kind === "all" || b.kind === "all" || (a.kind === "key" && b.kind === "key" && a.key === b.key) || (a.kind === "index" && b.kind === "index" && a.index === b.index);

/** `m` is a proper prefix of `p`, step by step (wildcards agree with any step). */
function leadsInto(m: Step[], p: Step[]): boolean {
  return m.length < p.length && m.every((s, i) => agrees(s, p[i]));
}

const quoted = (paths: string[]) => paths.map((p) => `“${p}”`).join(", ");

/** The structural rule (no profile at hand): a warning when no match path leads into a currency, name or data-code path. */
export function matchPathsWarning(map: CurrencyMap): MatchWarning | null {
  if (map.match.length === 0) return null;
  const targets = [...map.currencies.flatMap((c) => c.paths), ...map.names, ...(map.data_code ? [map.data_code] : [])].map((p) => parsePath(p).steps);
  const supported = map.match.filter((m) => {
    const steps = parsePath(m).steps;
    return targets.some((t) => leadsInto(steps, t));
  });
  if (supported.length > 0) return null;
  const currencyPaths = new Set(map.currencies.flatMap((c) => c.paths));
  const onCurrency = map.match.filter((m) => currencyPaths.has(m));
  const why = onCurrency.length
    ? `${quoted(onCurrency)} ${onCurrency.length === 1 ? "is a currency path" : "are currency paths"}: a currency holds a number, and a match path must reach a table`
    : "none of them leads to a table the currency or name paths read from";
  return {
    kind: "match_paths",
    paths: map.match,
    message: `Every profile would likely be skipped: the match ${map.match.length === 1 ? "path" : "paths"} ${quoted(map.match)} ${map.match.length === 1 ? "is" : "are"} kept, and ${why}. A profile is read only when a match path reaches a table; clear the match paths or change them to a table the currencies are in.`,
  };
}

/** Whether the last pushed profile would be skipped by `map`: null when it is read (or there is none). */
export async function lastPushedWarning(map: CurrencyMap, sample: { user_id: string; observed_at: Date; profile: unknown } | null): Promise<MatchWarning | null> {
  if (!sample) return null;
  // the same reading a push does (bounded by its places per profile), a few ms at most
  const r = await readProfileInSlices(compileMap(map), sample.profile, () => nextTurn());
  if (r.ok) return null;
  return {
    kind: "last_pushed",
    user_id: sample.user_id,
    observed_at: sample.observed_at,
    reason: r.reason,
    message: `The last profile pushed (user ${sample.user_id}, ${ago(sample.observed_at, new Date())}) would be skipped: ${r.reason}.`,
  };
}

/** The warning a map gets before it is saved: against the last pushed profile when there is one, else structurally. */
export async function matchWarning(map: CurrencyMap, sample: { user_id: string; observed_at: Date; profile: unknown } | null): Promise<MatchWarning | null> {
  return sample ? lastPushedWarning(map, sample) : matchPathsWarning(map);
}
