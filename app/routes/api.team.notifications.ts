import { json } from "~/http.server";
import { myNotices, readMyNotices } from "~/team/notices.server";
import { teamRoute } from "~/team/api.server";

/** GET: the signed-in user's "Assigned to you" notices and unread count; POST {}: marks them all read. */
const route = teamRoute({
  GET: async ({ services, user }) => json(await myNotices(services.sql, user)),
  POST: async ({ services, user }) => json({ marked_read: await readMyNotices(services.sql, user) }),
});
export const loader = route;
export const action = route;
