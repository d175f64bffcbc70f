import { hash as digest } from "node:crypto";
import { fingerprintFor as fingerprintForV1 } from "./fingerprint-v1.server";

/**
 * Grouping version 4: lines move, bugs don't.
 *
 * Version 4 counts a frame by its script path and function name, not its line: an update that moves a
 * function down the script leaves its errors in their issues. The line counts only for a frame
 * without a function name (a script's main chunk, an anonymous function), and then only for the top
 * frame; a caller without a name counts by its script path alone. An event without a stack keys
 * exactly as under version 3, so its fingerprint is unchanged; an event whose version-4 fingerprint
 * is new joins the issue of its version-3 fingerprint through the secondary fingerprint.
 *
 * Version 4 also treats data as a variable wherever it appears, not only next to a word that names it:
 * opaque ids in any alphabet and case (`<id>`), ids of 5+ digits inside names (`Inventory_<n>`), and
 * quoted strings that are data rather than code (`'<str>'`). A text holding none of these keeps its
 * version-3 template; one that does joins its version-3 issue through the secondary fingerprint too.
 *
 * Version 3: stack first.
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
 *
 * Version 3 adds, as Sentry's message parameterization does, dates and timestamps, hex ids and hashes,
 * IP addresses and emails (also inside URLs), and what the event itself says: its own player name and
 * user id are variables wherever they appear in the text. A text holding none of these has the same
 * key, so the same fingerprint, as under version 2 (the key keeps its `v2` tag): only texts that
 * version 2 had split change, and those join their version-2 issue through the secondary fingerprint.
 */
