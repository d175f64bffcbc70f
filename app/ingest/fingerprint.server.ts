import { hash as digest } from "node:crypto";
import { fingerprintFor as fingerprintForV1 } from "./fingerprint-v1.server";

/**
 * Grouping version 2: stack first.
 *
 * An event is grouped by the normalized frames of its stack (script path, line, function name) plus
 * the normalized *template* of its message; without a usable stack, by the template and the script
 * location the message starts with. When the message starts with the location of the top frame (a
 * Luau runtime error always does), that location stands for the stack, so the same error reported
 * with and without a stack lands in one issue.
 *
 * The template keeps what identifies code and replaces what identifies one occurrence: player names,
 * numbered instances in data paths (`Workspace.Map.Spawns.Spawn7` -> `Spawn<n>`), data store keys,
 * messaging topics and memory store queue/map names, the child name of `is not a valid member of`, asset ids, URLs' query strings,
 * vectors, durations, UUIDs, addresses and other numbers. Numbers that name a kind of failure (HTTP
 * status, Roblox error codes, argument positions) are kept.
 */
export const GROUPING_VERSION = 2;

const UUID = /\{?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}?/gi;
const HEX_ADDRESS = /\b0x[0-9a-f]+\b/gi;
// `Players.Builderman.PlayerGui` -> `Players.<player>.PlayerGui`; the name runs to the next dot,
// colon, quote, comma or space. `Players.LocalPlayer` is code, not a name, so it is kept.
export const PLAYER_IN_PATH = /\bPlayers\.(?!LocalPlayer\b)[^.\s:'",]+/g;
const ASSET_ID = /\b(rbxassetid:\/\/|rbxthumb:\/\/[^\s'"]*?id=|[?&]id=)\d+/gi;
const URL = /\bhttps?:\/\/([^\s?#'"()]+)(?:\?[^\s'"()]*)?/gi;
// `Key = Player_261`, `key: 42`, `key "Queue_7"`, `topic 'Party_48213'`: the value is data, not code
const KEY_VALUE = /\b(keys?|topic|queue|(?:sorted\s+)?map)(\s*[=:]\s*|\s+)(?:"[^"\n]*"|'[^'\n]*'|[^\s,;)'"]*\d[^\s,;)'"]*)/gi;
const NOT_A_MEMBER = /(^|[\s:])(?:"[^"\n]*"|[^\s"]+) is not a valid member of\b/g;
const DURATION = /(?<![\w.<])\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b/gi;
const NUM = String.raw`-?\d+(?:\.\d+)?(?:e[-+]?\d+)?`;
// Vector3/CFrame/UDim2 values: two to twelve comma-separated numbers, with or without parentheses
const VECTOR = new RegExp(String.raw`(?<![\w.<])\(?\s*${NUM}(?:\s*,\s*${NUM}){1,11}\s*\)?(?![\w])`, "gi");
// numbers that identify a kind of failure rather than an occurrence
const KEPT_NUMBER =
  /^\d{3}(?=:\s)|\bHTTP(?:\/\d\.\d)?\s+\d{3}\b|\b(?:error\s*code|code|status(?:\s*code)?)\s*[:=]?\s*\d+\b|#\d+\b|\bArgument\s+\d+\b/gi;
// A dotted instance path or script location; starts only at a token boundary, so the scan stays linear.
const PATH = /(?<![\w.<>])(?:game\.)?[A-Za-z_][\w]*(?:\.[\w<>]+)+/g;
const LOCATION = /((?<![\w.<>])[A-Za-z_][\w.<>]*:\d+)(?=[:\s]|$)|((?:,\s*|\b)[Ll]ine\s+\d+)/g;
const NUMBER = /(?<![\w.<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w<])/gi;
const DATA_ROOTS = new Set(["Workspace", "workspace"]);
const PLACEHOLDER = /[\ue000-\uefff]/g;
const DIGIT = /\d/;
const KEY_WORD = /key|topic|queue|map/i;

/**
 * One instance path: the player's segment of `Players.<name>` is replaced; under `Workspace` (a data
 * path: maps, spawned parts, characters) a number ending a segment is a placeholder, `Spawn7` -> `Spawn<n>`.
 */
export function normalizePath(path: string, playerName?: string | null): string {
  const segs = path.split(".");
  const start = segs[0] === "game" ? 1 : 0;
  const data = DATA_ROOTS.has(segs[start] ?? "");
  for (let i = start; i < segs.length; i++) {
    const s = segs[i];
    if (i === start + 1 && segs[start] === "Players" && s !== "LocalPlayer") segs[i] = "<player>";
    else if (playerName && s === playerName && i > start) segs[i] = "<player>";
    else if (data && i > start) segs[i] = s.replace(/^(\d+)$|(?<=[A-Za-z_])\d+$/, "<n>");
  }
  return segs.join(".");
}

/** Protects pieces of text from later replacements: each becomes one private-use character. */
class Keeper {
  private kept: string[] = [];
  keep = (s: string) => {
    this.kept.push(s);
    return String.fromCharCode(0xe000 + this.kept.length - 1);
  };
  restore = (s: string) => s.replace(PLACEHOLDER, (c) => this.kept[c.charCodeAt(0) - 0xe000] ?? "");
}

function normalizeV2(text: string, playerName?: string | null): string {
  const k = new Keeper();
  // each pass runs only when its marker is present: most messages need few of them
  let out = text.slice(0, 8192).replace(PLACEHOLDER, "");
  if (out.includes("-")) out = out.replace(UUID, "<uuid>");
  if (out.includes("0x") || out.includes("0X")) out = out.replace(HEX_ADDRESS, "<addr>");
  if (out.includes("://")) {
    out = out
      .replace(ASSET_ID, (_m, prefix: string) => `${prefix}<id>`)
      // a URL keeps its host and path (numeric segments replaced); its query string is dropped
      .replace(URL, (_m, rest: string) => k.keep(`https://${rest.replace(/\/\d+(?=\/|$)/g, "/<n>")}`));
  } else if (out.includes("id=")) out = out.replace(ASSET_ID, (_m, prefix: string) => `${prefix}<id>`);
  if (KEY_WORD.test(out)) out = out.replace(KEY_VALUE, (_m, word: string, sep: string) => k.keep(`${word}${sep}<key>`));
  if (out.includes(" is not a valid member of")) out = out.replace(NOT_A_MEMBER, (_m, lead: string) => `${lead}<child> is not a valid member of`);
  if (out.includes(":WaitForChild(")) {
    // `Parent:WaitForChild("Spawn7")` under a data path: the child is a path segment too
    out = out.replace(/((?:game\.)?[Ww]orkspace[\w.<>]*):WaitForChild\("([^"\n]*)"\)/g, (_m, parent: string, child: string) =>
      `${parent}:WaitForChild("${normalizePath(`Workspace.${child}`, playerName).slice("Workspace.".length)}")`,
    );
  }
  if (out.includes(".")) out = out.replace(PATH, (p) => normalizePath(p, playerName));
  if (DIGIT.test(out)) {
    out = out.replace(LOCATION, k.keep).replace(KEPT_NUMBER, k.keep).replace(DURATION, "<duration>");
    if (out.includes(",")) out = out.replace(VECTOR, "<vector>");
    out = k.restore(out.replace(NUMBER, "<n>"));
  } else out = k.restore(out);
  return out.replace(/\s+/g, " ").trim();
}

// `ServerScriptService.Combat:123: text` or `ServerScriptService.Combat, line 123: text`
const LEADING_LOCATION = /^\s*(?:Script\s+')?([A-Za-z_][\w.<> ]*?)(?::(\d+)|'?,\s*[Ll]ine\s+(\d+))\s*:?\s*/;

/** The message's template (without a leading script location) and that location, if any. */
export function messageTemplate(message: string, playerName?: string | null): { template: string; location: string | null } {
  const norm = normalizeV2(message, playerName);
  const m = LEADING_LOCATION.exec(norm);
  if (m && m[1].includes(".")) {
    return { template: norm.slice(m[0].length), location: `${m[1].trim()}:${m[2] ?? m[3]}` };
  }
  return { template: norm, location: null };
}

// `Path:123 function name`, `Script 'Path', Line 123 - function name`, `Path, line 123 - function name`
const FRAME =
  /^(?:Script\s+'([^']+)',\s*Line\s+(\d+)|([A-Za-z_][\w.<> ]*?):(\d+)|([A-Za-z_][\w<>]*(?:\.[\w<> ]+)+?)\s*,\s*[Ll]ine\s+(\d+))(?:\s*[-:]?\s*(?:function\s+|in\s+function\s+)?'?([^'\s()]+)'?)?/i;
const MAX_FRAMES = 32;

/**
 * The usable frames of a stack, top first, as `path:line function`; lines without a script location
 * (`[C]` frames, `Stack Begin`/`Stack End`) are not frames.
 */
export function stackFrames(stack: string | null | undefined, playerName?: string | null): string[] {
  if (!stack) return [];
  const frames: string[] = [];
  for (const raw of stack.slice(0, 65536).split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("[C]") || /^Stack (Begin|End)$/i.test(line)) continue;
    const m = FRAME.exec(line);
    if (!m) continue;
    const path = normalizePath((m[1] ?? m[3] ?? m[5]).trim(), playerName);
    const lineNo = m[2] ?? m[4] ?? m[6];
    const fn = m[7] && !/^\d/.test(m[7]) ? ` ${m[7]}` : "";
    frames.push(`${path}:${lineNo}${fn}`);
    if (frames.length >= MAX_FRAMES) break;
  }
  return frames;
}

