import fc from "fast-check";

/**
 * Hostile values for fuzzing request bodies and queries: text PostgreSQL cannot store, numbers
 * past every limit, nesting deeper than any serializer's stack, wrong types and extreme dates.
 */

/** JSON text spliced into a body as is (values no serializer could produce: 1e400, 50,000 levels). */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON.stringify with Raw pieces; lone surrogates come out as `\udXXX` escapes, NUL as `\u0000`. */
export function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  // a fuzzed path may set an own `map` on an array (["map", "currencies", …] over a replaced value)
  if (Array.isArray(v)) return `[${Array.prototype.map.call(v, toJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

const deepObject = (n: number) => new Raw('{"a":'.repeat(n) + "1" + "}".repeat(n));
const deepArray = (n: number) => new Raw("[".repeat(n) + "]".repeat(n));

export const HOSTILE_VALUES: [string, unknown][] = [
  ["NUL", "\u0000"],
  ["NUL inside", "name\u0000tail"],
  ["lone high surrogate", "x\ud800"],
  ["lone low surrogate", "\udc00x"],
  ["empty string", ""],
  ["70k string", "x".repeat(70_000)],
  ["bidi override", "\u202egnp.exe"],
  ["emoji", "😀"],
  ["1e308", 1e308],
  ["1e400 literal", new Raw("1e400")],
  ["2^53+2", 2 ** 53 + 2],
  ["2^63 literal", new Raw("9223372036854775808")],
  ["2^64 as string", "18446744073709551616"],
  ["400 digits", "9".repeat(400)],
  ["-1", -1],
  ["-0", new Raw("-0")],
  ["0.5", 0.5],
  ["5e-324", 5e-324],
  ["true", true],
  ["null", null],
  ["[]", []],
  ["{}", {}],
  ["mixed array", [1, "a", null, {}, []]],
  ["object holding NUL", { a: "\u0000", "b\u0000": 1 }],
  ["object 10,000 deep", deepObject(10_000)],
  ["array 10,000 deep", deepArray(10_000)],
  ["__proto__", new Raw('{"__proto__":{"polluted":true}}')],
  ["year 0000", "0000-01-01T00:00:00Z"],
  ["1969", "1969-12-31T23:59:59Z"],
  ["year 9999", "9999-12-31T23:59:59.999Z"],
  ["year 99999", "99999-01-01T00:00:00Z"],
  ["year -271821", "-271821-04-20T00:00:00Z"],
  ["year +275760", "+275760-09-13T00:00:00.000Z"],
  ["February 30", "2026-02-30T00:00:00Z"],
  ["offset +99:99", "2026-11-22T10:00:00+99:99"],
  ["nanoseconds", "2026-11-22T10:00:00.123456789Z"],
  ["nil UUID", "00000000-0000-0000-0000-000000000000"],
];

/** Query values, already percent-encoded as they travel (a lone surrogate cannot be encoded otherwise). */
export const HOSTILE_QUERY: string[] = [
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%FF%FE",
  "%",
  "%%41",
  "%E0%A4%A",
  "9".repeat(400),
  "-1",
  "-0",
  "1e309",
  "1.5",
  "NaN",
  "Infinity",
  "0x10",
  "%20",
  "true",
  "%5B%5D",
  "0000-01-01T00:00:00Z",
  "99999-01-01T00:00:00Z",
  "%F0%9F%98%80",
  "%E2%80%AE",
  "x".repeat(5000),
  "00000000-0000-0000-0000-000000000000",
];

/** Path segments: each replaces one id in a path. */
export const HOSTILE_SEGMENTS: string[] = [
  "%00",
  "%ED%A0%80",
  "%FF",
  "%",
  "..%2F..%2Fapi",
  "9".repeat(400),
  "-1",
  "0",
  "1e309",
  "00000000-0000-0000-0000-000000000000",
  "%7B00000000-0000-0000-0000-000000000000%7D",
  "x".repeat(2000),
  "%0A",
];

/** Random JSON-ish values for the property-based part: the table above plus generated ones. */
export const hostileArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_VALUES.map(([, v]) => v)),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("\u0000", "\ud800", "\udc00", "a", "%", "_", "\\"), maxLength: 8 }),
  fc.double(),
  fc.bigInt().map((n) => new Raw(n.toString())),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  // text that is not JSON at all, spliced in as is
  fc.string({ unit: "binary", maxLength: 20 }).map((s) => new Raw(s)),
);

/** Every path into a template: object keys and the first element of arrays, parents before children. */
export function pathsOf(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const children: [string | number, unknown][] = Array.isArray(v)
    ? v.slice(0, 1).map((x) => [0, x])
    : v !== null && typeof v === "object" && !(v instanceof Raw)
      ? Object.entries(v)
      : [];
  return children.flatMap(([k, x]) => [[...prefix, k], ...pathsOf(x, [...prefix, k])]);
}

/** A deep copy of `template` with `value` at `path` (the empty path replaces the whole body). */
export function withValue(template: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = Array.isArray(template) ? [...template] : { ...(template as object) };
  const [head, ...rest] = path;
  copy[head] = withValue(copy[head], rest, value);
  return copy;
}
