import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { testChannel } from "~/alerts/channels.server";

/** POST {channel_id}: a synthetic alert through the channel (session; owner/admin of its project, else 404). */
const route = teamRoute({
  POST: async ({ services, user, body }) => json(await testChannel(services, user, await body())),
});
export const loader = route;
export const action = route;