const hash = (parts: string[]) => digest("sha256", parts.join("\u001f"), "hex").slice(0, 32);

type Analysis = { key: string[]; culprit: string | null };

function analyze(message: string, stack: string | null | undefined, playerName?: string | null): Analysis {
  const { template, location } = messageTemplate(message, playerName);
  const frames = stackFrames(stack, playerName);
  const at = (f: string) => f.split(" ", 1)[0];
  const pathOf = (loc: string) => loc.slice(0, loc.lastIndexOf(":"));
  if (frames.length > 0) {
    const culprit = pathOf(at(frames[0]));
    // the message names the top frame: that location is the error's identity, whatever called it
    if (location && at(frames[0]) === location) return { key: ["v2", template, location], culprit };
    return { key: ["v2", template, ...frames], culprit };
  }
  return location ? { key: ["v2", template, location], culprit: pathOf(location) } : { key: ["v2", template], culprit: null };
}

// Game servers send the same few messages and stacks over and over (a storm is one text thousands of
// times, from as many players), so the analysis of recent texts is kept: a bounded map, oldest entries
// dropped first, and only for texts short enough that the map stays small (at most MEMO_ENTRIES x
// MEMO_CHARS characters). The player's name changes the analysis only where the text contains it
// (a path segment equal to it is replaced), so it is part of the key only then: one text sent by
// thousands of players is one entry, not one per player that pushes the others out.
const MEMO_ENTRIES = 5000;
const MEMO_CHARS = 4096;
const memo = new Map<string, Analysis & { fingerprint: string }>();

