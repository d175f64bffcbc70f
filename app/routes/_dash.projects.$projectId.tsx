import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { NavLink, Outlet, useLoaderData, useLocation } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { getProjectFor } from "~/team/projects.server";
import { pageLoad } from "~/dashboard/page.server";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.project.name ?? "Project"} · Roblox Monitor` }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() => readingAsMember(context.services, request, user, params.projectId, async (sql) => ({ project: await getProjectFor(sql, user, params.projectId) })));
};

export default function ProjectLayout() {
  const { project } = useLoaderData<typeof loader>();
  const base = `/projects/${project.id}`;
  // the delivery log belongs to the Alerts tab
  const inAlerts = useLocation().pathname.startsWith(`${base}/deliveries`);
  return (
    <>
      <h1>{project.name}</h1>
      <nav className="tabs">
        <NavLink to={base} end className={({ isActive }) => (isActive ? "active" : "")}>Overview</NavLink>
        <NavLink to={`${base}/issues`} className={({ isActive }) => (isActive ? "active" : "")}>Issues</NavLink>
        <NavLink to={`${base}/releases`} className={({ isActive }) => (isActive ? "active" : "")}>Release health</NavLink>
        <NavLink to={`${base}/servers`} className={({ isActive }) => (isActive ? "active" : "")}>Live servers</NavLink>
        <NavLink to={`${base}/players`} className={({ isActive }) => (isActive ? "active" : "")}>Players</NavLink>
        <NavLink to={`${base}/traces`} className={({ isActive }) => (isActive ? "active" : "")}>Traces</NavLink>
        <NavLink to={`${base}/economy`} className={({ isActive }) => (isActive ? "active" : "")}>Economy</NavLink>
        <NavLink to={`${base}/alerts`} className={({ isActive }) => (isActive || inAlerts ? "active" : "")}>Alerts</NavLink>
        <NavLink to={`${base}/settings`} className={({ isActive }) => (isActive ? "active" : "")}>Settings</NavLink>
      </nav>
      <Outlet />
    </>
  );
}
