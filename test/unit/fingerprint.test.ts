import { describe, expect, it } from "vitest";
import {
  defaultFingerprint,
  defaultFingerprintV2,
  defaultFingerprintV3,
  fingerprintsFor,
  frameIdentities,
  groupEvent,
  KnownFingerprints,
  GROUPING_VERSION,
  groupingKey,
  messageTemplate,
  normalizePath,
  stackFrames,
} from "../../app/ingest/fingerprint.server.js";
import { defaultFingerprint as v1 } from "../../app/ingest/fingerprint-v1.server.js";

/**
 * Grouping version 2. Each engine-message case lists variants that must land in one issue and
 * variants that must not land in the first one's issue.
 */

type Ev = string | { message: string; stack?: string; player?: string; userId?: number };
const fp = (e: Ev) => (typeof e === "string" ? defaultFingerprint(e, null) : defaultFingerprint(e.message, e.stack, e.player, e.userId));
const label = (e: Ev) => (typeof e === "string" ? e : `${e.message} | ${e.stack ?? ""} | ${e.player ?? ""}`);

type Case = { name: string; same: Ev[]; different: Ev[] };

const DS_QUEUE =
  "DataStore request was added to queue. If request queue fills, further requests will be dropped. Try sending fewer requests.Key = ";

const ENGINE_MESSAGES: Case[] = [
  {
    name: "DataStore queue warning: the key is data",
    same: [`${DS_QUEUE}Player_261`, `${DS_QUEUE}Player_9`, `${DS_QUEUE}123`, `${DS_QUEUE}4815162342`, `${DS_QUEUE}Player_261_inventory2`],
    different: ["DataStore request was dropped. Key = Player_261", "ServerScriptService.Data:20: DataStore request was added to queue"],
  },
  {
    name: "DataStore errors keep their Roblox error code and HTTP status",
    same: [
      "502: API Services rejected request with error. HTTP 429 (Too Many Requests)",
      "502: API Services rejected request with error.  HTTP 429 (Too Many Requests) ",
    ],
    different: [
      "502: API Services rejected request with error. HTTP 500 (Internal Server Error)",
      "503: API Services rejected request with error. HTTP 429 (Too Many Requests)",
    ],
  },
  {
    name: "DataStore UpdateAsync on a key",
    same: [
      `DataStoreService: ValueNotUpdated: The value for key "Player_8812" was not updated. API: UpdateAsync, Data Store: PlayerData`,
      `DataStoreService: ValueNotUpdated: The value for key "Player_77" was not updated. API: UpdateAsync, Data Store: PlayerData`,
    ],
    different: [`DataStoreService: ValueNotUpdated: The value for key "Player_77" was not updated. API: UpdateAsync, Data Store: Inventory`],
  },
  {
    name: "HTTP 429 and 5xx: the status is kept, URLs lose their query and numeric path segments",
    same: [
      "HttpService:RequestAsync() failed: HTTP 429 (Too Many Requests) https://api.trello.com/1/cards?key=abc&token=def",
      "HttpService:RequestAsync() failed: HTTP 429 (Too Many Requests) https://api.trello.com/1/cards?key=zzz",
      "HttpService:RequestAsync() failed: HTTP 429 (Too Many Requests) https://api.trello.com/2/cards",
    ],
    different: [
      "HttpService:RequestAsync() failed: HTTP 503 (Service Unavailable) https://api.trello.com/1/cards",
      "HttpService:RequestAsync() failed: HTTP 500 (Internal Server Error) https://api.trello.com/1/cards",
      "HttpService:RequestAsync() failed: HTTP 429 (Too Many Requests) https://discord.com/api/webhooks",
    ],
  },
  {
    name: "Infinite yield on a player's child: the player is data, the child is code",
    same: [
      `Infinite yield possible on 'Players.Builderman:WaitForChild("leaderstats")'`,
      `Infinite yield possible on 'Players.xX_Noob_Xx:WaitForChild("leaderstats")'`,
    ],
    different: [`Infinite yield possible on 'Players.Builderman:WaitForChild("Data")'`, `Infinite yield possible on 'ReplicatedStorage:WaitForChild("leaderstats")'`],
  },
  {
    name: "Infinite yield on a numbered instance under Workspace",
    same: [
      `Infinite yield possible on 'Workspace.Map.Spawns:WaitForChild("Spawn7")'`,
      `Infinite yield possible on 'Workspace.Map.Spawns:WaitForChild("Spawn1")'`,
    ],
    different: [`Infinite yield possible on 'Workspace.Map.Doors:WaitForChild("Door1")'`, `Infinite yield possible on 'ReplicatedStorage.Remotes:WaitForChild("Spawn7")'`],
  },
  {
    name: "is not a valid member of: class and parent kept, the child name is not",
    same: [
      `Spawn7 is not a valid member of Folder "Workspace.Map.Spawns"`,
      `Spawn1 is not a valid member of Folder "Workspace.Map.Spawns"`,
      `Spawn8 is not a valid member of Folder "Workspace.Map.Spawns"`,
    ],
    different: [`Spawn7 is not a valid member of Model "Workspace.Map.Spawns"`, `Spawn7 is not a valid member of Folder "Workspace.Map.Doors"`],
  },
  {
    name: "is not a valid member of a numbered instance under Workspace",
    same: [`Seat is not a valid member of Model "Workspace.Cars.Car12"`, `Seat is not a valid member of Model "Workspace.Cars.Car3"`],
    different: [`Seat is not a valid member of Model "ReplicatedStorage.Cars.Car12"`],
  },
  {
    name: "is not a valid member of a player's character (the player name is known)",
    same: [
      { message: `Humanoid is not a valid member of Model "Workspace.Builderman"`, player: "Builderman" },
      { message: `Humanoid is not a valid member of Model "Workspace.Roblox"`, player: "Roblox" },
    ],
    different: [{ message: `Humanoid is not a valid member of Model "Workspace.Roblox"`, player: "Builderman" }],
  },
  {
    name: "attempt to index nil with: the field is code; the same function in every stack form",
    same: [
      { message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'", stack: "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40" },
      { message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'", stack: "ServerScriptService.Combat:123 function attack\nServerScriptService.Tools:9 function swing" },
      { message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'", stack: "Stack Begin\nScript 'ServerScriptService.Combat', Line 123 - function attack\nStack End" },
    ],
    different: [
      { message: "ServerScriptService.Combat:123: attempt to index nil with 'Mana'", stack: "ServerScriptService.Combat:123 function attack" },
      { message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'", stack: "ServerScriptService.Combat:123 function heal" },
      // without a stack there is no function name: the location (with its line) stands alone (version 4)
      "ServerScriptService.Combat:123: attempt to index nil with 'Health'",
      "ServerScriptService.Combat:124: attempt to index nil with 'Health'",
      "ServerScriptService.Magic:123: attempt to index nil with 'Health'",
      "ServerScriptService.Combat:123: attempt to index number with 'Health'",
    ],
  },
  {
    name: "attempt to perform arithmetic: the operation and operand types are code",
    same: [
      { message: "ReplicatedStorage.Modules.Economy:57: attempt to perform arithmetic (add) on nil and number", stack: "ReplicatedStorage.Modules.Economy:57 function deposit\nServerScriptService.Shop:12" },
      { message: "ReplicatedStorage.Modules.Economy:69: attempt to perform arithmetic (add) on nil and number", stack: "ReplicatedStorage.Modules.Economy:69 function deposit\nServerScriptService.Shop:15" },
    ],
    different: [
      "ReplicatedStorage.Modules.Economy:57: attempt to perform arithmetic (sub) on nil and number",
      "ReplicatedStorage.Modules.Economy:57: attempt to perform arithmetic (add) on number and nil",
    ],
  },
  {
    name: "invalid argument #n: the position is code",
    same: [
      { message: "invalid argument #1 to 'Clone' (Instance expected, got nil)", stack: "Players.Alice.PlayerScripts.Client.Weapons:88 function equip" },
      { message: "invalid argument #1 to 'Clone' (Instance expected, got nil)", stack: "Players.Bob.PlayerScripts.Client.Weapons:88 function equip" },
      // the function moved two lines down (version 4)
      { message: "invalid argument #1 to 'Clone' (Instance expected, got nil)", stack: "Players.Alice.PlayerScripts.Client.Weapons:90 function equip" },
    ],
    different: [
      { message: "invalid argument #2 to 'Clone' (Instance expected, got nil)", stack: "Players.Alice.PlayerScripts.Client.Weapons:88 function equip" },
      { message: "invalid argument #1 to 'Clone' (Instance expected, got nil)", stack: "Players.Alice.PlayerScripts.Client.Weapons:88 function unequip" },
    ],
  },
  {
    name: "Script timeout in scripts of numbered models under Workspace",
    same: [
      { message: "Script timeout: exhausted allowed execution time", stack: "Workspace.Cars.Car12.DriveScript:40 function step\nWorkspace.Cars.Car12.DriveScript:10" },
      { message: "Script timeout: exhausted allowed execution time", stack: "Workspace.Cars.Car3.DriveScript:40 function step\nWorkspace.Cars.Car3.DriveScript:10" },
      { message: "Script timeout: exhausted allowed execution time", stack: "Workspace.Cars.Car3.DriveScript:41 function step\nWorkspace.Cars.Car3.DriveScript:11" },
    ],
    different: [
      { message: "Script timeout: exhausted allowed execution time", stack: "Workspace.Cars.Car3.DriveScript:40 function brake\nWorkspace.Cars.Car3.DriveScript:10" },
      "Script timeout: exhausted allowed execution time",
    ],
  },
  {
    name: "Teleport failures: place ids are data, the Roblox error code is not",
    same: [
      "Teleport to place 4483381587 failed: The server is full (Error Code: 772)",
      "Teleport to place 920587237 failed: The server is full (Error Code: 772)",
    ],
    different: ["Teleport to place 4483381587 failed: Unauthorized (Error Code: 773)"],
  },
  {
    name: "MessagingService and MemoryStore limits: topic, queue and map names are data",
    same: [
      `MessagingService: PublishAsync rate limit exceeded for topic "Party_48213"`,
      `MessagingService: PublishAsync rate limit exceeded for topic "Party_7"`,
    ],
    different: [`MessagingService: SubscribeAsync rate limit exceeded for topic "Party_7"`, `MemoryStoreService: RequestThrottled: request rate exceeded for queue "Party_7"`],
  },
  {
    name: "MemoryStore queue throttling",
    same: [
      `MemoryStoreService: RequestThrottled: request rate exceeded for queue "matchmaking_4412"`,
      `MemoryStoreService: RequestThrottled: request rate exceeded for queue 'matchmaking_9'`,
    ],
    different: [`MemoryStoreService: RequestThrottled: request rate exceeded for sorted map "leaderboard_9"`],
  },
  {
    name: "asset ids",
    same: [
      "Failed to load sound rbxassetid://12345678: Unable to download sound data",
      "Failed to load sound rbxassetid://9: Unable to download sound data",
    ],
    different: ["Failed to load animation rbxassetid://12345678: Unable to download sound data"],
  },
  {
    name: "coordinates, vectors and durations",
    same: ["Anti-cheat: teleport detected to (120.5, 4, -33.2) after 0.25s", "Anti-cheat: teleport detected to (-4, 10.75, 88) after 3s"],
    different: ["Anti-cheat: speed detected to (120.5, 4, -33.2) after 0.25s"],
  },
  {
    name: "user ids and UUIDs",
    same: [
      "Failed to load data for UserId 261 in server {0A1B2C3D-1111-2222-3333-444455556666}",
      "Failed to load data for UserId 99817723 in server 7c9e6679-7425-40de-944b-e07fc1f90ae7",
    ],
    different: ["Failed to save data for UserId 261 in server {0A1B2C3D-1111-2222-3333-444455556666}"],
  },
  {
    name: "dates and timestamps (version 3)",
    same: [
      "Leaderboard reset at 2026-11-23T00:00:00Z skipped",
      "Leaderboard reset at 2026-11-30T00:00:00.123Z skipped",
      "Leaderboard reset at 2026-12-07T09:30:05+01:00 skipped",
      "Leaderboard reset at 2026-12-07 09:30:05 skipped",
      "Leaderboard reset at 20261207T093005Z skipped",
      "Leaderboard reset at Wed, 25 Nov 2026 21:20:48 GMT skipped",
      "Leaderboard reset at Wed Nov 25 21:20:48 2026 skipped",
      "Leaderboard reset at 2026-11-25 skipped",
      "Leaderboard reset at 21:20:48 skipped",
    ],
    different: ["Leaderboard reset at 2026-11-23T00:00:00Z failed", "Season reset at 2026-11-23T00:00:00Z skipped"],
  },
  {
    name: "hex ids and hashes (version 3); all-digit runs stay numbers, all-letter words stay words",
    same: [
      "receipt 9f8e7d6c5b4a39281706f5e4d3c2b1a0 not granted",
      "receipt 04C1E2F3A4B5C6D7E8F90A1B2C3D4E5F not granted",
      "receipt 356a192b7913b04c54574d18c28d46e6395428ab not granted",
      "receipt a1b2c3d4 not granted",
    ],
    // mixed case is not hex: version 4 reads `9f8e7D6c` as an opaque id, `<id>`
    different: ["receipt 12345678 not granted", "receipt deadbeef not granted", "receipt 9f8e7d6c5b4a39281706f5e4d3c2b1a0 granted twice", "receipt 9f8e7D6c not granted"],
  },
  {
    name: "IP addresses and emails (version 3), also inside URLs",
    same: [
      "Webhook to http://10.0.0.12:8080/hooks/admin@mygame.com failed from 192.168.1.7",
      "Webhook to http://10.0.0.254:8080/hooks/mod@mygame.com failed from 2001:db8::ff00:42:8329",
      "Webhook to http://172.16.4.1:8080/hooks/x.y+z@other.org failed from fe80::1",
    ],
    different: ["Webhook to http://10.0.0.12:9090/hooks/admin@mygame.com failed from 192.168.1.7", "Webhook to http://10.0.0.12:8080/alerts/admin@mygame.com failed from 192.168.1.7"],
  },
  {
    name: "the event's own player name anywhere in the text (version 3)",
    same: [
      { message: "Teleport failed for Builderman: The server is full (Error Code: 772)", player: "Builderman" },
      { message: "Teleport failed for xX_Noob_Xx: The server is full (Error Code: 772)", player: "xX_Noob_Xx" },
      { message: "Teleport failed for kittycat_2009: The server is full (Error Code: 772)", player: "kittycat_2009" },
    ],
    different: [
      // another player's name is not this event's variable; a longer name is not the player's
      { message: "Teleport failed for Builderman: The server is full (Error Code: 772)", player: "Shedletsky" },
      { message: "Teleport failed for Builderman2: The server is full (Error Code: 772)", player: "Builderman" },
      { message: "Teleport failed for Builderman: Unauthorized (Error Code: 773)", player: "Builderman" },
      { message: "Teleport failed for Builderman: The server is full (Error Code: 773)", player: "Builderman" },
    ],
  },
  {
    name: "the event's own user id inside a name (version 3)",
    same: [
      { message: "Profile Profile_1538394712 is not loaded", userId: 1538394712 },
      { message: "Profile Profile_2207731150 is not loaded", userId: 2207731150 },
      { message: "Profile Profile_261 is not loaded", userId: 261 },
      { message: "Profile Profile_<n> is not loaded" },
      // version 4: an id of 5+ digits inside a name is data whoever it names
      { message: "Profile Profile_2207731150 is not loaded", userId: 1538394712 },
      { message: "Profile Profile_15383947120 is not loaded", userId: 1538394712 },
    ],
    different: [
      // shorter ids are the event's own only: another player's stays
      { message: "Profile Profile_4412 is not loaded", userId: 261 },
      { message: "Profile Profile_12 is not loaded", userId: 12 },
    ],
  },
  {
    name: "opaque request ids in any alphabet and case (version 4): ULID, base62, base32, prefixed tokens",
    same: [
      `Inventory API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"01HGW2N7Q8ZK3X4Y5V6T7R8S9A"}`,
      `Inventory API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"aZ9kQ2mX7pL0c3Vb"}`,
      `Inventory API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"JBSWY3DPEHPK3PXP"}`,
      `Inventory API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"7KX9M2QPZ4W8"}`,
      `Inventory API: HTTP 500 (Internal Server Error) {"error":"internal","request_id":"x7k2m9qz"}`,
    ],
    different: [
      // the status and the server's error code stay
      `Inventory API: HTTP 404 (Not Found) {"error":"internal","request_id":"01HGW2N7Q8ZK3X4Y5V6T7R8S9A"}`,
      `Inventory API: HTTP 500 (Internal Server Error) {"error":"overloaded","request_id":"01HGW2N7Q8ZK3X4Y5V6T7R8S9A"}`,
    ],
  },
  {
    name: "opaque ids inside prefixed tokens and URLs (version 4); code names with a number or two stay",
    same: ["Purchase req_2Nf8sLq0Zx failed", "Purchase req_8pQ3vW1xZc7 failed", "Purchase req_Rq8xK2pLm9Zt4Wv1 failed"],
    different: ["Purchase req_failed failed", "Purchase Vector3int16 failed", "Purchase Color3uint8 failed"],
  },
  {
    name: "an id of 5+ digits inside a key or name, whatever the word (version 4); years and short numbers stay",
    same: [
      "DataStore GetAsync failed for Inventory_98817723 (gift from user1538394712)",
      "DataStore GetAsync failed for Inventory_2207731150 (gift from user261000)",
      "DataStore GetAsync failed for Inventory_45021 (gift from user98817723)",
    ],
    different: ["DataStore GetAsync failed for Inventory_2026 (gift from user98817723)", "DataStore GetAsync failed for Bank_98817723 (gift from user98817723)"],
  },
  {
    name: "quoted data (version 4): names with spaces, punctuation, emoji or non-Latin letters",
    same: [
      "Pets: cannot equip 'Golden Dragon 🐉': slot locked",
      "Pets: cannot equip '炎の剣': slot locked",
      "Pets: cannot equip 'Mr. Whiskers': slot locked",
      "Pets: cannot equip 'Pet #4': slot locked",
      "Pets: cannot equip 'Café Cat': slot locked",
    ],
    // a single identifier is code: it stays, and so does the text around the quotes
    different: ["Pets: cannot equip 'Dragon': slot locked", "Pets: cannot trade 'Golden Dragon 🐉': slot locked"],
  },
];

describe("engine messages: variants that group and variants that do not", () => {
  for (const c of ENGINE_MESSAGES) {
    it(c.name, () => {
      const first = fp(c.same[0]);
      for (const e of c.same.slice(1)) expect(fp(e), label(e)).toBe(first);
      for (const e of c.different) expect(fp(e), label(e)).not.toBe(first);
    });
  }
});

describe("stack first", () => {
  const msg = "attempt to call a nil value";

  it("groups by the frames when the message does not name the top frame", () => {
    const a = { message: msg, stack: "ServerScriptService.Quests:10 function start\nServerScriptService.Main:5" };
    expect(fp(a)).toBe(fp({ message: msg, stack: "Script 'ServerScriptService.Quests', Line 10 - function start\nScript 'ServerScriptService.Main', Line 5" }));
    // a caller without a function name counts by its script alone (version 4)
    expect(fp(a)).toBe(fp({ message: msg, stack: "ServerScriptService.Quests:10 function start\nServerScriptService.Main:6" }));
    expect(fp(a)).not.toBe(fp({ message: msg, stack: "ServerScriptService.Quests:10 function start\nServerScriptService.Lobby:5" }));
    expect(fp(a)).not.toBe(fp({ message: msg, stack: "ServerScriptService.Quests:10 function begin\nServerScriptService.Main:5" }));
    expect(fp(a)).not.toBe(fp(msg));
  });

  it("a stack of only [C] frames and markers is not a usable stack", () => {
    expect(fp({ message: msg, stack: "Stack Begin\n[C]: in function 'error'\nStack End" })).toBe(fp(msg));
  });

  it("player names inside frames do not split", () => {
    expect(fp({ message: msg, stack: "Players.Alice.PlayerGui.Hud.Main:5 function draw" })).toBe(
      fp({ message: msg, stack: "Players.Bob.PlayerGui.Hud.Main:5 function draw" }),
    );
  });

  it("does not let message text and stack text run together", () => {
    expect(fp({ message: "a", stack: "Workspace.B:1" })).not.toBe(fp("a Workspace.B:1"));
  });
});

describe("lines move; bugs don't (version 4)", () => {
  const shift = (text: string, by: number) =>
    text.replace(/(:|Line |line )(\d+)/g, (_m, pre: string, n: string) => `${pre}${Number(n) + by}`);
  const forms = {
    traceback: "ServerScriptService.Shop:40 function buy\nServerScriptService.Main:3",
    scriptContext: "Script 'ServerScriptService.Shop', Line 40 - function buy\nScript 'ServerScriptService.Main', Line 3",
    legacy: "ServerScriptService.Shop, line 40 - function buy\nServerScriptService.Main, line 3",
  };

  it("a frame counts by script and function: every stack form, with its lines shifted, keeps its fingerprint", () => {
    for (const [form, stack] of Object.entries(forms)) {
      for (const message of ["ServerScriptService.Shop:40: attempt to index nil with 'Price'", "Purchase failed: not enough coins"]) {
        const before = fp({ message, stack });
        expect(fp({ message: shift(message, 12), stack: shift(stack, 12) }), `${form}: ${message}`).toBe(before);
        // and the previous version, which counted lines, split them
        expect(defaultFingerprintV3(shift(message, 12), shift(stack, 12)), form).not.toBe(defaultFingerprintV3(message, stack));
      }
    }
  });

  it("the top frame without a function name counts by its line; callers without one by their script", () => {
    expect(frameIdentities(stackFrames("Workspace.Door:12\nWorkspace.Door:30 function open\nServerScriptService.Main:7"))).toEqual([
      "Workspace.Door:12",
      "Workspace.Door open",
      "ServerScriptService.Main",
    ]);
    const msg = "Workspace.Door:12: attempt to index nil with 'Hinge'";
    // a main chunk's error: a shifted line cannot be told from another line, so it stays apart
    expect(fp({ message: msg, stack: "Workspace.Door:12" })).not.toBe(fp({ message: shift(msg, 3), stack: "Workspace.Door:15" }));
  });

  it("an anonymous function has no name: at the top its line counts, below it only its script", () => {
    const msg = "attempt to call a nil value";
    expect(frameIdentities(["Workspace.Tool:8 <anonymous>", "Workspace.Tool:20 ?"])).toEqual(["Workspace.Tool:8", "Workspace.Tool"]);
    const named = "Workspace.Tool:30 function activate\nWorkspace.Tool:8 function <anonymous>";
    expect(fp({ message: msg, stack: named })).toBe(fp({ message: msg, stack: shift(named, 5) }));
    const top = "Workspace.Tool:8 function <anonymous>\nWorkspace.Tool:30 function activate";
    expect(fp({ message: msg, stack: top })).not.toBe(fp({ message: msg, stack: shift(top, 5) }));
  });

  it("two different errors in one function, and one error in two functions, stay apart", () => {
    const stack = "ServerScriptService.Shop:40 function buy";
    expect(fp({ message: "ServerScriptService.Shop:40: attempt to index nil with 'Price'", stack })).not.toBe(
      fp({ message: "ServerScriptService.Shop:44: attempt to index nil with 'Stock'", stack: "ServerScriptService.Shop:44 function buy" }),
    );
    expect(fp({ message: "Purchase failed", stack })).not.toBe(fp({ message: "Purchase failed", stack: "ServerScriptService.Shop:40 function sell" }));
    expect(fp({ message: "Purchase failed", stack })).not.toBe(fp({ message: "Purchase failed", stack: "ServerScriptService.Trade:40 function buy" }));
  });

  it("an event whose frames changed its fingerprint names version 3's as the secondary; one without a stack keeps version 3's", () => {
    const message = "Purchase failed: not enough coins";
    const r = fingerprintsFor(message, forms.traceback);
    expect(r.fingerprint).not.toBe(defaultFingerprintV3(message, forms.traceback));
    expect(r.older[0]).toBe(defaultFingerprintV3(message, forms.traceback));
    // with a custom fingerprint around the default, the secondary is the custom one around version 3's
    const custom = fingerprintsFor(message, forms.traceback, ["{{ default }}", "shop"]);
    expect(custom.older[0]).toBeDefined();
    expect(custom.older[0]).not.toBe(custom.fingerprint);
    expect(fingerprintsFor(message, shift(forms.traceback, 12), ["{{ default }}", "shop"]).fingerprint).toBe(custom.fingerprint);
    expect(defaultFingerprint(message, null)).toBe(defaultFingerprintV3(message, null));
    expect(defaultFingerprint("ServerScriptService.Shop:40: boom", null)).toBe(defaultFingerprintV3("ServerScriptService.Shop:40: boom", null));
  });
});

describe("pieces", () => {
  it("messageTemplate strips the leading location and reports it", () => {
    expect(messageTemplate("Players.Builderman.PlayerScripts.Client:5: oops 42")).toEqual({
      template: "oops <n>",
      location: "Players.<player>.PlayerScripts.Client:5",
    });
    expect(messageTemplate("ServerScriptService.Combat, line 12: boom")).toEqual({ template: "boom", location: "ServerScriptService.Combat:12" });
    expect(messageTemplate("Warning: 3 things").location).toBeNull();
  });

  it("normalizePath replaces numbers only in data paths, and keeps Players.LocalPlayer", () => {
    expect(normalizePath("Workspace.Map.Spawns.Spawn7")).toBe("Workspace.Map.Spawns.Spawn<n>");
    expect(normalizePath("game.Workspace.Lobby.Pad12.Touch")).toBe("game.Workspace.Lobby.Pad<n>.Touch");
    expect(normalizePath("ReplicatedStorage.Maps.Map2")).toBe("ReplicatedStorage.Maps.Map2");
    expect(normalizePath("Players.LocalPlayer.PlayerGui")).toBe("Players.LocalPlayer.PlayerGui");
    expect(normalizePath("Workspace.Builderman.Animate", "Builderman")).toBe("Workspace.<player>.Animate");
  });

  it("stackFrames reads the three Roblox frame forms the same way", () => {
    expect(stackFrames("Script 'Workspace.A', Line 3 - function f\nWorkspace.A:3 function f\nWorkspace.A, line 3 - function f")).toEqual([
      "Workspace.A:3 f",
      "Workspace.A:3 f",
      "Workspace.A:3 f",
    ]);
  });

  it("groupingKey shows what the fingerprint is a hash of", () => {
    // the tag stays `v2`: a text without version 3's classes keeps its version-2 fingerprint
    expect(groupingKey("ServerScriptService.Combat:123: attempt to index nil with 'Health'", null)).toEqual([
      "v2",
      "attempt to index nil with 'Health'",
      "ServerScriptService.Combat:123",
    ]);
  });

  it("stays linear on long adversarial text", () => {
    const long = `${"a.".repeat(4000)}:${"1 ".repeat(2000)}${"x is not a valid member of ".repeat(100)}`;
    const t = Date.now();
    defaultFingerprint(long, long);
    expect(Date.now() - t).toBeLessThan(2000);
  });
});

describe("version 4: data wherever it appears", () => {
  it("quoted code stays: identifiers, instance paths and call arguments keep texts apart", () => {
    const apart: [string, string][] = [
      ["attempt to index nil with 'Parent'", "attempt to index nil with 'Character'"],
      [`Unable to find "Workspace.Map.Arena"`, `Unable to find "Workspace.Map.Lobby"`],
      [`Infinite yield possible on 'Workspace.Teams:WaitForChild("Red Base")'`, `Infinite yield possible on 'Workspace.Teams:WaitForChild("Blue Base")'`],
      [`Shop: {"error":"not_found"}`, `Shop: {"error":"rate_limited"}`],
      [`Workspace.Teams["Red Base"] is missing`, `Workspace.Teams["Blue Base"] is missing`],
      ["Expected ')' (to close '(' at line 5), got 'end'", "Expected ']' (to close '[' at line 5), got 'end'"],
      ["HTTP 404 (Not Found) request 01HGW2N7Q8ZK3X4Y5V6T7R8S9A", "HTTP 500 (Internal Server Error) request 01HGW2N7Q8ZK3X4Y5V6T7R8S9B"],
    ];
    for (const [a, b] of apart) expect(defaultFingerprint(a, null), `${a} / ${b}`).not.toBe(defaultFingerprint(b, null));
    expect(messageTemplate(`Shop: can't buy 'Health' for player's "Golden Dragon 🐉" ({"error":"x y"})`).template).toBe(
      `Shop: can't buy 'Health' for player's "<str>" ({"error":"<str>"})`,
    );
  });

  it("templates and titles show the placeholders", () => {
    expect(messageTemplate("Trade 7KX9M2QPZ4W8 by user98817723 of 'Wooden Sword' failed at https://api.example.com/v1/requests/aZ9kQ2mX7pL0c3Vb").template).toBe(
      "Trade <id> by user<n> of '<str>' failed at https://api.example.com/v1/requests/<id>",
    );
    // dotted paths and script locations are not ids
    expect(messageTemplate("ReplicatedStorage.Items.Sword2x4Blade3:40: attempt to call a nil value").location).toBe("ReplicatedStorage.Items.Sword2x4Blade3:40");
  });

  it("an event these forms change names version 3's fingerprint as the secondary, with or without a stack", () => {
    const m = (id: string) => `Inventory API: HTTP 500 request_id=${id}`;
    const a = fingerprintsFor(m("01HGW2N7Q8ZK3X4Y5V6T7R8S9A"), null);
    const b = fingerprintsFor(m("aZ9kQ2mX7pL0c3Vb"), null);
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.older[0]).toBe(defaultFingerprintV3(m("01HGW2N7Q8ZK3X4Y5V6T7R8S9A"), null));
    expect(b.older[0]).toBe(defaultFingerprintV3(m("aZ9kQ2mX7pL0c3Vb"), null));
    expect(a.older[0]).not.toBe(b.older[0]);
  });

  it("stays linear on long runs of ids, digits and quotes", () => {
    const long = `${"aZ9kQ2mX7pL0".repeat(700)} ${"1".repeat(3000)}x ${"'a b".repeat(500)} ${"\"".repeat(1000)}`;
    const t = Date.now();
    defaultFingerprint(long, null);
    expect(Date.now() - t).toBeLessThan(500);
  });
});

describe("fingerprintsFor: versions and custom fingerprints", () => {
  it("returns the current fingerprint and, for a text version 3 does not change, the v1 fingerprint as the secondary", () => {
    const r = fingerprintsFor("index 57 out of range", null);
    expect(GROUPING_VERSION).toBe(4);
    expect(r.fingerprint).toBe(defaultFingerprintV2("index 57 out of range", null));
    expect(r.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(r.older[0]).toBe(v1("index 57 out of range", null));
    expect(r.fingerprint).not.toBe(r.older[0]);
  });

  it("a custom fingerprint is the same in both versions, so there is no secondary", () => {
    expect(fingerprintsFor("m", null, "checkout-failed").older).toEqual([]);
    expect(fingerprintsFor("a", null, "x").fingerprint).toBe(fingerprintsFor("b", "Workspace.X:1", ["x"]).fingerprint);
  });

  it("`{{ default }}` expands to the v2 default, and the secondary to the v1 one", () => {
    const a = fingerprintsFor(`Spawn1 is not a valid member of Folder "Workspace.Map.Spawns"`, null, ["{{ default }}", "lobby"]);
    const b = fingerprintsFor(`Spawn2 is not a valid member of Folder "Workspace.Map.Spawns"`, null, ["{{default}}", "lobby"]);
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.older[0]).toBeDefined();
    expect(a.older[0]).not.toBe(b.older[0]);
  });
});

describe("version 3: texts version 2 split", () => {
  it("changes only texts holding its classes, and gives those version 2's fingerprint as the secondary", () => {
    const msg = (p: string) => `Teleport failed for ${p}: The server is full (Error Code: 772)`;
    const a = fingerprintsFor(msg("Builderman"), null, null, "Builderman", 156);
    expect(a.older[0]).toBe(defaultFingerprintV2(msg("Builderman"), null, "Builderman"));
    expect(a.fingerprint).not.toBe(a.older[0]);
    const b = fingerprintsFor(msg("Shedletsky"), null, null, "Shedletsky", 261);
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(b.older[0]).toBe(defaultFingerprintV2(msg("Shedletsky"), null, "Shedletsky"));
    // a custom fingerprint around the default follows the same rule
    const c = fingerprintsFor(msg("Builderman"), null, ["{{ default }}", "lobby"], "Builderman");
    expect(c.fingerprint).toBe(fingerprintsFor(msg("Shedletsky"), null, ["{{ default }}", "lobby"], "Shedletsky").fingerprint);
    expect(c.older[0]).not.toBe(fingerprintsFor(msg("Shedletsky"), null, ["{{ default }}", "lobby"], "Shedletsky").older[0]);
  });

  it("a text its classes match but do not change (the player in a path) keeps v1's fingerprint as the secondary", () => {
    const m = "Players.Builderman.PlayerGui.Hud.Main:55: attempt to call a nil value";
    const r = fingerprintsFor(m, null, null, "Builderman");
    expect(r.fingerprint).toBe(defaultFingerprintV2(m, null, "Builderman"));
    expect(r.older[0]).toBe(v1(m, null));
  });

  it("messageTemplate shows the placeholders; the player and user id are optional", () => {
    expect(messageTemplate("ProcessReceipt: receipt 9f8e7d6c5b4a39281706f5e4d3c2b1a0 for user 1538394712: Profile_1538394712 not loaded at 2026-11-25T14:03:12.482Z", "Builderman", 1538394712).template).toBe(
      "ProcessReceipt: receipt <hex> for user <n>: Profile_<n> not loaded at <date>",
    );
    expect(messageTemplate("Teleport failed for Builderman from 10.0.0.12 (admin@mygame.com)", "Builderman").template).toBe("Teleport failed for <player> from <ip> (<email>)");
    expect(messageTemplate("Teleport failed for Builderman").template).toBe("Teleport failed for Builderman");
  });

  it("a text's kept analysis is keyed by the user id only when the text holds it", () => {
    // a 4-digit id: version 4 replaces ids of 5+ digits inside names whoever they name
    const m = "Profile Profile_4412 is not loaded";
    const other = groupEvent(m, null, null, null, undefined, 2207731150);
    const own = groupEvent(m, null, null, null, undefined, 4412);
    const again = groupEvent(m, null, null, null, undefined, 98817723);
    expect(own.fingerprint).not.toBe(other.fingerprint);
    expect(again.fingerprint).toBe(other.fingerprint);
    expect(own.fingerprint).toBe(defaultFingerprint("Profile Profile_261 is not loaded", null, null, 261));
  });
});

describe("groupEvent: culprit and the previous version's fingerprint", () => {
  it("the culprit is the top frame's path, else the message's leading location, else null", () => {
    expect(groupEvent("boom", "[C]: in function 'error'\nWorkspace.Cars.Car12.DriveScript:40 function step").culprit).toBe("Workspace.Cars.Car<n>.DriveScript");
    expect(groupEvent("Players.Bob.PlayerGui.Hud:5: oops", null).culprit).toBe("Players.<player>.PlayerGui.Hud");
    expect(groupEvent("ServerScriptService.Combat, line 123: boom", null).culprit).toBe("ServerScriptService.Combat");
    expect(groupEvent("something broke, line 5", null).culprit).toBeNull();
    expect(groupEvent("something broke", "[C]: in function 'error'").culprit).toBeNull();
  });

  it("lists every earlier version's fingerprint that differs, newest version first", () => {
    const msg = "Teleport failed for Builderman: The server is full (Error Code: 772)";
    const stack = "ServerScriptService.Teleport:40 function go\nServerScriptService.Main:5";
    const g = groupEvent(msg, stack, null, "Builderman");
    expect(g.older).toEqual([defaultFingerprintV3(msg, stack, "Builderman"), defaultFingerprintV2(msg, stack, "Builderman"), v1(msg, stack)]);
    // the same fingerprint twice is listed once, and never the current one
    expect(new Set([g.fingerprint, ...g.older]).size).toBe(4);
  });

  it("skips the previous version's fingerprint when told it is not needed", () => {
    const seen: string[] = [];
    const g = groupEvent("index 57 out of range", null, null, null, (fp) => {
      seen.push(fp);
      return false;
    });
    expect(seen).toEqual([g.fingerprint]);
    expect(g.older).toEqual([]);
    expect(groupEvent("index 57 out of range", null).older[0]).toBe(v1("index 57 out of range", null));
  });

  it("a text's kept analysis is shared by players it does not name, and never given to the player it names", () => {
    // the character path names Bob: only Bob's own event replaces it
    const message = `Humanoid is not a valid member of Model "Workspace.Bob"`;
    const stack = "Workspace.Bob.Animate:12 function step";
    const others = ["Alice", "Carol", "Dave"].map((p) => groupEvent(message, stack, null, p));
    const bob = groupEvent(message, stack, null, "Bob");
    const afterBob = groupEvent(message, stack, null, "Erin");
    expect(new Set([...others, afterBob].map((g) => g.fingerprint)).size).toBe(1);
    expect(others[0].culprit).toBe("Workspace.Bob.Animate");
    expect(bob.fingerprint).not.toBe(others[0].fingerprint);
    expect(bob.culprit).toBe("Workspace.<player>.Animate");
    // a player named only in the stack counts too, and the order of sightings changes nothing
    const inStack = groupEvent("boom", "Workspace.Zed.Tool:3 function fire", null, "Zed");
    expect(inStack.culprit).toBe("Workspace.<player>.Tool");
    expect(groupEvent("boom", "Workspace.Zed.Tool:3 function fire", null, "Amy").culprit).toBe("Workspace.Zed.Tool");
    expect(groupEvent("boom", "Workspace.Zed.Tool:3 function fire", null, "Zed").fingerprint).toBe(inStack.fingerprint);
  });

  it("KnownFingerprints remembers per project and forgets the oldest past its bound", () => {
    const k = new KnownFingerprints(2);
    k.add("p1", "a");
    expect(k.has("p1", "a")).toBe(true);
    expect(k.has("p2", "a")).toBe(false);
    k.add("p1", "b");
    k.add("p1", "c");
    expect([k.has("p1", "a"), k.has("p1", "b"), k.has("p1", "c")]).toEqual([false, true, true]);
    // one it knows, added again (every event of a known issue), forgets nothing
    k.add("p1", "c");
    expect([k.has("p1", "b"), k.has("p1", "c")]).toEqual([true, true]);
    // across projects the oldest still goes first
    k.add("p2", "a");
    expect([k.has("p1", "b"), k.has("p1", "c"), k.has("p2", "a")]).toEqual([false, true, true]);
  });
});