/** The player's name if the message or stack contains it, else "" (the only case where it changes the analysis). */
const namedIn = (message: string, stack: string | null | undefined, playerName?: string | null) =>
  playerName && (message.includes(playerName) || stack?.includes(playerName)) ? playerName : "";

function analyzeMemo(message: string, stack: string | null | undefined, playerName?: string | null) {
  const long = message.length + (stack?.length ?? 0) > MEMO_CHARS;
  const k = long ? "" : `${namedIn(message, stack, playerName)}\u0000${message}\u0000${stack ?? ""}`;
  const hit = long ? undefined : memo.get(k);
  if (hit) return hit;
  const a = analyze(message, stack, playerName);
  const done = { ...a, fingerprint: hash(a.key) };
  if (!long) {
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    memo.set(k, done);
  }
  return done;
}

/** The parts a version-2 fingerprint is a hash of (exported for tests and for the README's examples). */
export function groupingKey(message: string, stack: string | null | undefined, playerName?: string | null): string[] {
  return analyze(message, stack, playerName).key;
}

export function defaultFingerprint(message: string, stack: string | null | undefined, playerName?: string | null): string {
  return analyzeMemo(message, stack, playerName).fingerprint;
}

/** The script path of the top frame (player names and data-path numbers replaced), or of the location the message starts with. */
export function culpritFor(message: string, stack: string | null | undefined, playerName?: string | null): string | null {
  return analyzeMemo(message, stack, playerName).culprit;
}

export type Grouping = {
  /** the fingerprint of the current grouping version */
  fingerprint: string;
  /** the previous version's fingerprint when it differs and was asked for: an event without a current group joins that one's group */
  secondary: string | null;
  culprit: string | null;
};

/**
 * A client fingerprint (string or array) replaces the default grouping; `{{ default }}` inside the
 * array stands for the default fingerprint. The result is always a hash, so it has a fixed length.
 * `needsSecondary(fingerprint)` says whether the previous version's fingerprint is worth computing:
 * once a fingerprint has a group or an alias it is never consulted again.
 */
export function groupEvent(
  message: string,
  stack: string | null | undefined,
  custom?: string | string[] | null,
  playerName?: string | null,
  needsSecondary: (fingerprint: string) => boolean = () => true,
): Grouping {
  const a = analyzeMemo(message, stack, playerName);
  const defaultFp = a.fingerprint;
  let fingerprint = defaultFp;
  if (custom != null) {
    const parts = Array.isArray(custom) ? custom : [custom];
    fingerprint = hash(["custom", ...parts.map((p) => (p.trim() === "{{ default }}" || p.trim() === "{{default}}" ? defaultFp : p))]);
  }
  if (!needsSecondary(fingerprint)) return { fingerprint, secondary: null, culprit: a.culprit };
  const v1 = fingerprintForV1(message, stack, custom);
  return { fingerprint, secondary: v1 === fingerprint ? null : v1, culprit: a.culprit };
}

export const fingerprintsFor = (message: string, stack: string | null | undefined, custom?: string | string[] | null, playerName?: string | null) =>
  groupEvent(message, stack, custom, playerName);

export const fingerprintFor = (message: string, stack: string | null | undefined, custom?: string | string[] | null) =>
  groupEvent(message, stack, custom).fingerprint;

/**
 * (project, fingerprint) pairs this process has written: each has a group or an alias from then on,
 * so its previous-version fingerprint need not be computed again. Bounded; forgetting is harmless.
 */
export class KnownFingerprints {
  private seen = new Set<string>();
  constructor(private readonly max = 100_000) {}
  has(projectId: string, fingerprint: string) {
    return this.seen.has(`${projectId}:${fingerprint}`);
  }
  add(projectId: string, fingerprint: string) {
    if (this.seen.size >= this.max) this.seen.delete(this.seen.values().next().value!);
    this.seen.add(`${projectId}:${fingerprint}`);
  }
}
