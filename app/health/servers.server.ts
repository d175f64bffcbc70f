import type { Sql } from "../../db/client.js";
import { listServers, type ServerRow, type ServerState } from "../../db/health-reads.js";
import { fail, integer, oneOf, text } from "~/errors/params.server";

/** GET /api/v1/servers and the Live servers page: game servers, live first (docs/api.md). */

export type { ServerState };

export type ServerItem = ServerRow;

export type ServersAnswer = { data: ServerItem[]; total: number; limit: number; offset: number };

const STATES = new Set(["live", "ended", "abnormal"]);

export async function servers(sql: Sql, projectId: string, q: URLSearchParams): Promise<ServersAnswer> {
  const limit = Math.min(100, integer(q, "limit", 50, 1));
  const offset = integer(q, "offset", 0, 0, 1_000_000);
  const state = oneOf(q, "state", STATES) as ServerState | undefined;
  const version = text(q, "version")?.trim() || undefined;
  if (version && version.length > 256) fail("version", "must be at most 256 characters");
  const { data, total } = await listServers(sql, projectId, { state, version, limit, offset });
  return { data, total, limit, offset };
}
