/**
 * The one event type that every ingest protocol produces and the accept step takes (see
 * accept.server.ts). A protocol parser (native JSON in native.server.ts, Sentry in app/sentry/)
 * reads its own wire format and hands over events already in this form: values within the limits
 * below, ids and times normalized. What is the same for every protocol (cutting long text, making
 * strings storable, grouping, the clock rules) happens once, in accept.
 */

export const LEVELS = ["error", "warn", "info"] as const;
export type Level = (typeof LEVELS)[number];

/** Breadcrumb bounds (docs/api.md, "breadcrumbs"): the SDK keeps well under them. */
export const BREADCRUMBS = { count: 100, bytes: 32 * 1024, message: 2048, category: 128, dataBytes: 4 * 1024 } as const;
export const BREADCRUMB_LEVELS = ["debug", "info", "warning", "error", "fatal"] as const;
export type BreadcrumbLevel = (typeof BREADCRUMB_LEVELS)[number];

/** Roblox servers keep UTC time: anything before the Unix epoch is a broken clock or a hostile value. */
export const MIN_TIMESTAMP_MS = Date.UTC(1970, 0, 1);

export type IncomingBreadcrumb = {
  /** ISO 8601 */
  timestamp?: string;
  level: BreadcrumbLevel;
  category?: string;
  message?: string;
  data?: Record<string, unknown>;
};

export type IncomingEvent = {
  message: string;
  level: Level;
  stackTrace: string | null;
  /** a Roblox user id: decimal digits without leading zeros, at most 2^63 - 1 */
  userId: string | null;
  playerName: string | null;
  /** a lowercase UUID with dashes */
  traceId: string | null;
  jobId: string | null;
  placeId: string | null;
  gameVersion: string | null;
  /** null: production */
  environment: string | null;
  context: Record<string, unknown> | null;
  tags: string[] | null;
  /** ms since the epoch, not before MIN_TIMESTAMP_MS; null: the receive time */
  timestamp: number | null;
  /** occurrences this event stands for, 1..1000 */
  count: number;
  /** the client's grouping parts; null: grouped by message and stack */
  fingerprint: string | string[] | null;
  breadcrumbs: IncomingBreadcrumb[] | null;
  /** the id stored on the raw event and answered to the client */
  eventId: string | null;
  /** an id the client keeps for every retry of this event (Sentry's event_id): the event is written at most once under it */
  dedupId: string | null;
  /** where the event happened when its frames are not Roblox script paths (Node, Python…); null: found from the stack */
  culprit: string | null;
};
