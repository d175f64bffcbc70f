import { json } from "~/http.server";
import { mergedInto } from "~/team/merge.server";
import { teamRoute } from "~/team/api.server";

/** GET: the issues merged into this one, {members: [...]}, its own part (`own: true`) first. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json(await mergedInto(services.sql, user, params.projectId, params.groupId)),
});
export const loader = route;
export const action = route;
