import { hash as digest } from "node:crypto";

/**
 * The template miner: learns, per code location, which token positions of a message template are
 * variables, as the Drain family of log parsers does (He et al. 2017), restricted to one location.
 *
 * Invariant: the result is a function of the *set* of (location, template) pairs it is given. It
 * never depends on their order, on repeats, or on which process saw them, so every instance (and a
 * restarted one) that reads the same groups from the database learns the same templates, with the
 * same fingerprints.
 *
 * Candidates: texts at the same location (the part of the grouping key that is not the template:
 * the frames' identities, the leading script location, or none) with the same number of tokens
 * (words split on spaces). Within one such bucket, texts that differ in at most MAX_VARIABLE_SHARE
 * of their tokens are linked; each connected set of linked texts is a candidate cluster.
 *
 * The bound that keeps genuinely different constant text apart:
 *  - a position becomes a variable only when it holds at least MIN_VALUES distinct values within
 *    the cluster. Two or three different constants at one location (`Trade failed: partner left` /
 *    `Trade failed: item locked`, `index nil with 'Health'` / `'Mana'` in one function) are rare
 *    different errors; many different values in one place with the rest of the text equal are data.
 *  - at most MAX_VARIABLE_SHARE of a template's tokens may be variables (so texts of fewer than
 *    1 / MAX_VARIABLE_SHARE tokens never learn one): a cluster whose texts vary in more places is
 *    not one message with data in it, and nothing is learned from it.
 *  - positions that vary with fewer than MIN_VALUES values split the cluster: each of their
 *    combinations is its own template (and must reach MIN_VALUES at its variables on its own).
 *  - tokens the rules already replaced (`<n>`, `<id>`, `'<str>'`…) are ordinary tokens here.
 *
 * Memory: at most MAX_BUCKET_TEXTS texts per bucket are considered (the first ones in sorted order,
 * so the choice is a function of the set too), and at most MAX_SAMPLES values are kept per variable.
 */
export const MIN_VALUES = 4;
export const MAX_VARIABLE_SHARE = 1 / 3;
export const MAX_BUCKET_TEXTS = 500;
export const MAX_SAMPLES = 10;
export const VARIABLE = "<*>";

export type MinerInput = { location: string; template: string };

/** The bound (see above); other values only for measuring what the bound does. */
export type MinerBound = { minValues: number; maxVariableShare: number };
export const BOUND: MinerBound = { minValues: MIN_VALUES, maxVariableShare: MAX_VARIABLE_SHARE };

export type LearnedTemplate = {
  location: string;
  /** the template with `<*>` at the learned positions, tokens joined by single spaces */
  template: string;
  tokenCount: number;
  /** the learned positions (0-based token indexes), ascending */
  positions: number[];
  /** per learned position, the first MAX_SAMPLES distinct values in sorted order */
  samples: string[][];
  /** the distinct texts of the input it covers */
  texts: number;
  fingerprint: string;
};

export const tokens = (template: string) => (template === "" ? [] : template.split(" "));

/** The fingerprint a learned template gives the events it covers: the same in every process. */
export const learnedFingerprint = (location: string, template: string) =>
  digest("sha256", ["learned", location, template].join("\u001f"), "hex").slice(0, 32);

