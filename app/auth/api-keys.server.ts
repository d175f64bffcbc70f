import { createHash, randomBytes } from "node:crypto";
import type { Sql } from "../../db/client.js";
import { findActiveKey, insertApiKey, touchApiKey } from "../../db/projects.js";
import { unauthorized } from "~/http.server";
import { KeyCache, KeyHashes, UseStamps } from "./key-cache.server";
import { log } from "../../log/logger.js";

const KEY_PREFIX = "rbx_";

export const hashApiKey = (key: string) => createHash("sha256").update(key).digest();

/** 192 random bits behind a recognizable prefix. */
export const newApiKey = () => KEY_PREFIX + randomBytes(24).toString("base64url");

/** A new key: shown once; only its SHA-256 hash and a short prefix are stored. */
export async function createApiKey(sql: Sql, projectId: string, name?: string | null) {
  const apiKey = newApiKey();
  const row = await insertApiKey(sql, projectId, { prefix: apiKey.slice(0, 10), hash: hashApiKey(apiKey), name });
  return { key: row, apiKey };
}

/**
 * Resolves `x-api-key` to a project. Lookups are cached briefly per process; a revocation on any
 * instance clears every instance's cache (see KeyCache). `last_used_at` is written at most once a
 * minute per key.
 */
export class ApiKeyAuth {
  private cache: KeyCache<{ id: string; projectId: string }>;
  private used = new UseStamps();
  /** each key's hash, computed once per process for a key that keeps coming (see KeyHashes) */
  private hashes = new KeyHashes();

  constructor(
    private readonly sql: Sql,
    ttlSeconds: number,
  ) {
    this.cache = new KeyCache(ttlSeconds);
  }

  /** These keys as one request sees them: the same cache, its look-ups on `sql` (the request's budget-bound pool). */
  within(sql: Sql): ApiKeyAuth {
    return Object.create(this, { sql: { value: sql } }) as ApiKeyAuth;
  }

  async listen(): Promise<void> {
    // this instance's own changes clear at once; other instances' arrive by NOTIFY
    this.cache.forgetOnAnnouncement();
    await this.cache.listen(this.sql);
  }

  async projectFor(request: Request): Promise<{ projectId: string; keyId: string }> {
    return this.projectForKey(headerKey(request));
  }

  /**
   * The project of the request's key when this process has the key cached, at once (no look-up, no
   * wait); undefined when it must be looked up (projectFor). A missing header is the same 401.
   */
  cachedProjectFor(request: Request): { projectId: string; keyId: string } | undefined {
    const hit = this.cache.peek(this.hashes.of(headerKey(request)));
    return hit && this.found(hit);
  }

  /** The project of a key given by other means than the header (the Sentry protocol's `sentry_key`). */
  async projectForKey(key: string): Promise<{ projectId: string; keyId: string }> {
    const hashHex = this.hashes.of(key);
    const hit = await this.cache.resolve(hashHex, async () => {
      const row = await findActiveKey(this.sql, Buffer.from(hashHex, "hex"));
      return row ? { id: row.id, projectId: row.project_id } : undefined;
    });
    if (!hit) throw unauthorized("The API key is not valid or has been revoked.");
    this.hashes.remember(key, hashHex);
    return this.found(hit);
  }

  private found(hit: { id: string; projectId: string }): { projectId: string; keyId: string } {
    if (this.used.due(hit.id)) {
      touchApiKey(this.sql, hit.id).catch((err) => log.error({ err }, "[auth] last_used_at update failed"));
    }
    return { projectId: hit.projectId, keyId: hit.id };
  }
}

function headerKey(request: Request): string {
  const key = request.headers.get("x-api-key")?.trim();
  if (!key) throw unauthorized("The x-api-key header is missing; send the project's API key.");
  return key;
}
