import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { listProjects } from "~/team/projects.server";
import { utc } from "~/components/format";
import { reading } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Projects · Roblox Monitor" }];

export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return { projects: await reading(context.services, request, (sql) => listProjects(sql, user)) };
};

export default function Projects() {
  const { projects } = useLoaderData<typeof loader>();
  return (
    <>
      <div className="row between">
        <h1>Projects</h1>
        <Link className="button primary" to="/projects/new">New project</Link>
      </div>
      {projects.length === 0 ? (
        <div className="panel">
          <p>You are not in any project yet. Create one for your game, or ask a project owner to add you.</p>
        </div>
      ) : (
        <table className="panel">
          <thead>
            <tr><th>Name</th><th>Your role</th><th>Created</th></tr>
          </thead>
          <tbody>
            {projects.map((p) => (
              <tr key={p.id}>
                <td><Link to={`/projects/${p.id}`}>{p.name}</Link></td>
                <td>{p.role}</td>
                <td className="muted">{utc(p.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