/** Whether `text`'s tokens match a learned template's (same length, equal wherever the template has no `<*>`). */
export function matches(templateTokens: readonly string[], textTokens: readonly string[]): boolean {
  if (templateTokens.length !== textTokens.length) return false;
  for (let i = 0; i < templateTokens.length; i++) if (templateTokens[i] !== VARIABLE && templateTokens[i] !== textTokens[i]) return false;
  return true;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function distance(a: string[], b: string[], max: number): number {
  let d = 0;
  for (let i = 0; i < a.length && d <= max; i++) if (a[i] !== b[i]) d++;
  return d;
}

/** The connected sets of texts within `max` differing tokens of each other (union-find; set-determined). */
function clusters(rows: string[][], max: number): string[][][] {
  const parent = rows.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (let i = 0; i < rows.length; i++) {
    for (let j = i + 1; j < rows.length; j++) {
      if (distance(rows[i], rows[j], max) <= max) {
        const a = find(i);
        const b = find(j);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  }
  const out = new Map<number, string[][]>();
  for (let i = 0; i < rows.length; i++) {
    const r = find(i);
    out.set(r, [...(out.get(r) ?? []), rows[i]]);
  }
  return [...out.values()];
}

function distinctAt(rows: string[][], p: number): Set<string> {
  const s = new Set<string>();
  for (const r of rows) s.add(r[p]);
  return s;
}

/** The templates one cluster yields (see the bound above); recursion only on strictly smaller sets. */
function learnCluster(rows: string[][], maxVars: number, minValues: number, out: string[][][]): void {
  if (rows.length < minValues) return;
  const n = rows[0].length;
  const vars: number[] = [];
  const split: number[] = [];
  for (let p = 0; p < n; p++) {
    const k = distinctAt(rows, p).size;
    if (k >= minValues) vars.push(p);
    else if (k > 1) split.push(p);
  }
  if (vars.length === 0 || vars.length > maxVars) return;
  if (split.length === 0) {
    out.push(rows);
    return;
  }
  // constant text that differs with few values: each combination apart, learned on its own
  const parts = new Map<string, string[][]>();
  for (const r of rows) {
    const key = split.map((p) => r[p]).join("\u0000");
    parts.set(key, [...(parts.get(key) ?? []), r]);
  }
  for (const part of parts.values()) {
    for (const c of clusters(part, maxVars)) learnCluster(c, maxVars, minValues, out);
  }
}

/** Learns the templates of one bucket: texts of one location with the same token count. */
function learnBucket(location: string, texts: string[], bound: MinerBound): LearnedTemplate[] {
  const rows = texts.map(tokens);
  const n = rows[0]?.length ?? 0;
  const maxVars = Math.floor(n * bound.maxVariableShare + 1e-9);
  if (maxVars === 0 || rows.length < bound.minValues) return [];
  const found: string[][][] = [];
  for (const c of clusters(rows, maxVars)) learnCluster(c, maxVars, bound.minValues, found);
  return found.map((members) => {
    const positions: number[] = [];
    const samples: string[][] = [];
    const t = [...members[0]];
    for (let p = 0; p < n; p++) {
      const values = distinctAt(members, p);
      if (values.size >= bound.minValues) {
        positions.push(p);
        samples.push([...values].sort(byText).slice(0, MAX_SAMPLES));
        t[p] = VARIABLE;
      }
    }
    const template = t.join(" ");
    return { location, template, tokenCount: n, positions, samples, texts: members.length, fingerprint: learnedFingerprint(location, template) };
  });
}

/**
 * The templates learned from a set of (location, template) pairs, sorted by location and template.
 * Repeats and order of the input make no difference.
 */
export function mine(input: Iterable<MinerInput>, bound: MinerBound = BOUND): LearnedTemplate[] {
  const buckets = new Map<string, { location: string; texts: Set<string> }>();
  for (const { location, template } of input) {
    const key = `${location}\u0000${tokens(template).length}`;
    let b = buckets.get(key);
    if (!b) buckets.set(key, (b = { location, texts: new Set() }));
    b.texts.add(template);
  }
  const out: LearnedTemplate[] = [];
  for (const b of buckets.values()) {
    if (b.texts.size < bound.minValues) continue;
    out.push(...learnBucket(b.location, [...b.texts].sort(byText).slice(0, MAX_BUCKET_TEXTS), bound));
  }
  return out.sort((a, b) => byText(a.location, b.location) || byText(a.template, b.template));
}

/**
 * Among learned templates, the one an event's (location, template) falls under, or null: the most
 * specific (fewest variables), then the first in sorted order, so every process picks the same one.
 */
export function pickTemplate<T extends { template: string; tokens: readonly string[]; positions: number }>(
  candidates: readonly T[] | undefined,
  textTokens: readonly string[],
): T | null {
  let best: T | null = null;
  for (const c of candidates ?? []) {
    if (!matches(c.tokens, textTokens)) continue;
    if (!best || c.positions < best.positions || (c.positions === best.positions && c.template < best.template)) best = c;
  }
  return best;
}
