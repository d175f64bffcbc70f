import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { createChannel, listProjectChannels } from "~/alerts/channels.server";

/** GET: the project's alert channels (URLs masked); POST {name, kind, url, secret?, enabled?}. Owner/admin. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ data: await listProjectChannels(services, user, params.projectId) }),
  POST: async ({ services, user, params, body }) => json(await createChannel(services, user, params.projectId, await body()), 201),
});
export const loader = route;
export const action = route;
