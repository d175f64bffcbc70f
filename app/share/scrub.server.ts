import { isPersonalKey } from "../../db/identities.js";
import { PLAYER_IN_PATH } from "~/ingest/fingerprint.server";

/** Whether a tag or context key names a player or user (the write reads the same keys, db/identities.ts). */
export { isPersonalKey };

/**
 * What a share link shows of error text: who it happened to is removed, what failed is kept.
 * - player names inside instance paths (`Players.Builderman.PlayerGui` -> `Players.<player>.PlayerGui`);
 * - user-id-like keys and values (`Player_123456`, `users/123456`, `Key = 123456`, `UserId: 123456`);
 * - every name and user id the shown events carry, wherever else it appears in the text.
 */
const ID_KEY = /\b((?:player|user|plr|uid|profile|data|save)s?[_\-/]?)(\d{3,})\b/gi;
const ID_VALUE = /\b((?:user_?id|player_?id|userid|uid|key|player|user|plr)\s*(?:=|:|\bis\b)?\s*["']?)(\d{3,})\b/gi;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export type Known = { names: string[]; ids: string[] };

export function scrubber(known: Known): (text: string) => string {
  const names = [...new Set(known.names.map((n) => n.trim()).filter((n) => n.length >= 3))].sort((a, b) => b.length - a.length);
  const ids = [...new Set(known.ids.filter((id) => /^\d+$/.test(id)))];
  // names match whole words only (case-insensitive), ids whole digit runs
  const nameRe = names.length ? new RegExp(`(?<![\\p{L}\\p{N}_])(?:${names.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}_])`, "giu") : null;
  const idRe = ids.length ? new RegExp(`(?<!\\d)(?:${ids.join("|")})(?!\\d)`, "g") : null;
  return (text) => {
    let out = text.replace(PLAYER_IN_PATH, "Players.<player>").replace(ID_KEY, "$1<id>").replace(ID_VALUE, "$1<id>");
    if (idRe) out = out.replace(idRe, "<id>");
    if (nameRe) out = out.replace(nameRe, "<player>");
    return out;
  };
}

/**
 * The tags a share view shows (`key:value`, `key=value` or a bare value): none whose key names a
 * player or user, none whose text holds a known name or id or anything the scrubber would replace.
 * Removed rather than scrubbed: a tag is a fact about one event, and a half-blanked one tells nothing.
 */
export function shareTags(tags: string[] | null, scrub: (text: string) => string): string[] | null {
  if (!tags) return null;
  const kept = tags.filter((tag) => {
    const cut = tag.search(/[:=]/);
    if (cut > 0 && isPersonalKey(tag.slice(0, cut))) return false;
    return scrub(tag) === tag;
  });
  return kept.length ? kept : null;
}
