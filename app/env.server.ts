import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * The one place that reads process.env. Everything else receives a Config.
 * Defaults make `npm start` work with no variables set.
 */
const bool = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((v) => v === "true" || v === "1");

const int = (def: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional().or(z.literal("").transform(() => undefined)),
  PORT: int(3000, 0, 65535),
  HOST: z.string().default("0.0.0.0"),
  DATA_DIR: z.string().default("./data"),
  // a streaming replica of DATABASE_URL for the dashboard's and /api/v1's reads (see db/replica.ts)
  DATABASE_REPLICA_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional().or(z.literal("").transform(() => undefined)),
  DATABASE_REPLICA_MAX_LAG_SECONDS: int(5, 1, 3600),
  // 0: a free port the system picks at each start
  EMBEDDED_PG_PORT: int(54329, 0, 65535),
  DB_POOL_SIZE: int(20, 2, 500),
  // the longest a request waits on the database (a statement, a lock, a queued write) before a 503
  DB_TIMEOUT_MS: int(10_000, 100, 600_000),
  APP_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  NOTIFICATION_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  RETENTION_DAYS: int(30, 1, 3650),
  // the audit log's own retention (docs/audit.md), pruned by the same hourly job
  AUDIT_RETENTION_DAYS: int(365, 1, 36500),
  MAX_BODY_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  // a push of 100 whole profiles (inventories included) easily passes 1 MiB
  ECONOMY_MAX_BODY_BYTES: int(8 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  // request-body bytes the process holds at once (read, decoded, parsed); 503 past it (app/body-budget.server.ts)
  BODY_MEMORY_BYTES: int(64 * 1024 * 1024, 1024 * 1024, 16 * 1024 * 1024 * 1024),
  THROTTLE_LIMIT: int(30, 1, 100000),
  THROTTLE_WINDOW_SECONDS: int(60, 1, 86400),
  API_KEY_CACHE_SECONDS: int(60, 0, 3600),
  // writer queues by fingerprint shard, and transactions in flight per shard (see app/ingest/writer.server.ts)
  INGEST_SHARDS: int(1, 1, 64),
  INGEST_CONCURRENCY: int(1, 1, 64),
  // Sentry endpoints answer 429 (which Sentry SDKs honour) while this many events wait to be written
  SENTRY_MAX_PENDING_EVENTS: int(20000, 1, 10_000_000),
  SENTRY_MAX_EVENT_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  SENTRY_MAX_ENVELOPE_BYTES: int(20 * 1024 * 1024, 1024, 256 * 1024 * 1024),
  // new issues the Sentry endpoints may create per project per minute; later new errors go to a catch-all issue
  SENTRY_MAX_NEW_ISSUES_PER_MINUTE: int(100, 1, 1_000_000),
  OPEN_CLOUD_BASE_URL: z.url().default("https://apis.roblox.com"),
  // the scan's share of the universe's data-store budget (shared with live game servers)
  OPEN_CLOUD_REQUESTS_PER_MINUTE: int(250, 1, 1_000_000),
  ECONOMY_ANOMALY_FACTOR: z.coerce.number().gt(1).default(10),
  ECONOMY_ANOMALY_MIN_AMOUNT: z.coerce.number().min(0).default(100_000),
  // currency-map previews per user and project per minute (each may read for up to 2 s)
  ECONOMY_PREVIEW_RATE_LIMIT: int(10, 1, 1_000_000),
  WEBHOOK_ALLOW_PRIVATE: bool,
  JOBS_ENABLED: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  LOG_REQUESTS: bool,
  // accounts and share links
  TRUST_PROXY: int(0, 0, 10),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional().or(z.literal("").transform(() => undefined)),
  SESSION_DAYS: int(30, 1, 365),
  LOGIN_MAX_FAILURES: int(10, 1, 10000),
  LOGIN_EMAIL_MAX_FAILURES: int(100, 1, 100000),
  LOGIN_WINDOW_SECONDS: int(900, 1, 86400),
  SHARE_RATE_LIMIT: int(120, 1, 1000000),
  SHARE_RATE_WINDOW_SECONDS: int(60, 1, 86400),
});

export type Config = {
  nodeEnv: "development" | "production" | "test";
  databaseUrl: string | undefined;
  /** reads go here when set, reachable and caught up (see db/replica.ts) */
  databaseReplicaUrl: string | undefined;
  /** a replica further behind the primary than this serves no reads until it catches up */
  replicaMaxLagMs: number;
  port: number;
  host: string;
  dataDir: string;
  embeddedPgPort: number;
  dbPoolSize: number;
  /** bound on each statement and lock wait, and on an ingest write from submit to commit */
  dbTimeoutMs: number;
  appSecret: string;
  notificationSecret: string;
  retentionDays: number;
  /** days the audit log keeps a row */
  auditRetentionDays: number;
  maxBodyBytes: number;
  economyMaxBodyBytes: number;
  /** request-body bytes held at once by the whole process, as sent and decoded */
  bodyMemoryBytes: number;
  throttleLimit: number;
  throttleWindowSeconds: number;
  apiKeyCacheSeconds: number;
  ingestShards: number;
  ingestConcurrency: number;
  sentryMaxPendingEvents: number;
  sentryMaxEventBytes: number;
  sentryMaxEnvelopeBytes: number;
  sentryMaxNewIssuesPerMinute: number;
  openCloudBaseUrl: string;
  openCloudRequestsPerMinute: number;
  economyAnomalyFactor: number;
  economyAnomalyMinAmount: number;
  /** currency-map previews per user and project per minute */
  economyPreviewRateLimit: number;
  webhookAllowPrivate: boolean;
  jobsEnabled: boolean;
  logRequests: boolean;
  /** proxy hops whose X-Forwarded-For / X-Forwarded-Proto are believed (0: none) */
  trustProxy: number;
  /** base URL for links the service hands out (share links); else the request's own origin */
  publicUrl: string | undefined;
  sessionDays: number;
  /** failed sign-ins per (email, address) per window */
  loginMaxFailures: number;
  /** failed sign-ins per email from all addresses together per window */
  loginEmailMaxFailures: number;
  loginWindowSeconds: number;
  shareRateLimit: number;
  shareRateWindowSeconds: number;
};

