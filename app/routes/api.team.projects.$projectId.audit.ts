import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { csvResponse, projectAudit, projectAuditCsv } from "~/team/audit.server";
import { fail, queryOf } from "~/errors/params.server";

/**
 * GET ?action=&actor=&from=&to=&limit=&before=: the project's audit log, newest first
 * (`{data, next_before}`); with `format=csv`, every matching row as CSV. Owner/admin.
 */
const route = teamRoute({
  GET: async ({ services, user, params, request }) => {
    const q = queryOf(request);
    const format = q.get("format");
    if (format === "csv") return csvResponse(await projectAuditCsv(services.sql, user, params.projectId, q), "audit.csv");
    const answer = await projectAudit(services.sql, user, params.projectId, q);
    if (format !== null && format !== "json") fail("format", "must be json or csv");
    return json(answer);
  },
});
export const loader = route;
export const action = route;
