import { z } from "zod";
import { invalidPayload, issuePath, type ApiError } from "~/http.server";

/**
 * Text PostgreSQL cannot hold. `text` and `jsonb` refuse NUL, and `jsonb` refuses a lone surrogate
 * escape (JSON.stringify writes one as `\ud800`). Both are valid in request JSON, so every path
 * that stores client text decides what to do with them: ingest replaces them, the economy push skips
 * the player, the Team API answers 400.
 */
const UNSTORABLE_SOURCE = "\\u0000|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_SOURCE, "g");
const UNSTORABLE_ONE = new RegExp(UNSTORABLE_SOURCE);

export const isStorable = (s: string) => !UNSTORABLE_ONE.test(s);

/** NUL and unpaired surrogates become U+FFFD. */
export const storable = (s: string) => s.replace(UNSTORABLE_ALL, "\ufffd");

/** The first `max` UTF-16 units, without keeping half of a surrogate pair at the cut. */
export function cutText(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** How deep objects and arrays may nest in stored JSON (`context`); deeper input is a 400. */
export const MAX_JSON_DEPTH = 20;

/**
 * Nesting depth of a parsed JSON value (a scalar is 0), counted without recursion. Every request body
 * goes through it (clipNesting): only objects and arrays are stacked, with their depths beside them.
 */
export function jsonDepth(value: unknown, stopAt = Infinity): number {
  let max = 0;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop() as Record<string, unknown> | unknown[] | null;
    const d = depths.pop()! + 1;
    if (v === null || typeof v !== "object") continue;
    if (d > max) {
      max = d;
      if (max > stopAt) return max;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (x !== null && typeof x === "object") {
          values.push(x);
          depths.push(d);
        }
      }
    } else {
      for (const k in v) {
        const x = v[k];
        if (x !== null && typeof x === "object") {
          values.push(x);
          depths.push(d);
        }
      }
    }
  }
  return max;
}

/**
 * How deep a whole request body may nest before validation sees it. Validation and storage recurse
 * once per level (zod's refinements, JSON.stringify, the driver's serializer) and run out of stack
 * somewhere past a few thousand levels, whichever field the depth is in. No body the API defines
 * comes near this (an ingest batch's breadcrumb data at its 20-level limit is 25 deep), so a deeper
 * one is always refused; the field rules (MAX_JSON_DEPTH) say where and why.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * `input` with every object or array below MAX_BODY_DEPTH levels replaced by an empty array (so a
 * clipped field is still deeper than any field rule allows, and small), and the path to the first
 * place cut; `input` itself when nothing is that deep. Built without recursion, copying only when it cuts.
 */
export function clipNesting(input: unknown, max = MAX_BODY_DEPTH): { value: unknown; cut: PropertyKey[] | null } {
  if (jsonDepth(input, max) <= max) return { value: input, cut: null };
  type Node = { key?: PropertyKey; parent?: Node };
  let cut: Node | null = null;
  const root: { value?: unknown } = {};
  const stack: { src: unknown; out: Record<PropertyKey, unknown>; key: PropertyKey; depth: number; node: Node }[] = [
    { src: input, out: root, key: "value", depth: 1, node: {} },
  ];
  while (stack.length) {
    const { src, out, key, depth, node } = stack.pop()!;
    if (src === null || typeof src !== "object") {
      out[key] = src;
      continue;
    }
    if (depth > max) {
      out[key] = [];
      cut ??= node;
      continue;
    }
    const copy = (Array.isArray(src) ? [] : {}) as Record<PropertyKey, unknown>;
    out[key] = copy;
    const entries = Array.isArray(src) ? src.map((v, i) => [i, v] as const) : Object.entries(src);
    // pushed last first, so the first place cut is the first in document order
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i];
      stack.push({ src: v, out: copy, key: k, depth: depth + 1, node: { key: k, parent: node } });
    }
  }
  const path: PropertyKey[] = [];
  for (let n: Node | undefined = cut ?? undefined; n?.key !== undefined; n = n.parent) path.unshift(n.key);
  return { value: root.value, cut: path };
}

/** The 400 for a body clipped by clipNesting that its schema accepted anyway (a field that takes any JSON). */
export function tooDeep(cut: PropertyKey[], what = "The request body"): ApiError {
  const where = issuePath(cut);
  // a path through 64 keys of any length is no use to read in full
  const shown = where.length > 200 ? `${where.slice(0, 200)}…` : where;
  const message = `must not nest objects or arrays more than ${MAX_BODY_DEPTH} levels deep`;
  return invalidPayload(`${what} is invalid: ${shown} ${message}.`, [{ path: shown, message }]);
}

/**
 * Throws the 400 naming the first string (value or key) PostgreSQL could not store, walking the
 * parsed body without recursion so any nesting depth is safe.
 */
export function assertStorableText(input: unknown, what = "The request body"): void {
  // a path is built only for the failing string: nodes point at their parent
  type Node = { value: unknown; key?: PropertyKey; parent?: Node };
  const stack: Node[] = [{ value: input }];
  while (stack.length) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === "string") {
      if (!isStorable(v)) fail(node);
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ value: x, key: i, parent: node }));
    else {
      for (const [k, x] of Object.entries(v)) {
        if (!isStorable(k)) fail({ value: k, key: k, parent: node });
        stack.push({ value: x, key: k, parent: node });
      }
    }
  }

  function fail(node: Node): never {
    const path: PropertyKey[] = [];
    for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) path.unshift(n.key);
    const where = issuePath(path);
    const message = "must not contain NUL characters or unpaired surrogates";
    throw invalidPayload(`${what} is invalid: ${where} ${message}.`, [{ path: where, message }]);
  }
}

/** The first and last instants of years 0001 to 9999 (UTC): what PostgreSQL's timestamptz and an ISO string with a 4-digit year both hold. */
const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00.000Z");
const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * An ISO 8601 date-time with a zone, within years 0001 to 9999 once in UTC. Year 0000 (and
 * `0001-01-01T00:00:00+01:00`, which is still year 0) is no year PostgreSQL stores: a 400, not a 500.
 */
export const isoDateTime = (error = "must be an ISO 8601 date-time with a zone") =>
  z.iso.datetime({ offset: true, error }).refine((s) => {
    const ms = Date.parse(s);
    return ms >= FIRST_INSTANT && ms <= LAST_INSTANT;
  }, "must be between the years 0001 and 9999");
