import { createHash } from "node:crypto";
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

  /** The cached value of `key` when it is cached and fresh, without waiting for anything. */
  peek(key: string): T | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expires > Date.now() ? hit.value : undefined;
  }

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

/**
 * The SHA-256 (hex) of keys as they come: a game's servers send the same key on every request, and
 * hashing it again each time costs more than the rest of the look-up. Only keys that named a project
 * are remembered (a flood of made-up keys is hashed each time and kept nowhere), bounded like
 * KeyCache; a key's hash never changes, so nothing else empties it.
 */
export class KeyHashes {
  private hashes = new Map<string, string>();

  of(key: string): string {
    return this.hashes.get(key) ?? createHash("sha256").update(key).digest("hex");
  }

  /** Keeps the hash of a key that named a project. */
  remember(key: string, hex: string): void {
    if (this.hashes.has(key)) return;
    if (this.hashes.size >= MAX_ENTRIES) this.hashes.clear();
    this.hashes.set(key, hex);
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
