import { z } from "zod";
import { getGroup, type EventRow, type GroupRow } from "../../db/errors.js";
import { groupHourlySeries, groupIdentities, latestGroupEvents, type GroupRef } from "../../db/group-reads.js";
import { eventIdentities } from "../../db/identities.js";
import { findLiveShareLink } from "../../db/share-links.js";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import { forbidden, notFound } from "~/http.server";
import { countOrRefuse } from "~/rate-limit.server";
import { parseOr400 } from "~/input.server";
import { setStatusOf, statusSchema } from "~/team/groups.server";
import { hashShareToken } from "~/team/share-links.server";
import { scrubber, shareTags, type Known } from "./scrub.server";
import { issueTitle } from "~/errors/title.server";

/** What a share link's reader needs: the database and the per-address limit on share requests. */
type ShareDeps = { sql: Sql; config: Pick<Config, "shareRateWindowSeconds" | "shareRateLimit"> };

/** One answer for unknown, revoked and expired tokens, so a token's history cannot be probed. */
const gone = () => notFound("This share link does not exist, was revoked or has expired.");

/** Per client address, across instances; share tokens are guessable only by brute force, this makes it slow. */
const limit = ({ sql, config }: ShareDeps, clientAddress: string) =>
  countOrRefuse(sql, `share:${clientAddress}`, {
    windowSeconds: config.shareRateWindowSeconds,
    limit: config.shareRateLimit,
    refusal: (retry) => `Too many share-link requests; try again in ${retry} seconds.`,
  });

async function resolve(deps: ShareDeps, clientAddress: string, token: string | undefined) {
  await limit(deps, clientAddress);
  if (!token || token.length > 200) throw gone();
  const link = await findLiveShareLink(deps.sql, hashShareToken(token));
  if (!link) throw gone();
  return link;
}

/** A group as a share view shows it: the group's row and title, without its fingerprint, regression time or triage fields. */
export type SharedGroup = Omit<GroupRow, "fingerprint" | "regressed_at" | "grouping_version" | "merged_into" | "client_only" | keyof TriageFields> & { title: string };
type TriageFields = Pick<GroupRow, "assignee_id" | "first_version" | "last_version" | "regressed_version" | "snooze_until" | "snooze_count" | "snooze_users" | "environment_count">;

/** What a share view shows of a group: no user ids, player names or internal fingerprints. */
const publicGroup = (g: Record<string, unknown>, scrub: (text: string) => string): SharedGroup => ({
  id: g.id as string,
  message: scrub(g.message as string),
  title: scrub(typeof g.title === "string" && g.title !== "" ? g.title : issueTitle(g.message as string)),
  level: g.level as string,
  status: g.status as string,
  count: Number(g.count),
  user_count: Number(g.user_count),
  first_seen: g.first_seen as Date,
  last_seen: g.last_seen as Date,
  culprit: g.culprit === null ? null : scrub(g.culprit as string),
  environment: scrub(g.environment as string),
  resolved_at: g.resolved_at as Date | null,
});

/**
 * An event as a share view shows it: without who it happened to (user id, player name), without
 * what could lead back to them (free-form context, breadcrumbs, which hold the server's Output and
 * so players' chat and names, server job id, trace id, event id), with names and ids
 * scrubbed out of its text and the tags that name someone left out.
 */
export type SharedEvent = Omit<EventRow, "user_id" | "player_name" | "group_id" | "context" | "job_id" | "trace_id" | "event_id" | "breadcrumbs">;

const publicEvent = (
  { user_id: _u, player_name: _p, group_id: _g, received_at: _r, context: _c, job_id: _j, trace_id: _t, event_id: _i, breadcrumbs: _b, ...e }: Record<string, unknown>,
  scrub: (text: string) => string,
) => {
  const shown = e as SharedEvent;
  return {
    ...shown,
    message: scrub(shown.message),
    stack_trace: shown.stack_trace === null ? null : scrub(shown.stack_trace),
    environment: scrub(shown.environment),
    game_version: shown.game_version === null ? null : scrub(shown.game_version),
    tags: shareTags(shown.tags, scrub),
  };
};

type Identity = { player_name: string | null; user_id: unknown };

/**
 * Everyone the group's oldest and newest events name and everyone its row keeps as named by the
 * events whose text it shows (db/group-reads.ts groupIdentities), so their names and ids are
 * scrubbed wherever they appear.
 */
async function scrubFor(deps: { sql: Sql }, projectId: string, group: GroupRef) {
  return scrubberOf(await groupIdentities(deps.sql, projectId, group));
}

/** Who a shown event names beyond its player: players in its paths, values of its personal tags and context keys. */
const namedBy = (e: Record<string, unknown>) =>
  eventIdentities({
    playerName: e.player_name as string | null,
    userId: e.user_id as string | null,
    message: e.message as string,
    stackTrace: e.stack_trace as string | null,
    tags: e.tags as string[] | null,
    context: e.context,
  });

function scrubberOf(identities: Identity[], named: string[] = []) {
  const rows = identities.map((r) => ({
    player_name: r.player_name,
    user_id: r.user_id === null || r.user_id === undefined ? null : String(r.user_id),
  }));
  const known: Known = {
    names: [...rows.map((r) => r.player_name).filter((n): n is string => n !== null), ...named.filter((n) => !/^\d+$/.test(n))],
    ids: [...rows.map((r) => r.user_id).filter((id): id is string => id !== null), ...named.filter((n) => /^\d+$/.test(n))],
  };
  return scrubber(known);
}

export type ShareView = Awaited<ReturnType<typeof viewShare>>;

/** GET /api/share/:token and the share page: the group, its latest 20 events and its 7-day hourly series. */
export async function viewShare(deps: ShareDeps, clientAddress: string, token: string | undefined) {
  const link = await resolve(deps, clientAddress, token);
  const { sql } = deps;
  const group = await getGroup(sql, link.project_id, link.group_id);
  if (!group) throw gone();
  // by the group, not its id: a merged-away issue's events and chart are its own part of the issue it is in
  const [events, series, identities] = await Promise.all([
    latestGroupEvents(sql, link.project_id, group, 20),
    groupHourlySeries(sql, link.project_id, group),
    groupIdentities(sql, link.project_id, group),
  ]);
  const scrub = scrubberOf([...identities, ...(events as unknown as Identity[])], events.flatMap((e) => namedBy(e)));
  return {
    role: link.role,
    expires_at: link.expires_at,
    group: publicGroup(group, scrub),
    events: events.map((e) => publicEvent(e, scrub)),
    series: series.map((s) => ({ bucket: s.bucket, count: Number(s.count) })),
  };
}

export const StatusInput = z.object({ status: statusSchema });

/** POST /api/share/:token: editors change the status; viewers get 403. */
export async function updateShareStatus(
  deps: ShareDeps,
  clientAddress: string,
  token: string | undefined,
  readBody: () => Promise<unknown>,
) {
  const link = await resolve(deps, clientAddress, token);
  if (link.role !== "editor") throw forbidden("This share link can view the issue but not change it; ask for an editor link.");
  // the body is read only once the link is known good: a bad token answers 404 whatever it sends
  const { status } = parseOr400(StatusInput, await readBody());
  const group = await setStatusOf(deps.sql, link.project_id, link.group_id, status, undefined, { actorId: null, via: "share_link" });
  return { group: publicGroup(group, await scrubFor(deps, link.project_id, group)) };
}
