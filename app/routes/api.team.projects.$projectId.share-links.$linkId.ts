import { json } from "~/http.server";
import { revokeShare } from "~/team/share-links.server";
import { teamRoute } from "~/team/api.server";

/** DELETE: revokes the link (owner/admin, or the member who made it). */
const route = teamRoute({
  DELETE: async ({ services, user, params }) => {
    await revokeShare(services.sql, user, params.projectId, params.linkId);
    return json({ revoked: true });
  },
});
export const loader = route;
export const action = route;
