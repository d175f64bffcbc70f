import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { csvResponse, instanceAudit, instanceAuditCsv } from "~/team/audit.server";
import { fail, queryOf } from "~/errors/params.server";

/**
 * GET ?action=&actor=&from=&to=&limit=&before=: the instance's audit log (accounts, instance admins,
 * deleted projects), newest first; with `format=csv`, every matching row as CSV. Instance admins.
 */
const route = teamRoute({
  GET: async ({ services, user, request }) => {
    const q = queryOf(request);
    const format = q.get("format");
    if (format === "csv") return csvResponse(await instanceAuditCsv(services.sql, user, q), "instance-audit.csv");
    const answer = await instanceAudit(services.sql, user, q);
    if (format !== null && format !== "json") fail("format", "must be json or csv");
    return json(answer);
  },
});
export const loader = route;
export const action = route;
