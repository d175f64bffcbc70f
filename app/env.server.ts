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

const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
const REQUEST_LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
export type RequestLogLevel = (typeof REQUEST_LEVELS)[number];

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
  // under load, how long after a counter drain's start the next may start (db/counter-deltas.ts); 0: 100 ms after each write
  COUNTER_DRAIN_INTERVAL_MS: int(1000, 0, 1500),
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
  ALERT_TEST_RATE_LIMIT: int(5, 1, 1_000_000),
  WEBHOOK_ALLOW_PRIVATE: bool,
  // email alert channels: the SMTP server (smtp://user:pass@host:587, smtps://… for TLS from the start;
  // nodemailer's URL options such as ?requireTLS=true apply) and the From address of alert emails
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" }).optional().or(z.literal("").transform(() => undefined)),
  SMTP_FROM: z
    .string()
    .trim()
    .max(300)
    .regex(/^([^<>@]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/, "must be an address, e.g. alerts@example.com or Roblox Monitor <alerts@example.com>")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  JOBS_ENABLED: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  // logs (docs/operations.md, "Logs"): the least severe level written, JSON lines or a human-readable
  // format (unset: pretty for the development server, JSON otherwise), and the level of the line
  // each request gets (true: info; unset or false: debug, so written only at LOG_LEVEL=debug)
  LOG_LEVEL: z.enum(LEVELS, { error: `must be one of ${LEVELS.join(", ")}` }).default("info"),
  LOG_FORMAT: z
    .enum(["json", "pretty", ""], { error: "must be json or pretty" })
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  LOG_REQUESTS: z
    .enum(["true", "false", "1", "0", "", ...REQUEST_LEVELS], { error: `must be true, false or one of ${REQUEST_LEVELS.join(", ")}` })
    .optional()
    .transform((v): RequestLogLevel => (v === "true" || v === "1" ? "info" : v === undefined || v === "" || v === "false" || v === "0" ? "debug" : v)),
  // GET /metrics (Prometheus) answers a scraper sending `Authorization: Bearer <token>`; unset: not served
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,}$/, "must be at least 16 characters, printable ASCII without spaces (e.g. openssl rand -hex 32)")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  // accounts and share links
  TRUST_PROXY: int(0, 0, 10),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional().or(z.literal("").transform(() => undefined)),
  SESSION_DAYS: int(30, 1, 365),
  LOGIN_MAX_FAILURES: int(10, 1, 10000),
  LOGIN_EMAIL_MAX_FAILURES: int(100, 1, 100000),
  LOGIN_WINDOW_SECONDS: int(900, 1, 86400),
  SHARE_RATE_LIMIT: int(120, 1, 1000000),
  SHARE_RATE_WINDOW_SECONDS: int(60, 1, 86400),
  // sign-in with OpenID Connect (docs/sign-in.md): provider ids, comma-separated ("roblox,google");
  // each id then reads OIDC_<ID>_ISSUER, _CLIENT_ID, _CLIENT_SECRET, _NAME, _SCOPES, _TRUST_EMAIL
  OIDC_PROVIDERS: z.string().default(""),
  // email domains whose verified addresses may create an account at their first OIDC sign-in
  OIDC_ALLOWED_DOMAINS: z.string().default(""),
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
  /** under load, ms from a counter drain's start before the next may start (0: each write's drain 100 ms after it) */
  counterDrainIntervalMs: number;
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
  /** test alerts (any channel kind, email included) one user may send per minute */
  alertTestRateLimit: number;
  webhookAllowPrivate: boolean;
  /** the SMTP server email channels send through; unset: email channels cannot be added */
  smtpUrl: string | undefined;
  /** the From of alert emails (required with SMTP_URL) */
  smtpFrom: string | undefined;
  jobsEnabled: boolean;
  /** the least severe level written */
  logLevel: (typeof LEVELS)[number];
  /** unset: pretty for the development server, JSON otherwise */
  logFormat: "json" | "pretty" | undefined;
  /** the level of each request's line (a 5xx answer's is at least warn) */
  logRequests: RequestLogLevel;
  /** the bearer token GET /metrics requires; undefined: /metrics is not served */
  metricsToken: string | undefined;
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
  /** OpenID Connect providers offered on the sign-in page, in the order given */
  oidcProviders: OidcProviderConfig[];
  /** lowercased email domains whose verified addresses may create an account at a first OIDC sign-in */
  oidcAllowedDomains: string[];
};

/**
 * One OpenID Connect provider, from OIDC_<ID>_* (ID is the provider's id in upper case):
 * - OIDC_<ID>_ISSUER: the issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`
 *   and the document must name this same issuer. https, or http on a loopback address only.
 * - OIDC_<ID>_CLIENT_ID, OIDC_<ID>_CLIENT_SECRET: the app registered at the provider (required).
 * - OIDC_<ID>_NAME: the button's label ("Sign in with <name>").
 * - OIDC_<ID>_SCOPES: space-separated scopes; "openid" is always requested.
 * - OIDC_<ID>_TRUST_EMAIL: "true" when the provider's verified emails may create or claim an
 *   account (OIDC_ALLOWED_DOMAINS, invitations); "false" means its identities sign in only once linked.
 * The id `roblox` is a preset for "Sign in with Roblox": issuer https://apis.roblox.com/oauth/,
 * scopes "openid profile", name "Roblox", emails never trusted (Roblox gives none); only the
 * client id and secret are needed.
 */
export type OidcProviderConfig = {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  trustEmail: boolean;
};

