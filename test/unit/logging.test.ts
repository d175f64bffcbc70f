import { afterEach, describe, expect, it } from "vitest";
import { captureConsole, configureLogging, holdRequestContext, log, logger, prettyLine, requestContextOn, requestLogger, withRequestContext } from "../../log/logger.js";
import { redactText, redactUrl } from "../../log/redact.js";
import { ConfigError, loadConfig } from "../../app/env.server.js";

/** Lines written through the process's logger while `fn` runs, parsed. */
function capture(fn: () => void, settings: Parameters<typeof configureLogging>[0] = {}): Record<string, any>[] {
  const lines: string[] = [];
  configureLogging({ level: "debug", format: "json", ...settings, sink: { write: (l: string) => void lines.push(l) } });
  fn();
  return lines.map((l) => JSON.parse(l));
}

afterEach(() => configureLogging({ level: "info", format: "json", sink: "std" }));

describe("redaction", () => {
  it("keeps the shape of a share URL but not its token", () => {
    expect(redactUrl("/share/shr_abcdefghijklmnop?x=1")).toBe("/share/[redacted]?x=1");
    expect(redactText("GET /api/share/shr_abcdefghijklmnop")).toBe("GET /api/share/[redacted]");
    expect(redactText("token shr_abcdefghijklmnop in a message")).toBe("token shr_[redacted] in a message");
  });

  it("removes API keys, DSN keys, URL passwords, emails and the row values PostgreSQL quotes", () => {
    const key = "rbx_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
    expect(redactText(`bad key ${key}`)).toBe("bad key rbx_[redacted]");
    // the 10-character prefix the database keeps is no secret
    expect(redactText("key rbx_A1b2C3")).toBe("key rbx_A1b2C3");
    expect(redactText("/api/1/envelope/?sentry_key=0123456789abcdef0123456789abcdef&sentry_version=7")).toBe(
      "/api/1/envelope/?sentry_key=[redacted]&sentry_version=7",
    );
    expect(redactText("Sentry sentry_version=7, sentry_key=0123456789abcdef, sentry_secret=fedcba9876543210")).toBe(
      "Sentry sentry_version=7, sentry_key=[redacted], sentry_secret=[redacted]",
    );
    expect(redactText("connect postgres://monitor:hunter22@db.internal:5432/monitor failed")).toBe("connect postgres://[redacted]@db.internal:5432/monitor failed");
    expect(redactText("no account for ana.silva+test@studio.example")).toBe("no account for [email]");
    expect(redactText("Key (project_id, user_id)=(7f0c, 123456789) already exists.")).toBe("Key (project_id, user_id)=([redacted]) already exists.");
    expect(redactText("Failing row contains (1, Builderman, null).")).toBe("Failing row contains ([redacted]).");
    expect(redactText("login?password=hunter22&next=/")).toBe("login?password=[redacted]&next=/");
  });

  it("keeps a JSON line valid JSON", () => {
    const line = JSON.stringify({ msg: 'at "postgres://u:p@h/db" for a@b.example', password: "x\"y", url: "/share/shr_abcdefghijkl" });
    const out = JSON.parse(redactText(line));
    expect(out).toEqual({ msg: 'at "postgres://[redacted]@h/db" for [email]', password: "[redacted]", url: "/share/[redacted]" });
  });

  it("leaves a line without secrets as it is", () => {
    const line = '{"level":"info","time":"2026-01-01T00:00:00.000Z","reqId":"0b6f","route":"routes/api.ingest","status":200}';
    expect(redactText(line)).toBe(line);
  });
});

