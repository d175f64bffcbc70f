import type { Sql } from "../../db/client.js";
import { findActiveDsnKey, projectDsnId, touchDsnKey } from "../../db/sentry.js";
import type { ApiKeyAuth } from "~/auth/api-keys.server";
import { KeyCache, UseStamps } from "~/auth/key-cache.server";
import { ApiError, invalidPayload, unauthorized } from "~/http.server";
import { isStorable } from "~/text.server";
import { queryOf } from "~/errors/params.server";
import { log } from "../../log/logger.js";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `Sentry sentry_version=7, sentry_client=…, sentry_key=…` → its fields. */
export function parseSentryAuth(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  const body = header.trim().replace(/^Sentry\s+/i, "");
  for (const part of body.split(",")) {
    const i = part.indexOf("=");
    if (i > 0) out[part.slice(0, i).trim().toLowerCase()] = part.slice(i + 1).trim();
  }
  return out;
}

/** The public key of a DSN (`https://<key>@host/<project>`), if it is one; a key no key could be (`%00`) is a 400. */
export function keyFromDsn(dsn: unknown): string | undefined {
  if (typeof dsn !== "string") return undefined;
  let key: string;
  try {
    key = decodeURIComponent(new URL(dsn).username);
  } catch {
    return undefined;
  }
  if (!isStorable(key)) throw invalidPayload("The envelope header's dsn is invalid: its key must not contain NUL characters.");
  return key || undefined;
}

/**
 * The key a request carries before its body is read: `sentry_key` in the query, then
 * `X-Sentry-Auth`, then `Authorization: Sentry …` (as Relay reads them).
 */
export function keyFromRequest(request: Request): string | undefined {
  const q = queryOf(request).get("sentry_key")?.trim();
  if (q) return q;
  const header = parseSentryAuth(request.headers.get("x-sentry-auth")).sentry_key;
  if (header) return header;
  const authorization = request.headers.get("authorization");
  if (!authorization || !/^\s*Sentry\s/i.test(authorization)) return undefined;
  return parseSentryAuth(authorization).sentry_key || undefined;
}

type DsnKey = { id: string; projectId: string; dsnId: string; rateLimit: number | null };

/** The project a Sentry request posts to, and the DSN key it came with (none for a native key). */
export type SentryCaller = { projectId: string; dsnKey?: { id: string; rateLimit: number | null } };

/**
 * Resolves a `sentry_key` to its project and checks it against the project in the path (the
 * numeric DSN id, or the project's UUID). A DSN key (ingest-only, in `dsn_keys`) or a native `rbx_`
 * key is accepted; revocations and limit changes clear the cache on every instance through the same
 * notification as native keys.
 */
export class SentryKeyAuth {
  private cache: KeyCache<DsnKey>;
  private dsnIds = new Map<string, string>();
  private used = new UseStamps();
  private listening: Promise<unknown> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly apiKeys: ApiKeyAuth,
    ttlSeconds: number,
  ) {
    this.cache = new KeyCache(ttlSeconds);
    // this instance forgets revoked keys before it answers again; other instances hear of it by NOTIFY
    this.cache.forgetOnAnnouncement();
  }

  private async dsnKey(key: string): Promise<DsnKey | undefined> {
    this.listening ??= this.cache.listen(this.sql).catch((err) => {
      this.listening = undefined;
      log.error({ err }, "[sentry] key listener failed");
    });
    return this.cache.resolve(key, async () => {
      const row = await findActiveDsnKey(this.sql, key);
      if (!row) return undefined;
      if (this.used.due(row.id)) {
        touchDsnKey(this.sql, row.id).catch((err) => log.error({ err }, "[sentry] last_used_at update failed"));
      }
      return { id: row.id, projectId: row.project_id, dsnId: row.dsn_id, rateLimit: row.rate_limit_per_minute };
    });
  }

  /** A project's DSN id never changes, so it is remembered for the life of the process. */
  private async dsnIdOf(projectId: string): Promise<string | undefined> {
    const known = this.dsnIds.get(projectId);
    if (known) return known;
    const id = await projectDsnId(this.sql, projectId);
    if (id) {
      if (this.dsnIds.size > 100_000) this.dsnIds.clear();
      this.dsnIds.set(projectId, id);
    }
    return id;
  }

  /**
   * The caller of a DSN key this process has cached, checked against the path's project, at once;
   * undefined when anything must be looked up (then projectFor answers, refusals included).
   */
  cachedProjectFor(key: string | undefined, pathProject: string | undefined): SentryCaller | undefined {
    if (!key || key.startsWith("rbx_")) return undefined;
    const hit = this.cache.peek(key);
    if (!hit) return undefined;
    const p = (pathProject ?? "").trim();
    if (!(UUID_RE.test(p) ? p.toLowerCase() === hit.projectId : p === hit.dsnId)) return undefined;
    return { projectId: hit.projectId, dsnKey: { id: hit.id, rateLimit: hit.rateLimit } };
  }

  async projectFor(key: string | undefined, pathProject: string | undefined): Promise<SentryCaller> {
    if (!key) {
      throw unauthorized("No Sentry key: send `sentry_key` in the query string or the X-Sentry-Auth header, or a `dsn` in the envelope header.");
    }
    // keys are printable ASCII; anything else is looked up nowhere (PostgreSQL refuses a NUL in a query)
    if (!/^[\x21-\x7e]{1,200}$/.test(key)) throw unauthorized("The Sentry key is not valid or has been revoked.");
    let projectId: string;
    let dsnId: string | undefined;
    let dsnKey: SentryCaller["dsnKey"];
    if (key.startsWith("rbx_")) {
      ({ projectId } = await this.apiKeys.projectForKey(key));
    } else {
      const hit = await this.dsnKey(key);
      if (!hit) throw unauthorized("The Sentry key is not valid or has been revoked.");
      ({ projectId, dsnId } = hit);
      dsnKey = { id: hit.id, rateLimit: hit.rateLimit };
    }
    const p = (pathProject ?? "").trim();
    const matches = UUID_RE.test(p) ? p.toLowerCase() === projectId : /^\d{1,19}$/.test(p) && p === (dsnId ?? (await this.dsnIdOf(projectId)));
    if (!matches) throw new ApiError(403, "forbidden", `The key does not belong to project ${p.slice(0, 64) || "(none)"}; use the DSN shown in the project's settings.`);
    return { projectId, dsnKey };
  }
}
