/**
 * The process's logger: one JSON line per event (pino), or a human-readable line for development,
 * every line redacted (log/redact.ts) before it is written.
 *
 * One logger per process, kept on `globalThis`: the process (server.ts) and the app it loads from the
 * Remix build each hold their own copy of this module (and of db/), and a line logged by either must
 * come out with the settings the process chose. `configureLogging` replaces the process's logger;
 * `logger()` hands out a view that always writes through the current one, so a module may take its
 * view when it loads, before the process has configured anything.
 *
 * Lines logged while a page (or any request the API dispatch does not serve) is served carry its
 * `reqId`, wherever in the app they are logged: an AsyncLocalStorage the request's middleware enters
 * (server/request-log.ts). On Node 20 an enabled AsyncLocalStorage runs promise hooks on every
 * promise of the process, so the context is switched on only while such a request is in flight
 * (`holdRequestContext`). API requests the dispatch serves never enter it: their lines carry the id
 * because the dispatch passes it (server/api-dispatch.ts, `requestLogger`).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { format } from "node:util";
import pino, { type Level, type LevelWithSilent, type LogFn, type Logger } from "pino";
import { redactText } from "./redact.js";

export type LogLevel = LevelWithSilent;
export const LOG_LEVELS: readonly LogLevel[] = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];
export type LogFormat = "json" | "pretty";

/** Where lines go: anything with a `write(line)`, or "std": warn and above to stderr, the rest to stdout. */
export type LogSink = { write(line: string): unknown } | "std";

export type LogSettings = { level: LogLevel; format: LogFormat; sink: LogSink };

export type RequestContext = { reqId: string };

type State = { settings: LogSettings; root: Logger; version: number; requests: AsyncLocalStorage<RequestContext>; held: number };

const KEY = Symbol.for("roblox-monitor.logger");

const DEFAULTS: LogSettings = { level: "info", format: "json", sink: "std" };

function state(): State {
  const g = globalThis as { [KEY]?: State };
  if (!g[KEY]) {
    const requests = new AsyncLocalStorage<RequestContext>();
    g[KEY] = { settings: DEFAULTS, root: build(DEFAULTS, requests), version: 0, requests, held: 0 };
  }
  return g[KEY];
}

const SEVERE = new Set(["warn", "error", "fatal"]);

