/**
 * Who an event names: its player's name and user id, the players in its instance paths, and the
 * values its tags and context keep under keys that name a player or user. The group row keeps those
 * of the events whose text it shows (its message's first event, its culprit's) that the text holds,
 * so a share view can scrub them however many events later arrive and after retention deleted them.
 * Nothing here talks to the database; the write computes it once per group per batch, not per event.
 */

/** How many names and ids a group row keeps (`error_groups.identities`): the first ones win. */
export const IDENTITY_CAP = 32;
/** Longer values are no player's name or id (Roblox names are at most 20 characters). */
const IDENTITY_MAX_CHARS = 64;
/** Context keys looked at per event, so a large context costs no more than a small one. */
const CONTEXT_KEYS_READ = 100;

/**
 * Words that make a tag's key say who (`player`, `user_id`, `User.Email`, `displayName`, Sentry's
 * `user.*`): compared lowercase with `-`, `_`, `.` and spaces removed.
 */
const WHO_KEYS = new Set([
  "id", "uid", "name", "username", "userid", "displayname", "nickname", "nick", "email", "ip", "ipaddress",
  "playerid", "playername", "robloxid", "robloxuserid", "charactername", "firstname", "lastname", "fullname",
]);
const WHO_PREFIX = /^(?:user|player|plr)(?:[-_.\s]|$)/;
const WHO_SUFFIX = /(?:user|player|plr)(?:id|name)$/;

/** Whether a tag or context key names a player or user. */
export function isPersonalKey(key: string): boolean {
  const k = key.trim().toLowerCase();
  const joined = k.replace(/[-_.\s]+/g, "");
  return WHO_PREFIX.test(k) || WHO_KEYS.has(joined) || WHO_SUFFIX.test(joined) || /^(?:user|player|plr)s?$/.test(joined);
}

// `Players.Builderman.PlayerGui`: a player instance is named by its username (letters, digits and
// underscores); the Players service's own members are code, not names
const PLAYER_IN_PATH = /\bPlayers\.([A-Za-z0-9_]+)/g;
const PLAYERS_MEMBERS = new Set(["LocalPlayer", "PlayerAdded", "PlayerRemoving", "PlayerMembershipChanged", "MaxPlayers", "RespawnTime", "CharacterAutoLoads"]);

/** The fields of an event that can name someone (an ingest row's or a stored event's). */
export type Identifiable = {
  playerName: string | null;
  userId: string | number | null;
  message: string;
  stackTrace: string | null;
  culprit?: string | null;
  tags: string[] | null;
  context: unknown;
};

/** Adds a value once, when it can be a name (3+ characters) or an id, while under the cap. */
function add(into: string[], value: unknown, cap: number) {
  if (into.length >= cap) return;
  if (typeof value === "number") value = Number.isSafeInteger(value) ? String(value) : null;
  if (typeof value !== "string") return;
  const v = value.trim();
  if (v.length < 3 || v.length > IDENTITY_MAX_CHARS || into.includes(v)) return;
  into.push(v);
}

/**
 * The names and ids one event carries, its own player first, at most `cap`. Context is read at its
 * top level and one level into a key that names someone (Sentry's `user: {id, username}`).
 */
export function eventIdentities(e: Identifiable, cap = IDENTITY_CAP): string[] {
  const out: string[] = [];
  add(out, e.playerName, cap);
  if (e.userId !== null && e.userId !== undefined) add(out, String(e.userId), cap);
  for (const text of [e.message, e.stackTrace, e.culprit]) {
    if (!text || !text.includes("Players.")) continue;
    for (const m of text.matchAll(PLAYER_IN_PATH)) if (!PLAYERS_MEMBERS.has(m[1])) add(out, m[1], cap);
  }
  for (const tag of e.tags ?? []) {
    const cut = tag.search(/[:=]/);
    if (cut > 0 && isPersonalKey(tag.slice(0, cut))) add(out, tag.slice(cut + 1), cap);
  }
  if (e.context && typeof e.context === "object" && !Array.isArray(e.context)) {
    let read = 0;
    for (const [key, value] of Object.entries(e.context as Record<string, unknown>)) {
      if (++read > CONTEXT_KEYS_READ || out.length >= cap) break;
      if (!isPersonalKey(key)) continue;
      if (value && typeof value === "object" && !Array.isArray(value)) {
        for (const inner of Object.values(value as Record<string, unknown>).slice(0, CONTEXT_KEYS_READ)) add(out, inner, cap);
      } else add(out, value, cap);
    }
  }
  return out;
}

/**
 * The names and ids one event carries that its shown text holds (any case): what scrubbing that
 * text needs, and nothing the text does not already say, so keeping them keeps no more about anyone.
 */
export function identitiesIn(e: Identifiable, texts: (string | null | undefined)[], cap = IDENTITY_CAP): string[] {
  const haystack = texts.filter((t): t is string => !!t).join("\n").toLowerCase();
  if (!haystack) return [];
  return eventIdentities(e, cap).filter((v) => haystack.includes(v.toLowerCase()));
}

/** Two lists as one, the first's entries first, without repeats, at most `cap`. */
export function joinIdentities(a: string[], b: string[], cap = IDENTITY_CAP): string[] {
  const out = [...a];
  for (const v of b) if (out.length < cap && !out.includes(v)) out.push(v);
  return out.slice(0, cap);
}
