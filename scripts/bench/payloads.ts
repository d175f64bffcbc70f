/**
 * What the bench sends: error events as the Roblox SDK sends them (single or in batches of 100), the
 * same events as a Sentry SDK sends them, and economy pushes of real-shaped player profiles with the
 * currency map they are read through.
 */

/** Fingerprints of the scenarios over many (script:line pairs), and users the events come from. */
export const FINGERPRINTS = 1000;
const USERS = 5000;
const PLAYER_POOL = 200_000;

const LEVELS = ["error", "error", "error", "warn", "info"];
const ENVS = ["production", "production", "production", "production", "staging", "dev"];
export const TEXTS = [
  "attempt to index nil with 'Damage'",
  "attempt to perform arithmetic (add) on nil and number",
  "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"Remotes\")'",
  "HTTP 429 (Too Many Requests)",
];
/** Matches a quarter of the fingerprints. */
export const SEARCH = "Damage";
const pick = <T>(a: T[]) => a[Math.floor(Math.random() * a.length)];

/** One event; `script:line` decides the fingerprint (both are kept by normalization), `k` picks the text. */
export function event(script: string, line: number, k: number, traceId?: string) {
  const userId = 1 + Math.floor(Math.random() * USERS);
  return {
    message: `ServerScriptService.${script}:${line}: ${TEXTS[k % TEXTS.length]}`,
    stack_trace: `ServerScriptService.${script}:${line} function run\nServerScriptService.Main:5\nStack End`,
    level: pick(LEVELS),
    environment: pick(ENVS),
    user_id: userId,
    player_name: `Player${userId}`,
    game_version: "1.4.2",
    ...(traceId ? { trace_id: traceId } : {}),
  };
}
export const batch = (make: (i: number) => object) => JSON.stringify({ errors: Array.from({ length: 100 }, (_, i) => make(i)) });
/** The (d) batches: 50 bodies of 100 events over the 1,000 fingerprints (each in 5 of them), players fixed per body. */
export const issueBatches = () => Array.from({ length: 50 }, (_, i) => batch((j) => event(`Batch${(i * 100 + j) % FINGERPRINTS}`, 10, i * 100 + j)));

/** The event of `event()` as a Sentry SDK sends it (exception with frames, user, tags, release); EVENT_ID is filled per request. */
export function sentryEvent(script: string, line: number, k: number) {
  const userId = 1 + Math.floor(Math.random() * USERS);
  return JSON.stringify({
    event_id: "EVENT_ID",
    timestamp: Date.now() / 1000,
    platform: "other",
    level: pick(["error", "warning", "info"]),
    environment: pick(ENVS),
    release: "1.4.2",
    user: { id: String(userId), username: `Player${userId}` },
    tags: { realm: "server" },
    exception: {
      values: [{
        type: "Error",
        value: `ServerScriptService.${script}:${line}: ${TEXTS[k % TEXTS.length]}`,
        stacktrace: { frames: [{ filename: "ServerScriptService.Main", lineno: 5 }, { filename: `ServerScriptService.${script}`, lineno: line, function: "run" }] },
      }],
    },
    sdk: { name: "sentry.roblox", version: "1.0.0" },
  });
}

/** The economy push bench's event batch: 100 events over 1,000 texts of one script, random users. */
export function plainEventBatch(): string {
  return JSON.stringify({
    errors: Array.from({ length: 100 }, (_, i) => ({
      message: `attempt to index nil with 'Field${Math.floor(Math.random() * 1000)}'`,
      stack_trace: `ServerScriptService.Combat:${i + 1}`,
      user_id: 1 + Math.floor(Math.random() * USERS),
    })),
  });
}

/**
 * The pushes' currency map: five currencies, three of them read with a wildcard over every top-level
 * table (both characters), one from a list of pets, one flat; names, data code and match as the seed's.
 */
export const PUSH_MAP = {
  currencies: [
    { key: "cash", name: "Cash", paths: ["*.Cash"] },
    { key: "bank", name: "Bank", paths: ["*.InATM"] },
    { key: "dark_coin", name: "Dark coin", paths: ["*.DarkCoin"] },
    { key: "gems", name: "Gems", paths: ["Gems"] },
    { key: "tokens", name: "Pet tokens", paths: ["Pets[*].Tokens"] },
  ],
  names: ["RPCharacterOne", "RPCharacterTwo"],
  data_code: "DataCode",
  match: ["RPCharacterOne", "RPCharacterTwo"],
};

/**
 * One push of 100 distinct players out of a pool of 200,000 (a mix of new players and balance changes
 * that append history), with real-shaped two-character profiles plus gems and pets for the map's
 * other currencies.
 */
export function economyPushBody(players = 100): string {
  const ids = new Set<number>();
  while (ids.size < players) ids.add(1 + Math.floor(Math.random() * PLAYER_POOL));
  return JSON.stringify({
    players: [...ids].map((userId) => ({
      user_id: userId,
      username: `player_${userId}`,
      display_name: `Player ${userId}`,
      profile: {
        RPCharacterOne: { Name: `Char ${userId}`, Cash: Math.floor(Math.random() * 50_000), InATM: Math.floor(Math.random() * 1e6), DarkCoin: userId % 7, Job: "Police" },
        RPCharacterTwo: { FirstName: "Alt", LastName: String(userId), Cash: 250, InATM: 1000, DarkCoin: 0 },
        Gems: userId % 500,
        Pets: [
          { Name: "Cat", Level: 3, Tokens: userId % 40 },
          { Name: "Dog", Level: 1, Tokens: 5 },
        ],
        DataCode: 3,
      },
    })),
  });
}

/** GameAnalytics-like sources: positive flows come from the first four, sinks from the rest. */
const FLOW_SOURCES = ["quest", "daily", "trade", "purchase", "shop", "upgrade", "trade_fee"];
const FLOW_CURRENCIES = ["cash", "gems", "tokens"];

/** One flow of a player out of PLAYER_POOL: mostly small quest and shop amounts, a few purchases. */
function flowOf(userId: number) {
  const source = FLOW_SOURCES[Math.floor(Math.random() * FLOW_SOURCES.length)];
  const sink = FLOW_SOURCES.indexOf(source) >= 4;
  const magnitude = source === "purchase" ? 1000 + Math.floor(Math.random() * 9000) : 1 + Math.floor(Math.random() * 500);
  return {
    user_id: userId,
    currency: FLOW_CURRENCIES[userId % FLOW_CURRENCIES.length],
    amount: sink ? -magnitude : magnitude,
    source,
    item: source === "shop" || source === "upgrade" ? `item_${userId % 50}` : null,
    at: new Date().toISOString(),
  };
}

/**
 * A game server's batch of flows (POST /api/economy/flows): `size` flows of the 50 players of one
 * server, as a flush every few seconds sends them.
 */
export function economyFlowsBody(size = 200): string {
  const base = 1 + Math.floor(Math.random() * (PLAYER_POOL - 50));
  return JSON.stringify({ flows: Array.from({ length: size }, () => flowOf(base + Math.floor(Math.random() * 50))) });
}

/** A push of `players` players that also carries `perPlayer` flows of each (flows written first, then reconciled). */
export function economyPushWithFlowsBody(players = 100, perPlayer = 5): string {
  const body = JSON.parse(economyPushBody(players)) as { players: { user_id: number }[]; flows?: unknown[] };
  body.flows = body.players.flatMap((p) => Array.from({ length: perPlayer }, () => flowOf(p.user_id)));
  return JSON.stringify(body);
}
