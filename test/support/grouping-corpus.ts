/**
 * A grouping corpus: Roblox errors and warnings as games report them (ScriptContext.Error with its
 * stack, LogService.MessageOut warnings without one), written for the tests. `issue` names the issue
 * each one belongs in: entries with the same `issue` must share a fingerprint, different ones must not.
 * `player` and `userId` are the event's own `player_name` and `user_id`.
 */
export type CorpusEvent = { issue: string; message: string; stack?: string; player?: string; userId?: number };

const DS_QUEUE =
  "DataStore request was added to queue. If request queue fills, further requests will be dropped. Try sending fewer requests.Key = ";
const COMBAT_STACK = (caller: string) =>
  `ServerScriptService.Combat:123 function attack\n${caller}\nServerScriptService.Main:14`;
const SPAWN = (n: number) => `Spawn${n} is not a valid member of Folder "Workspace.Map.Spawns"`;

export const CORPUS: CorpusEvent[] = [
  // DataStore queue warnings: one per player key under v1
  ...["Player_261", "Player_4412", "Player_98817723", "Player_7", "1818", "Player_261_backup"].map((k) => ({
    issue: "datastore-queue",
    message: DS_QUEUE + k,
  })),
  // numbered spawns under Workspace: one per spawn under v1
  ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ issue: "spawn-not-member", message: SPAWN(n) })),
  { issue: "door-not-member", message: `Door3 is not a valid member of Model "Workspace.Map.Castle"` },
  { issue: "door-not-member", message: `Door12 is not a valid member of Model "Workspace.Map.Castle"` },
  // the same runtime error through different callers and in every stack form
  ...["ServerScriptService.Combat:88 function onHit", "ServerScriptService.Abilities:31 function fireball", "ServerScriptService.Combat:201"].map((caller) => ({
    issue: "combat-health",
    message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'",
    stack: COMBAT_STACK(caller),
  })),
  // without a stack the function is unknown: the location, line included, is all there is (version 4)
  { issue: "combat-health-no-stack", message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'" },
  {
    issue: "combat-health",
    message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'",
    stack: "Stack Begin\nScript 'ServerScriptService.Combat', Line 123 - function attack\nScript 'ServerScriptService.Main', Line 14\nStack End",
  },
  { issue: "combat-mana", message: "ServerScriptService.Combat:140: attempt to index nil with 'Mana'", stack: "ServerScriptService.Combat:140 function cast" },
  // client scripts under each player's PlayerScripts / PlayerGui
  ...["Builderman", "xX_Noob_Xx", "Roblox", "kittycat_2009"].map((p) => ({
    issue: "hud-nil-call",
    message: `Players.${p}.PlayerGui.Hud.Main:55: attempt to call a nil value`,
    stack: `Players.${p}.PlayerGui.Hud.Main:55 function refresh\nPlayers.${p}.PlayerGui.Hud.Main:12`,
    player: p,
  })),
  ...["Builderman", "Roblox"].map((p) => ({
    issue: "leaderstats-yield",
    message: `Infinite yield possible on 'Players.${p}:WaitForChild("leaderstats")'`,
    stack: `Players.${p}.PlayerScripts.Client.Stats:8 function init`,
    player: p,
  })),
  ...["Builderman", "Roblox", "Shedletsky"].map((p) => ({
    issue: "character-humanoid",
    message: `Humanoid is not a valid member of Model "Workspace.${p}"`,
    player: p,
  })),
  // arithmetic on nil in the economy module, with a stack
  ...["ServerScriptService.Shop:40 function buy", "ServerScriptService.Jobs:77 function payday"].map((caller) => ({
    issue: "economy-arith",
    message: "ReplicatedStorage.Modules.Economy:57: attempt to perform arithmetic (add) on nil and number",
    stack: `ReplicatedStorage.Modules.Economy:57 function deposit\n${caller}`,
  })),
  { issue: "economy-arith-sub", message: "ReplicatedStorage.Modules.Economy:63: attempt to perform arithmetic (sub) on nil and number" },
  // invalid argument
  ...["Alice_01", "Bob"].map((p) => ({
    issue: "clone-arg",
    message: "invalid argument #1 to 'Clone' (Instance expected, got nil)",
    stack: `Players.${p}.PlayerScripts.Client.Weapons:88 function equip\nPlayers.${p}.PlayerScripts.Client:20`,
    player: p,
  })),
  { issue: "clone-arg-2", message: "invalid argument #2 to 'SetPrimaryPartCFrame' (CFrame expected, got nil)", stack: "ServerScriptService.Build:19 function place" },
  // script timeout inside numbered cars
  ...[3, 12, 40].map((n) => ({
    issue: "car-timeout",
    message: "Script timeout: exhausted allowed execution time",
    stack: `Workspace.Cars.Car${n}.DriveScript:40 function step\nWorkspace.Cars.Car${n}.DriveScript:10`,
  })),
  // HTTP failures: the status decides
  ...["?key=abc&token=1", "?key=def&token=2", ""].map((q) => ({
    issue: "trello-429",
    message: `HttpService:RequestAsync() failed: HTTP 429 (Too Many Requests) https://api.trello.com/1/cards${q}`,
  })),
  { issue: "trello-503", message: "HttpService:RequestAsync() failed: HTTP 503 (Service Unavailable) https://api.trello.com/1/cards?key=abc" },
  { issue: "http-limit", message: "Number of requests exceeded limit" },
  { issue: "http-limit", message: "Number of requests exceeded limit " },
  // DataStore API errors: Roblox's error code is kept
  { issue: "ds-502-429", message: "502: API Services rejected request with error. HTTP 429 (Too Many Requests)" },
  { issue: "ds-502-429", message: "502: API Services rejected request with error. HTTP 429 (Too Many Requests)" },
  { issue: "ds-502-500", message: "502: API Services rejected request with error. HTTP 500 (Internal Server Error)" },
  ...["Player_8812", "Player_77", "Player_1"].map((k) => ({
    issue: "ds-not-updated",
    message: `DataStoreService: ValueNotUpdated: The value for key "${k}" was not updated. API: UpdateAsync, Data Store: PlayerData`,
  })),
  // teleports
  ...["4483381587", "920587237"].map((place) => ({
    issue: "teleport-full",
    message: `Teleport to place ${place} failed: The server is full (Error Code: 772)`,
  })),
  { issue: "teleport-unauthorized", message: "Teleport to place 4483381587 failed: Unauthorized (Error Code: 773)" },
  // MessagingService / MemoryStore limits
  ...["Party_48213", "Party_7", "Party_100200"].map((t) => ({
    issue: "messaging-publish",
    message: `MessagingService: PublishAsync rate limit exceeded for topic "${t}"`,
  })),
  ...["matchmaking_4412", "matchmaking_9"].map((q) => ({
    issue: "memorystore-queue",
    message: `MemoryStoreService: RequestThrottled: request rate exceeded for queue "${q}"`,
  })),
  // assets, coordinates, durations, ids
  ...["12345678", "9", "66123"].map((id) => ({
    issue: "sound-load",
    message: `Failed to load sound rbxassetid://${id}: Unable to download sound data`,
  })),
  ...["(120.5, 4, -33.2) after 0.25s", "(-4, 10.75, 88) after 3s", "(0, 0, 0) after 12.5 seconds"].map((tail) => ({
    issue: "anticheat-teleport",
    message: `Anti-cheat: teleport detected to ${tail}`,
  })),
  ...["261 in server {0A1B2C3D-1111-2222-3333-444455556666}", "99817723 in server 7c9e6679-7425-40de-944b-e07fc1f90ae7"].map((tail) => ({
    issue: "load-data",
    message: `Failed to load data for UserId ${tail}`,
  })),
  { issue: "save-data", message: "Failed to save data for UserId 261 in server {0A1B2C3D-1111-2222-3333-444455556666}" },
  // infinite yields on numbered spawns and on remotes
  ...[1, 5, 9].map((n) => ({
    issue: "spawn-yield",
    message: `Infinite yield possible on 'Workspace.Map.Spawns:WaitForChild("Spawn${n}")'`,
  })),
  { issue: "remotes-yield", message: `Infinite yield possible on 'ReplicatedStorage:WaitForChild("Remotes")'` },
  // custom errors thrown by game code, with their stacks
  ...["ServerScriptService.Trade:210 function confirm\nServerScriptService.Trade:150", "Script 'ServerScriptService.Trade', Line 210 - function confirm\nScript 'ServerScriptService.Trade', Line 150"].map((stack) => ({
    issue: "trade-error",
    message: "Trade rejected: item no longer in inventory",
    stack,
  })),
  { issue: "trade-error-other-path", message: "Trade rejected: item no longer in inventory", stack: "ServerScriptService.Trade:233 function cancel" },
  { issue: "quest-error", message: "ServerScriptService.Quests:12: Quest 4 has no reward table", stack: "ServerScriptService.Quests:12 function reward" },
  { issue: "quest-error", message: "ServerScriptService.Quests:12: Quest 17 has no reward table", stack: "ServerScriptService.Quests:12 function reward" },
  { issue: "quest-error-no-stack", message: "ServerScriptService.Quests:12: Quest 17 has no reward table" },
];

