import type PgBoss from "pg-boss";
import type { Sql } from "../db/client.js";
import type { Config } from "~/env.server";
import { ApiKeyAuth } from "~/auth/api-keys.server";
import { EventWriter } from "~/ingest/writer.server";

/** What every loader and action receives through the Remix load context. */
export type Services = {
  config: Config;
  sql: Sql;
  writer: EventWriter;
  apiKeys: ApiKeyAuth;
  boss: PgBoss | null;
};

declare module "@remix-run/node" {
  interface AppLoadContext {
    services: Services;
    /** the client's address (X-Forwarded-For only when TRUST_PROXY is set), for per-address rate limits */
    clientAddress: string;
  }
}

export function createServices(config: Config, sql: Sql, boss: PgBoss | null): Services {
  return {
    config,
    sql,
    boss,
    apiKeys: new ApiKeyAuth(sql, config.apiKeyCacheSeconds),
    writer: new EventWriter(sql, {
      throttle: { limit: config.throttleLimit, windowSeconds: config.throttleWindowSeconds },
      concurrency: config.ingestConcurrency,
      maxEventsPerWrite: 2000,
    }),
  };
}
