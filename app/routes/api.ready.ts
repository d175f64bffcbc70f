import type { LoaderFunctionArgs } from "@remix-run/node";
import { getOnly, json } from "~/http.server";
import { READY_TIMEOUT_MS, withinDatabaseDeadline } from "~/db-deadline.server";

/** Readiness: the process is up and the database answers (within READY_TIMEOUT_MS). */
export const action = getOnly;

export const loader = async ({ context }: LoaderFunctionArgs) => {
  try {
    await withinDatabaseDeadline(context.services.sql`select 1`.execute(), READY_TIMEOUT_MS);
    return json({ status: "ok", database: "ok" });
  } catch {
    return json({ status: "unavailable", database: "unreachable" }, 503);
  }
};
