/**
 * A generated set of Roblox errors whose data comes in forms the grouping rules do not know (names
 * without digits or quotes, enum values, several at once), for measuring the learned templates
 * (app/ingest/miner.server.ts). Seeded, so every run makes the same 1,200 events. `issue` is the
 * true issue: each kind is one bug at one code location, whatever its data; kinds that share a
 * location with different constant text are different bugs.
 *
 * Some kinds are there to show the bound's price, as a game would produce them: an enum of three
 * values (too few to be told from three constants), place names of one and of two words (two token
 * counts: two templates), a rare kind seen with one or two values only.
 */
import type { CorpusEvent } from "./grouping-corpus.js";

/** A small seeded generator (mulberry32): the same sequence on every machine. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MAPS = ["Desert", "Volcano", "Glacier", "Jungle", "Harbor", "Canyon", "Tundra", "Meadow", "Swamp", "Citadel", "Lagoon", "Outpost"];
const ZONES = ["Spawn", "Market", "Arena", "Docks", "Mines", "Castle", "Forest", "Summit", "Caves", "Bazaar"];
const ITEMS = ["Sword", "Katana", "Bow", "Crossbow", "Shield", "Staff", "Dagger", "Hammer", "Spear", "Axe", "Wand", "Scythe", "Rapier", "Mace"];
const PETS = ["Dragon", "Unicorn", "Phoenix", "Kitty", "Puppy", "Bunny", "Griffin", "Slime", "Turtle", "Owl", "Fox"];
const QUESTS = ["DragonSlayer", "LostTreasure", "FirstSteps", "MinerMayhem", "HarborHeist", "FrozenPeak", "JungleRun", "CastleSiege"];
const STATES = ["Running", "Jumping", "Freefall", "Climbing", "Swimming", "Seated", "Ragdoll", "FallingDown", "GettingUp", "Landed", "Physics"];
const KEYS = ["W", "A", "S", "D", "E", "Q", "F", "R", "Space", "LeftShift", "Tab", "ButtonA", "ButtonB", "ButtonX", "Thumbstick1"];
const MATERIALS = ["Grass", "Sand", "Ice", "Slate", "Wood", "Concrete", "Neon", "Marble", "Basalt", "Mud"];
const DIFFICULTIES = ["Easy", "Normal", "Hard"];
const PLACES = ["Lobby", "Arena", "Hub", "Tutorial", "Sky Island", "Dark Forest", "Crystal Caves", "Pirate Cove", "Lava Lake"];

type Kind = { issue: string; weight: number; make: (pick: <T>(list: T[]) => T) => { message: string; stack?: string } };

const at = (path: string, line: number, fn: string, caller = "ServerScriptService.Main:14") => `${path}:${line} function ${fn}\n${caller}`;

const KINDS: Kind[] = [
  // one variable: a map, a zone, an item, an enum value
  { issue: "map-load", weight: 12, make: (p) => ({ message: `Failed to load map ${p(MAPS)} from storage`, stack: at("ServerScriptService.MapLoader", 88, "loadMap") }) },
  { issue: "zone-locked", weight: 10, make: (p) => ({ message: `Zone ${p(ZONES)} is locked for this player`, stack: at("ServerScriptService.Zones", 41, "enter") }) },
  {
    issue: "equip-not-owned",
    weight: 10,
    make: (p) => ({ message: `Cannot equip ${p(ITEMS)} because it is not owned`, stack: at("ReplicatedStorage.Inventory", 132, "equip", "ServerScriptService.Remotes:20 function onEquip") }),
  },
  {
    issue: "state-unexpected",
    weight: 8,
    make: (p) => ({ message: `Unexpected humanoid state Enum.HumanoidStateType.${p(STATES)} during ragdoll`, stack: at("StarterPlayer.StarterCharacterScripts.Ragdoll", 57, "onStateChanged") }),
  },
  { issue: "key-unbound", weight: 6, make: (p) => ({ message: `No action bound to Enum.KeyCode.${p(KEYS)} in vehicle seat`, stack: at("StarterPlayer.StarterPlayerScripts.Vehicle", 210, "onInput") }) },
  // two variables at once
  {
    issue: "quest-reward",
    weight: 8,
    make: (p) => ({ message: `Quest ${p(QUESTS)} reward ${p(ITEMS)} could not be granted to the player`, stack: at("ServerScriptService.Quests", 301, "grantReward") }),
  },
  { issue: "pet-zone", weight: 6, make: (p) => ({ message: `Pet ${p(PETS)} cannot follow into zone ${p(ZONES)} right now`, stack: at("ServerScriptService.Pets", 77, "follow") }) },
  // a variable the location shares with different constant text: three bugs in one function
  { issue: "trade-partner-left", weight: 5, make: () => ({ message: "Trade failed: partner left", stack: at("ServerScriptService.Trade", 150, "confirm") }) },
  { issue: "trade-item-locked", weight: 5, make: () => ({ message: "Trade failed: item locked", stack: at("ServerScriptService.Trade", 150, "confirm") }) },
  { issue: "trade-inventory-full", weight: 5, make: () => ({ message: "Trade failed: inventory full", stack: at("ServerScriptService.Trade", 150, "confirm") }) },
  // two errors of one function that differ in one word: constants, two of them
  { issue: "shop-closed", weight: 4, make: () => ({ message: "Shop purchase refused: shop closed", stack: at("ServerScriptService.Shop", 40, "buy") }) },
  { issue: "shop-sold-out", weight: 4, make: () => ({ message: "Shop purchase refused: shop empty", stack: at("ServerScriptService.Shop", 40, "buy") }) },
  // a material enum at a location whose other error has another length
  { issue: "footstep-material", weight: 6, make: (p) => ({ message: `Footstep sound missing for material Enum.Material.${p(MATERIALS)}`, stack: at("StarterPlayer.StarterCharacterScripts.Footsteps", 33, "play") }) },
  { issue: "footstep-nil", weight: 3, make: () => ({ message: "attempt to index nil with 'SoundId'", stack: at("StarterPlayer.StarterCharacterScripts.Footsteps", 33, "play") }) },
  // the bound's price: three values only, names of one or two words, a rare kind
  { issue: "boss-difficulty", weight: 5, make: (p) => ({ message: `Boss spawn failed on ${p(DIFFICULTIES)} difficulty`, stack: at("ServerScriptService.Bosses", 64, "spawnBoss") }) },
  { issue: "teleport-place", weight: 6, make: (p) => ({ message: `Teleport to ${p(PLACES)} failed`, stack: at("ServerScriptService.Teleports", 12, "send") }) },
  { issue: "badge-award", weight: 1, make: (p) => ({ message: `Badge ${p(["Veteran", "Explorer"])} could not be awarded`, stack: at("ServerScriptService.Badges", 9, "award") }) },
  // forms the rules know already (numbers, ids), next to the new ones
  { issue: "coins-negative", weight: 6, make: (p) => ({ message: `Coins went negative: ${-1 - Math.floor(p([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]) * 37)}`, stack: at("ServerScriptService.Economy", 22, "spend") }) },
  {
    issue: "save-key",
    weight: 6,
    make: (p) => ({ message: `Save failed for key Player_${10_000_000 + p([1, 2, 3, 4, 5, 6, 7, 8, 9]) * 7_919_113}`, stack: at("ServerScriptService.Data", 90, "save") }),
  },
  // stackless warnings: the location is none
  { issue: "lighting-preset", weight: 4, make: (p) => ({ message: `Lighting preset ${p(["Sunset", "Night", "Foggy", "Storm", "Dawn", "Overcast"])} not found, using default` }) },
  { issue: "music-missing", weight: 3, make: () => ({ message: "Background music track not found, using default" }) },
];

/** The generated events: `count` of them (1,200 unless told), the kinds drawn by weight. */
export function minerCorpus(count = 1200, seed = 40): CorpusEvent[] {
  const rnd = seeded(seed);
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)];
  const total = KINDS.reduce((n, k) => n + k.weight, 0);
  const out: CorpusEvent[] = [];
  for (let i = 0; i < count; i++) {
    let r = rnd() * total;
    const kind = KINDS.find((k) => (r -= k.weight) < 0) ?? KINDS[KINDS.length - 1];
    out.push({ issue: kind.issue, ...kind.make(pick) });
  }
  return out;
}
