import type { LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, Outlet, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { TimeZoneContext } from "~/components/time";
import { timeZoneOf } from "~/dashboard/preferences.server";
import { unreadCount } from "~/team/notices.server";
import { isInstanceAdmin } from "../../db/audit.js";

/** The signed-in frame. Every child loader checks the session itself too (loaders run in parallel). */
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  // the frame also wraps the Account page, where a temporary password is changed
  const user = await requirePageUser(context.services, request, { beforePasswordChange: true });
  const [unread, instanceAdmin] = await Promise.all([unreadCount(context.services.sql, user), isInstanceAdmin(context.services.sql, user.id)]);
  return { user: { id: user.id, email: user.email, mustChangePassword: user.must_change_password, instanceAdmin }, timeZone: timeZoneOf(request), unread };
};

export default function Dashboard() {
  const { user, timeZone, unread } = useLoaderData<typeof loader>();
  return (
    <TimeZoneContext.Provider value={timeZone}>
      <header className="topbar">
        <Link to="/projects" className="brand">Roblox Monitor</Link>
        <Link to="/projects">Projects</Link>
        {user.instanceAdmin ? <Link to="/instance/audit">Instance audit</Link> : null}
        <span className="spacer" />
        <Link to="/notifications" aria-label={`Assigned to you${unread ? `, ${unread} unread` : ""}`}>Assigned{unread ? <span className="nav-count" data-testid="unread-count">{unread}</span> : null}</Link>
        <Link to="/account">{user.email}</Link>
        <Form method="post" action="/logout">
          <button type="submit">Sign out</button>
        </Form>
      </header>
      <div className="page">
        <Outlet />
      </div>
    </TimeZoneContext.Provider>
  );
}
