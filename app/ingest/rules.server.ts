import { hash as digest } from "node:crypto";
import { RE2JS, RE2Set } from "re2js";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { addRuleHits, listRuleDefinitions, titleRuleIssue, type RuleMatch } from "../../db/grouping-rules.js";
import { invalidPayload } from "~/http.server";
import { culpritFor } from "./fingerprint.server";
import { frameEntries } from "./frames.server";
import { log } from "../../log/logger.js";

/**
 * Grouping rules: a project's ordered list of matches and actions, applied at ingest before the
 * client's fingerprint and the default grouping (docs/grouping.md, "Grouping rules").
 *
 * A rule matches an event when every match field it gives holds (at least one is given):
 * - `message`: the stored message (already cut to 8 KiB) equals the text exactly;
 * - `message_regex`: the stored message contains a match of the regex (RE2 syntax, unanchored: use
 *   `^`/`$` to anchor, `(?i)` for any case);
 * - `path`: a script path of the event, any frame of its stack (as issue search keeps them: player
 *   names as `<player>`; without frames, the location its message starts with), is the path or
 *   starts with it followed by `.`, so
 *   `ServerScriptService.Combat` covers `ServerScriptService.Combat.Hitbox` but not
 *   `ServerScriptService.CombatUtil`;
 * - `level`: the event's level; `tag`: one of the event's tags, exactly.
 * The first matching rule by position decides; later ones are not consulted.
 *
 * No rule can make ingest slow: regexes run on RE2JS, a port of RE2 whose matching time is linear in
 * the text for every pattern (no backtracking: `(a+)+$` costs a scan), patterns are at most
 * REGEX_MAX_CHARS long, the text is the stored message, at most 8 KiB, and a project's regexes run as
 * one RE2 set, so its 100 rules cost about one scan of the message rather than 100. Patterns RE2 does not
 * support (backreferences, lookaround) are refused when the rule is saved, with RE2's reason.
 */

