import { hash as digest } from "node:crypto";

/**
 * Grouping version 1, kept unchanged: fingerprints of groups made before grouping version 2 are still
 * looked up with it, so upgrading does not split existing issues.
 * A hash of the normalized message and the normalized stack frames.
 * Normalization keeps what identifies code (script paths and their line numbers) and drops what
 * identifies one occurrence (player names inside instance paths, UUIDs, hex addresses, other numbers).
 */

const UUID = /\{?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}?/gi;
const HEX_ADDRESS = /\b0x[0-9a-f]+\b/gi;
// `Players.Builderman.PlayerGui` -> `Players.<player>.PlayerGui`; the name runs to the next dot,
// colon, quote, comma or space. `Players.LocalPlayer` is code, not a name, so it is kept.
const PLAYER_IN_PATH = /\bPlayers\.(?!LocalPlayer\b)[^.\s:'",]+/g;
// A script location: `Path.To.Script:123` (before a colon, space or end) or `, line 123` / `Line 123`.
// The lookbehind starts a path only at a token boundary, which keeps the scan linear on long dotted text.
const LOCATION = /((?<![\w.<>])[A-Za-z_][\w.<>]*:\d+)(?=[:\s]|$)|((?:,\s*|\b)[Ll]ine\s+\d+)/g;
const NUMBER = /(?<![\w.<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w<])/gi;

function normalizeText(text: string): string {
  const kept: string[] = [];
  let out = text
    .slice(0, 8192)
    .replace(/[\ue000-\uefff]/g, "")
    .replace(UUID, "<uuid>")
    .replace(HEX_ADDRESS, "<addr>")
    .replace(PLAYER_IN_PATH, "Players.<player>")
    .replace(LOCATION, (m) => {
      kept.push(m);
      // a private-use character stands in for the kept location while numbers are replaced
      return String.fromCharCode(0xe000 + kept.length - 1);
    });
  out = out.replace(NUMBER, "<n>");
  return out
    .replace(/[\ue000-\uefff]/g, (c) => kept[c.charCodeAt(0) - 0xe000] ?? "")
    .replace(/\s+/g, " ")
    .trim();
}

export function normalizeMessage(message: string): string {
  return normalizeText(message);
}

/** Stack lines normalized; blank lines and the `Stack Begin`/`Stack End` markers dropped. */
export function normalizeStack(stack: string | null | undefined): string[] {
  if (!stack) return [];
  return stack
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^Stack (Begin|End)$/i.test(line))
    .map(normalizeText);
}

const hash = (parts: string[]) => digest("sha256", parts.join("\u001f"), "hex").slice(0, 32);

export function defaultFingerprint(message: string, stack: string | null | undefined): string {
  return hash(["default", normalizeMessage(message), ...normalizeStack(stack)]);
}

/**
 * A client fingerprint (string or array) replaces the default grouping; `{{ default }}` inside the
 * array stands for the default fingerprint. The result is always a hash, so it has a fixed length.
 */
export function fingerprintFor(
  message: string,
  stack: string | null | undefined,
  custom?: string | string[] | null,
): string {
  if (custom == null) return defaultFingerprint(message, stack);
  const parts = Array.isArray(custom) ? custom : [custom];
  const expanded = parts.map((p) => (p.trim() === "{{ default }}" || p.trim() === "{{default}}" ? defaultFingerprint(message, stack) : p));
  return hash(["custom", ...expanded]);
}

// Roblox frames look like `ServerScriptService.Combat:123 function attack`,
// `Script 'ServerScriptService.Combat', Line 123 - function attack` or (older debug.traceback)
// `ServerScriptService.Combat, line 123 - function attack`; the last form needs a dotted path so
// prose such as `something broke, line 5` is not taken for a script.
const FRAME_PATH =
  /^(?:(?:Script\s+')?([A-Za-z_][\w.<> ]*?)(?:'\s*,\s*[Ll]ine\s+\d+|:\d+)|([A-Za-z_][\w<>]*(?:\.[\w<>]+)+)\s*,\s*[Ll]ine\s+\d+)/;

/** The script path of the top stack frame (player names replaced), or of the message when there is no stack. */
export function culpritFor(message: string, stack: string | null | undefined): string | null {
  for (const line of normalizeStack(stack)) {
    const m = FRAME_PATH.exec(line);
    if (m) return (m[1] ?? m[2]).trim();
  }
  const m = FRAME_PATH.exec(normalizeMessage(message));
  return m ? (m[1] ?? m[2]).trim() : null;
}
