import type PgBoss from "pg-boss";
import type { Sql } from "../db/client.js";
import { REPLICA_PROBE_MS, type Replica } from "../db/replica.js";
import type { Config } from "~/env.server";
import { ApiKeyAuth } from "~/auth/api-keys.server";
import { EventWriter } from "~/ingest/writer.server";
import { AlertEnqueuer } from "~/alerts/enqueue.server";
import { EconomyAlertEnqueuer } from "~/alerts/economy-enqueue.server";
import { SentryKeyAuth } from "~/sentry/auth.server";
import { SentryLimits } from "~/sentry/limits.server";
import { KnownFingerprints } from "~/ingest/fingerprint.server";
import { GroupingRuleCache } from "~/ingest/rules.server";
import { LearnedTemplates } from "~/ingest/learned-templates.server";
import { isMutation } from "~/accounts/csrf.server";
import { readCookie } from "~/accounts/sessions.server";
import { authorize, EVERYONE, type Actor } from "~/team/access.server";
import { CounterDrainer } from "../db/counter-deltas.js";
import { BodyBudget } from "~/body-budget.server";
import { DatabaseBudget } from "../db/deadline.js";
import { log } from "../log/logger.js";

/** What every loader and action receives through the Remix load context. */
export type Services = {
  config: Config;
  /** the primary: writes, and every read not routed through `reading` */
  sql: Sql;
  /** the streaming replica (DATABASE_REPLICA_URL) that `reading` may send reads to, or null */
  replica: Replica | null;
  writer: EventWriter;
  /** fingerprints known to have a group: ingest skips their earlier versions' fingerprints, the Sentry new-issue bound their look-up */
  known: KnownFingerprints;
  /** each project's grouping rules, compiled (ingest reads them through it; their writes forget them) */
  groupingRules: GroupingRuleCache;
  /** the projects' learned templates, cached, and the trigger that learns after writes that made issues */
  learned: LearnedTemplates;
  apiKeys: ApiKeyAuth;
  /** `sentry_key` of the Sentry protocol endpoints: DSN keys and native keys */
  sentryKeys: SentryKeyAuth;
  /** per-key events per minute and per-project new issues per minute of the Sentry endpoints */
  sentryLimits: SentryLimits;
  boss: PgBoss | null;
  /** the ingest's alert trigger (see AlertEnqueuer) */
  alerts: AlertEnqueuer;
  /** the economy's alert trigger, after pushes (see EconomyAlertEnqueuer) */
  economyAlerts: EconomyAlertEnqueuer;
  /** applies the deferred counters of ingest writes (db/counter-deltas.ts) */
  counters: CounterDrainer;
  /** the request-body bytes the process may hold at once (BODY_MEMORY_BYTES), shared by every body reader */
  bodies: BodyBudget;
  /**
   * A pool as this request uses it: bound to the request's database budget (see forRequest), so a
   * replica's reads count against it too. The process's own Services return the pool unchanged.
   */
  bound: <S extends Sql>(sql: S) => S;
  /** the migration files this release has (readiness compares the database's with them) */
  migrations: readonly string[];
};

declare module "@remix-run/node" {
  interface AppLoadContext {
    services: Services;
    /** the client's address (X-Forwarded-For only when TRUST_PROXY is set), for per-address rate limits */
    clientAddress: string;
  }
}

/** `migrations`: the files of db/migrations (read by the process, since the app's build lives elsewhere). */
export function createServices(config: Config, sql: Sql, boss: PgBoss | null, replica: Replica | null, migrations: readonly string[]): Services {
  const alerts = new AlertEnqueuer(sql, boss);
  const apiKeys = new ApiKeyAuth(sql, config.apiKeyCacheSeconds);
  const known = new KnownFingerprints();
  const counters = new CounterDrainer(sql, { intervalMs: config.counterDrainIntervalMs }).start();
  const learned = new LearnedTemplates(sql, boss);
  return {
    config,
    sql,
    replica,
    migrations,
    boss,
    alerts,
    economyAlerts: new EconomyAlertEnqueuer(sql, boss),
    apiKeys,
    known,
    groupingRules: new GroupingRuleCache(),
    learned,
    counters,
    bodies: new BodyBudget(config.bodyMemoryBytes),
    bound: (sql) => sql,
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
        learned.groupsCreated(groups);
        counters.whenApplied(pending, () => {
          try {
            alerts.add(groups);
          } catch (err) {
            log.error({ err }, "[alerts] enqueue failed");
          }
        });
      },
    }),
  };
}

