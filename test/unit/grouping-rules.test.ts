import { describe, expect, it } from "vitest";
import { RE2JS } from "re2js";
import { ApiError } from "../../app/http.server.js";
import {
  compileRegex,
  compileRule,
  compileRules,
  GroupingRuleCache,
  ProjectRules,
  ruleFingerprint,
  RuleInput,
  subjectPaths,
  type RuleSubject,
} from "../../app/ingest/rules.server.js";

const subject = (over: Partial<RuleSubject> = {}): RuleSubject => ({ message: "boom", level: "error", tags: null, stackTrace: null, playerName: null, ...over });
const rule = (id: string, match: object, action: "group" | "ignore" = "group") => compileRule({ id, action, name: null, match });
const matches = (match: object, s: Partial<RuleSubject>) => new ProjectRules([rule("r", match)]).match(subject(s)) !== null;

describe("matches", () => {
  it("exact message: the whole stored text, case and spaces included", () => {
    expect(matches({ message: "Shop closed" }, { message: "Shop closed" })).toBe(true);
    expect(matches({ message: "Shop closed" }, { message: "shop closed" })).toBe(false);
    expect(matches({ message: "Shop closed" }, { message: "Shop closed " })).toBe(false);
  });

  it("regex: unanchored RE2, anchors and (?i) as written", () => {
    expect(matches({ message_regex: "closed" }, { message: "Shop closed now" })).toBe(true);
    expect(matches({ message_regex: "^closed" }, { message: "Shop closed" })).toBe(false);
    expect(matches({ message_regex: "(?i)SHOP" }, { message: "shop" })).toBe(true);
  });

  it("path: the culprit or any frame, at a segment boundary", () => {
    const stack = "ReplicatedStorage.Lib.Signal:40 function fire\nServerScriptService.Combat.Hitbox:12 function onHit";
    expect(matches({ path: "ServerScriptService.Combat" }, { stackTrace: stack })).toBe(true);
    expect(matches({ path: "ReplicatedStorage.Lib" }, { stackTrace: stack })).toBe(true);
    expect(matches({ path: "ServerScriptService.Combat.Hitbox" }, { stackTrace: stack })).toBe(true);
    expect(matches({ path: "ServerScriptService.Comb" }, { stackTrace: stack })).toBe(false);
    // a message-only event: the location its text starts with
    expect(matches({ path: "Workspace.Door" }, { message: "Workspace.Door.Script:9: attempt to index nil" })).toBe(true);
    expect(subjectPaths(subject({ stackTrace: stack }))).toEqual(expect.arrayContaining(["ReplicatedStorage.Lib.Signal", "ServerScriptService.Combat.Hitbox"]));
  });

  it("level and tag", () => {
    expect(matches({ level: "warn" }, { level: "warn" })).toBe(true);
    expect(matches({ level: "warn" }, { level: "error" })).toBe(false);
    expect(matches({ tag: "beta" }, { tags: ["a", "beta"] })).toBe(true);
    expect(matches({ tag: "beta" }, { tags: ["betas"] })).toBe(false);
    expect(matches({ tag: "beta" }, { tags: null })).toBe(false);
  });

  it("all given fields must hold", () => {
    expect(matches({ level: "warn", message_regex: "Shop" }, { level: "warn", message: "Shop" })).toBe(true);
    expect(matches({ level: "warn", message_regex: "Shop" }, { level: "error", message: "Shop" })).toBe(false);
    expect(matches({ level: "warn", message_regex: "Shop" }, { level: "warn", message: "Bank" })).toBe(false);
  });
});

