import { describe, expect, it } from "vitest";
import {
  culpritFor,
  defaultFingerprint,
  fingerprintFor,
  normalizeMessage,
  normalizeStack,
} from "../../app/ingest/fingerprint-v1.server.js";

// Grouping version 1 (still used to find the groups it made). SPEC.md section 2: normalization keeps what identifies code (script paths and their line numbers)
// and drops what identifies one occurrence (player names in instance paths, UUIDs, hex addresses,
// other standalone numbers).

describe("normalizeMessage: keeps what identifies code", () => {
  it("keeps a script path with its line number in the `Path:123:` form", () => {
    expect(normalizeMessage("ServerScriptService.Combat:123: attempt to index nil with 'Health'")).toBe(
      "ServerScriptService.Combat:123: attempt to index nil with 'Health'",
    );
  });

  it("keeps a script path with its line number in the `Path, line 123` form", () => {
    expect(normalizeMessage("ServerScriptService.Combat, line 123")).toBe("ServerScriptService.Combat, line 123");
    expect(normalizeMessage("Script 'ServerScriptService.Combat', Line 123 - function attack")).toBe(
      "Script 'ServerScriptService.Combat', Line 123 - function attack",
    );
  });

  it("keeps digits that are part of an instance name", () => {
    expect(normalizeMessage("Workspace.Map2.Door3 is not a valid member")).toBe("Workspace.Map2.Door3 is not a valid member");
  });

  it("keeps Players.LocalPlayer, which is code and not a player name", () => {
    expect(normalizeMessage("Players.LocalPlayer.PlayerGui.Main:7: oops")).toBe("Players.LocalPlayer.PlayerGui.Main:7: oops");
  });
});

describe("normalizeMessage: drops what identifies an occurrence", () => {
  it("replaces the player name inside an instance path", () => {
    expect(normalizeMessage("Players.Builderman.PlayerGui.Hud:5:")).toBe("Players.<player>.PlayerGui.Hud:5:");
    expect(normalizeMessage("Players.Builderman.PlayerGui.Hud:5: attempt to call a nil value")).toBe(
      "Players.<player>.PlayerGui.Hud:5: attempt to call a nil value",
    );
  });

  it("replaces UUIDs with and without braces, in any case", () => {
    expect(normalizeMessage("session 0f8fad5b-d9cb-469f-a165-70867728950e expired")).toBe("session <uuid> expired");
    expect(normalizeMessage("session {0F8FAD5B-D9CB-469F-A165-70867728950E} expired")).toBe("session <uuid> expired");
  });

  it("replaces hex addresses", () => {
    expect(normalizeMessage("invalid argument (table: 0x1a2b3c)")).toBe("invalid argument (table: <addr>)");
    expect(normalizeMessage("attempt to call a function: 0x00007FFDEADBEEF value")).toBe("attempt to call a function: <addr> value");
  });

  it("replaces standalone numbers in the message", () => {
    expect(normalizeMessage("index 57 out of range")).toBe("index <n> out of range");
    expect(normalizeMessage("value was 12.5, expected -3")).toBe("value was <n>, expected <n>");
  });

  it("replaces numbers in the message but not the line number of the script location", () => {
    expect(normalizeMessage("ReplicatedStorage.Modules.Util:42: bad value 42")).toBe(
      "ReplicatedStorage.Modules.Util:42: bad value <n>",
    );
  });

  it("collapses runs of whitespace and trims", () => {
    expect(normalizeMessage("  index   57\tout of range \n")).toBe("index <n> out of range");
  });

  it("is not confused by private-use characters in the input", () => {
    // the normalizer uses private-use characters as placeholders internally
    expect(normalizeMessage("Workspace.Part:5: \ue000 index 7")).toBe("Workspace.Part:5: index <n>");
  });
});