/**
 * The Services one request receives (through the load context): its primary pool, the replica's
 * reads and its API-key look-ups spend one database budget of DB_TIMEOUT_MS, the wait for a pool
 * connection included; past it the request's queries are withdrawn or cancelled and fail with the
 * 503 (db/deadline.ts). The ingest writer, the counter drain and the alert trigger stay on the pool:
 * they serve many requests and keep their own bounds.
 */
export function forRequest(services: Services): Services {
  return Object.create(requestServices(services)) as Services;
}

/**
 * What forRequest's objects share, made once per Services: the getters of the budget-bound members.
 * A request's budget, pool and key look-ups are made on first use (a refused request with a cached
 * key makes none), and kept on the request's object under symbols.
 */
const BUDGET = Symbol("database budget");
const SQL = Symbol("bound sql");
const KEYS = Symbol("bound api keys");
const OWNER = Symbol("request services");
type PerRequest = Services & { [BUDGET]?: DatabaseBudget; [SQL]?: Sql; [KEYS]?: Services["apiKeys"] };
const requestPrototypes = new WeakMap<Services, object>();

function requestServices(services: Services): object {
  let proto = requestPrototypes.get(services);
  if (proto) return proto;
  const budgetOf = (self: PerRequest) => (self[BUDGET] ??= new DatabaseBudget(services.config.dbTimeoutMs));
  // the key look-ups of one request: the process's, on the request's bound pool
  const keys = Object.create(services.apiKeys, {
    sql: {
      get(this: { [OWNER]: PerRequest }) {
        return this[OWNER].sql;
      },
    },
  }) as Services["apiKeys"];
  proto = Object.create(services, {
    sql: {
      get(this: PerRequest) {
        return (this[SQL] ??= budgetOf(this).bind(services.sql));
      },
    },
    apiKeys: {
      get(this: PerRequest) {
        let k = this[KEYS];
        if (!k) {
          k = Object.create(keys) as Services["apiKeys"];
          (k as unknown as { [OWNER]: PerRequest })[OWNER] = this;
          this[KEYS] = k;
        }
        return k;
      },
    },
    bound: {
      value(this: PerRequest, pool: Sql) {
        return budgetOf(this).bind(pool);
      },
    },
  }) as object;
  requestPrototypes.set(services, proto);
  return proto;
}

/**
 * Set on the response to every dashboard form post (see server.ts) while a replica is configured:
 * for its lifetime the browser's reads go to the primary, so the pages after a user's own write
 * (the redirect, the revalidation, the next click) show it even when the replica has not replayed
 * it yet. It lasts as long as a write may take to reach a replica that serves reads (the lag
 * bound plus three probe periods, see Replica.state), and a second more.
 */
export const OWN_WRITES_COOKIE = "rm_own_writes";

export function ownWritesCookie(services: Pick<Services, "replica" | "config">, secure: boolean): string | undefined {
  if (!services.replica) return undefined;
  const seconds = Math.ceil((services.config.replicaMaxLagMs + 3 * REPLICA_PROBE_MS) / 1000) + 1;
  return [`${OWN_WRITES_COOKIE}=1`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${seconds}`, ...(secure ? ["Secure"] : [])].join("; ");
}

/**
 * A read-only loader's queries: on the replica when one is configured and serving (see Replica),
 * else on the primary. The primary also answers the loaders of a form post (they render what the
 * action just wrote) and every request carrying OWN_WRITES_COOKIE. Only for reads: `fn` may run
 * twice (again on the primary when the replica fails it).
 */
export function reading<T>(services: Pick<Services, "replica" | "sql" | "bound">, request: Request, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const replica = replicaFor(services, request);
  return replica ? replica.read((sql) => fn(services.bound(sql))) : fn(services.sql);
}

/** The replica `reading` may send this request's queries to, or null when they go to the primary. */
const replicaFor = ({ replica }: Pick<Services, "replica">, request: Request) =>
  !replica || isMutation(request) || readCookie(request, OWN_WRITES_COOKIE) !== undefined ? null : replica;

/**
 * `reading` for a project's page. When its queries go to the replica, the user's membership is
 * checked on the primary first: a member removed a moment ago is refused at once (404), not for as
 * long as the replica takes to replay the removal. The page's queries still check it where they run.
 */
export async function readingAsMember<T>(
  services: Pick<Services, "replica" | "sql" | "bound">,
  request: Request,
  actor: Actor,
  projectId: string | undefined,
  fn: (sql: Sql) => Promise<T>,
): Promise<T> {
  const replica = replicaFor(services, request);
  if (!replica) return fn(services.sql);
  await authorize(services.sql, actor, projectId, EVERYONE);
  return replica.read((sql) => fn(services.bound(sql)));
}
