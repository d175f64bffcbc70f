import { describe, expect, it } from "vitest";
import { ApiError } from "../../app/http.server.js";
import { eventDetails, parseNativeBody } from "../../app/ingest/native.server.js";

// SPEC.md section 2, validation: everything is checked before any write; one invalid event rejects
// the request with a 400 whose details name the index and field.

const UUID = "0f8fad5b-d9cb-469f-a165-70867728950e";

/** The one event of a single-event body, parsed. */
const one = (event: Record<string, unknown>) => {
  const out = parseNativeBody({ message: "boom", ...event });
  expect(out).toHaveLength(1);
  return out[0];
};

/** The ApiError a body is rejected with (fails the test if it is accepted). */
function rejection(body: unknown): ApiError {
  try {
    parseNativeBody(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error(`expected ${JSON.stringify(body).slice(0, 200)} to be rejected`);
}

/** Asserts a 400 invalid_payload whose details include `path`; returns the details. */
function rejectsAt(body: unknown, path: string) {
  const err = rejection(body);
  expect(err.status).toBe(400);
  expect(err.code).toBe("invalid_payload");
  expect(err.message.length).toBeGreaterThan(0);
  expect(err.details?.map((d) => d.path)).toContain(path);
  for (const d of err.details ?? []) expect(typeof d.message).toBe("string");
  return err.details!;
}

const rejectsField = (field: string, value: unknown) => rejectsAt({ message: "boom", [field]: value }, field);

describe("body shape", () => {
  it("accepts a single event object", () => {
    const events = parseNativeBody({ message: "boom" });
    expect(events).toEqual([expect.objectContaining({ message: "boom" })]);
  });

  it("accepts a batch and keeps the order", () => {
    const events = parseNativeBody({ errors: [{ message: "a" }, { message: "b" }, { message: "c" }] });
    expect(events.map((e) => e.message)).toEqual(["a", "b", "c"]);
  });

  it("accepts 100 events and rejects 101", () => {
    const batch = (n: number) => ({ errors: Array.from({ length: n }, (_, i) => ({ message: `e${i}` })) });
    expect(parseNativeBody(batch(100))).toHaveLength(100);
    const details = rejectsAt(batch(101), "errors");
    expect(details[0].message).toMatch(/100/);
  });

  it("rejects an empty batch", () => {
    rejectsAt({ errors: [] }, "errors");
  });

  it("rejects `errors` that is not an array", () => {
    rejectsAt({ errors: { message: "x" } }, "errors");
    rejectsAt({ errors: "boom" }, "errors");
  });

  it("rejects a top-level array, null, a string and a number", () => {
    for (const body of [[{ message: "x" }], null, "boom", 42, true]) {
      const err = rejection(body);
      expect(err.status).toBe(400);
      expect(err.code).toBe("invalid_payload");
    }
  });

  it("rejects batch items that are not objects, naming the index", () => {
    rejectsAt({ errors: [{ message: "ok" }, "boom"] }, "errors[1]");
    rejectsAt({ errors: [null] }, "errors[0]");
    rejectsAt({ errors: [{ message: "ok" }, [{ message: "x" }]] }, "errors[1]");
  });

  it("one bad event rejects the whole batch and details name its index and field", () => {
    const body = { errors: [{ message: "a" }, { message: "b" }, { message: "c" }, { message: "d", level: "fatal" }, { message: "e" }] };
    const details = rejectsAt(body, "errors[3].level");
    expect(details).toHaveLength(1);
    const err = rejection(body);
    expect(err.message).toContain("errors[3].level");
  });

  it("reports every invalid field of every event, not only the first", () => {
    const details = rejectsAt({ errors: [{ message: "" }, { message: "ok", count: "3" }, { level: 1 }] }, "errors[0].message");
    const paths = details.map((d) => d.path);
    expect(paths).toContain("errors[1].count");
    expect(paths).toContain("errors[2].message");
    expect(paths).toContain("errors[2].level");
  });

  it("single-event paths name the field without an index", () => {
    rejectsAt({ message: "boom", level: "fatal" }, "level");
  });

  it("nested paths use dots and brackets", () => {
    rejectsAt({ errors: [{ message: "ok", tags: ["a", 5] }] }, "errors[0].tags[1]");
  });

  it("ignores unknown fields", () => {
    const e = one({ foo: 1, nested: { a: [1, 2] }, Message: "other" });
    expect(e).not.toHaveProperty("foo");
    expect(e).not.toHaveProperty("nested");
    expect(e.message).toBe("boom");
  });
});

describe("message", () => {
  it("is required", () => {
    rejectsAt({ level: "error" }, "message");
    rejectsAt({ errors: [{ message: "ok" }, { level: "warn" }] }, "errors[1].message");
  });

  it("must be a non-empty string after trimming", () => {
    rejectsField("message", "");
    rejectsField("message", "   \n\t");
    rejectsField("message", 42);
    rejectsField("message", null);
    rejectsField("message", { text: "boom" });
  });

  it("is not cut by validation (truncation to 8 KiB happens when stored)", () => {
    const long = "x".repeat(20_000);
    expect(one({ message: long }).message).toBe(long);
  });
});

describe("level", () => {
  it("is optional: error", () => {
    expect(one({}).level).toBe("error");
    expect(one({ level: null }).level).toBe("error");
  });

  it("accepts error, warn and info case-insensitively", () => {
    expect(one({ level: "error" }).level).toBe("error");
    expect(one({ level: "ERROR" }).level).toBe("error");
    expect(one({ level: "Warn" }).level).toBe("warn");
    expect(one({ level: "iNfO" }).level).toBe("info");
    expect(one({ level: " info " }).level).toBe("info");
  });

  it("accepts warning as warn", () => {
    expect(one({ level: "warning" }).level).toBe("warn");
    expect(one({ level: "WARNING" }).level).toBe("warn");
  });

  it("rejects anything else", () => {
    for (const v of ["fatal", "debug", "", "err", 3, true]) rejectsField("level", v);
  });
});

describe("trace_id", () => {
  it("is normalized to lowercase without braces", () => {
    expect(one({ trace_id: UUID }).traceId).toBe(UUID);
    expect(one({ trace_id: UUID.toUpperCase() }).traceId).toBe(UUID);
    expect(one({ trace_id: `{${UUID.toUpperCase()}}` }).traceId).toBe(UUID);
    expect(one({ trace_id: `{${UUID}}` }).traceId).toBe(UUID);
  });

  it("rejects anything that is not a UUID", () => {
    for (const v of ["abc", `${UUID}0`, UUID.replace(/-/g, ""), `{${UUID}`, `${UUID}}`, `(${UUID})`, "", 123]) {
      rejectsField("trace_id", v);
    }
  });
});

describe("user_id and place_id", () => {
  it("accept non-negative integers and digit strings, as decimal strings", () => {
    expect(one({ user_id: 123456 }).userId).toBe("123456");
    expect(one({ user_id: 0 }).userId).toBe("0");
    expect(one({ user_id: "987654321" }).userId).toBe("987654321");
    expect(one({ user_id: "00042" }).userId).toBe("42");
    expect(one({ place_id: 4483381587 }).placeId).toBe("4483381587");
    expect(one({ place_id: "9223372036854775807" }).placeId).toBe("9223372036854775807");
  });

  it("reject negatives, fractions, non-digit strings and values beyond bigint", () => {
    for (const field of ["user_id", "place_id"]) {
      for (const v of [-1, 1.5, "-1", "1.5", "12a", "", "0x10", true, { id: 1 }, "9223372036854775808", 2 ** 64]) {
        rejectsField(field, v);
      }
    }
  });

  it("reject numbers too large to be exact in JSON (send those as strings)", () => {
    rejectsField("user_id", 2 ** 53 + 2);
  });
});

describe("count", () => {
  it("is clamped to 1..1000 and truncated to an integer", () => {
    expect(one({ count: 0 }).count).toBe(1);
    expect(one({ count: -5 }).count).toBe(1);
    expect(one({ count: 0.4 }).count).toBe(1);
    expect(one({ count: 1 }).count).toBe(1);
    expect(one({ count: 2.7 }).count).toBe(2);
    expect(one({ count: 1000 }).count).toBe(1000);
    expect(one({ count: 5000 }).count).toBe(1000);
    expect(one({ count: 1e300 }).count).toBe(1000);
  });

  it("is optional: one occurrence", () => {
    expect(one({}).count).toBe(1);
  });

  it("rejects non-numbers, including numeric strings", () => {
    for (const v of ["3", "many", true, [3], { n: 3 }]) rejectsField("count", v);
  });
});

describe("timestamp", () => {
  it("parses ISO 8601 date-times with an offset", () => {
    expect(one({ timestamp: "2026-11-22T10:00:00.000Z" }).timestamp).toBe(Date.UTC(2026, 10, 22, 10, 0, 0));
    expect(one({ timestamp: "2026-11-22T10:00:00Z" }).timestamp).toBe(Date.UTC(2026, 10, 22, 10, 0, 0));
    expect(one({ timestamp: "2026-11-22T12:00:00+02:00" }).timestamp).toBe(Date.UTC(2026, 10, 22, 10, 0, 0));
    expect(one({ timestamp: "2026-11-22T10:00:00.123456Z" }).timestamp).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
  });

  it("is optional (the receive time is used)", () => {
    expect(one({}).timestamp).toBeNull();
  });

  it("rejects unparseable values", () => {
    for (const v of ["yesterday", "", "2026-13-45T99:00:00Z", "22/11/2026 10:00", 1763805600, "1763805600"]) {
      rejectsField("timestamp", v);
    }
  });

  it("accepts the Unix epoch onwards and rejects anything earlier (year 0000 included)", () => {
    expect(one({ timestamp: "1970-01-01T00:00:00Z" }).timestamp).toBe(0);
    expect(one({ timestamp: "1970-01-01T01:00:00+01:00" }).timestamp).toBe(0);
    expect(one({ timestamp: "9999-12-31T23:59:59.999Z" }).timestamp).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    for (const v of ["0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "1970-01-01T00:59:59+01:00"]) {
      rejectsField("timestamp", v);
    }
    // years outside 0000-9999 are not ISO 8601 date-times here
    for (const v of ["-271821-04-20T00:00:00Z", "+275760-09-13T00:00:00.000Z", "10000-01-01T00:00:00Z"]) rejectsField("timestamp", v);
  });
});

describe("strings", () => {
  it("game_version may arrive as a number and becomes a string", () => {
    expect(one({ game_version: 42 }).gameVersion).toBe("42");
    expect(one({ game_version: 1.5 }).gameVersion).toBe("1.5");
    expect(one({ game_version: "v1.2.3" }).gameVersion).toBe("v1.2.3");
  });

  it("player_name, job_id, game_version and environment are limited to 256 characters", () => {
    const read = { player_name: "playerName", job_id: "jobId", game_version: "gameVersion", environment: "environment" } as const;
    for (const field of ["player_name", "job_id", "game_version", "environment"] as const) {
      expect(one({ [field]: "a".repeat(256) })).toHaveProperty(read[field], "a".repeat(256));
      rejectsField(field, "a".repeat(257));
      // game_version alone may be a number; none of them may be an object
      if (field !== "game_version") rejectsField(field, 12);
      rejectsField(field, { v: 1 });
    }
  });

  it("environment must not be blank", () => {
    rejectsField("environment", "  ");
  });

  it("stack_trace must be a string but is not limited by validation (truncated when stored)", () => {
    expect(one({ stack_trace: "s".repeat(100_000) }).stackTrace).toHaveLength(100_000);
    rejectsField("stack_trace", ["Workspace.A:1"]);
  });

  it("null is treated as absent for optional fields", () => {
    const e = one({ stack_trace: null, user_id: null, trace_id: null, context: null, tags: null, count: null, timestamp: null });
    expect(e.stackTrace).toBeNull();
    expect(e.userId).toBeNull();
    expect(e.traceId).toBeNull();
    expect(e.count).toBe(1);
    expect(e.context).toBeNull();
    expect(e.tags).toBeNull();
    expect(e.timestamp).toBeNull();
  });

  it("null is treated as absent in a breadcrumb, and an event's null message is still refused", () => {
    const e = one({ breadcrumbs: [{ message: "m", level: null, category: null, data: null, timestamp: null }], fingerprint: null });
    expect(e.breadcrumbs).toEqual([{ level: "info", message: "m" }]);
    expect(e.fingerprint).toBeNull();
    expect(() => one({ breadcrumbs: [{ message: null, category: null }] })).toThrow(/breadcrumbs\[0\] must have a message, a category or data/);
    rejectsField("message", null);
  });
});

describe("context and tags", () => {
  it("context must be an object of at most 16 KiB serialized", () => {
    const ctx = { a: "x".repeat(16 * 1024 - 20) };
    expect(Buffer.byteLength(JSON.stringify(ctx))).toBeLessThanOrEqual(16 * 1024);
    expect(one({ context: ctx }).context).toEqual(ctx);
    rejectsField("context", { a: "x".repeat(16 * 1024) });
    // bytes, not characters: 6000 three-byte characters are 18000 bytes
    rejectsField("context", { a: "\u20ac".repeat(6000) });
    rejectsField("context", "text");
    // nesting is bounded before serializing: 20 levels, the context object included
    const nest = (depth: number): unknown => (depth === 0 ? 1 : { a: nest(depth - 1) });
    expect(one({ context: nest(20) as Record<string, unknown> }).context).toEqual(nest(20));
    rejectsField("context", nest(21));
    rejectsField("context", JSON.parse(`{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`));
    rejectsField("context", [1, 2]);
  });

  it("tags: an array of up to 50 strings of up to 200 characters", () => {
    const fifty = Array.from({ length: 50 }, (_, i) => `t${i}`);
    expect(one({ tags: fifty }).tags).toEqual(fifty);
    rejectsField("tags", [...fifty, "t50"]);
    expect(one({ tags: ["a".repeat(200)] }).tags).toEqual(["a".repeat(200)]);
    rejectsAt({ message: "boom", tags: ["ok", "a".repeat(201)] }, "tags[1]");
    rejectsField("tags", "pvp");
  });
});

describe("fingerprint", () => {
  it("accepts a string or an array of strings", () => {
    expect(one({ fingerprint: "checkout" }).fingerprint).toBe("checkout");
    expect(one({ fingerprint: ["{{ default }}", "place-1"] }).fingerprint).toEqual(["{{ default }}", "place-1"]);
  });

  it("rejects empty values and other types", () => {
    rejectsField("fingerprint", "");
    rejectsField("fingerprint", []);
    rejectsField("fingerprint", 5);
    rejectsField("fingerprint", ["a", 5]);
  });
});

describe("eventDetails", () => {
  const d = (i: number, field: string) => ({ path: `errors[${i}].${field}`, message: "bad" });
  it("names every invalid event first, then fills the room with the rest, in event order", () => {
    const perEvent = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? [d(i, "a"), d(i, "b"), d(i, "c")] : []));
    const out = eventDetails(perEvent);
    expect(out).toHaveLength(100);
    const indexes = new Set(out.map((x) => x.path.slice(0, x.path.indexOf("."))));
    expect(indexes.size).toBe(50);
    // the 50 extra entries go to the first events
    expect(out.slice(0, 3).map((x) => x.path)).toEqual(["errors[0].a", "errors[0].b", "errors[0].c"]);
    expect(out.at(-1)!.path).toBe("errors[98].a");
  });
});