describe("the logger", () => {
  it("writes one JSON line per event with its level, time and message; an error with its stack, not its row values", () => {
    const err = Object.assign(new Error("duplicate key value violates unique constraint"), {
      code: "23505",
      constraint_name: "users_email_key",
      detail: "Key (email)=(someone@studio.example) already exists.",
    });
    const [info, error] = capture(() => {
      log.info("hello");
      log.error({ err }, "[db] insert failed");
    });
    expect(info).toMatchObject({ level: "info", msg: "hello" });
    expect(Date.parse(info.time)).not.toBeNaN();
    expect(error).toMatchObject({ level: "error", msg: "[db] insert failed", err: { type: "Error", code: "23505", constraint: "users_email_key" } });
    expect(error.err.stack).toContain("logging.test.ts");
    expect(JSON.stringify(error)).not.toContain("someone");
  });

  it("writes only lines at or above LOG_LEVEL, through views taken before it was configured", () => {
    const early = logger({ component: "early" });
    const lines = capture(
      () => {
        early.info("not written");
        early.warn("written");
      },
      { level: "warn" },
    );
    expect(lines).toEqual([expect.objectContaining({ level: "warn", msg: "written", component: "early" })]);
  });

  it("puts the request's id on every line logged while it is served", async () => {
    const lines = capture(() => {
      withRequestContext({ reqId: "req-1" }, () => {
        log.error({ err: new Error("first") }, "inside");
        log.info("then");
      });
      log.info("outside");
    });
    expect(lines[0]).toMatchObject({ msg: "inside", reqId: "req-1", err: { message: "first" } });
    // a line's fields stay its own: the next line of the same request has the id, not the error
    expect(lines[1]).toEqual(expect.objectContaining({ msg: "then", reqId: "req-1" }));
    expect(lines[1].err).toBeUndefined();
    expect(lines[2].reqId).toBeUndefined();
  });

  it("keeps the request context on only while a request holds it, its lines carrying the id across awaits", async () => {
    const lines: Record<string, any>[] = [];
    configureLogging({ level: "debug", format: "json", sink: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    const release = holdRequestContext();
    const served = withRequestContext({ reqId: "page-1" }, async () => {
      await new Promise((r) => setTimeout(r, 5));
      await Promise.resolve();
      log.warn("after two awaits");
    });
    await served;
    expect(requestContextOn()).toBe(true);
    // a second holder keeps it on when the first lets go; released twice counts once
    const other = holdRequestContext();
    release();
    release();
    expect(requestContextOn()).toBe(true);
    other();
    // off with the last holder: no promise of the process pays its hooks any more
    expect(requestContextOn()).toBe(false);
    log.info("between requests");
    expect(lines).toEqual([expect.objectContaining({ msg: "after two awaits", reqId: "page-1" }), expect.not.objectContaining({ reqId: expect.anything() })]);
  });

  it("gives the API dispatch's lines their request's id without the context", () => {
    const lines = capture(() => requestLogger("api-7").error({ err: new Error("broke") }, "[api] route failed"));
    expect(lines).toEqual([expect.objectContaining({ level: "error", msg: "[api] route failed", reqId: "api-7", err: expect.objectContaining({ message: "broke" }) })]);
  });

  it("removes fields that are secrets by name", () => {
    const [line] = capture(() => log.info({ password: "hunter22", headers: { authorization: "Bearer abc", cookie: "rm_session=xyz" } }, "login"));
    expect(line.password).toBe("[redacted]");
    expect(line.headers).toEqual({ authorization: "[redacted]", cookie: "[redacted]" });
  });

  it("sends console output through the logger", () => {
    const fake = { log: () => {}, info: () => {}, debug: () => {}, warn: () => {}, error: () => {} } as unknown as Console;
    captureConsole(fake);
    const lines = capture(() => fake.warn('No routes matched location "%s"', "/share/shr_abcdefghijklmnop"));
    expect(lines).toEqual([expect.objectContaining({ level: "warn", msg: 'No routes matched location "/share/[redacted]"' })]);
  });

  it("has a human-readable format for development", () => {
    const lines: string[] = [];
    configureLogging({ level: "info", format: "pretty", sink: { write: (l: string) => void lines.push(l) } });
    withRequestContext({ reqId: "r-9" }, () => log.error({ err: new Error("boom"), route: "routes/api.ingest" }, "failed"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR failed (route=routes\/api\.ingest reqId=r-9|reqId=r-9 route=routes\/api\.ingest)\n {4}Error: boom\n {4}    at /);
    expect(prettyLine("not json")).toBe("not json");
  });
});

describe("log settings", () => {
  const env = (vars: Record<string, string>) => loadConfig({ NODE_ENV: "test", APP_SECRET: "x".repeat(32), NOTIFICATION_SECRET: "y".repeat(16), ...vars });

  it("default to info, the format left to the process, request lines at debug", () => {
    expect(env({})).toMatchObject({ logLevel: "info", logFormat: undefined, logRequests: "debug" });
  });

  it("read LOG_LEVEL, LOG_FORMAT and LOG_REQUESTS (true: info; false: debug; or a level)", () => {
    expect(env({ LOG_LEVEL: "warn", LOG_FORMAT: "pretty", LOG_REQUESTS: "true" })).toMatchObject({ logLevel: "warn", logFormat: "pretty", logRequests: "info" });
    expect(env({ LOG_REQUESTS: "false" }).logRequests).toBe("debug");
    expect(env({ LOG_REQUESTS: "1" }).logRequests).toBe("info");
    expect(env({ LOG_REQUESTS: "warn" }).logRequests).toBe("warn");
  });

  it("name the variable of a bad value", () => {
    expect(() => env({ LOG_LEVEL: "loud" })).toThrow(ConfigError);
    expect(() => env({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal, silent/);
    expect(() => env({ LOG_FORMAT: "xml" })).toThrow(/LOG_FORMAT: must be json or pretty/);
    expect(() => env({ LOG_REQUESTS: "yes" })).toThrow(/LOG_REQUESTS: must be true, false or one of/);
  });
});