// Players (name, user id) for the texts that name the event's own player
const PLAYERS: [string, number][] = [
  ["Builderman", 156],
  ["xX_Noob_Xx", 1538394712],
  ["kittycat_2009", 2207731150],
  ["Shedletsky", 261],
  ["Alice_01", 98817723],
];
const RECEIPTS = ["9f8e7d6c5b4a39281706f5e4d3c2b1a0", "04c1e2f3a4b5c6d7e8f90a1b2c3d4e5f", "b7a6c5d4e3f2019283746556473829a1", "1d2c3b4a59687766554433221100ffee", "e0f1a2b3c4d5e6f708192a3b4c5d6e7f"];
const ISO = ["2026-11-25T14:03:11Z", "2026-11-25T14:03:12.482Z", "2026-11-26T00:00:00Z", "2026-12-01T09:30:05+01:00", "2026-11-24T23:59:59.999Z"];
/** Every line number of a text moved by `by`, as an update that adds lines above the code does. */
export const shiftLines = (text: string, by: number) =>
  text.replace(/(:|Line |line )(\d+)/g, (_m, pre: string, n: string) => `${pre}${Number(n) + by}`);

// Lines move; bugs don't (version 4): each error as sent before an update and after one that moved
// its code 12 and 40 lines down, in the three stack forms
const SHIFTED: CorpusEvent[] = [
  // the top frame has a function name: one issue whatever the lines
  ...[
    "ServerScriptService.Inventory:210 function equip\nServerScriptService.Inventory:88 function onRequest\nServerScriptService.Main:5",
    "Script 'ServerScriptService.Inventory', Line 210 - function equip\nScript 'ServerScriptService.Inventory', Line 88 - function onRequest\nScript 'ServerScriptService.Main', Line 5",
    "ServerScriptService.Inventory, line 210 - function equip\nServerScriptService.Inventory, line 88 - function onRequest\nServerScriptService.Main, line 5",
  ].map((stack) => ({ issue: "inventory-equip-nil", message: "ServerScriptService.Inventory:210: attempt to index nil with 'Tool'", stack })),
  // another error in the same function: its template differs, so it stays apart
  {
    issue: "inventory-equip-slot",
    message: "ServerScriptService.Inventory:214: attempt to compare number < nil",
    stack: "ServerScriptService.Inventory:214 function equip\nServerScriptService.Inventory:88 function onRequest",
  },
  // the same text thrown by `error()` in two functions: two issues
  { issue: "inventory-full-add", message: "Inventory full", stack: "ServerScriptService.Inventory:300 function add\nServerScriptService.Main:5" },
  { issue: "inventory-full-give", message: "Inventory full", stack: "ServerScriptService.Inventory:300 function give\nServerScriptService.Main:5" },
  // an anonymous function (a connected callback) under a named one: the callback counts by its script
  {
    issue: "pet-follow",
    message: "ReplicatedStorage.Pets.Follow:31: attempt to index nil with 'PrimaryPart'",
    stack: "ReplicatedStorage.Pets.Follow:31 function follow\nReplicatedStorage.Pets.Follow:12 function <anonymous>",
  },
];

