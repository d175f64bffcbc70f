/**
 * No secret in any log line: the servers a test run starts write their log lines to files in the
 * run's log directory (test/support/server.ts, test/support/instance.ts), the helpers that create or
 * send a secret record it there too (API keys, DSN keys, passwords, session cookies, share tokens,
 * TOTP secrets, recovery codes, OIDC client secrets, the app's own secrets), and at the end of the
 * run the global teardown checks that no log line holds any of them (`auditRunLogs`).
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** The log directory of a run (its id is the global setup's `testRunId`). */
export const runLogDir = (runId: string) => path.join(os.tmpdir(), `rbx-monitor-logs-${runId}`);

/** Shorter values are not recorded: they could appear in a log line by chance. */
export const MIN_SECRET_LENGTH = 8;

/** Nor is one short lowercase word (a test's deliberately weak password "password" is also a route's name). */
const chanceWord = (v: string) => v.length < 12 && /^[a-z]+$/.test(v);

/**
 * Nor is text the service prints itself: the password tests try the product's name as a weak
 * password (refused, so never a secret), and every start line names it.
 */
const PUBLIC_TEXT = new Set(["Roblox Monitor"]);

const SECRETS_FILE = /^secrets-.*\.jsonl$/;
const LOG_FILE = /\.log$/;

/** Where the integration suite's recorder is kept for helpers that must not import vitest. */
export const RECORD_SECRET = Symbol.for("rbx-monitor.record-secret");

/**
 * Records secrets for the log audit when this process runs in the integration suite (its server
 * support module installed the recorder); in the browser suite, whose logs are not audited, nothing.
 */
export function recordSecretIfAudited(kind: string, ...values: (string | undefined | null)[]): void {
  (globalThis as { [RECORD_SECRET]?: (kind: string, ...values: (string | undefined | null)[]) => void })[RECORD_SECRET]?.(kind, ...values);
}

/** Records secrets (what kind, the value) in `dir`, for the audit at the end of the run. */
export function recordSecrets(dir: string, kind: string, values: Iterable<string | undefined | null>): void {
  const lines: string[] = [];
  for (const v of values) if (typeof v === "string" && v.length >= MIN_SECRET_LENGTH && !chanceWord(v) && !PUBLIC_TEXT.has(v)) lines.push(JSON.stringify({ kind, value: v }) + "\n");
  if (lines.length === 0) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(path.join(dir, `secrets-${process.pid}.jsonl`), lines.join(""));
}

export type Leak = { kind: string; secret: string; file: string; line: number };

const TOKEN = /^[A-Za-z0-9_-]+$/;
const WINDOW = MIN_SECRET_LENGTH;

/**
 * Every (secret, log line) where the line holds the secret, as written or JSON-escaped. A secret of
 * token characters is looked up by its first characters in every run of token characters of the
 * logs (so thousands of secrets over megabytes of logs take one pass); any other secret is searched
 * for in each file's text.
 */
export function auditLogs(dir: string): Leak[] {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir);
  const secrets = new Map<string, string>();
  for (const f of files.filter((f) => SECRETS_FILE.test(f))) {
    for (const line of readFileSync(path.join(dir, f), "utf8").split("\n")) {
      if (!line) continue;
      const { kind, value } = JSON.parse(line) as { kind: string; value: string };
      if (!secrets.has(value)) secrets.set(value, kind);
    }
  }
  const byPrefix = new Map<string, string[]>();
  const other: string[] = [];
  for (const s of secrets.keys()) {
    if (TOKEN.test(s)) {
      const p = s.slice(0, WINDOW);
      const list = byPrefix.get(p) ?? [];
      list.push(s);
      byPrefix.set(p, list);
    } else other.push(s);
  }
  const leaks: Leak[] = [];
  const seen = new Set<string>();
  const report = (secret: string, file: string, text: string, at: number) => {
    const key = `${secret}\0${file}`;
    if (seen.has(key)) return;
    seen.add(key);
    leaks.push({ kind: secrets.get(secret)!, secret, file, line: text.slice(0, at).split("\n").length });
  };
  for (const f of files.filter((f) => LOG_FILE.test(f))) {
    const file = path.join(dir, f);
    const text = readFileSync(file, "utf8");
    if (byPrefix.size > 0) {
      const words = /[A-Za-z0-9_-]{8,}/g;
      for (let m = words.exec(text); m; m = words.exec(text)) {
        const word = m[0];
        for (let i = 0; i + WINDOW <= word.length; i++) {
          const candidates = byPrefix.get(word.slice(i, i + WINDOW));
          if (!candidates) continue;
          for (const s of candidates) if (word.startsWith(s, i)) report(s, file, text, m.index + i);
        }
      }
    }
    for (const s of other) {
      const escaped = JSON.stringify(s).slice(1, -1);
      const at = text.includes(s) ? text.indexOf(s) : text.indexOf(escaped);
      if (at >= 0) report(s, file, text, at);
    }
  }
  return leaks;
}

/** A secret as a report shows it: enough to find it, not the whole of it. */
const masked = (s: string) => `${s.slice(0, 6)}…(${s.length} characters)`;

/**
 * The global teardown's check: throws (failing the run) when any log line of the run holds a secret
 * the run created; otherwise removes the run's log directory.
 */
export function auditRunLogs(runId: string): void {
  const dir = runLogDir(runId);
  const leaks = auditLogs(dir);
  if (leaks.length > 0) {
    const lines = leaks.slice(0, 50).map((l) => `  ${l.kind} ${masked(l.secret)} in ${l.file}:${l.line}`);
    throw new Error(`Log audit: ${leaks.length} secret(s) the tests created appear in the servers' logs (kept in ${dir}):\n${lines.join("\n")}`);
  }
  rmSync(dir, { recursive: true, force: true });
}
