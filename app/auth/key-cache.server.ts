import type { Sql } from "../../db/client.js";
import { apiKeyEvents } from "../../db/key-events.js";

/** Entries past this are dropped all at once: a flood of made-up keys cannot grow the map without bound. */
const MAX_ENTRIES = 10_000;

/**
 * A per-process cache of key lookups (API keys, DSN keys). An entry lives `ttlSeconds` (0: nothing is
 * cached); an unknown key is never cached, so a new key works at once. Any key change empties it:
 * this process's own announcements (db/key-events.ts) at once, other instances' through the
 * `api_keys_changed` NOTIFY, and the TTL bounds staleness should a notification be missed.
 */
export class KeyCache<T> {
  private entries = new Map<string, { value: T; expires: number }>();

  constructor(private readonly ttlSeconds: number) {}

  /** The cached value of `key`, or what `load` finds (cached when found); undefined for an unknown key. */
  async resolve(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = await load();
    if (value === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    if (this.ttlSeconds > 0) {
      if (this.entries.size > MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { value, expires: now + this.ttlSeconds * 1000 });
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  /** Empties the cache whenever this process announces a key change. */
  forgetOnAnnouncement(): void {
    apiKeyEvents.addEventListener("changed", () => this.clear());
  }

  /** Empties the cache whenever any instance notifies a key change (a LISTEN on its own connection). */
  listen(sql: Sql): Promise<unknown> {
    return sql.listen("api_keys_changed", () => this.clear());
  }
}

/** `last_used_at` of a key is written at most once a minute per key and process. */
export class UseStamps {
  private written = new Map<string, number>();

  /** Whether the key's use is due a write now; if so, it counts as written. */
  due(id: string, now = Date.now()): boolean {
    if ((this.written.get(id) ?? 0) >= now - 60_000) return false;
    this.written.set(id, now);
    return true;
  }
}
