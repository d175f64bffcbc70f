import { listDeliveries } from "../../db/alerts.js";
import { authorize, EVERYONE, type Actor } from "~/team/access.server";
import type { Sql } from "../../db/client.js";
import { integer } from "~/errors/params.server";
import { issueTitle } from "~/errors/title.server";
import { triggerName } from "./triggers";

/** What people call a delivery's trigger: the rule triggers' names, and "Test alert" for a channel test. */
export const deliveryTriggerName = (t: string) => (t === "test" ? "Test alert" : triggerName(t));

/** The delivery log, newest first, paged by `before` (an id from the previous page). */
export async function listProjectDeliveries(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined, query: URLSearchParams) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "see the alert delivery log");
  const limit = integer(query, "limit", 50, 1, 200);
  const before = integer(query, "before", 0, 0);
  const rows = await listDeliveries(deps.sql, projectId, limit, before || undefined);
  const data = rows.map((r) => ({ ...r, trigger_name: deliveryTriggerName(r.trigger), group_title: r.group_message === null ? null : issueTitle(r.group_message) }));
  return { data, next_before: rows.length === limit ? rows[rows.length - 1].id : null };
}
