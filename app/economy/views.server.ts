import { data } from "@remix-run/node";
import type { Sql } from "../../db/client.js";
import type { User } from "../../db/users.js";
import { getPlayer, listPlayers, playerHistory } from "../../db/economy.js";
import { getSync } from "../../db/economy-sync.js";
import { getPlayer as getErrorPlayer } from "../../db/players.js";
import { setupView } from "./layouts.server";
import type { Config } from "~/env.server";
import { ApiError, notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS } from "~/team/access.server";
import { readAnomalies } from "./anomalies.server";
import { loadMap } from "./map.server";
import { ALL, parseCurrency, parsePlayerParams } from "./params.server";
import { parseUserId } from "./profile.server";
import { openingsView } from "./openings.server";
import { economySummary } from "./summary.server";
import { flowsPanel } from "./flows-read.server";
import { syncView } from "./sync.server";

/** Typed errors become the dashboard's error page; 5xx stay opaque. */
export async function economyPage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw data({ code: err.code, message: err.message }, { status: err.status });
    throw err;
  }
}

/** Economy overview: summary, anomalies, player search and the scan's state, for any member. */
export async function economyOverview(sql: Sql, config: Config, user: User, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId, role } = await authorize(sql, user, projectIdParam, EVERYONE, "view the economy");
  const { map } = await loadMap(sql, projectId);
  const currency = parseCurrency(q, map);
  const filter = parsePlayerParams(q, map);
  const [summary, anomalies, players, sync, flows] = await Promise.all([
    economySummary(sql, projectId, 30, map, currency),
    // every currency's anomalies, each under its own threshold, whichever currency the page shows
    readAnomalies(sql, projectId, map, config, { currency: ALL, factor: undefined, minAmount: undefined, days: 30, limit: 20, offset: 0 }),
    filter.search ? listPlayers(sql, projectId, { ...filter, sort: filter.sort === "total" ? currency : filter.sort, limit: 50 }) : Promise.resolve(null),
    getSync(sql, projectId),
    flowsPanel(sql, projectId, map, currency),
  ]);
  return {
    projectId,
    canManage: MANAGERS.includes(role),
    // no player yet: the page explains the first push instead of empty charts
    setup: summary.players === 0 ? setupView(map) : null,
    search: filter.search ?? "",
    currency,
    summary,
    openings: openingsView(summary.money_supply),
    anomalies,
    players,
    sync: syncView(sync),
    flows,
  };
}

export async function economyPlayer(sql: Sql, user: User, projectIdParam: string | undefined, userIdParam: string | undefined) {
  const { projectId } = await authorize(sql, user, projectIdParam, EVERYONE, "view the economy");
  const userId = parseUserId(userIdParam);
  const player = userId && (await getPlayer(sql, projectId, userId));
  if (!userId || !player) throw notFound("No economy snapshot for that user id in this project.");
  const [history, errors] = await Promise.all([playerHistory(sql, projectId, userId), getErrorPlayer(sql, projectId, userId)]);
  return { projectId, player, history, hasErrors: Boolean(errors) };
}

/** Dashboard form actions: typed errors come back as a message next to the form. */
export async function economyAct<T>(fn: () => Promise<T>) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) return data({ ok: false as const, error: err.message, details: err.details ?? [] }, { status: err.status });
    throw err;
  }
}
