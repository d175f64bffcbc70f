import { setMaxListeners } from "node:events";

/**
 * In-process signal that API keys changed (a revocation, a deleted project). Other instances hear of it
 * through PostgreSQL NOTIFY, which arrives on its own connection a moment later; this instance must
 * forget the keys before it answers the next request. One EventTarget per process, shared by the two
 * copies of the modules a process loads (server source and Remix build).
 */
const KEY = Symbol.for("roblox-monitor.apiKeysChanged");
const slot = globalThis as unknown as Record<symbol, EventTarget | undefined>;

export const apiKeyEvents: EventTarget = (slot[KEY] ??= new EventTarget());
// one listener per key cache, and a process running several servers (the tests) holds many caches
setMaxListeners(0, apiKeyEvents);

export const announceKeysChanged = () => apiKeyEvents.dispatchEvent(new Event("changed"));
