import type { Sql } from "./client.js";

/** A rise of one currency between two consecutive observations of a player (economy_rises). */
export type RiseRow = {
  id: string;
  history_id: string;
  currency: string;
  from_amount: string;
  to_amount: string;
  observed_at: Date;
  prev_observed_at: Date | null;
  source: string;
};

/** A gain the recorded flows do not explain (economy_unexplained). */
export type UnexplainedRow = {
  id: string;
  history_id: string;
  currency: string;
  from_amount: string;
  to_amount: string;
  explained: string;
  unexplained: string;
  from_observed_at: Date;
  observed_at: Date;
};

/**
 * One player's rises and unexplained gains from history row `sinceHistoryId` on (the rows the player
 * page charts), oldest first; at most `limit` of each. Rises read through economy_rises_player, the
 * unexplained gains through economy_unexplained_player.
 */
export async function playerMarks(sql: Sql, projectId: string, userId: string, sinceHistoryId: string, limit = 10_000): Promise<{ rises: RiseRow[]; unexplained: UnexplainedRow[] }> {
  const [rises, unexplained] = await Promise.all([
    sql<RiseRow[]>`
      select id::text, history_id::text, currency, prev_amount::text as from_amount, amount::text as to_amount,
        observed_at, prev_observed_at, source
      from economy_rises
      where project_id = ${projectId} and user_id = ${userId} and history_id >= ${sinceHistoryId}
      order by history_id, currency limit ${limit}`,
    sql<UnexplainedRow[]>`
      select id::text, history_id::text, currency, from_amount::text, to_amount::text, explained::text,
        unexplained::text, from_observed_at, observed_at
      from economy_unexplained
      where project_id = ${projectId} and user_id = ${userId} and history_id >= ${sinceHistoryId}
      order by id limit ${limit}`,
  ]);
  return { rises, unexplained };
}
