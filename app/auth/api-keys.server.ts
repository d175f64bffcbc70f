import { createHash, randomBytes } from "node:crypto";
import type { Sql } from "../../db/client.js";
import { findActiveKey, insertApiKey, touchApiKey } from "../../db/projects.js";
import { apiKeyEvents } from "../../db/key-events.js";
import { unauthorized } from "~/http.server";

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

type Cached = { id: string; projectId: string; expires: number };

/**
 * Resolves `x-api-key` to a project. Lookups are cached briefly per process; a revocation on any
 * instance clears every instance's cache through LISTEN/NOTIFY, and the TTL bounds staleness should a
 * notification be missed. `last_used_at` is written at most once a minute per key.
 */
export class ApiKeyAuth {
  private cache = new Map<string, Cached>();
  private touched = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly ttlSeconds: number,
  ) {}

  async listen(): Promise<void> {
    // this instance's own changes clear at once; other instances' arrive by NOTIFY
    apiKeyEvents.addEventListener("changed", () => this.cache.clear());
    await this.sql.listen("api_keys_changed", () => this.cache.clear());
  }

  async projectFor(request: Request): Promise<{ projectId: string; keyId: string }> {
    const key = request.headers.get("x-api-key")?.trim();
    if (!key) throw unauthorized("The x-api-key header is missing; send the project's API key.");
    return this.projectForKey(key);
  }

  /** The project of a key given by other means than the header (the Sentry protocol's `sentry_key`). */
  async projectForKey(key: string): Promise<{ projectId: string; keyId: string }> {
    const hashHex = createHash("sha256").update(key).digest("hex");
    const now = Date.now();
    let hit = this.cache.get(hashHex);
    if (!hit || hit.expires <= now) {
      const row = await findActiveKey(this.sql, Buffer.from(hashHex, "hex"));
      if (!row) {
        this.cache.delete(hashHex);
        throw unauthorized("The API key is not valid or has been revoked.");
      }
      hit = { id: row.id, projectId: row.project_id, expires: now + this.ttlSeconds * 1000 };
      if (this.ttlSeconds > 0) {
        if (this.cache.size > 10_000) this.cache.clear();
        this.cache.set(hashHex, hit);
      }
    }
    if ((this.touched.get(hit.id) ?? 0) < now - 60_000) {
      this.touched.set(hit.id, now);
      touchApiKey(this.sql, hit.id).catch((err) => console.error("[auth] last_used_at update failed:", err));
    }
    return { projectId: hit.projectId, keyId: hit.id };
  }
}
