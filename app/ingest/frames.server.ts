import { stackFrames } from "./fingerprint.server.js";

/**
 * What issue search matches in an issue's stack frames: each distinct frame of its events as
 * `script path` or `script path function`, without the line number (lines move with every update; the
 * script and function stay), parsed as grouping parses them (stackFrames). An issue keeps those of its
 * first events and of new ones up to FRAMES_MAX entries, one per line (error_groups.frames, written by
 * the group upsert: db/write-statements.ts).
 */
export const FRAMES_MAX = 32;
/** A longer entry is cut: a path or function name of this length is already unique to search by. */
const ENTRY_MAX = 200;

/** `path:line function` → `path function` (`path` alone without a function name). */
function entryOf(frame: string): string {
  const sp = frame.indexOf(" ");
  const loc = sp < 0 ? frame : frame.slice(0, sp);
  const colon = loc.lastIndexOf(":");
  const entry = (colon < 0 ? loc : loc.slice(0, colon)) + (sp < 0 ? "" : frame.slice(sp));
  return entry.length > ENTRY_MAX ? entry.slice(0, ENTRY_MAX) : entry;
}

// A storm repeats one stack thousands of times: the entries of recent stacks are kept (bounded, oldest
// dropped first; only short stacks, so the map stays small). The player's name changes the entries only
// where the stack contains it.
const MEMO_ENTRIES = 2000;
const MEMO_CHARS = 4096;
const memo = new Map<string, string[]>();

/** The distinct frame entries of one stack, top first (at most FRAMES_MAX). */
export function frameEntries(stack: string | null | undefined, playerName?: string | null): string[] {
  if (!stack) return [];
  const named = playerName && stack.includes(playerName) ? playerName : "";
  const short = stack.length <= MEMO_CHARS;
  const k = `${named}\u0000${stack}`;
  const hit = short ? memo.get(k) : undefined;
  if (hit) return hit;
  const entries = [...new Set(stackFrames(stack, named || null).map(entryOf))]
    .filter((e) => !e.includes("\n"))
    .slice(0, FRAMES_MAX);
  if (short) {
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    memo.set(k, entries);
  }
  return entries;
}

/** Adds a stack's entries to an issue's (in place), up to FRAMES_MAX. */
export function addEntries(into: string[], entries: string[]): void {
  for (const e of entries) {
    if (into.length >= FRAMES_MAX) return;
    if (!into.includes(e)) into.push(e);
  }
}
