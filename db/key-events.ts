import { setMaxListeners } from "node:events";

/**
 * In-process signal that API keys changed (a revocation, a deleted project). Other instances hear of it
 * through PostgreSQL NOTIFY, which arrives on its own connection a moment later; this instance must
 * forget the keys before it answers the next request. One EventTarget per process, shared by every
 * copy of this module in it: the service loads the app once, but a test drives the built service
 * and changes keys through the source modules in the same process.
 */
const KEY = Symbol.for("roblox-monitor.apiKeysChanged");
const slot = globalThis as unknown as Record<symbol, EventTarget | undefined>;

export const apiKeyEvents: EventTarget = (slot[KEY] ??= new EventTarget());
// one listener per key cache, and a process running several servers (the tests) holds many caches
setMaxListeners(0, apiKeyEvents);

export const announceKeysChanged = () => apiKeyEvents.dispatchEvent(new Event("changed"));