describe("normalizeStack", () => {
  it("drops blank lines and the Stack Begin / Stack End markers and normalizes each frame", () => {
    const stack = [
      "Stack Begin",
      "Script 'Players.Builderman.Backpack.Sword.Handler', Line 9 - function swing",
      "",
      "Script 'ServerScriptService.Combat', Line 123 - function attack",
      "Stack End",
      "",
    ].join("\n");
    expect(normalizeStack(stack)).toEqual([
      "Script 'Players.<player>.Backpack.Sword.Handler', Line 9 - function swing",
      "Script 'ServerScriptService.Combat', Line 123 - function attack",
    ]);
  });

  it("handles CRLF line endings and the `Path:123 function` form", () => {
    expect(normalizeStack("ServerScriptService.Combat:123 function attack\r\n  Workspace.Tool:9\r\n")).toEqual([
      "ServerScriptService.Combat:123 function attack",
      "Workspace.Tool:9",
    ]);
  });

  it("is empty for a missing or empty stack", () => {
    expect(normalizeStack(null)).toEqual([]);
    expect(normalizeStack(undefined)).toEqual([]);
    expect(normalizeStack("")).toEqual([]);
  });
});

describe("defaultFingerprint: grouping", () => {
  const fp = (m: string, s?: string) => defaultFingerprint(m, s);

  it("is a fixed-length hex hash", () => {
    expect(fp("anything")).toMatch(/^[0-9a-f]{32}$/);
  });

  it("groups messages that differ only by player name", () => {
    expect(fp("Players.Builderman.PlayerGui.Hud:5: attempt to index nil")).toBe(
      fp("Players.Roblox.PlayerGui.Hud:5: attempt to index nil"),
    );
  });

  it("groups messages that differ only by a number", () => {
    expect(fp("index 57 out of range")).toBe(fp("index 3 out of range"));
  });

  it("groups messages that differ only by an address or a UUID", () => {
    expect(fp("bad table: 0x1a2b3c")).toBe(fp("bad table: 0xffee00"));
    expect(fp("trade {0F8FAD5B-D9CB-469F-A165-70867728950E} failed")).toBe(
      fp("trade 7c9e6679-7425-40de-944b-e07fc1f90ae7 failed"),
    );
  });

  it("separates messages that differ by script line", () => {
    expect(fp("ServerScriptService.Combat:123: attempt to index nil")).not.toBe(
      fp("ServerScriptService.Combat:124: attempt to index nil"),
    );
    expect(fp("ServerScriptService.Combat, line 123")).not.toBe(fp("ServerScriptService.Combat, line 124"));
  });

  it("separates messages that differ by script path", () => {
    expect(fp("ServerScriptService.Combat:5: boom")).not.toBe(fp("ServerScriptService.Trade:5: boom"));
  });

  it("separates messages that differ in words", () => {
    expect(fp("attempt to index nil with 'Health'")).not.toBe(fp("attempt to index nil with 'Mana'"));
  });

  it("takes the stack into account: same message, different frames are different groups", () => {
    const msg = "attempt to index nil";
    expect(fp(msg, "ServerScriptService.Combat:123 function attack")).not.toBe(
      fp(msg, "ServerScriptService.Combat:200 function attack"),
    );
    expect(fp(msg, "ServerScriptService.Combat:123 function attack")).not.toBe(fp(msg));
  });

  it("groups stacks that differ only by player name, blank lines or markers", () => {
    const msg = "attempt to index nil";
    expect(fp(msg, "Stack Begin\nScript 'Players.Alice.Backpack.Sword', Line 9\nStack End")).toBe(
      fp(msg, "Script 'Players.Bob.Backpack.Sword', Line 9\n\n"),
    );
  });

  it("does not let message text and stack text run together", () => {
    expect(fp("a", "b")).not.toBe(fp("a b"));
  });
});