// the top frame without a function name (a script's main chunk): a moved line cannot be told from
// another line of the script, so each line is its own issue
const MAIN_CHUNK = (line: number) => ({
  issue: `door-main-${line}`,
  message: `Workspace.Castle.Door:${line}: attempt to index nil with 'Hinge'`,
  stack: `Workspace.Castle.Door:${line}`,
});

const LINE_SHIFT: CorpusEvent[] = [
  ...SHIFTED,
  ...SHIFTED.map((e) => ({ ...e, message: shiftLines(e.message, 12), stack: shiftLines(e.stack!, 12) })),
  ...SHIFTED.map((e) => ({ ...e, message: shiftLines(e.message, 40), stack: shiftLines(e.stack!, 40) })),
  MAIN_CHUNK(12),
  MAIN_CHUNK(24),
];

const LOBBY_STACK = "ServerScriptService.Lobby.Teleporter:48 function sendToMatch\nServerScriptService.Lobby.Queue:112";

CORPUS.push(
  // the event's own player named outside a `Players.<name>` path
  ...PLAYERS.map(([p, id]) => ({
    issue: "teleport-player-full",
    message: `Teleport failed for ${p}: The server is full (Error Code: 772)`,
    stack: LOBBY_STACK,
    player: p,
    userId: id,
  })),
  // differs by its words (Roblox's error code and reason): another issue
  ...PLAYERS.slice(0, 2).map(([p, id]) => ({
    issue: "teleport-player-unauthorized",
    message: `Teleport failed for ${p}: Unauthorized (Error Code: 773)`,
    stack: LOBBY_STACK,
    player: p,
    userId: id,
  })),
  ...PLAYERS.map(([p, id]) => ({ issue: "anticheat-fly", message: `AntiCheat: kicked ${p} (${id}) for fly hacking`, player: p, userId: id })),
  ...PLAYERS.slice(0, 3).map(([p, id]) => ({ issue: "anticheat-speed", message: `AntiCheat: kicked ${p} (${id}) for speed hacking`, player: p, userId: id })),
  // an ISO timestamp (`DateTime:ToIsoDate()`, `os.date("!%Y-%m-%dT%H:%M:%SZ")`)
  ...PLAYERS.map(([p, id], i) => ({
    issue: "daily-reward-early",
    message: `DailyRewards: claim rejected, next claim at ${ISO[i]} (last ${ISO[(i + 2) % ISO.length]})`,
    stack: "ServerScriptService.Rewards.Daily:77 function claim\nServerScriptService.Rewards:20",
    player: p,
    userId: id,
  })),
  ...PLAYERS.slice(0, 3).map(([p, id], i) => ({
    issue: "daily-reward-streak",
    message: `DailyRewards: streak reset, last claim at ${ISO[i]} (last ${ISO[(i + 2) % ISO.length]})`,
    stack: "ServerScriptService.Rewards.Daily:91 function resetStreak\nServerScriptService.Rewards:20",
    player: p,
    userId: id,
  })),
  // a timestamp next to an HTTP status: the status still decides
  ...ISO.slice(0, 3).map((t) => ({ issue: "analytics-429", message: `Analytics: flush at ${t} failed: HTTP 429 (Too Many Requests)` })),
  ...ISO.slice(3).map((t) => ({ issue: "analytics-500", message: `Analytics: flush at ${t} failed: HTTP 500 (Internal Server Error)` })),
  // a 32-hex receipt (PurchaseId) and the event's user id, alone and inside a key-like name
  ...PLAYERS.map(([p, id], i) => ({
    issue: "receipt-not-granted",
    message: `ProcessReceipt: receipt ${RECEIPTS[i]} for user ${id} not granted: profile Profile_${id} is not loaded`,
    stack: "ServerScriptService.Shop.Receipts:63 function processReceipt",
    player: p,
    userId: id,
  })),
  ...PLAYERS.slice(0, 2).map(([p, id], i) => ({
    issue: "receipt-unknown-product",
    message: `ProcessReceipt: receipt ${RECEIPTS[i + 2]} for user ${id} not granted: product 1218011834 has no handler`,
    stack: "ServerScriptService.Shop.Receipts:63 function processReceipt",
    player: p,
    userId: id,
  })),
  ...LINE_SHIFT,
);

