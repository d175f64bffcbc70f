/** The shapes a batch write takes and returns (db/events.ts `writeEvents`), shared by its steps. */

export type Level = "error" | "warn" | "info";

/** One validated, normalized event ready to be written. */
export type EventRow = {
  projectId: string;
  fingerprint: string;
  /** the earlier grouping versions' fingerprints that differ, newest first (see resolveGroups in db/write-resolve.ts) */
  olderFingerprints: string[];
  message: string;
  level: Level;
  stackTrace: string | null;
  userId: string | null;
  playerName: string | null;
  traceId: string | null;
  jobId: string | null;
  placeId: string | null;
  gameVersion: string | null;
  environment: string;
  context: unknown;
  tags: string[] | null;
  /** what happened before the event, oldest first (see storedBreadcrumbs); null or absent: none */
  breadcrumbs?: unknown[] | null;
  /** occurrence time, ms since epoch */
  timestamp: number;
  /**
   * the start of the retention window when the event was received: an older timestamp counts as this
   * for its issue's times (first and last seen, first version, per version and environment); the stored
   * event keeps its own
   */
  notBefore?: number;
  count: number;
  culprit: string | null;
  /**
   * what the learned templates work on (app/ingest/miner.server.ts): the default grouping key's
   * location and template; null or absent: not grouped by default (a client fingerprint, a learned template)
   */
  grouping?: { location: string; template: string; bucket?: string; words?: string[] } | null;
  /** the stack's distinct frames as issue search matches them (app/ingest/frames.server.ts); absent: none */
  frames?: string[];
  /** a client-chosen event id (Sentry protocol): a second event with the same id in the project is dropped */
  eventId?: string | null;
  /** the id stored on the event row and returned by the API (native `event_id`, Sentry's `event_id`); no dedup */
  storedEventId?: string | null;
};

export type TouchedGroup = {
  project_id: string;
  fingerprint: string;
  id: string;
  created: boolean;
  regressed: boolean;
  status: string;
};

export type WriteResult = {
  stored: boolean[];
  groups: TouchedGroup[];
  /** ids of the pending rows of deferred counters the write appended (db/counter-deltas.ts) */
  pending: string[];
};
export type ThrottleRule = { limit: number; windowSeconds: number };

/** A group row as the group upsert returns it (db/write-statements.ts), read by the steps after it. */
export type UpsertedGroup = TouchedGroup & {
  merged_into: string | null;
  /** the receive time of the row's stored events (text, as PostgreSQL prints it) */
  received: string;
  /** how many untraced events of the batch the row's throttle let in */
  kept: number;
};
