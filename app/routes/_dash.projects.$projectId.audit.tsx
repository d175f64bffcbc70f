import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { ApiError } from "~/http.server";
import { authorize, MANAGERS } from "~/team/access.server";
import { projectAudit } from "~/team/audit.server";
import { auditPage } from "~/team/audit-page.server";
import { PROJECT_ACTIONS } from "~/team/audit-actions";
import { AuditLog } from "~/components/audit-log";

export const meta: MetaFunction = () => [{ title: "Audit log · Roblox Monitor" }];

/** Owners and admins: who changed what in this project, and when. */
export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const { sql } = context.services;
  const user = await requirePageUser(context.services, request);
  try {
    const { projectId } = await authorize(sql, user, params.projectId, MANAGERS, "read the audit log");
    return await auditPage(request, `/api/team/projects/${projectId}/audit`, (q) => projectAudit(sql, user, projectId, q));
  } catch (err) {
    if (ApiError.is(err)) throw data({ code: err.code, message: err.message }, { status: err.status });
    throw err;
  }
};

export default function ProjectAudit() {
  const page = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  return (
    <>
      <p className="row">
        <Link to={`${base}/settings`}>Settings</Link>
        <strong>Audit log</strong>
      </p>
      <AuditLog {...page} actions={PROJECT_ACTIONS} />
    </>
  );
}
