import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { groupingParts } from "../../app/ingest/fingerprint.server.js";
import { learnedFingerprint, MAX_BUCKET_TEXTS, MAX_SAMPLES, matches, MIN_VALUES, mine, pickTemplate, tokens } from "../../app/ingest/miner.server.js";
import { LearnedTemplates, templatesChanged } from "../../app/ingest/learned-templates.server.js";
import type { Sql } from "../../db/client.js";
import { MAX_TEMPLATES_PER_PROJECT } from "../../db/grouping-templates.js";
import { accuracyTable } from "../support/grouping-accuracy.js";
import { CORPUS } from "../support/grouping-corpus.js";
import { minerCorpus, seeded } from "../support/miner-corpus.js";

const STACK = "ServerScriptService.MapLoader:88 function loadMap\nServerScriptService.Main:14";
const MAPS = ["Desert", "Volcano", "Glacier", "Jungle", "Harbor", "Canyon", "Tundra"];
const parts = (message: string, stack: string | null = STACK) => groupingParts(message, stack);

function shuffled<T>(list: T[], seed: number): T[] {
  const rnd = seeded(seed);
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe("the template miner", () => {
  it("converges: texts at one location that differ at one position become one template once the position has enough values", () => {
    const texts = MAPS.map((m) => parts(`Failed to load map ${m} from storage`));
    expect(mine(texts.slice(0, MIN_VALUES - 1))).toEqual([]);
    const learned = mine(texts.slice(0, MIN_VALUES));
    expect(learned).toHaveLength(1);
    expect(learned[0]).toMatchObject({ template: "Failed to load map <*> from storage", positions: [4], tokenCount: 7, texts: MIN_VALUES });
    // more values change nothing but the samples and the count: the template and its fingerprint stay
    const more = mine(texts);
    expect(more.map((t) => [t.template, t.fingerprint])).toEqual(learned.map((t) => [t.template, t.fingerprint]));
    expect(more[0].samples).toEqual([[...MAPS].sort()]);
    // a later text of the form is covered; one of another form at the location is not
    expect(matches(tokens(more[0].template), tokens(parts("Failed to load map Lagoon from storage").template))).toBe(true);
    expect(matches(tokens(more[0].template), tokens(parts("Failed to load map Lagoon from backup").template))).toBe(false);
  });

  it("learns two variables at once in a long enough text", () => {
    const items = ["Sword", "Bow", "Shield", "Staff", "Axe"];
    const texts = MAPS.flatMap((q, i) => [parts(`Quest ${q} reward ${items[i % 5]} could not be granted to the player`)]);
    expect(mine(texts).map((t) => t.template)).toEqual(["Quest <*> reward <*> could not be granted to the player"]);
  });

  it("keeps one location's texts apart from another location's, and texts of another token count apart", () => {
    const here = MAPS.slice(0, 4).map((m) => parts(`Failed to load map ${m} from storage`));
    const there = MAPS.slice(0, 4).map((m) => parts(`Failed to load map ${m} from storage`, "ServerScriptService.Lobby:5 function warm"));
    const learned = mine([...here, ...there]);
    expect(learned).toHaveLength(2);
    expect(new Set(learned.map((t) => t.location)).size).toBe(2);
    expect(new Set(learned.map((t) => t.fingerprint)).size).toBe(2);
    // two-word names make texts one token longer: not candidates with the one-word ones
    const mixed = mine([...here.slice(0, 2), parts("Failed to load map Sky Island from storage"), parts("Failed to load map Dark Forest from storage")]);
    expect(mixed).toEqual([]);
  });

  it("the result depends only on the set of texts: any order, any repeats", () => {
    const events = minerCorpus(600, 7);
    const input = events.map((e) => groupingParts(e.message, e.stack, e.player, e.userId));
    const once = JSON.stringify(mine(input));
    expect(JSON.parse(once).length).toBeGreaterThan(3);
    for (const seed of [1, 2, 3]) expect(JSON.stringify(mine(shuffled([...input, ...input.slice(0, 100)], seed)))).toBe(once);
    expect(JSON.stringify(mine([...input].reverse()))).toBe(once);
  });

  it("two miners fed the same texts by different instances reach the same fingerprint, a pure function of location and template", () => {
    const texts = MAPS.map((m) => parts(`Failed to load map ${m} from storage`));
    const a = mine(texts.slice(0, 5));
    const b = mine(shuffled(texts.slice(0, 5), 11));
    expect(a[0].fingerprint).toBe(b[0].fingerprint);
    expect(a[0].fingerprint).toBe(learnedFingerprint(a[0].location, a[0].template));
    expect(a[0].fingerprint).toMatch(/^[0-9a-f]{32}$/);
  });

  it("the bound keeps different constant text at one location apart", () => {
    // three errors of one function (three constants at one position: fewer than MIN_VALUES values)
    const field = ["PrimaryPart", "Parent", "Character"].map((f) => parts(`attempt to index nil with '${f}'`, "ReplicatedStorage.Pets.Follow:31 function follow"));
    expect(MIN_VALUES).toBeGreaterThan(field.length);
    expect(mine(field)).toEqual([]);
    // texts that differ in more than a third of their tokens are not one message with data in it
    const words = ["alpha", "beta", "gamma", "delta", "omega"];
    expect(mine(words.map((w, i) => parts(`Round ${w} ended ${words[(i + 1) % 5]}`)))).toEqual([]);
    // texts of one or two tokens never learn a variable
    expect(mine(MAPS.map((m) => parts(`${m} missing`)))).toEqual([]);
    // a position with few values splits the template: each constant is its own template
    const split = mine([
      ...MAPS.map((m) => parts(`Could not give ${m} to buyer`)),
      ...MAPS.map((m) => parts(`Could not take ${m} from buyer`)),
    ]);
    expect(split.map((t) => t.template).sort()).toEqual(["Could not give <*> to buyer", "Could not take <*> from buyer"]);
  });

  it("learns nothing from the grouping corpus that joins two of its issues (every must-stay-apart pair stays apart)", () => {
    const input = CORPUS.map((e) => ({ ...groupingParts(e.message, e.stack, e.player, e.userId), issue: e.issue }));
    for (const t of mine(input)) {
      const covered = new Set(input.filter((p) => p.location === t.location && matches(tokens(t.template), tokens(p.template))).map((p) => p.issue));
      expect([...covered]).toHaveLength(1);
    }
  });

  it("bounds its memory: at most MAX_BUCKET_TEXTS texts per location and MAX_SAMPLES values per variable", () => {
    const many = Array.from({ length: 5 * MAX_BUCKET_TEXTS }, (_, i) => ({ location: "L", template: `Failed to load map M${String.fromCharCode(97 + (i % 26))}${i.toString(36)} from storage` }));
    const learned = mine(many);
    expect(learned).toHaveLength(1);
    expect(learned[0].texts).toBe(MAX_BUCKET_TEXTS);
    expect(learned[0].samples[0]).toHaveLength(MAX_SAMPLES);
    // the texts considered are the first in sorted order: the same whatever arrived first
    expect(mine(shuffled(many, 3))).toEqual(learned);
  });

  it("an event covered by several learned templates gets the most specific, the same in every process", () => {
    const cands = ["a <*> c d", "a <*> <*> d", "<*> b c d"].map((template) => ({ template, tokens: tokens(template), positions: tokens(template).filter((t) => t === "<*>").length }));
    expect(pickTemplate(cands, tokens("a b c d"))?.template).toBe("<*> b c d");
    expect(pickTemplate([...cands].reverse(), tokens("a b c d"))?.template).toBe("<*> b c d");
    expect(pickTemplate(cands, tokens("a b x d"))?.template).toBe("a <*> <*> d");
    expect(pickTemplate(cands, tokens("x y z w"))).toBeNull();
  });

  it("ingest's cache: bounded per project, the same fingerprint in two caches, dropped at once when this process learns", () => {
    const learned = mine(MAPS.map((m) => parts(`Failed to load map ${m} from storage`)))[0];
    const row = (location: string) => ({ fingerprint: learnedFingerprint(location, learned.template), location, template: learned.template, token_count: learned.tokenCount, variables: 1 });
    const rows = [row(learned.location), ...Array.from({ length: MAX_TEMPLATES_PER_PROJECT + 500 }, (_, i) => row(`elsewhere ${i}`))];
    const [a, b] = [new LearnedTemplates(null as unknown as Sql), new LearnedTemplates(null as unknown as Sql)];
    try {
      expect(a.hold("p", rows).count).toBe(MAX_TEMPLATES_PER_PROJECT);
      // another instance reads the same rows, in the database's order (templatesForIngest)
      b.hold("p", rows);
      const later = parts("Failed to load map Lagoon from storage");
      expect(a.fingerprintIn("p", later)).toBe(learned.fingerprint);
      expect(b.fingerprintIn("p", later)).toBe(learned.fingerprint);
      expect(a.fingerprintIn("p", parts("Failed to load map Lagoon from backup"))).toBeNull();
      expect(a.fingerprintIn("other", later)).toBeNull();
      expect(a.bytesFor("p")).toBeLessThan(MAX_TEMPLATES_PER_PROJECT * 1024);
      templatesChanged("p");
      expect(a.fingerprintIn("p", later)).toBeNull();
      expect(a.bytesFor("p")).toBe(0);
    } finally {
      a.close();
      b.close();
    }
  });

  it("docs/grouping.md holds the measured grouping accuracy table", () => {
    const doc = readFileSync(new URL("../../docs/grouping.md", import.meta.url), "utf8");
    expect(doc).toContain(accuracyTable());
  });
});