/** The level of a JSON line pino wrote (its first field). */
const levelOf = (line: string) => /^\{"level":"(\w+)"/.exec(line)?.[1] ?? "info";

function build(settings: LogSettings, requests: AsyncLocalStorage<RequestContext>): Logger {
  const sink = settings.sink;
  const write =
    sink === "std"
      ? (line: string, level: string) => (SEVERE.has(level) ? process.stderr : process.stdout).write(line)
      : (line: string) => sink.write(line);
  const pretty = settings.format === "pretty" && (sink === "std" ? process.stdout.isTTY : false);
  const destination = {
    write(line: string) {
      const clean = redactText(line);
      const level = levelOf(clean);
      write(settings.format === "pretty" ? prettyLine(clean, pretty) : clean, level);
    },
  };
  return pino(
    {
      level: settings.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      // the request a line was logged in, wherever in the app it was logged
      // (a fresh object: pino merges the line's fields into what the mixin returns)
      mixin: () => {
        const context = requests.getStore();
        return context ? { reqId: context.reqId } : {};
      },
      // fields that are secrets by name, in whatever object a call site logs
      redact: {
        paths: ["password", "token", "secret", "apiKey", "api_key", "cookie", "authorization", "headers.authorization", "headers.cookie", 'headers["x-api-key"]', 'headers["x-sentry-auth"]', "clientSecret"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

/**
 * An error as a log line holds it: its type, message, stack and code (a PostgreSQL error's code,
 * constraint, table and column names too), and its cause. Nothing else: a PostgreSQL error's
 * `detail` quotes row values, a library's error may hold a request with its headers.
 */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err === undefined || err === null || typeof err !== "object" ? err : { value: String(err) };
  const e = err as Error & { code?: unknown; constraint_name?: unknown; table_name?: unknown; column_name?: unknown; cause?: unknown };
  const out: Record<string, unknown> = { type: e.constructor?.name ?? "Error", message: e.message, stack: e.stack };
  if (typeof e.code === "string" || typeof e.code === "number") out.code = e.code;
  if (typeof e.constraint_name === "string") out.constraint = e.constraint_name;
  if (typeof e.table_name === "string") out.table = e.table_name;
  if (typeof e.column_name === "string") out.column = e.column_name;
  if (e instanceof AggregateError) out.errors = e.errors.slice(0, 5).map((x) => serializeError(x, depth + 1));
  if (e.cause !== undefined && depth < 3) out.cause = serializeError(e.cause, depth + 1);
  return out;
}

const COLORS: Record<string, string> = { trace: "90", debug: "36", info: "32", warn: "33", error: "31", fatal: "35" };
const OMIT = new Set(["level", "time", "msg", "pid", "hostname", "err"]);

/**
 * The development format: `12:00:00.123 INFO  message key=value …`, then an error's stack. Made from
 * the JSON line (already redacted), so it shows exactly what the JSON format would write.
 */
export function prettyLine(json: string, color = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json);
  } catch {
    return json;
  }
  const level = String(o.level ?? "info");
  const time = typeof o.time === "string" ? o.time.slice(11, 23) : "";
  const label = level.toUpperCase().padEnd(5);
  const fields = Object.entries(o)
    .filter(([k]) => !OMIT.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  let line = `${time} ${color ? `\x1b[${COLORS[level] ?? "0"}m${label}\x1b[0m` : label} ${String(o.msg ?? "")}${fields ? ` ${fields}` : ""}\n`;
  const err = o.err as { stack?: string; message?: string } | undefined;
  if (err) line += `${(err.stack ?? err.message ?? JSON.stringify(err)).replace(/^/gm, "    ")}\n`;
  return line;
}

/** Replaces the process's logger (the settings not given stay as they were). */
export function configureLogging(settings: Partial<LogSettings>): void {
  const s = state();
  s.settings = { ...s.settings, ...settings };
  s.root = build(s.settings, s.requests);
  s.version++;
}

export const loggingSettings = (): LogSettings => state().settings;

/** Runs `fn` as part of a request: every line logged within it carries the request's id. */
export const withRequestContext = <T>(context: RequestContext, fn: () => T): T => state().requests.run(context, fn);

/**
 * Keeps the request context on until the returned release is called (once; later calls do nothing).
 * When the last holder releases it, the context is switched off (its promise hooks with it) until
 * the next request enters it; whatever still runs of a finished request then logs without its id.
 */
export function holdRequestContext(): () => void {
  const s = state();
  s.held++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--s.held === 0) s.requests.disable();
  };
}

/** Whether the request context is switched on (its promise hooks run). */
export const requestContextOn = (): boolean => (state().requests as unknown as { enabled: boolean }).enabled === true;

/** A logger whose lines carry `reqId` without the request context (the API dispatch's requests). */
export function requestLogger(reqId: string): Pick<Log, "error" | "warn"> {
  return { error: (obj: object, msg?: string) => log.error({ ...obj, reqId }, msg), warn: (obj: object, msg?: string) => log.warn({ ...obj, reqId }, msg) } as Pick<Log, "error" | "warn">;
}

export type Log = { [L in Level]: LogFn } & { isLevelEnabled(level: LogLevel): boolean };

/** A view of the process's logger (with `bindings` on every line), valid across `configureLogging`. */
export function logger(bindings?: Record<string, unknown>): Log {
  let version = -1;
  let current: Logger | undefined;
  const get = () => {
    const s = state();
    if (s.version !== version || !current) {
      current = bindings ? s.root.child(bindings) : s.root;
      version = s.version;
    }
    return current;
  };
  const at =
    (level: Level): LogFn =>
    (...args: Parameters<LogFn>) =>
      (get()[level] as (...a: unknown[]) => void)(...args);
  return {
    trace: at("trace"),
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    fatal: at("fatal"),
    isLevelEnabled: (level) => get().isLevelEnabled(level),
  };
}

/** The process's logger, for modules that add no fields of their own. */
export const log = logger();

/**
 * Sends what libraries print with `console.*` (Remix's "No routes matched location …", which quotes a
 * URL with its share token; a driver's notice) through the process's logger: one JSON line like every
 * other, redacted. For the process (server.ts), not for a test runner that reads its own console.
 */
export function captureConsole(target: Console = console): void {
  const to = (level: Level) => (...args: unknown[]) => log[level](format(...args));
  target.log = to("info");
  target.info = to("info");
  target.debug = to("debug");
  target.warn = to("warn");
  target.error = to("error");
}
