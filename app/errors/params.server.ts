import { invalidQuery, NODE_TARGET } from "~/http.server";
import { isStorable } from "~/text.server";
import type { EventFilter, GroupFilter, GroupSort } from "../../db/errors.js";
import type { Timeframe } from "../../db/stats.js";

const LEVELS = new Set(["error", "warn", "info"]);
const STATUSES = new Set(["open", "resolved", "ignored"]);
const SORTS = new Set(["last_seen", "first_seen", "count"]);
const TIMEFRAMES = new Set(["1h", "24h", "7d", "30d"]);
const ORIGINS = new Set(["client", "server"]);

export function fail(param: string, message: string): never {
  throw invalidQuery(`${param} ${message}.`, [{ path: param, message }]);
}

const UNSTORABLE = "must not contain NUL characters";

/**
 * A query string whose every read refuses text PostgreSQL cannot hold. A NUL (`%00`) can match
 * nothing stored and PostgreSQL refuses it in a query; refused where it is read, it is a 400 naming
 * the parameter on every route, whatever the route then does with the value. (Invalid UTF-8 such as
 * `%ED%A0%80` decodes to U+FFFD, so no lone surrogate gets this far.)
 */
class CheckedQuery extends URLSearchParams {
  override get(name: string): string | null {
    const v = super.get(name);
    if (v !== null && !isStorable(v)) fail(name, UNSTORABLE);
    return v;
  }

  override getAll(name: string): string[] {
    const vs = super.getAll(name);
    if (!vs.every(isStorable)) fail(name, UNSTORABLE);
    return vs;
  }
}

/**
 * The query of a serialized URL (what `new URL(url).search` answers), read off the text: a
 * Request's `url` is always serialized, so its first `?` before any `#` starts the query. Parsing
 * the address again cost a Sentry request more than its key check. A request target (`/path?query`)
 * reads the same way.
 */
export function searchOf(url: string): string {
  const hash = url.indexOf("#");
  const q = url.indexOf("?");
  if (q < 0 || (hash >= 0 && hash < q)) return "";
  const search = hash < 0 ? url.slice(q) : url.slice(q, hash);
  // an empty query is no query
  return search === "?" ? "" : search;
}

type TargetSource = { [NODE_TARGET]?: () => string | undefined };

/** The one way routes read their query string (off the request target when the dispatch gives it, see NODE_TARGET). */
export const queryOf = (request: Request): URLSearchParams =>
  new CheckedQuery(searchOf((request as Request & TargetSource)[NODE_TARGET]?.() ?? request.url));

export function integer(q: URLSearchParams, name: string, def: number, min: number, max = Infinity): number {
  const raw = q.get(name);
  if (raw === null || raw === "") return def;
  if (!/^-?\d+$/.test(raw.trim())) fail(name, "must be an integer");
  const n = Number(raw);
  if (n < min) fail(name, `must be at least ${min}`);
  if (n > max) fail(name, `must be at most ${max}`);
  return n;
}

/**
 * A free-text filter (`search`, `environment`); empty counts as absent. A NUL can match nothing
 * stored (stored text never holds one) and PostgreSQL refuses it in a query, so it is a 400.
 */
export function text(q: URLSearchParams, name: string): string | undefined {
  const raw = q.get(name);
  if (!raw) return undefined;
  if (!isStorable(raw)) fail(name, UNSTORABLE);
  return raw;
}

function digits(q: URLSearchParams, name: string): string | undefined {
  const raw = q.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,19}$/.test(raw.trim()) || BigInt(raw.trim()) > 9223372036854775807n) fail(name, "must be a non-negative integer");
  return raw.trim();
}

export function oneOf(q: URLSearchParams, name: string, allowed: Set<string>, normalize = (s: string) => s): string | undefined {
  const raw = q.get(name);
  if (raw === null || raw === "") return undefined;
  const v = normalize(raw.trim());
  if (!allowed.has(v)) fail(name, `must be one of ${[...allowed].join(", ")}`);
  return v;
}

const levelOf = (s: string) => (s.toLowerCase() === "warning" ? "warn" : s.toLowerCase());

export type ListParams =
  | { grouped: true; filter: GroupFilter }
  | { grouped: false; filter: EventFilter };

/** Query parameters of GET /api/v1/errors; a mode-specific filter in the other mode is a 400. */
export function parseListParams(q: URLSearchParams): ListParams {
  const groupedRaw = (q.get("grouped") ?? "").trim().toLowerCase();
  if (!["", "true", "false", "1", "0"].includes(groupedRaw)) fail("grouped", "must be true, false, 1 or 0");
  const grouped = groupedRaw === "true" || groupedRaw === "1";
  const limit = Math.min(100, integer(q, "limit", 50, 1));
  // past 2^53 the number is no longer exact and past 2^63 PostgreSQL rejects it (a 500)
  const offset = integer(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
  const level = oneOf(q, "level", LEVELS, levelOf);
  const search = text(q, "search");
  const environment = text(q, "environment");
  if (grouped) {
    for (const p of ["user_id", "place_id"]) {
      if (q.get(p)) fail(p, "filters raw events only; drop it or use grouped=false");
    }
    const status = oneOf(q, "status", STATUSES);
    const sort = (oneOf(q, "sort", SORTS) ?? "last_seen") as GroupSort;
    const regressed = oneOf(q, "regressed", new Set(["true", "false", "1", "0"]), (s) => s.toLowerCase());
    const newInVersion = text(q, "new_in_version");
    const assignee = assigneeOf(q);
    const origin = oneOf(q, "origin", ORIGINS) as GroupFilter["origin"];
    return {
      grouped,
      filter: { level, status, search, environment, regressed: regressed === "true" || regressed === "1", newInVersion, assignee, origin, sort, limit, offset },
    };
  }
  for (const p of ["status", "sort", "regressed", "new_in_version", "assignee", "origin"]) {
    if (q.get(p)) fail(p, "applies to grouped results only; add grouped=true or drop it");
  }
  return {
    grouped,
    filter: { level, search, environment, userId: digits(q, "user_id"), placeId: digits(q, "place_id"), limit, offset },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `assignee`: `none` (unassigned issues) or a member's user id (an API key has no "me"). */
function assigneeOf(q: URLSearchParams): string | null | undefined {
  const raw = (q.get("assignee") ?? "").trim().toLowerCase();
  if (raw === "") return undefined;
  if (raw === "none") return null;
  if (!UUID.test(raw)) fail("assignee", "must be none or a user id");
  return raw;
}

export function parseTimeframe(q: URLSearchParams): Timeframe {
  return (oneOf(q, "timeframe", TIMEFRAMES) ?? "24h") as Timeframe;
}
