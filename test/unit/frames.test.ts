import { describe, expect, it } from "vitest";
import { addEntries, FRAMES_MAX, frameEntries } from "../../app/ingest/frames.server.js";

/** What issue search matches in a stack (app/ingest/frames.server.ts): its distinct frames without line numbers. */
describe("frameEntries", () => {
  it("reads each stack form as script path and function, without line numbers, top first", () => {
    expect(frameEntries("ServerScriptService.Combat:42 function onTouched\nServerScriptService.Main:3\nStack End")).toEqual([
      "ServerScriptService.Combat onTouched",
      "ServerScriptService.Main",
    ]);
    expect(frameEntries("Script 'Workspace.Door.Script', Line 12 - function open\n[C]: in function 'error'")).toEqual(["Workspace.Door.Script open"]);
    expect(frameEntries(null)).toEqual([]);
    expect(frameEntries("not a stack at all")).toEqual([]);
  });

  it("counts one function once however many lines it spans, and names players as grouping does", () => {
    expect(frameEntries("ServerScriptService.Combat:42 function hit\nServerScriptService.Combat:50 function hit")).toEqual(["ServerScriptService.Combat hit"]);
    expect(frameEntries("Players.Bob.PlayerScripts.Dash:9 function dashNow", "Bob")).toEqual(["Players.<player>.PlayerScripts.Dash dashNow"]);
  });

  it("adds up to the cap without changing a stack's own (remembered) entries", () => {
    const stack = "ServerScriptService.A:1 function a\nServerScriptService.B:2 function b";
    const own = frameEntries(stack);
    const into = ["ServerScriptService.A a"];
    addEntries(into, own);
    expect(into).toEqual(["ServerScriptService.A a", "ServerScriptService.B b"]);
    expect(frameEntries(stack)).toEqual(["ServerScriptService.A a", "ServerScriptService.B b"]);
    const full = Array.from({ length: FRAMES_MAX }, (_, i) => `S${i}`);
    addEntries(full, ["New"]);
    expect(full).toHaveLength(FRAMES_MAX);
    expect(full).not.toContain("New");
  });
});
