import { json } from "~/http.server";
import { issueTimeline } from "~/team/collaboration.server";
import { teamRoute } from "~/team/api.server";

/** GET: the issue's timeline (comments and events, with those of issues merged into it), oldest first. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ data: await issueTimeline(services.sql, user, params.projectId, params.groupId) }),
});
export const loader = route;
export const action = route;
