import { describe, expect, it } from "vitest";
import { ApiError } from "../../app/http.server.js";
import { assertStorableText, cutText, isStorable, jsonDepth, storable } from "../../app/text.server.js";

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
