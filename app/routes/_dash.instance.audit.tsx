import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { ApiError } from "~/http.server";
import { instanceAudit } from "~/team/audit.server";
import { auditPage } from "~/team/audit-page.server";
import { INSTANCE_ACTIONS } from "~/team/audit-actions";
import { AuditLog } from "~/components/audit-log";

export const meta: MetaFunction = () => [{ title: "Instance audit log · Roblox Monitor" }];

/** Instance admins: accounts created, passwords changed, instance admins, deleted projects. */
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const { sql } = context.services;
  const user = await requirePageUser(context.services, request);
  try {
    return await auditPage(request, "/api/team/instance/audit", (q) => instanceAudit(sql, user, q));
  } catch (err) {
    if (ApiError.is(err)) throw data({ code: err.code, message: err.message }, { status: err.status });
    throw err;
  }
};

export default function InstanceAudit() {
  const page = useLoaderData<typeof loader>();
  return (
    <>
      <h1>Instance audit log</h1>
      <p className="muted small">Accounts, passwords and instance admins across this installation, and projects deleted. Each project keeps its own log under its Settings.</p>
      <AuditLog {...page} actions={INSTANCE_ACTIONS} />
    </>
  );
}
