import { byVersionDesc } from "~/components/version-order";
import type { Sql } from "../../db/client.js";
import { getGroup } from "../../db/errors.js";
import { groupEventPage, groupTagBreakdown, type GroupRef } from "../../db/group-reads.js";
import { listTraces } from "../../db/traces.js";
import { findPlayers, getPlayer, groupPlayers, playerEvents, playerGroups } from "../../db/players.js";
import { groupEnvironments, groupVersions } from "../../db/versions.js";
import { notFound } from "~/http.server";
import { asUuid } from "~/input.server";
import { fail, integer, text } from "./params.server";
import { withTitle } from "./title.server";

/** The reads behind releases, players, event paging, tag breakdowns and trace lists (API and dashboard). */

const noGroup = () => notFound("No error group with that id in this project.");

async function groupIn(sql: Sql, projectId: string, groupIdParam: string | undefined) {
  const groupId = asUuid(groupIdParam);
  const group = groupId ? await getGroup(sql, projectId, groupId) : undefined;
  if (!groupId || !group) throw noGroup();
  return { groupId, group };
}

const eventId = (q: URLSearchParams, name: string) => {
  const raw = q.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,18}$/.test(raw.trim())) fail(name, "must be an event id");
  return raw.trim();
};

/** Paging through every stored event of a group: `before`/`after` an event id, `limit` 1..100. */
export async function groupEvents(sql: Sql, projectId: string, groupIdParam: string | undefined, q: URLSearchParams) {
  const { group } = await groupIn(sql, projectId, groupIdParam);
  return groupEventsOf(sql, projectId, group, q);
}

/** groupEvents of a group already read (its row, for where it is merged). */
export async function groupEventsOf(sql: Sql, projectId: string, group: GroupRef, q: URLSearchParams) {
  const before = eventId(q, "before");
  const after = eventId(q, "after");
  if (before && after) fail("after", "cannot be combined with before");
  const limit = Math.min(100, integer(q, "limit", 20, 1));
  const page = await groupEventPage(sql, projectId, group, { before, after }, limit);
  return { data: page.events, newer: page.newer, older: page.older, limit };
}

/** Per environment and per version figures of one group, with its affected players. */
export async function groupFacets(sql: Sql, projectId: string, groupId: string) {
  const [environments, versions, players] = await Promise.all([
    groupEnvironments(sql, projectId, groupId),
    groupVersions(sql, projectId, groupId),
    groupPlayers(sql, projectId, groupId),
  ]);
  return {
    environments: environments.map((e) => ({ ...e, count: Number(e.count) })),
    // newest version first by version order (not by when each was first seen: a hotfix of an older line comes later)
    versions: byVersionDesc(versions.map((v) => ({ ...v, count: Number(v.count) }))),
    players,
  };
}

export async function groupTags(sql: Sql, projectId: string, groupIdParam: string | undefined) {
  const { group } = await groupIn(sql, projectId, groupIdParam);
  return groupTagBreakdown(sql, projectId, group);
}

export async function players(sql: Sql, projectId: string, q: URLSearchParams) {
  const search = (text(q, "search") ?? "").trim();
  if (search.length > 256) fail("search", "must be at most 256 characters");
  const limit = Math.min(100, integer(q, "limit", 50, 1));
  const data = await findPlayers(sql, projectId, search, limit);
  return { data: data.map((p) => ({ ...p, issues: Number(p.issues) })), search, limit };
}

/** A player's issues and latest stored events; 404 when the id never ran into an error. */
export async function player(sql: Sql, projectId: string, userIdParam: string | undefined) {
  const userId = /^\d{1,19}$/.test(userIdParam ?? "") && BigInt(userIdParam!) <= 9223372036854775807n ? userIdParam! : undefined;
  const found = userId ? await getPlayer(sql, projectId, userId) : undefined;
  if (!userId || !found) throw notFound("No player with that user id ran into an error in this project.");
  const [issues, events] = await Promise.all([
    playerGroups(sql, projectId, userId),
    playerEvents(sql, projectId, userId, 20),
  ]);
  return { player: found, issues: issues.map(withTitle), events };
}

export async function traces(sql: Sql, projectId: string, q: URLSearchParams) {
  const limit = Math.min(100, integer(q, "limit", 50, 1));
  const offset = integer(q, "offset", 0, 0, 1_000_000);
  const { data, total, totalExact } = await listTraces(sql, projectId, limit, offset);
  return { data, total, total_exact: totalExact, limit, offset };
}