// Data wherever it appears (version 4). Request ids in HTTP error bodies, in five alphabets and cases
const REQUEST_IDS = ["01HGW2N7Q8ZK3X4Y5V6T7R8S9A", "aZ9kQ2mX7pL0c3Vb", "JBSWY3DPEHPK3PXP", "7KX9M2QPZ4W8", "Rq8xK2pLm9Zt4Wv1", "x7k2m9qz"];
// the three stack forms of one function
const STACK_FORMS = (path: string, line: number, fn: string) => [
  `${path}:${line} function ${fn}`,
  `Script '${path}', Line ${line} - function ${fn}`,
  `${path}, line ${line} - function ${fn}`,
];
const SHOP_STACKS = STACK_FORMS("ServerScriptService.Shop.Api", 31, "request");
// another player's user id inside a DataStore key
const OTHER_IDS = [98817723, 1538394712, 2207731150, 45021];
const PET_NAMES = ["Golden Dragon 🐉", "炎の剣", "Mr. Whiskers", "Pet #4", "Café Cat", "🐶🐶"];

CORPUS.push(
  ...REQUEST_IDS.map((id, i) => ({
    issue: "shop-api-500",
    message: `Shop API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"${id}"}`,
    stack: SHOP_STACKS[i % 3],
  })),
  // the status stays: a missing item is not a server failure
  ...REQUEST_IDS.slice(0, 3).map((id, i) => ({
    issue: "shop-api-404",
    message: `Shop API: HTTP 404 (Not Found) {"error":"no_such_item","request_id":"${id}"}`,
    stack: SHOP_STACKS[i % 3],
  })),
  // the server's own error code is an identifier: it stays
  { issue: "shop-api-500-overloaded", message: `Shop API: HTTP 500 (Internal Server Error) {"error":"overloaded","request_id":"${REQUEST_IDS[0]}"}`, stack: SHOP_STACKS[0] },
  // a header and a prefixed token, without a stack
  ...REQUEST_IDS.map((id) => ({ issue: "matchmaking-503", message: `Matchmaking: HTTP 503 (Service Unavailable) X-Request-Id: ${id}, retry later` })),
  ...["req_2Nf8sLq0Zx", "req_8pQ3vW1xZc7", `req_${REQUEST_IDS[0]}`].map((id) => ({ issue: "purchase-token", message: `Purchase ${id} failed: product unavailable` })),
  ...OTHER_IDS.map((id, i) => ({
    issue: "gift-load",
    message: `Gifting: could not read Inventory_${id} (gift from user${OTHER_IDS[(i + 1) % 4]}), inv-${id}-slot locked`,
    stack: STACK_FORMS("ServerScriptService.Gifts", 58, "receive")[i % 3],
    player: PLAYERS[i][0],
    userId: PLAYERS[i][1],
  })),
  // quoted item and pet names with spaces, punctuation, emoji and CJK
  ...PET_NAMES.map((name, i) => ({
    issue: "pet-equip-locked",
    message: `Pets: cannot equip '${name}': slot locked`,
    stack: STACK_FORMS("ReplicatedStorage.Pets.Equip", 22, "equip")[i % 3],
  })),
  // quoted code stays: the field a nil was indexed with names the bug
  ...["Parent", "Character"].map((field) => ({
    issue: `pet-follow-${field}`,
    message: `ReplicatedStorage.Pets.Follow:48: attempt to index nil with '${field}'`,
    stack: "ReplicatedStorage.Pets.Follow:48 function follow",
  })),
  ...["Red", "Blue"].map((team) => ({ issue: `team-base-yield-${team}`, message: `Infinite yield possible on 'Workspace.Teams:WaitForChild("${team} Base")'` })),
);
