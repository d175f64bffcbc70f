import { describe, expect, it } from "vitest";
import { ApiError } from "../../app/http.server.js";
import { queryOf, searchOf } from "../../app/errors/params.server.js";
import { assertStorableText, clipNesting, cutText, isoDateTime, isStorable, jsonDepth, MAX_BODY_DEPTH, storable, tooDeep } from "../../app/text.server.js";

describe("text PostgreSQL can store", () => {
  it("NUL and unpaired surrogates are not storable; pairs and other control characters are", () => {
    for (const s of ["\u0000", "a\u0000", "\ud800", "x\udbff", "\udc00", "\udfffx", "\udc00\ud800"]) expect(isStorable(s), JSON.stringify(s)).toBe(false);
    for (const s of ["", "plain", "😀", "\u0001\u001f", "\ufffd", "\u202e"]) expect(isStorable(s), JSON.stringify(s)).toBe(true);
    expect(storable("a\u0000b\ud800c😀")).toBe("a\ufffdb\ufffdc😀");
  });

  it("cutText never keeps half of a surrogate pair", () => {
    expect(cutText("abc", 5)).toBe("abc");
    expect(cutText("abcdef", 3)).toBe("abc");
    expect(cutText("ab😀", 3)).toBe("ab");
    expect(cutText("ab😀c", 4)).toBe("ab😀");
    expect(isStorable(cutText("a".repeat(199) + "😀", 200))).toBe(true);
  });

  it("jsonDepth counts levels of objects and arrays without recursing", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth({ a: [1, { b: [] }] })).toBe(4);
    const deep = JSON.parse("[".repeat(200_000) + "]".repeat(200_000));
    expect(jsonDepth(deep)).toBe(200_000);
    expect(jsonDepth(deep, 20)).toBe(21);
  });

  it("clipNesting leaves a body within the limit as it is, and cuts a deeper one to an empty array where it passes", () => {
    const ok = { a: [1, { b: "x" }] };
    expect(clipNesting(ok)).toEqual({ value: ok, cut: null });
    expect(clipNesting(ok, 3).value).toBe(ok);
    expect(clipNesting({ a: [{ b: [] }], c: 1 }, 2)).toEqual({ value: { a: [[]], c: 1 }, cut: ["a", 0] });
    // the first place in document order is named
    expect(clipNesting([[1], [[[2]]], [[[3]]]], 3).cut).toEqual([1, 0, 0]);
    const deep = JSON.parse('{"k":[' + "[".repeat(200_000) + "]".repeat(200_000) + "]}");
    const { value, cut } = clipNesting(deep);
    expect(jsonDepth(value)).toBe(MAX_BODY_DEPTH + 1);
    expect(cut).toEqual(["k", ...Array(MAX_BODY_DEPTH - 1).fill(0)]);
    const err = tooDeep(cut!);
    expect([err.status, err.code]).toEqual([400, "invalid_payload"]);
    expect(err.details![0].path.startsWith("k[0][0]")).toBe(true);
    expect(err.details![0].path.length).toBeLessThanOrEqual(201);
  });

  it("assertStorableText names the first unstorable string or key with a 400", () => {
    expect(() => assertStorableText({ a: ["fine", { b: "😀" }] })).not.toThrow();
    for (const [input, path] of [
      [{ name: "x\u0000" }, "name"],
      [{ list: ["ok", "\ud800"] }, "list[1]"],
      [{ nested: { "key\u0000": 1 } }, "nested.key\u0000"],
    ] as const) {
      let err: unknown;
      try {
        assertStorableText(input);
      } catch (e) {
        err = e;
      }
      expect(ApiError.is(err)).toBe(true);
      expect((err as ApiError).status).toBe(400);
      expect((err as ApiError).code).toBe("invalid_payload");
      expect((err as ApiError).details).toEqual([{ path, message: "must not contain NUL characters or unpaired surrogates" }]);
    }
    // no recursion: a string 100,000 levels down is found
    const deep = JSON.parse("[".repeat(100_000) + '"\\u0000"' + "]".repeat(100_000));
    expect(() => assertStorableText(deep)).toThrow();
  });
});

describe("dates PostgreSQL can store", () => {
  it("years 0001 to 9999 in UTC pass; year 0000, year 0 reached through an offset, and 5-digit years do not", () => {
    const schema = isoDateTime();
    for (const ok of ["0001-01-01T00:00:00Z", "2026-11-22T10:00:00.000Z", "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00-01:00"]) {
      expect(schema.safeParse(ok).success, ok).toBe(true);
    }
    for (const bad of ["0000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00", "99999-01-01T00:00:00Z", "+275760-09-13T00:00:00.000Z", "2026-02-30T00:00:00Z"]) {
      expect(schema.safeParse(bad).success, bad).toBe(false);
    }
  });
});

describe("query strings", () => {
  it("reads the query off a serialized address as URL parsing would", () => {
    for (const url of [
      "http://x.test/p?a=1&b=2",
      "http://x.test/p",
      "http://x.test/p?",
      "http://x.test/p?a=1#frag?b=2",
      "http://x.test/p#frag?b=2",
      "http://user:p%3Fw@x.test:8080/a%3Fb/?sentry_key=k%20y&x",
      "https://x.test/api/1/envelope/?sentry_key=abc&sentry_version=7",
    ]) {
      const href = new URL(url).href;
      expect(searchOf(href)).toBe(new URL(href).search);
    }
    expect(queryOf(new Request("http://x.test/api/1/envelope/?sentry_key=k%20y")).get("sentry_key")).toBe("k y");
  });

  it("a NUL is refused where the parameter is read, naming it; other parameters and invalid UTF-8 read as usual", () => {
    const q = queryOf(new Request("http://x.test/p?search=a%00b&limit=5&v=%ED%A0%80"));
    expect(q.get("limit")).toBe("5");
    expect(q.get("v")).toBe("\ufffd\ufffd\ufffd");
    expect(q.get("missing")).toBeNull();
    for (const read of [() => q.get("search"), () => q.getAll("search")]) {
      try {
        read();
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect(err).toMatchObject({ status: 400, code: "invalid_query", details: [{ path: "search", message: "must not contain NUL characters" }] });
      }
    }
  });
});

