import type { EventRow } from "../../db/events.js";

/** A plain event row as the writer receives it (no user, trace or version), with `over` applied. */
export function eventRow(projectId: string, fingerprint: string, over: Partial<EventRow> = {}): EventRow {
  return {
    projectId,
    fingerprint,
    olderFingerprints: [],
    message: `message of ${fingerprint}`,
    level: "error",
    stackTrace: null,
    userId: null,
    playerName: null,
    traceId: null,
    jobId: null,
    placeId: null,
    gameVersion: null,
    environment: "production",
    context: null,
    tags: null,
    timestamp: Date.now(),
    count: 1,
    culprit: null,
    ...over,
  };
}
