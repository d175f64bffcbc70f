import postgres from "postgres";

export type Sql = postgres.Sql<{}>;
export type TxSql = postgres.TransactionSql<{}>;

/**
 * One postgres.js client per process; every query goes through it. With `timeoutMs`, every statement
 * of the pool is bounded by it (`statement_timeout`) and so is every lock wait (`lock_timeout`): a
 * held lock or a stuck query ends in PostgreSQL itself, and the request that waited answers 503
 * (see isDatabaseUnavailable). Work that may take longer (migrations) lifts it for its transaction.
 */
export function createSql(
  url: string,
  max = 20,
  { timeoutMs, connectTimeoutSeconds = 10, applicationName }: { timeoutMs?: number; connectTimeoutSeconds?: number; applicationName?: string } = {},
): Sql {
  return postgres(url, {
    max,
    idle_timeout: 30,
    connect_timeout: connectTimeoutSeconds,
    onnotice: () => {},
    // Rollup buckets are UTC hours and minutes; date_trunc on a timestamptz truncates in the session's
    // zone, so a server configured for e.g. Asia/Kolkata (+05:30) would put series buckets at :30.
    connection: {
      TimeZone: "UTC",
      ...(applicationName ? { application_name: applicationName } : {}),
      ...(timeoutMs ? { statement_timeout: timeoutMs, lock_timeout: timeoutMs } : {}),
    },
    // bigint columns (counters, raw event ids) arrive as strings unless they fit in a JS number
    types: {
      bigint: {
        to: 20,
        from: [20],
        serialize: (x: unknown) => String(x),
        parse: (x: string) => {
          const n = Number(x);
          return Number.isSafeInteger(n) ? n : x;
        },
      },
    },
  });
}

/**
 * A parameter sent as json (oid 114), for `json_to_recordset(...::json)` and the like. postgres.js's
 * `sql.json()` sends jsonb: the server parses it into a jsonb value and prints that back to text for
 * the `::json` cast, and json_to_recordset then parses the text once more. As json the text is
 * checked once on input and parsed where it is read.
 */
export const asJson = (sql: Sql | TxSql, x: unknown) => sql.typed(x as never, 114);

// postgres.js codes for a connection that closed or could not be opened, and PostgreSQL's for a
// terminated backend, a server shutting down or starting up, or one out of connections
const CONNECTION_LOSS = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/** The error says the database could not be reached or the connection was lost, not that a statement failed. */
export const isConnectionLoss = (err: unknown) =>
  typeof err === "object" && err !== null && CONNECTION_LOSS.has(String((err as { code?: unknown }).code));

// a statement cancelled by statement_timeout (or a cancel request), a lock not granted within
// lock_timeout, a transaction given up at its deadline (db/transaction.ts)
const TIMED_OUT = new Set(["57014", "55P03", "DATABASE_DEADLINE"]);

/** The database did not answer in time or could not be reached: the request is worth retrying later (503). */
export const isDatabaseUnavailable = (err: unknown) =>
  isConnectionLoss(err) || (typeof err === "object" && err !== null && TIMED_OUT.has(String((err as { code?: unknown }).code)));
