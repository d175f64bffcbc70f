import type { LoaderFunctionArgs } from "@remix-run/node";
import { getOnly, json } from "~/http.server";
import { readyState } from "~/db-deadline.server";

/**
 * Readiness (docs/operations.md#liveness-and-readiness): 200 while the database answers within
 * READY_TIMEOUT_MS, 503 when it does not. The body also says whether the deferred counters are behind
 * their bound and whether a newer release has migrated the database; neither takes the instance out
 * of a load balancer (every instance shares the database, so none would do better).
 */
export const action = getOnly;

/** Past this age, the oldest pending counter row means the drain is behind its 2 s staleness bound. */
export const COUNTERS_BEHIND_S = 10;

export const loader = async ({ context }: LoaderFunctionArgs) => {
  const state = await readyState(context.services.sql, context.services.migrations);
  if (!state) return json({ status: "unavailable", database: "unreachable" }, 503);
  return json({
    status: "ok",
    database: "ok",
    counters: { status: state.counters.oldest_s > COUNTERS_BEHIND_S ? "behind" : "ok", ...state.counters },
    schema: state.newer_migrations.length > 0 ? { status: "newer", unknown_migrations: state.newer_migrations } : { status: "current" },
  });
};
