import { json } from "~/http.server";
import { addComment, issueComments } from "~/team/collaboration.server";
import { teamRoute } from "~/team/api.server";

/** GET: the issue's comments, oldest first; POST {body}: a new comment (any member), 201. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ data: await issueComments(services.sql, user, params.projectId, params.groupId) }),
  POST: async ({ services, user, params, body }) =>
    json({ comment: await addComment(services.sql, user, params.projectId, params.groupId, await body()) }, 201),
});
export const loader = route;
export const action = route;
