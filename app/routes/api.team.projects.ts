import { json } from "~/http.server";
import { createProject, listProjects } from "~/team/projects.server";
import { teamRoute } from "~/team/api.server";

/** GET: the user's projects with their role. POST {name}: a new project owned by the user, with its first key shown once. */
const route = teamRoute({
  GET: async ({ services, user }) => json({ data: await listProjects(services.sql, user) }),
  POST: async ({ services, user, body }) => {
    const { project, api_key, key } = await createProject(services.sql, user, await body());
    return json({ project, api_key, key_id: key.id }, 201);
  },
});
export const loader = route;
export const action = route;
