import { json } from "~/http.server";
import { deleteProject, getProjectFor, renameProject } from "~/team/projects.server";
import { teamRoute } from "~/team/api.server";

/** GET (any member), PATCH {name} (owner/admin), DELETE (owner: the project and all its data). */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ project: await getProjectFor(services.sql, user, params.projectId) }),
  PATCH: async ({ services, user, params, body }) =>
    json({ project: await renameProject(services.sql, user, params.projectId, await body()) }),
  DELETE: async ({ services, user, params }) => {
    await deleteProject(services.sql, user, params.projectId);
    return json({ deleted: true });
  },
});
export const loader = route;
export const action = route;
