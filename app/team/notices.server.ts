import type { Sql } from "../../db/client.js";
import { listNotices, markNoticesRead, unreadNotices } from "../../db/assignment.js";
import { issueTitle } from "~/errors/title.server";
import type { Actor } from "./access.server";

/**
 * "Assigned to you": a notice each time someone else assigns an issue to you, over all your projects
 * (those you left hold none). They are read when you open the list of them, or the issue itself.
 */
export async function myNotices(sql: Sql, actor: Actor) {
  const [data, unread] = await Promise.all([listNotices(sql, actor.id), unreadNotices(sql, actor.id)]);
  return { data: data.map((n) => ({ ...n, title: n.title || issueTitle(n.message) })), unread };
}

export const readMyNotices = (sql: Sql, actor: Actor, issue?: { projectId: string; groupId: string }) => markNoticesRead(sql, actor.id, issue);

/** The nav's count of unread notices. */
export const unreadCount = (sql: Sql, actor: Actor) => unreadNotices(sql, actor.id);