export const GROUPING_VERSION = 4;

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
// version 3: what Sentry's parameterization classifies, as Roblox games print it
const MONTH = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec";
const WEEKDAY = "Mon|Tue|Wed|Thu|Fri|Sat|Sun";
const ZONE = String.raw`(?:Z|[+-][0-2]\d:?[0-5]\d)`;
const CLOCK = String.raw`[0-2]?\d:[0-5]\d:[0-5]\d(?:[.,]\d+)?`;
const DATE_FORMS = [
  // ISO 8601 / RFC 3339 (`DateTime:ToIsoDate()`, `os.date("!%Y-%m-%dT%H:%M:%SZ")`), with or without a time
  String.raw`\d{4}-[01]\d-[0-3]\d(?:[T ][0-2]\d:[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?${ZONE}?)?`,
  String.raw`\d{8}T\d{6}(?:[.,]\d+)?${ZONE}?`,
  // RFC 1123 (HTTP `Date` headers): `Wed, 25 Nov 2026 21:20:48 GMT`
  String.raw`(?:(?:${WEEKDAY}),\s)?\d{1,2}\s(?:${MONTH})\s\d{4}\s${CLOCK}(?:\s(?:GMT|UTC|[+-]\d{4}))?`,
  // `os.date("%c")`: `Wed Nov 25 21:20:48 2026`
  String.raw`(?:(?:${WEEKDAY})\s+)?(?:${MONTH})\s+\d{1,2}\s+${CLOCK}\s+\d{4}`,
  // a time of day with seconds: `21:20:48`, `21:20:48.123Z`
  String.raw`${CLOCK}${ZONE}?`,
];
const DATE = new RegExp(String.raw`(?<![\w:.])(?:${DATE_FORMS.join("|")})(?![\w:]|\.\d)`, "g");
// every form has an ISO date, a time with seconds or a compact ISO stamp: a cheap test before the scan
const DATE_HINT = /\d{4}-[01]\d-|\d:[0-5]\d:[0-5]\d|\d{8}T/;
// hex ids and hashes (receipt/purchase ids, MD5, SHA-1, SHA-256): 8 to 128 hex digits of one case,
// with at least one digit and one letter (all-digit runs are numbers, all-letter runs are words)
const HEX_ID = /(?<![\w.-])(?:(?=[a-f]*\d)(?=\d*[a-f])[0-9a-f]{8,128}|(?=[A-F]*\d)(?=\d*[A-F])[0-9A-F]{8,128})(?![\w-])/g;
const OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
const IPV4 = new RegExp(String.raw`(?<![\w.])(?:${OCTET}\.){3}${OCTET}(?![\w]|\.\d)`, "g");
// IPv6 candidates (validated by isIpv6()): colon-separated groups of up to four hex digits
const IPV6 = /(?<![\w:.])[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?![\w:])/gi;
const EMAIL = /(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])/g;
const DATA_ROOTS = new Set(["Workspace", "workspace"]);
const PLACEHOLDER = /[\ue000-\uefff]/g;
const DIGIT = /\d/;
const KEY_WORD = /key|topic|queue|map/i;
// version 4: opaque ids in any alphabet and case (request ids, tokens, ULIDs, base32/base62): a run of
// 8+ ASCII letters and digits holding a digit, not part of a dotted path (`Module.Item2Name`) nor a
// script location (`Script:12`); isOpaqueId() decides. Each run starts only where the previous
// character is not alphanumeric, so the scan stays linear.
const ALNUM_TOKEN = /(?<![A-Za-z0-9.])(?=[A-Za-z]*\d)[A-Za-z0-9]{8,}(?![A-Za-z0-9]|[.:]\w)/g;
// version 4: an id of 5+ digits glued to a name (`Player_1538394712`, `user98817723`, `98817723_inv`):
// whatever the word, the number is data (a year, `Season2026`, has 4 digits and stays)
const EMBEDDED_ID = /(?<=[A-Za-z_])\d{5,}|(?<!\w)\d{5,}(?=[A-Za-z_])/g;
const FIVE_DIGITS = /\d{5}/;
// version 4: a quoted string of 1-200 characters on one line; quotedData() decides whether it is data.
// The opening quote follows no word character (`can't` opens nothing); bounded, so the scan stays linear.
const QUOTED = /(?<![\w'"])(?:'([^'\n]{1,200})'|"([^"\n]{1,200})")(?!\w)/g;
// a single identifier (ASCII letters, digits, `_`, or an already replaced `<player>`, `<id>`…)
const IDENTIFIER = /^[\w<>\ue000-\uefff]+$/;
// an instance path or method call inside the quotes: `Workspace.Map`, `Players.<player>:WaitForChild(`
const PATH_JOINT = /[\w>][.:][A-Za-z_<]|\(/;
// an operator or bracket a syntax error names: `')'`, `'=='`, `'..'`
const OPERATOR = /^[!-/:-@[-`{-~]{1,3}$/;

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

/**
 * Whether version 3's classes replaced anything (if not, the text reads exactly as under version 2),
 * and whether version 4's data forms did (if not, the template is version 3's).
 */
type Touched = { touched: boolean; data?: boolean };
const WORD_CHAR = /\w/;
const LETTER = /[A-Za-z_]/;

/**
 * Each whole-word occurrence of the player's name (not part of a longer name) replaced by `<player>`;
 * a segment after a dot is left to the path rule (`Players.<player>`, `Workspace.<player>`), which
 * already replaced it under version 2.
 */
function replacePlayer(text: string, name: string, st: Touched): string {
  const to = "<player>";
  let out = "";
  let from = 0;
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + name.length)) {
    const before = text[i - 1] ?? " ";
    const after = text[i + name.length] ?? " ";
    if (WORD_CHAR.test(before) || WORD_CHAR.test(after) || before === ".") continue;
    out += text.slice(from, i) + to;
    from = i + name.length;
    st.touched = true;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * The user id inside a name (`Player_1538394712`, `save1538394712`) replaced by `<n>`; standing alone
 * it is a number like any other (`<n>` too). Ids shorter than 3 digits (the first accounts) are left
 * to the number rules, so user 12's `Quest12` stays `Quest12`.
 */
function replaceUserId(text: string, id: string, st: Touched): string {
  let out = "";
  let from = 0;
  for (let i = text.indexOf(id); i >= 0; i = text.indexOf(id, i + id.length)) {
    const before = text[i - 1] ?? " ";
    const after = text[i + id.length] ?? " ";
    if (DIGIT.test(before) || DIGIT.test(after) || !(LETTER.test(before) || LETTER.test(after))) continue;
    out += text.slice(from, i) + "<n>";
    from = i + id.length;
    st.touched = true;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A valid IPv6 address: eight groups, or fewer around one `::`. */
function isIpv6(s: string): boolean {
  const dbl = s.indexOf("::");
  if (dbl < 0) return s.split(":").length === 8 && !s.split(":").includes("");
  if (dbl !== s.lastIndexOf("::")) return false;
  const groups = [s.slice(0, dbl), s.slice(dbl + 2)].filter((p) => p !== "").flatMap((p) => p.split(":"));
  return groups.length >= 1 && groups.length <= 7 && !groups.includes("");
}

// replacement callbacks made once (not per call): each notes that it replaced something
let replaced = false;
const replacer = (to: string) => () => ((replaced = true), to);
const TO_DATE = replacer("<date>");
const TO_EMAIL = replacer("<email>");
const TO_IP = replacer("<ip>");
const TO_HEX = replacer("<hex>");
const TO_IPV6 = (m: string) => (isIpv6(m) ? ((replaced = true), "<ip>") : m);
let dataReplaced = false;
const TO_N = () => ((dataReplaced = true), "<n>");
const TO_ID = (m: string) => (isOpaqueId(m) ? ((dataReplaced = true), "<id>") : m);

/**
 * An opaque id among runs of 8+ letters and digits (with a digit; ALNUM_TOKEN): one that starts with a
 * digit (no identifier does: `01HGW2N7Q8ZK3X4Y5V6T7R8S9A`, `7KX9M2QPZ4W8`), holds 3 or more separate
 * runs of digits (`aZ9kQ2mX7pL0`: code numbers a name once or twice, `Vector3int16`), or is 16+
 * characters long with 2 or more digits (`JBSWY3DPEHPK3PXP`). All digits is a number, left to the
 * number rules.
 */
function isOpaqueId(t: string): boolean {
  let digits = 0;
  let runs = 0;
  let prev = false;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    const d = c >= 48 && c <= 57;
    if (d) {
      digits++;
      if (!prev) runs++;
    }
    prev = d;
  }
  if (digits === t.length) return false;
  return t.charCodeAt(0) <= 57 || runs >= 3 || (t.length >= 16 && digits >= 2);
}

/**
 * A quoted string is code, and stays, when it is a single identifier (`'Health'`, `"leaderstats"`),
 * holds an instance path or call (`"Workspace.Map.Spawns"`, `'Players.<player>:WaitForChild("x")'`),
 * is a call's argument or an index (`WaitForChild("Red Base")`, `Teams["Red Base"]`), or is an operator
 * or bracket (`Expected ')'`); otherwise it is data (`'Golden Dragon 🐉'`,
 * `"炎の剣"`, `"Mr. Whiskers"`, `'Pet #4'`) and becomes `'<str>'`, keeping its quotes.
 */
function quotedData(m: string, single: string | undefined, double: string | undefined, offset: number, text: string): string {
  const c = single ?? double ?? "";
  const before = text[offset - 1];
  if (before === "(" || before === "[" || IDENTIFIER.test(c) || PATH_JOINT.test(c) || OPERATOR.test(c)) return m;
  dataReplaced = true;
  return single != null ? "'<str>'" : '"<str>"';
}

function colons(s: string): number {
  let n = 0;
  for (let i = s.indexOf(":"); i >= 0 && n < 7; i = s.indexOf(":", i + 1)) n++;
  return n;
}

/**
 * Version 3's classes, as Sentry's message parameterization has them: dates and timestamps, emails,
 * IP addresses, hex ids and hashes, and the event's own player name.
 */
function parameterize(text: string, playerName: string | null | undefined, st: Touched, v4: boolean): string {
  let out = text;
  replaced = false;
  if (DIGIT.test(out)) {
    if (DATE_HINT.test(out)) out = out.replace(DATE, TO_DATE);
    if (out.includes("@")) out = out.replace(EMAIL, TO_EMAIL);
    if (out.includes(".")) out = out.replace(IPV4, TO_IP);
    if (out.includes("::") || colons(out) >= 7) out = out.replace(IPV6, TO_IPV6);
    out = out.replace(HEX_ID, TO_HEX);
    if (v4) {
      // version 4: opaque ids, and ids inside names
      dataReplaced = false;
      out = out.replace(ALNUM_TOKEN, TO_ID);
      if (FIVE_DIGITS.test(out)) out = out.replace(EMBEDDED_ID, TO_N);
      if (dataReplaced) st.data = true;
    }
  } else if (out.includes("@")) out = out.replace(EMAIL, TO_EMAIL);
  if (replaced) st.touched = true;
  if (playerName && playerName.length >= 3 && out.includes(playerName)) out = replacePlayer(out, playerName, st);
  return out;
}

function normalize(text: string, playerName: string | null | undefined, userId: string | null, v3: boolean, v4: boolean, st: Touched): string {
  const k = new Keeper();
  // each pass runs only when its marker is present: most messages need few of them
  let out = text.slice(0, 8192).replace(PLACEHOLDER, "");
  if (out.includes("-")) out = out.replace(UUID, "<uuid>");
  if (out.includes("0x") || out.includes("0X")) out = out.replace(HEX_ADDRESS, "<addr>");
  if (out.includes("://")) {
    out = out
      .replace(ASSET_ID, (_m, prefix: string) => `${prefix}<id>`)
      // a URL keeps its host and path (numeric segments replaced; under version 3 also dates, emails,
      // addresses, hex ids and the player's name); its query string is dropped
      .replace(URL, (_m, rest: string) => k.keep(`https://${(v3 ? parameterize(rest, playerName, st, v4) : rest).replace(/\/\d+(?=\/|$)/g, "/<n>")}`));
  } else if (out.includes("id=")) out = out.replace(ASSET_ID, (_m, prefix: string) => `${prefix}<id>`);
  if (KEY_WORD.test(out)) out = out.replace(KEY_VALUE, (_m, word: string, sep: string) => k.keep(`${word}${sep}<key>`));
  if (v3) out = parameterize(out, playerName, st, v4);
  if (out.includes(" is not a valid member of")) out = out.replace(NOT_A_MEMBER, (_m, lead: string) => `${lead}<child> is not a valid member of`);
  if (v4 && (out.includes("'") || out.includes('"'))) {
    // version 4: quoted data (names with spaces, punctuation, emoji, non-Latin letters); code stays
    dataReplaced = false;
    out = out.replace(QUOTED, quotedData);
    if (dataReplaced) st.data = true;
  }
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
    if (v3 && userId && out.includes(userId)) out = replaceUserId(out, userId, st);
    out = k.restore(out.replace(NUMBER, "<n>"));
  } else out = k.restore(out);
  return out.replace(/\s+/g, " ").trim();
}

/** A user id worth looking for in the text (3 digits or more), as a string. */
const idText = (userId?: number | string | null) => {
  if (typeof userId === "number") return Number.isSafeInteger(userId) && userId >= 100 ? String(userId) : null;
  const s = userId?.trim() ?? "";
  return /^\d{3,}$/.test(s) ? s : null;
};

// `ServerScriptService.Combat:123: text` or `ServerScriptService.Combat, line 123: text`
const LEADING_LOCATION = /^\s*(?:Script\s+')?([A-Za-z_][\w.<> ]*?)(?::(\d+)|'?,\s*[Ll]ine\s+(\d+))\s*:?\s*/;

function templateOf(message: string, playerName: string | null | undefined, userId: string | null, v3: boolean, v4: boolean, st: Touched) {
  const norm = normalize(message, playerName, userId, v3, v4, st);
  const m = LEADING_LOCATION.exec(norm);
  if (m && m[1].includes(".")) {
    return { template: norm.slice(m[0].length), location: `${m[1].trim()}:${m[2] ?? m[3]}` };
  }
  return { template: norm, location: null };
}

/** The message's template (without a leading script location) and that location, if any. */
export function messageTemplate(
  message: string,
  playerName?: string | null,
  userId?: number | string | null,
): { template: string; location: string | null } {
  return templateOf(message, playerName, idText(userId), true, true, { touched: false });
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

// names that say the function has none: Luau's and Sentry SDKs' forms of an anonymous function
const ANONYMOUS = new Set(["<anonymous>", "anonymous", "?", "<unknown>"]);

/**
 * Version 4's identity of each frame (from stackFrames): `path function` for a named frame, whatever
 * its line; for a frame without a function name, `path:line` when it is the top frame, else `path`.
 */
export function frameIdentities(frames: string[]): string[] {
  return frames.map((f, i) => {
    const sp = f.indexOf(" ");
    const at = sp < 0 ? f : f.slice(0, sp);
    const fn = sp < 0 ? "" : f.slice(sp + 1);
    if (fn !== "" && !ANONYMOUS.has(fn)) return `${at.slice(0, at.lastIndexOf(":"))} ${fn}`;
    return i === 0 ? at : at.slice(0, at.lastIndexOf(":"));
  });
}

const hash = (parts: string[]) => digest("sha256", parts.join("\u001f"), "hex").slice(0, 32);

type Analysis = { key: string[]; culprit: string | null; touched: boolean; data: boolean };

/**
 * The grouping key; `v4: false` gives version 3's key (frames by line), `v3: false` too version 2's.
 */
function analyze(
  message: string,
  stack: string | null | undefined,
  playerName: string | null | undefined,
  userId: string | null,
  v3 = true,
  v4 = v3,
): Analysis {
  const st: Touched = { touched: false };
  const { template, location } = templateOf(message, playerName, userId, v3, v4, st);
  const frames = stackFrames(stack, playerName);
  const at = (f: string) => f.split(" ", 1)[0];
  const pathOf = (loc: string) => loc.slice(0, loc.lastIndexOf(":"));
  // the tag stays `v2`: a text without version 3's classes keeps its version-2 fingerprint
  const done = (key: string[], culprit: string | null) => ({ key: ["v2", ...key], culprit, touched: st.touched, data: v4 && st.data === true });
  if (frames.length > 0) {
    const culprit = pathOf(at(frames[0]));
    // the message names the top frame: that location is the error's identity, whatever called it
    // (the message and the stack come from one event, so their lines agree even after an update)
    if (location && at(frames[0]) === location) return done([template, v4 ? frameIdentities(frames)[0] : location], culprit);
    return done([template, ...(v4 ? frameIdentities(frames) : frames)], culprit);
  }
  return location ? done([template, location], pathOf(location)) : done([template], null);
}

// Game servers send the same few messages and stacks over and over (a storm is one text thousands of
// times, from as many players), so the analysis of recent texts is kept: a bounded map, oldest entries
// dropped first, and only for texts short enough that the map stays small (at most MEMO_ENTRIES x
// MEMO_CHARS characters). The player's name and user id change the analysis only where the text
// contains them, so they are part of the key only then: one text sent by thousands of players is one
// entry, not one per player that pushes the others out.
const MEMO_ENTRIES = 5000;
const MEMO_CHARS = 4096;
const memo = new Map<string, Memo>();

/** The player's name if the message or stack contains it, else "" (the only case where it changes the analysis). */
const namedIn = (message: string, stack: string | null | undefined, playerName?: string | null) =>
  playerName && (message.includes(playerName) || stack?.includes(playerName)) ? playerName : "";

type Memo = Analysis & { fingerprint: string; parts?: GroupingParts };

function analyzeMemo(message: string, stack: string | null | undefined, playerName?: string | null, userId?: number | string | null): Memo {
  const id = idText(userId);
  const long = message.length + (stack?.length ?? 0) > MEMO_CHARS;
  const k = long ? "" : `${namedIn(message, stack, playerName)}\u0000${id && message.includes(id) ? id : ""}\u0000${message}\u0000${stack ?? ""}`;
  const hit = long ? undefined : memo.get(k);
  if (hit) return hit;
  const a = analyze(message, stack, playerName, id);
  const done = { ...a, fingerprint: hash(a.key) };
  if (!long) {
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    memo.set(k, done);
  }
  return done;
}

/** The parts a fingerprint is a hash of (exported for tests and for the examples in docs/grouping.md). */
export function groupingKey(message: string, stack: string | null | undefined, playerName?: string | null, userId?: number | string | null): string[] {
  return analyze(message, stack, playerName, idText(userId)).key;
}

export function defaultFingerprint(message: string, stack: string | null | undefined, playerName?: string | null, userId?: number | string | null): string {
  return analyzeMemo(message, stack, playerName, userId).fingerprint;
}

/**
 * What the learned templates work on (app/ingest/miner.server.ts): the template the default key is
 * made of, and the rest of the key (the frames' identities, the leading location, or none) as a hash,
 * the *location*. Made from the same analysis as the default fingerprint, so it changes no fingerprint;
 * kept with the analysis of a recent text, so a repeated text costs nothing more. `bucket` is the
 * location and the template's word count, as the learned templates are looked up by.
 */
export type GroupingParts = {
  location: string;
  template: string;
  bucket: string;
  /** the template's words, set by the first look-up that needs them (kept with the analysis, as the rest) */
  words?: string[];
};

const partsOf = (a: Memo): GroupingParts => {
  if (a.parts) return a.parts;
  const location = hash(["location", ...a.key.slice(2)]);
  const template = a.key[1];
  let words = template === "" ? 0 : 1;
  for (let i = template.indexOf(" "); i >= 0; i = template.indexOf(" ", i + 1)) words++;
  return (a.parts = { location, template, bucket: `${location}:${words}` });
};

export function groupingParts(message: string, stack: string | null | undefined, playerName?: string | null, userId?: number | string | null): GroupingParts {
  return partsOf(analyzeMemo(message, stack, playerName, userId));
}

/** Version 3's default fingerprint (frames by line): the previous version's. */
export function defaultFingerprintV3(message: string, stack: string | null | undefined, playerName?: string | null, userId?: number | string | null): string {
  return hash(analyze(message, stack, playerName, idText(userId), true, false).key);
}

/** Version 2's default fingerprint. */
export function defaultFingerprintV2(message: string, stack: string | null | undefined, playerName?: string | null): string {
  return hash(analyze(message, stack, playerName, null, false).key);
}

/** The script path of the top frame (player names and data-path numbers replaced), or of the location the message starts with. */
export function culpritFor(message: string, stack: string | null | undefined, playerName?: string | null): string | null {
  return analyzeMemo(message, stack, playerName).culprit;
}

export type Grouping = {
  /** the fingerprint of the current grouping version */
  fingerprint: string;
  /**
   * the earlier versions' fingerprints that differ from it, newest version first, when asked for: an
   * event without a current group joins the group of the first of them that has one (or an alias),
   * so an issue any earlier version made keeps its error even when the versions between made none.
   * Version 3's when version 4's frames changed the key (a stack with lines) or its data forms changed
   * the template; version 2's when version 3's classes changed the text (version 2 had split it);
   * version 1's always.
   */
  older: string[];
  culprit: string | null;
  /** default grouping's parts, what a learned template may cover (see groupingParts); null with a client fingerprint */
  parts: GroupingParts | null;
};

const customFingerprint = (custom: string | string[], defaultFp: string) => {
  const parts = Array.isArray(custom) ? custom : [custom];
  return hash(["custom", ...parts.map((p) => (p.trim() === "{{ default }}" || p.trim() === "{{default}}" ? defaultFp : p))]);
};

/**
 * A client fingerprint (string or array) replaces the default grouping; `{{ default }}` inside the
 * array stands for the default fingerprint. The result is always a hash, so it has a fixed length.
 * `needsOlder(fingerprint)` says whether the earlier versions' fingerprints are worth computing:
 * once a fingerprint has a group or an alias they are never consulted again. `userId` is the event's
 * own user id: inside a name in the text it is a variable.
 */
export function groupEvent(
  message: string,
  stack: string | null | undefined,
  custom?: string | string[] | null,
  playerName?: string | null,
  needsOlder: (fingerprint: string) => boolean = () => true,
  userId?: number | string | null,
): Grouping {
  const a = analyzeMemo(message, stack, playerName, userId);
  const fingerprint = custom != null ? customFingerprint(custom, a.fingerprint) : a.fingerprint;
  const parts = custom != null ? null : partsOf(a);
  const older: string[] = [];
  if (!needsOlder(fingerprint)) return { fingerprint, older, culprit: a.culprit, parts };
  const add = (fp: string) => {
    if (fp !== fingerprint && !older.includes(fp)) older.push(fp);
  };
  const withCustom = (defaultFp: string) => (custom != null ? customFingerprint(custom, defaultFp) : defaultFp);
  // version 4's frames or data forms changed the key: the issue version 3 made (by lines, and
  // splitting those forms); any other event without a stack keys as under version 3
  if (stack || a.data) add(withCustom(defaultFingerprintV3(message, stack, playerName, userId)));
  // version 3's classes changed the text: the issue version 2 made while it split the text
  if (a.touched) add(withCustom(defaultFingerprintV2(message, stack, playerName)));
  add(fingerprintForV1(message, stack, custom));
  return { fingerprint, older, culprit: a.culprit, parts };
}

export const fingerprintsFor = (
  message: string,
  stack: string | null | undefined,
  custom?: string | string[] | null,
  playerName?: string | null,
  userId?: number | string | null,
) => groupEvent(message, stack, custom, playerName, undefined, userId);

export const fingerprintFor = (message: string, stack: string | null | undefined, custom?: string | string[] | null) =>
  groupEvent(message, stack, custom).fingerprint;

/**
 * (project, fingerprint) pairs this process has written: each has a group or an alias from then on,
 * so its previous-version fingerprint need not be computed again. Bounded; forgetting is harmless.
 */
export class KnownFingerprints {
  /** by project: a fingerprint string is looked up as it is (its hash is kept with it), no key is built per event */
  private readonly seen = new Map<string, Set<string>>();
  private size = 0;
  constructor(private readonly max = 100_000) {}
  has(projectId: string, fingerprint: string) {
    return this.seen.get(projectId)?.has(fingerprint) ?? false;
  }
  add(projectId: string, fingerprint: string) {
    let fps = this.seen.get(projectId);
    if (fps?.has(fingerprint)) return;
    if (this.size >= this.max) this.forgetOne();
    if (!fps) this.seen.set(projectId, (fps = new Set()));
    fps.add(fingerprint);
    this.size++;
  }
  /** the first project's oldest fingerprint */
  private forgetOne() {
    const [projectId, fps] = this.seen.entries().next().value!;
    fps.delete(fps.values().next().value!);
    this.size--;
    if (fps.size === 0) this.seen.delete(projectId);
  }
}
