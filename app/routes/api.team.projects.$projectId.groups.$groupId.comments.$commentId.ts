import { json } from "~/http.server";
import { editComment, removeComment } from "~/team/collaboration.server";
import { teamRoute } from "~/team/api.server";

/** PATCH {body}: its author edits a comment; DELETE: its author, an owner or an admin deletes it. */
const route = teamRoute({
  PATCH: async ({ services, user, params, body }) =>
    json({ comment: await editComment(services.sql, user, params.projectId, params.groupId, params.commentId, await body()) }),
  DELETE: async ({ services, user, params }) => {
    await removeComment(services.sql, user, params.projectId, params.groupId, params.commentId);
    return json({ deleted: true });
  },
});
export const loader = route;
export const action = route;
