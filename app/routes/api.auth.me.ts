import { json } from "~/http.server";
import { toPublicUser } from "~/accounts/users.server";
import { listProjects } from "~/team/projects.server";
import { teamRoute } from "~/team/api.server";

/** GET: the signed-in user and the projects they belong to, with their role in each. */
const route = teamRoute({
  GET: async ({ services, user }) => json({ user: toPublicUser(user), projects: await listProjects(services.sql, user) }),
}, { beforePasswordChange: true });
export const loader = route;
export const action = route;