describe("fingerprintFor: custom fingerprints", () => {
  const msg = "index 57 out of range";

  it("uses the default fingerprint when none is given", () => {
    expect(fingerprintFor(msg, null)).toBe(defaultFingerprint(msg, null));
    expect(fingerprintFor(msg, null, null)).toBe(defaultFingerprint(msg, null));
    expect(fingerprintFor(msg, null, undefined)).toBe(defaultFingerprint(msg, null));
  });

  it("a custom string replaces the default grouping", () => {
    const a = fingerprintFor("first message", null, "checkout-failed");
    const b = fingerprintFor("a completely different message", "Workspace.X:1", "checkout-failed");
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(a).not.toBe(defaultFingerprint("first message", null));
    expect(fingerprintFor("m", null, "checkout-failed")).not.toBe(fingerprintFor("m", null, "checkout-timeout"));
  });

  it("a string and a one-element array with the same value group together", () => {
    expect(fingerprintFor("m", null, "x")).toBe(fingerprintFor("m", null, ["x"]));
  });

  it("array parts are not simply concatenated", () => {
    expect(fingerprintFor("m", null, ["ab", "c"])).not.toBe(fingerprintFor("m", null, ["a", "bc"]));
  });

  it("`{{ default }}` in the array stands for the default fingerprint", () => {
    const withDefault = (m: string) => fingerprintFor(m, null, ["{{ default }}", "place-1"]);
    // same default group -> same custom group
    expect(withDefault("index 57 out of range")).toBe(withDefault("index 3 out of range"));
    // different default group -> different custom group
    expect(withDefault("index 57 out of range")).not.toBe(withDefault("key 57 not found"));
    // the extra part still splits
    expect(withDefault(msg)).not.toBe(fingerprintFor(msg, null, ["{{ default }}", "place-2"]));
    // and it differs from the plain default
    expect(withDefault(msg)).not.toBe(defaultFingerprint(msg, null));
  });

  it("accepts `{{default}}` without spaces and ignores surrounding whitespace", () => {
    expect(fingerprintFor(msg, null, ["{{default}}", "x"])).toBe(fingerprintFor(msg, null, [" {{ default }} ", "x"]));
  });

  it("`{{ default }}` alone groups exactly like the default grouping, not like a fixed string", () => {
    const only = (m: string, s?: string) => fingerprintFor(m, s, ["{{ default }}"]);
    expect(only("index 57 out of range")).toBe(only("index 3 out of range"));
    expect(only("index 57 out of range")).not.toBe(only("key 57 not found"));
    expect(only("boom", "Workspace.A:1")).not.toBe(only("boom", "Workspace.A:2"));
  });
});

describe("culpritFor: the top frame's script path", () => {
  it("reads the `Path:123 function` form", () => {
    expect(culpritFor("boom", "ServerScriptService.Combat:123 function attack\nWorkspace.Tool:9")).toBe(
      "ServerScriptService.Combat",
    );
  });

  it("reads the `Script 'Path', Line 123` form and skips Stack Begin", () => {
    expect(culpritFor("boom", "Stack Begin\nScript 'ServerScriptService.Combat', Line 123 - function attack\nStack End")).toBe(
      "ServerScriptService.Combat",
    );
  });

  it("reads the `Path, line 123` form", () => {
    expect(culpritFor("boom", "ServerScriptService.Combat, line 123 - function attack")).toBe("ServerScriptService.Combat");
    expect(culpritFor("ServerScriptService.Combat, line 123: boom", null)).toBe("ServerScriptService.Combat");
  });

  it("replaces the player name in the culprit path", () => {
    expect(culpritFor("boom", "Players.Builderman.PlayerGui.Hud:5 function update")).toBe("Players.<player>.PlayerGui.Hud");
  });

  it("skips frames without a script location, such as [C] frames", () => {
    expect(culpritFor("boom", "[C]: in function 'error'\nServerScriptService.Trade:77 function give")).toBe(
      "ServerScriptService.Trade",
    );
  });

  it("falls back to the location in the message when there is no stack", () => {
    expect(culpritFor("ServerScriptService.Combat:123: attempt to index nil", null)).toBe("ServerScriptService.Combat");
  });

  it("is null when neither the stack nor the message names a script", () => {
    expect(culpritFor("something broke", null)).toBeNull();
    expect(culpritFor("something broke", "[C]: in function 'error'")).toBeNull();
    expect(culpritFor("something broke, line 5", null)).toBeNull();
  });
});