export class ConfigError extends Error {}

/** Validates the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  // the embedded server has no replica to stream to
  if (e.DATABASE_REPLICA_URL && !e.DATABASE_URL) {
    throw new ConfigError("Invalid environment:\n  DATABASE_REPLICA_URL: needs DATABASE_URL (the primary it replicates)");
  }
  // a body at a route's limit, sent compressed, is held as sent, as decoded and joined: a budget
  // under twice the largest limit could never read one
  const largest = Math.max(e.MAX_BODY_BYTES, e.ECONOMY_MAX_BODY_BYTES, e.SENTRY_MAX_ENVELOPE_BYTES, e.SENTRY_MAX_EVENT_BYTES);
  if (e.BODY_MEMORY_BYTES < 2 * largest) {
    throw new ConfigError(`Invalid environment:\n  BODY_MEMORY_BYTES: must be at least twice the largest body limit (${2 * largest} bytes)`);
  }
  const dataDir = path.resolve(e.DATA_DIR);
  const needsGenerated = !e.APP_SECRET || !e.NOTIFICATION_SECRET;
  const generated = needsGenerated ? generatedSecrets(dataDir) : undefined;
  return {
    nodeEnv: e.NODE_ENV,
    databaseUrl: e.DATABASE_URL,
    databaseReplicaUrl: e.DATABASE_REPLICA_URL,
    replicaMaxLagMs: e.DATABASE_REPLICA_MAX_LAG_SECONDS * 1000,
    port: e.PORT,
    host: e.HOST,
    dataDir,
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    dbPoolSize: e.DB_POOL_SIZE,
    dbTimeoutMs: e.DB_TIMEOUT_MS,
    appSecret: e.APP_SECRET ?? generated!.appSecret,
    notificationSecret: e.NOTIFICATION_SECRET ?? generated!.notificationSecret,
    retentionDays: e.RETENTION_DAYS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    economyMaxBodyBytes: e.ECONOMY_MAX_BODY_BYTES,
    bodyMemoryBytes: e.BODY_MEMORY_BYTES,
    throttleLimit: e.THROTTLE_LIMIT,
    throttleWindowSeconds: e.THROTTLE_WINDOW_SECONDS,
    apiKeyCacheSeconds: e.API_KEY_CACHE_SECONDS,
    ingestShards: e.INGEST_SHARDS,
    ingestConcurrency: e.INGEST_CONCURRENCY,
    sentryMaxPendingEvents: e.SENTRY_MAX_PENDING_EVENTS,
    sentryMaxEventBytes: e.SENTRY_MAX_EVENT_BYTES,
    sentryMaxEnvelopeBytes: e.SENTRY_MAX_ENVELOPE_BYTES,
    sentryMaxNewIssuesPerMinute: e.SENTRY_MAX_NEW_ISSUES_PER_MINUTE,
    openCloudBaseUrl: e.OPEN_CLOUD_BASE_URL,
    openCloudRequestsPerMinute: e.OPEN_CLOUD_REQUESTS_PER_MINUTE,
    economyAnomalyFactor: e.ECONOMY_ANOMALY_FACTOR,
    economyAnomalyMinAmount: e.ECONOMY_ANOMALY_MIN_AMOUNT,
    economyPreviewRateLimit: e.ECONOMY_PREVIEW_RATE_LIMIT,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    jobsEnabled: e.JOBS_ENABLED,
    logRequests: e.LOG_REQUESTS,
    trustProxy: e.TRUST_PROXY,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ""),
    sessionDays: e.SESSION_DAYS,
    loginMaxFailures: e.LOGIN_MAX_FAILURES,
    loginEmailMaxFailures: e.LOGIN_EMAIL_MAX_FAILURES,
    loginWindowSeconds: e.LOGIN_WINDOW_SECONDS,
    shareRateLimit: e.SHARE_RATE_LIMIT,
    shareRateWindowSeconds: e.SHARE_RATE_WINDOW_SECONDS,
  };
}

/** Secrets not given in the environment are generated once and kept under the data directory. */
function generatedSecrets(dataDir: string): { appSecret: string; notificationSecret: string } {
  const file = path.join(dataDir, "secrets.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  mkdirSync(dataDir, { recursive: true });
  const secrets = {
    appSecret: randomBytes(32).toString("base64url"),
    notificationSecret: randomBytes(32).toString("base64url"),
  };
  try {
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: "wx" });
  } catch (err) {
    // another process created it first: use theirs
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return JSON.parse(readFileSync(file, "utf8"));
    throw err;
  }
  return secrets;
}