export const REGEX_MAX_CHARS = 1000;
export const MAX_RULES = 100;
export const RULE_LEVELS = ["error", "warn", "info"] as const;
export const RULE_ACTIONS = ["group", "ignore"] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** One issue per `group` rule: its fingerprint is the hash of ["rule", rule id] (the same hash as the default grouping's). */
export const ruleFingerprint = (ruleId: string) => digest("sha256", ["rule", ruleId].join("\u001f"), "hex").slice(0, 32);

const MatchInput = z
  .object({
    message: z.string().min(1, "must not be empty").max(8192, "must be at most 8,192 characters").optional(),
    message_regex: z.string().min(1, "must not be empty").max(REGEX_MAX_CHARS, `must be at most ${REGEX_MAX_CHARS} characters`).optional(),
    path: z.string().trim().min(1, "must not be empty").max(500, "must be at most 500 characters").optional(),
    level: z.enum(RULE_LEVELS, { error: "must be error, warn or info" }).optional(),
    tag: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
  }, { error: "must be an object" })
  .strict()
  .refine((m) => Object.values(m).some((v) => v !== undefined), { message: "must give at least one of message, message_regex, path, level, tag" });

const Name = z.string().trim().max(200, "must be at most 200 characters").nullable().transform((s) => (s ? s : null));
const Action = z.enum(RULE_ACTIONS, { error: "must be group or ignore" });
const Position = z.number({ error: "must be an integer" }).int("must be an integer").min(0, "must be at least 0");

/** A rule as POST and preview take it. */
export const RuleInput = z.object({ name: Name.optional(), match: MatchInput, action: Action, position: Position.optional() }).strict();
/** A PATCH: any of the fields; `match` replaces the whole match. */
export const RulePatch = z.object({ name: Name, match: MatchInput, action: Action, position: Position }).partial().strict();

/** The regex compiled, or a 400 naming `field` with RE2's reason. */
export function compileRegex(pattern: string, field: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    const engine = (err as Error).message || "not a valid regular expression";
    // RE2 reads (?<= as a broken named group and \1 as a bad escape: say what is not supported first
    const unsupported = /\(\?<?[=!]/.test(pattern) ? "lookaround is not supported (RE2); " : /\\[1-9]/.test(pattern) ? "backreferences are not supported (RE2); " : "";
    const reason = unsupported + engine;
    throw invalidPayload(`${field} is not a valid RE2 regular expression: ${reason}.`, [{ path: field, message: `invalid regular expression: ${reason}` }]);
  }
}

/** What a rule is matched against: the event as stored. `paths` is only read by rules with a path. */
export type RuleSubject = {
  message: string;
  level: string;
  tags: readonly string[] | null;
  stackTrace: string | null;
  playerName: string | null;
};

export type CompiledRule = {
  id: string;
  action: RuleAction;
  fingerprint: string;
  name: string | null;
  /** the regex's pattern, or null */
  pattern: string | null;
  /** every check but the regex (cheapest first) */
  rest: (s: RuleSubject, paths: () => string[]) => boolean;
  /** the whole rule, the regex run on its own */
  test: (s: RuleSubject, paths: () => string[]) => boolean;
};

/**
 * The script paths a path rule looks at: every frame's path (the top one is the culprit), or for an
 * event without frames the location its message starts with (its culprit).
 */
export function subjectPaths(s: RuleSubject): string[] {
  const out = new Set<string>();
  for (const entry of frameEntries(s.stackTrace, s.playerName)) {
    const sp = entry.indexOf(" ");
    out.add(sp < 0 ? entry : entry.slice(0, sp));
  }
  if (out.size === 0) {
    const culprit = culpritFor(s.message, s.stackTrace, s.playerName);
    if (culprit) out.add(culprit);
  }
  return [...out];
}

const underPath = (candidate: string, path: string) => candidate === path || (candidate.startsWith(path) && candidate[path.length] === ".");

/** One rule as a predicate (its regex compiled once). */
export function compileRule(rule: { id: string; action: RuleAction; name: string | null; match: RuleMatch; fingerprint?: string }, field = "match.message_regex"): CompiledRule {
  const m = rule.match;
  const re = m.message_regex !== undefined ? compileRegex(m.message_regex, field) : null;
  const checks: ((s: RuleSubject, paths: () => string[]) => boolean)[] = [];
  // cheapest first: a rule that fails on its level never runs its regex
  if (m.level !== undefined) checks.push((s) => s.level === m.level);
  if (m.tag !== undefined) checks.push((s) => s.tags !== null && s.tags.includes(m.tag!));
  if (m.message !== undefined) checks.push((s) => s.message === m.message);
  if (m.path !== undefined) checks.push((_, paths) => paths().some((p) => underPath(p, m.path!)));
  const rest = (s: RuleSubject, paths: () => string[]) => checks.every((c) => c(s, paths));
  return {
    id: rule.id,
    action: rule.action,
    name: rule.name,
    fingerprint: rule.fingerprint ?? ruleFingerprint(rule.id),
    pattern: m.message_regex ?? null,
    rest,
    test: (s, paths) => rest(s, paths) && (re === null || re.test(s.message)),
  };
}

/** Memory the DFA of one project's regex set may use (RE2 falls back to its NFA past it, still linear). */
const SET_DFA_BYTES = 1 << 20;

/**
 * All of a project's regexes as one RE2 set: one pass over the text says which of them match, so 100
 * regex rules cost about one scan of the message, not 100. Null when the set cannot be built (each
 * rule's own regex is used then).
 */
function regexSet(rules: readonly CompiledRule[]): { set: RE2Set; index: Map<CompiledRule, number> } | null {
  const withRegex = rules.filter((r) => r.pattern !== null);
  if (withRegex.length < 2) return null;
  try {
    const set = new RE2Set(RE2Set.UNANCHORED, 0, SET_DFA_BYTES);
    const index = new Map(withRegex.map((r) => [r, set.add(r.pattern!)] as const));
    set.compile();
    return { set, index };
  } catch (err) {
    log.error(`[grouping-rules] the regex set could not be built; rules run one by one: ${(err as Error).message}`);
    return null;
  }
}

/** A project's rules in order; `match` gives the first that matches, or null. */
export class ProjectRules {
  private set: ReturnType<typeof regexSet> | undefined;
  constructor(readonly rules: readonly CompiledRule[]) {}
  get empty() {
    return this.rules.length === 0;
  }
  match(s: RuleSubject): CompiledRule | null {
    if (this.rules.length === 0) return null;
    let paths: string[] | undefined;
    const lazyPaths = () => (paths ??= subjectPaths(s));
    const set = (this.set ??= regexSet(this.rules));
    if (!set) {
      for (const r of this.rules) if (r.test(s, lazyPaths)) return r;
      return null;
    }
    // the set runs once, when the first rule whose other checks hold needs its regex
    let hits: Set<number> | undefined;
    for (const r of this.rules) {
      if (!r.rest(s, lazyPaths)) continue;
      if (r.pattern === null) return r;
      if ((hits ??= new Set(set.set.match(s.message))).has(set.index.get(r)!)) return r;
    }
    return null;
  }
}

export const NO_RULES = new ProjectRules([]);

/**
 * Compiles stored rules. A stored rule was checked when it was saved; one that no longer compiles
 * (an engine upgrade) is left out rather than failing every ingest of its project.
 */
export function compileRules(rows: { id: string; action: RuleAction; name: string | null; match: RuleMatch; fingerprint: string }[]): ProjectRules {
  const out: CompiledRule[] = [];
  for (const r of rows) {
    try {
      out.push(compileRule(r));
    } catch (err) {
      log.error(`[grouping-rules] rule ${r.id} does not compile and is skipped: ${(err as Error).message}`);
    }
  }
  return new ProjectRules(out);
}

/**
 * Each project's compiled rules, per instance: read at most once per TTL (5 s), and read again at
 * once after this instance changed them (forget). Another instance's change is seen within the TTL.
 * Bounded: the least recently loaded project is dropped first.
 */
export class GroupingRuleCache {
  private entries = new Map<string, { at: number; rules: ProjectRules }>();
  private loading = new Map<string, { gen: number; p: Promise<ProjectRules> }>();
  private generation = new Map<string, number>();

  constructor(
    private readonly ttlMs = 5000,
    private readonly maxProjects = 2_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The project's rules, read with `sql` (the caller's, bounded by its own deadline) when not fresh. */
  async forProject(sql: Sql, projectId: string): Promise<ProjectRules> {
    const hit = this.entries.get(projectId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.rules;
    const gen = this.generation.get(projectId) ?? 0;
    const pending = this.loading.get(projectId);
    if (pending && pending.gen === gen) return pending.p;
    const p = listRuleDefinitions(sql, projectId)
      .then((rows) => {
        const rules = compileRules(rows);
        // a change made while this read ran may not be in it: keep it only when nothing changed since
        if ((this.generation.get(projectId) ?? 0) === gen) {
          if (this.entries.size >= this.maxProjects && !this.entries.has(projectId)) this.entries.delete(this.entries.keys().next().value!);
          this.entries.delete(projectId);
          this.entries.set(projectId, { at: this.now(), rules });
        }
        return rules;
      })
      .finally(() => {
        if (this.loading.get(projectId)?.p === p) this.loading.delete(projectId);
      });
    this.loading.set(projectId, { gen, p });
    return p;
  }

  /** After this instance changed a project's rules: the next ingest reads them again. */
  forget(projectId: string) {
    this.entries.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
  }
}

// (project, fingerprint, name) of rule issues this instance has titled: each is titled once per
// instance (a rename titles it again through the API). Bounded; forgetting only costs one update.
const TITLED_MAX = 10_000;
const titled = new Set<string>();

/**
 * After an ingest write committed: adds the events `ignore` rules dropped to their daily counts, and
 * titles the issues of named `group` rules the write may have made. Best effort: the events are
 * written and answered whatever happens here. Answers how many events were ignored.
 */
export async function recordRuleHits(
  sql: Sql,
  projectId: string,
  rules: ProjectRules,
  made: readonly ({ ignoredBy: string } | { fingerprint: string })[],
  rows: readonly { fingerprint: string }[],
  receivedAt: number,
): Promise<number> {
  const perRule = new Map<string, number>();
  for (const m of made) if ("ignoredBy" in m) perRule.set(m.ignoredBy, (perRule.get(m.ignoredBy) ?? 0) + 1);
  const named = new Map(rules.rules.filter((r) => r.action === "group" && r.name !== null).map((r) => [r.fingerprint, r.name!]));
  const toTitle = [...new Set(rows.map((r) => r.fingerprint))].filter((fp) => named.has(fp) && !titled.has(`${projectId}:${fp}:${named.get(fp)}`));
  try {
    await Promise.all([
      addRuleHits(sql, projectId, [...perRule].map(([rule_id, n]) => ({ rule_id, n })), new Date(receivedAt)),
      ...toTitle.map(async (fp) => {
        await titleRuleIssue(sql, projectId, fp, named.get(fp)!);
        if (titled.size >= TITLED_MAX) titled.delete(titled.values().next().value!);
        titled.add(`${projectId}:${fp}:${named.get(fp)}`);
      }),
    ]);
  } catch (err) {
    log.error({ err }, "[grouping-rules] counting ignored events or titling a rule's issue failed");
  }
  return [...perRule.values()].reduce((a, b) => a + b, 0);
}