export const ROBLOX_PRESET = {
  issuer: "https://apis.roblox.com/oauth/",
  name: "Roblox",
  scopes: ["openid", "profile"],
  trustEmail: false,
} as const;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

function oidcProviders(env: NodeJS.ProcessEnv, list: string): { providers: OidcProviderConfig[]; problems: string[] } {
  const providers: OidcProviderConfig[] = [];
  const problems: string[] = [];
  const ids = list.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  const seen = new Set<string>();
  for (const id of ids) {
    if (!/^[a-z][a-z0-9-]{0,30}$/.test(id)) {
      problems.push(`OIDC_PROVIDERS: "${id}" must be a lowercase letter then letters, digits or "-" (at most 31)`);
      continue;
    }
    if (seen.has(id)) {
      problems.push(`OIDC_PROVIDERS: "${id}" is listed twice`);
      continue;
    }
    seen.add(id);
    const v = (name: string) => env[`OIDC_${id.toUpperCase().replace(/-/g, "_")}_${name}`]?.trim() || undefined;
    const key = (name: string) => `OIDC_${id.toUpperCase().replace(/-/g, "_")}_${name}`;
    const preset = id === "roblox" ? ROBLOX_PRESET : undefined;
    const issuer = v("ISSUER") ?? preset?.issuer;
    const clientId = v("CLIENT_ID");
    const clientSecret = v("CLIENT_SECRET");
    if (!issuer) problems.push(`${key("ISSUER")}: is required for the provider "${id}"`);
    else {
      let url: URL | undefined;
      try {
        url = new URL(issuer);
      } catch {
        problems.push(`${key("ISSUER")}: must be a URL`);
      }
      if (url && !(url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname)))) {
        problems.push(`${key("ISSUER")}: must be https (http only on a loopback address)`);
      }
    }
    if (!clientId) problems.push(`${key("CLIENT_ID")}: is required for the provider "${id}"`);
    if (!clientSecret) problems.push(`${key("CLIENT_SECRET")}: is required for the provider "${id}"`);
    const trust = v("TRUST_EMAIL");
    if (trust !== undefined && !["true", "false"].includes(trust)) problems.push(`${key("TRUST_EMAIL")}: must be true or false`);
    const scopes = (v("SCOPES") ?? preset?.scopes.join(" ") ?? "openid profile email").split(/\s+/).filter(Boolean);
    if (!issuer || !clientId || !clientSecret) continue;
    providers.push({
      id,
      name: (v("NAME") ?? preset?.name ?? id).slice(0, 60),
      issuer,
      clientId,
      clientSecret,
      scopes: scopes.includes("openid") ? scopes : ["openid", ...scopes],
      trustEmail: trust === undefined ? (preset?.trustEmail ?? true) : trust === "true",
    });
  }
  return { providers, problems };
}

export class ConfigError extends Error {}

/** Validates the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const oidc = oidcProviders(env, e.OIDC_PROVIDERS);
  const domains = e.OIDC_ALLOWED_DOMAINS.split(",").map((d) => d.trim().toLowerCase().replace(/^@/, "")).filter(Boolean);
  const badDomain = domains.find((d) => !/^[a-z0-9.-]+\.[a-z0-9-]+$/.test(d));
  if (badDomain) oidc.problems.push(`OIDC_ALLOWED_DOMAINS: "${badDomain}" is not a domain`);
  if (oidc.problems.length > 0) throw new ConfigError(`Invalid environment:\n${oidc.problems.map((p) => `  ${p}`).join("\n")}`);
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
  if (e.SMTP_URL && !e.SMTP_FROM) {
    throw new ConfigError("Invalid environment:\n  SMTP_FROM: is required with SMTP_URL (the From address of alert emails, e.g. alerts@example.com)");
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
    counterDrainIntervalMs: e.COUNTER_DRAIN_INTERVAL_MS,
    sentryMaxPendingEvents: e.SENTRY_MAX_PENDING_EVENTS,
    sentryMaxEventBytes: e.SENTRY_MAX_EVENT_BYTES,
    sentryMaxEnvelopeBytes: e.SENTRY_MAX_ENVELOPE_BYTES,
    sentryMaxNewIssuesPerMinute: e.SENTRY_MAX_NEW_ISSUES_PER_MINUTE,
    openCloudBaseUrl: e.OPEN_CLOUD_BASE_URL,
    openCloudRequestsPerMinute: e.OPEN_CLOUD_REQUESTS_PER_MINUTE,
    economyAnomalyFactor: e.ECONOMY_ANOMALY_FACTOR,
    economyAnomalyMinAmount: e.ECONOMY_ANOMALY_MIN_AMOUNT,
    economyPreviewRateLimit: e.ECONOMY_PREVIEW_RATE_LIMIT,
    alertTestRateLimit: e.ALERT_TEST_RATE_LIMIT,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    smtpUrl: e.SMTP_URL,
    smtpFrom: e.SMTP_FROM,
    jobsEnabled: e.JOBS_ENABLED,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    logRequests: e.LOG_REQUESTS,
    metricsToken: e.METRICS_TOKEN,
    trustProxy: e.TRUST_PROXY,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ""),
    sessionDays: e.SESSION_DAYS,
    loginMaxFailures: e.LOGIN_MAX_FAILURES,
    loginEmailMaxFailures: e.LOGIN_EMAIL_MAX_FAILURES,
    loginWindowSeconds: e.LOGIN_WINDOW_SECONDS,
    shareRateLimit: e.SHARE_RATE_LIMIT,
    shareRateWindowSeconds: e.SHARE_RATE_WINDOW_SECONDS,
    oidcProviders: oidc.providers,
    oidcAllowedDomains: domains,
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
