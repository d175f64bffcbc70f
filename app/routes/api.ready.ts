import type { LoaderFunctionArgs } from "@remix-run/node";
import { getOnly, json } from "~/http.server";
import { databaseAnswers } from "~/db-deadline.server";

/** Readiness: the process is up and the database answers (within READY_TIMEOUT_MS). */
export const action = getOnly;

export const loader = async ({ context }: LoaderFunctionArgs) => {
  if (await databaseAnswers(context.services.sql)) return json({ status: "ok", database: "ok" });
  return json({ status: "unavailable", database: "unreachable" }, 503);
};
