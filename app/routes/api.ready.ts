import type { LoaderFunctionArgs } from "@remix-run/node";
import { getOnly, json } from "~/http.server";

/** Readiness: the process is up and the database answers. */
export const action = getOnly;

export const loader = async ({ context }: LoaderFunctionArgs) => {
  try {
    await context.services.sql`select 1`;
    return json({ status: "ok", database: "ok" });
  } catch {
    return json({ status: "unavailable", database: "unreachable" }, 503);
  }
};