describe("order and compile", () => {
  it("the first matching rule wins", () => {
    const rules = new ProjectRules([rule("a", { message_regex: "Door 7" }, "ignore"), rule("b", { message_regex: "Door" })]);
    expect(rules.match(subject({ message: "Door 7" }))!.id).toBe("a");
    expect(rules.match(subject({ message: "Door 8" }))!.id).toBe("b");
    expect(rules.match(subject({ message: "Window" }))).toBeNull();
  });

  it("several regex rules run as one set: the same first match as rule by rule", () => {
    const list = [
      rule("warn-shop", { level: "warn", message_regex: "Shop" }),
      rule("bank", { message_regex: "(?i)^bank" }),
      rule("tag", { tag: "x" }, "ignore"),
      rule("any-shop", { message_regex: "Shop|Bank" }),
    ];
    const rules = new ProjectRules(list);
    const cases: [Partial<RuleSubject>, string | null][] = [
      [{ level: "warn", message: "Shop A" }, "warn-shop"],
      [{ level: "error", message: "Shop A" }, "any-shop"],
      [{ message: "BANK closed" }, "bank"],
      [{ message: "the Bank", tags: ["x"] }, "tag"],
      [{ message: "the Bank" }, "any-shop"],
      [{ message: "Door" }, null],
    ];
    for (const [s, want] of cases) {
      expect(rules.match(subject(s))?.id ?? null).toBe(want);
      // rule by rule (each regex on its own) gives the same answer
      expect(list.find((r) => r.test(subject(s), () => []))?.id ?? null).toBe(want);
    }
  });

  it("one fingerprint per rule, a hash of the rule's id", () => {
    expect(ruleFingerprint("x")).toMatch(/^[0-9a-f]{32}$/);
    expect(ruleFingerprint("x")).not.toBe(ruleFingerprint("y"));
    expect(rule("x", { level: "info" }).fingerprint).toBe(ruleFingerprint("x"));
  });

  it("an unsupported pattern is a 400 naming the field with RE2's reason", () => {
    for (const p of ["(?<=a)b", "(a)\\1", "a(b", "x{2,1}"]) {
      try {
        compileRegex(p, "rules[3].match.message_regex");
        expect.unreachable(p);
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(400);
        expect((err as ApiError).details![0].path).toBe("rules[3].match.message_regex");
        expect((err as ApiError).details![0].message).toMatch(/invalid regular expression: .+/);
      }
    }
  });

  it("a pathological pattern compiles to RE2's automaton and answers correctly on long texts", () => {
    const re = compileRegex("(a+)+$", "f");
    expect(re).toBeInstanceOf(RE2JS);
    expect(re.test("a".repeat(8192))).toBe(true);
    expect(re.test("a".repeat(8191) + "b")).toBe(false);
  });

  it("a stored rule that no longer compiles is skipped, not fatal", () => {
    const rules = compileRules([
      { id: "bad", action: "group", name: null, match: { message_regex: "(?<=x)" }, fingerprint: "f1" },
      { id: "ok", action: "group", name: null, match: { level: "error" }, fingerprint: "f2" },
    ]);
    expect(rules.rules.map((r) => r.id)).toEqual(["ok"]);
  });

  it("input: at least one match field, known fields only", () => {
    expect(RuleInput.safeParse({ match: {}, action: "group" }).success).toBe(false);
    expect(RuleInput.safeParse({ match: { tag: "x" }, action: "group" }).success).toBe(true);
    expect(RuleInput.safeParse({ match: { tag: "x", other: 1 }, action: "group" }).success).toBe(false);
    expect(RuleInput.safeParse({ match: { tag: "x" }, action: "merge" }).success).toBe(false);
  });
});

describe("cache", () => {
  const fakeSql = (rows: () => unknown[], reads: { n: number }) =>
    (() => {
      reads.n++;
      return Promise.resolve(rows());
    }) as never;

  it("reads a project's rules at most once per TTL, and again at once after forget", async () => {
    let now = 0;
    const reads = { n: 0 };
    let rows = [{ id: "a", position: 0, name: null, match: { level: "info" }, action: "ignore", fingerprint: "fa" }];
    const cache = new GroupingRuleCache(5000, 10, () => now);
    const sql = fakeSql(() => rows, reads);
    expect((await cache.forProject(sql, "p")).rules).toHaveLength(1);
    await cache.forProject(sql, "p");
    expect(reads.n).toBe(1);
    now = 4999;
    await cache.forProject(sql, "p");
    expect(reads.n).toBe(1);
    now = 5000;
    await cache.forProject(sql, "p");
    expect(reads.n).toBe(2);
    rows = [];
    cache.forget("p");
    expect((await cache.forProject(sql, "p")).empty).toBe(true);
    expect(reads.n).toBe(3);
  });

  it("a read that was running when the rules changed is not kept", async () => {
    const reads = { n: 0 };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let rows: unknown[] = [{ id: "old", position: 0, name: null, match: { level: "info" }, action: "ignore", fingerprint: "f" }];
    const slow = (() => {
      reads.n++;
      const snapshot = rows;
      return gate.then(() => snapshot);
    }) as never;
    const cache = new GroupingRuleCache(5000, 10, () => 0);
    const pending = cache.forProject(slow, "p");
    rows = [];
    cache.forget("p");
    release();
    await pending;
    const fast = fakeSql(() => rows, reads);
    expect((await cache.forProject(fast, "p")).empty).toBe(true);
  });

  it("is bounded: the oldest project is dropped first", async () => {
    const reads = { n: 0 };
    const cache = new GroupingRuleCache(5000, 2, () => 0);
    const sql = fakeSql(() => [], reads);
    await cache.forProject(sql, "a");
    await cache.forProject(sql, "b");
    await cache.forProject(sql, "c");
    expect(reads.n).toBe(3);
    await cache.forProject(sql, "c");
    await cache.forProject(sql, "b");
    expect(reads.n).toBe(3);
    await cache.forProject(sql, "a");
    expect(reads.n).toBe(4);
  });
});
