import type PgBoss from "pg-boss";
import type { Sql } from "../db/client.js";
import type { Config } from "~/env.server";
import { ApiKeyAuth } from "~/auth/api-keys.server";
import { EventWriter } from "~/ingest/writer.server";
import { AlertEnqueuer } from "~/alerts/enqueue.server";
import { SentryKeyAuth } from "~/sentry/auth.server";
import { SentryLimits } from "~/sentry/limits.server";
import { KnownFingerprints } from "~/ingest/fingerprint.server";
import { CounterDrainer } from "../db/counter-deltas.js";

/** What every loader and action receives through the Remix load context. */
export type Services = {
  config: Config;
  sql: Sql;
  writer: EventWriter;
  /** fingerprints known to have a group: ingest skips their secondary fingerprint, the Sentry new-issue bound their look-up */
  known: KnownFingerprints;
  apiKeys: ApiKeyAuth;
  /** `sentry_key` of the Sentry protocol endpoints: DSN keys and native keys */
  sentryKeys: SentryKeyAuth;
  /** per-key events per minute and per-project new issues per minute of the Sentry endpoints */
  sentryLimits: SentryLimits;
  boss: PgBoss | null;
  /** the ingest's alert trigger (see AlertEnqueuer) */
  alerts: AlertEnqueuer;
  /** applies the deferred counters of ingest writes (db/counter-deltas.ts) */
  counters: CounterDrainer;
};

declare module "@remix-run/node" {
  interface AppLoadContext {
    services: Services;
    /** the client's address (X-Forwarded-For only when TRUST_PROXY is set), for per-address rate limits */
    clientAddress: string;
  }
}

export function createServices(config: Config, sql: Sql, boss: PgBoss | null): Services {
  const alerts = new AlertEnqueuer(sql, boss);
  const apiKeys = new ApiKeyAuth(sql, config.apiKeyCacheSeconds);
  const known = new KnownFingerprints();
  const counters = new CounterDrainer(sql).start();
  return {
    config,
    sql,
    boss,
    alerts,
    apiKeys,
    known,
    counters,
    sentryKeys: new SentryKeyAuth(sql, apiKeys, config.apiKeyCacheSeconds),
    sentryLimits: new SentryLimits(sql, known, config.sentryMaxNewIssuesPerMinute),
    writer: new EventWriter(sql, {
      throttle: { limit: config.throttleLimit, windowSeconds: config.throttleWindowSeconds },
      shards: config.ingestShards,
      concurrency: config.ingestConcurrency,
      // a transaction takes what queued while the previous one ran, up to this: the more events per
      // group row in one transaction, the fewer row writes per event (see docs/benchmarks.md)
      maxEventsPerWrite: 5000,
      timeoutMs: config.dbTimeoutMs,
      // after commit, never inside the transaction; add() only touches memory and cannot throw into
      // ingest. Alerts wait for the write's counters to be applied: rules on occurrences in a window
      // and on players read them
      afterCommit: (groups, pending) => {
        counters.whenApplied(pending, () => {
          try {
            alerts.add(groups);
          } catch (err) {
            console.error("[alerts] enqueue failed:", err);
          }
        });
      },
    }),
  };
}
