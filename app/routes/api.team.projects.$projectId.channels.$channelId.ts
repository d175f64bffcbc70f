import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { editChannel, removeChannel } from "~/alerts/channels.server";

/** PATCH {name?, url?, secret?, enabled?}; DELETE (also takes the channel out of every rule). Owner/admin. */
const route = teamRoute({
  PATCH: async ({ services, user, params, body }) =>
    json(await editChannel(services, user, params.projectId, params.channelId, await body())),
  DELETE: async ({ services, user, params }) => {
    await removeChannel(services, user, params.projectId, params.channelId);
    return json({ deleted: true });
  },
});
export const loader = route;
export const action = route;
